"""Load retrieval data laid out the way the Hugging Face Hub exchanges it (BEIR folders: `io.beir`).

- a **Hub dataset folder** (`load_hub`), as `huggingface-cli download --repo-type dataset` leaves
  it: one folder of (sharded) parquet, CSV or JSONL per config (`corpus/test-00000-of-00003.parquet`,
  `queries/…`, `qrels/…` or `default/…`), or whatever the `configs:` section of its README names.
  The variants mteb's own loader accepts are accepted too: a `query` config, qrels in `default`,
  a corpus split named `corpus`, and sub-tasks as `<subset>-corpus` / `<subset>-queries` /
  `<subset>-qrels` (each subset becomes a task of the report) with an optional
  `<subset>-top_ranked` whose two-candidate lists are read as two-option pairs.

Embedded audio (`{bytes, path}` structs, any format libsndfile reads) is not read at load time:
each clip gets an :class:`EmbeddedAudio` reference, and the audio adapters fetch the bytes of one
parquet row group at a time when their batch reaches it, so memory is bounded by a row group and
a batch, not by the corpus.
"""

from __future__ import annotations

import logging
import glob
import io
import json
import os
import re
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from reasonaudio.io.benchmark import TABLE_COLUMNS, Benchmark, iter_jsonl
from reasonaudio.errors import UserError, require

log = logging.getLogger(__name__)

BEIR_PATH_KEYS = ("path", "audio", "audio_path", "file")
DATA_SUFFIXES = (".parquet", ".csv", ".tsv", ".jsonl", ".json")
# `<split>-00000-of-00003.parquet` as `push_to_hub` names shards; a plain `<split>.parquet` too.
SHARD_NAME = re.compile(r"^(?P<split>[A-Za-z0-9_.]+?)(-\d{5}-of-\d{5})?(\.[a-z]+)+$")
ROLE_SUFFIXES = ("corpus", "queries", "qrels", "top_ranked")


# --------------------------------------------------------------------------------------------
# lazily decoded embedded audio


def _parquet_file(path):
    """pyarrow's reader of one exported shard, or a UserError naming it (a truncated or foreign file
    failed with pyarrow's ArrowInvalid and no file name)."""
    require("pyarrow", "arrow", "reading a Hugging Face folder")
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except (pa.ArrowInvalid, OSError) as err:
        raise UserError(f"{path}: not a readable parquet file ({err})") from None


class ParquetAudioStore:
    """The audio column of a set of parquet shards, read one row group at a time on demand.

    Keeps the row groups most recently read (`cache_groups` of them): adapters walk the corpus in
    order, batch after batch, so each row group is read once.
    """

    def __init__(self, files: list[Path], column: str, cache_groups: int = 2, root: Path | None = None):

        self.root = root
        self.files = files
        self.column = column
        self.cache_groups = cache_groups
        self._groups: list[list[tuple[int, int]]] = []  # per file: (first row, n rows) per row group
        for f in files:
            meta = _parquet_file(f).metadata
            starts, row = [], 0
            for g in range(meta.num_row_groups):
                n = meta.row_group(g).num_rows
                starts.append((row, n))
                row += n
            self._groups.append(starts)
        self._cache: OrderedDict[tuple[int, int], list] = OrderedDict()
        self.row_groups_read = 0

    def _group_of(self, file_index: int, row: int) -> tuple[int, int]:
        for g, (first, n) in enumerate(self._groups[file_index]):
            if first <= row < first + n:
                return g, row - first
        raise IndexError(f"{self.files[file_index]}: no row {row}")

    def audio_bytes(self, file_index: int, row: int) -> bytes:

        group, offset = self._group_of(file_index, row)
        key = (file_index, group)
        values = self._cache.get(key)
        if values is None:
            table = _parquet_file(self.files[file_index]).read_row_group(group, columns=[self.column])
            values = table.column(0).to_pylist()
            self.row_groups_read += 1
            self._cache[key] = values
            while len(self._cache) > self.cache_groups:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        value = values[offset]
        data = value.get("bytes") if isinstance(value, dict) else value
        if data:
            return data
        # an Audio value without bytes names a file shipped beside the tables
        name = value.get("path") if isinstance(value, dict) else None
        for base in (self.root, self.files[file_index].parent):
            if name and base is not None and (base / name).is_file():
                return (base / name).read_bytes()
        raise UserError(
            f"{self.files[file_index]}: row {row}: column {self.column!r} holds no audio bytes"
            + (f" and {name!r} is not a file" if name else "")
        )


