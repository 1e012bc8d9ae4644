"""Relevance through the Rust core: events x query logic -> relevant (query, clip) pairs.

Semantics are the contract's (spec §2); the work is done by `reasonaudio._core.annotate_csr`.
Events cross the boundary as integer ticks: sample positions with the sample rate, or seconds
quantised to whole microseconds (rate 1e6) when only seconds are known.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Mapping, Sequence, Union

import numpy as np
import polars as pl

from reasonaudio import _core
from reasonaudio.contract import logic as contract_logic
from reasonaudio.errors import UserError
from reasonaudio.io.spill import ArrayFile, release, spill_lists


MICROSECOND_RATE = 1_000_000.0

LogicLike = Union[str, Mapping[str, Any]]

# Strong-label tables: (clip, onset seconds, offset seconds, label) column names per source.
_STRONG_LAYOUTS: tuple[tuple[str, str, str, str], ...] = (
    ("filename", "onset", "offset", "event_label"),  # DESED / DCASE task 4
    ("segment_id", "start_time_seconds", "end_time_seconds", "label"),  # AudioSet-Strong
    ("clip_id", "onset_s", "offset_s", "label"),  # this project's own seconds columns
)


@dataclass(frozen=True)
class EventArrays:
    """Events encoded for the core: clip and label indices, integer ticks, ticks per second."""

    clip: np.ndarray  # uint32, index into clip_ids
    label: np.ndarray  # uint32, index into labels
    onset: np.ndarray  # int64 ticks
    offset: np.ndarray  # int64 ticks (exclusive)
    rate: float
    clip_ids: Sequence[str]
    labels: list[str]


class _PlanIndices(Sequence[str]):
    """The plan's clip indices as ids, made when read: a million-clip plan's ids are never needed
    whole (ids come with the tables)."""

    def __init__(self, n: int):
        self._n = n

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [str(k) for k in range(*i.indices(self._n))]
        return str(range(self._n)[i])


@dataclass(frozen=True)
class RelevanceCSR:
    """Query i's relevant clips are `clip_ids[j]` for j in `clip_indices[indptr[i]:indptr[i+1]]`."""

    indptr: np.ndarray  # uint64, len(query_ids) + 1
    clip_indices: np.ndarray  # uint32, ascending within each query
    query_ids: list[str]
    clip_ids: Sequence[str]

    @property
    def n_pairs(self) -> int:
        return int(self.clip_indices.shape[0])

    def counts(self) -> np.ndarray:
        """Number of relevant clips per query."""
        return np.diff(self.indptr).astype(np.int64)

    def clips_of(self, query: int) -> np.ndarray:
        return self.clip_indices[int(self.indptr[query]) : int(self.indptr[query + 1])]

    def to_frame(self) -> pl.DataFrame:
        """qrels rows (contract §4): query_id, clip_id, relevance = 1, relevant pairs only."""
        return self.pairs_frame(0, self.n_pairs)

    def pairs_frame(self, start: int, stop: int, ids: tuple[pl.Series, pl.Series] | None = None) -> pl.DataFrame:
        """Rows `start:stop` of `to_frame()`, made without the others (qrels are written a block
        of pairs at a time); `ids` is `id_columns()`, made once for many blocks."""
        queries, clips = ids if ids is not None else self.id_columns()
        # pairs of query q are rows indptr[q]:indptr[q + 1]; clipped to the block, their counts
        ptr = np.clip(self.indptr.astype(np.int64), start, stop)
        query_index = np.repeat(np.arange(len(self.query_ids), dtype=np.uint32), np.diff(ptr))
        return pl.DataFrame(
            {
                "query_id": queries.gather(query_index),
                "clip_id": clips.gather(self.clip_indices[start:stop]),
                "relevance": pl.Series("relevance", np.ones(stop - start, dtype=np.int32)),
            }
        )

    def id_columns(self) -> tuple[pl.Series, pl.Series]:
        """The query ids and clip ids as String Series named query_id and clip_id."""
        return pl.Series("query_id", self.query_ids, dtype=pl.String), id_series(self.clip_ids, "clip_id")


