"""Which clips' audio the audio checks read: every clip, the first N by clip id, or a sample spread
evenly over the clip ids (what a corpus too large to read back whole, or rendered shard by shard,
is checked with: it sees every shard)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl


@dataclass(frozen=True)
class AudioSelection:
    """`first`: the first N clips by clip id; `sample`: N clips at evenly spaced positions of the
    clip-id order, the first and the last among them; neither: every clip."""

    first: int | None = None
    sample: int | None = None

    def __post_init__(self) -> None:
        if self.first is not None and self.sample is not None:
            raise ValueError("choose the first clips or an evenly spaced sample, not both")
        for name in ("first", "sample"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"{name} must be >= 0, got {value}")

    @staticmethod
    def of(value: "AudioSelection | int | None") -> "AudioSelection":
        """An int is the first N clips (`validate_benchmark`'s `max_audio_files`), None every clip."""
        if isinstance(value, AudioSelection):
            return value
        return AudioSelection(first=value)

    def pick(self, clips: pl.DataFrame) -> pl.DataFrame:
        """The selected rows of `clips`, which must be sorted by clip_id."""
        n = clips.height
        if self.first is not None and n > self.first:
            return clips.head(self.first)
        if self.sample is not None and n > self.sample:
            return clips[self.positions(n).tolist()]
        return clips

    def positions(self, n: int) -> np.ndarray:
        """Row positions of an evenly spaced sample of `sample` out of `n` > `sample` rows: distinct
        (consecutive positions are at least one row apart), ascending, 0 and n - 1 included."""
        k = int(self.sample or 0)
        if k == 0:
            return np.zeros(0, np.int64)
        if k == 1:
            return np.zeros(1, np.int64)
        return np.round(np.linspace(0, n - 1, k)).astype(np.int64)

    def describe(self, n: int, what: str = "clips") -> str | None:
        """The note a check records when it read fewer than all `n` of `what`."""
        if self.first is not None and n > self.first:
            return f"checked the first {self.first} of {n} {what} (by clip_id)"
        if self.sample is not None and n > self.sample:
            return f"checked {self.sample} of {n} {what}, evenly spaced by clip_id (the first and the last among them)"
        return None
