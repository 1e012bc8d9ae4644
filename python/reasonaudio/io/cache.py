"""The user's cache of derived files (trained detectors, simulated rooms): `REASONAUDIO_CACHE`, else
`~/.cache/reasonaudio`. Everything kept there can be recomputed from its key; an entry that cannot be
read is recomputed and replaced, never trusted."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    return Path(os.environ.get("REASONAUDIO_CACHE", Path.home() / ".cache" / "reasonaudio"))


def cache_dir(kind: str) -> Path:
    """The folder of one kind of cached file (created by the first write, not here)."""
    return cache_root() / kind
