"""Mixing arithmetic for two-segment samples: RMS levels, SNR scaling, background fitting, the gap."""

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


def fit_background(noise: np.ndarray, length: int, offset: int, sample_rate: int) -> np.ndarray:
    """Loop (with short crossfades at the joins, so loops do not click) or crop `noise` to `length`
    samples, starting `offset` samples into it."""
    if noise.size == 0:
        raise ValueError("background sound is empty")
    noise = noise.astype(np.float32)
    if noise.size >= length:
        start = offset % (noise.size - length + 1)
        return noise[start:start + length].copy()
    fade = min(int(LOOP_CROSSFADE_S * sample_rate), noise.size // 4)
    if fade > 0:
        ramp = np.linspace(0.0, 1.0, fade, dtype=np.float32)
        period = noise[:-fade].copy()
        period[:fade] = noise[:fade] * ramp + noise[-fade:] * (1.0 - ramp)
    else:
        period = noise
    reps = int(np.ceil((length + period.size) / period.size)) + 1
    tiled = np.tile(period, reps)
    start = offset % period.size
    return tiled[start:start + length].copy()


def scale_to_snr(speech: np.ndarray, noise: np.ndarray, snr_db: float) -> np.ndarray:
    """Noise scaled so that 20*log10(rms(speech)/rms(noise)) == snr_db."""
    noise_level = rms(noise)
    if noise_level == 0.0:
        raise ValueError("background sound is silent; cannot mix it at an SNR")
    target = rms(speech) / (10.0 ** (snr_db / 20.0))
    return (noise.astype(np.float64) * (target / noise_level)).astype(np.float32)


def snr_db(speech: np.ndarray, noise: np.ndarray) -> float:
    return 20.0 * np.log10(rms(speech) / rms(noise))


def gap_samples(sample_rate: int, seconds: float = GAP_SECONDS) -> int:
    return int(round(seconds * sample_rate))


def concat_with_gap(first: np.ndarray, second: np.ndarray, gap: int) -> tuple[np.ndarray, list[tuple[int, int]]]:
    """[first][gap zeros][second]; returns the audio and each segment's [start, end) in samples."""
    out = np.zeros(first.size + gap + second.size, dtype=np.float32)
    out[: first.size] = first
    out[first.size + gap:] = second
    return out, [(0, first.size), (first.size + gap, out.size)]


def limit_peak(x: np.ndarray, ceiling: float = PEAK_CEILING) -> tuple[np.ndarray, float]:
    """One gain for the whole sample (so SNR and the segments' balance are kept) if it would clip."""
    peak = float(np.max(np.abs(x))) if x.size else 0.0
    gain = 1.0 if peak <= ceiling else ceiling / peak
    return (x * gain).astype(np.float32), gain
