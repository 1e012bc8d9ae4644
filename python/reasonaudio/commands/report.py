"""`reasonaudio report RESULTS... --out DIR`: several evaluation runs side by side."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "report",
        help="compare several `reasonaudio eval` results",
        description="Put several results directories side by side: one markdown table (tasks x Acc@1 / "
        "nDCG@10 + Avg, and two-option accuracy) and one grouped bar chart.",
    )
    parser.add_argument("results", nargs="+", type=Path, help="results directories written by `reasonaudio eval`")
    parser.add_argument("--out", required=True, type=Path, help="output directory (replaced atomically)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from reasonaudio.report import compare

    out = compare(args.results, args.out)
    print(f"compared {len(args.results)} run(s) -> {out / 'report.md'}")
    return 0
