"""Per-clip and per-event scene draws. Clip i's bed, bed start, SNR and room come from
numpy.random.default_rng([seed, 0x5CE7E, stream, i]), one stream per feature, so a clip's bed is
the same whether or not a room is used (one plan, many conditions) and nothing depends on threads,
shards or other clips. SNRs are rounded to 0.1 dB; varispeed draws to the core's speed grid; pitch
shifts to whole cents and stretches to 1/STRETCH_DEN."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reasonaudio import _core

# _VARISPEED keeps the stream of the varispeed that --pitch meant before independent pitch shift.
_BED, _ROOM, _VARISPEED, _PITCH, _STRETCH = 1, 2, 3, 4, 5


@dataclass
class SceneDraws:
    clip_bed: np.ndarray  # int32, -1 none
    clip_bed_start: np.ndarray  # int64
    clip_snr_db: np.ndarray  # float32 (NaN without bed)
    clip_room: np.ndarray  # int32, -1 none
    ev_speed: np.ndarray  # uint32 over SPEED_DEN (empty: unchanged)
    ev_pitch_cents: np.ndarray  # int32 (empty: unchanged)
    ev_stretch: np.ndarray  # uint32 over STRETCH_DEN (empty: unchanged)

    def scene(self, beds: _core.AudioBank, rooms: _core.AudioBank) -> _core.Scene:
        """These draws as the core's scene, over the corpus's bed and room banks."""
        return _core.Scene(
            beds=_core.Beds(beds, clip_bed=self.clip_bed, clip_bed_start=self.clip_bed_start, clip_snr_db=self.clip_snr_db),
            rooms=_core.Rooms(rooms, clip_room=self.clip_room),
            ev_speed=self.ev_speed, ev_pitch_cents=self.ev_pitch_cents, ev_stretch=self.ev_stretch,
        )

    def slice(self, lo: int, hi: int, e0: int, e1: int) -> SceneDraws:
        def ev(x: np.ndarray) -> np.ndarray:
            return x[e0:e1] if x.size else x

        return SceneDraws(self.clip_bed[lo:hi], self.clip_bed_start[lo:hi], self.clip_snr_db[lo:hi], self.clip_room[lo:hi],
                          ev(self.ev_speed), ev(self.ev_pitch_cents), ev(self.ev_stretch))


def draw(seed: int, clip_event_ptr: np.ndarray, bed_lengths: list[int], snr_db: tuple[float, float] | None,
         n_rooms: int, varispeed: tuple[float, float] | None, pitch: tuple[float, float] | None = None,
         stretch: tuple[float, float] | None = None) -> SceneDraws:
    n = len(clip_event_ptr) - 1
    bed = np.full(n, -1, np.int32)
    start = np.zeros(n, np.int64)
    snr = np.full(n, np.nan, np.float32)
    room = np.full(n, -1, np.int32)
    ptr = np.asarray(clip_event_ptr, np.int64)
    n_ev = int(ptr[-1])
    speed = np.full(n_ev, _core.SPEED_DEN, np.uint32) if varispeed else np.zeros(0, np.uint32)
    cents = np.zeros(n_ev if pitch else 0, np.int32)
    factor = np.full(n_ev if stretch else 0, _core.STRETCH_DEN, np.uint32)
    for i in range(n):
        if bed_lengths:
            r = np.random.default_rng([seed, 0x5CE7E, _BED, i])
            b = int(r.integers(len(bed_lengths)))
            bed[i], start[i] = b, int(r.integers(bed_lengths[b]))
            lo, hi = snr_db  # type: ignore[misc]
            snr[i] = lo if lo == hi else round(float(r.uniform(lo, hi)), 1)
        if n_rooms:
            room[i] = int(np.random.default_rng([seed, 0x5CE7E, _ROOM, i]).integers(n_rooms))
        k = int(ptr[i + 1] - ptr[i])
        if varispeed:
            semis = np.random.default_rng([seed, 0x5CE7E, _VARISPEED, i]).uniform(varispeed[0], varispeed[1], k)
            speed[ptr[i]:ptr[i + 1]] = [_core.speed_for_semitones(float(s)) for s in semis]
        if pitch:
            semis = np.random.default_rng([seed, 0x5CE7E, _PITCH, i]).uniform(pitch[0], pitch[1], k)
            cents[ptr[i]:ptr[i + 1]] = np.rint(semis * 100.0).astype(np.int32)
        if stretch:
            f = np.random.default_rng([seed, 0x5CE7E, _STRETCH, i]).uniform(stretch[0], stretch[1], k)
            factor[ptr[i]:ptr[i + 1]] = np.rint(f * _core.STRETCH_DEN).astype(np.uint32)
    return SceneDraws(bed, start, snr, room, speed, cents, factor)
