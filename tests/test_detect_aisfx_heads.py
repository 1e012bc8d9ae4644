"""aiSFX heads (`detect aisfx`, issue 21): the pretrained aiSFX CNN's label scores mixed into a
trained tagger's probabilities, by prototypes as (1 - w) p + w sqrt(p a), by a trained head as
(1 - w) p + w a.

A tagger trained for seconds on eight procedural sounds (two recordings each, one held out for
validation) gets aiSFX heads of both kinds; their scores name each training recording by its own
label at the frames it sounds (the trained head also the held-out recording), detection mixes them
in exactly as the formula says (prototypes never add a label the tagger does not hear), the heads
survive the model file, the same command writes the same bytes, heads built for one tagger are the
ones another tagger of the library would build (`--head-from`), and bad input (another library, a
model with enrolled labels, another checkpoint, --tau for the trained head, heads copied across
validation splits) is one clear error.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("torch")
pytest.importorskip("scipy")
if __import__("importlib").util.find_spec("aisfx") is None:
    pytest.skip("aisfx not installed (pip install --no-deps aisfx)", allow_module_level=True)

from dataclasses import replace  # noqa: E402

from reasonaudio.detect.aisfx_heads import AisfxHeads, HeadConfig, build, reuse  # noqa: E402
from reasonaudio.detect.infer import detect  # noqa: E402
from reasonaudio.detect.model import Detector  # noqa: E402
from reasonaudio.detect.train import TrainConfig, train  # noqa: E402
from reasonaudio.errors import UserError  # noqa: E402
from reasonaudio.retrieval.adapters.detect import DetectModel  # noqa: E402
from reasonaudio.retrieval.base import ModelOptions  # noqa: E402


@pytest.fixture(scope="module")
def trained(tmp_path_factory, recordings):
    root = tmp_path_factory.mktemp("aisfx_heads")
    lib = recordings.two_recordings_per_label()
    lib.save(root / "lib")
    cfg = TrainConfig(steps=40, batch=8, channels=32, crop_s=6.0, valid_clips=8, lr=1e-2, checks=2, valid_fraction=0.5)
    return root, train(str(root / "lib"), cfg, progress=False), lib


def test_heads_name_the_training_recordings_and_round_trip(trained, tmp_path):
    root, detector, lib = trained
    out = build(detector, str(root / "lib"), head="prototypes")
    h = out.aisfx
    n = detector.net_config.n_labels
    assert h["settings"]["recordings"] == n and all(h["known"]) and len(h["vectors"]) == n  # held-out recordings left out
    assert build(detector, str(root / "lib"), head="prototypes", include_valid=True).aisfx["settings"]["recordings"] == 2 * n
    assert all(np.array_equal(out.state_dict[k].numpy(), v.numpy()) for k, v in detector.state_dict.items())
    loaded = Detector.load(out.save(tmp_path / "a.pt"))
    assert loaded.aisfx == h
    assert DetectModel(str(tmp_path / "a.pt"), ModelOptions(progress=False)).describe()["aisfx_heads"]["tau"] == 0.05
    heads = AisfxHeads(loaded)
    valid = set(detector.library["valid_atom_ids"])
    named = 0
    for i in range(len(lib)):
        if lib.atom_ids[i] in valid:
            continue
        wave = lib.audio(i)
        a = heads.scores(heads.embed(wave), max(1, int(len(wave) / lib.sample_rate / loaded.output_frame_s)))
        assert np.allclose(a.sum(axis=1), 1.0, atol=1e-5)  # a distribution over the labels at each frame
        named += int(np.argmax(a.mean(axis=0)) == detector.labels.index(lib.labels[i]))
    assert named >= n - 1  # a recording is nearest its own label's prototype (it is that prototype)


def test_detection_mixes_the_scores_in_as_the_formula_says(trained, tmp_path):
    root, detector, lib = trained
    model = build(detector, str(root / "lib"), head="prototypes", weight=0.4)
    heads = AisfxHeads(model)
    sr = lib.sample_rate
    clip = np.zeros(8 * sr, np.float32)
    clip[2 * sr : 2 * sr + len(lib.audio(3))] = lib.audio(3)
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 1, (200, detector.net_config.n_labels)).astype(np.float32)
    p[:, 5] = 0.0  # a label the tagger does not hear
    fused = heads.fuse(clip, p)
    a = heads.scores(heads.embed(clip), len(p))
    assert np.allclose(fused, 0.6 * p + 0.4 * np.sqrt(p * a), atol=1e-6)
    assert np.all(fused[:, 5] == 0.0) and np.all(fused <= np.maximum(p, np.sqrt(p * a)) + 1e-6)
    # through detection: the recording is still found under its label at its time, and the plain
    # model's presence differs (the heads were used)
    sf.write(tmp_path / "one.wav", clip, sr, subtype="FLOAT")
    fused_index = detect(model, [tmp_path / "one.wav"], ["one"], progress=False)
    plain_index = detect(detector, [tmp_path / "one.wav"], ["one"], progress=False)
    best = fused_index.table(0).sort("confidence", descending=True).row(0, named=True)
    assert best["label"] == lib.labels[3] and abs(best["onset_s"] - 2.0) < 0.5
    assert not np.array_equal(fused_index.presence, plain_index.presence)


def test_same_command_same_bytes_and_bad_input(trained, tmp_path, capsys):
    from reasonaudio.cli import main
    from reasonaudio.detect.ensemble import combine

    root, detector, lib = trained
    model = detector.save(tmp_path / "m.pt")
    r = subprocess.run([sys.executable, "-m", "reasonaudio", "detect", "aisfx", str(model), str(root / "lib"),
                        "--head", "prototypes", "--out", str(tmp_path / "a.pt")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "aiSFX prototypes of 8 labels from 8 recordings, weight 0.3" in r.stdout
    assert main(["detect", "aisfx", str(model), str(root / "lib"), "--head", "prototypes", "--out", str(tmp_path / "b.pt")]) == 0
    assert (tmp_path / "a.pt").read_bytes() == (tmp_path / "b.pt").read_bytes()
    capsys.readouterr()
    # another library, an existing --out, a weight out of range: one line each, nothing written
    lib.subset(list(range(8))).save(tmp_path / "other")
    for args in ([str(tmp_path / "other"), "--out", str(tmp_path / "c.pt")],
                 [str(root / "lib"), "--out", str(tmp_path / "a.pt")]):
        assert main(["detect", "aisfx", str(model), *args]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "c.pt").exists()
    with pytest.raises(SystemExit):
        main(["detect", "aisfx", str(model), str(root / "lib"), "--out", str(tmp_path / "d.pt"), "--weight", "0"])
    with_heads = Detector.load(tmp_path / "a.pt")
    with pytest.raises(UserError, match="aiSFX heads"):
        combine([with_heads, detector], ["a.pt", "m.pt"])
    with pytest.raises(UserError, match="enrolled"):
        build(replace(detector, enrolled={"labels": ["x"]}), str(root / "lib"), head="prototypes")
    with pytest.raises(UserError, match="checkpoint"):
        AisfxHeads(replace(with_heads, aisfx={**with_heads.aisfx, "checkpoint_sha256": "0" * 64}))


TINY = HeadConfig(mixtures=48, epochs=40, seed=0)


@pytest.fixture(scope="module")
def trained_head(trained):
    root, detector, lib = trained
    return build(detector, str(root / "lib"), config=TINY)


def test_the_trained_head_names_recordings_it_did_and_did_not_hear_and_round_trips(trained, trained_head, tmp_path):
    root, detector, lib = trained
    h = trained_head.aisfx
    n = detector.net_config.n_labels
    assert h["head"] == "trained" and h["fusion"] == "mean" and all(h["known"])
    assert h["settings"]["recordings"] == n and h["settings"]["mixtures"] == 48  # held-out recordings left out
    assert all(np.array_equal(trained_head.state_dict[k].numpy(), v.numpy()) for k, v in detector.state_dict.items())
    loaded = Detector.load(trained_head.save(tmp_path / "t.pt"))
    described = DetectModel(str(tmp_path / "t.pt"), ModelOptions(progress=False)).describe()["aisfx_heads"]  # what eval records
    assert described["head"] == "trained" and described["weight"] == 0.3 and "network" not in described
    json.dumps(described)
    assert set(loaded.aisfx["network"]) == set(h["network"])
    assert all(np.array_equal(loaded.aisfx["network"][k].numpy(), v.numpy()) for k, v in h["network"].items())
    heads = AisfxHeads(loaded)
    sr = lib.sample_rate
    valid = set(detector.library["valid_atom_ids"])
    named = {True: 0, False: 0}
    for i in range(len(lib)):
        clip = np.zeros(8 * sr, np.float32)
        wave = lib.audio(i)[: 5 * sr]
        clip[2 * sr : 2 * sr + len(wave)] = wave
        a = heads.scores(heads.embed(clip), int(8 / loaded.output_frame_s))
        assert a.shape[1] == n and np.all((a >= 0) & (a <= 1))  # one probability per label, not a distribution
        inside = slice(int(2.3 / loaded.output_frame_s), int((2 + len(wave) / sr - 0.3) / loaded.output_frame_s))
        heard = lib.atom_ids[i] not in valid
        named[heard] += int(np.argmax(a[inside].mean(axis=0)) == detector.labels.index(lib.labels[i]))
        assert a[: int(1.5 / loaded.output_frame_s)].max() < a[inside].max()  # silence before it scores lower
    assert named[True] >= n - 1 and named[False] >= n - 2  # its own recordings, and the unheard ones (8 and 8 of 8 here)


def test_the_trained_head_is_mixed_in_as_a_mean_and_written_the_same_twice(trained, trained_head, tmp_path, capsys):
    from reasonaudio.cli import main

    root, detector, lib = trained
    heads = AisfxHeads(replace(trained_head, aisfx={**trained_head.aisfx, "weight": 0.4}))
    sr = lib.sample_rate
    clip = np.zeros(8 * sr, np.float32)
    clip[2 * sr : 2 * sr + len(lib.audio(2))] = lib.audio(2)
    p = np.random.default_rng(1).uniform(0, 1, (200, detector.net_config.n_labels)).astype(np.float32)
    a = heads.scores(heads.embed(clip), len(p))
    assert np.allclose(heads.fuse(clip, p), 0.6 * p + 0.4 * a, atol=1e-6)
    sf.write(tmp_path / "one.wav", clip, sr, subtype="FLOAT")
    best = detect(trained_head, [tmp_path / "one.wav"], ["one"], progress=False).table(0).sort("confidence", descending=True).row(0, named=True)
    assert best["label"] == lib.labels[2] and abs(best["onset_s"] - 2.0) < 0.5
    # the command: same bytes twice; --tau belongs to the prototypes (one line, nothing written)
    model = detector.save(tmp_path / "m.pt")
    tiny = ["--mixtures", "16", "--epochs", "2"]
    for name in ("a.pt", "b.pt"):
        assert main(["detect", "aisfx", str(model), str(root / "lib"), *tiny, "--out", str(tmp_path / name)]) == 0
    assert "a trained aiSFX head (16 mixtures, 2 epochs) of 8 labels from 8 recordings, weight 0.3, mean fusion" in capsys.readouterr().out
    assert (tmp_path / "a.pt").read_bytes() == (tmp_path / "b.pt").read_bytes()
    assert main(["detect", "aisfx", str(model), str(root / "lib"), "--tau", "0.1", "--out", str(tmp_path / "c.pt")]) == 2
    err = capsys.readouterr().err
    assert "--tau" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "c.pt").exists()


def test_heads_built_for_one_tagger_are_the_ones_another_would_build(trained, trained_head, tmp_path, capsys):
    """`--head-from`: the heads read the training recordings and the labels, never the tagger, so
    copying them from another tagger of the library equals building them again."""
    from reasonaudio.cli import main

    root, detector, lib = trained
    cfg = TrainConfig(steps=40, batch=8, channels=32, crop_s=6.0, valid_clips=8, lr=1e-2, checks=2, valid_fraction=0.5, seed=1, valid_seed=0)
    other = train(str(root / "lib"), cfg, progress=False)
    assert not np.array_equal(other.state_dict["head.weight"].numpy(), detector.state_dict["head.weight"].numpy())
    built, copied = build(other, str(root / "lib"), config=TINY), reuse(other, trained_head, str(root / "lib"))
    assert {k: v for k, v in built.aisfx.items() if k != "network"} == {k: v for k, v in copied.aisfx.items() if k != "network"}
    assert all(np.array_equal(built.aisfx["network"][k].numpy(), v.numpy()) for k, v in copied.aisfx["network"].items())
    assert all(np.array_equal(copied.state_dict[k].numpy(), v.numpy()) for k, v in other.state_dict.items())  # its own tagger kept

    a, b = trained_head.save(tmp_path / "a.pt"), other.save(tmp_path / "b.pt")
    assert main(["detect", "aisfx", str(b), str(root / "lib"), "--head-from", str(a), "--weight", "0.4", "--out", str(tmp_path / "c.pt")]) == 0
    assert f"(copied from {a}) of 8 labels from 8 recordings, weight 0.4, mean fusion" in capsys.readouterr().out
    c = Detector.load(tmp_path / "c.pt")
    assert c.aisfx["weight"] == 0.4 and c.aisfx["mean"] == trained_head.aisfx["mean"]
    # building options beside --head-from, heads built without the validation recordings, a model
    # without heads: one line each, nothing written
    for extra in (["--head-from", str(a), "--mixtures", "16"], ["--head-from", str(a), "--include-valid"], ["--head-from", str(b)]):
        assert main(["detect", "aisfx", str(b), str(root / "lib"), *extra, "--out", str(tmp_path / "d.pt")]) == 2
        err = capsys.readouterr().err
        assert "--head-from" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "d.pt").exists()
    with pytest.raises(UserError, match="other validation recordings"):
        reuse(replace(other, library={**other.library, "valid_atom_ids": []}), trained_head, str(root / "lib"))
    with pytest.raises(UserError, match="another library"):
        reuse(other, replace(trained_head, library={**trained_head.library, "hash": "0" * 64}), str(root / "lib"))
