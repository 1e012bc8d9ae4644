"""Recipes (`detect train --recipe`): the shipped TOML files are the detector's defaults, `auto`
chooses by library, a recipe FILE.toml trains what its settings say (recorded, reproducible: the
same bytes as the same TrainConfig in Python), and a bad recipe is one line, exit 2, no model."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("scipy")

from reasonaudio.cli import main  # noqa: E402
from reasonaudio.detect import recipe  # noqa: E402
from reasonaudio.detect.augment import AugmentConfig  # noqa: E402
from reasonaudio.detect.data import MixtureSource  # noqa: E402
from reasonaudio.detect.model import Detector  # noqa: E402
from reasonaudio.detect.train import TrainConfig, open_library, train  # noqa: E402


def test_shipped_recipes_and_auto():
    assert recipe.load("procedural").tagger == TrainConfig()  # the defaults' one home
    assert recipe.load("auto", ["procedural"]).name == "procedural"
    assert recipe.load("auto", ["/some/pack"]).name == "recordings"
    rec = recipe.load("recordings")
    assert rec.taggers == 2 and rec.prototypes == {"include_valid": True}
    assert rec.aisfx == {"weight": 0.3, "mixtures": 4000, "epochs": 30, "include_valid": True}
    t = rec.tagger
    assert (t.steps, t.spec_augment, t.dropout, t.stem, t.overlap_fraction) == (2400, True, 0.3, "2d-halftime", 0.4)
    seeds = rec.configs(5)
    assert [(c.seed, c.valid_seed) for c in seeds] == [(5, 5), (6, 5)]  # one validation split for the ensemble
    assert recipe.load("procedural").configs(3)[0].valid_seed is None
    assert recipe.load("scenes").tagger.augment == AugmentConfig.core_scene()
    assert all(r.minutes > 0 for r in map(recipe.load, ("procedural", "scenes", "recordings")))


def test_overlap_fraction_sets_the_share_of_overlapping_training_clips():
    lib = open_library("procedural", 16000, 30)

    def crowded_share(fraction: float) -> float:
        src = MixtureSource(lib, hop_out=320, overlap_fraction=fraction)
        _, targets = src.batch(48, 77, lambda n: n // 320 + 1)
        return float(((targets.sum(axis=1) >= 2).sum(axis=1) > 0).mean())

    none, default, all_ = crowded_share(0.0), crowded_share(0.4), crowded_share(1.0)
    assert none < default < all_ and all_ > 0.9


def test_an_augmented_run_takes_the_share_of_overlap_clips_from_its_augmentation():
    scene = TrainConfig(augment=AugmentConfig.core_scene())
    assert scene.key() == replace(scene, overlap_fraction=0.4).key()
    assert "overlap_fraction" not in scene.to_dict() and scene.to_dict()["augment"]["overlap_fraction"] == 0.7
    assert "overlap_fraction" in TrainConfig().to_dict()
    assert replace(scene, augment=replace(AugmentConfig.core_scene(), overlap_fraction=0.5)).key() != scene.key()
    assert len({TrainConfig().key(), TrainConfig(overlap_fraction=0.4).key(), TrainConfig(dropout=0.1).key()}) == 3


def test_a_recipe_file_trains_what_it_says_reproducibly(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text('format = "reasonaudio-detect-recipe/1"\ndescription = "x"\n[tagger]\noverlap_fraction = 0.7\n')
    cmd = ["procedural", "--recipe", str(path), "--steps", "3", "--batch", "4", "--labels", "6", "--channels", "16",
           "--valid-clips", "4", "--quiet"]
    r = subprocess.run([sys.executable, "-m", "reasonaudio", "detect", "train", *cmd, "--out", str(tmp_path / "a.pt")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "recipe mine (a tagger)" in r.stdout
    cfg = TrainConfig(steps=3, batch=4, labels=6, channels=16, valid_clips=4, overlap_fraction=0.7)
    train("procedural", cfg, progress=False).save(tmp_path / "b.pt")
    assert (tmp_path / "a.pt").read_bytes() == (tmp_path / "b.pt").read_bytes()
    train("procedural", replace(cfg, overlap_fraction=0.6), progress=False).save(tmp_path / "c.pt")
    assert (tmp_path / "a.pt").read_bytes() != (tmp_path / "c.pt").read_bytes()
    assert Detector.load(tmp_path / "a.pt").training.config["overlap_fraction"] == 0.7


@pytest.mark.parametrize("text, says", [
    ('format = "reasonaudio-detect-recipe/1"\n[tagger]\noverlap_fraction = 1.5\n', "overlap_fraction must be within"),
    ('format = "reasonaudio-detect-recipe/1"\n[tagger]\ngru = 96\n', "has no setting 'gru'"),
    ('format = "reasonaudio-detect-recipe/1"\n[tagger]\nsteps = "many"\n', "steps = 'many' has the wrong type"),
    ('format = "reasonaudio-detect-recipe/9"\n', "expected 'reasonaudio-detect-recipe/1'"),
    ("[tagger\n", "not a readable TOML file"),
    ('format = "reasonaudio-detect-recipe/1"\n[aisfx]\nweight = 0\n', "weight = 0"),
])
def test_a_bad_recipe_is_one_line(tmp_path, capsys, text, says):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    out = tmp_path / "x.pt"
    assert main(["detect", "train", "procedural", "--recipe", str(path), "--steps", "1", "--labels", "2", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1 and says in err and not out.exists()


def test_an_unknown_recipe_name_is_one_line(tmp_path, capsys):
    assert main(["detect", "train", "procedural", "--recipe", "best", "--out", str(tmp_path / "x.pt")]) == 2
    assert "expected auto, procedural, scenes, recordings or a recipe FILE.toml" in capsys.readouterr().err


TINY = 'format = "reasonaudio-detect-recipe/1"\ndescription = "tiny"\n[tagger]\nsteps = 1\nbatch = 2\nchannels = 8\nvalid_clips = 2\nchecks = 1\n'


def test_a_training_is_announced_once_then_cached(tmp_path, monkeypatch):
    from reasonaudio.detect.train import recipe_cached

    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "tiny.toml"
    path.write_text(TINY + "[cost]\nminutes = 3\n")
    tiny = recipe.load(str(path))
    said: list[str] = []
    first, where = recipe_cached("procedural", tiny, progress=False, log=said.append)
    assert len(said) == 1 and "recipe tiny" in said[0] and "about 3.0 min of CPU" in said[0] and f"cached at {where}" in said[0]
    assert f"reasonaudio detect train procedural --recipe {path}" in said[0] and where.is_file()
    again, _ = recipe_cached("procedural", tiny, progress=False, log=said.append)
    assert len(said) == 1 and again.state_dict.keys() == first.state_dict.keys()


def test_without_aisfx_the_recipe_says_what_it_leaves_out(tmp_path, monkeypatch, capsys):
    import reasonaudio.detect.train as training

    monkeypatch.setattr(training, "aisfx_available", lambda: False)
    path = tmp_path / "head.toml"
    path.write_text(TINY + "[aisfx]\nmixtures = 2\n")
    model = training.train_recipe("procedural", recipe.load(str(path)), labels=3, progress=False, log=lambda m: None)
    err = capsys.readouterr().err
    assert model.aisfx is None and len(err.strip().splitlines()) == 1
    assert "the pretrained aiSFX head is left out (aisfx is not installed: pip install --no-deps aisfx)" in err
