"""The tables of a sharded build at corpus scale: `build --save-plan`, then `merge --audio-elsewhere
--from-plan` of its shards, with the time and the memory of each at every size.

The shards are stand-ins: each is written by the product's own shard writer from the saved plan,
with the renderer replaced by one that writes no audio and gives every clip a peak of 0.5, a gain
of 1 and the sha256 of its id. So the merge reads what a real shard holds (shard.json,
render.parquet, audio.sha256), and no audio is rendered: a million clips of WAV is ~460 GB. Each
step is a fresh process; its peak RSS (`getrusage`) and the peak of its anonymous memory
(`RssAnon`, sampled every 10 ms: mapped pages of the plan and of temporary files count in the RSS,
not there) are printed with its time per 100k clips and the bytes it wrote.

    python benches/bench_merge.py --sizes 1000000,10000000 --shards 40 --dir /path/with/space

Prints one JSON line per size.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_scale import timed_process, tree_bytes  # benches/ is the script's folder, first on sys.path


def write_stand_in_shards(plan_path: str, shards: int, root: str) -> None:
    """Runs in a subprocess: the shards of the saved plan, written by `write_shard` with a renderer
    that writes nothing."""
    from types import SimpleNamespace

    import numpy as np

    from reasonaudio.builder import shard as shard_mod
    from reasonaudio.builder.render import RenderedRange

    plan = shard_mod.load_plan(plan_path)

    def render(plan, audio_root, lo, hi, progress, *, sha256=True):
        ids = plan.clip_ids[lo:hi]
        digests = [hashlib.sha256(c.encode()).hexdigest() for c in ids]
        return RenderedRange(np.full(hi - lo, 0.5), np.ones(hi - lo), digests)

    shard_mod.render_audio = render
    for k in range(shards):
        d = Path(root) / f"s{k:04d}"
        d.mkdir(parents=True)
        shard_mod.write_shard(plan, SimpleNamespace(audio_url=str(d / "audio")), d, (k, shards), False)


def run(args: list[str]) -> dict:
    """One CLI command in a fresh process: wall time, peak RSS, peak anonymous memory."""
    wall, rss, _, anon = timed_process(args)
    return {"s": round(wall, 2), "peak_rss_mb": round(rss / 2**20), "peak_anon_mb": round(anon / 2**20)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000000")
    ap.add_argument("--shards", type=int, default=40)
    ap.add_argument("--queries-per-task", type=int, default=200)
    ap.add_argument("--skip-validate", action="store_true", help="leave out `validate --no-audio` of the merged tables")
    ap.add_argument("--dir", default=None, help="scratch directory (default: system temp)")
    ap.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        write_stand_in_shards(a.child[0], int(a.child[1]), a.child[2])
        return
    for n in [int(x) for x in a.sizes.split(",") if x]:
        scratch = Path(tempfile.mkdtemp(prefix="ra-merge-", dir=a.dir))
        try:
            common = ["--clips", str(n), "--queries-per-task", str(a.queries_per_task), "--quiet"]
            plan = scratch / "plan.npz"
            row: dict = {"clips": n, "shards": a.shards}
            row["save_plan"] = {**run(["build", *common, "--save-plan", str(plan)]), "bytes": plan.stat().st_size}
            t0 = time.perf_counter()
            subprocess.run([sys.executable, __file__, "--child", str(plan), str(a.shards), str(scratch / "shards")], check=True)
            row["stand_in_shards_s"] = round(time.perf_counter() - t0, 2)
            shards = sorted(str(p) for p in (scratch / "shards").iterdir())
            merged = scratch / "merged"
            row["merge"] = run(["merge", *shards, "--out", str(merged), "--from-plan", str(plan), "--audio-elsewhere", "-q"])
            row["merge"]["bytes"] = tree_bytes(merged)
            steps = ["save_plan", "merge"]
            if not a.skip_validate:
                row["validate_no_audio"] = run(["validate", str(merged), "--no-audio", "-q"])
                steps.append("validate_no_audio")
            for step in steps:
                row[step]["s_per_100k"] = round(row[step]["s"] * 1e5 / n, 2)
            print(json.dumps(row), flush=True)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
