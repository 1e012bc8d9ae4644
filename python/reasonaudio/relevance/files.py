"""Reading events (benchmark tables, DESED / AudioSet-Strong TSV) and queries, writing qrels."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path
from typing import Any, Iterator, Sequence

import polars as pl

from reasonaudio.io.benchmark import iter_jsonl
from reasonaudio.errors import UserError
from reasonaudio.io.outputs import header_kind, output_file, parquet_kind
from reasonaudio.io.parquet import row_group_rows
from reasonaudio.relevance.engine import _STRONG_LAYOUTS, RelevanceCSR, _require_columns

#: an earlier qrels output, recognised by its exact columns (.parquet, left unmarked so that its
#: bytes stay those of a benchmark's qrels.parquet) or BEIR's header row (.tsv)
QRELS_PARQUET = parquet_kind("qrels table", columns=("query_id", "clip_id", "relevance"))
QRELS_TSV = header_kind("qrels table", "query-id\tcorpus-id\tscore")


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


def _read_parquet(path: Path, columns: Sequence[str] | None = None) -> pl.DataFrame:
    try:
        return pl.read_parquet(path, columns=None if columns is None else list(columns))
    except Exception as err:  # polars raises several types for a corrupt file
        raise UserError(f"{path}: cannot read parquet ({err})") from None


#: the columns of events.parquet that relevance reads (clip, label and times; the rate)
ENGINE_COLUMNS = ("clip_id", "label", "onset_sample", "offset_sample", "onset_s", "offset_s", "sample_rate")


def _engine_columns(path: Path) -> list[str] | None:
    """The engine's columns of a parquet events file, or None (read it whole) when they are not
    all there: a message about a missing column lists every column the file has."""
    try:
        names = pl.read_parquet_schema(path)
    except Exception:  # the whole read names the fault
        return None
    timed = {"onset_sample", "offset_sample"} <= set(names) or {"onset_s", "offset_s"} <= set(names)
    if not ({"clip_id", "label"} <= set(names) and timed):
        return None
    return [c for c in names if c in ENGINE_COLUMNS]


def read_events(path: str | os.PathLike[str], *, engine_columns: bool = False) -> pl.DataFrame:
    """Reads events: the contract's events.parquet (a benchmark directory works too; its
    manifest's sample_rate is added as a column), or a strong-label table (.tsv/.txt tab
    separated, .csv comma separated, header row) in DESED layout (filename, onset, offset,
    event_label) or AudioSet-Strong layout (segment_id, start_time_seconds, end_time_seconds,
    label), times in seconds. Strong-label tables come back as clip_id, label, onset_s, offset_s.
    With `engine_columns`, a parquet file gives only the columns relevance reads (ENGINE_COLUMNS),
    so that a large table's other columns are never held.
    """
    path = _input_file(path, "events.parquet")
    if path.suffix == ".parquet":
        frame = _read_parquet(path, _engine_columns(path) if engine_columns else None)
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
    DESED writes for a file without events) adds the file to the corpus and no event. A row with
    onset = offset (a point annotation) is an event of its label lasting 0 s (contract §2)."""
    path = Path(path)
    return _read_strong_labels(path, "," if path.suffix == ".csv" else "\t")


def _read_strong_labels(path: Path, separator: str) -> tuple[pl.DataFrame, list[str]]:
    try:
        raw = pl.read_csv(path, separator=separator, infer_schema=False, quote_char=None)
    except pl.exceptions.NoDataError:
        expected = " or ".join("(" + ", ".join(lay) + ")" for lay in _STRONG_LAYOUTS)
        raise UserError(f"{path}: the file is empty; expected a header row {expected} and event rows") from None
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
            f"{path}, line {row['line']}: {offset_c} ({row[offset_c]}) is before {onset_c} ({row[onset_c]}); "
            f"expected {offset_c} >= {onset_c} (onset = offset is a point annotation, an event lasting 0 s)"
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


#: pairs per block of a .tsv written from a RelevanceCSR
QRELS_BLOCK_ROWS = 1 << 17


