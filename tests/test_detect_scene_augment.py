"""Training mixtures drawn with the scene machinery (the `scenes` recipe): `augment = "scene"` renders every
clip through the core's scene renderer (beds at an exact per-event SNR, simulated rooms, per-event
pitch), keeps the labels of the dry events, is reproducible and is recorded in the model."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("scipy")
pytest.importorskip("pyroomacoustics")

from dataclasses import replace  # noqa: E402

from reasonaudio import _core  # noqa: E402
from reasonaudio.atoms import AtomLibrary  # noqa: E402
from reasonaudio.detect.augment import AugmentConfig, SceneBank  # noqa: E402
from reasonaudio.detect.data import MixtureSource  # noqa: E402
from reasonaudio.detect.model import Detector  # noqa: E402
from reasonaudio.detect.train import TrainConfig, train  # noqa: E402

SR = 16000


def _cfg(**kw) -> AugmentConfig:
    return replace(AugmentConfig.core_scene(), n_rooms=2, room_rt60_s=(0.2, 0.3), **kw)


def _source(n_labels: int = 6) -> MixtureSource:
    lib = AtomLibrary.procedural(sample_rate=SR)
    lib = lib.subset(list(range(n_labels)))
    return MixtureSource(lib, hop_out=640)


def _n_out(n: int) -> int:
    return (n // 320 + 1 + 1) // 2


def test_scene_bank_rooms_and_beds_are_the_training_seeds_not_a_benchmarks():
    from reasonaudio.scene.rooms import load_rooms

    bank = SceneBank(SR, _cfg())
    assert len(bank.rooms) == 2 and len(bank.beds) == 4
    bench = load_rooms("simulated:0.2,0.3", SR, 0)  # a build with --seed 0 draws its rooms from its seed
    assert not any(len(r) == len(b.audio) and np.allclose(r, b.audio) for r in bank.rooms for b in bench)
    pink = np.asarray(_core.scene_noise("pink", len(bank.beds[1]), 0, 0x5CE0_0002))
    assert not np.allclose(bank.beds[1], pink)
    for bed in bank.beds:  # unit level as the renderer expects (it sets the gain per clip)
        assert abs(np.sqrt(np.mean(bed.astype(np.float64) ** 2)) - _core.TEXTURE_RMS) < 1e-3


def test_scene_batches_keep_dry_labels_and_are_seeded():
    src = _source()
    cfg = _cfg()
    w1, t1 = src.batch(4, 2**40 + 5, _n_out, 4.0, augment=cfg)
    w2, t2 = src.batch(4, 2**40 + 5, _n_out, 4.0, augment=cfg)
    assert np.array_equal(w1, w2) and np.array_equal(t1, t2)
    # the same plan rendered without a scene: the targets (dry extents) are those of the scene batch
    quiet = replace(cfg, bed_probability=0.0, room_probability=0.0, pitch_probability=0.0)
    w0, t0 = src.batch(4, 2**40 + 5, _n_out, 4.0, augment=quiet)
    assert np.array_equal(t0, t1) and not np.allclose(w0, w1)
    assert t1.sum() > 0 and np.isfinite(w1).all() and np.abs(w1).max() <= 0.98 + 1e-6


def test_a_bed_sits_at_the_drawn_snr_under_the_tightest_event():
    src = _source()
    cfg = _cfg(bed_probability=1.0, room_probability=0.0, pitch_probability=0.0, bed_snr_db=(10.0, 10.0))
    bank = SceneBank(SR, cfg)
    cols = src.plans(1, 2**40 + 9)
    events = _core.EventTable(ev_atom=cols["ev_atom"].astype(np.uint32), ev_onset=cols["ev_onset"].astype(np.int64),
                              ev_length=cols["ev_length"].astype(np.int64), ev_gain_db=cols["ev_gain_db"].astype(np.float32),
                              clip_length=cols["clip_length"][:1].astype(np.int64))
    bed = bank.beds[0]
    beds = _core.Beds(_core.AudioBank(bed, np.array([0, bed.size], np.uint64)), clip_bed=np.zeros(1, np.int32),
                      clip_bed_start=np.zeros(1, np.int64), clip_snr_db=np.full(1, 10.0, np.float32))
    corpus = _core.Corpus(_core.AudioBank(src.audio, src.offsets), events, _core.Scene(beds=beds))
    out = _core.render_clip(corpus, _core.Mixer(SR))
    assert abs(float(np.min(out["ev_snr_db"])) - 10.0) < 0.05  # what the bank's render asks the core for


def test_scene_augmented_training_is_reproducible_and_recorded(tmp_path):
    cfg = TrainConfig(steps=3, batch=2, labels=5, channels=8, valid_clips=2, checks=1, augment=_cfg(), seed=2)
    a = train("procedural", cfg, progress=False)
    b = train("procedural", cfg, progress=False)
    pa, pb = a.save(tmp_path / "a.pt"), b.save(tmp_path / "b.pt")
    assert pa.read_bytes() == pb.read_bytes()
    rec = Detector.load(pa).training.config["augment"]
    assert rec["renderer"] == "scene" and rec["n_rooms"] == 2 and rec["bed_snr_db"] == [-5.0, 30.0]
    assert AugmentConfig.from_dict(rec) == _cfg()
