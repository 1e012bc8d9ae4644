"""The README's Python API example runs as written (a README that lies is worse than none)."""

from __future__ import annotations

import os
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_python_api_example_runs(tmp_path: Path) -> None:
    text = README.read_text()
    section = text[text.index("## Python API") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        namespace: dict = {}
        exec(compile(code, str(README), "exec"), namespace)  # noqa: S102 - the README's own example
    finally:
        os.chdir(cwd)
    assert namespace["report"].ok
    assert namespace["logic"] == {"all": [{"has": "bell_low"}, {"not": "siren_wail"}]}
    assert namespace["result"].summary["acc@1"]["Avg"]["mean"] >= 0
