"""Read and write a benchmark directory (contract §4).

A benchmark directory holds `manifest.json`, the metadata tables as parquet, `audio/` and `beir/`.
`load_benchmark` checks that the files and columns the contract names are there and reports what is
missing by file and column; deeper checks of the guarantees live in `reasonaudio.validate`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from reasonaudio.contract import FORMAT_VERSION, MANIFEST_KEYS, TABLE_COLUMNS, TASKS  # noqa: F401  (re-exported)
from reasonaudio.errors import UserError
from reasonaudio.io.columns import PathColumn
from reasonaudio.io.jsonfile import read_json


def iter_jsonl(path: str | Path, on_bad_line=None) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a JSONL file. A line that is not valid JSON
    or not an object is a UserError naming the file and line, or, with `on_bad_line(lineno,
    reason)`, reported to it and skipped (the validator records every bad line)."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: file not found")

    def bad(lineno: int, reason: str) -> None:
        if on_bad_line is None:
            raise UserError(f"{path}, line {lineno}: {reason}")
        on_bad_line(lineno, reason)

    with path.open("rb") as fh:  # decoded line by line: a binary file is a bad line, not a traceback
        for lineno, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                bad(lineno, f"not UTF-8 text (byte {err.start}): not a JSON-lines file")
                continue
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                bad(lineno, f"not valid JSON ({err.msg})")
                continue
            if not isinstance(row, dict):
                bad(lineno, "expected a JSON object")
                continue
            yield lineno, row


def check_table(path: Path, required: tuple[str, ...]) -> None:
    """A table's checks from the file's footer alone: present, parquet, the contract's columns."""
    if not path.is_file():
        raise UserError(f"{path}: file not found")
    try:
        names = list(pl.read_parquet_schema(path))
    except Exception as err:  # polars raises several error types for corrupt files
        raise UserError(unreadable(path, err)) from None
    missing = [c for c in required if c not in names]
    if missing:
        raise UserError(f"{path}: missing column(s) {', '.join(missing)}; found {', '.join(names)}")


def read_table(path: Path, required: tuple[str, ...]) -> pl.DataFrame:
    """Read one parquet table and insist on the columns the contract names for it."""
    check_table(path, required)
    try:
        return pl.read_parquet(path)
    except Exception as err:  # a readable footer over a damaged body
        raise UserError(unreadable(path, err)) from None


def unreadable(path: Path, err: Exception) -> str:
    return f"{path}: not a readable parquet file ({err.__class__.__name__}: {err})"


@dataclass(frozen=True)
class _Deferred:
    """A table whose file and columns are checked when the benchmark is loaded, read when first used."""

    path: Path
    required: tuple[str, ...]

    def read(self) -> pl.DataFrame:
        return read_table(self.path, self.required)


def acoustic_condition(manifest: dict) -> dict | None:
    """What makes a benchmark's audio harder to hear than the clean render: its bed, the bed's SNR
    range and its room, from the manifest's scene object (None for a benchmark without one)."""
    scene = manifest.get("scene")
    if not isinstance(scene, dict):
        return None
    return {key: scene.get(key) for key in ("background", "snr_db", "room")}


def read_manifest(root: Path) -> dict:
    path = root / "manifest.json"
    if not path.is_file():
        raise UserError(f"{path}: file not found (is {root} a benchmark directory?)")
    manifest = read_json(path)
    if not isinstance(manifest, dict):
        raise UserError(f"{path}: expected a JSON object, got {type(manifest).__name__}")
    missing = [k for k in MANIFEST_KEYS if k not in manifest]
    if missing:
        raise UserError(f"{path}: missing key(s) {', '.join(missing)}")
    for key in ("params", "counts", "hashes"):  # readers index into these: a string there would be a traceback
        if key in manifest and not isinstance(manifest[key], dict):
            raise UserError(f"{path}: {key} should be a JSON object, got {json.dumps(manifest[key])[:60]}")
    return manifest


