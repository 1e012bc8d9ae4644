"""`reasonaudio detect train|run|metrics`: the sound-event detector behind `--model detect:...`."""

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
        "detect the events of a corpus from its audio alone, and measure them against true events.",
    )
    sub = parser.add_subparsers(dest="detect_command", metavar="SUBCOMMAND")
    sub.required = True

    from reasonaudio.detect.aisfx_heads import HEADS, HeadConfig
    from reasonaudio.detect.augment import AugmentConfig
    from reasonaudio.detect.model import STEMS  # already imported by detect.train: no start-up cost
    from reasonaudio.detect.train import TrainConfig

    d = TrainConfig()
    train = sub.add_parser("train", help="train a detector on mixtures of one or more atom libraries",
                           description="Reproducible: the same command writes the same model bytes on CPU (steps, batch and "
                           "seed define the run; no wall-clock stop). Prints frame/event F1 on mixtures of the training "
                           "recordings and of held-out recordings.")
    train.add_argument("library", nargs="+", help="`procedural` or atom library directories (several: one vocabulary, concatenated; "
                       "each library holds out its own validation recordings, so adding one never changes another's)")
    train.add_argument("--out", type=Path, default=None, help="model file to write (default: the cache, keyed by library hash)")
    train.add_argument("--steps", type=int_in(1, 10_000_000), default=None, help=f"optimiser steps, 1..10,000,000 (default {d.steps})")
    train.add_argument("--batch", type=int_in(1, 1024), default=None, help=f"clips per step, 1..1024 (default {d.batch}); each holds a mixture and its features in memory")
    train.add_argument("--seed", type=SEED, default=None, help=f"training seed: data order, augmentation, initial weights, 0..2^32-1 (default {d.seed})")
    train.add_argument("--max-seconds", type=float_in(0, 1e7, low_open=True), default=None,
                       help="safety stop: fail (write no model) if training runs longer than this, (0, 1e7] (default: none)")
    train.add_argument("--labels", type=int, default=None, help="train on the first N labels only, 1..the library's label count (quick experiments)")
    train.add_argument("--channels", type=int_in(1, 2048), default=None, help=f"convolution channels, 1..2048 (default {d.channels}); the weights grow with its square")
    train.add_argument("--valid-clips", type=int_in(1, 100_000), default=None, help=f"mixtures per validation set, 1..100,000 (default {d.valid_clips})")
    train.add_argument("--valid-fraction", type=float_in(0, 0.9), default=None,
                       help=f"share of each label's training recordings held out for validation, labels with 2+, 0..0.9 (default {d.valid_fraction})")
    train.add_argument("--augment", nargs="?", const="scene", choices=["scene", "basic", "variants"], default=None,
                       help="augment (default off). `scene` (the default of a bare --augment): per-recording level, EQ, stretch; "
                            "each mixture through the core's scene renderer: per-event pitch, simulated rooms, beds at -5..30 dB SNR "
                            "(needs pyroomacoustics, the scene extra); overlap-heavy plans. `basic`: the same variants with "
                            "resampled speed, a Python noise room and bed; `variants`: the per-recording variants only (no room, no bed, "
                            "the benchmark's plans)")
    train.add_argument("--front-end", choices=["logmel", "aisfx"], default=None,
                       help="logmel (default) or aisfx: add the pretrained aiSFX CNN's embeddings (pip install --no-deps aisfx)")
    train.add_argument("--spec-augment", action="store_true",
                       help="mask two bands of up to 8 mel channels and two stretches of up to 0.5 s of each training clip's log-mel")
    train.add_argument("--dropout", type=float_in(0, 0.9), default=None, help="dropout on the frame embeddings before the head, 0..0.9 (default 0)")
    train.add_argument("--stem", choices=STEMS, default=None,
                       help="2d-halftime (default): three 3x3 convolutions over (band, frame), time halved after the first, "
                       "so a sound's pattern survives a shift or colour in frequency; 2d: the same at full time resolution "
                       "(about 1.5x its training CPU); 1d (the default before stop 31): the mel bands are one feature vector per frame")
    train.add_argument("--valid-seed", type=SEED, default=None,
                       help="seed of the validation split of recordings (default: --seed); give the taggers of one ensemble the same")
    train.add_argument("--overlap-weight", type=float_in(1, 100), default=None,
                       help="weight of the positive frames where two or more sounds are active in the loss, 1..100 (default 1: plain BCE)")
    train.add_argument("--overlap-fraction", type=float_in(0, 1), default=None,
                       help=f"share of overlapping clips in the training mixtures, 0..1 (default {d.overlap_fraction}; the benchmark's is 0.4; "
                       f"with --augment: {AugmentConfig.core_scene().overlap_fraction} for scene and basic, "
                       f"{AugmentConfig.variants().overlap_fraction} for variants)")
    train.add_argument("--device", default=None, help="cpu, cuda, cuda:N or mps, checked before any work (default: cuda if available)")
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

    proto = sub.add_parser("prototypes", help="score every trained label by cosine to prototypes of its training recordings",
                           description="Prototype heads (issue 21): each trained label's frame probability comes from the cosine "
                           "of the tagger's standardised frame embedding to prototypes of the library's training recordings, "
                           "calibrated on negative frames of training mixtures; the trained weights are unchanged. Recordings "
                           "held out for validation at training time are left out unless --include-valid.")
    _heads_inputs(proto, "detector model file (trained by `detect train`)", "the prototype heads")
    proto.add_argument("--mode", choices=["prototypes", "both"], default="prototypes",
                       help="prototypes (default): replace the linear head; both: the mean of the two probabilities")
    proto.add_argument("--per", choices=["recording", "label"], default="recording",
                       help="one prototype per training recording, max over a label's (default), or one per label (their mean)")
    proto.add_argument("--quantile", type=float_in(50, 99.99), default=99.0,
                       help="centre: this percentile of a label's cosine on frames where it is absent, [50, 99.99] (default 99)")
    proto.add_argument("--scale", type=float_in(0, 100, low_open=True), default=0.5,
                       help="scale: the negatives' standard deviation times this, (0, 100] (default 0.5)")
    proto.add_argument("--force", action="store_true", help="replace --out if it exists")
    proto.add_argument("--device", default=None)
    proto.set_defaults(func=run_prototypes)

    aisfx = sub.add_parser("aisfx", help="mix the pretrained aiSFX CNN's label scores into the trained labels' probabilities",
                           description="aiSFX heads (issue 21): each trained label's frame probability p is mixed with a score a "
                           "that the pretrained aiSFX CNN gives its frames. --head trained (default) fits a small network on aiSFX "
                           "embeddings of training mixtures of the library's recordings (minutes: about one aiSFX pass per mixture) "
                           "and mixes (1 - w) p + w a; --head prototypes takes the softmax over labels of the cosine to prototypes "
                           "of the training recordings and mixes (1 - w) p + w sqrt(p a), which can veto a label, never add one. "
                           "Needs `pip install --no-deps aisfx` here and wherever the model runs (its weights, CC BY 4.0, are read "
                           "from the wheel, not stored); detection then costs an aiSFX pass per clip. Recordings held out for "
                           "validation at training time are left out unless --include-valid.")
    _heads_inputs(aisfx, "detector model file (a tagger, with or without prototype heads, or an ensemble)", "the aiSFX heads")
    aisfx.add_argument("--head", choices=HEADS, default=None,
                       help="trained (default): a network fitted on aiSFX frames of training mixtures; prototypes: stop 34's")
    aisfx.add_argument("--head-from", type=Path, default=None, metavar="MODEL2",
                       help="copy the aiSFX heads of MODEL2, another tagger of the same library (e.g. another seed of an "
                       "ensemble), instead of building them: they depend on the training recordings and the labels, never on "
                       "the tagger")
    aisfx.add_argument("--weight", type=float_in(0, 1, low_open=True), default=None,
                       help="w, aiSFX's share of the mix, (0, 1] (default 0.3, chosen on a development build; with --head-from, MODEL2's)")
    aisfx.add_argument("--tau", type=float_in(0, 10, low_open=True), default=None,
                       help="--head prototypes: softmax temperature over labels (default 0.05)")
    aisfx.add_argument("--mixtures", type=int_in(1), default=None,
                       help=f"--head trained: training mixtures of 10 s (default {HeadConfig.mixtures})")
    aisfx.add_argument("--epochs", type=int_in(1), default=None,
                       help=f"--head trained: passes over their frames (default {HeadConfig.epochs})")
    aisfx.add_argument("--seed", type=SEED, default=None, help=f"--head trained: seed of the mixtures and the fit (default {HeadConfig.seed})")
    aisfx.add_argument("--force", action="store_true", help="replace --out if it exists")
    aisfx.set_defaults(func=run_aisfx)

    ens = sub.add_parser("ensemble", help="average the probabilities of several taggers (e.g. other --seed runs) in one model file",
                         description="An ensemble of taggers of one vocabulary, features and training library: every trained "
                         "label's frame probability is the mean of the taggers'. Build prototype heads on each member first; "
                         "detection costs one forward pass per tagger.")
    ens.add_argument("models", type=Path, nargs="+", help="detector model files (at least two; ensembles are flattened)")
    ens.add_argument("--out", type=Path, required=True, help="model file to write")
    ens.add_argument("--force", action="store_true", help="replace --out if it exists")
    ens.set_defaults(func=run_ensemble)

    run = sub.add_parser("run", help="detect the events of a corpus: write events_pred.parquet")
    run.add_argument("model", help="model file, or an atom library (trains or loads the cached model)")
    run.add_argument("audio", type=Path, help="benchmark directory, BEIR folder, or folder of audio files")
    run.add_argument("--out", type=Path, required=True, help="events parquet to write (contract events columns + confidence)")
    run.add_argument("--metrics", type=Path, default=None, help="also write SED metrics (JSON) against the benchmark's events.parquet")
    run.add_argument("--force", action="store_true", help="replace existing --out / --metrics files")
    run.add_argument("--threshold", type=float, default=None, help="decision threshold (default: the model's, 0.5)")
    run.add_argument("--device", default=None, help="cpu, cuda, cuda:N or mps, checked before any work (default: cuda if available)")
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

    inputs = [lib for lib in args.library if lib != "procedural"]
    if args.out is not None:  # before torch loads and training starts (save claims it again, under its lock)
        from reasonaudio.detect.model import MODEL_FILE
        from reasonaudio.io.outputs import check_file, check_not_an_input

        check_not_an_input(args.out, inputs)
        check_file(args.out, MODEL_FILE, args.force)
    elif args.force:
        raise UserError("--force replaces an earlier model at --out: give --out")
    from reasonaudio.detect.augment import AugmentConfig
    from reasonaudio.detect.train import TrainConfig, train, train_cached

    torch_module()  # before any work: a missing torch is the install hint, not a traceback mid-run

    overrides = {k: v for k, v in {"steps": args.steps, "batch": args.batch, "max_seconds": args.max_seconds,
                                   "labels": args.labels, "channels": args.channels, "seed": args.seed,
                                   "valid_clips": args.valid_clips, "valid_fraction": args.valid_fraction,
                                   "front_end": args.front_end, "dropout": args.dropout, "stem": args.stem,
                                   "valid_seed": args.valid_seed, "overlap_weight": args.overlap_weight}.items() if v is not None}
    if args.spec_augment:
        overrides["spec_augment"] = True
    if args.augment:
        augment = {"scene": AugmentConfig.core_scene, "basic": AugmentConfig, "variants": AugmentConfig.variants}[args.augment]()
        # an augmented run plans its mixtures with its own share of overlapping clips: the option sets that one
        overrides["augment"] = augment if args.overlap_fraction is None else replace(augment, overlap_fraction=args.overlap_fraction)
    elif args.overlap_fraction is not None:
        overrides["overlap_fraction"] = args.overlap_fraction
    config = replace(TrainConfig(), **overrides)
    library = args.library[0] if len(args.library) == 1 else args.library
    device = _device(args.device)
    log = (lambda m: print(m, file=sys.stderr)) if not args.quiet else (lambda m: None)
    if args.out is None:
        detector, path = train_cached(library, config, device=device, progress=not args.quiet, log=log)
    else:
        detector = train(library, config, device=device, progress=not args.quiet, log=log)
        path = detector.save(args.out, inputs=inputs, force=args.force)
    t = detector.training
    secs = detector.run_info.get("train_seconds")
    print(f"{path}: {len(detector.labels)} labels, {t.get('steps_done')} steps (kept step {t.get('selected_step')})"
          + (f" in {secs} s wall, {detector.run_info.get('train_cpu_seconds')} s CPU" if secs is not None else " (loaded from the cache)"))
    seen = t.get("valid_train_recordings") or {}
    held = t.get("valid_held_out_recordings")
    print(f"  mixtures of training recordings: frame F1 {seen.get('frame_f1')}, event F1 {seen.get('event_f1')}")
    if held:
        print(f"  mixtures of held-out recordings: frame F1 {held.get('frame_f1')}, event F1 {held.get('event_f1')}")
    print(f"  held out: {t.get('held_out_recordings')}")
    if secs is not None:  # the model's bytes follow the kernels torch and oneDNN chose for this CPU (docs/detect.md)
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
    shot = out.enrolled["shots"][-1]
    print(f"{args.out}: enrolled {args.label!r} from {len(waves)} recordings (leave-one-out positives p20 "
          f"{shot['positive_p20']}, background p99.5 {shot['background_p99_5']}); {len(out.labels)} labels")
    return 0


