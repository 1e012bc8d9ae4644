"""Relevance through the Rust core: events x query logic -> relevant (query, clip) pairs.

Semantics are the contract's (spec §2); the work is done by `reasonaudio._core.annotate_csr`.
Events cross the boundary as integer ticks: sample positions with the sample rate, or seconds
quantised to whole microseconds (rate 1e6) when only seconds are known.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence, Union

import numpy as np
import polars as pl

from reasonaudio import _core
from reasonaudio.dataset import iter_jsonl
from reasonaudio.errors import UserError

__all__ = [
    "EventArrays",
    "RelevanceCSR",
    "annotate",
    "positive_labels",
    "prepare_events",
    "read_events",
    "read_queries",
    "relevance_csr",
    "stream_relevance_csr",
    "write_qrels",
]

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
    clip_ids: list[str]
    labels: list[str]


@dataclass(frozen=True)
class RelevanceCSR:
    """Query i's relevant clips are `clip_ids[j]` for j in `clip_indices[indptr[i]:indptr[i+1]]`."""

    indptr: np.ndarray  # uint64, len(query_ids) + 1
    clip_indices: np.ndarray  # uint32, ascending within each query
    query_ids: list[str]
    clip_ids: list[str]

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
        query_index = np.repeat(np.arange(len(self.query_ids), dtype=np.uint32), self.counts())
        queries = pl.Series("query_id", self.query_ids, dtype=pl.String)
        clips = pl.Series("clip_id", self.clip_ids, dtype=pl.String)
        return pl.DataFrame(
            {
                "query_id": queries.gather(query_index),
                "clip_id": clips.gather(self.clip_indices),
                "relevance": pl.Series("relevance", np.ones(self.n_pairs, dtype=np.int32)),
            }
        )


def positive_labels(logic: LogicLike) -> list[str]:
    """Distinct labels a query mentions positively (`has`, `before`, `overlap`, `duration`), in
    order of first mention: a hard negative must contain all of them (spec §3.2)."""
    from reasonaudio.contract import logic as contract_logic

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
            samples = events["offset_sample"].cast(pl.Float64).to_numpy()
            seconds = events["offset_s"].cast(pl.Float64).to_numpy()
            if not np.allclose(samples / rate, seconds, rtol=0, atol=1e-6):
                raise UserError(
                    f"sample rate {sample_rate} contradicts the events' offset_s (offset_sample / offset_s is not {sample_rate}); "
                    "leave --sample-rate out or give the rate the samples were counted at"
                )
        return rate
    if "sample_rate" in events.columns:
        rates = events["sample_rate"].drop_nulls().unique()
        if len(rates) != 1:
            raise UserError(f"events: the sample_rate column must hold one value, found {rates.to_list()[:5]}")
        return _rate_from_frame(events, rates[0])
    if {"onset_s", "offset_s"} <= set(events.columns):
        # Recover the exact integer rate from rows that have both samples and seconds.
        samples = events["offset_sample"].cast(pl.Float64).to_numpy()
        seconds = events["offset_s"].cast(pl.Float64).to_numpy()
        usable = seconds > 0
        if usable.any():
            rate = float(np.round(np.median(samples[usable] / seconds[usable])))
            if rate > 0 and np.allclose(samples / rate, seconds, rtol=0, atol=1e-6):
                return rate
        raise UserError(
            "events: cannot infer the sample rate from onset_sample/offset_s (inconsistent); pass sample_rate"
        )
    raise UserError("events: onset_sample/offset_sample need a sample rate: pass sample_rate (or --sample-rate)")


