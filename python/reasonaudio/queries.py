"""Query templates, logic construction from real clips, and the template-grammar parser.

A query is a `logic` object (contract §2) plus an English `text` rendered from one of several
phrasings of its shape. The logic is the truth; the wording never changes it, and every rendered text
is parsed back (`parse_query`) during generation so that the text and the logic provably agree for
the atom library at hand.

Labels are drawn from real clips ("anchors"): the anchor satisfies the logic, so every query has a
positive. Hard negatives are found or planned later (`reasonaudio.builder`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import polars as pl

from reasonaudio.contract import TASKS
from reasonaudio.contract.reference import is_before, overlaps
from reasonaudio.errors import UserError

# --- text helpers -------------------------------------------------------------------------------

_ARTICLE = re.compile(r"^(a|an|the|some)\s+", re.IGNORECASE)
_NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten"}
_WORD_NUMBERS = {w: n for n, w in _NUMBER_WORDS.items()}


def bare(phrase: str) -> str:
    """The phrase without its leading article, for 'no X', 'a long X'."""
    return _ARTICLE.sub("", phrase.strip())


def seconds_text(value: float, words: bool) -> str:
    if words and float(value).is_integer() and int(value) in _NUMBER_WORDS:
        return _NUMBER_WORDS[int(value)]
    return f"{value:g}"


def parse_seconds(text: str) -> float:
    text = text.strip().lower()
    if text in _WORD_NUMBERS:
        return float(_WORD_NUMBERS[text])
    return float(text)


def seconds_unit(value: float) -> str:
    return "second" if value == 1 else "seconds"


# --- templates ----------------------------------------------------------------------------------
# Slots: {A} {B} {C} {D} are phrases; {A_} etc. are bare phrases; {T} {T1} {T2} are numbers of
# seconds (rendered with digits or, with {Tw}, in words) followed by "second(s)" in the template.


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

_SLOT = re.compile(r"\{(A|B|C|D)(_?)\}|\{(T1|T2|T)(w?)\}|\{Tu\}")


def render(template: str, phrases: dict[str, str], numbers: dict[str, float]) -> str:
    """Fill a template; `phrases` maps slot letters to phrases, `numbers` maps T/T1/T2 to seconds."""

    def fill(m: re.Match) -> str:
        if m.group(1):
            phrase = phrases[m.group(1)]
            return bare(phrase) if m.group(2) else phrase
        if m.group(3):
            return seconds_text(numbers[m.group(3)], words=bool(m.group(4)))
        return seconds_unit(numbers["T"])

    text = _SLOT.sub(fill, template)
    return text[0].upper() + text[1:]


# --- parsing ------------------------------------------------------------------------------------

_NUMBER_RX = r"(?:\d+(?:\.\d+)?|" + "|".join(_NUMBER_WORDS.values()) + r")"


_NUMBER_AT = re.compile(_NUMBER_RX)
_UNIT_AT = re.compile(r"seconds?")


class QueryParser:
    """Inverts the template grammar for one atom library: text -> logic.

    Each template is a sequence of glue words and slots; a text is walked through it exhaustively,
    trying every phrase of the library at every phrase slot, so phrases that contain template words
    ("a whistle with vibrato") still split correctly and every way of splitting the text into glue
    words and real phrases is a reading: a text with two readings is ambiguous.
    """

    def __init__(self, labels: Sequence[str], phrases: Sequence[str]):
        self.by_phrase: dict[str, str] = {}
        for label, phrase in zip(labels, phrases):
            for form in {phrase.lower(), bare(phrase).lower()}:
                self.by_phrase.setdefault(form, label)
        full = sorted({p.lower() for p in phrases}, key=len, reverse=True)
        bare_forms = sorted({bare(p).lower() for p in phrases}, key=len, reverse=True)
        self.alternatives = {False: full, True: bare_forms}  # longest first
        self.templates: list[tuple[str, list[tuple], list[str]]] = []
        for shape, templates in TEMPLATES.items():
            for template in templates:
                parts = self._parts(template)
                self.templates.append((shape, parts, self._screen(parts)))

    @staticmethod
    def _parts(template: str) -> list[tuple]:
        """('lit', text) | ('phrase', key, is_bare) | ('num', key) | ('unit',)."""
        parts: list[tuple] = []
        pos = 0
        for m in _SLOT.finditer(template):
            if m.start() > pos:
                parts.append(("lit", template[pos : m.start()].lower()))
            if m.group(1):
                parts.append(("phrase", m.group(1), bool(m.group(2))))
            elif m.group(3):
                parts.append(("num", m.group(3)))
            else:
                parts.append(("unit",))
            pos = m.end()
        if pos < len(template):
            parts.append(("lit", template[pos:].lower()))
        return parts

    @staticmethod
    def _screen(parts: list[tuple]) -> list[str]:
        """The template's glue words, which a matching text holds in this order (a cheap filter)."""
        return [part[1].strip() for part in parts if part[0] == "lit" and part[1].strip()]

    @staticmethod
    def _may_match(glue: list[str], text: str) -> bool:
        pos = 0
        for word in glue:
            pos = text.find(word, pos)
            if pos < 0:
                return False
            pos += len(word)
        return True

    def _walk(self, parts: list[tuple], text: str, i: int, pos: int, values: dict, out: list[dict]) -> None:
        if i == len(parts):
            if text[pos:] in ("", "."):
                out.append(dict(values))
            return
        part = parts[i]
        if part[0] == "lit":
            if text.startswith(part[1], pos):
                self._walk(parts, text, i + 1, pos + len(part[1]), values, out)
        elif part[0] == "unit":
            m = _UNIT_AT.match(text, pos)
            if m:
                self._walk(parts, text, i + 1, m.end(), values, out)
        elif part[0] == "num":
            m = _NUMBER_AT.match(text, pos)
            if m:
                number = parse_seconds(m.group(0))
                if values.get(part[1], number) == number:
                    self._walk(parts, text, i + 1, m.end(), {**values, part[1]: number}, out)
        else:
            for phrase in self.alternatives[part[2]]:
                if text.startswith(phrase, pos):
                    label = self.by_phrase[phrase]
                    if values.get(part[1], label) == label:  # a repeated slot names one sound
                        self._walk(parts, text, i + 1, pos + len(phrase), {**values, part[1]: label}, out)

    def parse_all(self, text: str) -> list[dict]:
        """Every distinct logic the text can be read as (more than one means it is ambiguous)."""
        found: list[dict] = []
        text = " ".join(text.split())
        lowered = text.lower()
        for shape, parts, glue in self.templates:
            if not self._may_match(glue, lowered):
                continue
            readings: list[dict] = []
            self._walk(parts, lowered, 0, 0, {}, readings)
            for values in readings:
                logic = {"all": SHAPES[shape].build(values)}
                if logic not in found:
                    found.append(logic)
        return found

    def parse(self, text: str) -> dict:
        readings = self.parse_all(text)
        if not readings:
            raise UserError(f"query text does not match any template of this atom library: {text!r}")
        if len(readings) > 1:
            raise UserError(f"query text is ambiguous ({len(readings)} readings): {text!r}")
        return readings[0]


