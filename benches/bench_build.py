"""End-to-end build throughput: the whole `reasonaudio build` job, against the raw-write floor.

    python benches/bench_build.py [--clips 10000] [--queries-per-task 200] [--threads 0]

Prints wall time of the full build (atoms, plans, queries, relevance, hard negatives, audio,
tables), clips/s, audio seconds per wall second, and the time to write the same number of audio
bytes raw to the same disk (the floor no renderer can beat).
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from reasonaudio.builder import BuildConfig, build
from reasonaudio.io.benchmark import load_benchmark


def raw_write_floor(root: Path, n_files: int, n_bytes: int) -> float:
    block = os.urandom(min(n_bytes, 1 << 20))
    per_file = n_bytes // n_files
    start = time.perf_counter()
    for i in range(n_files):
        with open(root / f"raw_{i}.bin", "wb") as fh:
            left = per_file
            while left > 0:
                fh.write(block[: min(left, len(block))])
                left -= len(block)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clips", type=int, default=10_000)
    ap.add_argument("--queries-per-task", type=int, default=200)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--dir", default=None, help="scratch directory (default: system temp)")
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="ra-bench-", dir=args.dir))
    try:
        out = scratch / "bench"
        start = time.perf_counter()
        build(out, BuildConfig(clips=args.clips, queries_per_task=args.queries_per_task, threads=args.threads), progress=True)
        wall = time.perf_counter() - start
        bench = load_benchmark(out)
        audio_s = float(bench.clips["duration_s"].sum())
        audio_bytes = sum((out / p).stat().st_size for p in bench.clips["path"].to_list())
        shutil.rmtree(out)
        floor_dir = scratch / "raw"
        floor_dir.mkdir()
        floor = raw_write_floor(floor_dir, args.clips, audio_bytes)
        print(f"\nclips={args.clips} queries={5 * args.queries_per_task} threads={args.threads or os.cpu_count()}")
        print(f"full build      : {wall:8.2f} s  ({args.clips / wall:8.0f} clips/s, {audio_s / wall:8.0f} audio-s/s)")
        print(f"raw write floor : {floor:8.2f} s  ({audio_bytes / 1e9:.2f} GB in {args.clips} files)")
        print(f"build / floor   : {wall / floor:8.2f} x")
        print(f"mean clip       : {audio_s / args.clips:8.2f} s;  per 10-s clip per core: "
              f"{wall / (audio_s / 10.0) * (args.threads or os.cpu_count()) * 1e3:.2f} ms (whole pipeline)")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
