"""Evaluation throughput: 1,000 queries x 10,000 precomputed 512-d embeddings, metrics included.

Prints the time of FAISS IndexFlatIP alone (full-depth search, k = corpus size), the same scores as
one numpy matmul + argsort (baseline in the same run), and the whole `evaluate` (ranking, tie
re-sort, metrics, bootstrap, two-option) through the `precomputed` adapter. Goal: total <= 2 s.

    python benches/bench_eval.py [--queries 1000] [--clips 10000] [--dim 512] [--bootstrap 1000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--clips", type=int, default=10000)
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--bootstrap", type=int, default=1000)
    args = parser.parse_args()

    import faiss

    from reasonaudio.io.benchmark import load_benchmark
    from reasonaudio.evaluation.run import evaluate
    from reasonaudio.retrieval import load_model
    from reasonaudio.retrieval.index import l2_normalize, rank_embeddings

    rng = np.random.default_rng(0)
    q = rng.standard_normal((args.queries, args.dim)).astype(np.float32)
    c = rng.standard_normal((args.clips, args.dim)).astype(np.float32)
    print(f"{args.queries} queries x {args.clips} clips x {args.dim}-d; faiss {faiss.__version__}, "
          f"{faiss.omp_get_max_threads()} OpenMP threads, GPUs: {faiss.get_num_gpus()}")

    qn, cn = l2_normalize(q), l2_normalize(c)
    t = time.perf_counter()
    index = faiss.IndexFlatIP(args.dim)
    index.add(cn)
    index.search(qn, args.clips)
    print(f"FAISS FlatIP search alone (k = {args.clips}):        {time.perf_counter() - t:6.3f} s")

    t = time.perf_counter()
    scores = qn @ cn.T
    np.argsort(-scores, axis=1, kind="stable")
    print(f"baseline: numpy matmul + stable argsort:           {time.perf_counter() - t:6.3f} s")

    t = time.perf_counter()
    for _ in rank_embeddings(q, c, batch_size=256, depth=100):
        pass
    print(f"rank_embeddings top-100 (FAISS filter + canonical):{time.perf_counter() - t:6.3f} s")

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        synthetic_benchmark(root, args.queries, args.clips, rng)
        np.save(root / "q.npy", q)
        np.save(root / "c.npy", c)
        bench = load_benchmark(root)
        model = load_model(f"precomputed:{root / 'q.npy'},{root / 'c.npy'}")
        t = time.perf_counter()
        result = evaluate(bench, model, n_boot=args.bootstrap, progress=False)
        total = time.perf_counter() - t
    print(f"evaluate total (rank + metrics + bootstrap {args.bootstrap} + two-option): {total:6.3f} s  (goal <= 2 s)")
    print(f"  Avg Acc@1 {result.summary['acc@1']['Avg']['mean']:.4f} (chance-level on random vectors)")


if __name__ == "__main__":
    main()
