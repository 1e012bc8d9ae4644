"""Exhaustive ranking: FAISS inner product on L2-normalised vectors, or a given score matrix.

Rankings are complete (every clip, best first) because the metrics need the rank of every
relevant clip. Queries are processed in batches so memory stays at batch x corpus.

Tie-breaking is part of the result: clips with *equal* scores (bitwise-equal float32 values) are
ordered by their index in the corpus, smaller first. FAISS's own order among equal scores is an
implementation detail, so each batch is re-sorted by (score descending, clip index ascending).

FAISS runs on the GPU when `faiss.get_num_gpus() > 0` and the corpus fits the GPU selection limit
(k <= 2048 in FAISS); larger corpora are ranked on the CPU because GPU k-selection cannot return a
complete ranking beyond that size.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from tqdm.auto import tqdm

from reasonaudio.errors import UserError

GPU_MAX_K = 2048


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


def build_index(clip_vectors: np.ndarray, *, use_gpu: bool | None = None):
    """An IndexFlatIP over the (already normalised) clip vectors, on GPU when possible."""
    faiss = _faiss()
    index = faiss.IndexFlatIP(clip_vectors.shape[1])
    index.add(np.ascontiguousarray(clip_vectors, dtype=np.float32))
    gpu_ok = faiss.get_num_gpus() > 0 and clip_vectors.shape[0] <= GPU_MAX_K and hasattr(faiss, "index_cpu_to_all_gpus")
    if use_gpu is None:
        use_gpu = gpu_ok
    if use_gpu and gpu_ok:
        index = faiss.index_cpu_to_all_gpus(index)
    return index


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
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Yield (first query row, scores[b, n], clip indices[b, n]) for successive query batches."""
    if query_vectors.shape[1] != clip_vectors.shape[1]:
        raise UserError(
            f"query vectors have dimension {query_vectors.shape[1]} but clip vectors {clip_vectors.shape[1]}"
        )
    queries = l2_normalize(query_vectors)
    index = build_index(l2_normalize(clip_vectors), use_gpu=use_gpu)
    k = clip_vectors.shape[0]
    starts = range(0, queries.shape[0], batch_size)
    for start in tqdm(starts, desc="search", unit="batch", disable=not progress):
        scores, ids = index.search(queries[start : start + batch_size], k)
        yield start, *sort_ties(scores, ids)


def rank_scores(
    scores: np.ndarray, *, batch_size: int = 256, progress: bool = False
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """The same batches from a full score matrix (score-based models)."""
    scores = np.asarray(scores, dtype=np.float32)
    starts = range(0, scores.shape[0], batch_size)
    for start in tqdm(starts, desc="rank", unit="batch", disable=not progress):
        block = scores[start : start + batch_size]
        # a stable sort on the negated scores keeps equal scores in index order
        order = np.argsort(-block, axis=1, kind="stable")
        yield start, np.take_along_axis(block, order, axis=1), order.astype(np.int64)
