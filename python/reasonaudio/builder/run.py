"""Build a complete benchmark directory (contract §4): plans → queries → relevance → hard negatives →
two-option pairs → audio → tables, written into a temporary sibling and renamed into place.

Data flows one way: atoms → clip plans (Rust planner) → queries drawn from real clips → relevance
(Rust engine) → hard negatives found or planned on purpose → audio rendered from the final plans.
"""


from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from reasonaudio.builder.ray import render_on_ray
from reasonaudio.builder.config import BuildConfig
from reasonaudio.builder.plan import BuildPlan, plan_benchmark
from reasonaudio.builder.render import RenderedRange, render_audio
from reasonaudio.builder.shard import SHARD_KIND, load_plan, write_shard
from reasonaudio.builder.tables import Built, finish_benchmark, write_benchmark, write_plan_files
from reasonaudio.errors import UserError
from reasonaudio.io.outputs import check_not_an_input
from reasonaudio.io.storage import Output, is_uri

log = logging.getLogger(__name__)


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
    kind = SHARD_KIND if shard is not None else "benchmark"
    with Output(out, kind, inputs=config.inputs, force=force) as dest:
        plan = plan_build(config, from_plan=from_plan)
        if log.isEnabledFor(logging.DEBUG):  # the fingerprint hashes the whole plan: only when shown
            log.debug("plan %s: %d clips, %d queries, seed %d, render threads: %s", plan.fingerprint()[:16], plan.n_clips,
                      len(plan.specs), config.seed, config.threads or "one per core")
        t0 = time.perf_counter()
        if shard is not None:
            meta = write_shard(plan, dest, dest.root, shard, progress)
            manifest, shard_meta = {}, meta
        else:
            # The tables the plan alone decides are written by a second thread while the core
            # renders (it releases the GIL); leaving the block waits for that thread, so a failed or
            # interrupted render never races the removal of the staged output.
            with ThreadPoolExecutor(1, thread_name_prefix="reasonaudio-tables") as tables:
                early = tables.submit(write_plan_files, plan, dest.root)
                if ray is not None:
                    rendered = RenderedRange(*render_on_ray(plan, dest.audio_url, ray, progress))
                else:
                    rendered = render_audio(plan, dest.audio_url, 0, plan.n_clips, progress)
            # timings stay out of the manifest: it must be byte-identical across runs
            log.info("%s in %.2f s, rendered audio in %.2f s", plan.origin, plan.seconds, time.perf_counter() - t0)
            manifest = finish_benchmark(plan, dest.root, early.result(), rendered.peaks, rendered.gains, dest,
                                        audio_sha256=rendered.sha256)
            shard_meta = None
    return Built(out if is_uri(out) else Path(out), manifest, shard_meta)


def build_conditions(root: str | Path, config: BuildConfig, conditions: dict[str, dict | None], *, force: bool = False,
                     progress: bool = True) -> dict[str, Built]:
    """One plan rendered in several named conditions (contract §5): `conditions` maps a name to a
    scene (SceneConfig.recorded(), or None for the dry clean condition). The plan is made once, for
    the longest room tail among the conditions; each condition is written to root/<name> as a v3
    benchmark whose events, queries, qrels and mc are byte-identical to the others'."""
    import dataclasses

    from reasonaudio.atoms import AtomLibrary, LabelView, select_split
    from reasonaudio.builder.plan import attach_scene
    from reasonaudio.scene import SceneConfig, resolve

    config.check()
    if not conditions:
        raise UserError("no condition to render")
    for name in conditions:
        if not name or "/" in name or name.startswith("."):
            raise UserError(f"condition name {name!r}: use a plain directory name (letters, digits, '_', '-')")
    empty = SceneConfig().recorded()
    scenes = {name: (scene or empty) for name, scene in conditions.items()}
    # every condition's bed and room folders are inputs of every condition (and of the root)
    inputs = list(dict.fromkeys(f for s in scenes.values() for f in dataclasses.replace(config, scene=s).inputs))
    root = Path(root)
    check_not_an_input(root, inputs)
    library = select_split(AtomLibrary.open(config.atoms, sample_rate=config.sample_rate), config.exemplar_split)
    vocabulary = list(LabelView.of(library).labels)
    assets = {name: resolve(SceneConfig.from_recorded(s), config.sample_rate, config.seed, vocabulary) for name, s in scenes.items()}
    longest = max(assets, key=lambda name: assets[name].max_tail_s)
    tail = assets[longest].max_tail_s
    # "plan_tail_room" names the room in a refusal; the conditions' own scenes are what is recorded
    base = dataclasses.replace(config, scene={**empty, "plan_tail_s": tail,
                                              "plan_tail_room": f"{scenes[longest]['room']} (--condition {longest})"})
    plan = plan_build(base)
    out: dict[str, Built] = {}
    made = [p for p in (root, *root.parents) if not p.exists()]  # deepest first: what mkdir creates
    root.mkdir(parents=True, exist_ok=True)
    try:
        for name, scene in scenes.items():
            cfg = dataclasses.replace(config, scene={**scene, "plan_tail_s": tail})
            cond = dataclasses.replace(plan, config=cfg)
            attach_scene(cond, assets[name])
            target = root / name
            with Output(target, "benchmark", inputs=inputs, force=force) as dest:
                t0 = time.perf_counter()
                rendered = render_audio(cond, dest.audio_url, 0, cond.n_clips, progress)
                log.info("condition %s: rendered %d clips in %.2f s", name, cond.n_clips, time.perf_counter() - t0)
                out[name] = Built(target, write_benchmark(cond, dest.root, rendered.peaks, rendered.gains, audio_sha256=rendered.sha256))
    except BaseException:
        # a failed or interrupted run leaves no folder it made and left empty (finished conditions stay)
        for folder in made:
            try:
                folder.rmdir()
            except OSError:
                break
        raise
    return out