def parse_query(text: str, atoms: pl.DataFrame) -> dict:
    """Parse a templated query text back into the contract's logic dict for an atoms table."""
    return QueryParser(atoms["label"].to_list(), atoms["phrase"].to_list()).parse(text)


# --- generation ---------------------------------------------------------------------------------


@dataclass
class ClipView:
    """One clip's events as plain Python values (label ids, sample positions)."""

    labels: list[int]
    onsets: list[int]
    offsets: list[int]
    pattern: str

    def index_of(self, label: int) -> int:
        return self.labels.index(label)

    def before_pairs(self) -> list[tuple[int, int]]:
        n = len(self.labels)
        return [(self.labels[i], self.labels[j]) for i in range(n) for j in range(n) if i != j and is_before(self.offsets[i], self.onsets[j])]

    def overlap_pairs(self) -> list[tuple[int, int]]:
        n = len(self.labels)
        return [
            (self.labels[i], self.labels[j])
            for i in range(n)
            for j in range(n)
            if i != j and overlaps(self.onsets[i], self.offsets[i], self.onsets[j], self.offsets[j])
        ]


@dataclass
class QuerySpec:
    """A generated query before ids are assigned."""

    task: str
    shape: str
    logic: dict
    text: str
    anchor: int  # clip index that satisfies the logic


class _CannotHost(Exception):
    """The drawn anchor clip cannot host the drawn shape; the generator draws again."""


class QueryCapacityError(UserError):
    """The corpus cannot host another distinct query of `task` (index `index` was asked for)."""

    def __init__(self, task: str, index: int, message: str):
        super().__init__(message)
        self.task = task
        self.index = index


