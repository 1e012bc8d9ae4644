"""Exhaustive ranking of embeddings (FAISS inner product) or of a given score matrix.

One score per (query, clip), whatever library computes what
-----------------------------------------------------------
A BLAS or FAISS inner product rounds differently from one version, CPU kernel, tile position or
batch size to the next: two clips whose true scores are equal can come out one ulp apart in one
computation and bitwise equal in another, and then a tie is broken one way in the head of a
ranking and the other way where a deeper rank is counted. Metrics would depend on the libraries
CI happens to install. So every score the evaluator *reports or compares* is the **canonical
score**: the inner product of the float64 unit vectors, summed over dimensions in a fixed order
with elementwise IEEE operations (correctly rounded, no BLAS, no fused multiply-add) — the same
bits on every machine.

FAISS (and BLAS) still do the heavy lifting, as a filter: their float32 scores are within
`score_tolerance(dim)` of the canonical one, which is enough to prove which clips can reach the
head and which cannot; only those few are scored canonically. Ties (bitwise-equal canonical
scores) go to the smaller clip index.

FAISS searches on the GPU when `faiss.get_num_gpus() > 0`. GPU k-selection is limited to
k <= 2048, so the head search runs there whatever the corpus size, and deeper searches go to the
CPU copy of the index.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from tqdm.auto import tqdm

from reasonaudio.errors import UserError

GPU_MAX_K = 2048
TIE_MARGIN = 16


def canonical_unit(x: np.ndarray) -> np.ndarray:
    """float64 unit rows, with the norm summed in a fixed order; all-zero rows stay zero."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError("expected a 2-d array of vectors")
    squares = np.zeros(x.shape[0], dtype=np.float64)
    for j in range(x.shape[1]):
        squares += x[:, j] * x[:, j]
    norms = np.sqrt(squares)[:, None]
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """float32 unit rows (the canonical unit vectors rounded once); all-zero rows stay zero."""
    return np.ascontiguousarray(canonical_unit(x), dtype=np.float32)


def canonical_pair_scores(queries_t: np.ndarray, clips_t: np.ndarray, query_rows: np.ndarray, clip_rows: np.ndarray) -> np.ndarray:
    """Canonical scores of the pairs (query query_rows[i], clip clip_rows[i]), from the unit
    vectors transposed (dims x rows, C-contiguous) so that each dimension's gather reads one row.
    One pass per dimension over all pairs: the per-call overhead is paid once for many pairs."""
    acc = np.zeros(len(clip_rows), dtype=np.float64)
    for j in range(clips_t.shape[0]):
        acc += queries_t[j].take(query_rows) * clips_t[j].take(clip_rows)
    return acc


def score_tolerance(dim: int) -> float:
    """A bound, with a factor 2 to spare, on |float32 inner product of the float32-rounded unit
    vectors - canonical score|: rounding of the vectors (2 units of 2^-24, by Cauchy-Schwarz) plus
    a float32 sum of `dim` products (at most dim units of 2^-24 in any order)."""
    return (dim + 4) * 2.0**-23


def _faiss():
    from reasonaudio.errors import require

    return require("faiss", "eval", "ranking embeddings", hint="install it: pip install faiss-cpu, or pip install 'reasonaudio[eval]'")


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


