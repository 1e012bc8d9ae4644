"""Ranking heads at corpus scale: the exact kernel, certified FAISS and numpy, in one run.

For each corpus size (default 1,000 queries x 10,000, 100,000 and 1,000,000 clips, 512-d random
float32 embeddings, top-100 per query, what `eval` ranks) it times, interleaved per repeat:

  exact      `EmbeddingRanker.rank(depth=100)`: the canonical kernel over every pair
  certified  `CertifiedRanker.rank(depth=100)` on the CPU: FAISS candidates, re-scored and
             certified (the same bits as exact; checked here on every run)
  faiss      FAISS's float32 top-100 alone (`faiss.knn` on unit rows made beforehand): what
             certification adds to it
  numpy      float32 unit rows made beforehand, BLAS matmul per 65,536-clip block, argpartition
             and a merge: the float32 floor without any exactness

and prints seconds (min over repeats) and the ratios against exact, with the load average. The
crossover where certified FAISS beats exact is what `--index auto` uses (AUTO_MIN_CLIPS).

    python benches/bench_rank.py [--queries 1000] [--clips 10000,100000,1000000] [--dim 512]
                                 [--repeats 1] [--threads N]
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

DEPTH = 100
BLOCK = 65_536


def numpy_heads(xq: np.ndarray, xb: np.ndarray, k: int) -> np.ndarray:
    best_s = np.full((xq.shape[0], 0), -np.inf, np.float32)
    best_i = np.zeros((xq.shape[0], 0), np.int64)
    for start in range(0, xb.shape[0], BLOCK):
        s = xq @ xb[start : start + BLOCK].T
        kk = min(k, s.shape[1])
        part = np.argpartition(-s, kk - 1, axis=1)[:, :kk]
        best_s = np.concatenate([best_s, np.take_along_axis(s, part, 1)], axis=1)
        best_i = np.concatenate([best_i, part + start], axis=1)
        keep = np.argsort(-best_s, axis=1, kind="stable")[:, :k]
        best_s, best_i = np.take_along_axis(best_s, keep, 1), np.take_along_axis(best_i, keep, 1)
    return best_i


def heads(ranker) -> tuple[np.ndarray, np.ndarray]:
    parts = list(ranker.rank(depth=DEPTH, batch_size=256))
    return np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--clips", default="10000,100000,1000000")
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--threads", type=int, default=0, help="FAISS/BLAS threads (0: all cores)")
    args = ap.parse_args()

    import faiss

    from reasonaudio.retrieval.certified import AUTO_MIN_CLIPS, CertifiedRanker
    from reasonaudio.retrieval.index import EmbeddingRanker, l2_normalize

    if args.threads:
        faiss.omp_set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    q = rng.standard_normal((args.queries, args.dim), dtype=np.float32)
    print(json.dumps({"queries": args.queries, "dim": args.dim, "depth": DEPTH, "cores": os.cpu_count(),
                      "load_before": os.getloadavg()[0], "auto_min_clips": AUTO_MIN_CLIPS}), flush=True)
    for n in [int(x) for x in args.clips.split(",") if x]:
        c = rng.standard_normal((n, args.dim), dtype=np.float32)
        xq, xb = l2_normalize(q), l2_normalize(c)
        times: dict[str, list[float]] = {"exact": [], "certified": [], "faiss": [], "numpy": []}
        identical = True
        stats = {}
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            s_exact, i_exact = heads(EmbeddingRanker(q, c))
            times["exact"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            certified = CertifiedRanker(q, c, device="cpu")
            s_cert, i_cert = heads(certified)
            times["certified"].append(time.perf_counter() - t0)
            stats = certified.stats
            identical &= bool(np.array_equal(i_exact, i_cert) and np.array_equal(s_exact.view(np.int64), s_cert.view(np.int64)))
            t0 = time.perf_counter()
            faiss.knn(xq, xb, DEPTH, metric=faiss.METRIC_INNER_PRODUCT)
            times["faiss"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            i_np = numpy_heads(xq, xb, DEPTH)
            times["numpy"].append(time.perf_counter() - t0)
        best = {k: min(v) for k, v in times.items()}
        print(json.dumps({
            "clips": n,
            **{f"{k}_s": round(v, 2) for k, v in best.items()},
            "certified_over_exact": round(best["certified"] / best["exact"], 3),
            "faiss_over_exact": round(best["faiss"] / best["exact"], 3),
            "numpy_over_exact": round(best["numpy"] / best["exact"], 3),
            "certified_identical_to_exact": identical,
            "numpy_top1_agrees": round(float((i_np[:, 0] == i_exact[:, 0]).mean()), 4),
            "certified_stats": stats,
            "load": os.getloadavg()[0],
        }), flush=True)
        del c, xb


if __name__ == "__main__":
    main()
