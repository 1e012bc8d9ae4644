"""aiSFX heads (`detect aisfx`, issue 21): the pretrained aiSFX CNN's label scores mixed into a
trained tagger's probabilities as (1 - w) p + w sqrt(p a).

A tagger trained for seconds on eight procedural sounds (two recordings each, one held out for
validation) gets aiSFX heads; aiSFX's scores name each training recording by its own label at the
frames it sounds, detection mixes them in exactly as the formula says and never adds a label the
tagger does not hear, the heads survive the model file, the same command writes the same bytes,
and bad input (another library, a model with enrolled labels, another checkpoint) is one clear error.
"""

from __future__ import annotations

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

from reasonaudio.detect.aisfx_heads import AisfxHeads, build  # noqa: E402
from reasonaudio.detect.infer import detect  # noqa: E402
from reasonaudio.detect.model import Detector  # noqa: E402
from reasonaudio.detect.train import TrainConfig, train  # noqa: E402
from reasonaudio.errors import UserError  # noqa: E402


@pytest.fixture(scope="module")
def trained(tmp_path_factory, recordings):
    root = tmp_path_factory.mktemp("aisfx_heads")
    lib = recordings.two_recordings_per_label()
    lib.save(root / "lib")
    cfg = TrainConfig(steps=40, batch=8, channels=32, crop_s=6.0, valid_clips=8, lr=1e-2, checks=2, valid_fraction=0.5)
    return root, train(str(root / "lib"), cfg, progress=False), lib


def test_heads_name_the_training_recordings_and_round_trip(trained, tmp_path):
    root, detector, lib = trained
    out = build(detector, str(root / "lib"))
    h = out.aisfx
    n = detector.net_config.n_labels
    assert h["settings"]["recordings"] == n and all(h["known"]) and len(h["vectors"]) == n  # held-out recordings left out
    assert build(detector, str(root / "lib"), include_valid=True).aisfx["settings"]["recordings"] == 2 * n
    assert all(np.array_equal(out.state_dict[k].numpy(), v.numpy()) for k, v in detector.state_dict.items())
    loaded = Detector.load(out.save(tmp_path / "a.pt"))
    assert loaded.aisfx == h
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
    model = build(detector, str(root / "lib"), weight=0.4)
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
                        "--out", str(tmp_path / "a.pt")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "aiSFX prototypes of 8 labels from 8 recordings, weight 0.3" in r.stdout
    assert main(["detect", "aisfx", str(model), str(root / "lib"), "--out", str(tmp_path / "b.pt")]) == 0
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
        build(replace(detector, enrolled={"labels": ["x"]}), str(root / "lib"))
    with pytest.raises(UserError, match="checkpoint"):
        AisfxHeads(replace(with_heads, aisfx={**with_heads.aisfx, "checkpoint_sha256": "0" * 64}))