@dataclass(frozen=True)
class EmbeddedAudio(os.PathLike):
    """A clip whose audio lives inside a parquet row. `os.fspath` gives a readable label (shard,
    row, original file name), not a file on disk; `open_audio()` gives a file object soundfile reads."""

    store: ParquetAudioStore
    file_index: int
    row: int
    name: str

    def __fspath__(self) -> str:
        return f"{self.store.files[self.file_index]}#row={self.row}/{self.name}"

    def __str__(self) -> str:
        return self.__fspath__()

    def open_audio(self) -> io.BytesIO:
        return io.BytesIO(self.store.audio_bytes(self.file_index, self.row))


# --------------------------------------------------------------------------------------------
# Hub dataset folders


def _front_matter(readme: Path) -> dict:
    text = readme.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    if end < 0:
        return {}
    from reasonaudio.errors import require

    yaml = require("yaml", "hf", f"{readme}: reading its YAML header (PyYAML)")
    try:
        data = yaml.safe_load(text[3:end])
    except yaml.YAMLError as err:
        raise UserError(f"{readme}: the YAML header is not valid YAML ({err})") from None
    return data if isinstance(data, dict) else {}


def _expand(root: Path, patterns, where: str) -> list[Path]:
    if isinstance(patterns, str):
        patterns = [patterns]
    files: list[Path] = []
    for pattern in patterns:
        matched = sorted(Path(p) for p in glob.glob(str(root / pattern), recursive=True))
        files.extend(p for p in matched if p.is_file())
    if not files:
        raise UserError(f"{where}: data_files {patterns!r} match no file under {root}")
    return files


def readme_configs(root: Path) -> dict[str, dict[str, list[Path]]]:
    """config -> split -> files, from the `configs:` section of `root/README.md` (empty if none)."""
    readme = root / "README.md"
    if not readme.is_file():
        return {}
    configs = _front_matter(readme).get("configs") or []
    out: dict[str, dict[str, list[Path]]] = {}
    for number, config in enumerate(configs, start=1):
        where = f"{readme}: configs entry {number}"
        if not isinstance(config, dict) or "config_name" not in config:
            raise UserError(f"{where}: expected a mapping with 'config_name' and 'data_files'")
        name = str(config["config_name"])
        data_files = config.get("data_files")
        splits: dict[str, list[Path]] = {}
        if isinstance(data_files, (str, list)) and all(isinstance(d, str) for d in ([data_files] if isinstance(data_files, str) else data_files)):
            splits["train"] = _expand(root, data_files, where)  # datasets' default split name
        elif isinstance(data_files, list):
            for entry in data_files:
                if not isinstance(entry, dict) or "split" not in entry or "path" not in entry:
                    raise UserError(f"{where} ({name}): each data_files item needs 'split' and 'path'")
                splits[str(entry["split"])] = _expand(root, entry["path"], f"{where} ({name})")
        elif isinstance(data_files, dict):
            for split, patterns in data_files.items():
                splits[str(split)] = _expand(root, patterns, f"{where} ({name})")
        else:
            raise UserError(f"{where} ({name}): data_files must be a path, a list, or split/path items")
        out[name] = splits
    return out


def folder_configs(root: Path) -> dict[str, dict[str, list[Path]]]:
    """config -> split -> files from the folder names (`corpus/test-00000-of-00002.parquet`)."""
    out: dict[str, dict[str, list[Path]]] = {}
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in DATA_SUFFIXES)
        splits: dict[str, list[Path]] = {}
        for f in files:
            match = SHARD_NAME.match(f.name)
            split = match.group("split") if match else f.stem
            splits.setdefault(split, []).append(f)
        if splits:
            out["default" if folder.name == "data" else folder.name] = splits
    return out


