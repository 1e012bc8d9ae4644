"""Reading a benchmark directory for the validator: every table that can be read, with its problems recorded."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from reasonaudio.contract import (
    BEIR_FILES,
)
from reasonaudio.contract import SCENE_TABLE_SCHEMAS, TABLE_SCHEMAS
from reasonaudio.errors import UserError
from reasonaudio.validate.checklist import _Recorder

# ------------------------------------------------------------------------------------------- loading


@dataclass
class Tables:
    """What could be read of a benchmark directory; a table is None when unusable."""

    root: Path
    manifest: dict | None
    frames: dict[str, pl.DataFrame | None]
    fatal: list[str]
    scans: dict[str, pl.LazyFrame] = field(default_factory=dict)  # tables whose frame lacks columns a streamed pass reads

    @property
    def sample_rate(self) -> int | None:
        if self.manifest is None:
            return None
        sr = self.manifest.get("sample_rate")
        return sr if isinstance(sr, int) and not isinstance(sr, bool) and sr > 0 else None

    def __getitem__(self, name: str) -> pl.DataFrame:
        frame = self.frames.get(name)
        if frame is None:
            raise KeyError(name)
        return frame

    def lazy(self, name: str) -> pl.LazyFrame:
        """The table a batch of rows at a time, with every column: the file scanned again where the
        frame held lacks columns (`_STREAMED_ONLY`), else the frame."""
        scan = self.scans.get(name)
        return scan if scan is not None else self[name].lazy()

    def has(self, *names: str) -> bool:
        return all(self.frames.get(n) is not None for n in names)


def _kind_ok(dtype: pl.DataType, kind: str) -> bool:
    is_str = dtype in (pl.String, pl.Categorical) or isinstance(dtype, (pl.Categorical, pl.Enum))
    if kind == "str":
        return is_str
    if kind == "int":
        return dtype.is_integer()
    if kind == "num":
        return dtype.is_numeric()
    if kind == "id":
        return is_str or dtype.is_integer()
    raise ValueError(kind)


#: Columns read as categoricals by `_read_tables(coded=True)`: the ids and labels repeated over millions
#: of event and qrels rows.
CODED_COLUMNS = frozenset({"clip_id", "positive_clip_id", "negative_clip_id", "query_id", "atom_id", "label", "mode"})

#: Of the large tables, the columns a check reads beside the required ones (counts, §5 scenes): a
#: coded read keeps only these and the required ones (of the small tables, every column).
_USED_COLUMNS: dict[str, frozenset[str]] = {
    "events": frozenset({"mode", *SCENE_TABLE_SCHEMAS["events"]}),
    "clips": frozenset({"background_start_sample", *SCENE_TABLE_SCHEMAS["clips"]}),
    "qrels": frozenset(),
}
#: Required columns that no check reads once their type and nulls are checked: a coded read drops them then.
_CHECKED_ONLY: dict[str, tuple[str, ...]] = {"events": ("gain_db",)}
#: Columns only a streamed pass reads (`Tables.lazy`: the events' times in seconds, by the time
#: rules): a coded read drops them from the frame it holds once checked, and the pass scans the file.
_STREAMED_ONLY: dict[str, tuple[str, ...]] = {"events": ("onset_s", "offset_s")}


def _is_coded(dtype: pl.DataType) -> bool:
    return isinstance(dtype, pl.Categorical)


def _column_problems(frame: pl.DataFrame, columns: dict[str, str]) -> list[str]:
    """What is wrong with `frame`'s required `columns` (missing, wrong kind, nulls), in their order."""
    problems = []
    for column, kind in columns.items():
        if column not in frame.columns:
            problems.append(f"missing column {column!r} (found {', '.join(frame.columns)})")
        elif not _kind_ok(frame.schema[column], kind):
            problems.append(f"column {column!r} has type {frame.schema[column]}, expected {kind}")
        else:
            nulls = frame[column].null_count()
            if nulls:
                rows = frame.with_row_index("_row").filter(pl.col(column).is_null())["_row"].head(3).to_list()
                problems.append(f"column {column!r} has {nulls} null(s) (rows {', '.join(map(str, rows))})")
    return problems


def _coded_scan(path: Path, name: str) -> pl.LazyFrame | None:
    """`path` scanned as `_read_tables(coded=True)` reads it: the columns some check needs, ids and
    labels as categoricals. None when its schema lacks a required column or has a wrong type, or
    the file cannot be read: the plain read then names the problem as it always did."""
    columns = TABLE_SCHEMAS[name]
    try:
        schema = pl.read_parquet_schema(path)
    except Exception:  # polars raises several error types for corrupt files; the plain read names them
        return None
    if any(c not in schema or not _kind_ok(schema[c], k) for c, k in columns.items()):
        return None
    used = _USED_COLUMNS.get(name)
    kept = [c for c in schema if used is None or c in columns or c in used]
    # an id stored as integers is compared as its decimal string, as the plain read does
    coded = [
        pl.col(c).cast(pl.String).cast(pl.Categorical)
        for c in kept
        if c in CODED_COLUMNS and (columns.get(c) in ("str", "id") or schema[c] in (pl.String, pl.Categorical))
    ]
    return pl.scan_parquet(path).select(kept).with_columns(coded)


