"""`reasonaudio models`: every model spec, what it needs, and whether its packages are importable here."""

from __future__ import annotations

import argparse
import json

from reasonaudio.retrieval.registry import PARADIGMS


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "models",
        description="List every retrieval adapter: the spec to pass to `reasonaudio eval --model`, the study's "
        "model it reproduces, what it needs (GPU memory, sample rate, longest audio it sees) and whether "
        "its Python packages are importable here. Weights always come from local paths.",
    )
    parser.add_argument("--paradigm", choices=list(PARADIGMS), help="only this paradigm")
    parser.add_argument("--json", action="store_true", help="one JSON list instead of the text listing")
    parser.set_defaults(func=run)


def status(card) -> str:
    if not card.available:
        return "not available (see README: models)"
    missing = card.missing()
    if not missing:
        return "importable"
    hint = f"pip install 'reasonaudio[{card.extra}]'" if card.extra else "install it in an environment of its own"
    return f"missing {', '.join(missing)} ({hint})"


def run(args: argparse.Namespace) -> int:
    from reasonaudio.retrieval.catalog import cards

    entries = cards(args.paradigm)
    if args.json:
        print(json.dumps([{**c.as_dict(), "status": status(c)} for c in entries], indent=2))
        return 0
    print("GPU memory figures are estimates from parameter counts (bf16/fp16 weights), not measurements.\n")
    for c in entries:
        title = c.paradigm + (f" · {c.study}" if c.study else "")
        print(c.spec)
        print(f"    {title}")
        print(f"    needs: {c.vram} · audio at {c.sample_rate} · sees {c.max_audio}")
        if c.note:
            print(f"    {c.note}")
        if c.follows:
            print(f"    follows: {c.follows}")
        print(f"    packages: {status(c)}")
    return 0
