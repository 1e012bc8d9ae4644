"""Approximate FAISS indexes (`eval --index ivf|hnsw`): faster heads that may miss clips.

Unlike `reasonaudio.retrieval.certified`, nothing here is certified: an inverted-file index
(`IndexIVFFlat`, which searches `nprobe` of its `nlist` k-means cells) or a graph
(`IndexHNSWFlat`, explored `efSearch` wide) proposes each query's candidates, the canonical kernel
re-scores them and orders them (score descending, then clip index ascending), and a clip the index
never proposed is missing from the head. So an approximate run says so: `recall` measures, on a
sample of queries ranked by the exact kernel too, the share of the exact top k the approximate
head holds, and `eval` records it in results.json with the index's parameters. `--index auto`
never chooses these indexes.

Scores in the head are canonical (the same numbers `--index exact` gives for those pairs); a query's
first relevant clip found in its head takes its position there (an underestimate of its rank when
the index missed clips above it), and one outside the head is counted by the exact kernel.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from reasonaudio import _core
from reasonaudio.errors import UserError
from reasonaudio.retrieval.certified import CLIP_BLOCK, _use_gpu, faiss_module
from reasonaudio.retrieval.index import EmbeddingRanker

APPROXIMATE = ("ivf", "hnsw")
# queries whose exact top k is computed to measure recall (evenly spaced over the query set)
RECALL_QUERIES = 256
# IVF: nlist = 4 sqrt(n) cells, nprobe = nlist / 16 searched (FAISS's guidelines for 1e4..1e7 rows);
# trained on at most 64 rows per cell (k-means with FAISS's fixed seed, so training is repeatable)
IVF_CELLS_PER_SQRT = 4
IVF_PROBE_SHARE = 16
IVF_TRAIN_PER_CELL = 64
# HNSW: 32 links per node, efConstruction 80; efSearch is at least twice the depth searched
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 80
HNSW_EF_SEARCH = 128


class ApproximateRanker(EmbeddingRanker):
    """`EmbeddingRanker` whose heads come from an approximate FAISS index (module docstring).
    `kind`: "ivf" or "hnsw"; `device`: None (a GPU when FAISS reports one; IVF only, HNSW has no
    GPU index), "cpu" or "cuda[:N]"."""

    def __init__(
        self,
        query_vectors: np.ndarray,
        clip_vectors: np.ndarray,
        *,
        kind: str,
        device: str | None = None,
        clip_block: int = CLIP_BLOCK,
        recall_queries: int = RECALL_QUERIES,
    ):
        super().__init__(query_vectors, clip_vectors)
        if kind not in APPROXIMATE:
            raise UserError(f"approximate index must be one of {', '.join(APPROXIMATE)}, not {kind!r}")
        self.kind, self.recall_queries = kind, recall_queries
        self.faiss = faiss_module()
        self.gpu = kind == "ivf" and _use_gpu(device)
        self.stats = {"exact_heads": 0, "exact_counts": 0}
        self.index, self.parameters = self._build(clip_block)

    def _unit_block(self, start: int, stop: int) -> np.ndarray:
        return _core.unit_rows_f32(np.ascontiguousarray(self.clips[start:stop]), self.clip_norms[start:stop])

    def _build(self, clip_block: int):
        faiss, n, dim = self.faiss, self.n_clips, self.clips.shape[1]
        if self.kind == "hnsw":
            index = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
            parameters = {"M": HNSW_M, "efConstruction": HNSW_EF_CONSTRUCTION}
        else:
            nlist = max(1, min(n // 39, int(IVF_CELLS_PER_SQRT * math.sqrt(n))))  # FAISS wants 39 rows per cell
            quantizer = faiss.IndexFlatIP(dim)
            index = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
            # training rows spread evenly over the corpus, read block by block
            n_train = min(n, nlist * IVF_TRAIN_PER_CELL)
            rows = np.linspace(0, n - 1, n_train).astype(np.int64)
            train = np.concatenate(
                [self._unit_block(int(r), int(r) + 1) for r in rows]
            ) if n_train < n else self._unit_block(0, n)
            index.train(train)
            index.nprobe = max(1, nlist // IVF_PROBE_SHARE)
            parameters = {"nlist": nlist, "nprobe": int(index.nprobe), "trained_on": n_train}
            if self.gpu:
                self._gpu_res = faiss.StandardGpuResources()
                index = faiss.index_cpu_to_gpu(self._gpu_res, 0, index)
        for start in range(0, n, clip_block):
            index.add(self._unit_block(start, min(start + clip_block, n)))
        return index, parameters

    def _candidates(self, rows: np.ndarray, k: int) -> np.ndarray:
        xq = _core.unit_rows_f32(np.ascontiguousarray(self.queries[rows]), self.query_norms[rows])
        if self.kind == "hnsw":
            self.index.hnsw.efSearch = max(HNSW_EF_SEARCH, 2 * k)
        _, ids = self.index.search(xq, k)
        return ids

    def _rank_rows(
        self, start: int, stop: int, k: int, targets: tuple[np.ndarray, np.ndarray] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self._rank(np.arange(start, stop), k, targets)

    def _rank(
        self, rows: np.ndarray, k: int, targets: tuple[np.ndarray, np.ndarray] | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        nq, n = len(rows), self.n_clips
        scores = np.zeros((nq, k), dtype=np.float64)
        clips = np.zeros((nq, k), dtype=np.int64)
        above = np.zeros(nq, dtype=np.int64)
        found = np.zeros(nq, dtype=bool)
        if k > 0:
            cand = self._candidates(rows, k)
            valid = cand >= 0
            canon = np.full(cand.shape, -np.inf)
            canon[valid] = self.pair_scores(np.repeat(rows, k)[valid.ravel()], cand[valid])
            order = np.lexsort((np.where(valid, cand, n), -canon), axis=-1)
            canon = np.take_along_axis(canon, order, axis=1)
            cand = np.take_along_axis(cand, order, axis=1)
            full = valid.all(axis=1)
            scores[full], clips[full] = canon[full], cand[full]
            if targets is not None:
                hit = (cand == targets[1][:, None]) & valid
                found = full & hit.any(axis=1)
                above[found] = hit[found].argmax(axis=1)
        else:
            full = np.ones(nq, dtype=bool)
        # the exact kernel for queries the index gave fewer than k clips (an IVF search whose
        # probed cells hold fewer), and to count first relevant clips outside the head
        short = np.flatnonzero(~full)
        deep = np.flatnonzero(full & ~found) if targets is not None else np.zeros(0, np.int64)
        self.stats["exact_heads"] += len(short)
        self.stats["exact_counts"] += len(deep)
        for sub, depth in ((short, k), (deep, 0)):
            if not len(sub):
                continue
            ts, tc = (targets[0][sub], targets[1][sub]) if targets is not None else (None, None)
            q = np.ascontiguousarray(self.queries[rows[sub]])
            s, c, a = _core.canonical_rank(_core.UnitRows(q, self.query_norms[rows[sub]]), self._clip_rows(), depth, ts, tc)
            if depth:
                scores[sub], clips[sub] = s, c
            if targets is not None:
                above[sub] = a
        return scores, clips, above

    def recall(self, k: int, rows: Sequence[int] | None = None) -> dict:
        """Share of the exact top k (canonical kernel) that the approximate top k holds, averaged
        over `rows` (default: RECALL_QUERIES queries evenly spaced over the query set)."""
        k = min(k, self.n_clips)
        if rows is None:
            m = min(self.n_queries, self.recall_queries)
            rows = np.unique(np.linspace(0, self.n_queries - 1, m).astype(np.int64)) if m else np.zeros(0, np.int64)
        rows = np.asarray(rows, dtype=np.int64)
        if not len(rows) or k == 0:
            return {"recall": 1.0, "queries": 0, "k": k}
        q = np.ascontiguousarray(self.queries[rows])
        _, exact, _ = _core.canonical_rank(_core.UnitRows(q, self.query_norms[rows]), self._clip_rows(), k)
        _, approx, _ = self._rank(rows, k)
        held = sum(len(np.intersect1d(a, e)) for a, e in zip(approx, exact))
        return {"recall": held / (len(rows) * k), "queries": int(len(rows)), "k": k}

    def describe(self, k: int) -> dict:
        """What results.json records of an approximate run: the index, its parameters and its recall."""
        return {"index": self.kind, "approximate": True, "device": "cuda" if self.gpu else "cpu",
                "parameters": self.parameters, "recall_of_exact_top_k": self.recall(k)}


__all__ = ["APPROXIMATE", "ApproximateRanker"]
