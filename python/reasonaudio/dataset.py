"""Read and write a benchmark directory (contract §4).

A benchmark directory holds `manifest.json`, the metadata tables as parquet, `audio/` and `beir/`.
`load_benchmark` checks that the files and columns the contract names are there and reports what is
missing by file and column; deeper checks of the guarantees live in `reasonaudio.validate`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from reasonaudio.errors import UserError

FORMAT_VERSION = "2"

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


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a JSONL file; bad JSON or a line that is
    not an object is a UserError naming the file and line."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: file not found")
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise UserError(f"{path}, line {lineno}: not valid JSON ({err.msg})") from None
            if not isinstance(row, dict):
                raise UserError(f"{path}, line {lineno}: expected a JSON object")
            yield lineno, row


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


BEIR_PATH_KEYS = ("path", "audio", "audio_path", "file")


def load_beir(path: str | Path, *, split: str = "test") -> Benchmark:
    """Load a local BEIR/MTEB-style retrieval folder whose corpus rows name audio files.

    Expects `corpus.jsonl` or `corpus.parquet` (rows `_id` + one of `path`/`audio`/`audio_path`/
    `file`: a file name, absolute or relative to the folder — or to its parent, as in a benchmark's
    own `beir/` export — or a Hugging Face Audio value), `queries.jsonl`/`.parquet` (`_id`, `text`,
    optional `task`) and `qrels/<split>.tsv` (`query-id  corpus-id  score`, header optional; or
    `.parquet`/`.jsonl` with those columns). Queries without a `task` go to one task "all".
    There are no events or two-option pairs in this layout, so those tables are empty.
    """
    root = Path(path)
    if not root.is_dir():
        raise UserError(f"{root}: not a directory")

    def read_rows(stem: str) -> tuple[Path, list[dict]]:
        """`stem.jsonl` or `stem.parquet` (as a Hugging Face export writes it), rows with an `_id`."""
        jsonl, parquet = root / f"{stem}.jsonl", root / f"{stem}.parquet"
        if parquet.is_file() and not jsonl.is_file():
            try:
                rows = pl.read_parquet(parquet).to_dicts()
            except Exception as err:  # polars raises several error types for corrupt files
                raise UserError(f"{parquet}: not a readable parquet file ({err})") from None
            for number, row in enumerate(rows, start=1):
                if "_id" not in row:
                    raise UserError(f"{parquet}: row {number}: expected an '_id' column")
            return parquet, rows
        if not jsonl.is_file():
            raise UserError(
                f"{jsonl}: file not found (BEIR layout needs corpus, queries (.jsonl or .parquet) and qrels/{split}.tsv)"
            )
        rows = []
        for lineno, row in iter_jsonl(jsonl):
            if "_id" not in row:
                raise UserError(f"{jsonl}, line {lineno}: expected an object with an '_id' field")
            rows.append(row)
        return jsonl, rows

    def audio_path(value, clip_id: str, where: str) -> str:
        """A file name, or a Hugging Face Audio value ({"bytes", "path"}): bytes are written once
        under `.reasonaudio-audio/` in the folder so every adapter reads a plain file."""
        if isinstance(value, str):
            return value
        if isinstance(value, dict) and value.get("bytes"):
            suffix = Path(str(value.get("path") or "")).suffix or ".wav"
            target = root / ".reasonaudio-audio" / f"{clip_id}{suffix}"
            if not target.is_file():
                target.parent.mkdir(exist_ok=True)
                tmp = target.with_name(target.name + ".tmp")
                tmp.write_bytes(value["bytes"])
                tmp.replace(target)
            return str(target)
        if isinstance(value, dict) and value.get("path"):
            return str(value["path"])
        raise UserError(f"{where}: audio must be a file name or an {{bytes, path}} object, got {type(value).__name__}")

    corpus_file, corpus_rows = read_rows("corpus")
    clip_ids, paths = [], []
    for lineno, row in enumerate(corpus_rows, start=1):
        key = next((k for k in BEIR_PATH_KEYS if row.get(k)), None)
        if key is None:
            raise UserError(
                f"{corpus_file}: row {lineno} ({row['_id']!r}) names no audio file; expected one of {', '.join(BEIR_PATH_KEYS)}"
            )
        clip_ids.append(str(row["_id"]))
        paths.append(audio_path(row[key], str(row["_id"]), f"{corpus_file}: row {lineno}"))
    # Relative audio paths are read against the folder; a benchmark's own `beir/` export names
    # them relative to the benchmark root (its parent), so fall back to that when it resolves.
    relative = [p for p in paths if not Path(p).is_absolute()]
    if relative and not (root / relative[0]).exists() and (root.parent / relative[0]).exists():
        paths = [p if Path(p).is_absolute() else str(Path("..") / p) for p in paths]
    queries_file, query_rows = read_rows("queries")
    for lineno, row in enumerate(query_rows, start=1):
        if not isinstance(row.get("text"), str):
            raise UserError(f"{queries_file}: row {lineno} ({row['_id']!r}) has no 'text' string")
    qrel_rows = _read_beir_qrels(root / "qrels", split)

    def empty(name: str) -> pl.DataFrame:
        return pl.DataFrame({c: [] for c in TABLE_COLUMNS[name]})

    clips = pl.DataFrame(
        {"clip_id": clip_ids, "path": paths, "pattern": [None] * len(paths), "duration_s": [None] * len(paths),
         "n_events": [None] * len(paths)},
        schema_overrides={"pattern": pl.Utf8, "duration_s": pl.Float64, "n_events": pl.Int64},
    )
    queries = pl.DataFrame(
        {
            "query_id": [str(r["_id"]) for r in query_rows],
            "task": [str(r.get("task") or "all") for r in query_rows],
            "text": [r["text"] for r in query_rows],
            "logic": [json.dumps(r["logic"]) if "logic" in r else None for r in query_rows],
        },
        schema_overrides={"logic": pl.Utf8},
    )
    qrels = pl.DataFrame(
        {"query_id": [r[0] for r in qrel_rows], "clip_id": [r[1] for r in qrel_rows], "relevance": [r[2] for r in qrel_rows]},
        schema={"query_id": pl.Utf8, "clip_id": pl.Utf8, "relevance": pl.Int64},
    )
    mc = pl.DataFrame(schema={c: pl.Utf8 for c in TABLE_COLUMNS["mc"]})
    manifest = {
        "format_version": "beir",
        "tool_version": None,
        "seed": None,
        "sample_rate": None,
        "params": {"source": "beir", "split": split},
        "counts": {"clips": clips.height, "queries": queries.height, "qrels": qrels.height},
        "hashes": {},
    }
    return Benchmark(root=root, manifest=manifest, atoms=empty("atoms"), clips=clips, events=empty("events"),
                     queries=queries, qrels=qrels, mc=mc)


def _read_beir_qrels(folder: Path, split: str) -> list[tuple[str, str, int]]:
    """Positive qrels from `qrels/<split>.tsv`, or `.parquet` / `.jsonl` with query-id, corpus-id, score."""
    tsv = folder / f"{split}.tsv"
    rows: list[tuple[str, str, int]] = []
    if tsv.is_file():
        for lineno, line in enumerate(tsv.read_text().splitlines(), start=1):
            fields = line.rstrip("\n").split("\t")
            if not line.strip() or (lineno == 1 and fields[0].lower() in ("query-id", "query_id", "qid")):
                continue
            if len(fields) < 3:
                raise UserError(f"{tsv}: line {lineno}: expected 'query-id<TAB>corpus-id<TAB>score'")
            try:
                score = int(float(fields[2]))
            except ValueError:
                raise UserError(f"{tsv}: line {lineno}: score {fields[2]!r} is not a number") from None
            if score > 0:
                rows.append((fields[0], fields[1], score))
        return rows
    for other in (folder / f"{split}.parquet", folder / f"{split}.jsonl"):
        if not other.is_file():
            continue
        try:
            frame = pl.read_parquet(other) if other.suffix == ".parquet" else pl.read_ndjson(other)
        except Exception as err:
            raise UserError(f"{other}: cannot read ({err})") from None
        frame = frame.rename({c: c.replace("_", "-") for c in frame.columns})
        missing = [c for c in ("query-id", "corpus-id", "score") if c not in frame.columns]
        if missing:
            raise UserError(f"{other}: missing column(s) {', '.join(missing)}")
        for qid, cid, score in frame.select("query-id", "corpus-id", "score").iter_rows():
            if score is not None and float(score) > 0:
                rows.append((str(qid), str(cid), int(float(score))))
        return rows
    raise UserError(f"{tsv}: file not found (nor {split}.parquet / {split}.jsonl beside it)")
