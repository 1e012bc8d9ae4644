"""Prototype heads (a recipe's `[prototypes]` stage): every trained label also scored by cosine to
prototypes of its training recordings, averaged with the linear head.

A tagger trained for seconds on eight procedural sounds, two recordings each (noise seeds 0 and
1; one of each held out for validation), gets prototype heads; an isolated recording is then
found under its own label at the right time, the heads survive the model file, recordings held
out for validation are left out unless asked for, the same build writes the same bytes, and bad
input is one clear error.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("torch")
pytest.importorskip("scipy")

from reasonaudio.detect.infer import detect  # noqa: E402
from reasonaudio.detect.model import Detector  # noqa: E402
from reasonaudio.detect.prototypes import build  # noqa: E402
from reasonaudio.detect.train import TrainConfig, train  # noqa: E402
from reasonaudio.errors import UserError  # noqa: E402


@pytest.fixture(scope="module")
def trained(tmp_path_factory, recordings):
    root = tmp_path_factory.mktemp("protos")
    lib = recordings.two_recordings_per_label()
    lib.save(root / "lib")
    cfg = TrainConfig(steps=40, batch=8, channels=32, crop_s=6.0, valid_clips=8, lr=1e-2, checks=2, valid_fraction=0.5)
    detector = train(str(root / "lib"), cfg, progress=False)
    return root, detector, lib


def test_prototype_heads_find_a_recording_and_round_trip(trained, tmp_path, recordings):
    root, detector, lib = trained
    assert len(detector.library.valid_atom_ids) == len(recordings.FAMILIES)  # one recording of each label held out
    out = build(detector, str(root / "lib"), clips=16)
    p = out.prototypes
    assert p.settings["recordings"] == len(recordings.FAMILIES)  # the held-out ones left out
    assert sorted(p.label) == list(range(len(recordings.FAMILIES))) and len(p.centre) == len(recordings.FAMILIES)
    assert all(np.array_equal(out.state_dict[k].numpy(), v.numpy()) for k, v in detector.state_dict.items())
    loaded = Detector.load(out.save(tmp_path / "p.pt"))
    assert loaded.prototypes == p
    k = 2
    atom = lib.audio(k)
    clip = np.zeros(8 * recordings.SR, np.float32)
    clip[2 * recordings.SR : 2 * recordings.SR + len(atom)] = atom
    sf.write(tmp_path / "one.wav", clip, recordings.SR, subtype="FLOAT")
    index = detect(loaded, [tmp_path / "one.wav"], ["one"], progress=False)
    best = index.table().sort("confidence", descending=True).row(0, named=True)
    assert best["label"] == lib.labels[k] and abs(best["onset_s"] - 2.0) < 0.5
    head = detect(detector, [tmp_path / "one.wav"], ["one"], progress=False)
    assert not np.array_equal(head.presence, index.presence)  # the prototypes joined the linear head


def test_include_valid(trained, recordings):
    root, detector, _ = trained
    every = build(detector, str(root / "lib"), clips=16, include_valid=True)
    assert every.prototypes.settings["recordings"] == 2 * len(recordings.FAMILIES) and len(every.prototypes.vectors) == 2 * len(recordings.FAMILIES)


def test_prototypes_refuse_bad_input(trained, tmp_path, recordings):
    root, detector, lib = trained
    other = lib.subset(list(range(len(recordings.FAMILIES))))  # not the library it was trained on
    other.save(tmp_path / "other")
    with pytest.raises(UserError, match="not the library this model was trained on"):
        build(detector, str(tmp_path / "other"))


def test_prototypes_same_build_same_bytes_and_a_wrong_library_is_refused(trained, tmp_path):
    root, detector, _ = trained
    model = detector.save(tmp_path / "m.pt")  # the same build from the same file twice: the same bytes
    a = build(Detector.load(model), str(root / "lib"), clips=16).save(tmp_path / "a.pt")
    b = build(Detector.load(model), str(root / "lib"), clips=16).save(tmp_path / "b.pt")
    assert a.read_bytes() == b.read_bytes()
    with pytest.raises(UserError):
        build(detector, str(tmp_path / "nope"))


def test_spec_augment_and_dropout_are_seeded_recorded_and_checked(tmp_path):
    import torch

    from reasonaudio.detect.train import spec_augment

    x = torch.randn(3, 64, 200)
    a, b = spec_augment(x, 7), spec_augment(x, 7)
    assert torch.equal(a, b) and not torch.equal(a, x) and not torch.equal(a, spec_augment(x, 8))
    recipe = tmp_path / "masks.toml"
    recipe.write_text('format = "reasonaudio-detect-recipe/1"\n[tagger]\nspec_augment = true\ndropout = 0.3\n')
    cmd = ["procedural", "--recipe", str(recipe), "--steps", "4", "--batch", "4", "--labels", "6", "--channels", "16",
           "--valid-clips", "4", "--quiet"]
    r = subprocess.run([sys.executable, "-m", "reasonaudio", "detect", "train", *cmd, "--out", str(tmp_path / "s0.pt")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    # the same run in this process: the same bytes (seeded masks and dropout)
    cfg = TrainConfig(steps=4, batch=4, labels=6, channels=16, valid_clips=4, spec_augment=True, dropout=0.3)
    train("procedural", cfg, progress=False).save(tmp_path / "s1.pt")
    assert (tmp_path / "s0.pt").read_bytes() == (tmp_path / "s1.pt").read_bytes()
    d = Detector.load(tmp_path / "s0.pt")
    assert d.training.config["spec_augment"] is True and d.net_config.dropout == 0.3
    assert TrainConfig().key() == TrainConfig(spec_augment=False, dropout=0.0).key() != TrainConfig(dropout=0.3).key()
    with pytest.raises(UserError, match="dropout"):
        train("procedural", TrainConfig(steps=1, dropout=1.0), progress=False)


def test_prototypes_of_a_model_trained_on_two_libraries(tmp_path, recordings):
    # `detect train PACK EXTRA` models: their prototypes come from the same libraries, in that order
    lib = recordings.two_recordings_per_label()
    n = len(recordings.FAMILIES)
    lib.subset(list(range(n))).save(tmp_path / "a")
    lib.subset(list(range(n, 2 * n))).save(tmp_path / "b")
    cfg = TrainConfig(steps=4, batch=4, channels=16, crop_s=4.0, valid_clips=4, checks=1, valid_fraction=0.0)
    model = train([str(tmp_path / "a"), str(tmp_path / "b")], cfg, progress=False).save(tmp_path / "m.pt")
    detector = Detector.load(model)
    assert build(detector, [str(tmp_path / "a"), str(tmp_path / "b")], clips=8).prototypes.settings["recordings"] == 2 * n
    with pytest.raises(UserError, match="in its order"):
        build(detector, [str(tmp_path / "a")])
