"""Read and write a benchmark directory (contract §4).

A benchmark directory holds `manifest.json`, the metadata tables as parquet, `audio/` and `beir/`.
`load_benchmark` checks that the files and columns the contract names are there and reports what is
missing by file and column; deeper checks of the guarantees live in `reasonaudio.validate`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from reasonaudio.errors import UserError

FORMAT_VERSION = "1"

TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "atoms": ("atom_id", "label", "phrase", "duration_s", "source", "license"),
    "clips": ("clip_id", "path", "pattern", "duration_s", "n_events"),
    "events": (
        "clip_id",
        "event_index",
        "atom_id",
        "label",
        "onset_sample",
        "offset_sample",
        "onset_s",
        "offset_s",
        "gain_db",
    ),
    "queries": ("query_id", "task", "text", "logic"),
    "qrels": ("query_id", "clip_id", "relevance"),
    "mc": ("query_id", "positive_clip_id", "negative_clip_id"),
}

MANIFEST_KEYS = ("format_version", "tool_version", "seed", "sample_rate", "params", "counts", "hashes")

TASKS = ("negation", "order", "overlap", "duration", "mix")


def read_table(path: Path, required: tuple[str, ...]) -> pl.DataFrame:
    """Read one parquet table and insist on the columns the contract names for it."""
    if not path.is_file():
        raise UserError(f"{path}: file not found")
    try:
        frame = pl.read_parquet(path)
    except Exception as err:  # polars raises several error types for corrupt files
        raise UserError(f"{path}: not a readable parquet file ({err.__class__.__name__}: {err})") from None
    missing = [c for c in required if c not in frame.columns]
    if missing:
        raise UserError(f"{path}: missing column(s) {', '.join(missing)}; found {', '.join(frame.columns)}")
    return frame


def read_manifest(root: Path) -> dict:
    path = root / "manifest.json"
    if not path.is_file():
        raise UserError(f"{path}: file not found (is {root} a benchmark directory?)")
    try:
        manifest = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise UserError(f"{path}: invalid JSON at line {err.lineno}: {err.msg}") from None
    missing = [k for k in MANIFEST_KEYS if k not in manifest]
    if missing:
        raise UserError(f"{path}: missing key(s) {', '.join(missing)}")
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

    @property
    def sample_rate(self) -> int:
        return int(self.manifest["sample_rate"])

    def audio_path(self, clip_id: str) -> Path:
        rows = self.clips.filter(pl.col("clip_id") == clip_id)
        if rows.height == 0:
            raise UserError(f"{self.root}: unknown clip_id {clip_id!r}")
        return self.root / rows["path"][0]

    def audio_paths(self) -> list[Path]:
        return [self.root / p for p in self.clips["path"].to_list()]


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
        tables[name] = read_table(root / f"{name}.parquet", columns)
    return Benchmark(root=root, manifest=manifest, **tables)
