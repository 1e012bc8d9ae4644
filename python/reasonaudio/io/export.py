"""Export a benchmark directory as a Hugging Face dataset folder (`reasonaudio export --to hf`).

The folder is what `datasets.load_dataset(OUT, CONFIG)` reads offline and what
`huggingface-cli upload --repo-type dataset` / `push_to_hub` publishes as is:

```
README.md                      dataset card: YAML `configs:` (+ license, tags), tasks, build parameters
reasonaudio.json               the benchmark's manifest.json (seed, parameters, hashes)
corpus/test-0000i-of-0000n.parquet   id, audio (Audio feature: the clip's WAV bytes embedded), pattern,
                                     duration_s, n_events
queries/test-00000-of-00001.parquet  id, text, task, logic
qrels/test-00000-of-00001.parquet    query-id, corpus-id, score   (also config `default`, mteb's name)
<task>-queries/, <task>-qrels/       one mteb sub-task per reasoning task; `<task>-corpus` is the
                                     shared corpus files (no second copy of the audio)
<task>-mc-top_ranked/                query-id, corpus-ids: the two-option pair (positive and hard
                                     negative, in id order), mteb's multiple-choice/reranking form;
                                     `<task>-mc-corpus|queries|qrels` point at the files above
```

Audio is embedded (bytes in the parquet rows, as `push_to_hub` itself stores an `Audio` column), so
the folder is self-contained; corpus shards are cut at `shard_bytes` of audio and written in row
groups of `row_group` clips, which keeps both the writer's and a lazy reader's memory bounded.

The export of a corpus larger than the disk: the clip files may be read from another location
(`audio_from`, a folder or any fsspec URI, e.g. where `merge --audio-elsewhere` left them), each
checked against the benchmark's `audio.sha256`, and the output may be an fsspec URI too; there
every corpus shard is uploaded as soon as it is written and deleted locally, so the local disk
holds one shard at a time, and the output is complete exactly when its kind marker exists
(`reasonaudio.io.storage`).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import polars as pl

from reasonaudio.io.benchmark import TASKS, load_benchmark
from reasonaudio.errors import UserError, require
from reasonaudio.io import storage

SPLIT = "test"
DEFAULT_SHARD_BYTES = 500 * 1024 * 1024
ROW_GROUP = 100  # clips per parquet row group (what `datasets` uses for audio columns)

TASK_DESCRIPTIONS = {
    "negation": "a sound is present and another is absent (`has A` + `not B`)",
    "order": "one sound ends before another starts (`before [A, B]`, sometimes a chain of three)",
    "overlap": "two sounds overlap in time (`overlap [A, B]`)",
    "duration": "a sound lasts at least / at most a number of seconds",
    "mix": "two or three constraints of different kinds",
}


def _hf_features(fields: dict[str, dict]) -> bytes:
    """Parquet schema metadata `datasets` reads the column features from (Audio, Sequence …)."""
    return json.dumps({"info": {"features": fields}}, sort_keys=True).encode()


def _value(dtype: str) -> dict:
    return {"dtype": dtype, "_type": "Value"}


def _write_table(path: Path, table, features: dict[str, dict], row_group: int | None = None) -> None:
    require("pyarrow", "arrow", "the Hugging Face export")
    import pyarrow.parquet as pq

    import pyarrow as pa

    path.parent.mkdir(parents=True, exist_ok=True)
    # polars hands out large_string / large_list; the features name plain string / list
    plain = {pa.large_string(): pa.string(), pa.large_list(pa.large_string()): pa.list_(pa.string())}
    table = table.cast(pa.schema([(f.name, plain.get(f.type, f.type)) for f in table.schema]))
    table = table.replace_schema_metadata({b"huggingface": _hf_features(features)})
    pq.write_table(table, path, row_group_size=row_group, compression="zstd", write_statistics=False)


def _shard_name(index: int, total: int) -> str:
    return f"{SPLIT}-{index:05d}-of-{total:05d}.parquet"


def _license(bench) -> str:
    licenses = sorted({str(x) for x in bench.atoms["license"].to_list()}) if bench.atoms.height else []
    if len(licenses) != 1:
        return "other"
    # the Hub's license ids are lower-case SPDX-like names; "CC0" alone is "cc0-1.0" there
    found = licenses[0].lower()
    return {"cc0": "cc0-1.0", "cc-by": "cc-by-4.0"}.get(found, found)


def _card(bench, name: str, license_id: str, configs: list[tuple[str, str]], tasks: list[str], counts: dict) -> str:
    """README.md: YAML header (configs, license, task tags) and a description of tasks and build."""
    from reasonaudio.errors import require

    yaml = require("yaml", "hf", "writing the dataset card (PyYAML)")

    header = {
        "license": license_id,
        "task_categories": ["text-retrieval"],
        "tags": ["audio", "retrieval", "text-to-audio-retrieval", "reasoning", "mteb", "reasonaudio"],
        "language": ["en"],
        "pretty_name": name,
        "configs": [{"config_name": c, "data_files": [{"split": SPLIT, "path": p}]} for c, p in configs],
    }
    m = bench.manifest
    params = json.dumps(m.get("params", {}), indent=2, sort_keys=True)
    task_lines = "\n".join(
        f"| `{t}` | {counts['queries_per_task'].get(t, 0)} | {TASK_DESCRIPTIONS.get(t, '')} |" for t in tasks
    )
    return (
        "---\n"
        + yaml.safe_dump(header, sort_keys=False, allow_unicode=True)
        + "---\n\n"
        + f"# {name}\n\n"
        + "A reasoning-intensive text-to-audio retrieval benchmark built by "
        + "reasonaudio from synthetic clips of known sound events. Every query is a "
        + "logical constraint over the events of a clip (presence, absence, order, overlap, duration); "
        + "a clip is relevant exactly when the constraint holds for its event annotations, and every "
        + "query has at least one hard negative: a clip with every sound the query names that still "
        + "fails it.\n\n"
        + f"- {counts['clips']} clips ({m.get('sample_rate')} Hz, embedded in `corpus/` as the `audio` column), "
        + f"{counts['queries']} queries, {counts['qrels']} relevant (query, clip) pairs, "
        + f"{counts['mc']} two-option pairs.\n"
        + f"- Built with reasonaudio {m.get('tool_version')}, seed {m.get('seed')}; the full manifest "
        + "(parameters and content hashes) is `reasonaudio.json`.\n\n"
        + "## Tasks\n\n| task | queries | what the query asks |\n|---|---:|---|\n"
        + task_lines
        + "\n\n## Configs\n\n"
        + "- `corpus` (`id`, `audio`, `pattern`, `duration_s`, `n_events`), `queries` (`id`, `text`, `task`, "
        + "`logic`), `qrels` = `default` (`query-id`, `corpus-id`, `score`): the whole benchmark, BEIR/MTEB style.\n"
        + "- `<task>-corpus|queries|qrels`: one MTEB sub-task per reasoning task (the corpus is shared).\n"
        + "- `<task>-mc-corpus|queries|qrels|top_ranked`: the two-option test as MTEB reranking: each query's "
        + "candidates are its positive and its hard negative (chance 50%).\n\n"
        + "```python\nfrom datasets import load_dataset\n"
        + "corpus = load_dataset(PATH_OR_REPO, \"corpus\", split=\"test\")\n"
        + "queries = load_dataset(PATH_OR_REPO, \"queries\", split=\"test\")\n```\n\n"
        + "Evaluate with `reasonaudio eval PATH --model SPEC --out RUN`, or with mteb through "
        + "`reasonaudio.mteb_tasks.tasks_for(PATH)`.\n\n"
        + "## Build parameters\n\n```json\n" + params + "\n```\n"
    )


def export_hf(
    bench_dir: str | Path,
    out: str | Path,
    *,
    name: str | None = None,
    license_id: str | None = None,
    shard_bytes: int = DEFAULT_SHARD_BYTES,
    row_group: int = ROW_GROUP,
    force: bool = False,
    audio_from: str | Path | None = None,
) -> dict:
    """Write the Hugging Face folder for a benchmark directory into `out` (a folder, replaced
    atomically, or an fsspec URI), reading the clip files under `audio_from` where given (the
    location under which clips.parquet's paths resolve), else in the benchmark directory."""
    require("pyarrow", "arrow", "the Hugging Face export")
    import pyarrow as pa

    bench = load_benchmark(bench_dir)
    if shard_bytes < 1 or row_group < 1:
        raise UserError("shard size and row group size must be at least 1")
    if not storage.is_uri(out):
        out = Path(out)
        if out.resolve() == bench.root.resolve() or bench.root.resolve() in out.resolve().parents:
            raise UserError(f"{out}: the export must not be written inside the benchmark directory {bench.root}")
    source = _ClipFiles(bench, audio_from)
    name = name or bench.root.resolve().name
    with storage.Output(out, "hf dataset", inputs=[bench.root], force=force, streamed="corpus") as dest:
        summary = _write(bench, dest, source, name, license_id or _license(bench), shard_bytes, row_group, pa)
    return summary


class _ClipFiles:
    """Where an export reads the clip files: the benchmark directory, or another location (a folder
    or fsspec URI) under which clips.parquet's paths resolve. Every clip is checked against the
    benchmark's audio.sha256 where it has one: an export must not publish a clip that changed (or
    rotted) after the build."""

    def __init__(self, bench, audio_from: str | Path | None):
        from reasonaudio.io.audio_hashes import read_audio_hashes

        self.bench = bench
        self.elsewhere = audio_from is not None
        if audio_from is None:
            self.fs, self.base, self.shown = storage.local_fs(), str(bench.root), str(bench.root)
        else:
            self.fs, self.base = storage.location(str(audio_from))
            self.base, self.shown = self.base.rstrip("/"), str(audio_from).rstrip("/")
            if not self.fs.isdir(self.base):
                raise UserError(f"--audio-from {audio_from}: not a folder (the location under which the clips' paths, e.g. audio/<clip>.wav, resolve)")
        self.recorded = read_audio_hashes(bench.root) or {}

    def _missing(self, rel: str, clip_id: str) -> UserError:
        if self.elsewhere:
            return UserError(f"{self.shown}/{rel}: audio file of clip {clip_id!r} not found (--audio-from)")
        empty = not any((self.bench.root / "audio").iterdir()) if (self.bench.root / "audio").is_dir() else True
        hint = (": the benchmark's audio folder is empty (merged with --audio-elsewhere?); give --audio-from, where its clips are"
                if empty else "")
        return UserError(f"{self.bench.root / rel}: audio file of clip {clip_id!r} not found{hint}")

    def sizes(self, rows: list[tuple]) -> list[int]:
        """Every clip file's size in bytes (clips.parquet's order): local files one stat each, a
        remote location one listing per folder, not one request per clip."""
        if not self.elsewhere or {"file", "local"} & set(_protocols(self.fs)):
            out = []
            for clip_id, rel, *_ in rows:
                try:
                    out.append(os.stat(f"{self.base}/{rel}").st_size)
                except OSError:
                    raise self._missing(rel, clip_id) from None
            return out
        listed: dict[str, dict[str, int]] = {}
        out = []
        for clip_id, rel, *_ in rows:
            folder, _, file = f"{self.base}/{rel}".rpartition("/")
            if folder not in listed:
                try:
                    entries = self.fs.ls(folder, detail=True)
                except (FileNotFoundError, OSError):
                    entries = []
                listed[folder] = {e["name"].rpartition("/")[2]: int(e["size"]) for e in entries if e.get("type") != "directory"}
            size = listed[folder].get(file)
            if size is None:
                raise self._missing(rel, clip_id)
            out.append(size)
        return out

    def read(self, rel: str, clip_id: str) -> bytes:
        try:
            data = self.fs.cat_file(f"{self.base}/{rel}")
        except (FileNotFoundError, IsADirectoryError):
            raise self._missing(rel, clip_id) from None
        if rel in self.recorded and hashlib.sha256(data).hexdigest() != self.recorded[rel]:
            from reasonaudio.io.audio_hashes import AUDIO_HASHES

            raise UserError(f"{self.shown}/{rel}: sha256 differs from {self.bench.root / AUDIO_HASHES} (the file changed "
                            "after the build); nothing was exported: rebuild, or restore the file")
        return data


def _protocols(fs) -> tuple[str, ...]:
    return (fs.protocol,) if isinstance(fs.protocol, str) else tuple(fs.protocol)


def _write(bench, dest, source: _ClipFiles, name: str, license_id: str, shard_bytes: int, row_group: int, pa) -> dict:
    root: Path = dest.root
    clips = bench.clips
    sample_rate = bench.sample_rate
    corpus_features = {
        "id": _value("string"),
        "audio": {"sampling_rate": sample_rate, "_type": "Audio"},
        "pattern": _value("string"),
        "duration_s": _value("float64"),
        "n_events": _value("int64"),
    }
    corpus_schema = pa.schema(
        [
            ("id", pa.string()),
            ("audio", pa.struct([("bytes", pa.binary()), ("path", pa.string())])),
            ("pattern", pa.string()),
            ("duration_s", pa.float64()),
            ("n_events", pa.int64()),
        ]
    )
    # plan shards from file sizes first so every shard's name carries the final count
    rows = clips.select("clip_id", "path", "pattern", "duration_s", "n_events").rows()
    sizes = source.sizes(rows)
    shards: list[list[int]] = [[]]
    used = 0
    for i, size in enumerate(sizes):
        if shards[-1] and used + size > shard_bytes:
            shards.append([])
            used = 0
        shards[-1].append(i)
        used += size
    del sizes
    import pyarrow.parquet as pq

    # a remote output's shards are written in a local scratch folder and uploaded one by one
    local_corpus = root / "corpus" if not dest.remote else root / ".corpus-scratch"
    local_corpus.mkdir(exist_ok=True)
    for s, members in enumerate(shards):
        path = local_corpus / _shard_name(s, len(shards))
        schema = corpus_schema.with_metadata({b"huggingface": _hf_features(corpus_features)})
        with pq.ParquetWriter(path, schema, compression="zstd", write_statistics=False) as writer:
            for start in range(0, len(members), row_group):
                batch = [rows[i] for i in members[start : start + row_group]]
                writer.write_table(
                    pa.table(
                        {
                            "id": [r[0] for r in batch],
                            "audio": [{"bytes": source.read(r[1], r[0]), "path": Path(r[1]).name} for r in batch],
                            "pattern": [r[2] for r in batch],
                            "duration_s": [None if r[3] is None else float(r[3]) for r in batch],
                            "n_events": [None if r[4] is None else int(r[4]) for r in batch],
                        },
                        schema=schema,
                    )
                )
        if dest.remote:
            dest.audio_fs.put_file(str(path), f"{dest.audio_dir}/{path.name}")
            path.unlink()
    if dest.remote:
        local_corpus.rmdir()

    queries = bench.queries.select(
        pl.col("query_id").cast(pl.Utf8).alias("id"), pl.col("text"), pl.col("task"), pl.col("logic").cast(pl.Utf8)
    )
    query_features = {c: _value("string") for c in queries.columns}
    qrels = bench.qrels.filter(pl.col("relevance") > 0).select(
        pl.col("query_id").cast(pl.Utf8).alias("query-id"),
        pl.col("clip_id").cast(pl.Utf8).alias("corpus-id"),
        pl.col("relevance").cast(pl.Int32).alias("score"),
    )
    qrel_features = {"query-id": _value("string"), "corpus-id": _value("string"), "score": _value("int32")}
    one = _shard_name(0, 1)
    _write_table(root / "queries" / one, queries.to_arrow(), query_features)
    _write_table(root / "qrels" / one, qrels.to_arrow(), qrel_features)

    corpus_glob = f"corpus/{SPLIT}-*.parquet"
    configs: list[tuple[str, str]] = [
        ("corpus", corpus_glob),
        ("queries", f"queries/{SPLIT}-*.parquet"),
        ("qrels", f"qrels/{SPLIT}-*.parquet"),
        ("default", f"qrels/{SPLIT}-*.parquet"),
    ]
    present = set(queries["task"].to_list())
    tasks = [t for t in TASKS if t in present] + sorted(present - set(TASKS))
    task_of = dict(zip(queries["id"].to_list(), queries["task"].to_list()))
    mc = bench.mc.select(
        pl.col("query_id").cast(pl.Utf8), pl.col("positive_clip_id").cast(pl.Utf8), pl.col("negative_clip_id").cast(pl.Utf8)
    )
    for task in tasks:
        q = queries.filter(pl.col("task") == task)
        ids = q["id"].implode()
        _write_table(root / f"{task}-queries" / one, q.to_arrow(), query_features)
        _write_table(root / f"{task}-qrels" / one, qrels.filter(pl.col("query-id").is_in(ids)).to_arrow(), qrel_features)
        configs += [
            (f"{task}-corpus", corpus_glob),
            (f"{task}-queries", f"{task}-queries/{SPLIT}-*.parquet"),
            (f"{task}-qrels", f"{task}-qrels/{SPLIT}-*.parquet"),
        ]
        pairs = mc.filter(pl.col("query_id").is_in(ids))
        if pairs.height:
            ranked = pl.DataFrame(
                {
                    "query-id": pairs["query_id"],
                    # id order, not (positive, negative): the position must not give the answer away
                    "corpus-ids": [sorted([p, n]) for p, n in zip(pairs["positive_clip_id"], pairs["negative_clip_id"])],
                },
                schema={"query-id": pl.Utf8, "corpus-ids": pl.List(pl.Utf8)},
            )
            _write_table(
                root / f"{task}-mc-top_ranked" / one,
                ranked.to_arrow(),
                {"query-id": _value("string"), "corpus-ids": {"feature": _value("string"), "_type": "List"}},
            )
            configs += [
                (f"{task}-mc-corpus", corpus_glob),
                (f"{task}-mc-queries", f"{task}-queries/{SPLIT}-*.parquet"),
                (f"{task}-mc-qrels", f"{task}-qrels/{SPLIT}-*.parquet"),
                (f"{task}-mc-top_ranked", f"{task}-mc-top_ranked/{SPLIT}-*.parquet"),
            ]
    unknown_mc = set(mc["query_id"].to_list()) - set(task_of)
    if unknown_mc:
        raise UserError(f"{bench.root / 'mc.parquet'}: query_id {sorted(unknown_mc)[0]!r} is not in queries.parquet")
    counts = {
        "clips": clips.height,
        "queries": queries.height,
        "qrels": qrels.height,
        "mc": mc.height,
        "corpus_shards": len(shards),
        "queries_per_task": {t: int((queries["task"] == t).sum()) for t in tasks},
    }
    (root / "reasonaudio.json").write_text(json.dumps(bench.manifest, indent=2, sort_keys=True) + "\n")
    (root / "README.md").write_text(_card(bench, name, license_id, configs, tasks, counts), encoding="utf-8")
    return {"configs": [c for c, _ in configs], "tasks": tasks, **counts}
