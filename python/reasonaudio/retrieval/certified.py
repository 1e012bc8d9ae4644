"""FAISS proposes, the canonical score decides: rankings equal to the exact ones, bit for bit.

FAISS (`IndexFlatIP`-style brute force, float32, on CPU or a GPU) scores every (query, clip) pair
of the float32 unit rows and keeps each query's K best candidates. The canonical kernel
(`reasonaudio._core`, see `reasonaudio.retrieval.index`) re-scores those candidates exactly and
orders them (score descending, then clip index ascending). The head of that order is the head
of the complete canonical ranking as soon as it is **certified**:

    every clip left out has a FAISS score <= t (the K-th candidate's FAISS score), so a canonical
    score <= t + eps(d) (see `float32_score_error`); a kept canonical score s > t + eps(d) is then
    above every clip left out, and so is every position above it.

Per query, the candidate depth K grows (x4) until the `depth` positions every metric needs are
certified; a query whose K would pass a quarter of the corpus (many exact ties or near-ties
within eps, a zero query vector) is ranked by the exact kernel instead. The rank of a query's
first relevant clip (MRR) is certified the same way when its canonical score is above t + eps (it
is then counted among the candidates); otherwise the exact kernel counts the clips above it, for
that query alone. So every ranking, score, rank and metric equals `index.EmbeddingRanker`'s.

FAISS never sees the whole corpus at once: clips are normalised (canonical unit rows rounded
once to float32) and searched in blocks of `CLIP_BLOCK` rows, the blocks' results merged, so a
memory-mapped corpus is read block by block and memory is bounded by the block plus the
candidates (queries x K).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import lru_cache

import numpy as np

from reasonaudio import _core
from reasonaudio.errors import UserError, require
from reasonaudio.retrieval.index import EmbeddingRanker

INDEXES = ("exact", "faiss", "auto")
# `auto` (benches/bench_rank.py, docs/results/scale.md): on CPUs certified FAISS took 1.3x the exact
# kernel's time at 10k, 100k and 1M clips (FAISS's float32 search alone is not faster than the
# float64 AVX-512 kernel, and certification adds the normalisation and re-scoring), so `auto` ranks
# exactly there; on a GPU FAISS's search is two orders of magnitude faster, and `auto` takes it
# from this many clips (below it, moving the corpus to the GPU outweighs the search).
AUTO_MIN_CLIPS = 50_000
CLIP_BLOCK = 65_536
# queries searched in one pass over the clip blocks (their candidates are held together)
QUERY_PASS = 4096
GROWTH = 4
# FAISS's GPU k-selection stops at 2048 candidates (GPU_MAX_SELECTION_K)
GPU_MAX_K = 2048


@lru_cache(maxsize=None)
def float32_score_error(dim: int) -> float:
    """A rigorous bound on |FAISS score - canonical score| for one (query, clip) pair of dimension d.

    Let x, y be the canonical float64 unit vectors (zero rows stay zero), a = fl32(x), b = fl32(y)
    what FAISS is given, u = 2^-24 and v = 2^-53 the float32 and float64 unit roundoffs, and
    g(n, r) = n r / (1 - n r).

    - Norms: each canonical norm is a float64 sum of d squares, a square root and a division per
      element, so ||x|| <= 1 + g(d + 2, v) =: m (and ||x|| = 0 for a zero row); Cauchy-Schwarz
      gives sum |x_i y_i| <= m^2 and sum |a_i b_i| <= (1 + u)^2 m^2.
    - Rounding the unit vectors to float32: a_i = x_i (1 + e_i), |e_i| <= u, so
      |a.b - x.y| <= (2u + u^2) sum |x_i y_i|.
    - FAISS's float32 dot product, summed in any order, with or without fused multiply-adds (BLAS
      tiles, SIMD lanes, GPU GEMM): |F - a.b| <= g(d, u) sum |a_i b_i| (Higham, Accuracy and
      Stability of Numerical Algorithms, 2nd ed., eq. 3.5, which holds for every summation order).
    - The canonical float64 sum, in dimension order: |C - x.y| <= g(d, v) sum |x_i y_i|.
    - Underflow: a float32 product or unit element below 2^-126 may be flushed to zero (FTZ/DAZ
      builds); each of the 2d + d operations loses at most 2^-126 absolutely.

    The float32 steps assume float32 arithmetic throughout (FAISS's flat search on CPU, and its
    float32 GEMM on GPU); a build or cuBLAS setting that computes in TF32 or float16 is outside
    this bound.

    So |F - C| <= m^2 ((1 + u)^2 g(d, u) + 2u + u^2 + g(d, v)) + 3 d 2^-126. The sum is taken
    with a relative slack of 2^-20 for its own float64 rounding. Vectors that are not unit are
    normalised first (the canonical score is that of their unit vectors), so the bound holds for
    every finite input; for d = 512 it is about 3.07e-5.
    """
    if dim < 1:
        raise ValueError(f"dimension {dim}")
    u, v = 2.0**-24, 2.0**-53

    def g(n: int, r: float) -> float:
        if n * r >= 1:
            raise ValueError(f"dimension {dim} is too large for a float32 error bound")
        return n * r / (1 - n * r)

    m2 = (1 + g(dim + 2, v)) ** 2
    bound = m2 * ((1 + u) ** 2 * g(dim, u) + 2 * u + u * u + g(dim, v)) + 3 * dim * 2.0**-126
    return bound * (1 + 2.0**-20)


def faiss_module():
    return require("faiss", "faiss", "--index faiss (faiss-cpu; faiss-gpu for CUDA)")


def faiss_gpus() -> int:
    """GPUs FAISS can use (0 without FAISS or with a CPU-only build)."""
    try:
        faiss = faiss_module()
    except UserError:
        return 0
    get = getattr(faiss, "get_num_gpus", None)
    return int(get()) if get is not None else 0


def choose_index(index: str, n_clips: int, device: str | None = None) -> str:
    """The index `auto` stands for: FAISS on a GPU from AUTO_MIN_CLIPS clips, else exact."""
    if index not in INDEXES:
        raise UserError(f"--index must be one of {', '.join(INDEXES)}, not {index!r}")
    if index != "auto":
        return index
    on_gpu = faiss_gpus() > 0 and not (device is not None and not device.startswith("cuda"))
    return "faiss" if on_gpu and n_clips >= AUTO_MIN_CLIPS else "exact"


def _use_gpu(device: str | None) -> bool:
    gpus = faiss_gpus()
    if device is not None and device.startswith("cuda"):
        if gpus == 0:
            raise UserError(f"--device {device}: FAISS reports no GPU (install faiss-gpu with CUDA visible)")
        return True
    if device is not None:
        return False
    return gpus > 0


class CertifiedRanker(EmbeddingRanker):
    """`EmbeddingRanker` whose heads come from FAISS candidates, certified (module docstring):
    the same yields, bit for bit. `device`: None (a GPU when FAISS reports one), "cpu" or "cuda[:N]"."""

    def __init__(
        self,
        query_vectors: np.ndarray,
        clip_vectors: np.ndarray,
        *,
        device: str | None = None,
        clip_block: int = CLIP_BLOCK,
        extra_candidates: int = 64,
    ):
        super().__init__(query_vectors, clip_vectors)
        self.clip_block, self.extra_candidates = clip_block, extra_candidates
        self.faiss = faiss_module()
        self.gpu = _use_gpu(device)
        self.gpu_device = -1  # FAISS's current device
        if self.gpu and device is not None and device.startswith("cuda:"):
            if not device[5:].isdigit():
                raise UserError(f"--device {device}: expected cuda or cuda:N")
            self.gpu_device = int(device[5:])
        self.eps = float32_score_error(self.clips.shape[1])
        self._gpu_res = None
        # counters of how the heads were obtained (for benches and tests)
        self.stats = {"certified": 0, "exact_heads": 0, "exact_counts": 0, "passes": 0}

    # ---- FAISS candidates ------------------------------------------------------------------------

    def _search(self, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """FAISS's k best (float32 score, clip) of query `rows` over the whole corpus, block by block."""
        faiss = self.faiss
        self.stats["passes"] += 1
        xq = _core.unit_rows_f32(np.ascontiguousarray(self.queries[rows]), self.query_norms[rows])
        heap = faiss.ResultHeap(len(rows), k, keep_max=True)
        for start in range(0, self.n_clips, self.clip_block):
            stop = min(start + self.clip_block, self.n_clips)
            xb = _core.unit_rows_f32(np.ascontiguousarray(self.clips[start:stop]), self.clip_norms[start:stop])
            kb = min(k, stop - start)
            if self.gpu:
                if self._gpu_res is None:
                    self._gpu_res = faiss.StandardGpuResources()
                dist, ids = faiss.knn_gpu(self._gpu_res, xq, xb, kb, metric=faiss.METRIC_INNER_PRODUCT, device=self.gpu_device)
            else:
                dist, ids = faiss.knn(xq, xb, kb, metric=faiss.METRIC_INNER_PRODUCT)
            ids = np.where(ids >= 0, ids + start, -1)
            heap.add_result(np.ascontiguousarray(dist, dtype=np.float32), np.ascontiguousarray(ids, dtype=np.int64))
        heap.finalize()
        return heap.D, heap.I

    # ---- the certified head ------------------------------------------------------------------------

    def _certify(
        self, rows: np.ndarray, k: int, targets: tuple[np.ndarray, np.ndarray] | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Heads of `rows` (scores, clips [len(rows), k]), outranking counts, and per row whether
        the head and the count are certified."""
        nq, n = len(rows), self.n_clips
        scores = np.zeros((nq, k), dtype=np.float64)
        clips = np.zeros((nq, k), dtype=np.int64)
        above = np.zeros(nq, dtype=np.int64)
        head_ok = np.zeros(nq, dtype=bool)
        count_ok = np.zeros(nq, dtype=bool) if targets is not None else np.ones(nq, dtype=bool)
        depth = min(n, max(2 * k, k + self.extra_candidates))
        pending = np.arange(nq)
        # deeper than a quarter of the corpus, the exact kernel is the cheaper way
        cap = min(GPU_MAX_K, n // 4) if self.gpu else n // 4
        while len(pending) and depth <= cap:
            dist, cand = self._search(rows[pending], depth)
            qrows = np.repeat(rows[pending], depth)
            valid = cand >= 0
            canon = np.full(cand.shape, -np.inf)
            canon[valid] = self.pair_scores(qrows[valid.ravel()], cand[valid])
            # FAISS's K-th score bounds everything it left out; rounded up once more for the sum
            floor = np.where(valid.all(axis=1) & (depth < n), dist[:, -1].astype(np.float64), -np.inf)
            bar = np.nextafter(floor + self.eps, np.inf)
            order = np.lexsort((np.where(valid, cand, n), -canon), axis=-1)
            canon = np.take_along_axis(canon, order, axis=1)
            cand = np.take_along_axis(cand, order, axis=1)
            ok = canon[:, k - 1] > bar if k > 0 else np.ones(len(pending), dtype=bool)
            if targets is not None:
                ts, tc = targets[0][pending], targets[1][pending]
                t_ok = ts > bar
                outrank = (canon > ts[:, None]) | ((canon == ts[:, None]) & (cand < tc[:, None]))
                got = np.flatnonzero(t_ok & ok)
                above[pending[got]] = outrank[got].sum(axis=1)
                count_ok[pending[got]] = True
            done = np.flatnonzero(ok)
            scores[pending[done]] = canon[done, :k]
            clips[pending[done]] = cand[done, :k]
            head_ok[pending[done]] = True
            pending = pending[~ok]
            depth = min(n, depth * GROWTH)
        return scores, clips, above, head_ok, count_ok

    def _rank_rows(
        self, start: int, stop: int, k: int, targets: tuple[np.ndarray, np.ndarray] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rows = np.arange(start, stop)
        scores, clips, above, head_ok, count_ok = self._certify(rows, k, targets)
        exact = np.flatnonzero(~(head_ok & count_ok))
        self.stats["certified"] += int(head_ok.sum())
        if len(exact):
            # the exact kernel for these queries alone: uncertified heads, and first relevant clips
            # whose rank lies below what the candidates certify
            self.stats["exact_heads"] += int((~head_ok).sum())
            self.stats["exact_counts"] += int((head_ok & ~count_ok).sum())
            sub = rows[exact]
            ts, tc = (targets[0][exact], targets[1][exact]) if targets is not None else (None, None)
            q = np.ascontiguousarray(self.queries[sub])
            s, c, a = _core.canonical_rank(_core.UnitRows(q, self.query_norms[sub]), _core.UnitRows(self.clips, self.clip_norms), k, ts, tc)
            scores[exact], clips[exact], above[exact] = s, c, a
        return scores, clips, above

    def rank(
        self,
        *,
        depth: int | None = None,
        batch_size: int = 256,
        progress: bool = False,
        relevant: Sequence[np.ndarray] | None = None,
    ) -> Iterator[tuple]:
        """As `EmbeddingRanker.rank`; complete rankings (no `depth`) come from the exact kernel.
        Queries are certified QUERY_PASS at a time (one pass over the clip blocks each) and
        yielded in batches of `batch_size`."""
        if depth is None or depth >= self.n_clips:
            yield from super().rank(depth=depth, batch_size=batch_size, progress=progress, relevant=relevant)
            return
        wide = max(batch_size, QUERY_PASS)
        for start, scores, ids, *first in super().rank(depth=depth, batch_size=wide, progress=progress, relevant=relevant):
            for s in range(0, scores.shape[0], batch_size):
                part = (start + s, scores[s : s + batch_size], ids[s : s + batch_size])
                yield part + tuple(f[s : s + batch_size] for f in first)


def make_ranker(index: str, query_vectors: np.ndarray, clip_vectors: np.ndarray, *, device: str | None = None) -> EmbeddingRanker:
    """The ranker behind `--index`: `exact` (the canonical kernel over every pair), `faiss`
    (certified FAISS candidates: the same results), `auto` (see `choose_index`; never an approximate index,
    `reasonaudio.retrieval.approximate`)."""
    chosen = choose_index(index, len(clip_vectors), device)
    if chosen == "faiss":
        return CertifiedRanker(query_vectors, clip_vectors, device=device)
    return EmbeddingRanker(query_vectors, clip_vectors)


__all__ = ["AUTO_MIN_CLIPS", "INDEXES", "CertifiedRanker", "choose_index", "float32_score_error", "make_ranker"]
