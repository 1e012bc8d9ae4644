"""Evaluation throughput: canonical ranking against numpy matmul + argsort, and the whole `evaluate`.

For each corpus size (default 1,000 queries x 10,000 and x 100,000 clips, 512-d random float32
embeddings) it times, interleaved (A B A B ...) in the same run:

  A  numpy: float32 unit vectors, one BLAS matmul + a stable argsort of every row (the floor)
  B  canonical head: `EmbeddingRanker.rank(depth=100)` (what `evaluate` runs) from the raw rows
  C  canonical complete rankings: `EmbeddingRanker.rank()` (every clip of every query)
  F  FAISS IndexFlatIP top-116 search alone (only when faiss is installed: an approximate filter
     the canonical ranking does without, for comparison)

and prints min and median of each and the ratios B/A, C/A (goal <= 1.15), with the load average
before and after. Then the whole `evaluate` (ranking, metrics, bootstrap, two-option) through the
`precomputed` adapter at the first size.

    python benches/bench_eval.py [--queries 1000] [--clips 10000,100000] [--dim 512] [--repeats 3]
                                 [--bootstrap 1000] [--no-evaluate]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl


def synthetic_benchmark(root: Path, n_queries: int, n_clips: int, rng: np.random.Generator) -> None:
    """Metadata tables only (no audio): precomputed embeddings never read the files."""
    tasks = ["negation", "order", "overlap", "duration", "mix"]
    clip_ids = [f"c{i:05d}" for i in range(n_clips)]
    query_ids = [f"q{i:04d}" for i in range(n_queries)]
    pl.DataFrame({"atom_id": ["a0"], "label": ["x"], "phrase": ["x"], "duration_s": [1.0], "source": ["g"],
                  "license": ["CC0"]}).write_parquet(root / "atoms.parquet")
    pl.DataFrame({"clip_id": clip_ids, "path": [f"audio/{c}.wav" for c in clip_ids], "pattern": ["sequential"] * n_clips,
                  "duration_s": [5.0] * n_clips, "n_events": [2] * n_clips}).write_parquet(root / "clips.parquet")
    pl.DataFrame(schema={"clip_id": pl.Utf8, "event_index": pl.Int64, "atom_id": pl.Utf8, "label": pl.Utf8,
                         "onset_sample": pl.Int64, "offset_sample": pl.Int64, "onset_s": pl.Float64,
                         "offset_s": pl.Float64, "gain_db": pl.Float64}).write_parquet(root / "events.parquet")
    pl.DataFrame({"query_id": query_ids, "task": [tasks[i % 5] for i in range(n_queries)],
                  "text": [f"query {i}" for i in range(n_queries)], "logic": ["{}"] * n_queries}).write_parquet(
        root / "queries.parquet")
    rel_q, rel_c = [], []
    for q in query_ids:
        for c in rng.choice(n_clips, size=int(rng.integers(1, 40)), replace=False):
            rel_q.append(q)
            rel_c.append(clip_ids[c])
    pl.DataFrame({"query_id": rel_q, "clip_id": rel_c, "relevance": [1] * len(rel_q)}).write_parquet(root / "qrels.parquet")
    pl.DataFrame({"query_id": query_ids, "positive_clip_id": [clip_ids[i] for i in rng.integers(0, n_clips, n_queries)],
                  "negative_clip_id": [clip_ids[i] for i in rng.integers(0, n_clips, n_queries)]}).write_parquet(
        root / "mc.parquet")
    (root / "manifest.json").write_text(json.dumps({"format_version": "1", "tool_version": "bench", "seed": 0,
                                                    "sample_rate": 16000, "params": {}, "counts": {}, "hashes": {}}))


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def interleaved(cases: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    """Each case once per round, in turn (A B C A B C ...), so drifting load hits all alike."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):
        for name, fn in cases.items():
            t = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t)
    return times


def report(times: dict[str, list[float]], floor: str) -> None:
    base = times[floor]
    for name, ts in times.items():
        line = f"  {name:<58} min {min(ts):7.3f} s  median {statistics.median(ts):7.3f} s"
        if name != floor:
            line += f"  ratio vs {floor[:1]}: min {min(ts) / min(base):5.2f}x  median {statistics.median(ts) / statistics.median(base):5.2f}x"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--clips", default="10000,100000", help="comma-separated corpus sizes")
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--no-evaluate", action="store_true", help="skip the whole-evaluate timing")
    args = parser.parse_args()

    from reasonaudio.evaluation.run import evaluate
    from reasonaudio.io.benchmark import load_benchmark
    from reasonaudio.retrieval import load_model
    from reasonaudio.retrieval.index import EmbeddingRanker, l2_normalize

    try:
        import faiss
    except ImportError:
        faiss = None

    rng = np.random.default_rng(0)
    sizes = [int(s) for s in args.clips.split(",")]
    print(f"{os.cpu_count()} CPUs; numpy {np.__version__}" + (f"; faiss {faiss.__version__}" if faiss else "; no faiss"))
    q = rng.standard_normal((args.queries, args.dim)).astype(np.float32)
    for n_clips in sizes:
        c = rng.standard_normal((n_clips, args.dim)).astype(np.float32)
        qn, cn = l2_normalize(q), l2_normalize(c)

        def floor() -> None:
            scores = qn @ cn.T
            np.argsort(-scores, axis=1, kind="stable")

        def drain(depth: int | None) -> None:
            # the ranker is built inside: norms of the raw rows are part of the work
            for _ in EmbeddingRanker(q, c).rank(depth=depth):
                pass

        cases: dict[str, Callable[[], object]] = {
            "A numpy matmul + stable argsort (floor)": floor,
            "B canonical head, top 100 (evaluate's ranking)": lambda: drain(100),
            "C canonical complete rankings": lambda: drain(None),
        }
        if faiss is not None:
            index = faiss.IndexFlatIP(args.dim)
            index.add(cn)
            cases["F FAISS FlatIP top-116 search alone (approximate)"] = lambda: index.search(qn, 116)
        print(f"\n{args.queries} queries x {n_clips} clips x {args.dim}-d, {args.repeats} rounds interleaved; {load()}")
        report(interleaved(cases, args.repeats), "A numpy matmul + stable argsort (floor)")
        print(f"  after: {load()}")

    if args.no_evaluate:
        return
    n_clips = sizes[0]
    c = np.random.default_rng(1).standard_normal((n_clips, args.dim)).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        synthetic_benchmark(root, args.queries, n_clips, rng)
        np.save(root / "q.npy", q)
        np.save(root / "c.npy", c)
        bench = load_benchmark(root)
        model = load_model(f"precomputed:{root / 'q.npy'},{root / 'c.npy'}")
        print(f"\nevaluate, {args.queries} x {n_clips}; {load()}")
        t = time.perf_counter()
        result = evaluate(bench, model, n_boot=args.bootstrap, progress=False)
        total = time.perf_counter() - t
    print(f"  evaluate total (rank + metrics + bootstrap {args.bootstrap} + two-option): {total:6.3f} s; {load()}")
    print(f"  Avg Acc@1 {result.summary['acc@1']['Avg']['mean']:.4f} (chance-level on random vectors)")


if __name__ == "__main__":
    main()
