"""`reasonaudio atoms show|import|list|pack`: inspect and build atom libraries."""

from __future__ import annotations

import argparse

from reasonaudio.commands.bounds import SEED, int_in
from reasonaudio.contract import AUDIBLE_WINDOW_S

# the importers' default floor (reasonaudio.atoms.sources.common.MIN_ATOM_S), named here without
# importing the importers at parser time
MIN_ATOM_S = AUDIBLE_WINDOW_S
LAYOUT_CHOICES = ("auto", "folders", "csv", "fsd50k", "esc50", "urbansound8k")
ATOMS_HELP = "'procedural' for the embedded 200-atom library, or a library directory"


def _show(args: argparse.Namespace) -> int:
    from reasonaudio.atoms import AtomLibrary, contact_sheet

    import sys
    from pathlib import Path

    from reasonaudio.atoms.sheet import SHEET
    from reasonaudio.errors import UserError
    from reasonaudio.io.outputs import check_file, check_not_an_input

    inputs = [] if args.atoms == "procedural" else [args.atoms]
    check_not_an_input(args.out, inputs)  # before loading the library
    # checked before drawing (it takes a while): the sheet is a PNG carrying the tool's kind tag
    if Path(args.out).suffix.lower() != ".png":
        raise UserError(f"--out {args.out}: expected an image file name ending in .png (the contact sheet is a PNG)")
    check_file(Path(args.out), SHEET, args.force)
    print(f"loading {args.atoms} …", file=sys.stderr, flush=True)
    lib = AtomLibrary.open(args.atoms, sample_rate=args.sample_rate)
    indices = [group[0] for group in lib.exemplars().values()] if args.one_per_label else None
    out = contact_sheet(lib, args.out, columns=args.columns, indices=indices, progress=True, inputs=inputs, force=args.force)
    print(f"wrote {out} ({len(indices) if indices is not None else len(lib)} atoms)")
    return 0


def _import(args: argparse.Namespace) -> int:
    from reasonaudio.atoms.sources import import_atoms

    report = import_atoms(
        args.src,
        args.out,
        layout=args.layout,
        labels_csv=args.labels,
        phrases_csv=args.phrases,
        ontology=args.ontology,
        sample_rate=args.sample_rate,
        skip_bad=args.skip_bad,
        min_duration_s=args.min_duration,
        max_duration_s=args.max_duration,
        per_label=args.per_label,
        exclude_license=args.exclude_license,
        split_fraction=args.split_fraction,
        seed=args.seed,
        overwrite=args.force,
    )
    print(report)
    return 0


def _pack(args: argparse.Namespace) -> int:
    from reasonaudio.atoms.sources.debian import BEDS_MAX_S, BEDS_TABLE, EXTRA_MIN_S, EXTRA_TABLE, PACK_MIN_S, PACK_TABLE, pack_debian

    beds = args.source == "debian-beds"
    min_s = args.min_duration if args.min_duration is not None else EXTRA_MIN_S if args.source == "debian-extra" else PACK_MIN_S
    report = pack_debian(
        args.out,
        table={"debian": PACK_TABLE, "debian-beds": BEDS_TABLE, "debian-extra": EXTRA_TABLE}[args.source],
        sample_rate=args.sample_rate,
        min_duration_s=min_s,
        max_duration_s=args.max_duration if args.max_duration is not None else BEDS_MAX_S if beds else 10.0,
        split_fraction=args.split_fraction,
        seed=args.seed,
        overwrite=args.force,
        allow_missing=args.allow_missing,
    )
    print(report)
    return 0


