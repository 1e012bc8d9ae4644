"""Python-side checks of `_core.resample`: length contract, no time shift, band limiting."""

from __future__ import annotations

import numpy as np
import pytest

from reasonaudio import _core


@pytest.mark.parametrize("sr_in,sr_out", [(44100, 16000), (48000, 16000), (22050, 24000), (8000, 16000)])
def test_sine_snr_and_length(sr_in: int, sr_out: int) -> None:
    n = sr_in + 37
    x = (0.5 * np.sin(2 * np.pi * 1000 * np.arange(n) / sr_in)).astype(np.float32)
    y = _core.resample(x, sr_in, sr_out)
    assert y.dtype == np.float32
    assert len(y) == round(n * sr_out / sr_in)
    ideal = 0.5 * np.sin(2 * np.pi * 1000 * np.arange(len(y)) / sr_out)
    skip = sr_out // 100  # the filter's edge transient (signal starts abruptly)
    err = y[skip:-skip] - ideal[skip:-skip]
    snr = 10 * np.log10(np.sum(ideal[skip:-skip] ** 2) / np.sum(err**2))
    assert snr >= 100, snr


def test_identity_and_strided_input() -> None:
    x = np.random.default_rng(0).standard_normal((1000, 2)).astype(np.float32)
    np.testing.assert_array_equal(_core.resample(np.ascontiguousarray(x[:, 1]), 16000, 16000), x[:, 1])
    np.testing.assert_array_equal(_core.resample(x[:, 1], 48000, 16000), _core.resample(x[:, 1].copy(), 48000, 16000))


def test_bad_rate_is_value_error() -> None:
    with pytest.raises(ValueError, match="sample rates must be positive"):
        _core.resample(np.zeros(10, np.float32), 0, 16000)
