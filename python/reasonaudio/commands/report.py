"""`reasonaudio report RESULTS... --out DIR`: several evaluation runs side by side."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "report",
        description="Put several results directories side by side: one markdown table (tasks x Acc@1 / "
        "nDCG@10 + Avg, and two-option accuracy) and one grouped bar chart. Runs of one plan in several "
        "acoustic conditions (`reasonaudio scenes`) add a table and a curve across the conditions, ordered "
        "clean first, then beds by falling SNR, rooms last, whatever order the results are given in.",
    )
    parser.add_argument("results", nargs="+", type=Path, help="results directories written by `reasonaudio eval`")
    parser.add_argument("--out", required=True, type=Path, help="output directory (written atomically)")
    parser.add_argument("--force", action="store_true", help="replace an earlier report at --out")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import sys

    from reasonaudio.evaluation.compare import compare, is_report

    # a glob such as runs/* also matches earlier comparisons, this one's --out among them
    runs = [p for p in args.results if not is_report(p)]
    for skipped in sorted(set(args.results) - set(runs)):
        print(f"reasonaudio report: note: skipping {skipped} (a report, not a results directory)", file=sys.stderr)
    out = compare(runs, args.out, force=args.force)
    print(f"compared {len(runs)} run(s) -> {out / 'report.md'}")
    return 0