def run_prototypes(args: argparse.Namespace) -> int:
    from reasonaudio.detect.model import MODEL_FILE, Detector
    from reasonaudio.detect.prototypes import build
    from reasonaudio.io.outputs import check_file, check_not_an_input

    libraries = [Path(x) for x in args.library]
    check_not_an_input(args.out, [args.model, *libraries])
    check_file(Path(args.out), MODEL_FILE, args.force)
    detector = Detector.load(args.model)
    # open_library takes a list of one as it takes one path
    out = build(detector, list(args.library), mode=args.mode, per=args.per, include_valid=args.include_valid,
                quantile=args.quantile, scale_k=args.scale, device=_device(args.device))
    out.save(args.out, inputs=[args.model, *libraries], force=args.force)
    p = out.prototypes
    print(f"{args.out}: {len(p['vectors'])} prototypes ({p['per']}) from {p['settings']['recordings']} recordings for "
          f"{len(p['centre'])} labels, mode {p['mode']}")
    return 0


def _heads_inputs(parser: argparse.ArgumentParser, model_help: str, heads: str) -> None:
    """The inputs every command that adds heads from the training recordings takes."""
    parser.add_argument("model", type=Path, help=model_help)
    parser.add_argument("library", nargs="+", help="the atom library (or libraries, in the same order) the model was trained on (their train recordings)")
    parser.add_argument("--out", type=Path, required=True, help=f"model file to write (the input model plus {heads})")
    parser.add_argument("--include-valid", action="store_true",
                        help="also use the recordings held out for validation at training time (for a final model)")


