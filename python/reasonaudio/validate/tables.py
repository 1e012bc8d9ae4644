"""Reading a benchmark directory for the validator: every table that can be read, with its problems recorded."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from reasonaudio.contract import (
    BEIR_FILES,
)
from reasonaudio.contract import TABLE_SCHEMAS
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


def _read_tables(root: Path, rec: _Recorder) -> Tables:
    fatal: list[str] = []
    manifest: dict | None = None
    frames: dict[str, pl.DataFrame | None] = {}
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
        path = root / f"{name}.parquet"
        frames[name] = None
        if not path.is_file():
            msg = f"{path}: file not found"
            rec.violation("layout.files", msg)
            fatal.append(msg)
            continue
        try:
            frame = pl.read_parquet(path)
        except Exception as err:  # polars raises several error types for corrupt files
            msg = f"{path}: not a readable parquet file ({type(err).__name__}: {str(err)[:200]})"
            rec.violation("layout.files", msg)
            fatal.append(msg)
            continue
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
        for problem in problems:
            msg = f"{name}.parquet: {problem}"
            rec.violation("layout.columns", msg)
            fatal.append(msg)
        if problems:
            continue
        # ids are compared as strings everywhere (atom ids may be integers); categoricals become strings
        casts = [pl.col(c).cast(pl.String) for c, k in columns.items() if k in ("str", "id")]
        frames[name] = frame.with_columns(casts)

    for rel in BEIR_FILES:
        if not (root / rel).is_file():
            msg = f"{root / rel}: file not found"
            rec.violation("layout.files", msg)
            fatal.append(msg)
    if not (root / "audio").is_dir():
        msg = f"{root / 'audio'}: directory not found"
        rec.violation("layout.files", msg)
        fatal.append(msg)

    tables = Tables(root, manifest, frames, fatal)
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
