"""Drawing queries from real clips.

Labels are drawn from real clips ("anchors"): the anchor satisfies the logic, so every query has a
positive. Hard negatives are found or planned later (`reasonaudio.builder`).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence, overload

import numpy as np

from reasonaudio.contract import PATTERNS, TASKS
from reasonaudio.contract.reference import is_before, overlaps
from reasonaudio.errors import UserError
from reasonaudio.queries.parser import QueryParser
from reasonaudio.queries.templates import SHAPES, TEMPLATES, render

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


class ClipViews(Sequence[ClipView]):
    """The clips of a plan table (`clip_event_ptr`, `ev_atom`, `ev_onset`, `ev_length`,
    `clip_overlap`) as `ClipView`s, each made when it is read: a view holds Python lists, ~1 KB a
    clip, too much to hold for every clip of a million-clip corpus. Facts about the whole corpus
    are computed from the columns, never by making every view."""

    def __init__(self, cols: dict[str, np.ndarray], release: Callable[[], None] | None = None):
        # `release` gives back the pages read so far where the columns are memory maps: called
        # after each block of a corpus-wide pass
        self._release = release or (lambda: None)
        ptr = np.asarray(cols["clip_event_ptr"])
        # the planner's uint64 pointers read as int64 in place (event counts are far below 2^63)
        self._ptr = ptr.view(np.int64) if ptr.dtype == np.uint64 else ptr.astype(np.int64, copy=False)
        self._atom = cols["ev_atom"]
        self._onset = cols["ev_onset"]
        self._length = cols["ev_length"]
        self._overlap = cols["clip_overlap"]

    def __len__(self) -> int:
        return len(self._overlap)

    def _view(self, i: int) -> ClipView:
        lo, hi = self._ptr[i], self._ptr[i + 1]
        onsets = self._onset[lo:hi]
        return ClipView(
            self._atom[lo:hi].tolist(), onsets.tolist(), (onsets + self._length[lo:hi]).tolist(), PATTERNS[int(self._overlap[i])]
        )

    @overload
    def __getitem__(self, i: int) -> ClipView: ...

    @overload
    def __getitem__(self, i: slice) -> list[ClipView]: ...

    def __getitem__(self, i: int | slice) -> ClipView | list[ClipView]:
        if isinstance(i, slice):
            return [self._view(k) for k in range(*i.indices(len(self)))]
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        return self._view(i % len(self))

    def with_pattern(self, pattern: str, excluded: Iterable[int] = ()) -> "PatternClips":
        """The clips of `pattern`, less `excluded`, in clip order (see `PatternClips`)."""
        return PatternClips(self._overlap, PATTERNS.index(pattern), excluded)

    def cooccurrence(self, n_labels: int, chunk: int = 65_536) -> np.ndarray:
        """Whether two labels share a clip anywhere, as an n_labels x n_labels bool matrix (chunked
        incidence products, so memory stays flat for million-clip corpora)."""
        counts = np.zeros((n_labels, n_labels), dtype=np.float64)
        for lo in range(0, len(self), chunk):
            hi = min(lo + chunk, len(self))
            e0, e1 = self._ptr[lo], self._ptr[hi]
            rows = np.repeat(np.arange(hi - lo), np.diff(self._ptr[lo : hi + 1]))
            incidence = np.zeros((hi - lo, n_labels), dtype=np.float32)
            incidence[rows, self._atom[e0:e1].astype(np.int64)] = 1.0
            counts += incidence.T @ incidence
            self._release()
        return counts > 0


class PatternClips(Sequence[int]):
    """The indices of the clips whose pattern flag is `flag`, less those taken out, ascending, read
    by position. It holds a count per block of clips and the clips taken out, not every index: an
    index array of a pattern takes 8 B a clip of the corpus. Position k costs one block's scan."""

    def __init__(self, flags: np.ndarray, flag: int, excluded: Iterable[int] = (), block: int = 1 << 16):
        self._flags, self._flag, self._block = flags, flag, block
        self._out = np.unique(np.fromiter(excluded, dtype=np.int64))  # sorted, any pattern
        self._counts = np.array(
            [np.count_nonzero(self._mask(lo)) for lo in range(0, len(flags), block)], dtype=np.int64
        )
        self._ends = np.cumsum(self._counts)

    def _mask(self, lo: int) -> np.ndarray:
        """Whether each clip of the block at `lo` is one of these clips."""
        mask = np.asarray(self._flags[lo : lo + self._block]) == self._flag
        out = self._out[np.searchsorted(self._out, lo) : np.searchsorted(self._out, lo + len(mask))]
        mask[out - lo] = False
        return mask

    def __len__(self) -> int:
        return int(self._ends[-1]) if len(self._ends) else 0

    @overload
    def __getitem__(self, k: int) -> int: ...

    @overload
    def __getitem__(self, k: slice) -> list[int]: ...

    def __getitem__(self, k: int | slice) -> int | list[int]:
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(len(self)))]
        k = int(k)
        if not -len(self) <= k < len(self):
            raise IndexError(k)
        k %= len(self)
        b = int(np.searchsorted(self._ends, k, side="right"))
        lo = b * self._block
        before = int(self._ends[b - 1]) if b else 0
        return lo + int(np.flatnonzero(self._mask(lo))[k - before])

    def pop(self, k: int) -> int:
        """Takes out the clip at position `k` and gives its index (as `list.pop(k)` would)."""
        clip = self[k]
        self._out = np.insert(self._out, np.searchsorted(self._out, clip), clip)
        self._counts[clip // self._block] -= 1
        self._ends = np.cumsum(self._counts)
        return clip


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

    clips: ClipViews
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
        self.cooccur = self.clips.cooccurrence(len(self.labels))
        self.overlap_clips = self.clips.with_pattern("overlap")
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
        pool: Sequence[int] | np.ndarray
        if anchor_pool is not None:
            pool = list(anchor_pool)
            if task == "overlap":
                pool = [c for c in pool if self.clips[c].pattern == "overlap"]
        else:
            pool = self.overlap_clips if task == "overlap" else range(len(self.clips))
        if len(pool) == 0:
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
