"""Run one retrieval model over a benchmark: encode, rank, score every query and the two-option test."""

from __future__ import annotations

import logging
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from reasonaudio.evaluation import metrics
from reasonaudio.io.benchmark import TASKS, Benchmark, acoustic_condition, deferred_path, unreadable
from reasonaudio.io.columns import StrColumn, as_column
from reasonaudio.errors import UserError
from reasonaudio.retrieval.base import (
    ClipSet,
    EmbeddingModel,
    QuerySet,
    RetrievalModel,
    ScoringModel,
    as_float32_matrix,
)
from reasonaudio.retrieval.adapters.two_stage import CaptioningModel
from reasonaudio.retrieval.approximate import APPROXIMATE, ApproximateRanker
from reasonaudio.retrieval.certified import INDEXES, make_ranker
from reasonaudio.retrieval.index import deep_rank, l2_normalize, rank_scores

log = logging.getLogger(__name__)

TOP_K = 100
_QRELS_ROWS = 1 << 18  # qrels rows coded per step


@dataclass
class EvalResult:
    spec: str
    benchmark: str
    manifest_hash: str
    task_order: list[str]
    per_query: pl.DataFrame  # query_id, task, every metric, first_relevant_rank, n_relevant
    summary: dict  # metrics.summarize output
    two_option_pairs: pl.DataFrame  # query_id, task, positive/negative ids and scores, outcome
    two_option: dict  # {"accuracy"|"picked_negative"|"tie": {task|Avg: {...}}}
    rankings: pl.DataFrame  # query_id, rank, clip_id, score, relevant (top TOP_K per query)
    clip_ids: Sequence[str] = field(default_factory=list)  # a column (`reasonaudio.io.columns.StrColumn`) from `evaluate`
    settings: dict = field(default_factory=dict)
    # Recorded so that `report` can tell one plan in several acoustic conditions from the results
    # alone, after the benchmark has moved or from another working directory, and order them.
    qrels_hash: str | None = None
    scene: dict | None = None  # the benchmark's condition: background, snr_db, room (None: no scene)
    query_vectors: np.ndarray | None = None  # normalised; embedding models only
    clip_vectors: np.ndarray | None = None
    captions: pl.DataFrame | None = None  # clip_id, caption; two-stage models only


def manifest_hash(benchmark: Benchmark) -> str:
    """sha256 of manifest.json's bytes when it exists (BEIR folders hash their canonical JSON)."""
    path = benchmark.root / "manifest.json"
    data = path.read_bytes() if path.is_file() else json.dumps(benchmark.manifest, sort_keys=True).encode()
    return hashlib.sha256(data).hexdigest()


def task_order(tasks: list[str]) -> list[str]:
    known = [t for t in TASKS if t in tasks]
    return known + sorted(set(tasks) - set(TASKS))


def _relevance(benchmark: Benchmark, query_ids: Sequence[str], clip_ids: Sequence[str]) -> list[np.ndarray]:
    """For each query, the sorted indices (int64) of its relevant clips. The qrels' ids are mapped to
    positions by binary search of the sorted ids, a slice of rows at a time (a million-clip corpus's 8M
    pairs as Python strings took a gigabyte); an id given twice stands for its last position."""
    queries, clips = as_column(query_ids), as_column(clip_ids)
    path = deferred_path(benchmark, "qrels")
    source = pl.scan_parquet(path) if path is not None else benchmark.qrels.lazy()
    # (query, clip) as one int64 key, coded a slice of the qrels' rows at a time: 8M pairs then
    # cost one int64 array, not their ids as strings. Each slice is collected on its own (a
    # streamed iterator reads ahead of the coding, holding the slices not yet handed over), and
    # sliced before the filter, so that each reads only its own row groups.
    width = max(len(clip_ids), 1)
    try:
        rows = source.select(pl.len()).collect().item()
        keys = np.empty(rows, dtype=np.int64)
        done = 0  # relevant pairs coded: the row numbers of the messages count those
        for start in range(0, rows, _QRELS_ROWS):
            batch = source.slice(start, _QRELS_ROWS).filter(pl.col("relevance") > 0).select(
                pl.col("query_id").cast(pl.String), pl.col("clip_id").cast(pl.String)
            ).collect()
            q, c = queries.positions(batch["query_id"]), clips.positions(batch["clip_id"])
            bad = np.flatnonzero((q < 0) | (c < 0))
            if len(bad):
                row = int(bad[0])
                what = "query_id" if q[row] < 0 else "clip_id"
                raise UserError(f"{benchmark.root}: qrels row {done + row}: unknown {what} {batch[what][row]!r}")
            np.multiply(q, width, out=keys[done : done + batch.height])
            keys[done : done + batch.height] += c
            done += batch.height
    except UserError:
        raise
    except Exception as err:  # a readable footer over a damaged body (polars raises several types)
        if path is None:
            raise
        raise UserError(unreadable(path, err)) from None
    keys = keys[:done]
    keys.sort()
    if len(keys) > 1:
        first = np.concatenate(([True], keys[1:] != keys[:-1]))
        if not first.all():  # a pair listed twice
            keys = keys[first]
    ends = np.searchsorted(keys, np.arange(len(query_ids) + 1, dtype=np.int64) * width, "left")
    np.remainder(keys, width, out=keys)
    return [keys[ends[i] : ends[i + 1]] for i in range(len(query_ids))]