def id_series(ids: Sequence[str] | pl.Series, name: str) -> pl.Series:
    """`ids` as a String Series named `name`: a Series (a corpus's million ids) stays one column."""
    if isinstance(ids, pl.Series):
        return ids.cast(pl.String).rename(name)
    return pl.Series(name, [str(c) for c in ids], dtype=pl.String)


def positive_labels(logic: LogicLike) -> list[str]:
    """Distinct labels a query mentions positively (`has`, `before`, `overlap`, `duration`), in
    order of first mention: a hard negative must contain all of them (spec §3.2)."""
    text = logic if isinstance(logic, str) else json.dumps(logic)
    try:
        return contract_logic.positive_labels(contract_logic.parse_logic(text))
    except contract_logic.LogicError as err:
        raise UserError(f"logic {text[:120]}: {err}") from None


def _logic_object(logic: LogicLike) -> Mapping[str, Any]:
    if isinstance(logic, str):
        try:
            obj = json.loads(logic)
        except json.JSONDecodeError as err:
            raise UserError(f"logic is not valid JSON ({err}): {logic[:120]}") from None
    else:
        obj = logic
    if not isinstance(obj, Mapping):
        raise UserError(f'logic must be an object {{"all": [...]}}, got {obj!r:.120}')
    return obj


def _logic_json(logic: LogicLike) -> str:
    if isinstance(logic, str):
        return logic
    return json.dumps(logic, allow_nan=True)


