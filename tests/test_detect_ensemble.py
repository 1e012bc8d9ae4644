"""Ensembles of taggers (a recipe's `[ensemble] taggers`): one model file whose trained-label
probabilities are the mean of several taggers'. Two tiny taggers (seeds 0 and 1) are trained here;
the ensemble's probabilities equal the mean of theirs, survive the file, drive `detect run`, the
same `detect train --recipe` command writes the same bytes, a single model's file has no
`members`, and taggers that cannot be averaged are refused in one line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("scipy")

from reasonaudio.cli import main  # noqa: E402
from reasonaudio.detect.ensemble import combine  # noqa: E402
from reasonaudio.detect.model import Detector  # noqa: E402
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
    return detector.frame_probabilities([wave])[0]


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
    assert len(again.members) == 1 and again.training.ensemble == {"taggers": 2, "seeds": [0, 1]}
    np.testing.assert_allclose(_probs(again, wave), (pa + pb) / 2, rtol=1e-5, atol=1e-6)
    # flattened: an ensemble of an ensemble and a model is three taggers, each weighed alike
    three = combine([again, da], [root / "e.pt", a])
    np.testing.assert_allclose(_probs(three, wave), (pa + pb + pa) / 3, rtol=1e-5, atol=1e-6)
    # a single tagger's file has no `members` entry
    assert "members" not in torch.load(a, weights_only=True) and "members" in torch.load(root / "e.pt", weights_only=True)


TINY_ENSEMBLE = """format = "reasonaudio-detect-recipe/1"
description = "two tiny taggers"
[tagger]
steps = 3
batch = 4
channels = 16
valid_clips = 4
[ensemble]
taggers = 2
"""


def test_a_recipe_trains_the_ensemble_the_same_bytes_and_it_runs(tmp_path):
    recipe = tmp_path / "tiny.toml"
    recipe.write_text(TINY_ENSEMBLE)
    env = {**os.environ, "REASONAUDIO_CACHE": str(tmp_path / "cache")}
    for i, out in enumerate(("x.pt", "y.pt")):
        if i:  # the second run trains again: its taggers come from nowhere but the command
            shutil.rmtree(tmp_path / "cache")
        r = subprocess.run([sys.executable, "-m", "reasonaudio", "detect", "train", "procedural", "--labels", "6", "--recipe", str(recipe),
                            "--out", str(tmp_path / out), "--quiet"], capture_output=True, text=True, env=env)
        assert r.returncode == 0, r.stderr
        assert "recipe tiny (2 taggers)" in r.stdout
    assert (tmp_path / "x.pt").read_bytes() == (tmp_path / "y.pt").read_bytes()
    model = Detector.load(tmp_path / "x.pt")
    assert len(model.members) == 1 and model.training.ensemble["seeds"] == [0, 1]
    assert model.training.recipe == "tiny"
    assert len(list((tmp_path / "cache" / "detect").glob("*.pt"))) == 2  # each tagger cached by its inputs
    bench = tmp_path / "b"
    assert main(["build", "--out", str(bench), "--clips", "30", "--queries-per-task", "2", "--quiet"]) == 0
    assert main(["detect", "run", str(tmp_path / "x.pt"), str(bench), "--out", str(tmp_path / "ev.parquet"), "--quiet"]) == 0
    assert (tmp_path / "ev.parquet").is_file()


def test_taggers_that_cannot_be_averaged_are_refused(pair, tmp_path):
    root, (a, b) = pair
    other = tmp_path / "five.pt"
    train("procedural", _cfg(2, labels=5), progress=False).save(other)
    with pytest.raises(UserError, match="labels differ"):
        combine([Detector.load(a), Detector.load(other)], [a, other])
    with pytest.raises(ValueError, match="at least two"):
        combine([Detector.load(a)])
    from reasonaudio.detect.prototypes import build

    with pytest.raises(UserError, match="before the ensemble"):
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
        return train(str(tmp_path / "lib"), cfg, progress=False).library.valid_atom_ids

    assert held(seed=1) != held(seed=0) == held(seed=1, valid_seed=0)
    assert TrainConfig(seed=3).key() == TrainConfig(seed=3, valid_seed=None).key() != TrainConfig(seed=3, valid_seed=0).key()
