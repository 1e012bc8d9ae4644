"""Bad input to `detect enrol` and `detect run`, one row each: a clear one-line refusal (exit 2, no
traceback, nothing written) or, for `run --force` over its own earlier output, the replacement a
user expects, with nothing left beside it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("torch")
pytest.importorskip("scipy")

from reasonaudio.cli import main  # noqa: E402

SR = 16000


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("detector") / "m.pt"
    assert main(["detect", "train", "procedural", "--labels", "3", "--steps", "1", "--channels", "8", "--valid-clips", "1",
                 "--batch", "1", "--device", "cpu", "--out", str(out), "--quiet"]) == 0
    return out


def _recordings(folder: Path, silent: bool) -> list[str]:
    paths = []
    for k in range(2):
        x = np.zeros(SR, np.float32) if silent else (0.1 * np.sin(2 * np.pi * (300 + 50 * k) * np.arange(SR) / SR)).astype(np.float32)
        paths.append(folder / f"{'z' if silent else 't'}{k}.wav")
        sf.write(paths[-1], x, SR)
    return [str(p) for p in paths]


ENROL = [
    # (case, silent recordings, phrase, what the one line says)
    ("silent recordings", True, "a door", "silent"),
    ("empty phrase", False, "", "--phrase ''"),
    ("whitespace-only phrase", False, "   ", "--phrase '   '"),
]


@pytest.mark.parametrize("case, silent, phrase, says", ENROL, ids=[c[0] for c in ENROL])
def test_enrol_refuses(model, tmp_path, capsys, case, silent, phrase, says):
    out = tmp_path / "m2.pt"
    code = main(["detect", "enrol", str(model), *_recordings(tmp_path, silent), "--label", "door", "--phrase", phrase,
                 "--out", str(out), "--device", "cpu"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1 and says in err, err
    assert not out.exists()


def test_run_force_replaces_its_own_output_and_leaves_nothing_beside_it(model, tmp_path, capsys):
    audio = tmp_path / "audio"
    audio.mkdir()
    _recordings(audio, silent=False)
    out = tmp_path / "out" / "events.parquet"
    args = ["detect", "run", str(model), str(audio), "--out", str(out), "--device", "cpu", "--quiet"]
    assert main(args) == 0
    first = out.read_bytes()
    assert main(args) == 2  # an earlier output is kept without --force
    assert "--force" in capsys.readouterr().err
    assert main([*args, "--force"]) == 0  # and replaced with it: the marker is read where it is written
    assert out.read_bytes() == first
    assert sorted(p.name for p in out.parent.iterdir()) == ["events.parquet"]
    # a foreign parquet file at --out is not replaced, even with --force
    foreign = tmp_path / "foreign.parquet"
    import polars as pl

    pl.DataFrame({"a": [1]}).write_parquet(foreign)
    assert main(["detect", "run", str(model), str(audio), "--out", str(foreign), "--force", "--device", "cpu", "--quiet"]) == 2
    assert pl.read_parquet(foreign).columns == ["a"]
    # a run that fails leaves no new folder behind
    missing = tmp_path / "new" / "events.parquet"
    assert main(["detect", "run", str(model), str(tmp_path / "nowhere"), "--out", str(missing), "--force", "--device", "cpu"]) == 2
    assert not missing.parent.exists()
