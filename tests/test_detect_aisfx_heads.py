"""The aiSFX head (the `recordings` recipe's `[aisfx]` stage): the pretrained aiSFX CNN's label
scores, from a small network fitted on its embeddings of training mixtures, mixed into a trained
tagger's probabilities as (1 - w) p + w a. A tiny head names the training recordings and unheard
ones, survives the model file, is applied by `frame_probabilities` exactly as the formula says, is
the same for every tagger of the library (so it is cached by its inputs), and the same build
writes the same bytes."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf

pytest.importorskip("torch")
pytest.importorskip("scipy")
if __import__("importlib").util.find_spec("aisfx") is None:
    pytest.skip("aisfx not installed (pip install --no-deps aisfx)", allow_module_level=True)

from dataclasses import replace  # noqa: E402

from reasonaudio.detect.aisfx_heads import AisfxHeads, HeadConfig, build, build_head  # noqa: E402
from reasonaudio.detect.infer import detect  # noqa: E402
from reasonaudio.detect.model import Detector, EnrolledLabels  # noqa: E402
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


TINY = HeadConfig(mixtures=48, epochs=40, seed=0)


@pytest.fixture(scope="module")
def trained_head(trained):
    root, detector, lib = trained
    return build(detector, str(root / "lib"), config=TINY)


def test_the_trained_head_names_recordings_it_did_and_did_not_hear_and_round_trips(trained, trained_head, tmp_path):
    root, detector, lib = trained
    h = trained_head.aisfx
    n = detector.net_config.n_labels
    assert all(h.known) and h.weight == 0.3
    assert h.settings["recordings"] == n and h.settings["mixtures"] == 48  # held-out recordings left out
    assert all(np.array_equal(trained_head.state_dict[k].numpy(), v.numpy()) for k, v in detector.state_dict.items())
    loaded = Detector.load(trained_head.save(tmp_path / "t.pt"))
    described = DetectModel(str(tmp_path / "t.pt"), ModelOptions(progress=False)).describe()["aisfx_heads"]  # what eval records
    assert described["weight"] == 0.3 and described["settings"]["mixtures"] == 48 and "network" not in described
    json.dumps(described)
    assert set(loaded.aisfx.network) == set(h.network)
    assert all(np.array_equal(loaded.aisfx.network[k].numpy(), v.numpy()) for k, v in h.network.items())
    heads = AisfxHeads(loaded)
    sr = lib.sample_rate
    valid = set(detector.library.valid_atom_ids)
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


def test_the_trained_head_is_mixed_in_as_a_mean_and_written_the_same_twice(trained, trained_head, tmp_path):
    root, detector, lib = trained
    heads = AisfxHeads(replace(trained_head, aisfx=replace(trained_head.aisfx, weight=0.4)))
    sr = lib.sample_rate
    clip = np.zeros(8 * sr, np.float32)
    clip[2 * sr : 2 * sr + len(lib.audio(2))] = lib.audio(2)
    p = np.random.default_rng(1).uniform(0, 1, (200, detector.net_config.n_labels)).astype(np.float32)
    a = heads.scores(heads.embed(clip), len(p))
    assert np.allclose(heads.fuse(clip, p), 0.6 * p + 0.4 * a, atol=1e-6)
    # frame_probabilities (detect run, eval, the Python API) applies it: the tagger's p mixed with a
    tagger = detector.frame_probabilities([clip])[0]
    mixed = trained_head.frame_probabilities([clip])[0]
    b = AisfxHeads(trained_head).scores(heads.embed(clip), len(tagger))
    assert np.allclose(mixed, 0.7 * tagger + 0.3 * b, atol=1e-5)
    sf.write(tmp_path / "one.wav", clip, sr, subtype="FLOAT")
    best = detect(trained_head, [tmp_path / "one.wav"], ["one"], progress=False).table(0).sort("confidence", descending=True).row(0, named=True)
    assert best["label"] == lib.labels[2] and abs(best["onset_s"] - 2.0) < 0.5
    # the same build from the same file twice: the same bytes
    model = detector.save(tmp_path / "m.pt")
    small = HeadConfig(mixtures=16, epochs=2)
    a = build(Detector.load(model), str(root / "lib"), config=small).save(tmp_path / "a.pt")
    b = build(Detector.load(model), str(root / "lib"), config=small).save(tmp_path / "b.pt")
    assert a.read_bytes() == b.read_bytes()
    with pytest.raises(UserError, match="enrolled labels"):
        build(replace(detector, enrolled=EnrolledLabels(["x"], ["x"], [[0.0]], [0.0], [1.0], [{}])), str(root / "lib"), config=small)
    with pytest.raises(UserError, match="checkpoint"):
        AisfxHeads(replace(trained_head, aisfx=replace(trained_head.aisfx, checkpoint_sha256="0" * 64)))


def test_the_head_of_one_tagger_is_the_one_another_would_build(trained, trained_head, tmp_path, monkeypatch):
    """The head reads the training recordings and the labels, never the tagger: built for another
    tagger of the library it is the same, so one cached head serves every tagger."""
    root, detector, lib = trained
    cfg = TrainConfig(steps=40, batch=8, channels=32, crop_s=6.0, valid_clips=8, lr=1e-2, checks=2, valid_fraction=0.5, seed=1, valid_seed=0)
    other = train(str(root / "lib"), cfg, progress=False)
    assert not np.array_equal(other.state_dict["head.weight"].numpy(), detector.state_dict["head.weight"].numpy())
    built = build(other, str(root / "lib"), config=TINY)
    assert replace(built.aisfx, network={}) == replace(trained_head.aisfx, network={})
    assert all(np.array_equal(built.aisfx.network[k].numpy(), v.numpy()) for k, v in trained_head.aisfx.network.items())

    # cached by its inputs: the second tagger finds the first one's head in the cache
    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    first = build_head(detector, str(root / "lib"), config=TINY, cache=True)
    assert len(list((tmp_path / "cache" / "detect").glob("aisfx-head-*.pt"))) == 1
    again = build_head(other, str(root / "lib"), config=TINY, cache=True)
    assert all(np.array_equal(first["network"][k].numpy(), v.numpy()) for k, v in again["network"].items())
    assert build_head(other, str(root / "lib"), config=HeadConfig(mixtures=16, epochs=2), cache=True)["settings"]["mixtures"] == 16
    assert len(list((tmp_path / "cache" / "detect").glob("aisfx-head-*.pt"))) == 2
