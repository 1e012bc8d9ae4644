"""Audio reading for neural adapters: the package's one reader (reasonaudio.io.audio)."""

from reasonaudio.io.audio import load_mono, read_mono, to_rate  # noqa: F401