def hub_configs(root: Path) -> dict[str, dict[str, list[Path]]]:
    return readme_configs(root) or folder_configs(root)


def is_hub_folder(root: Path) -> bool:
    configs = hub_configs(root) if root.is_dir() else {}
    return any(name == "corpus" or name.endswith("-corpus") for name in configs)


def _pick_split(config: str, splits: dict[str, list[Path]], split: str, role: str, root: Path) -> list[Path]:
    for candidate in (split, role):
        if candidate in splits:
            return splits[candidate]
    if len(splits) == 1:
        return next(iter(splits.values()))
    raise UserError(f"{root}: config {config!r} has splits {', '.join(sorted(splits))}; none is {split!r}")


def _read_frame(files: list[Path], columns: list[str] | None = None) -> pl.DataFrame:
    """The rows of all shards of one config split (only `columns` where given, for parquet)."""
    frames = []
    for f in files:
        try:
            if f.suffix == ".parquet":

                pf = _parquet_file(f)
                names = pf.schema_arrow.names
                wanted = [c for c in columns if c in names] if columns is not None else None
                frames.append(pl.from_arrow(pf.read(columns=wanted)))
            elif f.suffix in (".csv", ".tsv"):
                frames.append(pl.read_csv(f, separator="\t" if f.suffix == ".tsv" else ",", infer_schema=False))
            else:
                rows = [row for _, row in iter_jsonl(f)] if f.suffix == ".jsonl" else json.loads(f.read_text())
                if not isinstance(rows, list):
                    raise UserError(f"{f}: expected a JSON list of objects")
                frames.append(pl.DataFrame(rows, infer_schema_length=None))
        except UserError:
            raise
        except Exception as err:  # polars/pyarrow raise many error types for corrupt files
            raise UserError(f"{f}: cannot read ({err.__class__.__name__}: {err})") from None
    if not frames:
        return pl.DataFrame()
    return pl.concat(frames, how="diagonal_relaxed") if len(frames) > 1 else frames[0]


def _id_column(names: list[str], where: str) -> str:
    for c in ("id", "_id"):
        if c in names:
            return c
    raise UserError(f"{where}: expected an 'id' or '_id' column; found {', '.join(names)}")


@dataclass
class _Corpus:
    files: list[Path]
    clip_ids: list[str]
    paths: list[str | None]  # audio given as file names
    refs: list[EmbeddedAudio] | None  # audio embedded in the parquet rows
    sample_rate: int | None = None  # the Audio feature's sampling_rate, where the schema states one


def _feature_rate(schema, column: str) -> int | None:
    """`sampling_rate` of an Audio feature in the parquet schema metadata `datasets` writes."""
    try:
        info = json.loads((schema.metadata or {}).get(b"huggingface", b"{}"))
        rate = info.get("info", {}).get("features", {}).get(column, {}).get("sampling_rate")
        return int(rate) if rate else None
    except (ValueError, AttributeError, TypeError):
        return None


