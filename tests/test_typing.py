"""What a type checker sees through the lazy `reasonaudio.X` names: the real signatures (the
TYPE_CHECKING block of reasonaudio/__init__.py), not Any. mypy reads the package's sources and
skips third-party ones (their types do not matter here and reading them takes a minute)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import reasonaudio

pytest.importorskip("mypy", reason="mypy is in the test dependency group")

PROBE = """
import reasonaudio as ra
reveal_type(ra.build)
reveal_type(ra.BuildConfig)
reveal_type(ra.load_benchmark)
reveal_type(ra.validate_benchmark)
reveal_type(ra.AtomLibrary)
reveal_type(ra.__version__)
"""

CONFIG = """
[mypy]
follow_imports = skip
ignore_missing_imports = True
[mypy-reasonaudio,reasonaudio.*]
follow_imports = silent
"""


def test_checkers_see_the_real_types_of_the_public_names(tmp_path: Path) -> None:
    (tmp_path / "probe.py").write_text(PROBE)
    (tmp_path / "mypy.ini").write_text(CONFIG)
    package_root = Path(reasonaudio.__file__).resolve().parent.parent
    # an installed package (site-packages, py.typed) is found by mypy itself, which refuses it on MYPYPATH;
    # a source checkout on PYTHONPATH is named through MYPYPATH
    env = {"PATH": "/usr/bin:/bin"}
    if package_root.name not in ("site-packages", "dist-packages"):
        env["MYPYPATH"] = str(package_root)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--config-file", "mypy.ini", "probe.py"],
        cwd=tmp_path, capture_output=True, text=True, env=env,
    )
    revealed = re.findall(r'Revealed type is "(.*)"', done.stdout)
    assert len(revealed) == 6, done.stdout + done.stderr
    assert not any(t == "Any" for t in revealed), revealed
    assert revealed[0].startswith("def (out: ") and revealed[0].endswith("reasonaudio.builder.tables.Built"), revealed[0]
    assert revealed[2].endswith("reasonaudio.io.benchmark.Benchmark"), revealed[2]
    assert revealed[5] in ("str", "builtins.str"), revealed[5]
