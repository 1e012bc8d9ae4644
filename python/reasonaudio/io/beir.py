"""Load a BEIR/MTEB-style retrieval folder whose corpus rows name audio files (`load_beir`).

`corpus.jsonl|parquet`, `queries.jsonl|parquet`, `qrels/<split>.tsv`; the Hub's own dataset-folder
layout is `reasonaudio.io.hub`'s.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import polars as pl

from reasonaudio.errors import UserError
from reasonaudio.io.benchmark import TABLE_COLUMNS, Benchmark, iter_jsonl
from reasonaudio.io.hub import BEIR_PATH_KEYS

log = logging.getLogger(__name__)


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
                from reasonaudio.io.outputs import write_atomic

                write_atomic(target, value["bytes"])  # a cache beside the input: whole or absent
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
    _refuse_duplicate_ids(corpus_file, clip_ids)
    queries_file, query_rows = read_rows("queries")
    for lineno, row in enumerate(query_rows, start=1):
        if not isinstance(row.get("text"), str):
            raise UserError(f"{queries_file}: row {lineno} ({row['_id']!r}) has no 'text' string")
    _refuse_duplicate_ids(queries_file, [str(r["_id"]) for r in query_rows])
    qrel_rows = _read_beir_qrels(root / "qrels", split)
    judged = {r[0] for r in qrel_rows}
    unjudged = [str(r["_id"]) for r in query_rows if str(r["_id"]) not in judged]
    if unjudged:
        log.warning(
            f"reasonaudio: note: {queries_file}: {len(unjudged)} of {len(query_rows)} queries have no relevant clip in "
            f"qrels/{split} (first {unjudged[0]!r}); they score 0 on every metric"
        )

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


def _refuse_duplicate_ids(file: Path, ids: list[str]) -> None:
    seen: dict[str, int] = {}
    for row, key in enumerate(ids, start=1):
        if key in seen:
            raise UserError(f"{file}: row {row}: _id {key!r} repeats row {seen[key]}; ids must be unique")
        seen[key] = row


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