def _read_corpus(root: Path, files: list[Path], config: str) -> _Corpus:
    require("pyarrow", "arrow", "reading a Hugging Face folder")
    import pyarrow as pa

    where = f"{root}: config {config!r}"
    if all(f.suffix == ".parquet" for f in files):
        schema = _parquet_file(files[0]).schema_arrow
        id_col = _id_column(schema.names, f"{files[0]}")
        audio_col = next((c for c in BEIR_PATH_KEYS if c in schema.names), None)
        if audio_col is None:
            raise UserError(f"{files[0]}: no audio column; expected one of {', '.join(BEIR_PATH_KEYS)}")
        kind = schema.field(audio_col).type
        if pa.types.is_struct(kind) and kind.get_field_index("bytes") >= 0:
            store = ParquetAudioStore(files, audio_col, root=root)
            ids, refs = [], []
            has_path = kind.get_field_index("path") >= 0
            for i, f in enumerate(files):
                pf = _parquet_file(f)
                if id_col not in pf.schema_arrow.names:
                    raise UserError(f"{f}: expected an {id_col!r} column like {files[0].name}")
                # the id column and the struct's `path` field only: the audio bytes stay on disk
                table = pf.read(columns=[id_col, f"{audio_col}.path"] if has_path else [id_col])
                names = table.column(0).cast(pa.string()).to_pylist()
                originals = table.column(1).combine_chunks().field("path").to_pylist() if has_path else [None] * len(names)
                for row, (cid, original) in enumerate(zip(names, originals)):
                    if cid is None:
                        raise UserError(f"{f}: row {row}: empty {id_col!r}")
                    ids.append(cid)
                    refs.append(EmbeddedAudio(store, i, row, Path(original).name if original else f"{cid}.audio"))
            return _Corpus(files, ids, [None] * len(ids), refs, _feature_rate(schema, audio_col))
    frame = _read_frame(files)
    id_col = _id_column(frame.columns, where)
    audio_col = next((c for c in BEIR_PATH_KEYS if c in frame.columns), None)
    if audio_col is None:
        raise UserError(f"{where}: no audio column; expected one of {', '.join(BEIR_PATH_KEYS)}")
    ids = [str(v) for v in frame[id_col].to_list()]
    paths = []
    for row, value in enumerate(frame[audio_col].to_list(), start=1):
        if isinstance(value, dict):
            value = value.get("path")
        if not value:
            raise UserError(f"{where}: row {row} ({ids[row - 1]!r}) names no audio file in {audio_col!r}")
        paths.append(_resolve_audio(root, files[0].parent, str(value)))
    return _Corpus(files, ids, paths, None)


def _resolve_audio(root: Path, table_dir: Path, value: str) -> str:
    """A file name as a Hub dataset gives it: absolute, relative to the dataset root, or relative to
    the table's folder; returned relative to the root where possible."""
    p = Path(value)
    if p.is_absolute():
        return value
    if (root / p).exists() or not (table_dir / p).exists():
        return value
    return os.path.relpath(table_dir / p, root)


def _read_queries(files: list[Path], where: str) -> pl.DataFrame:
    frame = _read_frame(files)
    id_col = _id_column(frame.columns, where)
    text_col = next((c for c in ("text", "query") if c in frame.columns), None)
    if text_col is None:
        raise UserError(f"{where}: expected a 'text' column; found {', '.join(frame.columns)}")
    out = pl.DataFrame(
        {
            "query_id": frame[id_col].cast(pl.Utf8),
            "task": frame["task"].cast(pl.Utf8) if "task" in frame.columns else pl.Series([None] * frame.height, dtype=pl.Utf8),
            "text": frame[text_col].cast(pl.Utf8),
            "logic": frame["logic"].cast(pl.Utf8) if "logic" in frame.columns else pl.Series([None] * frame.height, dtype=pl.Utf8),
        }
    )
    empty = out.filter(pl.col("text").is_null())
    if empty.height:
        raise UserError(f"{where}: query {empty['query_id'][0]!r} has no text")
    return out


def _read_qrels(files: list[Path], where: str) -> pl.DataFrame:
    frame = _read_frame(files)
    frame = frame.rename({c: c.replace("_", "-") for c in frame.columns})
    missing = [c for c in ("query-id", "corpus-id", "score") if c not in frame.columns]
    if missing:
        raise UserError(f"{where}: missing column(s) {', '.join(missing)}; found {', '.join(frame.columns)}")
    try:
        score = frame["score"].cast(pl.Float64)
    except Exception:
        raise UserError(f"{where}: 'score' holds values that are not numbers") from None
    out = pl.DataFrame(
        {"query_id": frame["query-id"].cast(pl.Utf8), "clip_id": frame["corpus-id"].cast(pl.Utf8), "relevance": score}
    )
    return out.filter(pl.col("relevance") > 0).with_columns(pl.col("relevance").cast(pl.Int64))


