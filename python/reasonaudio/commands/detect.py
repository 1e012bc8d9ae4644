"""`reasonaudio detect train|run|metrics`: the sound-event detector behind `--model detect:...`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from reasonaudio.commands.bounds import SEED, float_in, int_in


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "detect",
        help="train and run the sound-event detector (detect-then-reason retrieval)",
        description="Train a frame tagger on strongly labelled mixtures generated from an atom library, "
        "detect the events of a corpus from its audio alone, and measure them against true events.",
    )
    sub = parser.add_subparsers(dest="detect_command", metavar="SUBCOMMAND")
    sub.required = True

    train = sub.add_parser("train", help="train a detector on mixtures of an atom library")
    train.add_argument("library", help="`procedural` or an atom library directory")
    train.add_argument("--out", type=Path, default=None, help="model file to write (default: the cache, keyed by library hash)")
    train.add_argument("--steps", type=int_in(1, 10_000_000), default=None, help="optimiser steps, 1..10,000,000 (default 800)")
    train.add_argument("--batch", type=int_in(1, 1024), default=None, help="clips per step, 1..1024 (each holds a mixture and its features in memory; default 16)")
    train.add_argument("--max-seconds", type=float_in(0, 1e7, low_open=True), default=None, help="wall-clock budget in seconds, (0, 1e7] (default 870)")
    train.add_argument("--labels", type=int, default=None, help="train on the first N labels only, 1..the library's label count (quick experiments)")
    train.add_argument("--channels", type=int_in(1, 2048), default=None, help="convolution channels, 1..2048 (the weights grow with its square; default 160)")
    train.add_argument("--seed", type=SEED, default=None, help="training seed, 0..2^32-1 (default 0)")
    train.add_argument("--valid-clips", type=int_in(1, 100_000), default=None, help="held-out mixtures for the frame-F1 check, 1..100,000 (default 64)")
    train.add_argument("--device", default=None, help="cpu, cuda, cuda:N or mps, checked before any work (default: cuda if available)")
    train.add_argument("--force", action="store_true", help="replace an earlier model file at --out")
    train.add_argument("--quiet", action="store_true")
    train.set_defaults(func=run_train)

    run = sub.add_parser("run", help="detect the events of a corpus: write events_pred.parquet")
    run.add_argument("model", help="model file, or an atom library (trains or loads the cached model)")
    run.add_argument("audio", type=Path, help="benchmark directory, BEIR folder, or folder of audio files")
    run.add_argument("--out", type=Path, required=True, help="events parquet to write (contract events columns + confidence)")
    run.add_argument("--metrics", type=Path, default=None, help="also write SED metrics (JSON) against the benchmark's events.parquet")
    run.add_argument("--force", action="store_true", help="replace existing --out / --metrics files")
    run.add_argument("--threshold", type=float, default=None, help="decision threshold (default: the model's, 0.5)")
    run.add_argument("--device", default=None, help="cpu, cuda, cuda:N or mps, checked before any work (default: cuda if available)")
    run.add_argument("--quiet", action="store_true")
    run.set_defaults(func=run_detect)


def _load(spec: str, device: str, progress: bool):
    from reasonaudio.detect import check_model_or_library
    from reasonaudio.detect.model import Detector
    from reasonaudio.detect.train import train_cached

    check_model_or_library(spec)
    if Path(spec).is_file():
        return Detector.load(spec)
    log = (lambda m: print(m, file=sys.stderr)) if progress else (lambda m: None)
    return train_cached(spec, device=device, progress=progress, log=log)[0]


def _device(name: str | None) -> str:
    from reasonaudio.detect import torch_device

    return torch_device(name)


def run_train(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from reasonaudio.detect import torch_module
    from reasonaudio.errors import UserError

    inputs = [] if args.library == "procedural" else [args.library]
    if args.out is not None:  # before torch loads and training starts (save claims it again, under its lock)
        from reasonaudio.detect.model import MODEL_FILE
        from reasonaudio.io.outputs import check_file, check_not_an_input

        check_not_an_input(args.out, inputs)
        check_file(args.out, MODEL_FILE, args.force)
    elif args.force:
        raise UserError("--force replaces an earlier model at --out: give --out")
    from reasonaudio.detect.train import TrainConfig, train, train_cached

    torch_module()  # before any work: a missing torch is the install hint, not a traceback mid-run

    overrides = {k: v for k, v in {"steps": args.steps, "batch": args.batch, "max_seconds": args.max_seconds,
                                   "labels": args.labels, "channels": args.channels, "seed": args.seed,
                                   "valid_clips": args.valid_clips}.items() if v is not None}
    config = replace(TrainConfig(), **overrides)
    device = _device(args.device)
    log = (lambda m: print(m, file=sys.stderr)) if not args.quiet else (lambda m: None)
    if args.out is None:
        detector, path = train_cached(args.library, config, device=device, progress=not args.quiet, log=log)
    else:
        detector = train(args.library, config, device=device, progress=not args.quiet, log=log)
        path = detector.save(args.out, inputs=inputs, force=args.force)
    t = detector.training
    print(f"{path}: {len(detector.labels)} labels, {t.get('steps_done')} steps in {t.get('train_seconds')} s, "
          f"held-out frame F1 {t.get('valid_frame_f1')}")
    return 0


def run_detect(args: argparse.Namespace) -> int:
    from reasonaudio.detect import torch_module
    from reasonaudio.errors import UserError, require

    torch_module()  # both before any work, so a missing package is the install hint up front
    require("scipy.ndimage", "detect", "the detector's median filter (SciPy)")

    if args.threshold is not None and not 0.0 < args.threshold < 1.0:
        raise UserError(f"--threshold must be within (0, 1), got {args.threshold}")
    device = _device(args.device)  # options first, then the outputs
    from reasonaudio.io.outputs import FileOutput, json_kind, output_files, parquet_kind, parquet_metadata

    events_kind = parquet_kind("detected events table")
    metrics_format = "reasonaudio-sed-metrics/1"
    outputs = [FileOutput(args.out, events_kind, "--out")]
    if args.metrics is not None:
        outputs.append(FileOutput(args.metrics, json_kind("SED metrics report", metrics_format), "--metrics"))
    inputs = [args.audio] + ([args.model] if Path(args.model).exists() else [])
    want_metrics = args.metrics is not None
    # both outputs are claimed (distinct, not inputs, checked and locked) before a model is loaded
    # or trained and before the detection runs
    with output_files(outputs, inputs=inputs, force=args.force) as tmps:
        from reasonaudio.detect.infer import audio_inputs, detect

        detector = _load(args.model, device, not args.quiet)
        if args.threshold is not None:
            from dataclasses import replace

            detector.post = replace(detector.post, threshold=args.threshold)
        clip_ids, paths, bench = audio_inputs(args.audio)
        if want_metrics and (bench is None or bench.events.height == 0):
            raise UserError(f"{args.audio}: --metrics needs a benchmark directory with events.parquet")
        if want_metrics:  # before detecting: metrics against labels the model never learnt are meaningless
            truth = sorted(set(bench.events["label"].cast(str).to_list()))
            unknown = [label for label in truth if label not in set(detector.labels)]
            if unknown:
                lib = detector.library.get("spec")
                raise UserError(
                    f"--metrics: {len(unknown)} of the {len(truth)} labels in {args.audio}'s events are not in the model's "
                    f"vocabulary ({len(detector.labels)} labels of library {lib!r}): {', '.join(unknown[:6])}"
                    f"{', …' if len(unknown) > 6 else ''}; the model was trained on another atom library (or on --labels N of it)"
                )
        index = detect(detector, paths, clip_ids, device=device, keep_scores=want_metrics, progress=not args.quiet)
        table = index.table()
        table.write_parquet(tmps[0], compression="zstd", statistics=False, metadata=parquet_metadata(events_kind))
        if want_metrics:
            from reasonaudio.detect.metrics import sed_metrics

            m = sed_metrics(index, bench.events)
            tmps[1].write_text(json.dumps({"format": metrics_format, **m}, indent=2) + "\n")
    print(f"{args.out}: {table.height} events in {len(clip_ids)} clips")
    if want_metrics:
        print(
            f"event F1 {100 * m['event_based']['micro_f1']:.1f}%  segment F1 {100 * m['segment_based']['micro_f1']:.1f}%  "
            f"PSDS1 {m['psds1']} -> {args.metrics}"
        )
    return 0
