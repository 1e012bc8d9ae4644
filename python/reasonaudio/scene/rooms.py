"""Rooms: a folder of measured impulse responses, or a seeded bank of simulated shoebox rooms.

Measured: every audio file libsndfile reads, its FIRST channel (a multi-channel response is a
microphone array or an ambisonic set; its first channel is the omnidirectional/reference one in the
common layouts), resampled once to the benchmark's rate. Simulated (`simulated:LO,HI`, needs
`pip install reasonaudio[scene]`, pyroomacoustics): N_SIMULATED rooms with target RT60s evenly
spaced over [LO, HI], shoebox dimensions and source/microphone positions drawn from (seed, room);
the image-source model with absorption from Sabine's formula, corrected once so that the measured
RT60 of the response meets the target. Every response is then prepared by the core (aligned at
its direct path, cut after a 60 dB decay, unit energy) and its tail_s measured there."""

from __future__ import annotations

import hashlib
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from reasonaudio import _core
from reasonaudio.errors import UserError, require
from reasonaudio.io.cache import cache_dir
from reasonaudio.io.outputs import write_atomic
from reasonaudio.scene.beds import AUDIO_SUFFIXES
from reasonaudio.scene.config import rt60_range

N_SIMULATED = 6


@dataclass
class Room:
    room_id: str
    source: str
    rt60_s: float
    tail_s: float
    audio: np.ndarray  # prepared response, float32
    params: dict = field(default_factory=dict)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(np.ascontiguousarray(self.audio, dtype="<f4").tobytes()).hexdigest()


def _prepared(raw: np.ndarray, where: str) -> np.ndarray:
    try:
        return np.asarray(_core.room_prepare(np.ascontiguousarray(raw, dtype=np.float32)))
    except ValueError as err:
        raise UserError(f"{where}: {err}") from None


def _measured_rt60(h: np.ndarray, sr: int) -> float:
    """T20 extrapolated to 60 dB on the Schroeder curve from -5 to -25 dB (ISO 3382 style)."""
    e = np.cumsum((np.asarray(h, np.float64) ** 2)[::-1])[::-1]
    db = 10 * np.log10(np.maximum(e / e[0], 1e-300))
    i5, i25 = int(np.argmax(db <= -5)), int(np.argmax(db <= -25))
    return 3.0 * (i25 - i5) / sr if i25 > i5 else 3.0 * _core.room_tail_s(h.astype(np.float32), sr)


def _require_simulator():
    return require("pyroomacoustics", "scene", "simulated rooms (build --room simulated:..., detect train --recipe scenes)")


def _simulate(rt60: float, sr: int, rng: np.random.Generator) -> tuple[np.ndarray, dict]:
    pra = _require_simulator()
    dims = np.array([rng.uniform(4.0, 10.0), rng.uniform(3.0, 8.0), rng.uniform(2.5, 4.0)]).round(3)
    src = rng.uniform(0.5, dims - 0.5).round(3)
    mic = rng.uniform(0.5, dims - 0.5).round(3)
    target = rt60
    for _ in range(2):
        absorption, max_order = pra.inverse_sabine(target, dims)
        room = pra.ShoeBox(dims, fs=sr, materials=pra.Material(float(absorption)), max_order=int(max_order))
        room.add_source(src.tolist())
        room.add_microphone(mic.tolist())
        room.compute_rir()
        raw = np.asarray(room.rir[0][0], np.float32)
        h = _prepared(raw, f"simulated room (RT60 {rt60:g} s)")
        got = _measured_rt60(h, sr)
        if abs(got - rt60) < 0.05 * rt60:
            break
        target = max(0.05, target * rt60 / got)  # Sabine misjudges ISM rooms: correct once
    params = {"dims_m": dims.tolist(), "source_m": src.tolist(), "mic_m": mic.tolist(), "absorption": round(float(absorption), 6),
              "max_order": int(max_order), "target_rt60_s": rt60}
    return h, params


def _pyroomacoustics_version() -> str:
    """The simulator's version without importing it (the import alone takes seconds)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pyroomacoustics")
    except PackageNotFoundError:  # importable without metadata (vendored), or the one-line install hint
        _require_simulator()
        return "unknown"


def _cached_simulation(rt60: float, sample_rate: int, seed: int, index: int) -> tuple[np.ndarray, dict]:
    """`_simulate` for room `index`, kept in the user's cache keyed by everything it depends on
    (target RT60, rate, seed, index, the simulator's version): the `scenes` command renders one
    plan in several conditions, and each would otherwise simulate the same rooms again. The
    response is stored as the float32 samples it was, so a cached room is the same bytes."""
    key = {"rt60_s": float(rt60), "sample_rate": int(sample_rate), "seed": int(seed), "room": int(index),
           "n_rooms": N_SIMULATED, "pyroomacoustics": _pyroomacoustics_version(), "recipe": 1}
    digest = hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:32]
    path = cache_dir("rooms") / f"{digest}.npz"
    try:
        with np.load(path, allow_pickle=False) as z:
            if json.loads(str(z["key"])) == key:
                return np.asarray(z["h"], np.float32), json.loads(str(z["params"]))
    except (OSError, ValueError, KeyError):
        pass  # absent or unreadable: simulate and replace it
    rng = np.random.default_rng([seed, 0x5CE7E, 0x500, index])
    h, params = _simulate(rt60, sample_rate, rng)
    buf = io.BytesIO()
    np.savez(buf, h=h, params=json.dumps(params, sort_keys=True), key=json.dumps(key, sort_keys=True))
    try:
        write_atomic(path, buf.getvalue())
    except OSError:
        pass  # a cache that cannot be written (read-only home, full disk) only costs time
    return h, params


def load_rooms(spec: str, sample_rate: int, seed: int) -> list[Room]:
    if spec.startswith("simulated:"):
        lo, hi = rt60_range(spec)
        rooms = []
        for i, rt60 in enumerate(np.linspace(lo, hi, N_SIMULATED) if hi > lo else [lo]):
            h, params = _cached_simulation(float(rt60), sample_rate, seed, i)
            tail = _core.room_tail_s(h, sample_rate)
            rooms.append(Room(f"sim_{i:02d}", f"pyroomacoustics:shoebox:{json.dumps(params, sort_keys=True)}", round(_measured_rt60(h, sample_rate), 4), tail, h, params))
        return rooms
    root = Path(spec)
    if not root.is_dir():
        raise UserError(f"--room {spec!r}: not simulated:RT60_LO,RT60_HI and not a directory")
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in AUDIO_SUFFIXES)
    if not files:
        raise UserError(f"--room {spec}: the directory holds no impulse response ({', '.join(AUDIO_SUFFIXES)})")
    from reasonaudio.io.audio import read_audio

    rooms = []
    for i, path in enumerate(files):
        data, sr = read_audio(path, f"--room {path}")
        raw = np.asarray(_core.resample(np.ascontiguousarray(data[:, 0]), int(sr), sample_rate)) if sr != sample_rate else data[:, 0]
        h = _prepared(raw, f"--room {path}")
        rooms.append(Room(f"ir_{i:04d}", str(path), round(_measured_rt60(h, sample_rate), 4), _core.room_tail_s(h, sample_rate), h))
    return rooms