def write_qrels(
    qrels: pl.DataFrame | RelevanceCSR,
    path: str | os.PathLike[str],
    *,
    inputs: Sequence[str | os.PathLike[str]] = (),
    force: bool = True,
    block_rows: int = QRELS_BLOCK_ROWS,
) -> Path:
    """Writes qrels atomically: .parquet (query_id, clip_id, relevance), or .tsv in BEIR's
    layout (`query-id<TAB>corpus-id<TAB>score` with a header row). Never over one of `inputs`.

    `qrels` is a frame, or a RelevanceCSR, whose rows (those of its `to_frame()`) are made and
    written a block at a time: the same bytes, without the whole frame in memory. A .tsv block
    is `block_rows` pairs; a .parquet block is one row group of the whole-frame writer's layout
    (see `_parquet_row_groups`)."""
    path = Path(path)
    if path.suffix not in (".parquet", ".tsv"):
        raise UserError(f"{path}: output must end in .parquet or .tsv")
    if block_rows < 1:
        raise ValueError(f"block_rows must be >= 1, got {block_rows}")
    kind = QRELS_PARQUET if path.suffix == ".parquet" else QRELS_TSV
    with output_file(path, kind, inputs=inputs, force=force) as tmp:
        if isinstance(qrels, RelevanceCSR):
            if path.suffix == ".parquet":
                _write_parquet_blocks(qrels, tmp)
            else:
                _write_tsv_blocks(qrels, tmp, block_rows)
        elif path.suffix == ".parquet":
            qrels.select("query_id", "clip_id", "relevance").write_parquet(tmp)
        else:
            _tsv_frame(qrels).write_csv(tmp, separator="\t", quote_style="never")
    return path


def _tsv_frame(qrels: pl.DataFrame) -> pl.DataFrame:
    return qrels.select(
        pl.col("query_id").alias("query-id"),
        pl.col("clip_id").alias("corpus-id"),
        pl.col("relevance").alias("score"),
    )


def _write_tsv_blocks(csr: RelevanceCSR, tmp: Path, block_rows: int) -> None:
    ids = csr.id_columns()
    with open(tmp, "wb") as fh:
        for start in range(0, max(csr.n_pairs, 1), block_rows):  # one (empty) block: the header
            block = csr.pairs_frame(start, min(start + block_rows, csr.n_pairs), ids)
            _tsv_frame(block).write_csv(fh, separator="\t", quote_style="never", include_header=start == 0)


def _parquet_row_groups(n_rows: int) -> list[int]:
    """The rows of each row group `write_parquet` makes of an `n_rows`-row frame: polars splits
    the rows evenly by its own rules (whatever the columns), so they are read off a frame of
    `n_rows` nulls, which takes no memory."""
    buffer = io.BytesIO()
    pl.DataFrame({"x": pl.repeat(None, n_rows, dtype=pl.Null, eager=True)}).write_parquet(buffer)
    rows = row_group_rows(buffer.getvalue())
    if sum(rows) != n_rows:
        raise AssertionError(f"parquet layout: row groups of {sum(rows)} rows for {n_rows}")
    return rows


def _write_parquet_blocks(csr: RelevanceCSR, tmp: Path) -> None:
    """`csr.to_frame().write_parquet(tmp)`, byte for byte, holding one row group's pairs at a time.

    write_parquet is polars' streaming parquet sink fed by the whole frame; fed by a source that
    yields exactly the row groups that frame would be cut into, the sink writes each as it comes,
    so the file (pages, statistics, footer) is the same."""
    if csr.n_pairs == 0:
        csr.to_frame().write_parquet(tmp)
        return
    from polars.io.plugins import register_io_source

    sizes = _parquet_row_groups(csr.n_pairs)
    ids = csr.id_columns()
    schema = {"query_id": pl.String, "clip_id": pl.String, "relevance": pl.Int32}

    def blocks(with_columns, predicate, n_rows, batch_size) -> Iterator[pl.DataFrame]:
        start = 0
        for size in sizes:
            block = csr.pairs_frame(start, start + size, ids)
            start += size
            yield block if with_columns is None else block.select(with_columns)

    register_io_source(blocks, schema=schema).sink_parquet(tmp)


# ---------------------------------------------------------------------------------------------
# Streaming: an events table larger than memory


