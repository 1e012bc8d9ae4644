"""`reasonaudio detect train|run|enrol`: the sound-event detector behind `--model detect:...`."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from reasonaudio.commands.bounds import SEED, float_in, int_in


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "detect",
        description="Train a frame tagger on strongly labelled mixtures generated from an atom library, "
        "detect the events of a corpus from its audio alone, and add labels from a few recordings.",
    )
    sub = parser.add_subparsers(dest="detect_command", metavar="SUBCOMMAND")
    sub.required = True

    from reasonaudio.detect.recipe import NAMES

    train = sub.add_parser("train", help="train a detector on mixtures of one or more atom libraries",
                           description="Train the detector a recipe describes (recipes are small TOML files: procedural, "
                           "scenes, recordings, or your own). Reproducible: the same command writes the same model bytes "
                           "on CPU. Prints frame/event F1 on mixtures of the training recordings and of held-out recordings.")
    train.add_argument("library", nargs="+", help="`procedural` or atom library directories (several: one vocabulary, concatenated)")
    train.add_argument("--out", type=Path, default=None, help="model file to write (default: the cache, where --model detect:LIB finds it)")
    train.add_argument("--recipe", default="auto", metavar="|".join(NAMES) + "|FILE.toml",
                       help="what to train (default auto: procedural for the procedural library, recordings for any other)")
    train.add_argument("--steps", type=int_in(1, 10_000_000), default=None, help="optimiser steps per tagger (default: the recipe's)")
    train.add_argument("--batch", type=int_in(1, 1024), default=None, help="mixtures per step, 1..1024 (default: the recipe's)")
    train.add_argument("--channels", type=int_in(1, 2048), default=None, help="convolution channels, 1..2048 (default: the recipe's)")
    train.add_argument("--valid-clips", type=int_in(1, 100_000), default=None, help="mixtures per validation (default: the recipe's)")
    train.add_argument("--seed", type=SEED, default=0, help="training seed, 0..2^32-1 (default 0; an ensemble's taggers take SEED, SEED+1, ...)")
    train.add_argument("--labels", type=int, default=None, help="train on the first N labels only (quick trials)")
    train.add_argument("--max-seconds", type=float_in(0, 1e7, low_open=True), default=None,
                       help="safety stop: fail (write no model) if a tagger trains longer than this")
    train.add_argument("--device", default=None, help="cpu, cuda, cuda:N or mps (default: cuda if available)")
    train.add_argument("--force", action="store_true", help="replace an earlier model file at --out")
    train.set_defaults(func=run_train)

    enrol = sub.add_parser("enrol", help="add a label from a few recordings of the sound, without retraining",
                           description="Few-shot enrolment: the recordings (each one isolated example of the new sound; "
                           "about 5) become a prototype in the tagger's embedding space, calibrated against the model's "
                           "background bank; the trained weights are unchanged.")
    enrol.add_argument("model", type=Path, help="detector model file")
    enrol.add_argument("recordings", type=Path, nargs="+", help="audio files of the new sound (at least 2)")
    enrol.add_argument("--label", required=True, help="snake_case label of the new sound")
    enrol.add_argument("--phrase", required=True, help="the phrase queries use for it, e.g. 'a squeaky door'")
    enrol.add_argument("--out", type=Path, required=True, help="model file to write (the input model plus the label)")
    enrol.add_argument("--force", action="store_true", help="replace --out if it exists")
    enrol.add_argument("--device", default=None)
    enrol.set_defaults(func=run_enrol)

    run = sub.add_parser("run", help="detect the events of a corpus: write events_pred.parquet")
    run.add_argument("model", help="model file, or an atom library (trains with its auto recipe, or loads the cached model)")
    run.add_argument("audio", type=Path, help="benchmark directory, BEIR folder, or folder of audio files")
    run.add_argument("--out", type=Path, required=True, help="events parquet to write (contract events columns + confidence)")
    run.add_argument("--metrics", type=Path, default=None, help="also write SED metrics (JSON) against the benchmark's events.parquet")
    run.add_argument("--force", action="store_true", help="replace existing --out / --metrics files")
    run.add_argument("--threshold", type=float, default=None, help="decision threshold (default: the model's, 0.5)")
    run.add_argument("--device", default=None, help="cpu, cuda, cuda:N or mps, checked before any work (default: cuda if available)")
    run.set_defaults(func=run_detect)


def _device(name: str | None) -> str:
    from reasonaudio.devices import torch_device

    return torch_device(name, extra="detect")


def run_train(args: argparse.Namespace) -> int:
    from reasonaudio.detect import recipe as recipes
    from reasonaudio.detect import torch_module
    from reasonaudio.errors import UserError

    inputs = [lib for lib in args.library if lib != "procedural"]
    if args.out is not None:  # before torch loads and training starts (save claims it again, under its lock)
        from reasonaudio.detect.model import MODEL_FILE
        from reasonaudio.io.outputs import check_file, check_not_an_input

        check_not_an_input(args.out, inputs)
        check_file(args.out, MODEL_FILE, args.force)
    elif args.force:
        raise UserError("--force replaces an earlier model at --out: give --out")
    recipe = recipes.load(args.recipe, args.library)
    changes = {k: v for k, v in {"steps": args.steps, "batch": args.batch, "channels": args.channels,
                                 "valid_clips": args.valid_clips}.items() if v is not None}
    recipe = recipe.with_tagger(**changes)
    from reasonaudio.detect.train import recipe_path, train_recipe

    torch_module()  # before any work: a missing torch is the install hint, not a traceback mid-run
    library = args.library[0] if len(args.library) == 1 else args.library
    device = _device(args.device)
    log = (lambda m: print(m, file=sys.stderr)) if not args.quiet else (lambda m: None)
    if args.out is None:
        from reasonaudio.detect.model import Detector
        from reasonaudio.detect.train import aisfx_available

        path = recipe_path(library, recipe, args.seed, args.labels, recipe.aisfx is not None and aisfx_available())
        if path.is_file():
            detector = Detector.load(path)
        else:
            detector = train_recipe(library, recipe, seed=args.seed, labels=args.labels, max_seconds=args.max_seconds,
                                    device=device, progress=not args.quiet, log=log)
            detector.save(path)
    else:
        detector = train_recipe(library, recipe, seed=args.seed, labels=args.labels, max_seconds=args.max_seconds,
                                device=device, progress=not args.quiet, log=log)
        path = detector.save(args.out, inputs=inputs, force=args.force)
    t = detector.training
    secs = detector.run_info.get("train_seconds")
    parts = [f"{1 + len(detector.members)} taggers" if detector.members else "a tagger"]
    parts += ["prototype heads"] if detector.prototypes else []
    parts += ["the aiSFX head"] if detector.aisfx else []
    print(f"{path}: recipe {recipe.name} ({', '.join(parts)}), {len(detector.labels)} labels, {t.steps_done} steps "
          f"(kept step {t.selected_step})"
          + (f" in {secs} s wall, {detector.run_info.get('train_cpu_seconds')} s CPU" if secs else " (loaded from the cache)"))
    seen = t.valid_train_recordings or {}
    held = t.valid_held_out_recordings
    print(f"  mixtures of training recordings: frame F1 {seen.get('frame_f1')}, event F1 {seen.get('event_f1')}")
    if held:
        print(f"  mixtures of held-out recordings: frame F1 {held.get('frame_f1')}, event F1 {held.get('event_f1')}")
    print(f"  held out: {t.held_out_recordings}")
    if secs:  # the model's bytes follow the kernels torch and oneDNN chose for this CPU (docs/results/detect.md)
        torch = torch_module()
        isa = os.environ.get("ONEDNN_MAX_CPU_ISA", "the CPU's best")
        print(f"  kernels: torch CPU capability {torch.backends.cpu.get_cpu_capability()}, oneDNN ISA {isa} "
              "(the same bytes need the same on another machine)")
    return 0


def run_enrol(args: argparse.Namespace) -> int:
    from reasonaudio.detect.enrol import enrol, read_recordings
    from reasonaudio.detect.model import MODEL_FILE, Detector
    from reasonaudio.io.outputs import check_file, check_not_an_input

    check_not_an_input(args.out, [args.model, *args.recordings])  # before the work; save claims it again
    check_file(Path(args.out), MODEL_FILE, args.force)
    detector = Detector.load(args.model)
    waves = read_recordings(args.recordings, detector.features.sample_rate)
    out = enrol(detector, args.label, args.phrase, waves, device=_device(args.device))
    out.save(args.out, inputs=[args.model, *args.recordings], force=args.force)
    shot = out.enrolled.shots[-1]
    print(f"{args.out}: enrolled {args.label!r} from {len(waves)} recordings (leave-one-out positives p20 "
          f"{shot['positive_p20']}, background p99.5 {shot['background_p99_5']}); {len(out.labels)} labels")
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

        from reasonaudio.detect.train import detector_for

        log = (lambda m: print(m, file=sys.stderr)) if not args.quiet else (lambda m: None)
        detector = detector_for(args.model, device=device, progress=not args.quiet, log=log)[0]
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
                lib = detector.library.given
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
