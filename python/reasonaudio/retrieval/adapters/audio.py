"""Audio reading for neural adapters: soundfile, mono, resampled by the Rust core."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from reasonaudio.errors import UserError


def _resampler():
    try:
        from reasonaudio._core import resample
    except ImportError:
        raise UserError(
            "this model needs audio at a different sample rate, but reasonaudio._core.resample is not "
            "available in this build (rebuild the extension: `pip install -e .`)"
        ) from None
    return resample


def load_mono(path: Path, sample_rate: int, max_seconds: float | None = None) -> np.ndarray:
    """float32 mono audio at `sample_rate`; with `max_seconds`, the first `max_seconds` only.

    Long clips are cropped to their *first* window (deterministic, no random crop); the part after
    the window is not seen by the model.
    """
    import soundfile as sf

    try:
        # audio embedded in a Hub dataset is fetched from its parquet row only now (reasonaudio.hub)
        source = path.open_audio() if hasattr(path, "open_audio") else str(path)
        audio, sr = sf.read(source, dtype="float32", always_2d=True)
    except (RuntimeError, OSError) as err:  # soundfile raises LibsndfileError (a RuntimeError)
        raise UserError(f"{path}: cannot read audio ({err})") from None
    mono = audio.mean(axis=1) if audio.shape[1] > 1 else audio[:, 0]
    if max_seconds is not None:
        mono = mono[: int(round(max_seconds * sr))]
    if sr != sample_rate:
        mono = np.asarray(_resampler()(np.ascontiguousarray(mono, dtype=np.float32), int(sr), int(sample_rate)))
        if max_seconds is not None:
            mono = mono[: int(round(max_seconds * sample_rate))]
    return np.ascontiguousarray(mono, dtype=np.float32)
