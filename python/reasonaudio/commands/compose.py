"""`reasonaudio compose build|prompts|run|score|export|import-study`: the two-segment cue -> select ->
execute diagnostic, and converters to and from the study's file layout."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reasonaudio.commands.bounds import SEED, int_in
from reasonaudio.errors import UserError


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "compose")
    sub = parser.add_subparsers(dest="compose_command", metavar="STEP")
    sub.required = True

    b = sub.add_parser("build", help="synthesize a two-segment set: audio/*.wav, metadata.jsonl, manifest.json")
    b.add_argument("--out", required=True, type=Path)
    b.add_argument("--cue", choices=("environment", "gender", "emotion"), default="environment")
    b.add_argument("--task", choices=("asr", "math", "facts"), default="asr")
    b.add_argument("--n", type=int_in(4, 100_000), default=600, help="number of samples, a multiple of 4 within 4..100,000 (each is a WAV of a few seconds; default 600)")
    b.add_argument("--snr", type=float, nargs="+", default=[0.0, 10.0, 20.0],
                   help="speech-to-background SNRs in dB for the environment cue")
    b.add_argument("--sample-rate", type=int, default=24000, help="Hz, 8000..192000 (default 24000)")
    b.add_argument("--speech", default="tts", help="'tts' (espeak-ng) or a CSV path,text,gender,emotion[,answers]")
    b.add_argument("--atoms", default="procedural", help="'procedural' or an atom library folder")
    b.add_argument("--cue-values", nargs="+", default=None,
                   help="cue values to use (background labels, genders or emotions); default: all available")
    b.add_argument("--facts", default=None, help="extra factual questions (JSONL or CSV)")
    b.add_argument("--no-builtin-facts", action="store_true", help="use only the questions in --facts")
    b.add_argument("--math-levels", type=int, nargs="+", default=[1, 2, 3], choices=(1, 2, 3))
    b.add_argument("--seed", type=SEED, default=0, help="seed, 0..2^32-1 (default 0)")
    b.add_argument("--force", action="store_true", help="replace --out if it exists")
    b.set_defaults(func=_build)

    p = sub.add_parser("prompts", help="write the prompts of every layer for a set")
    p.add_argument("dir", type=Path)
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--layers", nargs="+", default=None)
    p.add_argument("--force", action="store_true", help="replace an existing --out file")
    p.add_argument("--prompts", choices=("project", "study"), default="project", dest="style",
                   help="wording and tag names: this project's or the study's")
    p.set_defaults(func=_prompts)

    r = sub.add_parser("run", help="run an audio LM over a set's prompts")
    r.add_argument("dir", type=Path)
    r.add_argument("--model", required=True, help="cmd:<program>, qwen2audio[:DIR_OR_HUB_ID] or py:<module>:<attr>")
    r.add_argument("--out", required=True, type=Path)
    r.add_argument("--prompts", default=None,
                   help="a prompts JSONL, or 'project' / 'study' to generate them in that style (default: project)")
    r.add_argument("--layers", nargs="+", default=None)
    r.add_argument("--limit", type=int_in(1), default=None, help="only the first N samples (N >= 1)")
    r.add_argument("--max-new-tokens", type=int_in(1, 32_768), default=256, help="tokens a model may generate per answer, 1..32,768 (default 256)")
    r.add_argument("--force", action="store_true", help="replace an existing --out file (a model's outputs are costly: off by default)")
    r.set_defaults(func=_run)

    s = sub.add_parser("score", help="score model outputs and write results.json, samples.jsonl, report.md and figures")
    s.add_argument("dirs", type=Path, nargs="+", metavar="DIR")
    s.add_argument("--outputs", type=Path, nargs="+", required=True, help="one outputs JSONL per DIR")
    s.add_argument("--out", required=True, type=Path)
    s.add_argument("--force", action="store_true", help="replace an earlier results directory at --out")
    s.add_argument("--scoring", choices=("robust", "study"), default="robust",
                   help="robust: this project's parsers; study: the study's code's decisions (docs/compose.md)")
    s.add_argument("--prompts", choices=("project", "study"), default=None,
                   help="the prompt style the outputs answered, which fixes the tag names "
                        "(default: the set's own; 'study' for sets imported from the study)")
    s.set_defaults(func=_score)

    e = sub.add_parser("export", help="write a set in another layout (the study's metadata.jsonl + audios/)")
    e.add_argument("dir", type=Path)
    e.add_argument("--to", choices=("study",), required=True)
    e.add_argument("out", type=Path)
    e.add_argument("--force", action="store_true", help="replace OUT if it exists")
    e.set_defaults(func=_export)

    i = sub.add_parser("import-study", help="read a set in the study's layout (and its prediction files)")
    i.add_argument("dir", type=Path, help="a folder with the study's metadata.jsonl and audio")
    i.add_argument("--out", required=True, type=Path, help="the compose set to write")
    i.add_argument("--cue", choices=("environment", "gender", "emotion"), default=None,
                   help="default: environment for bg_noise sets; required for the shared gender/emotion sets")
    i.add_argument("--task", choices=("asr", "math", "facts"), default=None,
                   help="default: math or facts from the answers; asr scores the same audio as transcription")
    i.add_argument("--predictions", type=Path, nargs="+", default=None,
                   help="the study's prediction files (raw, LLM-parsed or graded JSONL); the task is read from "
                        "the file name (e.g. ..._env_math_select.jsonl), or give LAYER=FILE")
    i.add_argument("--outputs", type=Path, default=None,
                   help="where to write the converted outputs JSONL (default: OUT/study_outputs.jsonl)")
    i.add_argument("--force", action="store_true", help="replace --out if it exists")
    i.set_defaults(func=_import_study)


def _layers(arg):
    from reasonaudio.compose.prompts import LAYERS

    if arg is None:
        return LAYERS
    bad = [x for x in arg if x not in LAYERS]
    if bad:
        raise UserError(f"unknown layer(s) {bad}; expected some of {', '.join(LAYERS)}")
    return tuple(arg)


def _build(args: argparse.Namespace) -> int:
    from reasonaudio.compose.build import ComposeConfig, build_set

    cfg = ComposeConfig(cue=args.cue, task=args.task, n=args.n, snrs=tuple(args.snr), sample_rate=args.sample_rate,
                      seed=args.seed, cue_values=tuple(args.cue_values) if args.cue_values else None,
                      math_levels=tuple(args.math_levels), speech=args.speech, atoms=args.atoms, facts=args.facts,
                      builtin_facts=not args.no_builtin_facts)
    manifest = build_set(args.out, cfg, force=args.force, progress=True)
    print(f"wrote {manifest['n_samples']} samples to {args.out} (cue {cfg.cue}, task {cfg.task}; "
          f"target positions {manifest['counts']['target_segment']})")
    return 0


def _prompts(args: argparse.Namespace) -> int:
    from reasonaudio.compose.build import set_input
    from reasonaudio.compose.prompts import write_prompts
    from reasonaudio.compose.io import PROMPTS_FILE
    from reasonaudio.io.outputs import output_file

    layers = _layers(args.layers)
    # a prompts file may live inside its set (its natural home), never over one of the set's own files
    with output_file(args.out, PROMPTS_FILE, inputs=[set_input(args.dir)], force=args.force) as tmp:
        n = write_prompts(args.dir, tmp, layers, args.style)
    print(f"wrote {n} prompts to {args.out}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from reasonaudio.compose.build import set_input
    from reasonaudio.compose.runner import load_model, run
    from reasonaudio.compose.io import OUTPUTS_FILE
    from reasonaudio.io.outputs import output_file

    layers = _layers(args.layers)
    inputs = [set_input(args.dir)] + ([Path(args.prompts)] if args.prompts not in (None, "project", "study") else [])
    kwargs = {"max_new_tokens": args.max_new_tokens} if args.model.partition(":")[0] == "qwen2audio" else {}
    # claimed before loading a model, which can take minutes
    with output_file(args.out, OUTPUTS_FILE, inputs=inputs, force=args.force) as tmp:
        model = load_model(args.model, **kwargs)
        n = run(args.dir, model, tmp, layers, args.prompts, args.limit, progress=True)
    print(f"wrote {n} outputs to {args.out}")
    return 0


def _score(args: argparse.Namespace) -> int:
    from reasonaudio.compose.report import write_report
    from reasonaudio.compose.score import score_dataset

    if len(args.dirs) != len(args.outputs):
        raise UserError(f"give one --outputs file per set: {len(args.dirs)} set(s), {len(args.outputs)} file(s)")
    from reasonaudio.compose.io import read_jsonl
    from reasonaudio.compose.prompts import LAYERS
    from reasonaudio.io.outputs import output_directory

    from reasonaudio.compose.build import set_input

    # a results folder may lie inside a set, as long as it holds none of the set's own files
    inputs = [*(set_input(d) for d in args.dirs), *args.outputs]
    with output_directory(args.out, "compose results", inputs=inputs, force=args.force) as tmp:
        for outputs in args.outputs:
            rows = read_jsonl(outputs)
            if not rows:
                raise UserError(f"{outputs}: no model outputs (an empty file scores nothing)")
            seen = {r.get("layer") for r in rows}
            missing = [layer for layer in LAYERS if layer not in seen]
            if missing:
                print(f"reasonaudio compose score: note: {outputs} has no outputs for layer(s) {', '.join(missing)}; they are not scored",
                      file=sys.stderr)
        results = [score_dataset(d, o, scoring=args.scoring, prompts=args.prompts, other_sets=args.dirs)
                   for d, o in zip(args.dirs, args.outputs)]
        write_report(results, tmp)
    print(f"wrote results.json, samples.jsonl, report.md and figures to {args.out} ({args.scoring} scoring)")
    return 0


def _export(args: argparse.Namespace) -> int:
    from reasonaudio.compose.convert import export_study

    n = export_study(args.dir, args.out, force=args.force)
    print(f"wrote {n} samples in the study's layout to {args.out} (metadata.jsonl, audios/)")
    return 0


def _import_study(args: argparse.Namespace) -> int:
    from reasonaudio.compose.convert import import_study

    n, n_out, outputs = import_study(args.dir, args.out, cue=args.cue, task=args.task,
                                     predictions=args.predictions, outputs=args.outputs, force=args.force)
    print(f"wrote {n} samples to {args.out}" + (f" and {n_out} outputs to {outputs}" if outputs else ""))
    return 0
