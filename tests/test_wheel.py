"""The wheel users install, installed where no compiler can be found: it must run a build and
validate it from its own files alone. REASONAUDIO_WHEEL names the wheel (.ci/run builds it with
scripts/build-wheel.sh and sets it); without it the test skips.

The fresh venv sees the test environment's packages (a .pth file naming its site-packages, after
the venv's own) so that nothing is downloaded; reasonaudio itself is installed into the venv from
the wheel, and the test checks that the copy it runs is that one."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

WHEEL = os.environ.get("REASONAUDIO_WHEEL")

pytestmark = pytest.mark.skipif(not WHEEL, reason="REASONAUDIO_WHEEL names no wheel (.ci/run builds one and sets it)")


def test_the_wheel_is_abi3_manylinux2014_and_carries_the_licenses() -> None:
    wheel = Path(WHEEL)
    assert "-cp311-abi3-" in wheel.name and "manylinux_2_17_x86_64" in wheel.name, wheel.name
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert any(n.endswith("licenses/LICENSE") for n in names), names
    assert any(n.endswith("licenses/THIRD_PARTY_NOTICES.md") for n in names), names
    assert "License-Expression: Apache-2.0" in metadata
    assert "Requires-Dist: pyarrow>=14 ; extra == 'arrow'" in metadata
    assert not any(line.startswith("Requires-Dist: matplotlib") and "extra" not in line for line in metadata.splitlines())


def test_the_wheel_builds_and_validates_a_benchmark_without_a_compiler(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    bindir = venv / "bin"
    (own,) = (venv / "lib").glob("python3*/site-packages")
    (own / "outer.pth").write_text("".join(f"{p}\n" for p in site.getsitepackages()))
    # PATH holds the venv alone: no cc, c++, cargo or rustc can be found
    env = {"PATH": str(bindir), "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    for tool in ("cc", "gcc", "c++", "cargo", "rustc", "zig"):
        assert not (bindir / tool).exists()
    subprocess.run([str(bindir / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--force-reinstall", WHEEL],
                   check=True, env=env, cwd=tmp_path)
    where = subprocess.run([str(bindir / "python"), "-c", "import reasonaudio._core as c, shutil; print(c.__file__); "
                            "print(shutil.which('cc'), shutil.which('cargo'))"],
                           check=True, env=env, cwd=tmp_path, capture_output=True, text=True).stdout.split("\n")
    assert where[0].startswith(str(venv)), where
    assert where[1] == "None None", where

    def cli(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(bindir / "reasonaudio"), *args], env=env, cwd=tmp_path, capture_output=True, text=True)

    done = cli("build", "--out", "bench", "--clips", "60", "--queries-per-task", "2", "--quiet")
    assert done.returncode == 0, done.stderr
    assert done.stderr == "" and done.stdout.startswith("built bench: 60 clips"), (done.stdout, done.stderr)
    checked = cli("validate", "bench", "--json", "-", "--quiet")
    assert checked.returncode == 0, checked.stderr
    report = json.loads(checked.stdout)
    assert report["ok"] is True and report["format"] == "reasonaudio-validate-report/1"
    version = cli("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"reasonaudio {Path(WHEEL).name.split('-')[1]}"
