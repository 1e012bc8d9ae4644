"""Small file helpers: JSONL read/write with atomic replacement."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable

from reasonaudio.io.benchmark import iter_jsonl
from reasonaudio.errors import UserError


def write_text_atomic(path: str | Path, text: str) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.tmp-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


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
