"""Exhaustive ranking of embeddings (the canonical score, in Rust) or of a given score matrix.

One score per (query, clip), whatever library computes what
-----------------------------------------------------------
A BLAS or FAISS inner product rounds differently from one version, CPU kernel, tile position or
batch size to the next: two clips whose true scores are equal can come out one ulp apart in one
computation and bitwise equal in another, and then a tie is broken one way in the head of a
ranking and the other way where a deeper rank is counted. Metrics would depend on the libraries
CI happens to install. So every score the evaluator *reports or compares* is the **canonical
score**: the inner product of the float64 unit vectors, summed over dimensions in a fixed order
with elementwise IEEE operations (correctly rounded, no BLAS, no fused multiply-add) — the same
bits on every machine. Each float64 unit vector is the float32 row divided by its norm (the
square root of the squares summed in dimension order); an all-zero row stays zero.

The Rust kernel (`reasonaudio._core.canonical_rank`, rust/core/src/rank.rs) computes every
canonical score of every (query, clip) pair — vectorised across pairs, each pair's sum in
dimension order — on all cores with the GIL released, normalising blocks of the float32 rows into
float64 as it goes (no float64 copy of the corpus is kept). Scoring every pair exactly costs about
as much as a float32 BLAS product on CPUs with wide vector units. Where a float32 search is much
faster (FAISS on a GPU), `reasonaudio.retrieval.certified` lets it propose candidates that this
score then re-ranks, with a proof that nothing it left out could enter the head. Ties
(bitwise-equal canonical scores) go to the smaller clip index.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
from reasonaudio.console import progress_bar as tqdm

from reasonaudio import _core
from reasonaudio.errors import UserError

# relevant (query, clip) pairs scored in one call of the core when the best relevant clip of each
# query is found: bounds that step's arrays (rows, clips, scores: 24 B a pair) whatever the corpus
_PAIRS = 1 << 21


def _rows(x: np.ndarray, what: str) -> np.ndarray:
    x = np.ascontiguousarray(x, dtype=np.float32)
    if x.ndim != 2:
        raise UserError(f"{what}: expected a 2-d array of vectors, got shape {x.shape}")
    return x


def _norms(x: np.ndarray, what: str) -> np.ndarray:
    if x.shape[1] == 0:
        raise UserError(f"{what}: vectors of dimension 0")
    try:
        return _core.unit_norms(x)
    except ValueError as e:
        raise UserError(f"{what}: {e}") from None


def l2_normalize(x: np.ndarray) -> np.ndarray:
    """float32 unit rows (the canonical float64 unit vectors of the float32 rows, rounded once);
    all-zero rows stay zero."""
    x = _rows(x, "vectors")
    if x.shape[0] == 0 or x.shape[1] == 0:
        return x.copy()
    return _core.unit_rows_f32(x, _norms(x, "vectors"))


def sort_ties(scores: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Order each row by score descending, then clip index ascending."""
    order = np.lexsort((ids, -scores), axis=-1)
    return np.take_along_axis(scores, order, axis=1), np.take_along_axis(ids, order, axis=1)