def _collect_coded(scan: pl.LazyFrame | None) -> pl.DataFrame | None:
    """A `_coded_scan` read, converted a batch of rows at a time by the streaming engine (the
    strings of a whole column never exist at once); None where the scan is None or the rows cannot
    be read."""
    try:
        return None if scan is None else scan.collect(engine="streaming")
    except Exception:  # polars raises several error types for corrupt files; the plain read names them
        return None


def _read_tables(root: Path, rec: _Recorder, *, coded: bool = False) -> Tables:
    """Every table of `root` that can be read, its problems recorded in `rec`.

    `coded`: the id and label columns (`CODED_COLUMNS`) are read as categoricals, which hold each
    distinct string once and a 4-byte code a row, and only the columns some check reads are kept
    (`_USED_COLUMNS`); what the validator reads at a million clips. The frames then compare, join,
    sort and print as the strings would, but join only with categoricals (cast a frame of strings
    first)."""
    fatal: list[str] = []
    manifest: dict | None = None
    frames: dict[str, pl.DataFrame | None] = {}
    scans: dict[str, pl.LazyFrame] = {}
    rec.get("layout.files")
    rec.get("layout.columns")

    manifest_path = root / "manifest.json"
    if not manifest_path.is_file():
        msg = f"{manifest_path}: file not found"
        rec.violation("layout.files", msg)
        fatal.append(msg)
    else:
        try:
            manifest = json.loads(manifest_path.read_text())
            if not isinstance(manifest, dict):
                raise ValueError("top level is not a JSON object")
        except (ValueError, UnicodeDecodeError) as err:
            msg = f"{manifest_path}: not readable JSON ({err})"
            rec.violation("layout.files", msg)
            fatal.append(msg)
            manifest = None

    for name, columns in TABLE_SCHEMAS.items():
        frames[name] = None
        path = root / f"{name}.parquet"
        if not path.is_file():
            msg = f"{path}: file not found"
            rec.violation("layout.files", msg)
            fatal.append(msg)
            continue
        scan = _coded_scan(path, name) if coded else None
        frame = _collect_coded(scan)
        if frame is None:
            try:
                frame = pl.read_parquet(path)
            except Exception as err:  # polars raises several error types for corrupt files
                msg = f"{path}: not a readable parquet file ({type(err).__name__}: {str(err)[:200]})"
                rec.violation("layout.files", msg)
                fatal.append(msg)
                continue
        problems = _column_problems(frame, columns)
        for problem in problems:
            msg = f"{name}.parquet: {problem}"
            rec.violation("layout.columns", msg)
            fatal.append(msg)
        if problems:
            continue
        # ids are compared as strings everywhere (atom ids may be integers); categoricals become strings,
        # but for the coded columns of a coded read, which are categoricals of those strings (also
        # where the plain read stood in: the tables join with one another)
        casts = []
        for c, k in columns.items():
            if k not in ("str", "id"):
                continue
            if not (coded and c in CODED_COLUMNS):
                casts.append(pl.col(c).cast(pl.String))
            elif not _is_coded(frame.schema[c]):
                casts.append(pl.col(c).cast(pl.String).cast(pl.Categorical))
        frames[name] = frame.with_columns(casts) if casts else frame
        if coded:
            frames[name] = frames[name].drop(_CHECKED_ONLY.get(name, ()))
            if scan is not None and name in _STREAMED_ONLY:
                frames[name] = frames[name].drop(_STREAMED_ONLY[name])
                scans[name] = scan

    for rel in BEIR_FILES:
        if not (root / rel).is_file():
            msg = f"{root / rel}: file not found"
            rec.violation("layout.files", msg)
            fatal.append(msg)
    if not (root / "audio").is_dir():
        msg = f"{root / 'audio'}: directory not found"
        rec.violation("layout.files", msg)
        fatal.append(msg)

    tables = Tables(root, manifest, frames, fatal, scans)
    if manifest is not None and tables.sample_rate is None:
        msg = f"{manifest_path}: sample_rate must be a positive integer, got {manifest.get('sample_rate')!r}"
        rec.violation("layout.manifest", msg)
        fatal.append(msg)
    return tables


def open_benchmark(path: str | Path) -> Tables:
    """Read a benchmark directory for inspection; an unusable manifest or metadata table is a UserError."""
    root = Path(path)
    if not root.is_dir():
        raise UserError(f"{root}: not a directory")
    tables = _read_tables(root, _Recorder(max_examples=3))
    # beir/ and audio/ are not needed to read the metadata; the tables and the sample rate are
    if not tables.has(*TABLE_SCHEMAS) or tables.sample_rate is None:
        raise UserError("; ".join(tables.fatal[:3]) + (f" (+{len(tables.fatal) - 3} more)" if len(tables.fatal) > 3 else ""))
    return tables
