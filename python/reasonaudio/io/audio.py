"""Reading audio the one way the package reads it: any libsndfile format, mixed down to mono
float32, resampled once by the Rust core's band-limited resampler. Used by the model adapters,
the compositional diagnostic and anything else that hands audio to a model."""

from __future__ import annotations


import numpy as np

from reasonaudio.errors import UserError


def to_rate(x: np.ndarray, sr_in: int, sr_out: int) -> np.ndarray:
    """Mono float32 at `sr_out` (unchanged when the rates agree)."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    if sr_in == sr_out:
        return x
    try:
        from reasonaudio._core import resample
    except ImportError:
        raise UserError(
            f"audio at {sr_in} Hz must be resampled to {sr_out} Hz but this build of reasonaudio has no "
            "core resampler; rebuild it (pip install -e .)"
        ) from None
    return np.ascontiguousarray(resample(x, int(sr_in), int(sr_out)), dtype=np.float32)


def read_mono(path) -> tuple[np.ndarray, int]:
    """(float32 mono samples, sample rate) of a file, or of a lazily decoded Hub audio value
    (anything with `open_audio()`, see reasonaudio.io.hub)."""
    import soundfile as sf

    try:
        source = path.open_audio() if hasattr(path, "open_audio") else str(path)
        data, sr = sf.read(source, dtype="float32", always_2d=True)
    except (RuntimeError, OSError) as err:  # soundfile raises LibsndfileError (a RuntimeError)
        raise UserError(f"{path}: cannot read audio ({err})") from None
    mono = data.mean(axis=1) if data.shape[1] > 1 else data[:, 0]
    if not np.all(np.isfinite(mono)):
        raise UserError(f"{path}: audio holds NaN or infinite samples")
    return np.ascontiguousarray(mono, dtype=np.float32), int(sr)


def audio_info(path) -> tuple[int, int]:
    """(frames, sample rate) of a file or a Hub audio value, from its header only."""
    import soundfile as sf

    try:
        info = sf.info(path.open_audio() if hasattr(path, "open_audio") else str(path))
    except (RuntimeError, OSError) as err:
        raise UserError(f"{path}: cannot read audio ({err})") from None
    return int(info.frames), int(info.samplerate)


def load_mono(path, sample_rate: int, max_seconds: float | None = None) -> np.ndarray:
    """float32 mono audio at `sample_rate`; with `max_seconds`, the first `max_seconds` only.

    Long clips are cropped to their *first* window (deterministic, no random crop); the part after
    the window is not seen by the model. The crop happens before resampling too, so a long file is
    never resampled whole.
    """
    mono, sr = read_mono(path)
    if max_seconds is not None:
        mono = mono[: int(round(max_seconds * sr))]
    mono = to_rate(mono, sr, sample_rate)
    if max_seconds is not None:
        mono = mono[: int(round(max_seconds * sample_rate))]
    return mono


__all__ = ["audio_info", "load_mono", "read_mono", "to_rate"]