def _list(args: argparse.Namespace) -> int:
    from reasonaudio.atoms import AtomLibrary

    lib = AtomLibrary.open(args.atoms, sample_rate=args.sample_rate)
    rows = [(a, lb, ph, f"{d:.2f}", lic) for a, lb, ph, d, lic in zip(lib.atom_ids, lib.labels, lib.phrases, lib.durations_s, lib.licenses)]
    header: tuple[str, ...] = ("atom_id", "label", "phrase", "duration_s", "license")
    if lib.splits:
        rows = [r + (s,) for r, s in zip(rows, lib.splits)]
        header += ("split",)
    widths = [max(len(h), *(len(r[k]) for r in rows)) for k, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    if lib.n_labels != len(lib):
        print(f"{len(lib)} atoms, {lib.n_labels} labels (several exemplars per label)")
    return 0


def _positive_rate(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer sample rate in Hz, got {text!r}") from None
    if value < 4000:
        raise argparse.ArgumentTypeError(f"sample rate must be at least 4000 Hz, got {value}")
    return value


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("atoms")
    sub = parser.add_subparsers(dest="atoms_command", metavar="ACTION")
    sub.required = True

    show = sub.add_parser("show", help="draw a contact sheet (log-mel image per atom) as PNG")
    show.add_argument("atoms", metavar="ATOMS", help=ATOMS_HELP)
    show.add_argument("--out", required=True, help="PNG file to write")
    show.add_argument("--columns", type=int_in(1, 100), default=10, help="images per row, 1..100 (default 10)")
    show.add_argument("--sample-rate", type=_positive_rate, default=None, help="render/resample to this rate")
    show.add_argument("--one-per-label", action="store_true", help="draw only the first exemplar of each label")
    show.add_argument("--force", action="store_true", help="replace an earlier contact sheet at --out")
    show.set_defaults(func=_show)

    imp = sub.add_parser("import", help="build a library from labelled recordings (class folders, CSV, FSD50K, ESC-50, UrbanSound8K)")
    imp.add_argument("src", metavar="SRC", help="folder of recordings (SRC/<label>/<file>, a dataset as unpacked, or any layout with --labels)")
    imp.add_argument("--out", required=True, metavar="ATOMS", help="library directory to create")
    imp.add_argument("--layout", default="auto", choices=LAYOUT_CHOICES,
                     help="how SRC is organised (default auto: FSD50K.ground_truth/, meta/esc50.csv, metadata/UrbanSound8K.csv, --labels, else folders)")
    imp.add_argument("--labels", default=None, help="CSV with columns file,label[,phrase][,license][,attribution][,split]; files relative to SRC")
    imp.add_argument("--phrases", default=None, metavar="CSV", help="label,phrase table overriding the phrases (the curated ones for FSD50K/ESC-50/UrbanSound8K)")
    imp.add_argument("--ontology", default=None, metavar="JSON", help="AudioSet ontology.json for FSD50K leaf classes (default: inferred from the label sets)")
    imp.add_argument("--per-label", type=int_in(1), default=None, metavar="N", help="at most N exemplars per label, drawn with --seed (default every one)")
    imp.add_argument("--exclude-license", action="append", default=[], choices=["nc"], help="nc: leave out non-commercial recordings, and those whose license is unknown (they may be non-commercial)")
    imp.add_argument("--split-fraction", type=float, default=None, metavar="F",
                     help="put a share F of each label's exemplars in the test split, the rest in train (FSD50K: dev=train, eval=test without it)")
    imp.add_argument("--seed", type=SEED, default=0, help="seed of --per-label and --split-fraction draws, 0..2^32-1 (default 0)")
    imp.add_argument("--sample-rate", type=_positive_rate, default=16000, help="library sample rate (default 16000)")
    imp.add_argument("--skip-bad", action="store_true", help="import the good files and report the bad ones")
    imp.add_argument("--force", action="store_true", help="replace ATOMS if it exists")
    imp.add_argument("--min-s", "--min-duration", dest="min_duration", type=float, default=MIN_ATOM_S,
                     help=f"shortest atom after trimming, s (default {MIN_ATOM_S:g}, the contract's audibility window: "
                     "one-shot sounds such as a clap or a snap last 0.1-0.2 s and are kept)")
    imp.add_argument("--max-s", "--max-duration", dest="max_duration", type=float, default=10.0, help="longest atom after trimming, s (default 10)")
    imp.set_defaults(func=_import)

    pack = sub.add_parser("pack", help="build a library of real recordings from installed packages (offline)")
    pack.add_argument("source", choices=["debian", "debian-beds", "debian-extra"],
                      help="debian: recordings of Debian sound/game-data packages; debian-beds: their ambience loops, "
                      "a bed library for build --background; debian-extra: other packages' recordings of the pack's labels, "
                      "all `train`, to train a detector on beside the pack (detect train PACK EXTRA)")
    pack.add_argument("--out", required=True, metavar="ATOMS", help="library directory to create")
    pack.add_argument("--sample-rate", type=_positive_rate, default=16000, help="library sample rate (default 16000)")
    pack.add_argument("--split-fraction", type=float, default=None, metavar="F", help="share of each label's exemplars in the test split")
    pack.add_argument("--seed", type=SEED, default=0, help="seed of the --split-fraction draw, 0..2^32-1 (default 0)")
    pack.add_argument("--min-s", dest="min_duration", type=float, default=None,
                      help="shortest atom after trimming, s (default 0.15; 0.1 for debian-extra)")
    pack.add_argument("--max-s", dest="max_duration", type=float, default=None,
                      help="longest atom after trimming, s (default 10; 120 for debian-beds)")
    pack.add_argument("--allow-missing", action="store_true", help="build from the packages installed, leaving out the others")
    pack.add_argument("--force", action="store_true", help="replace ATOMS if it exists")
    pack.set_defaults(func=_pack)

    lst = sub.add_parser("list", help="print a table of id, label, phrase and duration")
    lst.add_argument("atoms", metavar="ATOMS", help=ATOMS_HELP)
    lst.add_argument("--sample-rate", type=_positive_rate, default=None, help=argparse.SUPPRESS)
    lst.set_defaults(func=_list)

