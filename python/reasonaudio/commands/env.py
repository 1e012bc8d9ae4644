"""`reasonaudio env`: the versions a bug report needs — Python, the platform, reasonaudio, its compiled
extension, and the dependencies that decide what a command does (missing ones say so).

Versions come from the installed distributions' metadata: nothing optional is imported, so the
report works where a broken dependency would make an import fail.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys

#: the distributions listed after reasonaudio itself: the base install, then the optional ones
DEPENDENCIES = (
    "numpy", "polars", "soundfile", "tqdm", "fsspec", "threadpoolctl", "shtab",
    "pyarrow", "matplotlib", "scikit-learn", "rank-bm25", "torch", "transformers", "sentence-transformers",
    "datasets", "mteb", "torchcodec", "pyroomacoustics", "scipy", "sed_scores_eval", "ray", "s3fs",
)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("env", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="one JSON object instead of aligned lines")
    parser.set_defaults(func=run)


def collect() -> dict[str, str | None]:
    from importlib import metadata

    from reasonaudio.about import version

    def installed(name: str) -> str | None:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return None

    try:
        from reasonaudio import _core

        extension = f"{_core.__version__} ({_core.__file__})"
    except ImportError as err:
        extension = f"not importable: {err}"
    report: dict[str, str | None] = {
        "python": f"{platform.python_version()} ({platform.python_implementation()}, {sys.executable})",
        "platform": platform.platform(),
        "reasonaudio": version(),
        "reasonaudio._core": extension,
    }
    report.update({name: installed(name) for name in DEPENDENCIES})
    return report


def run(args: argparse.Namespace) -> int:
    report = collect()
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    width = max(map(len, report))
    for name, value in report.items():
        print(f"{name:<{width}}  {value if value is not None else '-'}")
    return 0
