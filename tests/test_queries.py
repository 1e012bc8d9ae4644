"""Query templates and the template grammar: every phrasing reads back as exactly its logic."""

from __future__ import annotations

import itertools

import pytest

from reasonaudio.errors import UserError
from reasonaudio.queries import SHAPES, TEMPLATES, QueryParser, bare, render

# Phrases chosen to trip a naive parser: template words inside phrases, articles, no article.
LABELS = ["whistle_vibrato", "bell", "rain", "drum_then", "ticks", "horn_and_bell"]
PHRASES = [
    "a whistle with vibrato",
    "a ringing bell",
    "light rain",
    "a drum, then silence",
    "rapid clock ticks",
    "a horn and a bell",
]


def _slot_values(shape: str, labels: list[int]) -> tuple[dict, dict, dict]:
    slots = SHAPES[shape].slots
    letters = [s for s in slots if s in "ABCD"]
    phrases = {k: PHRASES[i] for k, i in zip(letters, labels)}
    values = {k: LABELS[i] for k, i in zip(letters, labels)}
    numbers = {"T": 4.0} if "T" in slots else {}
    if "T1" in slots:
        numbers = {"T1": 2.0, "T2": 4.0}
    values.update(numbers)
    return phrases, numbers, values


def test_every_shape_has_at_least_six_phrasings() -> None:
    assert set(TEMPLATES) == set(SHAPES)
    for shape, templates in TEMPLATES.items():
        assert len(set(templates)) >= 6, shape


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_every_phrasing_reads_back_as_its_logic(shape: str) -> None:
    parser = QueryParser(LABELS, PHRASES)
    n_letters = sum(1 for s in SHAPES[shape].slots if s in "ABCD")
    for labels in itertools.islice(itertools.permutations(range(len(LABELS)), n_letters), 12):
        phrases, numbers, values = _slot_values(shape, list(labels))
        logic = {"all": SHAPES[shape].build(values)}
        for template in TEMPLATES[shape]:
            text = render(template, phrases, numbers)
            readings = parser.parse_all(text)
            # the generator only keeps unambiguous texts; every text must at least contain its logic
            assert logic in readings, (template, text, readings)


def test_texts_start_with_a_capital_and_use_bare_phrases_after_no() -> None:
    text = render("{A}, and no {B_} at any point", {"A": "a ringing bell", "B": "a whistle with vibrato"}, {})
    assert text == "A ringing bell, and no whistle with vibrato at any point"
    assert bare("an alarm") == "alarm" and bare("rapid clock ticks") == "rapid clock ticks"


def test_number_words_and_units() -> None:
    text = render("{A} that keeps going for more than {Tw} {Tu}", {"A": "light rain"}, {"T": 1.0})
    assert text == "Light rain that keeps going for more than one second"
    parser = QueryParser(LABELS, PHRASES)
    assert parser.parse(text) == {"all": [{"duration": {"label": "rain", "min_s": 1.0}}]}


def test_unknown_and_ambiguous_texts_are_refused() -> None:
    parser = QueryParser(LABELS, PHRASES)
    with pytest.raises(UserError, match="does not match any template"):
        parser.parse("a cat purring without a dog")
    # both splits name real phrases: a generator must never emit such a text
    ambiguous = QueryParser(
        ["horn", "horn_nobell", "bell", "bell_nowhistle", "whistle"],
        ["a horn", "a horn without a bell", "a bell", "a bell without a whistle", "a whistle"],
    )
    text = "A horn without a bell without a whistle"
    assert len(ambiguous.parse_all(text)) == 2
    with pytest.raises(UserError, match="ambiguous"):
        ambiguous.parse(text)
