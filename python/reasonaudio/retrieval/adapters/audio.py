"""Audio reading for neural adapters: the package's one reader (reasonaudio.audio_io)."""

from reasonaudio.audio_io import load_mono, read_mono, to_rate  # noqa: F401