@dataclass
class QueryGenerator:
    """Draws queries from real clips, balancing label use; deterministic in (seed, task, index)."""

    clips: list[ClipView]
    labels: list[str]
    phrases: list[str]
    sample_rate: int
    thresholds: list[float]
    seed: int
    cooccur: np.ndarray = field(init=False)
    usage: Counter = field(init=False)

    def __post_init__(self) -> None:
        if len(self.thresholds) < 1:
            raise UserError("duration queries need at least one duration threshold (two or more duration bins)")
        self.cooccur = self._cooccurrence()
        self.overlap_clips = [i for i, clip in enumerate(self.clips) if clip.pattern == "overlap"]
        self.parser = QueryParser(self.labels, self.phrases)
        # every reading of a rendered text: the parser is deterministic in the vocabulary, and a
        # build's capacity search renders the same texts once per attempt
        self._readings: dict[str, list[dict]] = {}
        self.restart()

    def restart(self) -> None:
        """Forget every query drawn so far (label usage, logic seen): the next draws are those of a
        fresh generator over the same corpus, without recomputing what depends on the corpus alone."""
        self.usage = Counter()
        self.seen: set[str] = set()

    def reads_as(self, text: str) -> list[dict]:
        """`parser.parse_all(text)`, remembered."""
        readings = self._readings.get(text)
        if readings is None:
            readings = self._readings[text] = self.parser.parse_all(text)
        return readings

    def _cooccurrence(self, chunk: int = 65_536) -> np.ndarray:
        """Whether two labels share a clip anywhere, as a labels x labels bool matrix (chunked
        incidence products, so memory stays flat for million-clip corpora)."""
        n_labels = len(self.labels)
        counts = np.zeros((n_labels, n_labels), dtype=np.float64)
        for lo in range(0, len(self.clips), chunk):
            block = self.clips[lo : lo + chunk]
            rows = np.repeat(np.arange(len(block)), [len(c.labels) for c in block])
            cols = np.fromiter((lab for c in block for lab in c.labels), dtype=np.int64, count=len(rows))
            incidence = np.zeros((len(block), n_labels), dtype=np.float32)
            incidence[rows, cols] = 1.0
            counts += incidence.T @ incidence
        return counts > 0

    # label choice favours the least-used labels, so no label dominates
    def _pick(self, rng: np.random.Generator, candidates: Sequence[int]) -> int:
        cands = sorted(set(candidates))
        if not cands:
            raise _CannotHost  # e.g. every label of a tiny library is already in the clip
        low = min(self.usage[c] for c in cands)
        pool = [c for c in cands if self.usage[c] <= low + 1]
        return int(pool[rng.integers(len(pool))])

    def _pick_pair(self, rng: np.random.Generator, pairs: Sequence[tuple[int, int]]) -> tuple[int, int]:
        pairs = sorted(set(pairs))
        score = [self.usage[a] + self.usage[b] for a, b in pairs]
        low = min(score)
        pool = [p for p, s in zip(pairs, score) if s <= low + 1]
        return pool[rng.integers(len(pool))]

    def _absent(self, rng: np.random.Generator, clip: ClipView, partner: int, exclude: Sequence[int] = ()) -> int:
        """A label absent from the clip, preferring one that co-occurs with `partner` elsewhere (a natural hard negative)."""
        present = set(clip.labels) | set(exclude)
        co = [lab for lab in np.flatnonzero(self.cooccur[partner]).tolist() if lab not in present]
        if co:
            return self._pick(rng, co)
        return self._pick(rng, [lab for lab in range(len(self.labels)) if lab not in present])

    def _duration_s(self, clip: ClipView, label: int) -> float:
        i = clip.index_of(label)
        return (clip.offsets[i] - clip.onsets[i]) / self.sample_rate

    def _values_for(self, shape: str, rng: np.random.Generator, clip: ClipView) -> dict | None:
        """Slot values (label ids, thresholds) satisfied by `clip`, or None when it cannot host the shape."""
        th = self.thresholds
        if shape in ("neg", "neg_has2", "neg_not2"):
            need = 2 if shape == "neg_has2" else 1
            if len(clip.labels) < need:
                return None
            a = self._pick(rng, clip.labels)
            v = {"A": a}
            if shape == "neg_has2":
                v["C"] = self._pick(rng, [lab for lab in clip.labels if lab != a])
            v["B"] = self._absent(rng, clip, a)
            if shape == "neg_not2":
                v["D"] = self._absent(rng, clip, a, exclude=[v["B"]])
            return v
        if shape in ("order", "mix_order_not", "mix_order_max", "mix_order_min", "mix_order_not_min"):
            pairs = clip.before_pairs()
            if shape == "mix_order_max":
                pairs = [(a, b) for a, b in pairs if self._duration_s(clip, b) < th[-1]]
            if shape in ("mix_order_min", "mix_order_not_min"):
                pairs = [(a, b) for a, b in pairs if self._duration_s(clip, a) > th[0]]
            if not pairs:
                return None
            a, b = self._pick_pair(rng, pairs)
            v = {"A": a, "B": b}
            if shape == "mix_order_max":
                d = self._duration_s(clip, b)
                v["T"] = float(rng.choice([t for t in th if t > d]))
            if shape in ("mix_order_min", "mix_order_not_min"):
                d = self._duration_s(clip, a)
                v["T"] = float(rng.choice([t for t in th if t < d]))
            if shape in ("mix_order_not", "mix_order_not_min"):
                v["C"] = self._absent(rng, clip, a, exclude=[b])
            return v
        if shape == "order3":
            chains = [
                (a, b, c)
                for a, b in clip.before_pairs()
                for b2, c in clip.before_pairs()
                if b2 == b and c != a
            ]
            if not chains:
                return None
            a, b, c = sorted(chains, key=lambda t: self.usage[t[0]] + self.usage[t[1]] + self.usage[t[2]])[
                int(rng.integers(min(3, len(chains))))
            ]
            return {"A": a, "B": b, "C": c}
        if shape in ("overlap", "mix_overlap_not"):
            pairs = [(a, b) for a, b in clip.overlap_pairs() if a < b or rng.random() < 0.5]
            if not pairs:
                return None
            a, b = self._pick_pair(rng, pairs)
            v = {"A": a, "B": b}
            if shape == "mix_overlap_not":
                v["C"] = self._absent(rng, clip, a, exclude=[b])
            return v
        if shape in ("dur_min", "dur_max", "dur_between", "mix_min_not", "mix_max_not"):
            a = self._pick(rng, clip.labels)
            d = self._duration_s(clip, a)
            below = [t for t in th if t < d]
            above = [t for t in th if t > d]
            v = {"A": a}
            if shape in ("dur_min", "mix_min_not"):
                if not below:
                    return None
                v["T"] = float(rng.choice(below))
            elif shape in ("dur_max", "mix_max_not"):
                if not above:
                    return None
                v["T"] = float(rng.choice(above))
            else:
                if not below or not above:
                    return None
                v["T1"], v["T2"] = float(below[-1]), float(above[0])
            if shape.startswith("mix"):
                v["C"] = self._absent(rng, clip, a)
            return v
        raise AssertionError(shape)

    def _shape_for(self, task: str, rng: np.random.Generator) -> str:
        options = {
            "negation": (["neg", "neg_has2", "neg_not2"], [0.6, 0.2, 0.2]),
            "order": (["order", "order3"], [0.7, 0.3]),
            "overlap": (["overlap"], [1.0]),
            "duration": (["dur_min", "dur_max", "dur_between"], [0.4, 0.4, 0.2]),
            "mix": (
                ["mix_order_not", "mix_overlap_not", "mix_min_not", "mix_max_not", "mix_order_max", "mix_order_min", "mix_order_not_min"],
                [0.2, 0.2, 0.12, 0.12, 0.12, 0.12, 0.12],
            ),
        }[task]
        return str(rng.choice(options[0], p=options[1]))

    def generate(self, task: str, index: int, anchor_pool: Sequence[int] | None = None) -> QuerySpec:
        task_id = TASKS.index(task)
        rng = np.random.default_rng([self.seed, 0x5155, task_id, index])
        if anchor_pool is not None:
            pool = list(anchor_pool)
            if task == "overlap":
                pool = [c for c in pool if self.clips[c].pattern == "overlap"]
        else:
            pool = self.overlap_clips if task == "overlap" else range(len(self.clips))
        if not pool:
            raise QueryCapacityError(task, index, f"no clip can host a {task} query (is the overlap fraction zero?)")
        for _attempt in range(400):
            shape = self._shape_for(task, rng)
            anchor = int(pool[rng.integers(len(pool))])
            try:
                values = self._values_for(shape, rng, self.clips[anchor])
            except _CannotHost:
                values = None
            if values is None:
                continue
            logic = {"all": SHAPES[shape].build({k: (self.labels[v] if k in "ABCD" else v) for k, v in values.items()})}
            key = json.dumps(logic, sort_keys=True)
            if key in self.seen:
                continue
            phrases = {k: self.phrases[v] for k, v in values.items() if k in "ABCD"}
            numbers = {k: v for k, v in values.items() if k.startswith("T")}
            templates = TEMPLATES[shape]
            start = int(rng.integers(len(templates)))
            for offset in range(len(templates)):
                text = render(templates[(start + offset) % len(templates)], phrases, numbers)
                # the rendered text must read back as exactly this logic, and as nothing else
                if self.reads_as(text) == [logic]:
                    break
            else:
                continue
            self.seen.add(key)
            for k, v in values.items():
                if k in "ABCD":
                    self.usage[v] += 1
            return QuerySpec(task=task, shape=shape, logic=logic, text=text, anchor=anchor)
        raise QueryCapacityError(
            task,
            index,
            f"could not draw {task} query #{index} (new logic, unambiguous text) after 400 attempts: "
            f"the corpus of {len(self.clips)} clips may be too small for {task} queries, or the atom phrases too alike; "
            "use more clips or fewer --queries-per-task"
        )
