"""The optional aiSFX front end: its checkpoint loads key for key into the net rebuilt here, and its
input is the documented one (44.1 kHz, 2048/1024 STFT, 96 unit-sum HTK-mel bands, time-major)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
if __import__("importlib").util.find_spec("aisfx") is None:
    pytest.skip("aisfx not installed (pip install --no-deps aisfx)", allow_module_level=True)

import torch  # noqa: E402

from reasonaudio.detect.features import FeatureConfig  # noqa: E402
from reasonaudio.detect.pretrained import AisfxFrontEnd, build_embedding_net, load_weights, mel_weights  # noqa: E402


def test_checkpoint_loads_key_for_key_and_input_is_time_major():
    net = build_embedding_net()
    missing, unexpected = net.load_state_dict(load_weights(), strict=True)
    assert not missing and not unexpected
    w = mel_weights()
    assert w.shape == (96, 1025) and np.allclose(w.sum(axis=1), 1.0, atol=1e-5)
    fe = AisfxFrontEnd(FeatureConfig())
    sr = 16000
    t = np.arange(2 * sr) / sr
    tone = torch.from_numpy((0.1 * np.sin(2 * np.pi * 1000 * t)).astype(np.float32))[None]
    spec = fe.spectrogram(torch.from_numpy(np.zeros((1, 44100), np.float32)))
    assert spec.shape == (1, 44100 // 1024 + 1, 96)  # [batch, frames, bands]: time-major
    mel, emb = fe(tone)
    assert emb.shape[:2] == (1, 512) and emb.shape[2] == (2 * 44100 // 1024 + 1) // 8
    # a 1-kHz tone lights the band around 1 kHz (HTK mel 1000 Hz = 1000 mel of 3923)
    s = fe.spectrogram(torch.from_numpy(__import__("reasonaudio")._core.resample(tone[0].numpy(), sr, 44100))[None])[0]
    band = int(s.mean(dim=0).argmax())
    assert abs(band - round(1000.0 / (2595 * np.log10(1 + 22050 / 700)) * 97) + 1) <= 2
