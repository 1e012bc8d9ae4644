"""Exhaustive ranking: FAISS inner product on L2-normalised vectors, or a given score matrix.

Rankings are complete (every clip, best first) by default; the evaluator asks for the exact head
(depth 100, every metric cutoff) and locates a deeper first relevant clip with `deep_rank`, which
is equivalent to the complete ranking and avoids FAISS's slow k = corpus selection. Queries are
processed in batches so memory stays at batch x corpus.

Tie-breaking is part of the result: clips with *equal* scores (bitwise-equal float32 values) are
ordered by their index in the corpus, smaller first. FAISS's own order among equal scores is an
implementation detail, so each batch is re-sorted by (score descending, clip index ascending).

FAISS searches on the GPU when `faiss.get_num_gpus() > 0`. GPU k-selection is limited to
k <= 2048, so the head search (depth 100 plus a tie margin) runs there whatever the corpus size,
and only searches deeper than that limit (complete rankings, or rows whose tie run crosses the cut)
go to the CPU copy of the index.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from tqdm.auto import tqdm

from reasonaudio.errors import UserError

GPU_MAX_K = 2048
TIE_MARGIN = 16


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """Row-normalise float32 vectors; all-zero rows stay zero (they score 0 against everything)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def _faiss():
    try:
        import faiss
    except ImportError:
        raise UserError(
            "ranking embeddings needs FAISS (`pip install faiss-cpu` or `pip install 'reasonaudio[eval]'`)"
        ) from None
    return faiss


class FlatIndex:
    """IndexFlatIP on the CPU, plus a GPU copy when FAISS has a GPU; `search` picks the one that can
    serve k (GPU k-selection stops at GPU_MAX_K)."""

    def __init__(self, clip_vectors: np.ndarray, *, use_gpu: bool | None = None):
        faiss = _faiss()
        self.cpu = faiss.IndexFlatIP(clip_vectors.shape[1])
        self.cpu.add(np.ascontiguousarray(clip_vectors, dtype=np.float32))
        gpu_ok = faiss.get_num_gpus() > 0 and hasattr(faiss, "index_cpu_to_all_gpus")
        self.gpu = faiss.index_cpu_to_all_gpus(self.cpu) if (gpu_ok if use_gpu is None else use_gpu and gpu_ok) else None

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        index = self.gpu if self.gpu is not None and k <= GPU_MAX_K else self.cpu
        return index.search(queries, k)


def build_index(clip_vectors: np.ndarray, *, use_gpu: bool | None = None) -> FlatIndex:
    """An exact inner-product index over the (already normalised) clip vectors, on GPU when possible."""
    return FlatIndex(clip_vectors, use_gpu=use_gpu)


def sort_ties(scores: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Order each row by score descending, then clip index ascending."""
    order = np.lexsort((ids, -scores), axis=-1)
    return np.take_along_axis(scores, order, axis=1), np.take_along_axis(ids, order, axis=1)


def rank_embeddings(
    query_vectors: np.ndarray,
    clip_vectors: np.ndarray,
    *,
    batch_size: int = 256,
    progress: bool = False,
    use_gpu: bool | None = None,
    depth: int | None = None,
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Yield (first query row, scores[b, k], clip indices[b, k]) for successive query batches.

    k is the corpus size (complete rankings) unless `depth` cuts it. A cut ranking is still the
    exact head of the complete one: FAISS's choice among clips tied at its cut is arbitrary, so it
    is asked for TIE_MARGIN extra clips, and rows whose last returned score still equals the score
    at the cut (a tie run that may continue past it) are searched again at full depth.
    """
    if query_vectors.shape[1] != clip_vectors.shape[1]:
        raise UserError(
            f"query vectors have dimension {query_vectors.shape[1]} but clip vectors {clip_vectors.shape[1]}"
        )
    queries = l2_normalize(query_vectors)
    index = build_index(l2_normalize(clip_vectors), use_gpu=use_gpu)
    n = clip_vectors.shape[0]
    k = n if depth is None else min(depth, n)
    starts = range(0, queries.shape[0], batch_size)
    for start in tqdm(starts, desc="search", unit="batch", disable=not progress):
        block = queries[start : start + batch_size]
        wide = min(k + TIE_MARGIN, n) if k < n else n
        scores, ids = index.search(block, wide)
        if wide > k:
            unsure = np.flatnonzero(scores[:, -1] >= scores[:, k - 1])
            scores, ids = sort_ties(scores, ids)
            if unsure.size:
                full_scores, full_ids = sort_ties(*index.search(block[unsure], n))
                scores[unsure], ids[unsure] = full_scores[:, :wide], full_ids[:, :wide]
            yield start, scores[:, :k], ids[:, :k]
        else:
            yield start, *sort_ties(scores, ids)


def deep_rank(scores: np.ndarray, relevant: np.ndarray) -> int:
    """0-based rank of the best relevant clip in a complete ranking, from one query's scores.

    Counts clips that outrank it (higher score, or equal score and smaller index) instead of
    sorting the corpus.
    """
    rel_scores = scores[relevant]
    best = rel_scores.max()
    best_index = relevant[np.flatnonzero(rel_scores == best)[0]]
    return int((scores > best).sum() + (scores[:best_index] == best).sum())


def rank_scores(
    scores: np.ndarray, *, batch_size: int = 256, progress: bool = False, depth: int | None = None
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """The same batches from a full score matrix (score-based models)."""
    scores = np.asarray(scores, dtype=np.float32)
    starts = range(0, scores.shape[0], batch_size)
    for start in tqdm(starts, desc="rank", unit="batch", disable=not progress):
        block = scores[start : start + batch_size]
        # a stable sort on the negated scores keeps equal scores in index order
        order = np.argsort(-block, axis=1, kind="stable")[:, :depth]
        yield start, np.take_along_axis(block, order, axis=1), order.astype(np.int64)