def run_aisfx(args: argparse.Namespace) -> int:
    from reasonaudio.detect.aisfx_heads import HEADS, HeadConfig, build, reuse
    from reasonaudio.detect.model import MODEL_FILE, Detector
    from reasonaudio.detect.pretrained import checkpoint_path
    from reasonaudio.errors import UserError
    from reasonaudio.io.outputs import check_file, check_not_an_input

    building = {"--head": args.head, "--tau": args.tau, "--mixtures": args.mixtures, "--epochs": args.epochs, "--seed": args.seed}
    if args.head_from is not None and any(v is not None for v in building.values()):
        given = ", ".join(k for k, v in building.items() if v is not None)
        raise UserError(f"--head-from copies heads already built: {given} would build them (leave {given} out)")
    head = args.head or HEADS[0]
    if head == "trained" and args.tau is not None:
        raise UserError("--tau is the prototypes' softmax temperature: give it with --head prototypes")
    inputs = [args.model, *(Path(x) for x in args.library), *([args.head_from] if args.head_from else [])]
    check_not_an_input(args.out, inputs)
    check_file(Path(args.out), MODEL_FILE, args.force)
    checkpoint_path()  # the wheel is there, or one line saying how to install it
    detector = Detector.load(args.model)
    if args.head_from is not None:
        out = reuse(detector, Detector.load(args.head_from), list(args.library), include_valid=args.include_valid, weight=args.weight)
    else:
        config = HeadConfig(**{k: v for k, v in (("mixtures", args.mixtures), ("epochs", args.epochs), ("seed", args.seed)) if v is not None})
        given = {k: v for k, v in (("tau", args.tau), ("weight", args.weight)) if v is not None}  # build's defaults otherwise
        out = build(detector, list(args.library), head=head, **given, include_valid=args.include_valid, config=config, progress=True)
    out.save(args.out, inputs=inputs, force=args.force)
    h = out.aisfx
    trained = h.get("head", "prototypes") == "trained"
    made = (f"a trained aiSFX head ({h['settings']['mixtures']} mixtures, {h['settings']['epochs']} epochs)" if trained
            else "aiSFX prototypes")
    copied = f" (copied from {args.head_from})" if args.head_from is not None else ""
    shown = f"{h['fusion']} fusion" if trained else f"tau {h['tau']}"
    print(f"{args.out}: {made}{copied} of {sum(h['known'])} labels from {h['settings']['recordings']} recordings, weight {h['weight']}, {shown}")
    return 0


def run_ensemble(args: argparse.Namespace) -> int:
    from reasonaudio.detect.ensemble import combine
    from reasonaudio.detect.model import MODEL_FILE, Detector
    from reasonaudio.io.outputs import check_file, check_not_an_input

    check_not_an_input(args.out, list(args.models))  # also refuses --out being one of the models
    check_file(Path(args.out), MODEL_FILE, args.force)
    out = combine([Detector.load(m) for m in args.models], list(args.models))
    out.save(args.out, inputs=list(args.models), force=args.force)
    print(f"{args.out}: an ensemble of {1 + len(out.members)} taggers, {len(out.labels)} labels")
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
