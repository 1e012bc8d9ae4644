"""`reasonaudio atoms show|import|list`: inspect and build atom libraries."""

from __future__ import annotations

import argparse

ATOMS_HELP = "'procedural' for the embedded 200-atom library, or a library directory"


def _show(args: argparse.Namespace) -> int:
    from reasonaudio.atoms import AtomLibrary, contact_sheet

    import sys

    print(f"loading {args.atoms} …", file=sys.stderr, flush=True)
    lib = AtomLibrary.open(args.atoms, sample_rate=args.sample_rate)
    out = contact_sheet(lib, args.out, columns=args.columns, progress=True)
    print(f"wrote {out} ({len(lib)} atoms)")
    return 0


def _import(args: argparse.Namespace) -> int:
    from reasonaudio.atoms import import_folder

    report = import_folder(
        args.src,
        args.out,
        labels_csv=args.labels,
        sample_rate=args.sample_rate,
        skip_bad=args.skip_bad,
        min_duration_s=args.min_duration,
        max_duration_s=args.max_duration,
        overwrite=args.force,
    )
    if not report.rejected:
        print(report)
    return 0


def _list(args: argparse.Namespace) -> int:
    from reasonaudio.atoms import AtomLibrary

    lib = AtomLibrary.open(args.atoms, sample_rate=args.sample_rate)
    rows = [(a, lb, ph, f"{d:.2f}") for a, lb, ph, d in zip(lib.atom_ids, lib.labels, lib.phrases, lib.durations_s)]
    header = ("atom_id", "label", "phrase", "duration_s")
    widths = [max(len(h), *(len(r[k]) for r in rows)) for k, h in enumerate(header)]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip())
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
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
    parser = subparsers.add_parser("atoms", help="inspect, list and import atom libraries")
    sub = parser.add_subparsers(dest="atoms_command", metavar="ACTION")
    sub.required = True

    show = sub.add_parser("show", help="draw a contact sheet (log-mel image per atom) as PNG")
    show.add_argument("atoms", metavar="ATOMS", help=ATOMS_HELP)
    show.add_argument("--out", required=True, help="PNG file to write")
    show.add_argument("--columns", type=int, default=10, help="images per row (default 10)")
    show.add_argument("--sample-rate", type=_positive_rate, default=None, help="render/resample to this rate")
    show.set_defaults(func=_show)

    imp = sub.add_parser("import", help="build a library directory from labelled audio files")
    imp.add_argument("src", metavar="SRC", help="folder of audio files (SRC/<label>/<file>, or any layout with --labels)")
    imp.add_argument("--out", required=True, metavar="ATOMS", help="library directory to create")
    imp.add_argument("--labels", default=None, help="CSV with columns file,label[,phrase][,license]; files relative to SRC")
    imp.add_argument("--sample-rate", type=_positive_rate, default=16000, help="library sample rate (default 16000)")
    imp.add_argument("--skip-bad", action="store_true", help="import the good files and report the bad ones")
    imp.add_argument("--force", action="store_true", help="replace ATOMS if it exists")
    imp.add_argument("--min-duration", type=float, default=0.3, help="shortest atom after trimming, s (default 0.3)")
    imp.add_argument("--max-duration", type=float, default=10.0, help="longest atom after trimming, s (default 10)")
    imp.set_defaults(func=_import)

    lst = sub.add_parser("list", help="print a table of id, label, phrase and duration")
    lst.add_argument("atoms", metavar="ATOMS", help=ATOMS_HELP)
    lst.add_argument("--sample-rate", type=_positive_rate, default=None, help=argparse.SUPPRESS)
    lst.set_defaults(func=_list)

