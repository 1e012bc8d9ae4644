"""Levels and timing of two-segment samples: RMS, silence trimming, the gap. Placement, background
fitting, SNR gains, sum and limiter are the Rust core's mixer (`compose.build.mix_sample`)."""

from __future__ import annotations

import numpy as np

GAP_SECONDS = 1.5
SPEECH_RMS_DBFS = -23.0
PEAK_CEILING = 0.97
LOOP_CROSSFADE_S = 0.02


def rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(x, dtype=np.float64)))) if x.size else 0.0


def set_rms(x: np.ndarray, dbfs: float) -> np.ndarray:
    level = rms(x)
    if level == 0.0:
        return x.astype(np.float32)
    return (x * (10.0 ** (dbfs / 20.0) / level)).astype(np.float32)


def trim_silence(x: np.ndarray, sample_rate: int, threshold_db: float = -45.0, pad_s: float = 0.05) -> np.ndarray:
    """Cut leading and trailing near-silence (TTS engines pad their output) but keep a short pad,
    so the silence between the two segments is the inserted gap and not the engine's."""
    if x.size == 0:
        return x
    peak = float(np.max(np.abs(x)))
    if peak == 0.0:
        return x
    loud = np.flatnonzero(np.abs(x) > peak * 10.0 ** (threshold_db / 20.0))
    pad = int(round(pad_s * sample_rate))
    return x[max(0, loud[0] - pad): min(x.size, loud[-1] + 1 + pad)]


def snr_db(speech: np.ndarray, noise: np.ndarray) -> float:
    return 20.0 * np.log10(rms(speech) / rms(noise))


def gap_samples(sample_rate: int, seconds: float = GAP_SECONDS) -> int:
    return int(round(seconds * sample_rate))
