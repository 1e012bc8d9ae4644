"""Scale-out figures for sizing a cluster: planning time and memory, rendering clips/s per core and
bytes/s, the steps after a build (annotate, validate, embed, eval) at each size, Ray overhead and
scaling on a local multi-process cluster, and the cost model they give.

    python benches/bench_scale.py [--sizes 10000,100000,1000000] [--queries-per-task 200]
                                  [--sample 2000] [--ray-clips 10000] [--skip-ray] [--skip-steps]
    python benches/bench_scale.py --sizes "" --skip-ray --shard-loop 40 --loop-clips 1000000 --dir SCRATCH

Each planning run is a fresh subprocess (its peak RSS is the planning memory). Rendering is
measured on a sample of clips spread over the planned corpus (1 thread = one core), written to a
scratch directory; 1M clips are planned, never fully rendered (460 GB). The tables the planning
run writes then go through `annotate`, `validate --no-audio`, `embed --model random` and
`eval --index exact` on those embeddings, each a fresh process (wall time, peak RSS, bytes
written), and every step's time is also given per 100k clips, so a linear step prints the same
figure at every size. The write floor is plain file writes of as many bytes as the tables, timed in
the same run: `tables / floor` says how far table writing is from the disk's own speed. Ray: the
same build with `--ray local` on this machine's cores against the plain multi-threaded build.

`--shard-loop N` renders a whole corpus (`--loop-clips`) on a disk that need not hold its audio, as
docs/scale-out.md's recipe does, every step a fresh process: plan once (`build --save-plan`); per
shard `build --shard K/N --from-plan`, check its audio (`sha256sum -c audio.sha256` in the shard),
delete its audio (where the recipe exports it first); `merge --audio-elsewhere`; then `validate
--no-audio` (must pass), `annotate`, `embed --model random` and `eval` on the merged tables. It
prints per step the wall time (and per 100k clips), the peak RSS, the bytes written and their rate
against plain file writes timed in the same run, and the most disk the scratch directory held at once.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path


class AnonPeak:
    """The peak of the process's anonymous resident memory (`RssAnon`, Linux), sampled every 10 ms
    by a thread: a plan on disk is memory-mapped, and its mapped pages (page cache, given back
    after each block) count in the peak RSS but not here."""

    def __init__(self) -> None:
        import threading

        self.peak = 0
        self._stop = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while not self._stop.wait(0.01):
            self.peak = max(self.peak, rss_anon())

    def take(self) -> int:
        """The peak since the last take (or the start)."""
        peak, self.peak = max(self.peak, rss_anon()), 0
        return peak


def rss_anon(pid: int | str = "self") -> int:
    """A process's anonymous resident memory in bytes (`RssAnon`, Linux; 0 where unknown)."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            return next((int(line.split()[1]) * 1024 for line in fh if line.startswith("RssAnon")), 0)
    except OSError:
        return 0


class SameDigest(Sequence[str]):
    """n copies of one sha256 digest, made when read."""

    def __init__(self, n: int):
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return ["0" * 64] * len(range(*i.indices(self.n)))
        if not -self.n <= i < self.n:
            raise IndexError(i)
        return "0" * 64


