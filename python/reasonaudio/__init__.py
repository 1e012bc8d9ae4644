"""reasonaudio: build reasoning-intensive text-to-audio retrieval benchmarks and evaluate models on them."""

from reasonaudio._core import __version__

__all__ = ["__version__"]
