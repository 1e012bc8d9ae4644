"""What reasonaudio says while it works: the `reasonaudio` logger and the progress bars.

The library never prints. It logs on the `reasonaudio` logger (each module on its child,
`logging.getLogger(__name__)`): DEBUG for detail, INFO for what a step did and how long it took,
WARNING for a decision taken for the user or a result that deserves a look. As a library should,
it leaves handlers to the program: `reasonaudio` carries only a NullHandler, so a script that
imports it sees nothing until it configures `logging` itself. The CLI does so through
`configure_cli`: the plain messages on stderr (as the commands always printed them), INFO and up
by default, WARNING and up with `--quiet`, DEBUG with `--verbose`.

Progress bars (`progress_bar`, tqdm's own class) are drawn only where someone can watch them: on
a terminal or in a Jupyter kernel. Piped into a log file they would be hundreds of carriage-return
frames, so there they switch off; `REASONAUDIO_PROGRESS=1` forces them on, `=0` off.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from typing import Any, Iterator

LOGGER_NAME = "reasonaudio"
logger = logging.getLogger(LOGGER_NAME)  # its NullHandler is added by reasonaudio/__init__.py

#: the levels of the CLI's -q / (default) / -v
QUIET, NORMAL, VERBOSE = logging.WARNING, logging.INFO, logging.DEBUG


class _PlainHandler(logging.StreamHandler):
    """The message alone, on the stderr of the moment (tests and embedding programs swap
    `sys.stderr`; a handler bound to the stream at set-up time would write to a stale one)."""

    def __init__(self) -> None:
        super().__init__()
        self.setFormatter(logging.Formatter("%(message)s"))

    @property  # type: ignore[override]
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:  # StreamHandler.__init__ assigns it
        pass


@contextlib.contextmanager
def cli_logging(level: int) -> Iterator[None]:
    """The CLI's logging while a command runs: plain lines on stderr from `level` up, and only there
    (records do not travel on to the root logger's handlers). The logger is left as it was found,
    for a program that runs `reasonaudio.cli.main` and then goes on using the library."""
    handler = _PlainHandler()
    level_was, propagate_was = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level_was)
        logger.propagate = propagate_was


def progress_enabled(stream=None) -> bool:
    """Whether a progress bar on `stream` (stderr) has a watcher."""
    forced = os.environ.get("REASONAUDIO_PROGRESS", "").strip()
    if forced in ("0", "1"):
        return forced == "1"
    stream = sys.stderr if stream is None else stream
    try:
        if stream.isatty():
            return True
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False
    return "ipykernel" in sys.modules  # a notebook: tqdm.auto draws its widget there


def progress_bar(iterable: Any = None, *, disable: bool = False, **kwargs: Any):
    """tqdm (its notebook form in Jupyter), off where no one can watch it or where `disable` says
    so (the callers' `progress=False`, the CLI's --quiet)."""
    from tqdm.auto import tqdm

    return tqdm(iterable, disable=disable or not progress_enabled(kwargs.get("file")), **kwargs)
