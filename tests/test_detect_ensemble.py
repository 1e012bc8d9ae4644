"""Ensembles of taggers (`detect ensemble`, issue 21): one model file whose trained-label
probabilities are the mean of several taggers'. Two tiny taggers (seeds 0 and 1) are trained here;
the ensemble's probabilities equal the mean of theirs, survive the file, drive `eval`/`detect`,
the same command writes the same bytes, a single model's file is unchanged by the format, and
taggers that cannot be averaged are refused in one line.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("scipy")

from reasonaudio.cli import main  # noqa: E402
from reasonaudio.detect.ensemble import combine  # noqa: E402
from reasonaudio.detect.model import Detector, make_front_end  # noqa: E402
from reasonaudio.detect.train import TrainConfig, train  # noqa: E402
from reasonaudio.errors import UserError  # noqa: E402


def _cfg(seed: int, labels: int = 6) -> TrainConfig:
    return TrainConfig(steps=3, batch=4, labels=labels, channels=16, valid_clips=4, seed=seed)


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    root = tmp_path_factory.mktemp("ens")
    paths = []
    for seed in (0, 1):
        train("procedural", _cfg(seed), progress=False).save(root / f"m{seed}.pt")
        paths.append(root / f"m{seed}.pt")
    return root, paths


def _probs(detector: Detector, wave: np.ndarray) -> np.ndarray:
    mel = make_front_end(detector.net_config, detector.features)
    with torch.inference_mode():
        return detector.probabilities(detector.net(), mel(torch.from_numpy(wave[None]))).numpy()[0]


def test_ensemble_is_the_mean_of_its_taggers_and_survives_the_file(pair):
    root, (a, b) = pair
    da, db = Detector.load(a), Detector.load(b)
    wave = np.random.default_rng(5).normal(0, 0.1, 16000 * 3).astype(np.float32)
    pa, pb = _probs(da, wave), _probs(db, wave)
    assert not np.allclose(pa, pb)  # two seeds, two taggers
    ens = combine([da, db], [a, b])
    np.testing.assert_allclose(_probs(ens, wave), (pa + pb) / 2, rtol=1e-5, atol=1e-6)
    ens.save(root / "e.pt")
    again = Detector.load(root / "e.pt")
    assert len(again.members) == 1 and again.training["ensemble"] == {"taggers": 2, "seeds": [0, 1]}
    np.testing.assert_allclose(_probs(again, wave), (pa + pb) / 2, rtol=1e-5, atol=1e-6)
    # flattened: an ensemble of an ensemble and a model is three taggers, each weighed alike
    three = combine([again, da], [root / "e.pt", a])
    np.testing.assert_allclose(_probs(three, wave), (pa + pb + pa) / 3, rtol=1e-5, atol=1e-6)
    # a single model's file is what it was before ensembles existed: no `members` entry
    assert "members" not in torch.load(a, weights_only=True) and "members" in torch.load(root / "e.pt", weights_only=True)


def test_cli_writes_the_same_bytes_and_the_ensemble_ranks(pair, tmp_path):
    root, (a, b) = pair
    for out in ("x.pt", "y.pt"):
        r = subprocess.run([sys.executable, "-m", "reasonaudio", "detect", "ensemble", str(a), str(b), "--out", str(tmp_path / out)],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert "an ensemble of 2 taggers" in r.stdout
    assert (tmp_path / "x.pt").read_bytes() == (tmp_path / "y.pt").read_bytes()
    bench = tmp_path / "b"
    assert main(["build", "--out", str(bench), "--clips", "30", "--queries-per-task", "2", "--quiet"]) == 0
    assert main(["detect", "run", str(tmp_path / "x.pt"), str(bench), "--out", str(tmp_path / "ev.parquet"), "--quiet"]) == 0
    assert (tmp_path / "ev.parquet").is_file()


def test_taggers_that_cannot_be_averaged_are_refused(pair, tmp_path, capsys):
    root, (a, b) = pair
    other = tmp_path / "five.pt"
    train("procedural", _cfg(2, labels=5), progress=False).save(other)
    assert main(["detect", "ensemble", str(a), str(other), "--out", str(tmp_path / "e.pt")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and "labels differ" in err
    assert not (tmp_path / "e.pt").exists()
    assert main(["detect", "ensemble", str(a), "--out", str(tmp_path / "e.pt")]) == 2
    assert "at least two" in capsys.readouterr().err
    assert main(["detect", "ensemble", str(a), str(b), "--out", str(a)]) == 2  # never over an input
    assert Detector.load(a).members == []
    from reasonaudio.detect.prototypes import build

    with pytest.raises(UserError, match="before `detect ensemble`"):
        build(combine([Detector.load(a), Detector.load(b)], [a, b]), "procedural")


def test_valid_seed_gives_the_taggers_of_an_ensemble_one_validation_split(tmp_path):
    from reasonaudio import _core
    from reasonaudio.atoms import AtomLibrary

    labels, phrases, families, _, _ = _core.procedural_atoms(16000, 0)
    ids, labs, phrs, fams, chunks = [], [], [], [], []
    for noise in (0, 1, 2):  # three recordings of each of eight sounds
        _, _, _, audio, offsets = _core.procedural_atoms(16000, noise)
        for i in range(8):
            ids.append(f"{labels[i]}_n{noise}")
            labs.append(labels[i])
            phrs.append(phrases[i])
            fams.append(families[i])
            chunks.append(np.asarray(audio[int(offsets[i]) : int(offsets[i + 1])], np.float32))
    lib = AtomLibrary(atom_ids=ids, labels=labs, phrases=phrs, families=fams, sources=["procedural"] * len(ids),
                      licenses=["CC0-1.0"] * len(ids), sample_rate=16000, audio_flat=np.concatenate(chunks),
                      offsets=np.concatenate([[0], np.cumsum([len(c) for c in chunks])]).astype(np.uint64))
    lib.save(tmp_path / "lib")

    def held(**kw) -> list[str]:
        cfg = TrainConfig(steps=1, batch=2, channels=8, valid_clips=2, checks=1, valid_fraction=0.4, **kw)
        return train(str(tmp_path / "lib"), cfg, progress=False).library["valid_atom_ids"]

    assert held(seed=1) != held(seed=0) == held(seed=1, valid_seed=0)
    assert TrainConfig(seed=3).key() == TrainConfig(seed=3, valid_seed=None).key() != TrainConfig(seed=3, valid_seed=0).key()