def _require_columns(frame: pl.DataFrame, columns: Iterable[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise UserError(f"{what}: missing column(s) {', '.join(missing)}; found {', '.join(frame.columns)}")


def _first_null_row(frame: pl.DataFrame, columns: Sequence[str]) -> tuple[int, str] | None:
    for column in columns:
        nulls = frame[column].is_null()
        if nulls.any():
            return int(nulls.arg_true()[0]), column
    return None


# Rows per step of an element-wise check over every event: its temporaries stay a few MB, where
# whole-column ones take several times the column's size (hundreds of MB at millions of events).
_CHECK_ROWS = 1 << 20


def _offsets(events: pl.DataFrame) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """(first row, offset_sample, offset_s) as float arrays, _CHECK_ROWS rows at a time."""
    for lo in range(0, events.height, _CHECK_ROWS):
        part = events.slice(lo, _CHECK_ROWS)
        yield lo, part["offset_sample"].cast(pl.Float64).to_numpy(), part["offset_s"].cast(pl.Float64).to_numpy()


def _rate_disagreement(events: pl.DataFrame, rate: float) -> tuple[int, float, float] | None:
    """The first row whose offset_sample / offset_s is not `rate` (to a microsecond), if any, with
    its offset_sample and offset_s."""
    for lo, samples, seconds in _offsets(events):
        off = ~np.isclose(samples / rate, seconds, rtol=0, atol=1e-6)
        if off.any():
            k = int(np.argmax(off))
            return lo + k, float(samples[k]), float(seconds[k])
    return None


def _rate_from_frame(events: pl.DataFrame, sample_rate: int | float | None) -> float:
    if sample_rate is not None:
        rate = float(sample_rate)
        if not (math.isfinite(rate) and rate > 0):
            raise UserError(f"sample_rate must be a positive number, got {sample_rate!r}")
        # a rate that contradicts what the events themselves say would silently shift every time
        if "sample_rate" in events.columns:
            known = events["sample_rate"].drop_nulls().unique().to_list()
            if len(known) == 1 and float(known[0]) != rate:
                raise UserError(
                    f"sample rate {sample_rate} contradicts the events' own {known[0]} Hz (the benchmark's manifest); "
                    "leave --sample-rate out"
                )
        if {"onset_s", "offset_s"} <= set(events.columns) and events.height:
            found = _rate_disagreement(events, rate)
            if found is not None:
                row, sample, second = found
                raise UserError(
                    f"events row {row}: offset_sample {sample:.0f} / offset_s {second} is not the sample rate "
                    f"{sample_rate}; expected offset_s = offset_sample / {sample_rate} (leave --sample-rate out, or give "
                    "the rate the samples were counted at)"
                )
        return rate
    if events.height == 0:
        return 1.0  # no event to time: every rate gives the same (empty) index
    if "sample_rate" in events.columns:
        rates = events["sample_rate"].drop_nulls().unique()
        if len(rates) != 1:
            raise UserError(f"events: the sample_rate column must hold one value, found {rates.to_list()[:5]}")
        return _rate_from_frame(events, rates[0])
    if {"onset_s", "offset_s"} <= set(events.columns):
        # Recover the exact integer rate from rows that have both samples and seconds; a row that
        # disagrees with the others is named (a hand-edited row, rather than a wrong rate).
        # counted as numpy compares (a NaN offset_s is not usable; polars orders NaN above 0)
        n_usable = sum(int(np.count_nonzero(seconds > 0)) for _, _, seconds in _offsets(events))
        if not n_usable:
            raise UserError("events: cannot infer the sample rate, every offset_s is 0; pass sample_rate (--sample-rate)")
        ratios = np.empty(n_usable)
        filled = 0
        for _, samples, seconds in _offsets(events):
            usable = seconds > 0
            k = int(usable.sum())
            np.divide(samples[usable], seconds[usable], out=ratios[filled : filled + k])
            filled += k
        rate = float(np.round(np.median(ratios, overwrite_input=True)))  # the same median, without a copy
        del ratios
        if rate <= 0:
            raise UserError(f"events: offset_sample / offset_s gives no positive sample rate ({rate:g}); pass sample_rate (--sample-rate)")
        found = _rate_disagreement(events, rate)
        if found is not None:
            row, sample, second = found
            raise UserError(
                f"events row {row}: offset_sample {sample:.0f} / offset_s {second} disagrees with the "
                f"sample rate {rate:g} Hz of the other rows; expected offset_s = offset_sample / {rate:g} (fix the row, "
                "or pass sample_rate)"
            )
        return rate
    raise UserError("events: onset_sample/offset_sample need a sample rate: pass sample_rate (or --sample-rate)")


def _index_of(values: pl.Series, categories: list[str] | pl.Series, what: str) -> np.ndarray:
    if isinstance(categories, pl.Series):
        # a corpus's million ids stay one Arrow column: as Python strings they take ~70 B each
        again = ~categories.is_first_distinct()
        if again.any():
            raise UserError(f"{what}: id {categories.filter(again)[0]!r} is listed twice")
    elif len(set(categories)) != len(categories):
        seen: set[str] = set()
        dup = next(c for c in categories if c in seen or seen.add(c))  # type: ignore[func-returns-value]
        raise UserError(f"{what}: id {dup!r} is listed twice")
    encoded = values.cast(pl.Enum(categories), strict=False)
    unknown = encoded.is_null()
    if unknown.any():
        row = int(unknown.arg_true()[0])
        raise UserError(f"events row {row}: {what} {values[row]!r} is not in the given clip list")
    return encoded.to_physical().cast(pl.UInt32).to_numpy()


def _time_columns(events: pl.DataFrame) -> list[str]:
    """The onset/offset columns the engine reads: samples where given, else seconds."""
    _require_columns(events, ["clip_id", "label"], "events")
    if {"onset_sample", "offset_sample"} <= set(events.columns):
        return ["onset_sample", "offset_sample"]
    if {"onset_s", "offset_s"} <= set(events.columns):
        return ["onset_s", "offset_s"]
    raise UserError(
        "events: need onset_sample/offset_sample or onset_s/offset_s columns; "
        f"found {', '.join(events.columns)}"
    )


def _check_order(events: pl.DataFrame, onset_c: str, offset_c: str) -> None:
    for lo in range(0, events.height, _CHECK_ROWS):
        part = events.slice(lo, _CHECK_ROWS)
        backwards = (part[offset_c].cast(pl.Float64, strict=False) < part[onset_c].cast(pl.Float64, strict=False)).fill_null(False)
        if backwards.any():
            row = lo + int(backwards.arg_true()[0])
            raise UserError(
                f"events row {row}: {offset_c} ({events[offset_c][row]}) is before {onset_c} ({events[onset_c][row]}); "
                f"expected {offset_c} >= {onset_c}"
            )


def _ticks(events: pl.DataFrame, time_columns: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Onsets and offsets as the engine's integer ticks: samples, or seconds in whole microseconds."""
    if time_columns[0] == "onset_sample":
        try:
            onset = events["onset_sample"].cast(pl.Int64).to_numpy()
            offset = events["offset_sample"].cast(pl.Int64).to_numpy()
        except pl.exceptions.InvalidOperationError as err:
            raise UserError(f"events: onset_sample/offset_sample must be integers ({err})") from None
        return onset, offset
    onset_s = events["onset_s"].cast(pl.Float64).to_numpy()
    offset_s = events["offset_s"].cast(pl.Float64).to_numpy()
    bad = ~(np.isfinite(onset_s) & np.isfinite(offset_s))
    if bad.any():
        raise UserError(f"events row {int(np.argmax(bad))}: onset_s/offset_s must be finite numbers")
    return np.rint(onset_s * MICROSECOND_RATE).astype(np.int64), np.rint(offset_s * MICROSECOND_RATE).astype(np.int64)


def zero_length(events: pl.DataFrame) -> np.ndarray:
    """Which event rows last no time as the engine reads them (onset = offset in its ticks): point
    annotations, which contract §2 keeps as events of their label with duration 0."""
    onset, offset = _ticks(events, _time_columns(events))
    return onset == offset


def prepare_events(
    events: pl.DataFrame,
    sample_rate: int | float | None = None,
    clip_ids: Sequence[str] | None = None,
) -> EventArrays:
    """Encodes an events frame for the core (do it once when calling `relevance_csr` repeatedly).

    `events` has `clip_id`, `label` and either `onset_sample`/`offset_sample` (the rate comes from
    `sample_rate`, a `sample_rate` column, or is recovered exactly from `onset_s`/`offset_s`) or
    only `onset_s`/`offset_s` (quantised to microseconds). `clip_ids` is the whole corpus, so that
    clips without events still count for queries made only of `not`; by default the clips are
    those in `events`, in order of first appearance. Given as a polars Series, the clip ids stay
    one (the result's `clip_ids` is that Series), which a million-clip corpus needs.
    """
    time_columns = _time_columns(events)
    null = _first_null_row(events, ["clip_id", "label", *time_columns])
    if null is not None:
        raise UserError(f"events row {null[0]}: {null[1]} is missing")

    clip_col = events["clip_id"].cast(pl.String)
    label_col = events["label"].cast(pl.String)
    # order before the rate: a reversed row would otherwise read as a sample rate that disagrees
    for on_c, off_c in (("onset_sample", "offset_sample"), ("onset_s", "offset_s")):
        if {on_c, off_c} <= set(events.columns):
            _check_order(events, on_c, off_c)
    onset, offset = _ticks(events, time_columns)
    negative = onset < 0
    if negative.any():
        row = int(np.argmax(negative))
        raise UserError(
            f"events row {row}: {time_columns[0]} ({events[time_columns[0]][row]}) is negative; "
            "expected a time from the start of the clip (>= 0)"
        )
    rate = _rate_from_frame(events, sample_rate) if time_columns[0] == "onset_sample" else MICROSECOND_RATE

    clips: list[str] | pl.Series
    if clip_ids is None:
        clips = clip_col.unique(maintain_order=True).to_list()
    elif isinstance(clip_ids, pl.Series):
        clips = clip_ids.cast(pl.String).rename("clip_id")
    else:
        clips = [str(c) for c in clip_ids]
    labels = label_col.unique(maintain_order=True).to_list()
    return EventArrays(
        clip=_index_of(clip_col, clips, "clip_id"),
        label=label_col.cast(pl.Enum(labels)).to_physical().cast(pl.UInt32).to_numpy(),
        onset=np.ascontiguousarray(onset, dtype=np.int64),
        offset=np.ascontiguousarray(offset, dtype=np.int64),
        rate=rate,
        clip_ids=clips,
        labels=labels,
    )


def _query_columns(
    queries: pl.DataFrame | Sequence[LogicLike], query_ids: Sequence[str] | None
) -> tuple[list[str], list[str]]:
    if isinstance(queries, pl.DataFrame):
        _require_columns(queries, ["query_id", "logic"], "queries")
        null = _first_null_row(queries, ["query_id", "logic"])
        if null is not None:
            raise UserError(f"queries row {null[0]}: {null[1]} is missing")
        ids = queries["query_id"].cast(pl.String).to_list()
        if queries["logic"].dtype == pl.String:
            logic = queries["logic"].to_list()
        else:
            logic = [_logic_json(v) for v in queries["logic"].to_list()]
    else:
        logic = [_logic_json(v) for v in queries]
        ids = [str(q) for q in query_ids] if query_ids is not None else [f"#{i}" for i in range(len(logic))]
    if len(ids) != len(logic):
        raise UserError(f"{len(ids)} query ids for {len(logic)} queries")
    if len(set(ids)) != len(ids):
        seen: set[str] = set()
        dup = next(q for q in ids if q in seen or seen.add(q))  # type: ignore[func-returns-value]
        raise UserError(f"queries: query_id {dup!r} appears more than once")
    return ids, logic


def relevance_csr(
    events: pl.DataFrame | EventArrays,
    queries: pl.DataFrame | Sequence[LogicLike],
    sample_rate: int | float | None = None,
    clip_ids: Sequence[str] | None = None,
    query_ids: Sequence[str] | None = None,
    threads: int = 0,
) -> RelevanceCSR:
    """Relevant pairs as CSR arrays, plus the query and clip id lists they index.

    `queries` is a frame with `query_id` + `logic`, or a sequence of logic (JSON strings or
    dicts, e.g. derived logic such as "has every positive label") named by `query_ids`.
    `threads=0` uses all cores; the result does not depend on it.
    """
    encoded = events if isinstance(events, EventArrays) else prepare_events(events, sample_rate, clip_ids)
    ids, logic = _query_columns(queries, query_ids)
    try:
        indptr, clip_indices = engine_csr(encoded, logic, ids, threads)
    except ValueError as err:
        raise UserError(str(err)) from None
    return RelevanceCSR(indptr=indptr, clip_indices=clip_indices, query_ids=ids, clip_ids=encoded.clip_ids)


def engine_csr(events: EventArrays, logic_json: Sequence[str], query_ids: Sequence[str] | None = None, threads: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The one call into the Rust engine: (indptr, clip indices) of every logic's relevant clips.
    Raises the core's typed errors unchanged (a caller that knows the input adds context)."""
    table = _core.EventLabels(clip=events.clip, label=events.label, onset=events.onset, offset=events.offset,
                              n_clips=len(events.clip_ids), rate=events.rate, labels=list(events.labels))
    return _core.annotate_csr(table, list(logic_json), None if query_ids is None else list(query_ids), threads)


def plan_events(cols: Mapping[str, np.ndarray], labels: list[str], rate: float) -> EventArrays:
    """Events of the planner's columns (ev_clip, ev_atom, ev_onset, ev_length, clip_length), in samples."""
    n_clips = len(cols["clip_length"])
    return EventArrays(
        clip=np.asarray(cols["ev_clip"]).astype(np.uint32, copy=False),
        label=np.asarray(cols["ev_atom"]).astype(np.uint32, copy=False),
        onset=np.asarray(cols["ev_onset"]).astype(np.int64, copy=False),
        offset=(np.asarray(cols["ev_onset"]) + np.asarray(cols["ev_length"])).astype(np.int64, copy=False),
        rate=float(rate),
        clip_ids=_PlanIndices(n_clips),
        labels=list(labels),
    )


# Clips per call of the engine on a plan: the engine's index of every event it is given is the
# largest thing planning holds, and a clip's relevance depends on its own events alone, so a plan
# is annotated a block of clips at a time.
PLAN_RELEVANCE_BLOCK = 1 << 16


def plan_relevance(
    cols: Mapping[str, np.ndarray],
    labels: list[str],
    logics: list[dict],
    rate: int,
    threads: int,
    block: int = PLAN_RELEVANCE_BLOCK,
    spill: bool = False,
) -> list[np.ndarray]:
    """Relevant clip indices (uint32, ascending) per logic on the planner's columns (the build's
    own use of the engine), the same whatever `block`. With `spill`, the lists are written to a
    temporary file and given back as views of its memory map (`reasonaudio.io.spill`): memory then
    holds a block's lists, not the corpus's."""
    logic_json = [json.dumps(lg) for lg in logics]
    n = len(cols["clip_length"])
    ptr = as_int64(cols["clip_event_ptr"])
    pieces: list[list[np.ndarray]] = [[] for _ in logics]
    store, counts = ArrayFile(np.uint32) if spill else None, []  # a spilled plan's pieces, block by block
    for lo in range(0, max(n, 1), block):  # one (empty) block for a corpus of no clips
        hi = min(lo + block, n)
        part = _clip_range(cols, ptr, lo, hi)
        indptr, clips = engine_csr(plan_events(part, labels, rate), logic_json, None, threads)
        if store is not None:
            store.append(clips + np.uint32(lo))
            counts.append(np.diff(np.asarray(indptr, dtype=np.int64)))
            release(cols)
        else:
            for q in range(len(logics)):
                pieces[q].append(clips[indptr[q] : indptr[q + 1]] + np.uint32(lo))
        del indptr, clips
    if store is not None:
        return spill_lists(_by_logic(store.array(), np.array(counts, dtype=np.int64).reshape(len(counts), len(logics))))
    lists = []
    for q in range(len(pieces)):  # each logic's pieces let go once joined: never both whole
        lists.append(np.concatenate(pieces[q]))
        pieces[q] = []
    return lists


def _clip_range(cols: Mapping[str, np.ndarray], ptr: np.ndarray, lo: int, hi: int) -> dict[str, np.ndarray]:
    """The columns of clips [lo, hi), clip indices counted from lo (event columns are views)."""
    e0, e1 = int(ptr[lo]), int(ptr[hi])
    return {
        "ev_clip": (np.asarray(cols["ev_clip"][e0:e1], dtype=np.int64) - lo).astype(np.uint32),
        "ev_atom": cols["ev_atom"][e0:e1],
        "ev_onset": cols["ev_onset"][e0:e1],
        "ev_length": cols["ev_length"][e0:e1],
        "clip_length": cols["clip_length"][lo:hi],
    }


def range_relevance(
    cols: Mapping[str, np.ndarray], lo: int, hi: int, labels: list[str], groups: Iterable[list[dict]], rate: int, threads: int
) -> Iterator[list[np.ndarray]]:
    """Relevant clip indices (uint32, ascending, indices of the corpus) among clips [lo, hi) per
    logic of each group of `groups` in turn: the clips' events are indexed once for every group,
    and only one group's lists are made at a time. The caller gives back mapped pages
    (`reasonaudio.io.spill.release`): it may stop reading before the last group."""
    part = _clip_range(cols, as_int64(cols["clip_event_ptr"]), lo, hi)
    events = plan_events(part, labels, rate)
    for logics in groups:
        indptr, clips = engine_csr(events, [json.dumps(lg) for lg in logics], None, threads)
        yield [clips[indptr[q] : indptr[q + 1]] + np.uint32(lo) for q in range(len(logics))]


def _by_logic(flat: np.ndarray, counts: np.ndarray) -> Iterator[np.ndarray]:
    """Each logic's list out of pieces stored block by block (`counts[b, q]` clips of logic q in
    block b), one logic at a time."""
    starts = (np.cumsum(counts.ravel()) - counts.ravel()).reshape(counts.shape)
    for q in range(counts.shape[1]):
        yield np.concatenate([flat[s : s + c] for s, c in zip(starts[:, q], counts[:, q])])
        release(flat)


def as_int64(ptr: np.ndarray) -> np.ndarray:
    """Event pointers as int64, the planner's uint64 read in place (event counts are far below
    2^63): a copy would take 8 B a clip."""
    ptr = np.asarray(ptr)
    return ptr.view(np.int64) if ptr.dtype == np.uint64 else ptr.astype(np.int64, copy=False)


def annotate(
    events: pl.DataFrame,
    queries: pl.DataFrame,
    sample_rate: int | None = None,
    threads: int = 0,
    clip_ids: Sequence[str] | None = None,
) -> pl.DataFrame:
    """qrels (contract §4): query_id, clip_id, relevance = 1 for every relevant pair, by query
    order then clip order."""
    return relevance_csr(events, queries, sample_rate=sample_rate, clip_ids=clip_ids, threads=threads).to_frame()


