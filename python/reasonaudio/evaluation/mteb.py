"""mteb tasks for reasonaudio benchmarks (`pip install 'reasonaudio[hf]'`).

Two task classes over one benchmark, given as a built benchmark directory or as the folder
`reasonaudio export --to hf` writes (or its copy on the Hub):

- :class:`ReasonAudioRetrieval`: text→audio retrieval over the whole corpus (`AbsTaskRetrieval`,
  category t2a, modalities text + audio), one mteb subset per reasoning task, main score
  `hit_rate_at_1` (the study's Acc@1), `ndcg_at_10` reported with the rest;
- :class:`ReasonAudioTwoOption`: the two-option test as mteb's reranking form — each query's
  `top_ranked` candidates are its positive and its hard negative, so `hit_rate_at_1` is the
  two-option accuracy (chance 50%).

An exported folder is read by mteb's own `RetrievalDatasetLoader` (the configs `<task>-corpus`,
`<task>-queries`, `<task>-qrels`, `<task>-mc-top_ranked`), exactly as a published copy would be; a
benchmark directory is handed to mteb in memory, its audio as file paths decoded by `datasets`.

    import mteb
    from reasonaudio.evaluation.mteb import tasks_for
    results = mteb.evaluate(model, tasks_for("bench_hf"), cache=None)
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from reasonaudio.errors import UserError

try:
    from mteb.abstasks.retrieval import AbsTaskRetrieval
    from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData
    from mteb.abstasks.task_metadata import TaskMetadata
except ImportError as _err:  # pragma: no cover - exercised only without the extra
    raise UserError(f"reasonaudio.evaluation.mteb needs mteb >= 2 ({_err}); install it with `pip install 'reasonaudio[hf]'`") from None

SPLIT = "test"
LANG = ["eng-Latn", "zxx-Zxxx"]  # English queries; audio has no language (mteb's convention for t2a)


def _source(path: str | Path) -> tuple[Path, str, list[str], str]:
    """(folder, kind, tasks, revision): kind is 'benchmark' or 'hub'; revision a content hash."""
    root = Path(path)
    if (root / "manifest.json").is_file():
        from reasonaudio.io.benchmark import load_benchmark

        bench = load_benchmark(root)
        from reasonaudio.evaluation.run import manifest_hash, task_order

        return root, "benchmark", task_order(bench.queries["task"].unique().to_list()), manifest_hash(bench)
    from reasonaudio.io.hub import hub_configs

    configs = hub_configs(root) if root.is_dir() else {}
    tasks = [n[: -len("-qrels")] for n in configs if n.endswith("-qrels") and not n.endswith("-mc-qrels")]
    if not tasks:
        raise UserError(
            f"{root}: neither a benchmark directory nor a `reasonaudio export --to hf` folder (no <task>-qrels configs)"
        )
    card = root / "README.md"
    revision = hashlib.sha256(card.read_bytes()).hexdigest()[:16] if card.is_file() else "local"
    from reasonaudio.evaluation.run import task_order

    return root, "hub", task_order(tasks), revision


def _metadata(name: str, description: str, root: Path, revision: str, subsets: list[str], kind: str) -> TaskMetadata:
    return TaskMetadata(
        name=name,
        description=description,
        reference=None,
        dataset={"path": str(root.resolve()), "revision": revision},
        type="Any2AnyRetrieval" if kind == "retrieval" else "Any2AnyReranking",
        category="t2a",
        modalities=["text", "audio"],
        eval_splits=[SPLIT],
        eval_langs={s: list(LANG) for s in subsets},
        main_score="hit_rate_at_1",
        date=None,
        domains=None,
        task_subtypes=["Reasoning as Retrieval"],
        license=None,
        annotations_creators="derived",
        dialect=[],
        sample_creation="created",
        bibtex_citation="",
    )


class _ReasonAudioTask(AbsTaskRetrieval):
    """Shared loading: mteb's loader for an exported folder, in-memory data for a benchmark dir.

    mteb keeps a task's metadata on its class (it restores it from there after unloading data), so
    `from_path` makes one subclass per benchmark, carrying that benchmark's metadata.
    """

    _kind = "retrieval"
    _root: Path
    _source_kind: str
    _tasks: list[str]

    @classmethod
    def from_path(cls, path: str | Path, *, name: str | None = None, **kwargs: Any) -> "_ReasonAudioTask":
        root, source_kind, tasks, revision = _source(path)
        label = name or root.resolve().name
        suffix = "T2ARetrieval" if cls._kind == "retrieval" else "TwoOption"
        subsets = tasks if cls._kind == "retrieval" else [f"{t}-mc" for t in tasks]
        description = (cls.__doc__ or "").strip().splitlines()[0]
        metadata = _metadata(f"ReasonAudio{suffix}_{label}", description, root, revision, subsets, cls._kind)
        attrs = {"metadata": metadata, "_root": root, "_source_kind": source_kind, "_tasks": tasks, "__doc__": cls.__doc__}
        return type(f"{cls.__name__}_{label}", (cls,), attrs)(**kwargs)

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        if self.data_loaded:
            return
        if self._source_kind == "hub":
            super().load_data(num_proc=num_proc, **kwargs)
            return
        self.dataset = _from_benchmark(self._root, self._tasks, two_option=self._kind != "retrieval")
        self.data_loaded = True


class ReasonAudioRetrieval(_ReasonAudioTask):
    """Reasoning-intensive text-to-audio retrieval (reasonaudio): one subset per reasoning task, ranked over the whole corpus."""

    _kind = "retrieval"


class ReasonAudioTwoOption(_ReasonAudioTask):
    """The reasonaudio two-option test: each query's candidates are its positive and its hard negative (chance 50%)."""

    _kind = "two_option"


