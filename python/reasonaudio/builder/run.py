"""Build a complete benchmark directory (contract §4): plans → queries → relevance → hard negatives →
two-option pairs → audio → tables, written into a temporary sibling and renamed into place.

Data flows one way: atoms → clip plans (Rust planner) → queries drawn from real clips → relevance
(Rust engine) → hard negatives found or planned on purpose → audio rendered from the final plans.
"""


from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from reasonaudio.builder.ray import render_on_ray
from reasonaudio.builder.config import BuildConfig
from reasonaudio.builder.plan import BuildPlan, plan_benchmark
from reasonaudio.builder.render import render_local
from reasonaudio.builder.shard import SHARD_KIND, load_plan, write_shard
from reasonaudio.builder.tables import write_benchmark
from reasonaudio.errors import UserError
from reasonaudio.io.storage import Output, is_uri


@dataclass(frozen=True, eq=False)
class Built:
    """What `build` made: where (a path, or the URI given), and the manifest it wrote (a shard: its
    `shard.json` metadata instead). Usable wherever a path is (`os.fspath`, `Path(built)`,
    `built / "manifest.json"`) and equal to that path, as `build` returned before it returned more."""

    path: Path | str
    manifest: dict
    shard: dict | None = None

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __str__(self) -> str:
        return str(self.path)

    def __eq__(self, other: object) -> bool:
        return self.path == (other.path if isinstance(other, Built) else other)

    def __hash__(self) -> int:
        return hash(self.path)

    def __truediv__(self, name: str) -> Path | str:
        return self.path / name if isinstance(self.path, Path) else f"{self.path.rstrip('/')}/{name}"


def plan_build(config: BuildConfig | None = None, *, from_plan: str | Path | None = None) -> BuildPlan:
    """The planning half of `build` alone (nothing is written): planned afresh, or loaded from a
    plan saved with `save_plan` (and checked against `config`)."""
    config = config or BuildConfig()
    config.check()
    return plan_benchmark(config) if from_plan is None else load_plan(from_plan, config)


def build(
    out: str | Path,
    config: BuildConfig | None = None,
    *,
    force: bool = False,
    progress: bool = True,
    shard: tuple[int, int] | None = None,
    ray: str | None = None,
    from_plan: str | Path | None = None,
) -> Built:
    """Build a whole benchmark into `out` (a path or an fsspec URI). Deterministic in `config`.
    `shard=(k, n)` renders only shard k of n (see `reasonaudio.builder.shard`); `ray` ("local" or a
    cluster address) renders on a Ray cluster; `from_plan` uses a plan saved by `save_plan` (made with
    the same config) instead of planning again. This is the one place that decides where rendering
    runs."""
    config = config or BuildConfig()
    config.check()
    if shard is not None and ray is not None:
        raise UserError("--shard and --ray are two ways to split a build: choose one")
    library_inputs = [] if config.atoms == "procedural" else [config.atoms]
    kind = SHARD_KIND if shard is not None else "benchmark"
    with Output(out, kind, inputs=library_inputs, force=force) as dest:
        plan = plan_build(config, from_plan=from_plan)
        t0 = time.perf_counter()
        if shard is not None:
            meta = write_shard(plan, dest, dest.root, shard, progress)
            manifest, shard_meta = {}, meta
        else:
            if ray is not None:
                peaks, gains = render_on_ray(plan, dest.audio_url, ray, progress)
            else:
                peaks, gains = render_local(plan, dest.audio_url, 0, plan.n_clips, progress)
            if progress:
                # timings stay out of the manifest: it must be byte-identical across runs
                print(f"{plan.origin} in {plan.seconds:.2f} s, rendered audio in {time.perf_counter() - t0:.2f} s")
            manifest, shard_meta = write_benchmark(plan, dest.root, peaks, gains), None
    return Built(out if is_uri(out) else Path(out), manifest, shard_meta)
