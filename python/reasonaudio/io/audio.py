"""Reading audio the one way the package reads it: any libsndfile format as float32, mixed down to
mono where a model or a measure wants one signal, resampled once by the Rust core's band-limited
resampler. Atoms, rooms and beds, the validator, the audit pages, the model adapters and the
compositional diagnostic all read here, so an unreadable file reads as the same one-line error."""

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


class UnreadableAudio(UserError):
    """A file (or Hub audio value, or bytes) that libsndfile cannot decode; `reason` is libsndfile's
    own words, for callers that report it in their own sentence."""

    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


def read_audio(source, name: str | None = None) -> tuple[np.ndarray, int]:
    """(float32 samples as frames x channels, sample rate) of a file path, a binary file object, or
    a lazily decoded Hub audio value (anything with `open_audio()`, see reasonaudio.io.hub).

    A source libsndfile cannot decode raises UnreadableAudio: "NAME: cannot read audio (REASON)",
    NAME defaulting to the source itself."""
    import soundfile as sf

    try:  # the Hub's open_audio reads the parquet row lazily, so its failures are this file's too
        if hasattr(source, "open_audio"):
            opened = source.open_audio()
        elif hasattr(source, "read"):
            opened = source
        else:
            opened = str(source)
        data, sr = sf.read(opened, dtype="float32", always_2d=True)
    except Exception as err:  # noqa: BLE001  libsndfile reports a corrupt or unknown file in several ways
        reason = str(err).strip() or type(err).__name__
        raise UnreadableAudio(f"{source if name is None else name}: cannot read audio ({reason})", reason) from None
    return data, int(sr)


def read_mono(path) -> tuple[np.ndarray, int]:
    """(float32 mono samples, sample rate) of anything `read_audio` reads, channels averaged."""
    data, sr = read_audio(path)
    mono = data.mean(axis=1) if data.shape[1] > 1 else data[:, 0]
    if not np.all(np.isfinite(mono)):
        raise UserError(f"{path}: audio holds NaN or infinite samples")
    return np.ascontiguousarray(mono, dtype=np.float32), sr


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


__all__ = ["UnreadableAudio", "audio_info", "load_mono", "read_audio", "read_mono", "to_rate"]
