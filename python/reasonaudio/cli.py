"""Command-line entry point: `reasonaudio <command> ...`.

Each command lives in its own module under `reasonaudio.commands` and exposes
`add_parser(subparsers)`; the parser stores the handler as `func`.

Exit statuses, the same for every command:
  0    success
  1    the benchmark violates the contract (`validate` only)
  2    bad input or environment: one line naming the path and the reason, no traceback
       (a UserError, or an OS error such as a read-only folder, a full disk, a missing file)
  70   an internal error (a bug: the traceback is printed)
  130  interrupted by Ctrl-C (SIGINT); 143 terminated by SIGTERM
Interrupted and terminated commands leave nothing half-written (see reasonaudio.io.outputs).
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
    "export",
    "models",
    "detect",
)


def build_parser() -> argparse.ArgumentParser:
    from reasonaudio._core import __version__

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


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that every `finally` (temporaries, locks) runs."""


def _raise_terminated(signum, frame) -> None:
    raise Terminated()


def _os_error_line(err: OSError) -> str:
    where = " -> ".join(str(p) for p in (err.filename, err.filename2) if p is not None)
    reason = err.strerror or str(err)
    return f"{where}: {reason}" if where else reason


def main(argv: list[str] | None = None) -> int:
    import signal
    import threading

    parser = build_parser()
    args = parser.parse_args(argv)
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    else:  # embedded in a program that runs us off its main thread: leave its handlers alone
        previous = None
    try:
        result = args.func(args)
    except UserError as err:
        print(f"reasonaudio {args.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"reasonaudio {args.command}: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print(f"reasonaudio {args.command}: terminated", file=sys.stderr)
        return 143
    except OSError as err:
        if isinstance(err, BrokenPipeError):
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141
        print(f"reasonaudio {args.command}: error: {_os_error_line(err)}", file=sys.stderr)
        return 2
    except Exception:
        import traceback

        traceback.print_exc()
        print(f"reasonaudio {args.command}: internal error (a bug; please report it with the traceback above)", file=sys.stderr)
        return 70
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
