"""Small file helpers: JSONL read/write with atomic replacement."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

from reasonaudio.io.benchmark import iter_jsonl
from reasonaudio.errors import UserError
from reasonaudio.io.outputs import jsonl_kind, write_atomic

#: single-file outputs of compose, recognised (for --force) by the keys of their first row
PROMPTS_FILE = jsonl_kind("prompts file", ("id", "layer", "audio", "prompt"))
OUTPUTS_FILE = jsonl_kind("model outputs file", ("id", "layer", "output"))
#: the field of prompts and outputs rows that names the set they were made from (build.set_fingerprint)
FINGERPRINT = "set_fingerprint"


def write_text_atomic(path: str | Path, text: str) -> None:
    """The whole file or nothing, with the mode a plain open gives (the output discipline's writer)."""
    write_atomic(path, text)


def write_jsonl_atomic(path: str | Path, rows: Iterable[dict[str, Any]]) -> None:
    write_text_atomic(path, "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows))


def read_jsonl(path: str | Path, required: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    rows = []
    for lineno, row in iter_jsonl(path):
        missing = [k for k in required if k not in row]
        if missing:
            raise UserError(f"{path}, line {lineno}: missing field(s) {missing}; expected {list(required)}")
        rows.append(row)
    return rows