def _warn_degenerate(vectors: np.ndarray, what: str) -> None:
    """All-zero rows score 0 against everything and identical rows tie everywhere: results are then
    decided by the tie-break (clip order), not by the model. Say so instead of reporting silently."""
    zero = int((~vectors.any(axis=1)).sum())
    if zero:
        log.warning("reasonaudio: warning: %s: %d of %d are all zero (they tie with every clip at score 0)", what, zero, len(vectors))
    elif len(vectors) > 1 and all((vectors[i : i + 65_536] == vectors[0]).all() for i in range(0, len(vectors), 65_536)):
        log.warning("reasonaudio: warning: %s: all %d are identical; rankings are decided by the tie-break", what, len(vectors))


def evaluate(
    benchmark: Benchmark,
    model: RetrievalModel,
    *,
    batch_size: int = 256,
    n_boot: int = 1000,
    seed: int = 0,
    progress: bool = True,
    keep_vectors: bool = True,
    index: str = "exact",
    device: str | None = None,
) -> EvalResult:
    """`index`: "exact", "faiss" or "auto" (`reasonaudio.retrieval.certified`: every result is the
    same whichever ranks; `device` puts FAISS on a GPU, "cuda[:N]", or keeps it on "cpu"), or
    "ivf" or "hnsw" (`reasonaudio.retrieval.approximate`: approximate heads; the settings record
    the index and its recall of the exact top k)."""
    queries = QuerySet(benchmark.queries["query_id"].cast(pl.Utf8).to_list(), benchmark.queries["text"].to_list())
    # the clip side as columns, not Python objects per clip: ids and paths are made as they are used
    clips = ClipSet(StrColumn(benchmark.clips["clip_id"]), benchmark.clip_paths())
    tasks = benchmark.queries["task"].to_list()
    if not queries.ids:
        raise UserError(f"{benchmark.root}: the benchmark has no queries")
    if not clips.ids:
        raise UserError(f"{benchmark.root}: the benchmark has no clips")
    if index not in INDEXES + APPROXIMATE:
        raise UserError(f"index must be one of {', '.join(INDEXES + APPROXIMATE)}, not {index!r}")
    model.prepare(benchmark)

    query_vectors = clip_vectors = score_matrix = ranker = None
    if isinstance(model, EmbeddingModel):
        query_vectors = as_float32_matrix(model.encode_queries(queries), f"{model.spec}: query embeddings", len(queries.ids))
        clip_vectors = as_float32_matrix(model.encode_clips(clips), f"{model.spec}: clip embeddings", len(clips.ids))
        _warn_degenerate(query_vectors, f"{model.spec}: query embeddings")
        _warn_degenerate(clip_vectors, f"{model.spec}: clip embeddings")
        # one canonical score per (query, clip) for the head, deeper ranks and the two-option test
        ranker = (ApproximateRanker(query_vectors, clip_vectors, kind=index, device=device) if index in APPROXIMATE
                  else make_ranker(index, query_vectors, clip_vectors, device=device))
    elif isinstance(model, ScoringModel):
        score_matrix = as_float32_matrix(model.score(queries, clips), f"{model.spec}: scores", len(queries.ids))
        if score_matrix.shape[1] != len(clips.ids):
            raise UserError(f"{model.spec}: score matrix has {score_matrix.shape[1]} columns for {len(clips.ids)} clips")
        batches = rank_scores(score_matrix, batch_size=batch_size, progress=progress, depth=TOP_K)
    else:
        raise TypeError(f"{type(model).__name__} is neither an EmbeddingModel nor a ScoringModel")

    relevant = _relevance(benchmark, queries.ids, clips.ids)
    if ranker is not None:
        # the pass that ranks the head also counts, per query, the clips outranking its first
        # relevant one: its exact rank in the complete ranking, however deep
        batches = ranker.rank(depth=TOP_K, batch_size=batch_size, progress=progress, relevant=relevant)
    n_relevant = np.array([len(r) for r in relevant], dtype=np.int64)
    n_clips = len(clips.ids)
    per_query_parts: list[dict[str, np.ndarray]] = []
    first_ranks: list[np.ndarray] = []
    ranking_parts = []
    top = min(TOP_K, n_clips)
    clip_ids = as_column(clips.ids)
    for start, scores, ranking, *located in batches:
        b = ranking.shape[0]
        # membership per row, not a [batch, corpus] mask: bounded whatever the corpus size
        hits = np.stack([np.isin(ranking[i], relevant[start + i]) for i in range(b)]).reshape(ranking.shape)
        # Rankings stop at TOP_K (every cutoff); a first relevant clip deeper than that is located
        # by counting the clips that outrank it under the same scores.
        first = np.where(hits.any(axis=1), hits.argmax(axis=1), -1)
        deep = np.flatnonzero((first < 0) & (n_relevant[start : start + b] > 0))
        if located:
            first[deep] = np.maximum(located[0][deep], ranking.shape[1])
        for i in deep if not located else ():
            row = start + int(i)
            first[i] = max(deep_rank(score_matrix[row], relevant[row]), ranking.shape[1])
        per_query_parts.append(metrics.per_query(hits, n_relevant[start : start + b], first))
        first_ranks.append(np.where(first >= 0, first + 1, -1))
        ranking_parts.append(
            pl.DataFrame(
                {
                    "query_id": np.repeat(np.asarray(queries.ids[start : start + b], dtype=object), top).tolist(),
                    "rank": np.tile(np.arange(1, top + 1, dtype=np.int32), b),
                    "clip_id": clip_ids.gather(ranking[:, :top]),
                    "score": scores[:, :top].astype(np.float32).ravel(),
                    "relevant": hits[:, :top].ravel(),
                }
            )
        )
    values = {name: np.concatenate([p[name] for p in per_query_parts]) for name in metrics.METRIC_NAMES}
    order = task_order(tasks)
    summary = metrics.summarize(values, tasks, order, n_boot=n_boot, seed=seed)
    per_query = pl.DataFrame(
        {"query_id": queries.ids, "task": tasks, **values, "first_relevant_rank": np.concatenate(first_ranks), "n_relevant": n_relevant}
    )

    # two-option test: the same scores the ranking used
    mc = benchmark.mc
    columns = (("query_id", as_column(queries.ids)), ("positive_clip_id", clip_ids), ("negative_clip_id", clip_ids))
    found = [table.positions(mc[what].cast(pl.String)) for what, table in columns]
    bad = np.flatnonzero(np.logical_or.reduce([f < 0 for f in found])) if mc.height else []
    if len(bad):
        row = int(bad[0])
        what = next(what for (what, _), f in zip(columns, found) if f[row] < 0)
        raise UserError(f"{benchmark.root / 'mc.parquet'}: row {row}: unknown {what} {mc[what][row]!r}")
    query_rows, pos_rows, neg_rows = found
    mc_tasks = [tasks[i] for i in query_rows.tolist()]
    query_rows_a = np.asarray(query_rows, dtype=np.int64)
    if ranker is not None:
        pos_scores = ranker.pair_scores(query_rows_a, np.asarray(pos_rows, dtype=np.int64))
        neg_scores = ranker.pair_scores(query_rows_a, np.asarray(neg_rows, dtype=np.int64))
    else:
        pos_scores = score_matrix[query_rows_a, np.asarray(pos_rows, dtype=np.int64)].astype(np.float64)
        neg_scores = score_matrix[query_rows_a, np.asarray(neg_rows, dtype=np.int64)].astype(np.float64)
    outcome = metrics.two_option(np.array(pos_scores), np.array(neg_scores))
    two_option_pairs = pl.DataFrame(
        {
            "query_id": mc["query_id"].to_list(),
            "task": mc_tasks,
            "positive_clip_id": mc["positive_clip_id"].to_list(),
            "negative_clip_id": mc["negative_clip_id"].to_list(),
            "positive_score": np.array(pos_scores, dtype=np.float64),
            "negative_score": np.array(neg_scores, dtype=np.float64),
            **outcome,
        },
        schema_overrides={"query_id": pl.Utf8, "task": pl.Utf8, "positive_clip_id": pl.Utf8, "negative_clip_id": pl.Utf8},
    )
    two_option = (
        metrics.summarize(outcome, mc_tasks, task_order(mc_tasks), n_boot=n_boot, seed=seed + 1)
        if mc_tasks
        else {}
    )
    return EvalResult(
        spec=model.spec,
        benchmark=str(benchmark.root),
        manifest_hash=manifest_hash(benchmark),
        qrels_hash=(benchmark.manifest.get("hashes") or {}).get("qrels.parquet"),
        scene=acoustic_condition(benchmark.manifest),
        task_order=order,
        per_query=per_query,
        summary=summary,
        two_option_pairs=two_option_pairs,
        two_option=two_option,
        rankings=pl.concat(ranking_parts),
        clip_ids=clips.ids,
        settings={"batch_size": batch_size, "bootstrap": n_boot, "seed": seed, "top_k": top,
                  **({"approximate": ranker.describe(top)} if isinstance(ranker, ApproximateRanker) else {}),
                  **({"model": model.describe()} if callable(getattr(model, "describe", None)) else {})},
        query_vectors=l2_normalize(query_vectors) if keep_vectors and query_vectors is not None else None,
        clip_vectors=l2_normalize(clip_vectors) if keep_vectors and clip_vectors is not None else None,
        captions=model.caption_table() if isinstance(model, CaptioningModel) else None,
    )
