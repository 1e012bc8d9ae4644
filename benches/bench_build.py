"""End-to-end build throughput: the whole `reasonaudio build` process against the floor of writing
its files, both measured in the same run, interleaved.

    python benches/bench_build.py [--clips 10000] [--queries-per-task 200] [--threads 0] [--rounds 3] [--dir D]

A first build (not timed) lists every file the build writes and its size. Then each round runs,
in this order (A B A B ...):
  * write floor   one Python thread writes the same files (same names, same sizes, the audio
                  4.6 GB by default) to a fresh directory: open, write, close; nothing computed
  * build         `python -m reasonaudio build --out X` as its own process (interpreter start,
                  imports, atoms, planning, queries, relevance, hard negatives, audio, tables,
                  manifest, audio.sha256), timed from outside
Each output is deleted right after its round (outside the timings). Prints every round with the
load average, then min and median of both sides, the ratio build / floor (min over min, median
over median; goal <= 1.5) and the build's CPU seconds (user + system) per round.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def listing(root: Path) -> list[tuple[str, int]]:
    """Every file under root: (relative path, size), sorted."""
    out = []
    for dirpath, _, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            out.append((p.relative_to(root).as_posix(), p.stat().st_size))
    return sorted(out)


def write_floor(root: Path, files: list[tuple[str, int]]) -> float:
    """Writes `files` (relative path, size) under root, one thread; returns the seconds taken."""
    block = memoryview(os.urandom(1 << 20))
    dirs = sorted({rel.rpartition("/")[0] for rel, _ in files if "/" in rel})
    start = time.perf_counter()
    root.mkdir()
    for d in dirs:
        (root / d).mkdir(parents=True, exist_ok=True)
    for rel, size in files:
        with open(root / rel, "wb") as fh:
            left = size
            while left > 0:
                n = min(left, len(block))
                fh.write(block[:n])
                left -= n
    return time.perf_counter() - start


def run_build(out: Path, args: argparse.Namespace) -> tuple[float, float, str]:
    """One build as its own process: (wall seconds, CPU seconds of the process, its timing line)."""
    cmd = [sys.executable, "-m", "reasonaudio", "build", "--out", str(out), "--clips", str(args.clips),
           "--queries-per-task", str(args.queries_per_task), "--threads", str(args.threads), "--quiet"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"build failed ({done.returncode}):\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("built ")), "")
    return wall, cpu, line


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clips", type=int, default=10_000)
    ap.add_argument("--queries-per-task", type=int, default=200)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dir", default=None, help="scratch directory (default: system temp)")
    args = ap.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="ra-bench-", dir=args.dir))
    floors: list[float] = []
    builds: list[float] = []
    cpus: list[float] = []
    try:
        first = scratch / "listing"
        run_build(first, args)
        files = listing(first)
        audio_bytes = sum(size for rel, size in files if rel.startswith("audio/"))
        shutil.rmtree(first)
        print(f"job: build --clips {args.clips} --queries-per-task {args.queries_per_task} --threads {args.threads} "
              f"({os.cpu_count()} CPUs): {len(files)} files, {sum(s for _, s in files) / 1e9:.2f} GB "
              f"(audio {audio_bytes / 1e9:.2f} GB); {args.rounds} rounds, floor and build interleaved; {load()}")
        for r in range(args.rounds):
            floor_dir = scratch / f"floor{r}"
            floors.append(write_floor(floor_dir, files))
            shutil.rmtree(floor_dir)
            out = scratch / f"build{r}"
            wall, cpu, line = run_build(out, args)
            builds.append(wall)
            cpus.append(cpu)
            shutil.rmtree(out)
            print(f"round {r + 1}: floor {floors[-1]:6.2f} s, build {wall:6.2f} s ({cpu:5.2f} s CPU) = "
                  f"{wall / floors[-1]:.2f}x; {load()}\n    {line}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    fmin, fmed = min(floors), statistics.median(floors)
    bmin, bmed = min(builds), statistics.median(builds)
    print(f"{'':<24}{'min s':>9}{'median s':>10}")
    print(f"{'write floor (1 thread)':<24}{fmin:>9.2f}{fmed:>10.2f}")
    print(f"{'build (whole process)':<24}{bmin:>9.2f}{bmed:>10.2f}   CPU min {min(cpus):.2f} s, median {statistics.median(cpus):.2f} s")
    print(f"build / write floor: min {bmin / fmin:.2f}x, median {bmed / fmed:.2f}x  (goal <= 1.5x); after: {load()}")


if __name__ == "__main__":
    main()