def _read_two_option(files: list[Path], qrels: pl.DataFrame, where: str) -> list[tuple[str, str, str]]:
    """(query, positive, negative) from a `top_ranked` config whose lists hold one relevant and one
    irrelevant clip; longer candidate lists (reranking data) have no two-option reading: skipped."""
    frame = _read_frame(files)
    frame = frame.rename({c: c.replace("_", "-") for c in frame.columns})
    if "query-id" not in frame.columns or "corpus-ids" not in frame.columns:
        raise UserError(f"{where}: expected columns 'query-id' and 'corpus-ids'; found {', '.join(frame.columns)}")
    relevant = {(q, c) for q, c in qrels.select("query_id", "clip_id").iter_rows()}
    pairs = []
    for qid, cands in frame.select(pl.col("query-id").cast(pl.Utf8), "corpus-ids").iter_rows():
        cands = [str(c) for c in (cands or [])]
        if len(cands) != 2:
            continue
        flags = [(qid, c) in relevant for c in cands]
        if sum(flags) == 1:
            pos = cands[flags.index(True)]
            pairs.append((qid, pos, cands[1 - flags.index(True)]))
    return pairs


def _role(configs: dict, subset: str | None, role: str) -> str | None:
    """The config holding `role` for a subset, with the aliases mteb's loader accepts."""
    if subset is not None:
        name = f"{subset}-{role}"
        return name if name in configs else None
    candidates = {"corpus": ["corpus"], "queries": ["queries", "query"], "qrels": ["qrels", "default"], "top_ranked": ["top_ranked"]}[role]
    return next((c for c in candidates if c in configs), None)


