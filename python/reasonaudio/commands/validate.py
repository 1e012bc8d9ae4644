"""`reasonaudio validate DIR`: check a benchmark directory against the contract.

Exit status: 0 when every check holds, 1 on any violation, 2 when files are missing or unreadable
(missing columns, wrong types): then the checks that need them are skipped.
"""

from __future__ import annotations

import argparse

from reasonaudio.contract import DEFAULT_MARGIN_S
import json
import sys
from pathlib import Path

from reasonaudio.io.hub_cache import bench_argument
from reasonaudio.commands.bounds import STDOUT
from reasonaudio.errors import UserError
from reasonaudio.io.outputs import check_file, check_not_an_input, json_kind, write_output

#: the report of --json: a JSON object with this "format", so --force recognises an earlier one
REPORT_FORMAT = "reasonaudio-validate-report/1"
REPORT = json_kind("validation report", REPORT_FORMAT)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "validate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("directory", type=bench_argument, metavar="DIR", help="benchmark directory (holds manifest.json), or hf://datasets/ORG/NAME[@REV]")
    parser.add_argument("--margin", type=float, default=DEFAULT_MARGIN_S, metavar="S", help=f"robustness margin m in seconds (default {DEFAULT_MARGIN_S})")
    parser.add_argument("--no-audio", action="store_true", help="skip reading the audio files")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--max-audio-files", type=int, default=None, metavar="N", help="read only the first N clips' audio (by clip id)")
    which.add_argument("--audio-sample", type=int, default=None, metavar="K",
                       help="read K clips' audio, evenly spaced over the clip ids (the first and the last among them): every shard of a large corpus is seen")
    parser.add_argument("--json", type=Path, default=None, metavar="OUT",
                        help="also write the full report as JSON ('-': to stdout, the text report then goes to stderr)")
    parser.add_argument("--force", action="store_true", help="replace an earlier JSON report at --json")
    parser.add_argument("--examples", type=int, default=3, metavar="N", help="examples printed per failed check (default 3)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from reasonaudio.io.hub_cache import dataset_path
    from reasonaudio.validate import validate_benchmark

    args.directory = dataset_path(args.directory)

    for option, value in (("--max-audio-files", args.max_audio_files), ("--audio-sample", args.audio_sample)):
        if value is not None and value < 0:
            raise UserError(f"{option} must be >= 0, got {value}")
    to_stdout = args.json == STDOUT
    if args.json is not None and not to_stdout:  # before the checks, which can take minutes
        check_not_an_input(args.json, [args.directory], "--json")
        check_file(args.json, REPORT, args.force, "--json")
    report = validate_benchmark(
        args.directory,
        margin_s=args.margin,
        check_audio=not args.no_audio,
        max_audio_files=args.max_audio_files,
        audio_sample=args.audio_sample,
        progress=None if args.quiet else lambda what: print(f"{what} …", file=sys.stderr, flush=True),
    )
    # with the JSON on stdout, stdout holds nothing else: a program can read it whole
    print(report.format_text(max_examples=args.examples), file=sys.stderr if to_stdout else sys.stdout)
    if args.json is not None:
        payload = json.dumps({"format": REPORT_FORMAT, **report.to_dict()}, indent=2, ensure_ascii=False)
        if to_stdout:
            print(payload)
        else:
            write_output(args.json, REPORT, payload, inputs=[args.directory], force=args.force, option="--json")
    sys.stdout.flush()
    if report.fatal:
        more = f" (+{len(report.fatal) - 3} more)" if len(report.fatal) > 3 else ""
        raise UserError("cannot read the benchmark: " + "; ".join(report.fatal[:3]) + more)
    return 0 if report.ok else 1
