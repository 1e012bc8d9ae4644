"""Command-line entry point: `reasonaudio <command> ...`.

Each command lives in its own module under `reasonaudio.commands` and exposes
`add_parser(subparsers)`; the parser stores the handler as `func`. Handlers
raise `reasonaudio.errors.UserError` for bad input, which is printed as one
clear line (no traceback) with exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from reasonaudio.errors import UserError

COMMAND_MODULES = (
    "atoms",
    "build",
    "merge",
    "annotate",
    "validate",
    "inspect",
    "eval",
    "report",
    "compose",
    "audit",
)


def build_parser() -> argparse.ArgumentParser:
    from reasonaudio import __version__

    parser = argparse.ArgumentParser(
        prog="reasonaudio",
        description="Build reasoning-intensive text-to-audio retrieval benchmarks and evaluate models on them.",
    )
    parser.add_argument("--version", action="version", version=f"reasonaudio {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMAND_MODULES:
        module = importlib.import_module(f"reasonaudio.commands.{name}")
        module.add_parser(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result = args.func(args)
    except UserError as err:
        print(f"reasonaudio {args.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"reasonaudio {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # output piped into `head` and the like: stop quietly, as Unix tools do
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