def plan_child(n: int, queries_per_task: int, sample: int, scratch: str) -> None:
    """Runs in a subprocess: plan n clips, render a spread sample on one thread, print JSON."""
    import numpy as np

    anon = AnonPeak()

    from reasonaudio.builder import BuildConfig, plan_build
    from reasonaudio.builder.render import render_bank, render_range

    t0 = time.perf_counter()
    plan = plan_build(BuildConfig(clips=n, queries_per_task=queries_per_task))
    t_plan = time.perf_counter() - t0
    rss_plan = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    anon_plan = anon.take()
    out = Path(scratch) / f"render-{n}"
    out.mkdir(parents=True)
    # contiguous runs of 64 clips at evenly spaced places: the sample sees planned hard negatives too
    runs = max(1, sample // 64)
    starts = np.linspace(0, max(0, n - 64), runs).astype(int)
    paths = plan.rel_paths
    clips = 0
    samples = 0
    t0 = time.perf_counter()
    for lo in starts.tolist():
        hi = min(n, lo + 64)
        render_range(render_bank(plan), plan.slice(lo, hi), None, paths[lo:hi], str(out), plan.config.sample_rate, "wav16", 1)
        clips += hi - lo
        samples += int(plan.final["clip_length"][lo:hi].sum())
    t_render = time.perf_counter() - t0
    nbytes = sum(p.stat().st_size for p in out.iterdir())
    shutil.rmtree(out)
    mean_len = float(plan.final["clip_length"].mean())
    from reasonaudio.builder.tables import write_benchmark

    tables = Path(scratch) / f"tables-{n}"
    tables.mkdir()
    anon.take()
    t0 = time.perf_counter()
    # the limiter stats' and audio hashes' values do not change the cost (no audio is written
    # here); they are given as views of one value, so the writer's memory is measured, not theirs
    write_benchmark(plan, tables, np.broadcast_to(0.0, n), np.broadcast_to(1.0, n), audio_sha256=SameDigest(n))
    (tables / "audio").mkdir()  # where a benchmark's audio would be: validate --no-audio reads none of it
    t_tables = time.perf_counter() - t0
    table_bytes = sum(p.stat().st_size for p in tables.rglob("*") if p.is_file())
    rss_all = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    anon_tables = anon.take()
    print(json.dumps({
        "clips": n,
        "queries": len(plan.specs),
        "planned_hard_negatives": plan.planned,
        "plan_s": round(t_plan, 2),
        "plan_peak_rss_mb": round(rss_plan / 2**20),
        "plan_peak_anon_mb": round(anon_plan / 2**20),
        "sample_clips": clips,
        "render_clips_per_core_s": round(clips / t_render, 1),
        "render_bytes_per_core_s": round(nbytes / t_render),
        "bytes_per_clip": round(nbytes / clips),
        "audio_s_per_clip": round(mean_len / plan.config.sample_rate, 2),
        "corpus_audio_bytes_estimate": round(nbytes / clips * n),
        "sample_audio_s": round(samples / plan.config.sample_rate),
        "tables_s": round(t_tables, 2),
        "tables_mb": round(table_bytes / 2**20, 1),
        "tables_bytes": table_bytes,
        "peak_rss_mb": round(rss_all / 2**20),
        "tables_peak_anon_mb": round(anon_tables / 2**20),
        "tables_dir": str(tables),
    }))


def timed_process(args: list[str], ok: tuple[int, ...] = (0,)) -> tuple[float, int, int, int]:
    """Wall seconds, peak RSS (bytes), exit status and peak anonymous memory (bytes, `RssAnon`
    sampled every 10 ms) of `python -m reasonaudio ARGS` in a fresh process."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:  # a file, not a pipe: the child never waits on a full pipe
        proc = subprocess.Popen([sys.executable, "-m", "reasonaudio", *args], stdout=subprocess.DEVNULL, stderr=err)
        anon = 0
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            anon = max(anon, rss_anon(proc.pid))
            time.sleep(0.01)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        if proc.returncode not in ok:
            err.seek(0)
            raise SystemExit(f"reasonaudio {' '.join(args)} exited {proc.returncode}: {err.read().decode()[-2000:]}")
    return wall, usage.ru_maxrss * 1024, proc.returncode, anon


def tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size


def write_floor(n_bytes: int, scratch: Path, chunk: int = 1 << 20) -> float:
    """Seconds to write `n_bytes` with plain file writes of `chunk` bytes (the floor any writer of
    that many bytes stands on), into the page cache as the tables' writers do (no fsync)."""
    buf = os.urandom(chunk)
    path = scratch / "floor.bin"
    t0 = time.perf_counter()
    with open(path, "wb") as fh:
        left = n_bytes
        while left > 0:
            left -= fh.write(buf[: min(chunk, left)])
    wall = time.perf_counter() - t0
    path.unlink()
    return wall


def pipeline_steps(row: dict, scratch: Path, validate_ok: tuple[int, ...] = (0, 1)) -> dict:
    """annotate, validate (tables), embed and eval on the tables a planning run wrote; then removes them."""
    n, tables = row["clips"], Path(row["tables_dir"])
    work = scratch / f"steps-{n}"
    work.mkdir()
    per = 100_000 / n
    out: dict = {"clips": n}
    try:
        steps = [
            ("annotate", ["annotate", "--events", str(tables / "events.parquet"), "--queries", str(tables / "queries.parquet"),
                          "--out", str(work / "qrels.parquet"), "-q"], work / "qrels.parquet", (0,)),
            # exit 1: a check failed (the limiter statistics of tables written without audio are placeholders)
            ("validate", ["validate", str(tables), "--no-audio", "-q"], None, validate_ok),
            ("embed", ["embed", str(tables), "--model", "random", "--out", str(work / "emb"), "--rows", "65536", "-q"],
             work / "emb", (0,)),
            ("eval", ["eval", str(tables), "--model", f"precomputed:{work / 'emb' / 'queries'},{work / 'emb' / 'clips'}",
                      "--index", "exact", "--out", str(work / "run"), "--no-figures", "--bootstrap", "0", "-q"],
             work / "run", (0,)),
        ]
        for name, args, written, ok in steps:
            wall, rss, rc, _ = timed_process(args, ok)
            out[f"{name}_s"] = round(wall, 2)
            out[f"{name}_s_per_100k"] = round(wall * per, 2)
            out[f"{name}_peak_rss_mb"] = round(rss / 2**20)
            if written is not None:
                out[f"{name}_bytes"] = tree_bytes(written)
            if name == "validate":
                out["validate_exit"] = rc
        floor = write_floor(row["tables_bytes"], work)
        out["write_floor_s"] = round(floor, 3)
        out["write_floor_mb_s"] = round(row["tables_bytes"] / 2**20 / floor, 1)
        out["plan_s_per_100k"] = round(row["plan_s"] * per, 2)
        out["tables_s_per_100k"] = round(row["tables_s"] * per, 2)
        out["tables_over_floor"] = round(row["tables_s"] / floor, 1)
        out["load_average_1min"] = os.getloadavg()[0]
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(tables, ignore_errors=True)
    return out


def shard_loop(n: int, n_shards: int, queries_per_task: int, scratch: Path, check_sample: int = 0) -> dict:
    """The recipe's loop at n clips in n_shards shards under `scratch` (see the module docstring)."""
    work = scratch / f"loop-{n}"
    work.mkdir()
    per = 100_000 / n
    common = ["--clips", str(n), "--queries-per-task", str(queries_per_task), "-q"]
    out: dict = {"clips": n, "shards": n_shards, "checked_per_shard": check_sample or "all",
                 "load_average_1min_start": os.getloadavg()[0]}
    held = 0

    def step(name: str, wall: float, rss: int, written: int) -> None:
        nonlocal held
        held = max(held, tree_bytes(work))
        out[f"{name}_s"] = round(wall, 2)
        out[f"{name}_s_per_100k"] = round(wall * per, 2)
        out[f"{name}_peak_rss_mb"] = round(rss / 2**20)
        out[f"{name}_bytes"] = written

    plan = work / "plan.npz"
    wall, rss, _, _ = timed_process(["build", *common, "--save-plan", str(plan)])
    step("plan", wall, rss, plan.stat().st_size)
    build_s = check_s = delete_s = 0.0
    build_rss = audio_bytes = checked_bytes = 0
    shard_dirs = []
    for k in range(n_shards):
        d = work / f"s{k:03d}"
        wall, rss, _, _ = timed_process(["build", "--out", str(d), *common, "--shard", f"{k}/{n_shards}", "--from-plan", str(plan)])
        build_s += wall
        build_rss = max(build_rss, rss)
        shard_bytes = tree_bytes(d / "audio")
        audio_bytes += shard_bytes
        held = max(held, tree_bytes(work))
        lines = (d / "audio.sha256").read_text().splitlines(keepends=True)
        if check_sample:  # evenly spaced lines of the shard's list
            lines = lines[:: max(1, len(lines) // check_sample)][:check_sample]
        checked_bytes += sum((d / line[66:].rstrip("\n")).stat().st_size for line in lines)
        t0 = time.perf_counter()
        check = subprocess.run(["sha256sum", "--check", "--quiet", "-"], cwd=d, input="".join(lines), capture_output=True, text=True)
        t_check = time.perf_counter() - t0
        check_s += t_check
        if check.returncode != 0:
            raise SystemExit(f"{d}: sha256sum --check failed: {(check.stdout + check.stderr)[-500:]}")
        t0 = time.perf_counter()
        shutil.rmtree(d / "audio")  # the recipe exports the shard (e.g. `aws s3 cp`) first
        delete_s += time.perf_counter() - t0
        shard_dirs.append(str(d))
        print(json.dumps({"shard": k, "build_s": round(wall, 2), "peak_rss_mb": round(rss / 2**20), "audio_bytes": shard_bytes,
                          "check_s": round(t_check, 2), "delete_s": round(time.perf_counter() - t0, 2),
                          "disk_held_mb": round(held / 2**20), "load_average_1min": os.getloadavg()[0]}), flush=True)
    step("shard_builds", build_s, build_rss, audio_bytes + sum(tree_bytes(Path(x)) for x in shard_dirs))
    out["check_s"] = round(check_s, 2)
    out["check_s_per_100k"] = round(check_s * per, 2)
    out["check_bytes"] = checked_bytes
    out["check_mb_s"] = round(checked_bytes / 2**20 / check_s, 1)
    out["delete_s"] = round(delete_s, 2)
    merged = work / "bench"
    wall, rss, _, _ = timed_process(["merge", *shard_dirs, "--out", str(merged), "--from-plan", str(plan), "--audio-elsewhere", "-q"])
    step("merge", wall, rss, tree_bytes(merged))
    # plain file writes of as many bytes as one shard wrote (at most 2 GiB), in this run: the floor
    floor_bytes = min(audio_bytes // n_shards, 2 << 30)
    floor_rate = floor_bytes / write_floor(floor_bytes, work)
    out["write_floor_mb_s"] = round(floor_rate / 2**20, 1)
    for name in ("shard_builds", "merge"):
        rate = out[f"{name}_bytes"] / out[f"{name}_s"]
        out[f"{name}_mb_s"] = round(rate / 2**20, 1)
        out[f"{name}_over_floor"] = round(floor_rate / rate, 1)  # its wall time / the floor's for its bytes
    out["audio_bytes_rendered"] = audio_bytes
    out["peak_disk_held_mb"] = round(held / 2**20)
    row = {"clips": n, "tables_dir": str(merged), "tables_bytes": out["merge_bytes"], "plan_s": out["plan_s"], "tables_s": out["merge_s"]}
    steps = pipeline_steps(row, scratch, validate_ok=(0,))
    for key in ("plan_s_per_100k", "tables_s_per_100k", "tables_over_floor", "write_floor_s", "write_floor_mb_s", "clips"):
        steps.pop(key, None)
    out.update(steps)
    out["load_average_1min_end"] = os.getloadavg()[0]
    shutil.rmtree(work, ignore_errors=True)
    return out


def make_events_dataset(root: Path, n_events: int, files: int = 20) -> tuple[Path, Path, Path, Path]:
    """A synthetic strong-label events dataset of `n_events` rows (5 events per clip, clips
    contiguous) in `files` parquet files, the same rows in one file, and two sets of 1,000 queries:
    broad (half `has A, not B`: many relevant pairs, the output dominates memory) and selective
    (`before [A, B]`: few pairs, the events dominate)."""
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(0)
    n_clips = n_events // 5
    labels = [f"label_{i:03d}" for i in range(200)]
    ds = root / "events_dataset"
    ds.mkdir()
    per = n_clips // files
    for k in range(files):
        c0, c1 = k * per, (n_clips if k == files - 1 else (k + 1) * per)
        clip = np.repeat(np.arange(c0, c1), 5)
        onset = rng.integers(0, 400_000, clip.size)
        pl.DataFrame({
            "clip_id": pl.Series([f"c{i:08d}" for i in range(c0, c1)]).gather(np.repeat(np.arange(c1 - c0), 5)),
            "label": pl.Series(labels).gather(rng.integers(0, 200, clip.size)),
            "onset_sample": onset,
            "offset_sample": onset + rng.integers(8_000, 64_000, clip.size),
            "sample_rate": np.full(clip.size, 16000, np.int32),
        }).write_parquet(ds / f"part-{k:03d}.parquet")
    single = root / "events_single"
    single.mkdir()
    pl.read_parquet(sorted(ds.glob("*.parquet"))).write_parquet(single / "events.parquet")
    broad, selective = [], []
    for j in range(1000):
        a, b = rng.choice(200, 2, replace=False)
        before = {"all": [{"before": [labels[a], labels[b]]}]}
        logic = before if j % 2 else {"all": [{"has": labels[a]}, {"not": labels[b]}]}
        broad.append({"query_id": f"q{j}", "logic": json.dumps(logic)})
        selective.append({"query_id": f"q{j}", "logic": json.dumps(before)})
    pl.DataFrame(broad).write_parquet(root / "queries_broad.parquet")
    pl.DataFrame(selective).write_parquet(root / "queries_selective.parquet")
    return ds, single / "events.parquet", root / "queries_broad.parquet", root / "queries_selective.parquet"


def annotate_rss(events: Path, queries: Path, out: Path, extra: list[str]) -> tuple[float, int, str]:
    """Wall time and peak RSS of `reasonaudio annotate` in a fresh process."""
    code = (
        "import resource, sys; from reasonaudio.cli import main; rc = main(sys.argv[1:]); "
        "print('RSS', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024); sys.exit(rc)"
    )
    t0 = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", code, "annotate", "--events", str(events), "--queries", str(queries), "--out", str(out), *extra],
        capture_output=True, text=True,
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(proc.stderr[-2000:])
    rss = int(next(line.split()[1] for line in proc.stdout.splitlines() if line.startswith("RSS ")))
    return wall, rss, proc.stdout


def annotate_compare(n_events: int, batch: int, scratch: Path) -> list[dict]:
    import polars as pl

    ds, single, broad, selective = make_events_dataset(scratch, n_events)
    rows = []
    for name, queries in (("selective", selective), ("broad", broad)):
        w_mem, rss_mem, _ = annotate_rss(single, queries, scratch / "q_mem.parquet", [])
        w_st, rss_st, _ = annotate_rss(ds, queries, scratch / "q_stream.parquet", ["--batch-events", str(batch)])
        same = pl.read_parquet(scratch / "q_mem.parquet").equals(pl.read_parquet(scratch / "q_stream.parquet"))
        rows.append({
            "queries": name, "events": n_events, "batch_events": batch, "identical_qrels": same,
            "pairs": pl.read_parquet(scratch / "q_mem.parquet").height,
            "in_memory_s": round(w_mem, 2), "in_memory_peak_rss_mb": round(rss_mem / 2**20),
            "streamed_s": round(w_st, 2), "streamed_peak_rss_mb": round(rss_st / 2**20),
        })
    return rows


def ray_compare(n: int, queries_per_task: int, scratch: Path) -> dict:
    """The render phase of one plan three ways: this process on 1 thread, on every core, and Ray
    tasks on a local cluster with one CPU per core (cluster start-up timed apart)."""
    import ray

    from reasonaudio.builder import BuildConfig, plan_build
    from reasonaudio.builder.render import render_audio
    from reasonaudio.builder.ray import render_on_ray

    cores = os.cpu_count() or 1
    res: dict = {"clips": n, "cores": cores}
    plans = {t: plan_build(BuildConfig(clips=n, queries_per_task=queries_per_task, threads=t)) for t in (1, 0)}
    for label, threads in (("plain_1_thread", 1), ("plain_all_cores", 0)):
        out = scratch / label
        out.mkdir()
        t0 = time.perf_counter()
        render_audio(plans[threads], str(out), 0, n, False, sha256=False)
        res[f"{label}_render_s"] = round(time.perf_counter() - t0, 2)
        shutil.rmtree(out)
    t0 = time.perf_counter()
    ray.init(num_cpus=cores, include_dashboard=False, log_to_driver=False)
    res["ray_init_s"] = round(time.perf_counter() - t0, 2)
    try:
        out = scratch / "ray"
        out.mkdir()
        t0 = time.perf_counter()
        render_on_ray(plans[0], str(out), "local", False)
        res["ray_render_s"] = round(time.perf_counter() - t0, 2)
        shutil.rmtree(out)
    finally:
        ray.shutdown()
    res["ray_clips_per_cpu_s"] = round(n / res["ray_render_s"] / cores, 1)
    res["plain_clips_per_core_s"] = round(n / res["plain_1_thread_render_s"], 1)
    res["load_average_1min"] = os.getloadavg()[0]
    return res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--queries-per-task", type=int, default=200)
    ap.add_argument("--sample", type=int, default=2000, help="clips rendered per size to measure the render rate")
    ap.add_argument("--ray-clips", type=int, default=10_000)
    ap.add_argument("--skip-ray", action="store_true")
    ap.add_argument("--skip-steps", action="store_true", help="only plan, write tables and render the sample")
    ap.add_argument("--annotate-events", type=int, default=0, help="also compare streamed and in-memory annotate on N synthetic events")
    ap.add_argument("--batch-events", type=int, default=100_000)
    ap.add_argument("--shard-loop", type=int, default=0, metavar="N",
                    help="also render --loop-clips clips in N shards, checking and deleting each shard's audio, and merge without it")
    ap.add_argument("--loop-clips", type=int, default=100_000)
    ap.add_argument("--check-sample", type=int, default=0, metavar="K",
                    help="with --shard-loop: check K evenly spaced clips of each shard against its audio.sha256 (default 0: all)")
    ap.add_argument("--dir", default=None, help="scratch directory (default: system temp)")
    ap.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        n, q, s, scratch = args.child
        plan_child(int(n), int(q), int(s), scratch)
        return
    if args.dir:
        Path(args.dir).mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="ra-scale-", dir=args.dir))
    rows = []
    try:
        for n in [int(x) for x in args.sizes.split(",") if x]:
            proc = subprocess.run(
                [sys.executable, __file__, "--child", str(n), str(args.queries_per_task), str(args.sample), str(scratch)],
                capture_output=True, text=True,
            )
            if proc.returncode != 0:
                print(proc.stderr[-2000:], file=sys.stderr)
                raise SystemExit(f"planning {n} clips failed")
            row = json.loads(proc.stdout.strip().splitlines()[-1])
            rows.append(row)
            print(json.dumps(row), flush=True)
            if args.skip_steps:
                shutil.rmtree(row["tables_dir"], ignore_errors=True)
            else:
                print(json.dumps(pipeline_steps(row, scratch)), flush=True)
        if args.shard_loop:
            row = shard_loop(args.loop_clips, args.shard_loop, args.queries_per_task, scratch, args.check_sample)
            print(json.dumps(row), flush=True)
        ray_row = None if args.skip_ray else ray_compare(args.ray_clips, args.queries_per_task, scratch)
        if ray_row:
            print(json.dumps(ray_row), flush=True)
        if args.annotate_events:
            for row in annotate_compare(args.annotate_events, args.batch_events, scratch):
                print(json.dumps(row), flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    print("\ncost model: hours(N, W) = plan(N) + N / (W * r) + tables(N), r = clips/s per core")
    if not rows:
        return
    r = sum(x["render_clips_per_core_s"] for x in rows) / len(rows)
    for x in rows:
        n = x["clips"]
        for w in (1, 16, 64, 256):
            t = x["plan_s"] + n / (w * r) + x["tables_s"]
            print(f"  N={n:>9,}  W={w:>3} cores: {t / 3600:7.3f} h wall, {n / r / 3600:7.2f} core-h rendering, "
                  f"{x['corpus_audio_bytes_estimate'] / 1e9:7.1f} GB audio, plan {x['plan_s']:.0f} s / {x['plan_peak_rss_mb']} MB ({x['plan_peak_anon_mb']} MB anonymous), tables {x['tables_s']:.0f} s")


if __name__ == "__main__":
    main()
