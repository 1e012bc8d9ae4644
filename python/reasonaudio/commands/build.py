"""`reasonaudio build`: synthesize a complete benchmark directory (contract §4)."""

from __future__ import annotations

import argparse
import json
import time

from reasonaudio.atoms.exemplars import SPLITS
from reasonaudio.commands.bounds import utf8_path
from reasonaudio.builder import AUDIO_FORMATS, BuildConfig, build, parse_shard, plan_build
from reasonaudio.builder.config import MAX_CLIP_S, MAX_CLIPS, MAX_QUERIES_PER_TASK, MAX_THREADS
from reasonaudio.contract import MAX_SAMPLE_RATE, MIN_SAMPLE_RATE
from reasonaudio.errors import UserError


def _plan_override(text: str) -> tuple[str, object]:
    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected KEY=JSON, got {text!r}")
    try:
        return key, json.loads(value)
    except json.JSONDecodeError:
        raise argparse.ArgumentTypeError(f"{key}: value is not JSON: {value!r}") from None


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "build",
        description="Synthesize a reasoning-intensive text-to-audio retrieval benchmark into DIR.",
    )
    p.add_argument("--out", default=None, type=utf8_path, help="output directory or fsspec URI (must be empty unless --force); required unless --save-plan")
    add_corpus_options(p)
    add_scene_options(p)
    p.add_argument("--force", action="store_true", help="replace an earlier benchmark at --out (or an earlier plan at --save-plan)")
    p.add_argument("--shard", default=None, metavar="K/N",
                   help="render only shard K of N (0-based) into --out; `reasonaudio merge` assembles the shards")
    p.add_argument("--save-plan", default=None, metavar="FILE",
                   help="only plan, and write the plan to FILE (.npz) for `--from-plan`: shards then skip planning")
    p.add_argument("--from-plan", default=None, metavar="FILE",
                   help="use a plan written by --save-plan with the same build options instead of planning again")
    p.add_argument("--ray", default=None, metavar="ADDRESS|local",
                   help="render on a Ray cluster ('local' starts one on this machine); needs reasonaudio[ray]")
    p.set_defaults(func=run)


def add_corpus_options(p) -> None:
    """The options that decide a plan (every build option but outputs, scale-out and the scene):
    shared by `build` and `scenes`, so both take and bound them alike."""
    d = BuildConfig()
    p.add_argument("--clips", type=int, default=d.clips, help=f"number of clips, 1..{MAX_CLIPS:,} (above 262,144 clips the plan is held in files of TMPDIR, ~0.2 KB a clip; default {d.clips})")
    p.add_argument("--overlap-fraction", type=float, default=d.overlap_fraction, help=f"share of overlap clips, within [0, 1] (default {d.overlap_fraction})")
    p.add_argument("--queries-per-task", type=int, default=d.queries_per_task, help=f"queries per task, 0..{MAX_QUERIES_PER_TASK:,}: at most what the corpus hosts (default {d.queries_per_task}; 0 = corpus only)")
    p.add_argument("--atoms", default=d.atoms, help="'procedural' (embedded default) or an atom library directory")
    p.add_argument("--sample-rate", type=int, default=d.sample_rate, help=f"Hz, {MIN_SAMPLE_RATE}..{MAX_SAMPLE_RATE} (default {d.sample_rate})")
    p.add_argument("--seed", type=int, default=d.seed, help=f"random seed, 0..2^64-1 (default {d.seed})")
    p.add_argument("--max-clip-s", type=float, default=d.max_clip_s, help=f"longest clip in seconds, within (0, {MAX_CLIP_S:g}] (a render thread holds a clip in memory; default {d.max_clip_s})")
    p.add_argument("--format", dest="audio_format", choices=sorted(AUDIO_FORMATS), default=d.audio_format, help="audio format (default wav16)")
    p.add_argument("--threads", type=int, default=0, help=f"worker threads, 0..{MAX_THREADS} (0 = all cores); output does not depend on it")
    p.add_argument("--min-hard-negatives", type=int, default=d.min_hard_negatives,
                   help="hard negatives each query must have, 1..clips-1; missing ones are planned on purpose (default 1)")
    p.add_argument("--plan", type=_plan_override, action="append", default=[], metavar="KEY=JSON",
                   help='override a planner parameter, e.g. --plan \'duration_weights=[0.5,0.3,0.2]\' (finite numbers; '
                   '*_probability within [0, 1]; min_events, max_events >= 1)')
    p.add_argument("--exemplar-split", choices=SPLITS, default=d.exemplar_split,
                   help="build from the library's test (or train) exemplars only (default all)")


def corpus_config(args: argparse.Namespace, scene: dict | None = None) -> BuildConfig:
    """The BuildConfig of `add_corpus_options`' values (and a scene)."""
    return BuildConfig(
        clips=args.clips,
        overlap_fraction=args.overlap_fraction,
        queries_per_task=args.queries_per_task,
        atoms=args.atoms,
        sample_rate=args.sample_rate,
        seed=args.seed,
        max_clip_s=args.max_clip_s,
        audio_format=args.audio_format,
        threads=args.threads,
        min_hard_negatives=args.min_hard_negatives,
        plan={**dict(args.plan), **gain_plan(args)},
        exemplar_split=args.exemplar_split,
        scene=scene,
    )


