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
from typing import Collection

from reasonaudio.about import issues_url, version
from reasonaudio.errors import UserError

#: every command: its module is reasonaudio.commands.<name>, and this line is what `reasonaudio
#: --help` lists. Only the command given is imported: the others' modules (and the numpy, polars and
#: the extension they pull in) stay unloaded, so `--help` and `--version` answer at once.
COMMANDS: dict[str, str] = {
    "atoms": "inspect, list and import atom libraries",
    "build": "synthesize a benchmark: audio, events, queries, qrels, two-option pairs, BEIR export",
    "scenes": "render one plan in several acoustic conditions (clean, beds at several SNRs, rooms) into sibling benchmarks",
    "merge": "assemble shards of `build --shard K/N` into one benchmark (byte-identical to a plain build)",
    "annotate": "compute qrels from events and query logic",
    "validate": "check a benchmark directory against the contract (layout, relevance, margins, audio, BEIR)",
    "inspect": "show one clip (timeline, relevant queries) or one query (logic, positives, hard negatives)",
    "eval": "evaluate a text-to-audio retrieval model on a benchmark",
    "embed": "encode a benchmark's queries and clips into resumable memory-mapped embedding stores",
    "report": "compare several `reasonaudio eval` results",
    "compose": "two-segment compositional diagnostic for audio language models (cue -> select -> execute)",
    "audit": "write a blind listening page for a benchmark, or score listeners' judgments.json against it",
    "export": "export a benchmark as a Hugging Face dataset folder (datasets / mteb / push_to_hub)",
    "models": "list the retrieval models (--model SPEC) and what each needs; fetch their pinned Hub weights",
    "study": "evaluate the ReasonAudio study's models on a benchmark and write its table (resumable)",
    "detect": "train and run the sound-event detector (detect-then-reason retrieval)",
    "env": "print the versions of Python, reasonaudio, its extension and dependencies (for bug reports)",
    "completion": "print a shell completion script (bash, zsh or tcsh)",
}


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


class _Version(argparse.Action):
    """--version, looked up only when asked for."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help="print the version and exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        parser._print_message(f"reasonaudio {version()}\n", sys.stdout)
        parser.exit()


class _Commands:
    """The subparsers action as a command module sees it: its parser gets the listed summary."""

    def __init__(self, action):
        self._action = action

    def add_parser(self, name: str, **kwargs):
        kwargs.setdefault("help", COMMANDS[name])
        return self._action.add_parser(name, **kwargs)


def _leaves(parser: argparse.ArgumentParser):
    """The parsers that run something: those without subcommands of their own."""
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not actions:
        yield parser
    for action in actions:
        seen: set[int] = set()
        for sub in action.choices.values():
            if id(sub) not in seen:
                seen.add(id(sub))
                yield from _leaves(sub)


def _add_verbosity(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("output")
    levels = group.add_mutually_exclusive_group()
    levels.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors: no progress bars, no progress lines")
    levels.add_argument("-v", "--verbose", action="store_true", help="also the debugging detail of each step")


def _bugs_line() -> str:
    tracker = issues_url()
    return f"Bugs: {tracker} (with the output of `reasonaudio env`)" if tracker else "Bugs: report them with the output of `reasonaudio env`."


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The CLI's parser with the options of `commands` (of every command where None: completion,
    the tests); the others are listed by name and summary only."""
    chosen = set(COMMANDS if commands is None else commands)
    parser = _Parser(
        prog="reasonaudio",
        description="Build reasoning-intensive text-to-audio retrieval benchmarks and evaluate models on them.",
        epilog=_bugs_line(),
    )
    parser.add_argument("--version", action=_Version)
    # `completion` describes every command: it asks for the whole parser through this
    parser.set_defaults(full_parser=build_parser)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name, summary in COMMANDS.items():
        if name in chosen:
            importlib.import_module(f"reasonaudio.commands.{name}").add_parser(_Commands(subparsers))
        else:
            subparsers.add_parser(name, help=summary, add_help=False)
    for leaf in _leaves(parser):
        if leaf is not parser and leaf.prog.split()[1] in chosen:
            _add_verbosity(leaf)
    return parser


def _command_in(argv: list[str]) -> str | None:
    """The command named on the line: the first word that is not an option (the top-level options,
    --help and --version, take no value)."""
    for word in argv:
        if word == "--":
            return None
        if not word.startswith("-"):
            return word if word in COMMANDS else None
    return None


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that every `finally` (temporaries, locks) runs."""


def _raise_terminated(signum, frame) -> None:
    raise Terminated()


def _os_error_line(err: OSError) -> str:
    where = " -> ".join(str(p) for p in (err.filename, err.filename2) if p is not None)
    reason = err.strerror or str(err)
    return f"{where}: {reason}" if where else reason


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    stdout = sys.stdout
    sys.stdout = _Named(stdout, "standard output")
    try:
        return _main(argv)
    finally:
        sys.stdout = stdout


def _main(argv: list[str]) -> int:
    # Signals first, before build_parser imports the command (and with it numpy, polars, the extension):
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
        command = _command_in(argv)
        parser = build_parser([command] if command else [])
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
    from reasonaudio.console import NORMAL, QUIET, VERBOSE, cli_logging

    try:
        with cli_logging(QUIET if args.quiet else VERBOSE if args.verbose else NORMAL):
            import logging
            import platform

            logging.getLogger("reasonaudio.cli").debug("reasonaudio %s, Python %s on %s: %s", version(), platform.python_version(),
                                                       platform.platform(), " ".join(argv))
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
        tracker = issues_url()
        print(f"reasonaudio {args.command}: internal error (a bug; please report it{f' at {tracker}' if tracker else ''} "
              "with the traceback above and the output of `reasonaudio env`)", file=sys.stderr)
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
