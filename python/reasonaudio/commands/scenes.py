"""`reasonaudio scenes`: render ONE plan in several named conditions (contract §5) into sibling
benchmarks ROOT/<name> whose events, queries, qrels and mc are byte-identical."""

from __future__ import annotations

import argparse
import shlex

from reasonaudio.builder.run import build_conditions
from reasonaudio.commands.bounds import reads_negative_numbers
from reasonaudio.commands.build import add_corpus_options, corpus_config
from reasonaudio.errors import UserError

DEFAULT_CONDITIONS = (
    "clean",
    "pink_snr20=--background noise:pink --snr 20",
    "pink_snr10=--background noise:pink --snr 10",
    "pink_snr0=--background noise:pink --snr 0",
    "pink_snr10_room=--background noise:pink --snr 10 --room simulated:0.3,0.6",
)
_DEFAULT_BY_NAME = {c.partition("=")[0]: c for c in DEFAULT_CONDITIONS}


def parse_condition(text: str) -> tuple[str, dict | None]:
    """'NAME=--background SPEC --snr LO,HI --room SPEC', or 'NAME' alone: the default condition of
    that name (`--condition pink_snr10_room` is the bed and room it names, not clean audio under
    that name), else clean."""
    from reasonaudio.scene import SceneConfig

    name, sep, rest = text.partition("=")
    name = name.strip()
    if not sep and name in _DEFAULT_BY_NAME:
        name, sep, rest = _DEFAULT_BY_NAME[name].partition("=")
    if not sep or not rest.strip():
        return name, None
    p = reads_negative_numbers(argparse.ArgumentParser(prog=f"--condition {name}", add_help=False, exit_on_error=False))
    p.add_argument("--background")
    p.add_argument("--snr")
    p.add_argument("--room")
    try:
        ns, extra = p.parse_known_args(shlex.split(rest))
    except (argparse.ArgumentError, ValueError) as err:
        raise UserError(f"--condition {text!r}: {err}") from None
    if extra:
        raise UserError(f"--condition {name}: unknown option(s) {' '.join(extra)} (a condition takes --background, --snr, --room; "
                        "--pitch, --stretch and --varispeed belong to the plan: give them to `scenes` itself)")
    cfg = SceneConfig.from_options(ns.background, ns.snr, ns.room, None)
    return name, None if cfg.is_empty else cfg.recorded()


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "scenes",
        description=__doc__,
    )
    p.add_argument("--out", required=True, help="root directory: one benchmark per condition in OUT/<name>")
    p.add_argument("--condition", action="append", default=[], metavar="NAME[=OPTIONS]",
                   help="a condition: NAME alone is the default condition of that name (below), any other NAME alone is clean; NAME='--background noise:pink --snr 10 --room simulated:0.3,0.6' (a negative range as typed: --snr -5,10). "
                        f"Default: {'; '.join(DEFAULT_CONDITIONS)}")
    add_corpus_options(p)  # the plan's options, as `build` takes and bounds them
    p.add_argument("--gain-db", default=None, metavar="LO,HI", help="per-event gain range in dB, the same in every condition (default -6,0; a negative range as typed: --gain-db -12,-3)")
    # pitch and tempo belong to the plan (events.parquet records them): the same draws in every condition
    p.add_argument("--pitch", default=None, metavar="LO,HI", help="per-event pitch shift in semitones, the same in every condition (as build; e.g. --pitch -2,2)")
    p.add_argument("--stretch", default=None, metavar="LO,HI", help="per-event time stretch, the same in every condition (as build)")
    p.add_argument("--varispeed", default=None, metavar="LO,HI", help="per-event varispeed in semitones, the same in every condition (as build)")
    p.add_argument("--force", action="store_true", help="replace non-empty condition directories")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    conditions = dict(parse_condition(c) for c in (args.condition or DEFAULT_CONDITIONS))
    if len(conditions) != len(args.condition or DEFAULT_CONDITIONS):
        raise UserError("two --condition options share a name")
    config = corpus_config(args)
    if args.pitch is not None or args.stretch is not None or args.varispeed is not None:
        from reasonaudio.scene import SceneConfig

        voiced = SceneConfig.from_options(None, None, None, args.pitch, args.stretch, args.varispeed).recorded()
        plan_level = {k: voiced[k] for k in ("pitch_semitones", "stretch", "varispeed_semitones")}
        conditions = {name: {**(scene or SceneConfig().recorded()), **plan_level} for name, scene in conditions.items()}
    built = build_conditions(args.out, config, conditions, force=args.force, progress=not args.quiet)
    for name, b in built.items():
        print(f"built {b}: condition {name}, {b.manifest['counts']['clips']} clips, {b.manifest['counts']['queries']} queries")
    return 0
