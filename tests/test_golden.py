"""Refactors must not change what a build writes: a small build's table hashes (as the manifest
records them) and audio bytes, same seed and parameters. The audio was recorded at commit de57900;
the tables as `reasonaudio.io.parquet` writes them (the same bytes under every polars from 1.39 to
2.1: docs/results/packaging.md)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from reasonaudio.builder import BuildConfig, build

RECORDED = {
    # sha256 of json.dumps(manifest["hashes"], sort_keys=True): every table, BEIR file and the atom bank
    "tables": "062afba6cdc407c7ec8ad989cd786a3d320d911f691ffbb9c29a7c46e137473f",
    # sha256 over the audio files in name order of (name, sha256(bytes))
    "audio": "bc8ddc850c7f4d8e028218e8323709f3bc37e93baa8833b120138c204b37a37d",
}


def test_a_small_build_is_byte_identical_to_the_recorded_one(tmp_path: Path) -> None:
    out = build(tmp_path / "b", BuildConfig(clips=600, queries_per_task=6, seed=3), progress=False)
    manifest = json.loads((out / "manifest.json").read_text())
    tables = hashlib.sha256(json.dumps(manifest["hashes"], sort_keys=True).encode()).hexdigest()
    audio = hashlib.sha256()
    for path in sorted((out / "audio").iterdir()):
        audio.update(path.name.encode())
        audio.update(hashlib.sha256(path.read_bytes()).digest())
    assert {"tables": tables, "audio": audio.hexdigest()} == RECORDED
