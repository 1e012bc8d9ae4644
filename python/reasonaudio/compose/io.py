"""Small file helpers: JSONL read/write with atomic replacement."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Iterator

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


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; bad JSON or a non-object is a UserError."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path} does not exist")
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise UserError(f"{path}:{lineno}: not valid JSON ({err.msg})") from None
            if not isinstance(row, dict):
                raise UserError(f"{path}:{lineno}: expected a JSON object")
            yield lineno, row


def read_jsonl(path: str | Path, required: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    rows = []
    for lineno, row in iter_jsonl(path):
        missing = [k for k in required if k not in row]
        if missing:
            raise UserError(f"{path}:{lineno}: missing field(s) {missing}; expected {list(required)}")
        rows.append(row)
    return rows
