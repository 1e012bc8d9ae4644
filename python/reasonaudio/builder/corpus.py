"""The corpus of clip plans, and the hard negatives of every query found in it or planned on purpose
into clips of it (contract §3.2)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from reasonaudio import _core
from reasonaudio.builder.config import BuildConfig
from reasonaudio.contract import PATTERNS
from reasonaudio.queries import ClipViews, QuerySpec
from reasonaudio.io import spill
from reasonaudio.io.spill import release, spill_lists
from reasonaudio.relevance import plan_relevance as relevance, positive_labels, range_relevance

# --- corpus plans ---------------------------------------------------------------------------------


class Corpus:
    """Columnar clip plans with a few clips replaced on purpose (planned hard negatives)."""

    def __init__(self, cols: dict[str, np.ndarray]):
        self.cols = cols
        self.replaced: dict[int, dict[str, np.ndarray]] = {}

    @property
    def n_clips(self) -> int:
        return len(self.cols["clip_length"])

    def pattern(self, i: int) -> str:
        plan = self.replaced.get(i)
        flag = plan["clip_overlap"][0] if plan is not None else self.cols["clip_overlap"][i]
        return PATTERNS[int(flag)]  # a replacement keeps it (`replace`)

    def replace(self, i: int, plan: dict[str, np.ndarray]) -> None:
        if PATTERNS[int(plan["clip_overlap"][0])] != self.pattern(i):
            raise AssertionError("a replacement must keep the clip's pattern")
        self.replaced[i] = plan

    def columns(self) -> dict[str, np.ndarray]:
        """The final plan table: per-event columns sorted by clip, per-clip columns."""
        if not self.replaced:
            return self.cols
        return next(self.blocks(self.n_clips))[1]

    def blocks(self, block: int) -> Iterator[tuple[int, dict[str, np.ndarray]]]:
        """The final plan table (`columns`) a block of clips at a time: (its first clip, its
        columns), clip indices those of the corpus, event pointers counted from the block's start."""
        ptr = self.cols["clip_event_ptr"]
        victims = np.array(sorted(self.replaced), dtype=np.int64)
        for lo in range(0, self.n_clips, block):
            hi = min(lo + block, self.n_clips)
            counts = np.diff(np.asarray(ptr[lo : hi + 1], dtype=np.int64))
            clip_length = np.array(self.cols["clip_length"][lo:hi])
            pieces: dict[str, list[np.ndarray]] = {k: [] for k in ("ev_atom", "ev_onset", "ev_length", "ev_gain_db", "ev_mode", "ev_clip")}
            start = lo
            for i in victims[np.searchsorted(victims, lo) : np.searchsorted(victims, hi)].tolist():
                plan = self.replaced[i]
                for k in pieces:
                    pieces[k].append(self.cols[k][ptr[start] : ptr[i]])
                    pieces[k].append(np.full_like(plan[k], i) if k == "ev_clip" else plan[k])
                counts[i - lo] = len(plan["ev_atom"])
                clip_length[i - lo] = plan["clip_length"][0]
                start = i + 1
            for k in pieces:
                pieces[k].append(self.cols[k][ptr[start] : ptr[hi]])
            out = {k: np.concatenate(v) for k, v in pieces.items()}
            out["clip_event_ptr"] = np.concatenate([[0], np.cumsum(counts)]).astype(np.uint64)
            out["clip_length"] = clip_length
            out["clip_overlap"] = np.array(self.cols["clip_overlap"][lo:hi])
            yield lo, out


def _containment_logic(logic: dict) -> dict:
    return {"all": [{"has": lab} for lab in positive_labels(logic)]}


# --- hard negatives planned on purpose -------------------------------------------------------------


# A way to plan a hard negative: a pattern and what the clip must hold, or why it cannot be asked for.
_Way = tuple[str, _core.ClipRequest | str]


def _way(pattern: str, **request) -> _Way:
    """A request that cannot be made (e.g. a label both required and negated) stays in its place in
    the cycle of attempts as its error, so the keys of the other attempts do not move."""
    try:
        return pattern, _core.ClipRequest(**request)
    except ValueError as err:
        return pattern, str(err)