class EmbeddingRanker:
    """Rankings, deep ranks and pair scores of one set of query and clip embeddings, all from the
    canonical score (see the module docstring)."""

    def __init__(self, query_vectors: np.ndarray, clip_vectors: np.ndarray, *, use_gpu: bool | None = None):
        if query_vectors.shape[1] != clip_vectors.shape[1]:
            raise UserError(
                f"query vectors have dimension {query_vectors.shape[1]} but clip vectors {clip_vectors.shape[1]}"
            )
        # float64 unit vectors are kept transposed only (dims x rows: each dimension's gather reads
        # one row); the float32 rows serve FAISS and BLAS
        queries, clips = canonical_unit(query_vectors), canonical_unit(clip_vectors)
        self.queries32 = np.ascontiguousarray(queries, dtype=np.float32)
        self.clips32 = np.ascontiguousarray(clips, dtype=np.float32)
        self.queries_t = np.ascontiguousarray(queries.T)
        self.clips_t = np.ascontiguousarray(clips.T)
        del queries, clips
        self.tolerance = score_tolerance(self.clips_t.shape[0])
        self.use_gpu = use_gpu
        self._index: FlatIndex | None = None

    @property
    def n_clips(self) -> int:
        return self.clips_t.shape[1]

    @property
    def n_queries(self) -> int:
        return self.queries_t.shape[1]

    def _pairs(self, query_rows: np.ndarray, clip_rows: np.ndarray) -> np.ndarray:
        return canonical_pair_scores(self.queries_t, self.clips_t, query_rows, clip_rows)

    @property
    def index(self) -> FlatIndex:
        if self._index is None:
            self._index = build_index(self.clips32, use_gpu=self.use_gpu)
        return self._index

    def pair_scores(self, query_rows: np.ndarray, clip_rows: np.ndarray) -> np.ndarray:
        """Canonical score of query_rows[i] against clip_rows[i]."""
        return self._pairs(np.asarray(query_rows, dtype=np.int64), np.asarray(clip_rows, dtype=np.int64))

    def _exact_head(self, row: int, approx: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """The exact top k of one query from its complete approximate score row.

        A clip of the exact top k has an approximate score of at least (k-th largest approximate
        score) - 2 x tolerance, so only those clips are scored canonically."""
        kth = np.partition(approx, approx.size - k)[approx.size - k]
        candidates = np.flatnonzero(approx >= kth - 2 * self.tolerance)
        exact = self._pairs(np.full(candidates.size, row, dtype=np.int64), candidates)[None, :]
        scores, ids = sort_ties(exact, candidates[None, :].astype(np.int64))
        return scores[0, :k], ids[0, :k]

    def rank(
        self, *, depth: int | None = None, batch_size: int = 256, progress: bool = False
    ) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """Yield (first query row, canonical scores[b, k], clip indices[b, k]) per query batch;
        k is the corpus size unless `depth` cuts it, and a cut ranking is exactly the head of the
        complete one."""
        n = self.n_clips
        k = n if depth is None else min(depth, n)
        starts = range(0, self.n_queries, batch_size)
        for start in tqdm(starts, desc="search", unit="batch", disable=not progress):
            rows = np.arange(start, min(start + batch_size, self.n_queries))
            wide = min(k + TIE_MARGIN, n)
            if wide == n:
                ids = np.broadcast_to(np.arange(n, dtype=np.int64), (rows.size, n))
                exact = self._pairs(np.repeat(rows, n), ids.reshape(-1)).reshape(ids.shape)
                scores, ids = sort_ties(exact, ids)
                yield start, scores[:, :k], ids[:, :k]
                continue
            approx, ids = self.index.search(self.queries32[rows], wide)
            ids = ids.astype(np.int64)
            exact = self._pairs(np.repeat(rows, ids.shape[1]), ids.reshape(-1)).reshape(ids.shape)
            scores, ids = sort_ties(exact, ids)
            # clips FAISS did not return score at most approx[:, -1] (approximately); when that is
            # not clearly below the k-th returned score, one of them may still belong to the head
            unsure = np.flatnonzero(approx[:, -1].astype(np.float64) >= approx[:, k - 1].astype(np.float64) - 2 * self.tolerance)
            scores, ids = scores[:, :k].copy(), ids[:, :k].copy()
            for i in unsure:
                full = self.clips32 @ self.queries32[rows[i]]
                scores[i], ids[i] = self._exact_head(int(rows[i]), full, k)
            yield start, scores, ids

    def approximate_rows(self, rows: np.ndarray) -> np.ndarray:
        """float32 BLAS scores of query rows against every clip (the filter deep ranks start from)."""
        return self.queries32[np.asarray(rows, dtype=np.int64)] @ self.clips32.T

    def deep_rank(self, row: int, relevant: np.ndarray, approx: np.ndarray | None = None) -> int:
        """0-based rank of the best relevant clip in the complete ranking of query `row`."""
        approx = self.approximate_rows(np.array([row])) if approx is None else np.asarray(approx)[None, :]
        return int(self.deep_ranks(np.array([row]), [relevant], approx)[0])

    def deep_ranks(self, rows: np.ndarray, relevant: list[np.ndarray], approx: np.ndarray) -> np.ndarray:
        """0-based ranks of the best relevant clip of each query in `rows` (approx: their rows of
        `approximate_rows`), each counting the clips that outrank it (higher canonical score, or
        equal and a smaller index): clips whose approximate score is clearly above or below are
        counted from it, the few within the tolerance are scored canonically. All canonical
        scores of the batch are computed in two passes, not one per query."""
        rows = np.asarray(rows, dtype=np.int64)
        rel = [np.asarray(r, dtype=np.int64) for r in relevant]
        lengths = np.array([len(r) for r in rel], dtype=np.int64)
        rel_scores = self._pairs(np.repeat(rows, lengths), np.concatenate(rel) if rel else np.zeros(0, np.int64))
        bests, best_index = np.empty(len(rows)), np.empty(len(rows), dtype=np.int64)
        offset = 0
        for i, r in enumerate(rel):
            scores = rel_scores[offset : offset + len(r)]
            offset += len(r)
            bests[i] = scores.max()
            best_index[i] = r[np.flatnonzero(scores == bests[i])[0]]
        approx = approx.astype(np.float64)
        above = (approx > bests[:, None] + self.tolerance).sum(axis=1)
        band_rows, band_clips = np.nonzero(np.abs(approx - bests[:, None]) <= self.tolerance)
        if band_rows.size:
            exact = self._pairs(rows[band_rows], band_clips)
            best = bests[band_rows]
            outranks = (exact > best) | ((exact == best) & (band_clips < best_index[band_rows]))
            above = above + np.bincount(band_rows[outranks], minlength=len(rows))
        return above.astype(np.int64)


def rank_embeddings(
    query_vectors: np.ndarray,
    clip_vectors: np.ndarray,
    *,
    batch_size: int = 256,
    progress: bool = False,
    use_gpu: bool | None = None,
    depth: int | None = None,
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Yield (first query row, scores[b, k], clip indices[b, k]) for successive query batches
    (see `EmbeddingRanker.rank`)."""
    ranker = EmbeddingRanker(query_vectors, clip_vectors, use_gpu=use_gpu)
    yield from ranker.rank(depth=depth, batch_size=batch_size, progress=progress)


def deep_rank(scores: np.ndarray, relevant: np.ndarray) -> int:
    """0-based rank of the best relevant clip in a complete ranking, from one query's given score row
    (score-based models: the scores are the model's own, compared bitwise).

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
