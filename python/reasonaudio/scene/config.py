"""The scene options of a build, checked up front (one clear line per bad value)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from reasonaudio.contract import RT60_RANGE_S, SNR_RANGE_DB
from reasonaudio.errors import UserError

TEXTURES = ("white", "pink", "brown")
#: --pitch: at most an octave either way (the varispeed's range).
PITCH_RANGE = (-12.0, 12.0)


def parse_range(text: str, option: str, bounds: tuple[float, float], unit: str) -> tuple[float, float]:
    """'LO,HI' (or one value) -> (lo, hi), finite, lo <= hi, within `bounds`."""
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) == 1:
        parts = parts * 2
    try:
        lo, hi = (float(p) for p in parts) if len(parts) == 2 else (math.nan, math.nan)
    except ValueError:
        lo = hi = math.nan
    if len(parts) != 2 or not (math.isfinite(lo) and math.isfinite(hi)):
        raise UserError(f"{option} {text!r}: expected LO,HI (two finite numbers of {unit}), e.g. {option} {bounds[0] + 10:g},{bounds[0] + 20:g}")
    if lo > hi:
        raise UserError(f"{option} {text!r}: LO {lo:g} is above HI {hi:g}")
    if lo < bounds[0] or hi > bounds[1]:
        raise UserError(f"{option} {text!r}: must lie within {bounds[0]:g}..{bounds[1]:g} {unit}")
    return lo, hi


@dataclass(frozen=True)
class SceneConfig:
    """--background noise:pink|brown|white or DIR; --snr LO,HI (dB); --room simulated:RT60_LO,RT60_HI or DIR;
    --pitch LO,HI (semitones, varispeed: the event's tempo follows its pitch)."""

    background: str | None = None
    snr_db: tuple[float, float] | None = None
    room: str | None = None
    pitch_semitones: tuple[float, float] | None = None

    @staticmethod
    def from_options(background: str | None, snr: str | None, room: str | None, pitch: str | None) -> SceneConfig:
        if snr is not None and background is None:
            raise UserError("--snr sets the level of a background bed: give --background too")
        if background is not None and snr is None:
            raise UserError("--background needs --snr LO,HI (the bed's level: every event at least that many dB above it)")
        cfg = SceneConfig(
            background=background,
            snr_db=parse_range(snr, "--snr", SNR_RANGE_DB, "dB") if snr is not None else None,
            room=room,
            pitch_semitones=parse_range(pitch, "--pitch", PITCH_RANGE, "semitones") if pitch is not None else None,
        )
        cfg.check()
        return cfg

    @staticmethod
    def from_recorded(d: dict | None) -> SceneConfig | None:
        if d is None:
            return None
        return SceneConfig(
            background=d.get("background"),
            snr_db=tuple(d["snr_db"]) if d.get("snr_db") is not None else None,  # type: ignore[arg-type]
            room=d.get("room"),
            pitch_semitones=tuple(d["pitch_semitones"]) if d.get("pitch_semitones") is not None else None,  # type: ignore[arg-type]
        )

    def recorded(self) -> dict:
        return {
            "background": self.background,
            "snr_db": list(self.snr_db) if self.snr_db else None,
            "room": self.room,
            "pitch_semitones": list(self.pitch_semitones) if self.pitch_semitones else None,
        }

    def check(self) -> None:
        if self.background is not None and self.background.startswith("noise:"):
            kind = self.background.partition(":")[2]
            if kind not in TEXTURES:
                raise UserError(f"--background {self.background!r}: unknown noise {kind!r} (noise:pink, noise:brown or noise:white)")
        if self.room is not None and self.room.startswith("simulated:"):
            rt60_range(self.room)

    @property
    def is_empty(self) -> bool:
        return self.background is None and self.room is None and self.pitch_semitones is None


def rt60_range(spec: str) -> tuple[float, float]:
    return parse_range(spec.partition(":")[2], "--room simulated:", RT60_RANGE_S, "seconds of RT60")
