"""The query grammar: logic shapes, the English phrasings of each shape, and rendering a template.

A query is a `logic` object (contract §2) plus an English `text` rendered from one of several
phrasings of its shape. The logic is the truth; the wording never changes it (`reasonaudio.queries.parser`
reads every rendered text back during generation).

Slots: {A} {B} {C} {D} are phrases; {A_} etc. are bare phrases; {T} {T1} {T2} are numbers of
seconds (rendered with digits or, with {Tw}, in words) followed by "second(s)" in the template.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

# --- text helpers -------------------------------------------------------------------------------

_ARTICLE = re.compile(r"^(a|an|the|some)\s+", re.IGNORECASE)
NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten"}
_WORD_NUMBERS = {w: n for n, w in NUMBER_WORDS.items()}


def bare(phrase: str) -> str:
    """The phrase without its leading article, for 'no X', 'a long X'."""
    return _ARTICLE.sub("", phrase.strip())


def seconds_text(value: float, words: bool) -> str:
    if words and float(value).is_integer() and int(value) in NUMBER_WORDS:
        return NUMBER_WORDS[int(value)]
    return f"{value:g}"


def parse_seconds(text: str) -> float:
    text = text.strip().lower()
    if text in _WORD_NUMBERS:
        return float(_WORD_NUMBERS[text])
    return float(text)


def seconds_unit(value: float) -> str:
    return "second" if value == 1 else "seconds"


# --- templates ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """A logic shape: which slots it uses and how they become constraints."""

    name: str
    task: str
    slots: tuple[str, ...]
    build: Callable[[dict], list[dict]]


def _dur(label: str, min_s: float | None = None, max_s: float | None = None) -> dict:
    bounds: dict = {"label": label}
    if min_s is not None:
        bounds["min_s"] = float(min_s)
    if max_s is not None:
        bounds["max_s"] = float(max_s)
    return {"duration": bounds}


SHAPES: dict[str, Shape] = {
    s.name: s
    for s in [
        Shape("neg", "negation", ("A", "B"), lambda v: [{"has": v["A"]}, {"not": v["B"]}]),
        Shape("neg_has2", "negation", ("A", "C", "B"), lambda v: [{"has": v["A"]}, {"has": v["C"]}, {"not": v["B"]}]),
        Shape("neg_not2", "negation", ("A", "B", "D"), lambda v: [{"has": v["A"]}, {"not": v["B"]}, {"not": v["D"]}]),
        Shape("order", "order", ("A", "B"), lambda v: [{"before": [v["A"], v["B"]]}]),
        Shape("order3", "order", ("A", "B", "C"), lambda v: [{"before": [v["A"], v["B"]]}, {"before": [v["B"], v["C"]]}]),
        Shape("overlap", "overlap", ("A", "B"), lambda v: [{"overlap": [v["A"], v["B"]]}]),
        Shape("dur_min", "duration", ("A", "T"), lambda v: [_dur(v["A"], min_s=v["T"])]),
        Shape("dur_max", "duration", ("A", "T"), lambda v: [_dur(v["A"], max_s=v["T"])]),
        Shape("dur_between", "duration", ("A", "T1", "T2"), lambda v: [_dur(v["A"], min_s=v["T1"], max_s=v["T2"])]),
        Shape("mix_order_not", "mix", ("A", "B", "C"), lambda v: [{"before": [v["A"], v["B"]]}, {"not": v["C"]}]),
        Shape("mix_overlap_not", "mix", ("A", "B", "C"), lambda v: [{"overlap": [v["A"], v["B"]]}, {"not": v["C"]}]),
        Shape("mix_min_not", "mix", ("A", "T", "C"), lambda v: [_dur(v["A"], min_s=v["T"]), {"not": v["C"]}]),
        Shape("mix_max_not", "mix", ("A", "T", "C"), lambda v: [_dur(v["A"], max_s=v["T"]), {"not": v["C"]}]),
        Shape("mix_order_max", "mix", ("A", "B", "T"), lambda v: [{"before": [v["A"], v["B"]]}, _dur(v["B"], max_s=v["T"])]),
        Shape("mix_order_min", "mix", ("A", "B", "T"), lambda v: [{"before": [v["A"], v["B"]]}, _dur(v["A"], min_s=v["T"])]),
        Shape(
            "mix_order_not_min",
            "mix",
            ("A", "B", "C", "T"),
            lambda v: [{"before": [v["A"], v["B"]]}, {"not": v["C"]}, _dur(v["A"], min_s=v["T"])],
        ),
    ]
}

_ORDER_CLAUSES = [
    "{A} followed by {B}",
    "first {A}, then {B}",
    "{A}, and later {B}",
    "{B} after {A}",
    "{A} coming before {B}",
    "{A} and then {B}",
    "{B}, preceded by {A}",
]
_OVERLAP_CLAUSES = [
    "{A} at the same time as {B}",
    "{A} overlapping with {B}",
    "{A} heard together with {B}",
    "{A} and {B} sounding simultaneously",
    "{A} during {B}",
    "{A} while {B} can be heard",
    "{A} and {B} at once",
]
_MIN_CLAUSES = [
    "{A} lasting more than {T} {Tu}",
    "{A} that keeps going for more than {Tw} {Tu}",
    "{A} longer than {T} {Tu}",
    "a long {A_}, over {T} {Tu}",
    "{A} continuing for at least {Tw} {Tu}",
    "{A} that goes on for over {T} {Tu}",
]
_MAX_CLAUSES = [
    "{A} lasting less than {T} {Tu}",
    "a short {A_}, under {T} {Tu}",
    "{A} that stops within {Tw} {Tu}",
    "{A} shorter than {T} {Tu}",
    "{A} lasting at most {Tw} {Tu}",
    "a brief {A_} of under {T} {Tu}",
]
_NOT_TAILS = [
    ", with no {C_} anywhere",
    ", without {C}",
    ", and no {C_} at any point",
    "; {C} is never heard",
]

TEMPLATES: dict[str, list[str]] = {
    "neg": [
        "{A}, and no {B_} at any point",
        "{A} without {B}",
        "{A} but not {B}",
        "a clip with {A} and no trace of {B_}",
        "{A}, and {B} is never heard",
        "{A} with {B} absent",
        "{A}, never {B}",
    ],
    "neg_has2": [
        "{A} and {C}, but no {B_}",
        "both {A} and {C}, without {B}",
        "{A} together with {C}, and {B} is never heard",
        "{A} plus {C}, with no {B_} at any point",
        "a clip with {A} and {C} but no trace of {B_}",
        "{A} and also {C}, never {B}",
    ],
    "neg_not2": [
        "{A} without {B} or {D}",
        "{A}, with neither {B_} nor {D_}",
        "{A}, and no {B_} or {D_} at any point",
        "{A} but not {B} and not {D}",
        "{A}; {B} and {D} are never heard",
        "a clip with {A} and no trace of {B_} or {D_}",
    ],
    "order": _ORDER_CLAUSES,
    "order3": [
        "first {A}, then {B}, then {C}",
        "{A} followed by {B} and then {C}",
        "{A}, later {B}, and finally {C}",
        "{A}, then {B}, and after that {C}",
        "{A} before {B}, which comes before {C}",
        "{C} after {B}, which follows {A}",
    ],
    "overlap": _OVERLAP_CLAUSES,
    "dur_min": _MIN_CLAUSES,
    "dur_max": _MAX_CLAUSES,
    "dur_between": [
        "{A} lasting between {T1} and {T2} seconds",
        "{A} that goes on for {T1} to {T2} seconds",
        "{A} longer than {T1} but shorter than {T2} seconds",
        "{A} for more than {T1} and less than {T2} seconds",
        "{A} lasting at least {T1w} and at most {T2w} seconds",
        "a medium-length {A_} of {T1} to {T2} seconds",
    ],
    "mix_order_not": [c + t for c in _ORDER_CLAUSES[:6] for t in _NOT_TAILS[:2]],
    "mix_overlap_not": [c + t for c in _OVERLAP_CLAUSES[:6] for t in _NOT_TAILS[1:3]],
    "mix_min_not": [c + t for c in _MIN_CLAUSES for t in _NOT_TAILS[:1]],
    "mix_max_not": [c + t for c in _MAX_CLAUSES for t in _NOT_TAILS[1:2]],
    "mix_order_max": [
        "{A} followed by {B}, where the {B_} lasts less than {T} {Tu}",
        "first {A}, then a short {B_} of under {T} {Tu}",
        "{A}, and later {B} that stops within {Tw} {Tu}",
        "{A} and then {B} lasting at most {Tw} {Tu}",
        "{B} shorter than {T} {Tu}, after {A}",
        "{A} coming before {B}, the {B_} lasting less than {T} {Tu}",
    ],
    "mix_order_min": [
        "{A} lasting more than {T} {Tu}, followed by {B}",
        "first a long {A_} of over {T} {Tu}, then {B}",
        "{A} that keeps going for more than {Tw} {Tu}, and later {B}",
        "{B} after {A} that lasts longer than {T} {Tu}",
        "{A} continuing for at least {Tw} {Tu} and then {B}",
        "{A} followed by {B}, where the {A_} lasts over {T} {Tu}",
    ],
    "mix_order_not_min": [
        "{A} lasting more than {T} {Tu}, followed by {B}, without {C}",
        "first a long {A_} of over {T} {Tu}, then {B}, with no {C_} anywhere",
        "{A} that keeps going for more than {Tw} {Tu} and then {B}; {C} is never heard",
        "{B} after {A} that lasts longer than {T} {Tu}, and no {C_} at any point",
        "{A} continuing for at least {Tw} {Tu}, later {B}, never {C}",
        "{A} followed by {B}, where the {A_} lasts over {T} {Tu}, without {C}",
    ],
}

SLOT = re.compile(r"\{(A|B|C|D)(_?)\}|\{(T1|T2|T)(w?)\}|\{Tu\}")


def render(template: str, phrases: dict[str, str], numbers: dict[str, float]) -> str:
    """Fill a template; `phrases` maps slot letters to phrases, `numbers` maps T/T1/T2 to seconds."""

    def fill(m: re.Match) -> str:
        if m.group(1):
            phrase = phrases[m.group(1)]
            return bare(phrase) if m.group(2) else phrase
        if m.group(3):
            return seconds_text(numbers[m.group(3)], words=bool(m.group(4)))
        return seconds_unit(numbers["T"])

    text = SLOT.sub(fill, template)
    return text[0].upper() + text[1:]