def _hard_negative_request(spec: QuerySpec, label_index: dict[str, int], bin_of_threshold) -> list[_Way]:
    """Ways to plan a clip that holds every positive label of the query and breaks its logic."""
    lid = label_index
    cons = spec.logic["all"]
    nots = [lid[c["not"]] for c in cons if "not" in c]
    befores = [c["before"] for c in cons if "before" in c]
    overlaps = [c["overlap"] for c in cons if "overlap" in c]
    durs = [c["duration"] for c in cons if "duration" in c]
    pos = [lid[x] for x in positive_labels(spec.logic)]
    requests: list[_Way] = []
    if nots:
        # contain a negated sound: breaks `not` whatever else happens
        requests.append(_way("sequential", required=pos + [nots[0]]))
    if befores:
        a, b = befores[0]
        rest = [x for x in pos if x not in (lid[a], lid[b])]
        requests.append(_way("sequential", required=[lid[b], lid[a]] + rest, ordered=True))
    if overlaps:
        requests.append(_way("sequential", required=pos))
    for d in durs:
        bins = bin_of_threshold(d)
        if bins is not None:
            req_bins = [bins if x == lid[d["label"]] else None for x in pos]
            requests.append(_way("sequential", required=pos, required_bins=req_bins))
    return requests


class CorpusFull(Exception):
    """Planned hard negatives need more free clips than the corpus has (or cannot be planned);
    `query_index` is the first query that could not get one."""

    def __init__(self, query_index: int, reason: str):
        super().__init__(reason)
        self.query_index = query_index
        self.reason = reason


def _plan_hard_negative(
    spec: QuerySpec,
    query_index: int,
    config: BuildConfig,
    params_json: str,
    natives: np.ndarray,
    labels: list[str],
    bin_of_threshold,
    variant: int = 0,
    patterns: tuple[str, ...] = PATTERNS,
) -> dict[str, np.ndarray]:
    """A clip planned to be a hard negative of `spec`, in one of `patterns` (those with a free clip
    left to replace); `variant` > 0 asks for further, different ones."""
    label_index = {lab: i for i, lab in enumerate(labels)}
    requests = _hard_negative_request(spec, label_index, bin_of_threshold)
    containment = _containment_logic(spec.logic)
    last_error = "every planned clip satisfied the query or lacked a mentioned sound"
    if not requests:
        raise CorpusFull(query_index, f"no way to plan a hard negative for {json.dumps(spec.logic)}")
    for attempt in range(64):
        wanted, request = requests[(attempt + variant) % len(requests)]
        key = (1 << 48) + (variant << 40) + query_index * 1024 + attempt
        # the request's own pattern when a clip of it is free, else the other one
        pattern = wanted if wanted in patterns else patterns[attempt % len(patterns)]
        if isinstance(request, str):
            last_error = request
            continue
        try:
            plan = _core.plan_clip(natives, params_json, request, pattern=pattern, seed=config.seed, key=key)
        except ValueError as err:  # e.g. more required sounds than max_events allows
            last_error = str(err)
            continue
        rel, contains = relevance(plan, labels, [spec.logic, containment], config.sample_rate, 1)
        if len(contains) == 1 and len(rel) == 0:
            return plan
    raise CorpusFull(query_index, f"could not plan a hard negative for query {spec.text!r} ({json.dumps(spec.logic)}): {last_error}")


def _annotate_plans(plans: list[dict[str, np.ndarray]], labels: list[str], logics: list[dict], config: BuildConfig) -> list[np.ndarray]:
    """Each logic's relevant plans among `plans` (one clip each), as positions in the list."""
    counts = [len(p["ev_atom"]) for p in plans]
    small = {k: np.concatenate([p[k] for p in plans]) for k in ("ev_atom", "ev_onset", "ev_length", "clip_length")}
    small["ev_clip"] = np.repeat(np.arange(len(plans), dtype=np.uint32), counts)
    small["clip_event_ptr"] = np.concatenate([[0], np.cumsum(counts)]).astype(np.uint64)
    return relevance(small, labels, logics, config.sample_rate, config.worker_threads)


def _hard_among(plans: list[dict[str, np.ndarray]], relevant: list[np.ndarray], labels: list[str], containments: list[dict], config: BuildConfig) -> list[np.ndarray]:
    """Per query, the positions among `plans` of its hard negatives (every positive sound, logic
    broken), `relevant` being each query's relevant positions among them."""
    con = _annotate_plans(plans, labels, containments, config)
    return [np.setdiff1d(c, r, assume_unique=True) for c, r in zip(con, relevant)]


def _holds(clips: np.ndarray, clip: int | None) -> bool:
    """Whether ascending `clips` holds `clip` (a binary search: a set of a query's relevant clips
    would take ~50 B a clip, for queries that most clips satisfy)."""
    if clip is None:
        return False
    i = _place(clips, clip)
    return i < len(clips) and int(clips[i]) == clip


def _place(clips: np.ndarray, clip: int) -> int:
    """Where `clip` goes in ascending `clips`: searched for as a value of their dtype, since numpy
    casts a whole uint32 array to int64 to search it for a Python int (and reads every page of a
    mapped one)."""
    return int(np.searchsorted(clips, np.asarray(clip, dtype=clips.dtype)))