def _index_of(values: pl.Series, categories: list[str], what: str) -> np.ndarray:
    if len(set(categories)) != len(categories):
        seen: set[str] = set()
        dup = next(c for c in categories if c in seen or seen.add(c))  # type: ignore[func-returns-value]
        raise UserError(f"{what}: id {dup!r} is listed twice")
    encoded = values.cast(pl.Enum(categories), strict=False)
    unknown = encoded.is_null()
    if unknown.any():
        row = int(unknown.arg_true()[0])
        raise UserError(f"events row {row}: {what} {values[row]!r} is not in the given clip list")
    return encoded.to_physical().cast(pl.UInt32).to_numpy()


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
    those in `events`, in order of first appearance.
    """
    _require_columns(events, ["clip_id", "label"], "events")
    if {"onset_sample", "offset_sample"} <= set(events.columns):
        time_columns = ["onset_sample", "offset_sample"]
    elif {"onset_s", "offset_s"} <= set(events.columns):
        time_columns = ["onset_s", "offset_s"]
    else:
        raise UserError(
            "events: need onset_sample/offset_sample or onset_s/offset_s columns; "
            f"found {', '.join(events.columns)}"
        )
    null = _first_null_row(events, ["clip_id", "label", *time_columns])
    if null is not None:
        raise UserError(f"events row {null[0]}: {null[1]} is missing")

    clip_col = events["clip_id"].cast(pl.String)
    label_col = events["label"].cast(pl.String)
    if time_columns[0] == "onset_sample":
        rate = _rate_from_frame(events, sample_rate)
        try:
            onset = events["onset_sample"].cast(pl.Int64).to_numpy()
            offset = events["offset_sample"].cast(pl.Int64).to_numpy()
        except pl.exceptions.InvalidOperationError as err:
            raise UserError(f"events: onset_sample/offset_sample must be integers ({err})") from None
    else:
        rate = MICROSECOND_RATE
        onset_s = events["onset_s"].cast(pl.Float64).to_numpy()
        offset_s = events["offset_s"].cast(pl.Float64).to_numpy()
        bad = ~(np.isfinite(onset_s) & np.isfinite(offset_s))
        if bad.any():
            raise UserError(f"events row {int(np.argmax(bad))}: onset_s/offset_s must be finite numbers")
        onset = np.rint(onset_s * MICROSECOND_RATE).astype(np.int64)
        offset = np.rint(offset_s * MICROSECOND_RATE).astype(np.int64)

    backwards = offset < onset
    if backwards.any():
        row = int(np.argmax(backwards))
        raise UserError(f"events row {row}: offset ({offset[row]}) is before onset ({onset[row]})")
    negative = onset < 0
    if negative.any():
        row = int(np.argmax(negative))
        raise UserError(f"events row {row}: onset ({onset[row]}) is negative; times count from the start of the clip")

    if clip_ids is None:
        clips = clip_col.unique(maintain_order=True).to_list()
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
        indptr, clip_indices = _core.annotate_csr(
            encoded.clip,
            encoded.label,
            encoded.onset,
            encoded.offset,
            len(encoded.clip_ids),
            encoded.rate,
            encoded.labels,
            logic,
            ids,
            threads,
        )
    except ValueError as err:
        raise UserError(str(err)) from None
    return RelevanceCSR(indptr=indptr, clip_indices=clip_indices, query_ids=ids, clip_ids=encoded.clip_ids)


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


# ---------------------------------------------------------------------------------------------
# Readers and writers


def _input_file(path: str | os.PathLike[str], in_benchmark: str) -> Path:
    """`path`, or the benchmark table `in_benchmark` when `path` is a benchmark directory; it must exist."""
    path = Path(path)
    if path.is_dir():
        path = path / in_benchmark
    if not path.exists():
        raise UserError(f"{path}: no such file")
    return path


def _read_parquet(path: Path) -> pl.DataFrame:
    try:
        return pl.read_parquet(path)
    except Exception as err:  # polars raises several types for a corrupt file
        raise UserError(f"{path}: cannot read parquet ({err})") from None


def read_events(path: str | os.PathLike[str]) -> pl.DataFrame:
    """Reads events: the contract's events.parquet (a benchmark directory works too; its
    manifest's sample_rate is added as a column), or a strong-label table (.tsv/.txt tab
    separated, .csv comma separated, header row) in DESED layout (filename, onset, offset,
    event_label) or AudioSet-Strong layout (segment_id, start_time_seconds, end_time_seconds,
    label), times in seconds. Strong-label tables come back as clip_id, label, onset_s, offset_s.
    """
    path = _input_file(path, "events.parquet")
    if path.suffix == ".parquet":
        frame = _read_parquet(path)
        manifest = path.parent / "manifest.json"
        if "sample_rate" not in frame.columns and manifest.exists():
            try:
                rate = json.loads(manifest.read_text()).get("sample_rate")
            except (OSError, json.JSONDecodeError) as err:
                raise UserError(f"{manifest}: cannot read ({err})") from None
            if rate is not None:
                frame = frame.with_columns(pl.lit(rate).alias("sample_rate"))
        return frame
    if path.suffix in (".tsv", ".txt", ".csv"):
        return read_strong_labels(path)[0]
    raise UserError(f"{path}: expected events as .parquet or a strong-label .tsv/.csv")


def read_strong_labels(path: str | os.PathLike[str]) -> tuple[pl.DataFrame, list[str]]:
    """A strong-label table as events (clip_id, label, onset_s, offset_s) plus every file it names,
    in order of first appearance. A row with a file name and empty onset, offset and label (as
    DESED writes for a file without events) adds the file to the corpus and no event."""
    path = Path(path)
    return _read_strong_labels(path, "," if path.suffix == ".csv" else "\t")


def _read_strong_labels(path: Path, separator: str) -> tuple[pl.DataFrame, list[str]]:
    try:
        raw = pl.read_csv(path, separator=separator, infer_schema=False, quote_char=None)
    except Exception as err:
        raise UserError(f"{path}: cannot read as a {'tab' if separator == chr(9) else 'comma'}-separated table ({err})") from None
    columns = [c.strip() for c in raw.columns]
    raw.columns = columns
    layout = next((lay for lay in _STRONG_LAYOUTS if set(lay) <= set(columns)), None)
    if layout is None:
        expected = " or ".join("(" + ", ".join(lay) + ")" for lay in _STRONG_LAYOUTS)
        raise UserError(f"{path}: expected header columns {expected}; found ({', '.join(columns)})")
    clip_c, onset_c, offset_c, label_c = layout
    # Line numbers: header is line 1; polars keeps blank lines as all-null rows, so row i is line i + 2.
    frame = raw.select(clip_c, onset_c, offset_c, label_c).with_row_index("line", offset=2)
    blank = pl.all_horizontal(pl.col(c).is_null() | (pl.col(c).str.strip_chars() == "") for c in layout)
    frame = frame.filter(~blank)
    clip_ids = frame[clip_c].str.strip_chars().drop_nulls().unique(maintain_order=True).to_list()
    no_event = pl.all_horizontal(
        pl.col(c).is_null() | (pl.col(c).str.strip_chars() == "") for c in (onset_c, offset_c, label_c)
    )
    frame = frame.filter(~no_event)
    for column in layout:
        empty = frame.filter(pl.col(column).is_null() | (pl.col(column).str.strip_chars() == ""))
        if empty.height:
            raise UserError(f"{path}, line {empty['line'][0]}: {column} is empty")
    times = frame.with_columns(
        pl.col(onset_c).str.strip_chars().cast(pl.Float64, strict=False).alias("onset_s"),
        pl.col(offset_c).str.strip_chars().cast(pl.Float64, strict=False).alias("offset_s"),
    )
    for source, parsed in ((onset_c, "onset_s"), (offset_c, "offset_s")):
        bad = times.filter(pl.col(parsed).is_null() | pl.col(parsed).is_nan() | pl.col(parsed).is_infinite())
        if bad.height:
            raise UserError(
                f"{path}, line {bad['line'][0]}: {source} must be a number of seconds, got {bad[source][0]!r}"
            )
    negative = times.filter(pl.col("onset_s") < 0)
    if negative.height:
        row = negative.row(0, named=True)
        raise UserError(f"{path}, line {row['line']}: {onset_c} ({row[onset_c]}) is negative; times count from the start of the file")
    backwards = times.filter(pl.col("offset_s") < pl.col("onset_s"))
    if backwards.height:
        row = backwards.row(0, named=True)
        raise UserError(
            f"{path}, line {row['line']}: {offset_c} ({row[offset_c]}) is before {onset_c} ({row[onset_c]})"
        )
    events = times.select(
        pl.col(clip_c).str.strip_chars().alias("clip_id"),
        pl.col(label_c).str.strip_chars().alias("label"),
        "onset_s",
        "offset_s",
    )
    return events, clip_ids


def read_queries(path: str | os.PathLike[str]) -> pl.DataFrame:
    """Reads queries with `query_id` + `logic` (a JSON string; in .jsonl an object is also
    accepted) from .parquet, .jsonl or .csv. A benchmark directory reads its queries.parquet."""
    path = _input_file(path, "queries.parquet")
    if path.suffix == ".parquet":
        frame = _read_parquet(path)
    elif path.suffix in (".jsonl", ".ndjson"):
        rows: list[dict[str, Any]] = []
        for line_no, row in iter_jsonl(path):
            if "query_id" not in row or "logic" not in row:
                raise UserError(f"{path}, line {line_no}: expected an object with query_id and logic")
            rows.append(
                {
                    "query_id": str(row["query_id"]),
                    "logic": row["logic"] if isinstance(row["logic"], str) else json.dumps(row["logic"]),
                    **{k: v for k, v in row.items() if k in ("task", "text")},
                }
            )
        frame = pl.DataFrame(rows, schema_overrides={"query_id": pl.String, "logic": pl.String}, infer_schema_length=None)
        if frame.is_empty():
            frame = pl.DataFrame(schema={"query_id": pl.String, "logic": pl.String})
    elif path.suffix == ".csv":
        try:
            frame = pl.read_csv(path, infer_schema=False)
        except Exception as err:
            raise UserError(f"{path}: cannot read csv ({err})") from None
    else:
        raise UserError(f"{path}: expected queries as .parquet, .jsonl or .csv")
    _require_columns(frame, ["query_id", "logic"], str(path))
    return frame


def write_qrels(
    qrels: pl.DataFrame, path: str | os.PathLike[str], *, inputs: Sequence[str | os.PathLike[str]] = (), force: bool = True
) -> Path:
    """Writes qrels atomically: .parquet (query_id, clip_id, relevance), or .tsv in BEIR's
    layout (`query-id<TAB>corpus-id<TAB>score` with a header row). Never over one of `inputs`."""
    from reasonaudio.outputs import output_file

    path = Path(path)
    if path.suffix not in (".parquet", ".tsv"):
        raise UserError(f"{path}: output must end in .parquet or .tsv")
    with output_file(path, inputs=inputs, force=force) as tmp:
        if path.suffix == ".parquet":
            qrels.select("query_id", "clip_id", "relevance").write_parquet(tmp)
        else:
            qrels.select(
                pl.col("query_id").alias("query-id"),
                pl.col("clip_id").alias("corpus-id"),
                pl.col("relevance").alias("score"),
            ).write_csv(tmp, separator="\t", quote_style="never")
    return path


# ---------------------------------------------------------------------------------------------
# Streaming: an events table larger than memory


@dataclass(frozen=True)
class StreamStats:
    """What a streamed annotation read: batches, event rows, the largest batch held at once."""

    batches: int
    events: int
    max_batch_events: int
    clips_without_events: int = 0  # clips of the given clip list that no event names


def _event_files(source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[str]:
    """Parquet files of an events source: one file, a benchmark directory (its events.parquet), a
    directory of parquet files (a dataset, in sorted path order), or a list of files."""
    if isinstance(source, (list, tuple)):
        files = [str(Path(s)) for s in source]
    else:
        path = Path(source)
        if path.is_dir():
            # a clips.parquet beside the event files lists the corpus (as in a benchmark), it holds no events
            files = [str(path / "events.parquet")] if (path / "events.parquet").exists() else sorted(
                str(p) for p in path.rglob("*.parquet") if p.name != "clips.parquet"
            )
            if not files:
                raise UserError(f"{path}: no .parquet files in this directory")
        else:
            files = [str(path)]
    for f in files:
        if not Path(f).exists():
            raise UserError(f"{f}: no such file")
        if not f.endswith(".parquet"):
            raise UserError(f"{f}: streaming reads parquet events; convert strong-label tables first (or drop --batch-events)")
    return files


def _manifest_rate(files: list[str]) -> float | None:
    manifest = Path(files[0]).parent / "manifest.json"
    if len(files) == 1 and manifest.exists():
        try:
            rate = json.loads(manifest.read_text()).get("sample_rate")
        except (OSError, json.JSONDecodeError) as err:
            raise UserError(f"{manifest}: cannot read ({err})") from None
        return None if rate is None else float(rate)
    return None


def stream_relevance_csr(
    source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    queries: pl.DataFrame | Sequence[LogicLike],
    sample_rate: int | float | None = None,
    clip_ids: Sequence[str] | None = None,
    query_ids: Sequence[str] | None = None,
    threads: int = 0,
    batch_events: int = 1_000_000,
) -> tuple[RelevanceCSR, StreamStats]:
    """`relevance_csr` over a parquet events source read in batches of about `batch_events` rows:
    the same result, with the events held in memory bounded by one batch (plus the events of one
    clip carried across a batch boundary). Clips are independent, so a batch ends on a clip
    boundary; each clip's events must be contiguous in the source (as events.parquet and most
    strong-label exports are), which is checked. Clip ids and relevant pairs, the output, stay in
    memory."""
    import pyarrow as pa
    import pyarrow.dataset as pads

    if batch_events < 1:
        raise UserError(f"--batch-events must be >= 1, got {batch_events}")
    files = _event_files(source)
    try:
        dataset = pads.dataset(files, format="parquet")
    except (pa.ArrowInvalid, OSError) as err:
        raise UserError(f"{files[0]}: cannot read as a parquet dataset ({err})") from None
    names = set(dataset.schema.names)
    what = files[0] if len(files) == 1 else f"{files[0]} (+{len(files) - 1} files)"
    if not {"clip_id", "label"} <= names:
        raise UserError(f"{what}: missing column(s) clip_id/label; found {', '.join(dataset.schema.names)}")
    if {"onset_sample", "offset_sample"} <= names:
        columns = ["clip_id", "label", "onset_sample", "offset_sample"] + [c for c in ("onset_s", "offset_s", "sample_rate") if c in names]
    elif {"onset_s", "offset_s"} <= names:
        columns = ["clip_id", "label", "onset_s", "offset_s"]
    else:
        raise UserError(f"{what}: need onset_sample/offset_sample or onset_s/offset_s columns; found {', '.join(dataset.schema.names)}")
    ids, logic = _query_columns(queries, query_ids)
    rate = sample_rate if sample_rate is not None else _manifest_rate(files)

    # clip ids live in polars columns (Arrow strings), not Python dicts: at a million clips the
    # difference is hundreds of megabytes
    corpus = pl.DataFrame({"clip_id": pl.Series([str(c) for c in clip_ids], dtype=pl.String)}).with_row_index("g") if clip_ids is not None else None
    if corpus is not None and corpus["clip_id"].n_unique() != corpus.height:
        raise UserError("clip list: a clip id is listed twice")
    order = pl.Series("clip_id", [], dtype=pl.String)  # clips met so far, when no clip list is given
    seen = np.zeros(corpus.height, bool) if corpus is not None else None
    q_parts: list[np.ndarray] = []
    c_parts: list[np.ndarray] = []
    n_batches = n_events = max_held = 0
    batch_rate: float | None = None
    row_base = 0

    def not_contiguous(clip: str):
        return UserError(
            f"{what}: the events of clip {clip!r} are not contiguous (it reappears near row {row_base}); "
            "streaming needs each clip's events together: sort by clip_id"
        )

    def run(frame: pl.DataFrame) -> None:
        nonlocal n_batches, n_events, max_held, batch_rate, row_base, order
        local = frame["clip_id"].cast(pl.String).unique(maintain_order=True)
        local_clips = local.to_list()
        if corpus is None:
            again = order.is_in(local.implode()) if len(order) else pl.Series([], dtype=pl.Boolean)
            if again.any():
                raise not_contiguous(order.filter(again)[0])
            glob = np.arange(len(order), len(order) + len(local), dtype=np.int64)
            order = pl.concat([order, local.rename("clip_id")], rechunk=False)
        else:
            joined = pl.DataFrame({"clip_id": local}).join(corpus, on="clip_id", how="left", maintain_order="left")
            unknown = joined["g"].is_null()
            if unknown.any():
                c = joined["clip_id"].filter(unknown)[0]
                row = row_base + int((frame["clip_id"] == c).arg_true()[0])
                raise UserError(f"events row {row}: clip_id {c!r} is not in the given clip list")
            glob = joined["g"].cast(pl.Int64).to_numpy()
            if seen[glob].any():
                raise not_contiguous(local_clips[int(np.argmax(seen[glob]))])
            seen[glob] = True
        given = rate if rate is not None else None
        if given is None and "onset_sample" in frame.columns:
            r = _rate_from_frame(frame, None)
            if batch_rate is not None and r != batch_rate:
                raise UserError(f"{what}: sample rate {r} near row {row_base} differs from {batch_rate} before it")
            batch_rate = given = r
        try:
            encoded = prepare_events(frame, given, local_clips)
        except UserError as err:
            raise UserError(f"{what}, batch from row {row_base}: {err}") from None
        csr = relevance_csr(encoded, list(logic), query_ids=ids, threads=threads)
        counts = csr.counts()
        q_parts.append(np.repeat(np.arange(len(ids), dtype=np.uint32), counts))
        c_parts.append(glob[csr.clip_indices.astype(np.int64)].astype(np.uint32))
        n_batches += 1
        n_events += frame.height
        max_held = max(max_held, frame.height)
        row_base += frame.height

    carry: list[pa.RecordBatch] = []
    held = 0

    def pieces():
        # record batches cut so that the rows held never pass batch_events (plus one clip's tail)
        # no read-ahead: Arrow would otherwise decode several files ahead, and memory would grow
        # with the file size rather than with the batch
        scanner = dataset.scanner(columns=columns, batch_size=min(batch_events, 1 << 20), batch_readahead=0, fragment_readahead=0, use_threads=False)
        for batch in scanner.to_batches():
            start = 0
            while start < batch.num_rows:
                take = max(1, min(batch.num_rows - start, batch_events - held))
                yield batch.slice(start, take)
                start += take

    for piece in pieces():
        carry.append(piece)
        held += piece.num_rows
        if held < batch_events:
            continue
        frame = pl.from_arrow(pa.Table.from_batches(carry))
        last = frame["clip_id"][-1]
        # the trailing run of the last clip waits for the next batch: it may continue there
        same = (frame["clip_id"] == last).to_numpy()
        cut = len(same) - int(np.argmin(same[::-1])) if not same.all() else 0
        if cut == 0:  # one clip fills the whole batch: keep reading
            continue
        run(frame.slice(0, cut))
        tail = frame.slice(cut)
        carry = tail.to_arrow().to_batches() if tail.height else []
        held = tail.height
    if held:
        run(pl.from_arrow(pa.Table.from_batches(carry)))

    if corpus is not None:
        # clips without events: relevant to the queries an empty clip satisfies (not-only queries)
        empty = ~seen
        if empty.any():
            none = relevance_csr(
                EventArrays(np.zeros(0, np.uint32), np.zeros(0, np.uint32), np.zeros(0, np.int64), np.zeros(0, np.int64), 1.0, ["_"], []),
                list(logic), query_ids=ids, threads=1,
            )
            hit = np.flatnonzero(none.counts() > 0)
            missing = np.flatnonzero(empty)
            q_parts.append(np.repeat(hit.astype(np.uint32), len(missing)))
            c_parts.append(np.tile(missing.astype(np.uint32), len(hit)))
    q = np.concatenate(q_parts) if q_parts else np.zeros(0, np.uint32)
    c = np.concatenate(c_parts) if c_parts else np.zeros(0, np.uint32)
    sort = np.lexsort((c, q))
    indptr = np.concatenate([[0], np.cumsum(np.bincount(q, minlength=len(ids)))]).astype(np.uint64)
    clip_list = corpus["clip_id"].to_list() if corpus is not None else order.to_list()
    csr = RelevanceCSR(indptr=indptr, clip_indices=c[sort].astype(np.uint32), query_ids=ids, clip_ids=clip_list)
    return csr, StreamStats(n_batches, n_events, max_held, int((~seen).sum()) if seen is not None else 0)
