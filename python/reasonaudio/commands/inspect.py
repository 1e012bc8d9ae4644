"""`reasonaudio inspect DIR ID [--png OUT]`: look at one clip or one query of a benchmark.

For a clip: its event timeline (label, phrase, onset-offset, duration, gain) and the queries it is
relevant to. For a query: task, text, logic, counts, the first positives and hard negatives with
their timelines, and its two-option pair. `--png` draws the clip's spectrogram over its event
timeline, or for a query its two-option pair side by side.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from reasonaudio.io.hub_cache import bench_argument


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "inspect",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("directory", type=bench_argument, metavar="DIR", help="benchmark directory (or hf://datasets/ORG/NAME[@REV])")
    parser.add_argument("item", metavar="ID", help="a clip_id or a query_id")
    parser.add_argument("--png", type=Path, default=None, metavar="OUT", help="also draw a figure to this PNG file")
    parser.add_argument("--force", action="store_true", help="replace an earlier figure at --png")
    parser.add_argument("--examples", type=int, default=3, metavar="N", help="positives / hard negatives shown for a query (default 3)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from reasonaudio.io.hub_cache import dataset_path
    from reasonaudio.audit.inspect import describe, plot

    args.directory = dataset_path(args.directory)

    if args.png is not None:  # refused before anything is printed
        from reasonaudio.audit.inspect import FIGURE
        from reasonaudio.io.outputs import check_file, check_not_an_input

        check_not_an_input(args.png, [args.directory], "--png")
        check_file(args.png, FIGURE, args.force, "--png")
    print(describe(args.directory, args.item, n_examples=max(0, args.examples)))
    if args.png is not None:
        out = plot(args.directory, args.item, args.png, force=args.force)
        print(f"wrote {out}")
    return 0