@dataclass
class Pairs:
    """What pairing queries with positives and hard negatives made: the corpus with its planned
    clips, relevance on it, the two-option pairs, hard negatives per query."""

    corpus: Corpus
    relevant: list[np.ndarray]
    positives: list[int]
    negatives: list[int]
    planned: int
    hard_counts: list[int]

    @staticmethod
    def empty(corpus: Corpus) -> "Pairs":
        return Pairs(corpus, [], [], [], 0, [])


# Queries whose containment lists (every clip of a block holding a query's positive sounds, often
# many more than its relevant clips) are made at once.
CONTAINMENT_GROUP = 256


def hard_negatives(
    corpus: Corpus,
    specs: list[QuerySpec],
    config: BuildConfig,
    params_json: str,
    natives: np.ndarray,
    labels: list[str],
    bin_of_threshold,
    group: int | None = None,
) -> Pairs:
    """Pick a positive and the hard negatives of every query, planning missing hard negatives into
    free clips of the corpus (raises CorpusFull when it runs out of them). `corpus` has no replaced
    clip yet; the result does not depend on `group` (CONTAINMENT_GROUP unless given)."""
    if corpus.replaced:
        raise AssertionError("hard negatives are picked on a corpus without replaced clips")
    rng = np.random.default_rng([config.seed, 0x4D43])
    group = group or CONTAINMENT_GROUP
    logics = [s.logic for s in specs]
    containments = [_containment_logic(lg) for lg in logics]
    cols = corpus.cols
    on_disk = corpus.n_clips > spill.SPILL_CLIPS
    rel = relevance(cols, labels, logics, config.sample_rate, config.worker_threads, spill=on_disk)
    protected = {s.anchor for s in specs}
    want = config.min_hard_negatives
    hard = _HardNegatives(cols, labels, containments, rel, config, group)
    pos_pick: list[int] = []
    neg_pick: list[int | None] = []
    drawn: list[tuple[int | None, list[int]]] = []  # per query: positions in its hard list drawn
    hard_counts: list[int] = []  # per query, on the corpus before replacements
    for q in range(len(specs)):
        if not _holds(rel[q], specs[q].anchor):
            raise AssertionError(f"query {q}: its anchor clip does not satisfy it")
        pos_pick.append(int(rel[q][rng.integers(len(rel[q]))]))
        m = hard.count(q)
        k = int(rng.integers(m)) if m else None
        # rng.permutation(m) draws what rng.permutation of the hard list itself would
        order = [int(p) for p in rng.permutation(m)[:want]] if want > 1 else []
        drawn.append((k, [p for p in order if p != k][: want - 1]))
        hard_counts.append(m)
    clip_at = hard.clips_at([([k] if k is not None else []) + extra for k, extra in drawn])
    kept: list[list[int]] = []  # hard negatives held per query (protected from replacement)
    for q, (k, extra) in enumerate(drawn):
        neg_pick.append(clip_at[q][k] if k is not None else None)
        kept.append(([clip_at[q][k]] if k is not None else []) + [clip_at[q][p] for p in extra])
    protected.update(pos_pick)
    protected.update(x for held in kept for x in held)
    # The free clips of each pattern, read by position: taking position k out draws what
    # list.pop(k) on a list of them would, without a list (36 B a clip) or an index array (8 B).
    views = ClipViews(cols)
    free = {p: views.with_pattern(p, excluded=protected) for p in PATTERNS}
    planned = 0
    for q, spec in enumerate(specs):
        for variant in range(want - len(kept[q])):
            open_patterns = tuple(p for p in PATTERNS if len(free[p]))
            if not open_patterns:
                raise CorpusFull(q, "no free clip left to hold a planned hard negative")
            plan = _plan_hard_negative(spec, q, config, params_json, natives, labels, bin_of_threshold, variant, open_patterns)
            pattern = PATTERNS[int(plan["clip_overlap"][0])]
            victim = free[pattern].pop(int(rng.integers(len(free[pattern]))))
            corpus.replace(victim, plan)
            kept[q].append(victim)
            if neg_pick[q] is None:
                neg_pick[q] = victim
            planned += 1
    if corpus.replaced:
        # a clip's relevance and hard negatives depend on its own events alone: only the replaced
        # clips are annotated again (their plans before and after), not the corpus
        victims = np.array(sorted(corpus.replaced), dtype=np.uint32)
        old_plans = [_clip_plan(cols, int(v)) for v in victims]
        new_plans = [corpus.replaced[int(v)] for v in victims]
        rel_new = _annotate_plans(new_plans, labels, logics, config)
        before = _hard_among(old_plans, _annotate_plans(old_plans, labels, logics, config), labels, containments, config)
        after = _hard_among(new_plans, rel_new, labels, containments, config)
        merged = (np.union1d(np.setdiff1d(old, victims, assume_unique=True), victims[new]) for old, new in zip(rel, rel_new))
        rel = spill_lists(merged) if on_disk else list(merged)
        for q in range(len(specs)):
            hard_counts[q] += len(after[q]) - len(before[q])
            # a negative that is a replaced clip must be a hard negative as planned (the others
            # are clips no replacement touched)
            i = int(np.searchsorted(victims, neg_pick[q]))
            if i < len(victims) and victims[i] == neg_pick[q] and not _holds(after[q], i):
                raise AssertionError(f"query {q}: its planned hard negative is not one")
    for q in range(len(specs)):
        if not _holds(rel[q], pos_pick[q]) or _holds(rel[q], neg_pick[q]):
            raise AssertionError(f"query {q}: two-option pair broken by a replaced clip")
    if hard_counts and min(hard_counts) < want:
        raise AssertionError(f"a query has fewer than {want} hard negatives after planning")
    return Pairs(corpus, rel, pos_pick, [int(x) for x in neg_pick], planned, hard_counts)


