"""Reading a JSON file the package itself wrote (a manifest, a results file): any fault is one line
naming the file and where it breaks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from reasonaudio.errors import UserError


def read_json(path: Path) -> Any:
    """The parsed content of the UTF-8 JSON file `path` (the caller checks that it exists and what
    the content must hold)."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise UserError(f"{path}: invalid JSON at line {err.lineno}: {err.msg}") from None
    except UnicodeDecodeError as err:
        raise UserError(f"{path}: not UTF-8 text (byte {err.start})") from None
