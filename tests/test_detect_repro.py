"""Detector training is reproducible, validated on unheard recordings, augmented, and takes
several libraries."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("scipy")

from reasonaudio.atoms import AtomLibrary  # noqa: E402
from reasonaudio.detect.augment import AugmentConfig, room_ir, scene, speed, stretch, variant  # noqa: E402
from reasonaudio.detect.model import Detector  # noqa: E402
from reasonaudio.detect.library import open_parts  # noqa: E402
from reasonaudio.detect.train import TrainConfig, open_library, split_validation, train  # noqa: E402
from reasonaudio.errors import UserError  # noqa: E402

SR = 16000


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "reasonaudio", "detect", "train", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def test_same_command_same_model_bytes_and_another_seed_differs(tmp_path):
    # the scenes recipe: the augmentation's draws must be seeded too
    cmd = ["procedural", "--recipe", "scenes", "--steps", "20", "--batch", "4", "--labels", "20", "--seed", "3", "--quiet"]
    runs = [_cli(*cmd, "--out", str(tmp_path / f"m{k}.pt")) for k in range(2)]
    assert all(r.returncode == 0 for r in runs), runs[0].stderr
    assert (tmp_path / "m0.pt").read_bytes() == (tmp_path / "m1.pt").read_bytes()
    other = _cli("procedural", "--steps", "2", "--batch", "4", "--labels", "20", "--seed", "4", "--quiet", "--out", str(tmp_path / "o.pt"))
    assert other.returncode == 0, other.stderr
    d = Detector.load(tmp_path / "m0.pt")
    assert d.training.config["seed"] == 3 and d.training.config["augment"]["enabled"] is True
    assert d.training.config["augment"]["renderer"] == "scene"  # the core's scene renderer
    assert "train_seconds" not in d.training.to_dict()  # wall-clock figures stay out of the model bytes


def test_training_bytes_do_not_depend_on_the_thread_setting(tmp_path):
    # training fixes its thread count (train.TRAIN_THREADS); REASONAUDIO_TORCH_THREADS is for detection
    cmd = ["procedural", "--recipe", "scenes", "--steps", "4", "--batch", "4", "--labels", "6", "--channels", "16", "--valid-clips", "4",
           "--quiet"]
    for t in (1, 2):
        r = _cli(*cmd, "--out", str(tmp_path / f"t{t}.pt"), env={"REASONAUDIO_TORCH_THREADS": str(t)})
        assert r.returncode == 0, r.stderr
    assert (tmp_path / "t1.pt").read_bytes() == (tmp_path / "t2.pt").read_bytes()


def test_the_wall_clock_is_a_safety_stop_that_fails(tmp_path):
    out = tmp_path / "m.pt"
    r = _cli("procedural", "--steps", "50", "--batch", "2", "--labels", "4", "--channels", "8", "--max-seconds", "0.001", "--out", str(out))
    assert r.returncode == 2 and "safety stop" in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


def test_train_help_fits_on_one_screen_and_names_the_recipes():
    r = subprocess.run([sys.executable, "-m", "reasonaudio", "detect", "train", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and len(r.stdout.splitlines()) <= 45
    options = {w.split()[0] for w in r.stdout.split("options:")[1].splitlines() if w.strip().startswith("--")}
    assert len(options) <= 15
    assert "auto|procedural|scenes|recordings|FILE.toml" in r.stdout and "safety stop" in " ".join(r.stdout.split())


def _multi(tmp_path, name, n_labels=4, per_label=3, gain=1.0, phrase_suffix=""):
    lib = AtomLibrary.procedural()
    pick = [0, 10, 20, 30][:n_labels]
    ids, labels, phrases, chunks = [], [], [], []
    for i in pick:
        for k in range(per_label):
            ids.append(f"{lib.atom_ids[i]}_{k}")
            labels.append(lib.labels[i])
            phrases.append(lib.phrases[i] + phrase_suffix)
            chunks.append(lib.audio(i) * gain * (0.5 + 0.25 * k))
    multi = AtomLibrary(
        atom_ids=ids, labels=labels, phrases=phrases, families=["test"] * len(ids), sources=ids, licenses=["CC0-1.0"] * len(ids),
        sample_rate=lib.sample_rate, audio_flat=np.concatenate(chunks).astype(np.float32),
        offsets=np.concatenate([[0], np.cumsum([len(c) for c in chunks])]).astype(np.uint64),
    )
    multi.save(tmp_path / name)
    return str(tmp_path / name)


def test_validation_holds_out_recordings_not_mixtures(tmp_path):
    spec = _multi(tmp_path, "multi")
    library = open_library(spec, SR)
    tr, va, what = split_validation(library, spec, 0.34, seed=0)
    assert va is not None and set(va.atom_ids).isdisjoint(tr.atom_ids)
    assert sorted(va.labels) == sorted(set(library.labels))  # one of each label's three recordings
    assert "never trained" in what
    d = train(spec, TrainConfig(steps=4, batch=4, channels=16, crop_s=4.0, valid_clips=4, valid_fraction=0.34, checks=2), progress=False)
    t = d.training
    assert set(d.library.valid_atom_ids) == set(va.atom_ids)
    assert {"frame_f1", "event_f1"} <= set(t.valid_train_recordings) and {"frame_f1", "event_f1"} <= set(t.valid_held_out_recordings)
    assert t.selected_step in (2, 4) and [c["step"] for c in t.checks] == [2, 4]
    # the procedural library: held out = re-synthesised variants, a different recording of each label
    proc = open_library("procedural", SR, labels=3)
    _, pv, what = split_validation(proc, "procedural", 0.25, seed=0)
    assert pv.labels == proc.labels and "re-synthesised" in what
    assert not np.array_equal(pv.audio(0)[:1000], proc.audio(0)[:1000])
    with pytest.raises(UserError, match="--valid-fraction"):
        split_validation(library, spec, 1.0, seed=0)


def test_several_libraries_of_one_vocabulary_train_one_detector(tmp_path):
    a = _multi(tmp_path, "a", per_label=1)
    b = _multi(tmp_path, "b", n_labels=2, per_label=2, gain=0.7)
    both = open_library([a, b], SR)
    assert len(both) == 4 + 4 and len(set(both.atom_ids)) == 8
    d = train([a, b], TrainConfig(steps=2, batch=2, channels=8, crop_s=3.0, valid_clips=2, checks=1), progress=False)
    assert d.library.spec == (a, b) and d.library.given == [a, b] and d.library.n_atoms == 8 and len(d.labels) == 4
    c = _multi(tmp_path, "c", per_label=1, phrase_suffix=" far away")
    with pytest.raises(UserError, match="cannot train one detector"):
        open_library([a, c], SR)


def test_adding_a_library_leaves_the_first_ones_held_out_recordings_unchanged(tmp_path):
    # a development benchmark built from the pack's held-out recordings must stay unheard when a
    # model also trains on an extra library: each library is split on its own seed stream
    a = _multi(tmp_path, "a", per_label=4)
    b = _multi(tmp_path, "b", per_label=3, gain=0.7)
    alone = split_validation(open_library(a, SR), a, 0.25, seed=0)[1]
    lib, _, origins = open_parts([a, b], SR)
    _, both, what = split_validation(lib, [a, b], 0.25, seed=0, origins=origins)
    from_a = [x for x, o in zip(both.atom_ids, [origins[lib.atom_ids.index(x)] for x in both.atom_ids]) if o == 0]
    assert from_a == list(alone.atom_ids)
    assert len(both) > len(alone)  # the extra library holds out recordings of its own
    # without origins (one library) the draw is the one a single library always had
    assert list(split_validation(open_library(a, SR), a, 0.25, seed=0, origins=None)[1].atom_ids) == list(alone.atom_ids)


def test_augmentations_change_the_sound_as_documented():
    rng = np.random.default_rng(0)
    t = np.arange(SR) / SR
    tone = (0.1 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)

    def peak_hz(x):
        return np.argmax(np.abs(np.fft.rfft(x * np.hanning(len(x))))) * SR / len(x)

    fast = speed(tone, SR, 1.25)
    assert abs(len(fast) - SR / 1.25) < 2 and abs(peak_hz(fast) - 550) < 5  # pitch and tempo together
    slow = stretch(tone, 0.8)
    assert abs(len(slow) / SR - 1.25) < 0.05 and abs(peak_hz(slow) - 440) < 5  # tempo only
    v = variant(tone, SR, AugmentConfig(level_db=0.0, eq_probability=1.0, speed_probability=0.0, stretch_probability=0.0), rng)
    assert abs(10 * np.log10(np.mean(v.astype(np.float64) ** 2)) + 20.0) < 0.2 and not np.allclose(v, tone)
    ir = room_ir(SR, rng, AugmentConfig())
    assert abs(np.sum(ir.astype(np.float64) ** 2) - 1.0) < 1e-3
    mix = np.zeros(2 * SR, np.float32)
    mix[: SR] = tone
    active = np.zeros(2 * SR, bool)
    active[: SR] = True
    cfg = AugmentConfig(room_probability=0.0, bed_probability=1.0, bed_snr_db=(10.0, 10.0))
    out = scene(mix, active, SR, cfg, rng)
    bed = out - mix
    snr = 10 * np.log10(np.mean(out[:SR].astype(np.float64) ** 2) / np.mean(bed[:SR].astype(np.float64) ** 2))
    assert 8.0 < snr < 12.5  # the bed sits 10 dB under the events (the drift is normalised over the clip)


def test_the_stem_is_recorded_and_an_earlier_model_file_migrates(tmp_path):
    import torch

    from reasonaudio.detect.infer import detect
    from reasonaudio.detect.model import FORMAT, migrate

    cmd = ["procedural", "--steps", "3", "--batch", "4", "--labels", "6", "--channels", "16", "--valid-clips", "4", "--quiet"]
    r = _cli(*cmd, "--out", str(tmp_path / "m2.pt"))
    assert r.returncode == 0, r.stderr
    two = Detector.load(tmp_path / "m2.pt")
    assert two.net_config.stem == "2d-halftime" and two.training.config["stem"] == "2d-halftime"
    assert any(k.startswith("stem2d.") for k in two.state_dict)
    # a file of the first format (no stem named: the 1-D stem) loads through migrate, and runs
    payload = torch.load(tmp_path / "m2.pt", weights_only=True)
    assert payload["format"] == FORMAT
    one = train("procedural", TrainConfig(steps=1, batch=2, labels=4, channels=8, valid_clips=2, checks=1, stem="1d"), progress=False)
    old = {**one._payload(), "format": "reasonaudio-detector/1"}
    old["net"] = {k: v for k, v in old["net"].items() if k not in ("stem", "dropout")} | {"gru": 0, "front_end": "logmel"}
    torch.save(old, tmp_path / "old.pt")
    loaded = Detector.load(tmp_path / "old.pt")
    assert loaded.net_config.stem == "1d" and migrate(migrate(old)) == migrate(old)
    lib = AtomLibrary.procedural()
    clip = np.zeros(6 * SR, np.float32)
    clip[SR : SR + len(lib.audio(0))] = lib.audio(0)[: 5 * SR]
    import soundfile as sf

    sf.write(tmp_path / "c.wav", clip, SR)
    for model in (two, loaded):
        index = detect(model, [tmp_path / "c.wav"], ["c"], progress=False)
        assert index.presence.shape == (1, len(model.labels)) and np.isfinite(index.presence).all()
    # what the current format cannot hold is refused in one line
    torch.save({**old, "net": {**old["net"], "gru": 96}}, tmp_path / "gru.pt")
    with pytest.raises(UserError, match="recurrent layer"):
        Detector.load(tmp_path / "gru.pt")


@pytest.mark.parametrize("frames", [499, 500, 7])
def test_every_stem_gives_one_output_frame_per_two_input_frames(frames):
    # the post-processing, the event extents and enrolment read output frame j as input frames 2j..2j+1
    # (25 fps), whichever stem halved the frame rate
    import torch

    from reasonaudio.detect.model import STEMS, NetConfig, build_net

    torch.manual_seed(0)
    x = torch.randn(2, 64, frames)
    costs = {}
    for stem in STEMS:
        net = build_net(NetConfig(n_labels=5, channels=16, stem=stem)).eval()
        with torch.no_grad():
            assert net(x).shape == (2, 5, (frames + 1) // 2), stem
        costs[stem] = sum(p.numel() for p in net.parameters())
    # the half-time stem has the 2-D stem's layers: the same weights, only where time is pooled differs
    assert costs["2d-halftime"] == costs["2d"] > costs["1d"]