@dataclass
class Benchmark:
    """A benchmark directory loaded into polars tables."""

    root: Path
    manifest: dict
    atoms: pl.DataFrame
    clips: pl.DataFrame
    events: pl.DataFrame
    queries: pl.DataFrame
    qrels: pl.DataFrame
    mc: pl.DataFrame
    # Clip audio that is not a file under `root` (audio embedded in a Hub dataset's parquet), in
    # clips-table order: references that adapters decode lazily (`reasonaudio.io.hub.EmbeddedAudio`).
    audio_refs: list[Any] | None = None

    @property
    def sample_rate(self) -> int:
        return int(self.manifest["sample_rate"])

    def audio_path(self, clip_id: str) -> Path:
        rows = self.clips.filter(pl.col("clip_id") == clip_id)
        if rows.height == 0:
            raise UserError(f"{self.root}: unknown clip_id {clip_id!r}")
        if self.audio_refs is not None:
            return self.audio_refs[self.clips["clip_id"].to_list().index(clip_id)]
        return self.root / rows["path"][0]

    def clip_paths(self) -> Sequence[Path]:
        """`audio_paths()` as a read-only sequence that makes each path when it is used (a million
        `Path` objects take about 300 MB)."""
        if self.audio_refs is not None:
            return self.audio_refs
        return PathColumn(self.root, self.clips["path"])

    def audio_paths(self) -> list[Path]:
        """One entry per clip: a path, or (Hub data with embedded audio) a reference that
        `reasonaudio.retrieval.adapters.audio.load_mono` decodes when an adapter's batch needs it."""
        if self.audio_refs is not None:
            return list(self.audio_refs)
        return [self.root / p for p in self.clips["path"].to_list()]


def _deferred_table(name: str) -> property:
    key = f"_{name}"

    def get(self: Benchmark) -> pl.DataFrame:
        value = self.__dict__[key]
        if isinstance(value, _Deferred):
            value = self.__dict__[key] = value.read()
        return value

    def set_(self: Benchmark, value: pl.DataFrame | _Deferred) -> None:
        self.__dict__[key] = value

    return property(get, set_, doc=f"{name}.parquet (read when first used)")


# The events table is a benchmark's largest (5M rows at a million clips: ~400 MB) and ranking never
# reads it; the qrels (8M pairs: ~200 MB as strings) are read by ranking only as codes of the ids
# (`deferred_path`), and embedding never. So `load_benchmark` leaves both on disk until first used.
Benchmark.events = _deferred_table("events")  # type: ignore[assignment]
Benchmark.qrels = _deferred_table("qrels")  # type: ignore[assignment]


def deferred_path(benchmark: Benchmark, name: str) -> Path | None:
    """The file of a table that `load_benchmark` has checked but not yet read (None once it is read
    or when the table was given in memory): for readers that scan only what they need of it."""
    value = benchmark.__dict__.get(f"_{name}")
    return value.path if isinstance(value, _Deferred) else None


def load_benchmark(path: str | Path, *, metadata_only: bool = False) -> Benchmark:
    """Load a benchmark directory; `metadata_only` skips the query-side tables (for corpora without queries)."""
    root = Path(path)
    if not root.is_dir():
        raise UserError(f"{root}: not a directory")
    manifest = read_manifest(root)
    tables = {}
    for name, columns in TABLE_COLUMNS.items():
        if metadata_only and name in ("queries", "qrels", "mc") and not (root / f"{name}.parquet").exists():
            tables[name] = pl.DataFrame({c: [] for c in columns})
            continue
        if name in ("events", "qrels"):
            check_table(root / f"{name}.parquet", columns)
            tables[name] = _Deferred(root / f"{name}.parquet", columns)
            continue
        tables[name] = read_table(root / f"{name}.parquet", columns)
    return Benchmark(root=root, manifest=manifest, **tables)