class _HardNegatives:
    """Every query's hard negatives on the corpus (clips holding its positive sounds, its logic
    broken), counted and read by position a block of clips at a time: a list of them per query
    would take memory in the corpus size, often far more than its relevant clips."""

    def __init__(self, cols, labels: list[str], containments: list[dict], rel: list[np.ndarray], config: BuildConfig, group: int):
        self.cols, self.labels, self.containments, self.rel, self.config, self.group = cols, labels, containments, rel, config, group
        n = len(cols["clip_length"])
        self.starts = list(range(0, n, spill.SPILL_BLOCK)) or [0]
        counts = np.zeros((len(self.starts), len(containments)), dtype=np.int64)
        everyone = list(range(len(containments)))
        for b, lo in enumerate(self.starts):
            for q, found in self._in_block(lo, everyone):
                counts[b, q] = len(found)
        self.ends = np.cumsum(counts, axis=0)  # per block, per query: hard negatives up to its end

    def _in_block(self, lo: int, queries: list[int]) -> Iterator[tuple[int, np.ndarray]]:
        """(query, its hard negatives among the block's clips) for each of `queries`."""
        hi = min(lo + spill.SPILL_BLOCK, len(self.cols["clip_length"]))
        groups = [queries[g : g + self.group] for g in range(0, len(queries), self.group)]
        found = range_relevance(
            self.cols, lo, hi, self.labels, ([self.containments[q] for q in g] for g in groups),
            self.config.sample_rate, self.config.worker_threads,
        )
        for g, lists in zip(groups, found):
            for q, contains in zip(g, lists):
                r = self.rel[q]
                relevant = r[_place(r, lo) : _place(r, hi)]
                yield q, np.setdiff1d(contains, relevant, assume_unique=True)
        release(self.cols, self.rel[:1])  # the relevant lists share one map

    def count(self, q: int) -> int:
        return int(self.ends[-1, q])

    def clips_at(self, positions: list[list[int]]) -> list[dict[int, int]]:
        """Per query, the clip at each of its `positions` in its ascending list of hard negatives."""
        wanted: dict[int, list[tuple[int, int]]] = {}  # block -> (query, position)
        for q, ps in enumerate(positions):
            for p in ps:
                b = int(np.searchsorted(self.ends[:, q], p, side="right"))
                wanted.setdefault(b, []).append((q, p))
        out: list[dict[int, int]] = [{} for _ in positions]
        for b in sorted(wanted):
            before = self.ends[b - 1] if b else np.zeros(len(positions), dtype=np.int64)
            found = dict(self._in_block(self.starts[b], sorted({q for q, _ in wanted[b]})))
            for q, p in wanted[b]:
                out[q][p] = int(found[q][p - int(before[q])])
        return out


def _clip_plan(cols: dict[str, np.ndarray], i: int) -> dict[str, np.ndarray]:
    """Clip `i`'s plan out of the corpus's columns (the form `_core.plan_clip` gives)."""
    ptr = cols["clip_event_ptr"]
    e0, e1 = int(ptr[i]), int(ptr[i + 1])
    return {
        **{k: cols[k][e0:e1] for k in ("ev_atom", "ev_onset", "ev_length", "ev_gain_db", "ev_mode")},
        **{k: cols[k][i : i + 1] for k in ("clip_length", "clip_overlap")},
    }
