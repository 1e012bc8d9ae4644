"""argparse types for bounded numeric options: a value outside its range is a usage error (exit 2)
naming the option, before any work starts. Every bound is stated in the option's help too. Also the `-`
that a report-file option reads as standard output."""

from __future__ import annotations

import argparse
import math
import os
import re
from pathlib import Path


def int_in(lo: int, hi: int | None = None):
    """An integer within lo..hi (hi None: no upper bound)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < lo or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"must be within {lo}..{hi:,}, got {value}" if hi is not None
                                             else f"must be at least {lo}, got {value}")
        return value

    parse.__name__ = "integer"  # argparse names the type in "invalid <name> value" messages
    return parse


def float_in(lo: float, hi: float, *, low_open: bool = False):
    """A finite number within [lo, hi] ((lo, hi] with low_open); NaN and infinities are refused."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value) or value < lo or value > hi or (low_open and value == lo):
            raise argparse.ArgumentTypeError(f"must be a finite number within {'(' if low_open else '['}{lo:g}, {hi:g}], got {text}")
        return value

    parse.__name__ = "number"
    return parse


#: A token that starts with "-" and reads as numbers: -5, -5,10, -0.5,1e-3. argparse takes any other
#: token that starts with "-" for an option name, so `--snr -5,10` was "expected one argument"; none of
#: our options is spelled like a number, so a parser that uses this reads such a token as a value.
NEGATIVE_NUMBERS = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?(\s*,\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?)*$")


def reads_negative_numbers(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """`parser` (and the subparsers it makes later, of its class when that class calls this) reads
    `--snr -5,10` as a user types it. argparse keeps its pattern for negative numbers in this
    attribute (Python 3.8 to 3.14)."""
    parser._negative_number_matcher = NEGATIVE_NUMBERS  # type: ignore[attr-defined]
    return parser


SEED = int_in(0, 2**32 - 1)  # numpy's and torch's seeds; the build's seed (u64) has its own check


def utf8_path(text: str) -> str:
    """An output location whose name is valid UTF-8. A name with undecodable bytes reaches Python as
    surrogate escapes; polars, the manifest and the BEIR files write paths as UTF-8 text and failed
    on it only after the whole build had run."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raw = os.fsencode(text)
        raise argparse.ArgumentTypeError(
            f"{raw!r} is not valid UTF-8 (byte {err.start}); outputs record their paths as UTF-8 text: choose another name"
        ) from None
    return text


#: a report-file option's value that means standard output (`validate --json -`)
STDOUT = Path("-")
