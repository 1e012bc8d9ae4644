"""`reasonaudio build`: synthesize a complete benchmark directory (contract §4)."""

from __future__ import annotations

import argparse
import json
import time

from reasonaudio.atoms.exemplars import SPLITS
from reasonaudio.builder import AUDIO_FORMATS, BuildConfig, build, parse_shard, plan_build
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
        help="synthesize a benchmark: audio, events, queries, qrels, two-option pairs, BEIR export",
        description="Synthesize a reasoning-intensive text-to-audio retrieval benchmark into DIR.",
    )
    d = BuildConfig()
    p.add_argument("--out", default=None, help="output directory or fsspec URI (must be empty unless --force); required unless --save-plan")
    p.add_argument("--clips", type=int, default=d.clips, help=f"number of clips (default {d.clips})")
    p.add_argument("--overlap-fraction", type=float, default=d.overlap_fraction, help=f"share of overlap clips (default {d.overlap_fraction})")
    p.add_argument("--queries-per-task", type=int, default=d.queries_per_task, help=f"queries per task (default {d.queries_per_task}; 0 = corpus only)")
    p.add_argument("--atoms", default=d.atoms, help="'procedural' (embedded default) or an atom library directory")
    p.add_argument("--sample-rate", type=int, default=d.sample_rate, help=f"Hz (default {d.sample_rate})")
    p.add_argument("--seed", type=int, default=d.seed, help=f"random seed (default {d.seed})")
    p.add_argument("--max-clip-s", type=float, default=d.max_clip_s, help=f"longest clip in seconds (default {d.max_clip_s})")
    p.add_argument("--format", dest="audio_format", choices=sorted(AUDIO_FORMATS), default=d.audio_format, help="audio format (default wav16)")
    p.add_argument("--threads", type=int, default=0, help="worker threads (0 = all cores); output does not depend on it")
    p.add_argument("--min-hard-negatives", type=int, default=d.min_hard_negatives,
                   help="hard negatives each query must have; missing ones are planned on purpose (default 1)")
    p.add_argument("--plan", type=_plan_override, action="append", default=[], metavar="KEY=JSON",
                   help='override a planner parameter, e.g. --plan \'duration_weights=[0.5,0.3,0.2]\'')
    p.add_argument("--exemplar-split", choices=SPLITS, default=d.exemplar_split,
                   help="build from the library's test (or train) exemplars only (default all)")
    p.add_argument("--force", action="store_true", help="replace a non-empty output directory")
    p.add_argument("--shard", default=None, metavar="K/N",
                   help="render only shard K of N (0-based) into --out; `reasonaudio merge` assembles the shards")
    p.add_argument("--save-plan", default=None, metavar="FILE",
                   help="only plan, and write the plan to FILE (.npz) for `--from-plan`: shards then skip planning")
    p.add_argument("--from-plan", default=None, metavar="FILE",
                   help="use a plan written by --save-plan with the same build options instead of planning again")
    p.add_argument("--ray", default=None, metavar="ADDRESS|local",
                   help="render on a Ray cluster ('local' starts one on this machine); needs reasonaudio[ray]")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config = BuildConfig(
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
        plan=dict(args.plan),
        exemplar_split=args.exemplar_split,
    )
    start = time.perf_counter()
    if args.save_plan is not None:
        from reasonaudio.builder.shard import save_plan

        if args.out is not None or args.shard is not None or args.ray is not None or args.from_plan is not None:
            raise UserError("--save-plan only plans: leave out --out, --shard, --ray and --from-plan")
        plan = plan_build(config)
        save_plan(plan, args.save_plan)
        print(f"planned {plan.n_clips} clips and {len(plan.specs)} queries in {plan.seconds:.1f} s; wrote {args.save_plan}")
        return 0
    if args.out is None:
        raise UserError("--out is required (unless --save-plan)")
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
