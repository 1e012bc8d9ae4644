"""Parsers on hand-written outputs; every metric on small cases computed by hand."""

from __future__ import annotations

import math

import pytest

from reasonaudio.compose import parse
from reasonaudio.compose.normalize import normalize_answer, normalize_text
from reasonaudio.compose.score import signal_detection, word_errors

OPTS = ["rain", "wind", "crickets"]
PHRASES = ["rain falling", "wind blowing", "crickets chirping"]


def test_normaliser():
    assert normalize_text("Our train was delayed by TWENTY minutes, this morning!") == \
        "our train was delayed by 20 minutes this morning"
    assert normalize_text("one hundred and five") == "105"
    assert normalize_text("twenty one two") == "21 2"
    assert normalize_text("It won't; um, the colour [noise] is grey.") == "it will not the color is gray"
    assert normalize_text("1,000 and 3.5") == "1000 and 3.5"
    assert normalize_text("Twenty", numbers=False) == "twenty"
    assert normalize_answer("The Pacific Ocean.") == "pacific ocean"


def test_strict_tag_well_formed_missing_duplicate():
    assert parse.strict_tag("Sure. <ans>19</ans>", "ans") == "19"
    assert parse.strict_tag("The answer is 19", "ans") is None
    assert parse.strict_tag("<ans>19", "ans") is None
    assert parse.strict_tag("<ANS>19</ANS>", "ans") is None
    assert parse.strict_tag("<ans>1</ans> or <ans>2</ans>", "ans") is None


def test_lenient_tag_variants():
    assert parse.lenient_tag("<ANS> 19 </ANS>", "ans") == "19"
    assert parse.lenient_tag("<ans>19", "ans") == "19"
    assert parse.lenient_tag("<ans>19\n<asr>x</asr>", "ans") == "19"
    assert parse.lenient_tag("first <ans>3</ans> then final < ans >4</ ans >", "ans") == "4"
    assert parse.lenient_tag("no tags", "ans") is None


def test_reasoning_inside_answer_tag_strict_fails_lenient_recovers():
    out = "<ans>The rain segment asks 7 plus 12, so 7 + 12 = 19.</ans>"
    content = parse.strict_tag(out, "ans")
    assert parse.strict_number(content) is None
    assert parse.lenient_number(parse.lenient_tag(out, "ans")) == "19"
    assert parse.strict_number("nineteen") == "19"
    assert parse.strict_number(" 19. ") == "19"


def test_choices():
    assert parse.strict_choice("1") == 1 and parse.strict_choice("first") is None
    assert parse.lenient_choice("It is the second segment.") == 2
    assert parse.lenient_choice("Segment 1 has rain") == 1
    assert parse.lenient_choice("neither") is None


def test_options_and_mentions():
    assert parse.strict_option("Rain", OPTS, PHRASES) == "rain"
    assert parse.strict_option("rain falling", OPTS, PHRASES) == "rain"
    assert parse.strict_option("it is rain", OPTS, PHRASES) is None
    assert parse.lenient_option("I hear crickets chirping", OPTS, PHRASES) == "crickets"
    assert parse.option_mentions("Segment one: wind. Segment two: rain.", OPTS, PHRASES) == ["wind", "rain"]
    assert parse.lenient_option("a female voice", ["female", "male"], [None, None]) == "female"
    assert parse.lenient_option("a male voice", ["female", "male"], [None, None]) == "male"


def test_split_segments_and_aliases():
    a, b = parse.split_segments("Segment 1: the answer is 5.\nSegment 2: it is 12.")
    assert parse.lenient_number(a) == "5" and parse.lenient_number(b) == "12"
    assert parse.split_segments("just one line") is None
    assert parse.alias_in("I think it's the Pacific ocean.", ["Pacific Ocean"])
    assert not parse.alias_in("Pacifica", ["Pacific"])
    assert parse.strict_alias("The Pacific.", ["the Pacific", "Pacific"])
    assert not parse.strict_alias("It is the Pacific", ["Pacific"])
    assert parse.lenient_transcript("Here is the transcription: \"Hello there.\"") == "Hello there."


def test_word_errors_by_hand():
    assert word_errors("The cat sat on the mat.", "the cat sat on mat") == (1, 6)
    assert word_errors("The cat sat.", "a cat sat down") == (2, 3)   # 1 substitution + 1 insertion
    assert word_errors("The cat sat.", "") == (3, 3)
    assert word_errors("Twenty minutes", "20 minutes") == (0, 2)


def test_signal_detection_by_hand():
    tf = [True] * 4 + [False] * 4
    out = signal_detection(tf, [1, 1, 1, 2, 1, 2, 2, 2])
    # H = (3 + .5) / 5 = .7, F = (1 + .5) / 5 = .3
    zf = -0.5244005127080407
    assert out["p_choose_first"] == 0.5 and out["balanced_accuracy"] == 0.75
    assert out["hit_rate"] == pytest.approx(0.7) and out["false_alarm_rate"] == pytest.approx(0.3)
    assert out["d_prime"] == pytest.approx(-2 * zf, abs=1e-9)
    assert out["criterion_c"] == pytest.approx(0.0, abs=1e-12)


def test_signal_detection_always_first_and_invalid():
    tf = [True] * 4 + [False] * 4
    out = signal_detection(tf, [1] * 8)
    # H = F = 4.5 / 5 = .9: no discrimination, strong bias to segment 1 (c < 0)
    assert out["p_choose_first"] == 1.0 and out["balanced_accuracy"] == 0.5
    assert out["d_prime"] == pytest.approx(0.0)
    assert out["criterion_c"] == pytest.approx(-1.2815515655446004)
    out = signal_detection(tf, [2] * 4 + [2, 2, None, None])
    # hits 0/4 -> H = .5/5 = .1; F = .5/3; invalid counts as wrong in balanced accuracy
    assert out["n_valid"] == 6 and out["p_choose_first"] == 0.0
    assert out["balanced_accuracy"] == pytest.approx((0 / 4 + 2 / 4) / 2)
    assert out["hit_rate"] == pytest.approx(0.1) and out["false_alarm_rate"] == pytest.approx(0.5 / 3)
    perfect = signal_detection(tf, [1] * 4 + [2] * 4)
    assert math.isfinite(perfect["d_prime"]) and perfect["d_prime"] > 2.5