def tasks_for(path: str | Path, *, name: str | None = None, two_option: bool = True) -> list[AbsTaskRetrieval]:
    """The mteb tasks of one benchmark (directory or exported folder): retrieval, then two-option."""
    tasks: list[AbsTaskRetrieval] = [ReasonAudioRetrieval.from_path(path, name=name)]
    if two_option:
        tasks.append(ReasonAudioTwoOption.from_path(path, name=name))
    return tasks


def _from_benchmark(root: Path, tasks: list[str], *, two_option: bool) -> dict[str, dict[str, RetrievalSplitData]]:
    """mteb's in-memory form of a benchmark directory: audio as file paths that `datasets` decodes."""
    import polars as pl
    from datasets import Audio, Dataset

    from reasonaudio.io.benchmark import load_benchmark

    bench = load_benchmark(root)
    corpus = Dataset.from_dict(
        {"id": bench.clips["clip_id"].cast(pl.Utf8).to_list(), "audio": [str(p) for p in bench.audio_paths()]}
    ).cast_column("audio", Audio(sampling_rate=bench.sample_rate))
    out: dict[str, dict[str, RetrievalSplitData]] = {}
    for task in tasks:
        q = bench.queries.filter(pl.col("task") == task)
        ids = q["query_id"].cast(pl.Utf8).to_list()
        qrels = bench.qrels.filter(pl.col("query_id").is_in(ids) & (pl.col("relevance") > 0))
        relevant: dict[str, dict[str, int]] = {}
        for qid, cid, rel in qrels.select(pl.col("query_id").cast(pl.Utf8), pl.col("clip_id").cast(pl.Utf8), "relevance").iter_rows():
            relevant.setdefault(qid, {})[cid] = int(rel)
        queries = Dataset.from_dict({"id": ids, "text": q["text"].to_list()})
        top_ranked = None
        subset = task
        if two_option:
            subset = f"{task}-mc"
            pairs = bench.mc.filter(pl.col("query_id").is_in(ids))
            top_ranked = {
                str(qid): sorted([str(p), str(n)])
                for qid, p, n in pairs.select("query_id", "positive_clip_id", "negative_clip_id").iter_rows()
            }
            keep = [i for i, qid in enumerate(ids) if qid in top_ranked]
            queries = queries.select(keep)
            relevant = {qid: rel for qid, rel in relevant.items() if qid in top_ranked}
        out[subset] = {SPLIT: RetrievalSplitData(corpus=corpus, queries=queries, relevant_docs=relevant, top_ranked=top_ranked)}
    return out
