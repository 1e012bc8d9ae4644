"""Cost of a scene: a build with a bed and a room against the clean build, measured in one run.

    python benches/bench_scene.py [--clips 10000] [--queries-per-task 200] [--threads 0]
        [--background noise:pink] [--snr 10,10] [--room simulated:0.3,0.6]

Builds the same configuration twice into a temporary directory (clean, then with the scene),
prints both wall times and their ratio (the issue's goal: at most 2x), then deletes both. The
scene build's time includes simulating its rooms. Memory stays bounded: both render in chunks of
RENDER_CHUNK clips with per-thread buffers.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from reasonaudio.builder import BuildConfig, build
from reasonaudio.scene import SceneConfig


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clips", type=int, default=10_000)
    ap.add_argument("--queries-per-task", type=int, default=200)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--background", default="noise:pink")
    ap.add_argument("--snr", default="10,10")
    ap.add_argument("--room", default="simulated:0.3,0.6")
    args = ap.parse_args()
    scene = SceneConfig.from_options(args.background, args.snr, args.room, None).recorded()
    base = dict(clips=args.clips, queries_per_task=args.queries_per_task, threads=args.threads)
    tmp = Path(tempfile.mkdtemp(prefix="bench-scene-"))
    try:
        times = {}
        for name, cfg in (("clean", BuildConfig(**base)), ("scene", BuildConfig(**base, scene=scene))):
            t0 = time.perf_counter()
            build(tmp / name, cfg, progress=False)
            times[name] = time.perf_counter() - t0
            shutil.rmtree(tmp / name)
        print(f"{args.clips} clips: clean build {times['clean']:.1f} s, with {args.background} at {args.snr} dB "
              f"+ {args.room}: {times['scene']:.1f} s; ratio {times['scene'] / times['clean']:.2f}x (goal <= 2x)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