def add_scene_options(p) -> None:
    g = p.add_argument_group("acoustic scene (contract §5; any of these makes a format-version 3 benchmark)",
                             "A range LO,HI may start with a minus sign as typed: --snr -5,10, --pitch -2,2, --gain-db -6,0.")
    g.add_argument("--background", default=None, metavar="SPEC",
                   help="a bed under the events: noise:pink, noise:brown, noise:white, or a directory of recordings (label = sub-folder or file name)")
    g.add_argument("--snr", default=None, metavar="LO,HI",
                   help="per-clip bed level in dB, drawn from (seed, clip): every event is at least this far above the bed over its extent")
    g.add_argument("--room", default=None, metavar="SPEC",
                   help="simulated:RT60_LO,RT60_HI (pyroomacoustics, reasonaudio[scene]) or a directory of impulse responses")
    g.add_argument("--pitch", default=None, metavar="LO,HI",
                   help="per-event pitch shift in semitones, -12..12, the exemplar's length kept (Signalsmith Stretch)")
    g.add_argument("--stretch", default=None, metavar="LO,HI",
                   help="per-event time stretch, the factor on the exemplar's length, 0.5..2, its pitch kept (Signalsmith Stretch)")
    g.add_argument("--varispeed", default=None, metavar="LO,HI",
                   help="per-event tape-speed change in semitones, -12..12: pitch and length move together (cheaper)")
    g.add_argument("--gain-db", default=None, metavar="LO,HI", help="per-event gain range in dB (the planner's gain_db; default -6,0)")
    g.add_argument("--annotations", action="store_true", help="with a scene: also write strong_labels.tsv (DCASE) and jams/<clip>.jams")


def scene_of(args: argparse.Namespace) -> dict | None:
    from reasonaudio.scene import SceneConfig

    cfg = SceneConfig.from_options(args.background, args.snr, args.room, args.pitch, args.stretch, args.varispeed)
    if cfg.is_empty:
        if args.annotations:
            raise UserError("--annotations writes scene annotations: give --background, --room, --pitch, --stretch or --varispeed")
        return None
    rec = cfg.recorded()
    if args.annotations:
        rec["annotations"] = True
    return rec


def gain_plan(args: argparse.Namespace) -> dict:
    from reasonaudio.scene import parse_range

    if getattr(args, "gain_db", None) is None:
        return {}
    return {"gain_db": list(parse_range(args.gain_db, "--gain-db", (-60.0, 0.0), "dB"))}


def run(args: argparse.Namespace) -> int:
    if args.ray is not None:  # before planning: a missing Ray is the install hint, not a failure after the plan
        from reasonaudio.errors import require

        require("ray", "ray", "--ray")
    config = corpus_config(args, scene_of(args))
    start = time.perf_counter()
    if args.save_plan is not None:
        from pathlib import Path

        from reasonaudio.builder.shard import PLAN_FILE, save_plan
        from reasonaudio.io.outputs import check_file, check_not_an_input

        if args.out is not None or args.shard is not None or args.ray is not None or args.from_plan is not None:
            raise UserError("--save-plan only plans: leave out --out, --shard, --ray and --from-plan")
        inputs = config.inputs
        # the plan file is claimed before planning (save_plan claims it again, under its lock)
        check_not_an_input(args.save_plan, inputs, "--save-plan")
        check_file(Path(args.save_plan), PLAN_FILE, args.force, "--save-plan")
        plan = plan_build(config)
        save_plan(plan, args.save_plan, inputs=inputs, force=args.force)
        print(f"planned {plan.n_clips} clips and {len(plan.specs)} queries in {plan.seconds:.1f} s; wrote {args.save_plan}")
        return 0
    if args.out is None:
        raise UserError("--out is required (unless --save-plan)")
    from reasonaudio.io.storage import check_persistent

    check_persistent(args.out)
    shard = parse_shard(args.shard) if args.shard is not None else None
    out = build(args.out, config, force=args.force, progress=not args.quiet, shard=shard, ray=args.ray, from_plan=args.from_plan)
    if out.shard is not None:
        meta = out.shard
        lo, hi = meta["clip_range"]
        print(f"built shard {meta['shard']}/{meta['shards']} in {out}: clips [{lo}, {hi}) of {meta['n_clips']} in {time.perf_counter() - start:.1f} s")
        return 0
    c = out.manifest["counts"]
    print(
        f"built {out}: {c['clips']} clips ({c['clips_by_pattern']['sequential']} sequential, "
        f"{c['clips_by_pattern']['overlap']} overlap), {c['events']} events, {c['queries']} queries, "
        f"{c['qrels']} relevant pairs, {c['planned_hard_negatives']} planned hard negatives "
        f"in {time.perf_counter() - start:.1f} s"
    )
    return 0