class EmbeddingRanker:
    """Rankings, ranks of relevant clips and pair scores of one set of query and clip embeddings,
    all from the canonical score (see the module docstring). Keeps the float32 rows (no copy when
    they are already C-contiguous float32) and their float64 norms."""

    def __init__(self, query_vectors: np.ndarray, clip_vectors: np.ndarray):
        queries, clips = _rows(query_vectors, "query vectors"), _rows(clip_vectors, "clip vectors")
        if queries.shape[1] != clips.shape[1]:
            raise UserError(f"query vectors have dimension {queries.shape[1]} but clip vectors {clips.shape[1]}")
        self.queries, self.clips = queries, clips
        self.query_norms, self.clip_norms = _norms(queries, "query vectors"), _norms(clips, "clip vectors")

    @property
    def n_clips(self) -> int:
        return self.clips.shape[0]

    @property
    def n_queries(self) -> int:
        return self.queries.shape[0]

    def _clip_rows(self) -> _core.UnitRows:
        """The clips with their norms, as the core ranks them."""
        return _core.UnitRows(self.clips, self.clip_norms)

    def pair_scores(self, query_rows: np.ndarray, clip_rows: np.ndarray) -> np.ndarray:
        """Canonical score of query_rows[i] against clip_rows[i]."""
        q = np.ascontiguousarray(query_rows, dtype=np.int64)
        c = np.ascontiguousarray(clip_rows, dtype=np.int64)
        return _core.canonical_pair_scores(_core.UnitRows(self.queries, self.query_norms), self._clip_rows(), q, c)

    def _best_relevant(self, rows: np.ndarray, relevant: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per query: (has relevant clips, canonical score of the best, its clip index — the smallest
        among equal scores): the first relevant clip of the complete ranking."""
        rel = [np.asarray(r, dtype=np.int64) for r in relevant]
        lengths = np.array([len(r) for r in rel], dtype=np.int64)
        has = lengths > 0
        best_score = np.zeros(len(rel))
        best_clip = np.zeros(len(rel), dtype=np.int64)
        # scored a group of queries at a time, up to _PAIRS pairs (or one query) each: a batch of
        # queries that most of a ten-million-clip corpus satisfies has ~20M relevant pairs, whose
        # row, clip and score arrays at once took ~0.5 GB
        group_ends = np.cumsum(lengths)
        lo = 0
        while lo < len(rel):
            base = int(group_ends[lo - 1]) if lo else 0
            hi = max(lo + 1, int(np.searchsorted(group_ends, base + _PAIRS, "right")))
            scores = self.pair_scores(np.repeat(rows[lo:hi], lengths[lo:hi]), np.concatenate(rel[lo:hi]))
            offset = 0
            for i in range(lo, hi):
                r = rel[i]
                s = scores[offset : offset + len(r)]
                offset += len(r)
                if len(r):
                    best_score[i] = s.max()
                    best_clip[i] = r[s == best_score[i]].min()
            lo = hi
        return has, best_score, best_clip

    def _rank_rows(
        self, start: int, stop: int, k: int, targets: tuple[np.ndarray, np.ndarray] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        ts, tc = targets if targets is not None else (None, None)
        return _core.canonical_rank(_core.UnitRows(self.queries[start:stop], self.query_norms[start:stop]), self._clip_rows(), k, ts, tc)

    def rank(
        self,
        *,
        depth: int | None = None,
        batch_size: int = 256,
        progress: bool = False,
        relevant: Sequence[np.ndarray] | None = None,
    ) -> Iterator[tuple]:
        """Yield (first query row, canonical scores[b, k], clip indices[b, k]) per query batch;
        k is the corpus size unless `depth` cuts it, and a cut ranking is exactly the head of the
        complete one. With `relevant` (per query, its relevant clip indices), each batch also
        carries the 0-based rank in the complete ranking of each query's first relevant clip (-1
        for a query without any), counted in the same pass: (start, scores, ids, first)."""
        n = self.n_clips
        k = n if depth is None else min(depth, n)
        if relevant is not None and len(relevant) != self.n_queries:
            raise ValueError(f"{len(relevant)} relevant lists for {self.n_queries} queries")
        starts = range(0, self.n_queries, batch_size)
        for start in tqdm(starts, desc="rank", unit="batch", disable=not progress):
            stop = min(start + batch_size, self.n_queries)
            if relevant is None:
                scores, ids, _ = self._rank_rows(start, stop, k)
                yield start, scores, ids
                continue
            has, best_score, best_clip = self._best_relevant(np.arange(start, stop), relevant[start:stop])
            scores, ids, above = self._rank_rows(start, stop, k, (best_score, best_clip))
            yield start, scores, ids, np.where(has, above, -1)

    def deep_ranks(self, rows: np.ndarray, relevant: Sequence[np.ndarray]) -> np.ndarray:
        """0-based ranks of the best relevant clip of each query in `rows` (each with at least one
        relevant clip) in its complete ranking: the clips that outrank it (higher canonical score,
        or equal and a smaller index), counted in one pass over the corpus."""
        rows = np.asarray(rows, dtype=np.int64)
        if any(len(r) == 0 for r in relevant):
            raise ValueError("every query needs a relevant clip")
        _, best_score, best_clip = self._best_relevant(rows, relevant)
        q = np.ascontiguousarray(self.queries[rows])
        _, _, above = _core.canonical_rank(_core.UnitRows(q, self.query_norms[rows]), self._clip_rows(), 0, best_score, best_clip)
        return above

    def deep_rank(self, row: int, relevant: np.ndarray) -> int:
        """0-based rank of the best relevant clip in the complete ranking of query `row`."""
        return int(self.deep_ranks(np.array([row]), [np.asarray(relevant)])[0])


def rank_embeddings(
    query_vectors: np.ndarray,
    clip_vectors: np.ndarray,
    *,
    batch_size: int = 256,
    progress: bool = False,
    depth: int | None = None,
) -> Iterator[tuple]:
    """Yield (first query row, scores[b, k], clip indices[b, k]) for successive query batches
    (see `EmbeddingRanker.rank`)."""
    ranker = EmbeddingRanker(query_vectors, clip_vectors)
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