def load_hub(path: str | Path, *, split: str = "test", subset: str | None = None) -> Benchmark:
    """Load a Hugging Face retrieval dataset folder (see the module docstring).

    With top-level `corpus`/`queries`/qrels configs those are read (a `task` column on the queries
    gives the tasks; without one every query is task "all"); otherwise, or when `subset` names one,
    the `<subset>-…` configs, each subset a task. All subsets must share one corpus (the same clip
    ids): reasonaudio ranks every query against one corpus.
    """
    root = Path(path)
    if not root.is_dir():
        raise UserError(f"{root}: not a directory")
    configs = hub_configs(root)
    if not configs:
        raise UserError(f"{root}: no data folders (corpus/, queries/, qrels/ …) and no README `configs:`")
    subsets = sorted({n[: -len("-qrels")] for n in configs if n.endswith("-qrels")})
    if subset is not None:
        if subset not in subsets:
            raise UserError(f"{root}: no subset {subset!r}; subsets: {', '.join(subsets) or 'none'}")
        chosen: list[str | None] = [subset]
    elif _role(configs, None, "corpus") and _role(configs, None, "qrels") and _role(configs, None, "queries"):
        chosen = [None]
    elif subsets:
        # a subset with a top_ranked config whose queries another subset already has is the
        # two-option view of that subset (as `reasonaudio export` writes `<task>-mc`)
        chosen = list(subsets)
    else:
        raise UserError(
            f"{root}: found configs {', '.join(sorted(configs))}; expected corpus, queries (or query) and "
            "qrels (or default), or <subset>-corpus / <subset>-queries / <subset>-qrels"
        )

    corpus: _Corpus | None = None
    corpus_config = None
    query_parts, qrel_parts = [], []
    pairs: list[tuple[str, str, str]] = []
    seen_queries: set[str] = set()
    used: list[str] = []
    for sub in chosen:
        names = {role: _role(configs, sub, role) for role in ROLE_SUFFIXES}
        label = sub or "(top level)"
        for role in ("corpus", "queries", "qrels"):
            if names[role] is None:
                raise UserError(f"{root}: subset {label} has no {role} config ({sub}-{role})")
        files = {role: _pick_split(names[role], configs[names[role]], split, role, root) for role in ("corpus", "queries", "qrels")}
        has_top_ranked = names["top_ranked"] is not None
        if corpus is None:
            corpus, corpus_config = _read_corpus(root, files["corpus"], names["corpus"]), names["corpus"]
        elif files["corpus"] != corpus.files:
            other = _read_corpus(root, files["corpus"], names["corpus"])
            if other.clip_ids != corpus.clip_ids:
                raise UserError(
                    f"{root}: configs {corpus_config!r} and {names['corpus']!r} hold different corpora; reasonaudio "
                    f"ranks all queries against one corpus: load one subset (load_hub(..., subset=NAME))"
                )
        where = f"{root}: config {names['queries']!r}"
        queries = _read_queries(files["queries"], where)
        qrels = _read_qrels(files["qrels"], f"{root}: config {names['qrels']!r}")
        ids = set(queries["query_id"].to_list())
        if sub is not None and has_top_ranked and ids <= seen_queries:
            continue
        if sub is not None:
            queries = queries.with_columns(pl.lit(sub).alias("task"))
            clash = ids & seen_queries
            if clash:
                raise UserError(f"{where}: query id {sorted(clash)[0]!r} also appears in another subset")
        seen_queries |= ids
        if sub is not None:
            used.append(sub)
        query_parts.append(queries.with_columns(pl.col("task").fill_null("all")))
        qrel_parts.append(qrels)
    assert corpus is not None
    queries = pl.concat(query_parts)
    qrels = pl.concat(qrel_parts).unique(maintain_order=True)
    # mteb's loader drops queries without qrels; so do we (they cannot be scored)
    queries = queries.filter(pl.col("query_id").is_in(qrels["query_id"].unique().implode()))
    known = set(queries["query_id"].to_list())
    # two-option pairs from every top_ranked config (`top_ranked`, `<subset>-top_ranked`), checked
    # against the qrels of the queries loaded
    for name in sorted(n for n in configs if n == "top_ranked" or n.endswith("-top_ranked")):
        ranked = _pick_split(name, configs[name], split, "top_ranked", root)
        pairs.extend(_read_two_option(ranked, qrels, f"{root}: config {name!r}"))
    order = {q: i for i, q in enumerate(queries["query_id"].to_list())}
    pairs = sorted((p for p in dict.fromkeys(pairs) if p[0] in known), key=lambda p: order[p[0]])

    n = len(corpus.clip_ids)
    clips = pl.DataFrame(
        {"clip_id": corpus.clip_ids, "path": corpus.paths, "pattern": [None] * n, "duration_s": [None] * n, "n_events": [None] * n},
        schema={"clip_id": pl.Utf8, "path": pl.Utf8, "pattern": pl.Utf8, "duration_s": pl.Float64, "n_events": pl.Int64},
    )
    mc = pl.DataFrame(
        {"query_id": [p[0] for p in pairs], "positive_clip_id": [p[1] for p in pairs], "negative_clip_id": [p[2] for p in pairs]},
        schema={c: pl.Utf8 for c in TABLE_COLUMNS["mc"]},
    )
    manifest = {
        "format_version": "hub",
        "tool_version": None,
        "seed": None,
        "sample_rate": corpus.sample_rate,
        "params": {"source": "hub", "split": split, "subsets": used, "corpus_config": corpus_config},
        "counts": {"clips": clips.height, "queries": queries.height, "qrels": qrels.height, "mc": mc.height},
        "hashes": {},
    }
    card = root / "reasonaudio.json"
    if card.is_file():  # written by `reasonaudio export`: the build's own manifest
        try:
            manifest["params"]["benchmark_manifest"] = json.loads(card.read_text())
        except json.JSONDecodeError:
            pass
    empty = {name: pl.DataFrame({c: [] for c in TABLE_COLUMNS[name]}) for name in ("atoms", "events")}
    return Benchmark(
        root=root, manifest=manifest, atoms=empty["atoms"], clips=clips, events=empty["events"],
        queries=queries, qrels=qrels, mc=mc, audio_refs=corpus.refs,
    )
