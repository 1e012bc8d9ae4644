"""`validate_benchmark` against a plain read of the same audio, in the same run.

Builds a benchmark (default 1,000 clips, the build's defaults otherwise) in a temporary folder,
then times, interleaved (A B C A B C ...):

  A  plain read: `soundfile.read(path, dtype="float32")` of every clip, one after the other
  B  `validate_benchmark(root)`: every check, the audio ones included
  C  `validate_benchmark(root, check_audio=False)`: the metadata checks alone

and prints min and median of each, the ratio B/A (goal <= 1.3) with the load average before and
after, and the validator's findings (the same in every round).

    python benches/bench_validate.py [--clips 1000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path


def load() -> str:
    return "load " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clips", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import polars as pl
    import soundfile as sf

    from reasonaudio import BuildConfig, build, validate_benchmark

    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        root = build(Path(tmp) / "bench", BuildConfig(clips=args.clips, seed=args.seed), progress=False)
        print(f"built {args.clips} clips in {time.perf_counter() - t:.1f} s")
        paths = [root / p for p in pl.read_parquet(root / "clips.parquet")["path"].to_list()]
        size = sum(p.stat().st_size for p in paths)
        print(f"{len(paths)} audio files, {size / 2**20:.1f} MiB; {os.cpu_count()} CPUs")

        def plain_read() -> None:
            for p in paths:
                sf.read(p, dtype="float32")

        findings: set[tuple] = set()

        def full() -> None:
            report = validate_benchmark(root)
            findings.add(tuple((c.name, c.violations, c.skipped, tuple(c.examples), tuple(c.notes)) for c in report.checks))

        cases = {
            "A plain soundfile read of every clip (floor)": plain_read,
            "B validate_benchmark (all checks)": full,
            "C validate_benchmark(check_audio=False)": lambda: validate_benchmark(root, check_audio=False),
        }
        times: dict[str, list[float]] = {name: [] for name in cases}
        print(f"{args.repeats} rounds interleaved; {load()}")
        for _ in range(args.repeats):
            for name, fn in cases.items():
                t = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t)
        base = times["A plain soundfile read of every clip (floor)"]
        for name, ts in times.items():
            line = f"  {name:<46} min {min(ts):7.3f} s  median {statistics.median(ts):7.3f} s"
            if not name.startswith("A"):
                line += f"  ratio vs A: min {min(ts) / min(base):5.2f}x  median {statistics.median(ts) / statistics.median(base):5.2f}x"
            print(line)
        print(f"  after: {load()}")
        assert len(findings) == 1, "the findings differ between rounds"
        (checks,) = findings
        print("findings:", ", ".join(f"{name} {'skipped' if skipped else violations}" for name, violations, skipped, _, _ in checks))


if __name__ == "__main__":
    main()
