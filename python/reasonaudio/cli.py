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
    "scenes",
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


class _Parser(argparse.ArgumentParser):
    """argparse swallows the OS error of printing --help/--version (into /dev/full, a closed pipe)
    and exits 0; here it propagates, so the CLI reports it. A value that starts with a minus sign
    and reads as numbers (`--snr -5,10`) is a value, not an option. Subparsers inherit the class."""

    def __init__(self, *args, **kwargs) -> None:
        from reasonaudio.commands.bounds import reads_negative_numbers

        super().__init__(*args, **kwargs)
        reads_negative_numbers(self)

    def _print_message(self, message: str, file=None) -> None:
        if message:
            file = sys.stderr if file is None else file
            file.write(message)
            file.flush()


class _Named:
    """A standard stream whose OS errors name it: a write on a full disk has no path of its own."""

    def __init__(self, stream, name: str):
        self._stream, self._name = stream, name

    def _named(self, call, *args):
        try:
            return call(*args)
        except OSError as err:
            if err.filename is None:
                err.filename = self._name
            raise

    def write(self, text):
        return self._named(self._stream.write, text)

    def flush(self):
        return self._named(self._stream.flush)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def build_parser() -> argparse.ArgumentParser:
    from reasonaudio._core import __version__

    parser = _Parser(
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
    stdout = sys.stdout
    sys.stdout = _Named(stdout, "standard output")
    try:
        return _main(argv)
    finally:
        sys.stdout = stdout


def _main(argv: list[str] | None) -> int:
    # Signals first, before the heavy imports of build_parser (the extension, numpy, polars: ~0.3 s):
    # a Ctrl-C or SIGTERM while they load is an ordinary interruption (exit 130 / 143, one line), not
    # a traceback from inside an import. Nothing has been written yet at that point. During the
    # imports a signal is only *noted* and acted on once they are done: raised inside an extension's
    # import-time code it can surface as that extension's panic instead (polars 2.1 unwraps the
    # KeyboardInterrupt of its start-up hook: a Rust backtrace and exit 1).
    import signal
    import threading

    noted: list[int] = []
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, lambda signum, frame: noted.append(signum))
        previous_int = signal.signal(signal.SIGINT, lambda signum, frame: noted.append(signum))
    else:  # embedded in a program that runs us off its main thread: leave its handlers alone
        previous = previous_int = None
    try:
        parser = build_parser()
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous_int)
            signal.signal(signal.SIGTERM, _raise_terminated)
    if noted:
        print("reasonaudio: " + ("terminated" if noted[0] == signal.SIGTERM else "interrupted"), file=sys.stderr)
        _restore(previous)
        return 143 if noted[0] == signal.SIGTERM else 130
    try:
        args = parser.parse_args(argv)
    except OSError as err:  # --help or --version could not be printed
        print(f"reasonaudio: error: {_os_error_line(err)}", file=sys.stderr)
        _restore(previous)
        return 2
    except KeyboardInterrupt:
        print("reasonaudio: interrupted", file=sys.stderr)
        _restore(previous)
        return 130
    except Terminated:
        print("reasonaudio: terminated", file=sys.stderr)
        _restore(previous)
        return 143
    except BaseException:  # argparse's SystemExit (--help, a usage error)
        _restore(previous)
        raise
    try:
        result = args.func(args)
        sys.stdout.flush()  # a full stdout fails here, reported below, not at exit
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
        _restore(previous)
    return int(result or 0)


def _restore(previous) -> None:
    import signal

    if previous is not None:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
