"""The scene options of a build, checked up front (one clear line per bad value)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from reasonaudio.contract import RT60_RANGE_S, SNR_RANGE_DB
from reasonaudio.errors import UserError

TEXTURES = ("white", "pink", "brown")
#: --pitch and --varispeed: at most an octave either way.
PITCH_RANGE = (-12.0, 12.0)
#: --stretch: the factor on an exemplar's length, half to twice (Signalsmith Stretch keeps its
#: phases coherent up to 2x; beyond, it randomises them).
STRETCH_RANGE = (0.5, 2.0)


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
    --pitch LO,HI (semitones, the length kept) and --stretch LO,HI (factor on the length, the pitch
    kept), both through Signalsmith Stretch; --varispeed LO,HI (semitones, tape-style: the length
    follows the pitch, through the core's resampler)."""

    background: str | None = None
    snr_db: tuple[float, float] | None = None
    room: str | None = None
    pitch_semitones: tuple[float, float] | None = None
    stretch: tuple[float, float] | None = None
    varispeed_semitones: tuple[float, float] | None = None

    @staticmethod
    def from_options(background: str | None, snr: str | None, room: str | None, pitch: str | None,
                     stretch: str | None = None, varispeed: str | None = None) -> SceneConfig:
        if snr is not None and background is None:
            raise UserError("--snr sets the level of a background bed: give --background too")
        if background is not None and snr is None:
            raise UserError("--background needs --snr LO,HI (the bed's level: every event at least that many dB above it)")
        cfg = SceneConfig(
            background=background,
            snr_db=parse_range(snr, "--snr", SNR_RANGE_DB, "dB") if snr is not None else None,
            room=room,
            pitch_semitones=parse_range(pitch, "--pitch", PITCH_RANGE, "semitones") if pitch is not None else None,
            stretch=parse_range(stretch, "--stretch", STRETCH_RANGE, "(factor on the length)") if stretch is not None else None,
            varispeed_semitones=parse_range(varispeed, "--varispeed", PITCH_RANGE, "semitones") if varispeed is not None else None,
        )
        cfg.check()
        return cfg

    @staticmethod
    def from_recorded(d: dict | None) -> SceneConfig | None:
        if d is None:
            return None

        def pair(key: str) -> tuple[float, float] | None:
            v = d.get(key)
            return (float(v[0]), float(v[1])) if v is not None else None

        return SceneConfig(
            background=d.get("background"), snr_db=pair("snr_db"), room=d.get("room"),
            pitch_semitones=pair("pitch_semitones"), stretch=pair("stretch"), varispeed_semitones=pair("varispeed_semitones"),
        )

    def recorded(self) -> dict:
        def listed(v: tuple[float, float] | None) -> list[float] | None:
            return list(v) if v else None

        return {
            "background": self.background,
            "snr_db": listed(self.snr_db),
            "room": self.room,
            "pitch_semitones": listed(self.pitch_semitones),
            "stretch": listed(self.stretch),
            "varispeed_semitones": listed(self.varispeed_semitones),
        }

    def check(self) -> None:
        if self.background is not None and self.background.startswith("noise:"):
            kind = self.background.partition(":")[2]
            if kind not in TEXTURES:
                raise UserError(f"--background {self.background!r}: unknown noise {kind!r} (noise:pink, noise:brown or noise:white)")
        if self.room is not None and self.room.startswith("simulated:"):
            rt60_range(self.room)

    @property
    def folders(self) -> list[str]:
        """The folders the scene reads (a bed or an impulse-response directory, not noise: or
        simulated:): an output inside one would be read back as beds or rooms by the next build."""
        return [s for s in (self.background, self.room) if s is not None and not s.startswith(("noise:", "simulated:"))]

    @property
    def is_empty(self) -> bool:
        return (self.background is None and self.room is None and self.pitch_semitones is None
                and self.stretch is None and self.varispeed_semitones is None)


def rt60_range(spec: str) -> tuple[float, float]:
    return parse_range(spec.partition(":")[2], "--room simulated:", RT60_RANGE_S, "seconds of RT60")
