"""Sharded builds: `build --shard K/N` renders one contiguous clip range, `merge` assembles the shards
into the benchmark the single-process build writes, byte for byte (contract §3.4).

Every shard runs the same deterministic planning (queries, hard negatives and relevance need the
whole corpus, and planned hard negatives replace clips anywhere in it) and renders only its range.
What rendering alone knows, the limiter's peak and gain per clip (clips.parquet's
`peak_before_limiter` / `limiter_gain`), goes into the shard's `render.parquet`. The shard's
`shard.json` carries the plan's fingerprint, so merge refuses shards planned differently (another
seed, parameters, atom library or tool version) instead of mixing them.

A shard directory:

    shard.json       format, shard, shards, clip_range, n_clips, plan_sha256, build parameters
    render.parquet   clip_index, peak, gain (float32, exactly as the renderer returned them)
    audio/           the range's clips, named as in the final benchmark
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import polars as pl

from reasonaudio.errors import UserError

SHARD_FORMAT = "reasonaudio-shard/1"
SHARD_JSON = "shard.json"
RENDER_STATS = "render.parquet"


def write_shard(plan, dest, root: Path, shard: tuple[int, int], progress: bool) -> None:
    """Renders shard `shard` = (k, n) of `plan` into the staged output `dest` (tables in `root`)."""
    from reasonaudio import __version__
    from reasonaudio.build import render_local, shard_range

    k, n_shards = shard
    lo, hi = shard_range(plan.n_clips, k, n_shards)
    t0 = time.perf_counter()
    peaks, gains = render_local(plan, dest.audio_url, lo, hi, progress)
    if progress:
        print(f"planned corpus and queries in {plan.seconds:.2f} s, rendered clips [{lo}, {hi}) in {time.perf_counter() - t0:.2f} s")
    pl.DataFrame(
        {
            "clip_index": np.arange(lo, hi, dtype=np.int64),
            "peak": peaks.astype(np.float32),
            "gain": gains.astype(np.float32),
        }
    ).write_parquet(root / RENDER_STATS, compression="zstd", statistics=False)
    meta = {
        "format": SHARD_FORMAT,
        "tool_version": __version__,
        "shard": k,
        "shards": n_shards,
        "clip_range": [lo, hi],
        "n_clips": plan.n_clips,
        "plan_sha256": plan.fingerprint(),
        "build": {key: v for key, v in asdict(plan.config).items() if key != "threads"},
    }
    # written last, and moved last onto a remote filesystem: a shard is complete when it exists
    (root / SHARD_JSON).write_text(json.dumps(meta, indent=2) + "\n")


def read_shard(location: str) -> dict:
    """A shard's metadata plus its filesystem, with the checks a merge needs."""
    from reasonaudio import storage

    fs, path = storage.location(location)
    meta_path = f"{path.rstrip('/')}/{SHARD_JSON}"
    if not fs.exists(meta_path):
        raise UserError(f"{location}: not a finished shard (no {SHARD_JSON}; was it built with --shard K/N?)")
    try:
        meta = json.loads(fs.cat_file(meta_path))
    except (OSError, json.JSONDecodeError) as err:
        raise UserError(f"{location}/{SHARD_JSON}: cannot read ({err})") from None
    if meta.get("format") != SHARD_FORMAT:
        raise UserError(f"{location}/{SHARD_JSON}: format {meta.get('format')!r}, expected {SHARD_FORMAT!r}")
    return {**meta, "fs": fs, "path": path.rstrip("/"), "location": location}


def merge(shards: list[str], out: str | Path, *, force: bool = False, progress: bool = True, threads: int = 0):
    """Assembles the shards of one sharded build into `out` (a path or URI); returns it."""
    from tqdm.auto import tqdm

    from reasonaudio import storage
    from reasonaudio.build import BuildConfig, build, write_benchmark

    if not shards:
        raise UserError("merge needs at least one shard directory")
    metas = [read_shard(s) for s in shards]
    first = metas[0]
    for m in metas[1:]:
        if m["plan_sha256"] != first["plan_sha256"] or m["shards"] != first["shards"]:
            raise UserError(
                f"{m['location']}: shard of a different build than {first['location']} "
                f"(plan {m['plan_sha256'][:12]} of {m['shards']} shards vs {first['plan_sha256'][:12]} of {first['shards']})"
            )
    by_k: dict[int, dict] = {}
    for m in metas:
        if m["shard"] in by_k:
            raise UserError(f"{m['location']}: shard {m['shard']}/{m['shards']} is also {by_k[m['shard']]['location']}")
        by_k[m["shard"]] = m
    missing = [k for k in range(first["shards"]) if k not in by_k]
    if missing:
        total = first["shards"]
        names = ", ".join(f"{k}/{total}" for k in missing)
        raise UserError(f"missing shard(s) {names} (got {len(by_k)} of {total})")

    config = BuildConfig(**first["build"], threads=threads)
    library_inputs = [] if config.atoms == "procedural" else [config.atoms]
    with storage.Output(out, "benchmark", inputs=[*shards, *library_inputs], force=force) as dest:
        # The tables need the whole plan: planning is deterministic and cheap next to rendering, so
        # it runs again here and must reproduce the shards' fingerprint.
        plan = build(None, config, progress=False)
        if plan.fingerprint() != first["plan_sha256"]:
            raise UserError(
                f"re-planning the build of {first['location']} gives another plan than its shards "
                "(another tool version or atom library?): build the shards and merge with the same installation"
            )
        n = plan.n_clips
        peaks = np.full(n, np.nan, np.float64)
        gains = np.full(n, np.nan, np.float64)
        paths = plan.rel_paths
        with tqdm(total=n, desc="merge", unit="clip", disable=not progress) as bar:
            for k in range(first["shards"]):
                m = by_k[k]
                lo, hi = m["clip_range"]
                stats = pl.read_parquet(m["fs"].cat_file(f"{m['path']}/{RENDER_STATS}"))
                if stats["clip_index"].to_list() != list(range(lo, hi)):
                    raise UserError(f"{m['location']}/{RENDER_STATS}: does not list clips {lo}..{hi - 1} in order")
                peaks[lo:hi] = stats["peak"].to_numpy()
                gains[lo:hi] = stats["gain"].to_numpy()
                names = [p.rpartition("/")[2] for p in paths[lo:hi]]
                _copy_files(m["fs"], [f"{m['path']}/{p}" for p in paths[lo:hi]], dest.audio_fs, [f"{dest.audio_dir}/{x}" for x in names], m["location"])
                bar.update(hi - lo)
        write_benchmark(plan, dest.root, peaks, gains)
    return out if storage.is_uri(out) else Path(out)


def _copy_files(src_fs, srcs: list[str], dst_fs, dsts: list[str], where: str) -> None:
    """Copies audio between filesystems (same filesystem: its own copy, e.g. server-side on S3)."""
    from reasonaudio import storage

    if not srcs:
        return
    try:
        if type(src_fs) is type(dst_fs) and src_fs.protocol == dst_fs.protocol:
            src_fs.copy(srcs, dsts)
        elif isinstance(dst_fs, type(storage.local_fs())):
            src_fs.get(srcs, dsts)
        elif isinstance(src_fs, type(storage.local_fs())):
            dst_fs.put(srcs, dsts)
        else:
            for s, d in zip(srcs, dsts):
                dst_fs.pipe_file(d, src_fs.cat_file(s))
    except FileNotFoundError as err:
        raise UserError(f"{where}: audio file missing ({err})") from None
