"""Cost of a scene: a build with a bed and a room against the clean build, measured in one run.

    python benches/bench_scene.py [--clips 10000] [--queries-per-task 200] [--threads 0] [--rounds 2]
        [--background noise:pink] [--snr 10,10] [--room simulated:0.3,0.6]
        [--pitch LO,HI] [--stretch LO,HI] [--varispeed LO,HI]      (`--background none`, `--room none`: without)

Builds the same configuration clean and with the scene, interleaved round by round (clean, scene,
clean, scene, ...), each into a temporary directory deleted right after, and prints min and median
of each side, their ratios (the goal: at most 2x) and the load average. The first scene
build of the run starts from an empty room cache (REASONAUDIO_CACHE points at a fresh folder), so it
pays for simulating the rooms; later rounds find them cached, as the conditions of `scenes` and
repeated builds do: both figures are printed. Memory stays bounded: both render in chunks of
RENDER_CHUNK clips with per-thread buffers.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
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
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--background", default="noise:pink")
    ap.add_argument("--snr", default="10,10")
    ap.add_argument("--room", default="simulated:0.3,0.6")
    ap.add_argument("--pitch", default=None, help="per-event pitch shift range, semitones (Signalsmith Stretch)")
    ap.add_argument("--stretch", default=None, help="per-event time-stretch range (Signalsmith Stretch)")
    ap.add_argument("--varispeed", default=None, help="per-event varispeed range, semitones")
    args = ap.parse_args()
    bed = None if args.background == "none" else args.background
    room = None if args.room == "none" else args.room
    scene = SceneConfig.from_options(bed, args.snr if bed else None, room, args.pitch, args.stretch, args.varispeed).recorded()
    what = " + ".join(x for x in (
        f"{bed} at {args.snr} dB" if bed else "", room or "", f"pitch {args.pitch}" if args.pitch else "",
        f"stretch {args.stretch}" if args.stretch else "", f"varispeed {args.varispeed}" if args.varispeed else "") if x)
    base = dict(clips=args.clips, queries_per_task=args.queries_per_task, threads=args.threads)
    tmp = Path(tempfile.mkdtemp(prefix="bench-scene-"))
    os.environ["REASONAUDIO_CACHE"] = str(tmp / "cache")  # cold: the first scene build simulates its rooms
    loads = [os.getloadavg()[0]]
    try:
        times: dict[str, list[float]] = {"clean": [], "scene": []}
        for _ in range(args.rounds):
            for name, cfg in (("clean", BuildConfig(**base)), ("scene", BuildConfig(**base, scene=scene))):
                t0 = time.perf_counter()
                build(tmp / name, cfg, progress=False)
                times[name].append(time.perf_counter() - t0)
                shutil.rmtree(tmp / name)
                loads.append(os.getloadavg()[0])
        clean, scene_t = times["clean"], times["scene"]
        c_min, c_med = min(clean), statistics.median(clean)
        print(f"{args.clips} clips, {args.rounds} rounds interleaved; load average {min(loads):.1f}..{max(loads):.1f}")
        print(f"  clean build:                     min {c_min:6.1f} s  median {c_med:6.1f} s")
        print(f"  {what}:")
        print(f"    first (rooms simulated):       {scene_t[0]:6.1f} s  ratio {scene_t[0] / c_min:.2f}x the clean min")
        if len(scene_t) > 1:
            warm = scene_t[1:]
            print(f"    later (rooms cached):          min {min(warm):6.1f} s  median {statistics.median(warm):6.1f} s  "
                  f"ratio {min(warm) / c_min:.2f}x (min) / {statistics.median(warm) / c_med:.2f}x (median)  (goal <= 2x)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
