"""Training-time augmentation: the same sound recorded differently, so the tagger learns the sound.

Trained on mixtures of the library's recordings as they are, a tagger learns the recordings. With
augmentation, each training step draws a fresh *variant* of every recording it uses:

- per recording: a random level (on top of the planner's event gains), an EQ of one to three
  random biquads (low shelf, high shelf, peaking; RBJ cookbook), a speed change (resampling:
  pitch and tempo together) and a time stretch (phase vocoder: tempo without pitch);
- per mixture: a noise bed (white-to-brown spectral tilt, slowly modulated) at a random SNR to the
  mixture's events, and a room (an exponentially decaying noise impulse response with a random
  RT60, mixed wet/dry);
- overlap-heavy plans: a larger share of overlap clips and a higher chance that an event lies
  over the previous one than the benchmark's defaults.

The `python` renderer (the aiSFX head's training mixtures) adds the room and bed below in Python.
With `renderer="scene"` (the `scenes` recipe's `augment = "scene"`), the mixture is rendered by the core's scene renderer (`_core.render_clip` in a `_core.Scene`, the
renderer of `reasonaudio build --background/--snr/--room/--varispeed`) instead of the clean mixer plus
the Python room and bed: per-event pitch (the core's varispeed, extents unchanged), simulated
shoebox rooms (`reasonaudio.scene.rooms`, pyroomacoustics, convolved per event by FFT in the core)
and a bed (the core's white/pink/brown textures, or the drifting tilted noise below) whose gain
makes the *tightest* event sit exactly at the drawn SNR over its dry extent, as a benchmark's
`--snr` does. The rooms and textures are drawn from training seeds (`SCENE_SEED`), never the
seeds a benchmark's scene uses (its build seed), so a benchmark's rooms and bed realisations are
unheard.

All draws come from numpy Generators seeded by (training seed, step), so a run is reproducible;
the settings are stored in the model file (`training.config.augment`). Labels stay those of the
dry events: reverberation tails and beds do not move an event's extent.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from reasonaudio import _core
from reasonaudio.errors import require

RMS_DBFS = -20.0  # the level atoms are normalised to (atoms.finish_atom)


@dataclass(frozen=True)
class AugmentConfig:
    enabled: bool = True
    level_db: float = 6.0  # +- uniform per recording variant
    eq_probability: float = 0.8
    eq_gain_db: float = 12.0  # +- per filter
    speed_probability: float = 0.5
    speed_range: tuple[float, float] = (0.84, 1.19)  # +- 3 semitones
    stretch_probability: float = 0.3
    stretch_range: tuple[float, float] = (0.8, 1.25)
    bed_probability: float = 0.5
    bed_snr_db: tuple[float, float] = (0.0, 30.0)
    room_probability: float = 0.4
    rt60_s: tuple[float, float] = (0.15, 1.0)
    wet_range: tuple[float, float] = (0.1, 0.6)
    overlap_fraction: float = 0.7  # share of overlap clips (benchmark default 0.4)
    overlap_probability: float = 0.8  # chance an overlap clip's event lies over the previous (planner default 0.5)
    # "python": the clean mixer, then scene() below; "scene": the core's scene renderer (SceneBank)
    renderer: str = "python"
    pitch_probability: float = 0.0  # scene renderer: chance a clip's events are each pitch-shifted
    pitch_semitones: tuple[float, float] = (-3.0, 3.0)
    bed_kinds: tuple[str, ...] = ("white", "pink", "brown", "drift")
    room_rt60_s: tuple[float, float] = (0.2, 0.9)  # scene renderer: simulated rooms (RT60 targets)
    n_rooms: int = 12  # scene renderer: rooms in the bank (pyroomacoustics, drawn once per run)

    def to_dict(self) -> dict:
        d = asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in d.items()}

    @classmethod
    def from_dict(cls, d: dict) -> "AugmentConfig":
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in d.items()})

    @classmethod
    def core_scene(cls) -> "AugmentConfig":
        """`augment = "scene"` in a recipe: the recording variants without resampling (pitch is the scene
        renderer's, per event), and every clip through the core's scene renderer: a bed in 85 %
        of the clips at -5..30 dB SNR (the tightest event), a simulated room in 60 %."""
        return cls(speed_probability=0.0, renderer="scene", pitch_probability=0.5, bed_probability=0.85,
                   bed_snr_db=(-5.0, 30.0), room_probability=0.6)

    @classmethod
    def off(cls) -> "AugmentConfig":
        return cls(enabled=False, overlap_fraction=0.4, overlap_probability=0.5)


def _biquad(kind: str, f0: float, gain_db: float, q: float, sr: int) -> tuple[np.ndarray, np.ndarray]:
    """RBJ audio-EQ-cookbook coefficients (b, a) of a peaking or shelving filter."""
    a_lin = 10 ** (gain_db / 40)
    w0 = 2 * np.pi * f0 / sr
    cw, sw = np.cos(w0), np.sin(w0)
    alpha = sw / (2 * q)
    if kind == "peak":
        b = [1 + alpha * a_lin, -2 * cw, 1 - alpha * a_lin]
        a = [1 + alpha / a_lin, -2 * cw, 1 - alpha / a_lin]
    else:
        sa = 2 * np.sqrt(a_lin) * alpha
        if kind == "low":
            b = [a_lin * ((a_lin + 1) - (a_lin - 1) * cw + sa), 2 * a_lin * ((a_lin - 1) - (a_lin + 1) * cw),
                 a_lin * ((a_lin + 1) - (a_lin - 1) * cw - sa)]
            a = [(a_lin + 1) + (a_lin - 1) * cw + sa, -2 * ((a_lin - 1) + (a_lin + 1) * cw), (a_lin + 1) + (a_lin - 1) * cw - sa]
        else:
            b = [a_lin * ((a_lin + 1) + (a_lin - 1) * cw + sa), -2 * a_lin * ((a_lin - 1) + (a_lin + 1) * cw),
                 a_lin * ((a_lin + 1) + (a_lin - 1) * cw - sa)]
            a = [(a_lin + 1) - (a_lin - 1) * cw + sa, 2 * ((a_lin - 1) - (a_lin + 1) * cw), (a_lin + 1) - (a_lin - 1) * cw - sa]
    b, a = np.asarray(b), np.asarray(a)
    return b / a[0], a / a[0]


def random_eq(x: np.ndarray, sr: int, rng: np.random.Generator, gain_db: float) -> np.ndarray:
    lfilter = require("scipy.signal", "detect", "the detector's augmentation (SciPy)").lfilter

    y = x.astype(np.float64)
    for _ in range(int(rng.integers(1, 4))):
        kind = ("low", "high", "peak")[int(rng.integers(0, 3))]
        lo, hi = {"low": (80.0, 800.0), "high": (1500.0, 0.4 * sr), "peak": (150.0, 0.4 * sr)}[kind]
        f0 = float(np.exp(rng.uniform(np.log(lo), np.log(hi))))
        q = float(rng.uniform(0.5, 2.0)) if kind == "peak" else 0.707
        b, a = _biquad(kind, f0, float(rng.uniform(-gain_db, gain_db)), q, sr)
        y = lfilter(b, a, y)
    return y.astype(np.float32)


def speed(x: np.ndarray, sr: int, factor: float) -> np.ndarray:
    """Play `factor` times faster (pitch up by factor, length / factor) by resampling."""
    target = max(4000, int(round(sr / factor)))
    return _core.resample(np.ascontiguousarray(x, np.float32), sr, target)


def stretch(x: np.ndarray, rate: float, n_fft: int = 512, hop: int = 128) -> np.ndarray:
    """Phase-vocoder time stretch: `rate` > 1 shortens, the pitch stays."""
    if len(x) < 2 * n_fft:
        return x
    win = np.hanning(n_fft + 1)[:-1]
    n = 1 + (len(x) - n_fft) // hop
    frames = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), n_fft)[::hop][:n] * win
    spec = np.fft.rfft(frames, axis=1)
    steps = np.arange(0, n - 1, rate)
    phase_adv = 2 * np.pi * hop * np.arange(n_fft // 2 + 1) / n_fft
    phase = np.angle(spec[0])
    out = np.zeros((len(steps), spec.shape[1]), np.complex128)
    for k, t in enumerate(steps):
        i = int(t)
        frac = t - i
        mag = (1 - frac) * np.abs(spec[i]) + frac * np.abs(spec[i + 1])
        out[k] = mag * np.exp(1j * phase)
        dphi = np.angle(spec[i + 1]) - np.angle(spec[i]) - phase_adv
        dphi -= 2 * np.pi * np.round(dphi / (2 * np.pi))
        phase = phase + phase_adv + dphi
    frames_out = np.fft.irfft(out, n=n_fft, axis=1) * win
    y = np.zeros(hop * (len(steps) - 1) + n_fft)
    norm = np.zeros_like(y)
    for k in range(len(steps)):
        y[k * hop : k * hop + n_fft] += frames_out[k]
        norm[k * hop : k * hop + n_fft] += win**2
    return (y / np.maximum(norm, 1e-3)).astype(np.float32)


def _rms_db(x: np.ndarray) -> float:
    return 10 * np.log10(float(np.mean(x.astype(np.float64) ** 2)) + 1e-12)


def variant(x: np.ndarray, sr: int, cfg: AugmentConfig, rng: np.random.Generator) -> np.ndarray:
    """One random rendition of a recording (EQ, speed, stretch, level), renormalised to the atoms'
    RMS plus the level draw, with 5-ms edge fades so that a loop or trim does not click."""
    y = x
    if rng.random() < cfg.eq_probability:
        y = random_eq(y, sr, rng, cfg.eq_gain_db)
    if rng.random() < cfg.speed_probability:
        y = speed(y, sr, float(np.exp(rng.uniform(*np.log(cfg.speed_range)))))
    if rng.random() < cfg.stretch_probability:
        y = stretch(y, float(np.exp(rng.uniform(*np.log(cfg.stretch_range)))))
    if len(y) < 16:
        y = x
    gain = RMS_DBFS + float(rng.uniform(-cfg.level_db, cfg.level_db)) - _rms_db(y)
    y = (y * 10 ** (gain / 20)).astype(np.float32)
    fade = min(len(y) // 4, int(0.005 * sr))
    if fade > 1:
        ramp = np.linspace(0.0, 1.0, fade, dtype=np.float32)
        y[:fade] *= ramp
        y[-fade:] *= ramp[::-1]
    return y


def noise_bed(n: int, sr: int, rng: np.random.Generator) -> np.ndarray:
    """Unit-RMS noise with a random spectral tilt (white .. brown: a one-pole low-pass of random
    pole, mixed with white) and a slow random level drift. An IIR, not an FFT: clip lengths are
    arbitrary and an FFT of a prime length took 0.15 s (measured)."""
    lfilter = require("scipy.signal", "detect", "the detector's augmentation (SciPy)").lfilter

    white = rng.standard_normal(n)
    pole = float(rng.uniform(0.0, 0.995))
    tilted = lfilter([1.0 - pole], [1.0, -pole], white)
    tilted /= np.sqrt(np.mean(tilted**2)) + 1e-12
    mix = float(rng.uniform(0.0, 1.0))
    bed = mix * white + (1 - mix) * tilted
    drift = np.interp(np.arange(n), np.linspace(0, n, 6), rng.uniform(0.5, 1.0, 6))
    bed *= drift
    return (bed / (np.sqrt(np.mean(bed**2)) + 1e-12)).astype(np.float32)


def room_ir(sr: int, rng: np.random.Generator, cfg: AugmentConfig) -> np.ndarray:
    rt60 = float(rng.uniform(*cfg.rt60_s))
    n = int(rt60 * sr)
    t = np.arange(n) / sr
    ir = rng.standard_normal(n) * np.exp(-6.9 * t / rt60)  # -60 dB at rt60
    ir[0] = 0.0
    ir /= np.sqrt(np.sum(ir**2)) + 1e-12
    return ir.astype(np.float32)


def scene(mix: np.ndarray, active: np.ndarray, sr: int, cfg: AugmentConfig, rng: np.random.Generator) -> np.ndarray:
    """A mixture placed in a room and over a bed. `active`: samples inside any event (the SNR is
    measured there, as a listener hears the events over the bed)."""
    fftconvolve = require("scipy.signal", "detect", "the detector's augmentation (SciPy)").fftconvolve

    y = mix
    if rng.random() < cfg.room_probability:
        wet = float(rng.uniform(*cfg.wet_range))
        rev = fftconvolve(y, room_ir(sr, rng, cfg))[: len(y)]
        y = ((1 - wet) * y + wet * rev).astype(np.float32)
    if rng.random() < cfg.bed_probability and active.any():
        snr = float(rng.uniform(*cfg.bed_snr_db))
        level = _rms_db(y[active]) - snr
        y = y + noise_bed(len(y), sr, rng) * np.float32(10 ** (level / 20))
    return y.astype(np.float32)


def _one_source(x: np.ndarray) -> _core.AudioBank:
    """A bank holding the single source `x` (a bed or a room)."""
    return _core.AudioBank(x, np.array([0, x.size], np.uint64))


SCENE_SEED = 2**40 + 0x5CE  # rooms and bed textures of training scenes (benchmarks use their build seed)
BED_S = 60.0


class SceneBank:
    """The beds and rooms training scenes draw from, made once per run from SCENE_SEED: one
    BED_S-second texture per kind (core noise, or `noise_bed`'s drifting tilt), at the core's
    TEXTURE_RMS, and `n_rooms` simulated rooms with RT60 targets spread over `room_rt60_s`
    (`reasonaudio.scene.rooms`, prepared by the core: aligned at the direct path, unit energy)."""

    def __init__(self, sr: int, cfg: AugmentConfig):
        self.sr, self.cfg = sr, cfg
        n = int(BED_S * sr)
        self.beds = []
        for k, kind in enumerate(cfg.bed_kinds):
            if kind == "drift":
                bed = noise_bed(n, sr, np.random.default_rng([SCENE_SEED, k])) * np.float32(_core.TEXTURE_RMS)
            else:
                bed = np.asarray(_core.scene_noise(kind, n, SCENE_SEED, 0x7EA1 + k))
            self.beds.append(np.ascontiguousarray(bed, dtype=np.float32))
        self.rooms: list[np.ndarray] = []
        if cfg.room_probability > 0 and cfg.n_rooms > 0:
            from reasonaudio.scene.rooms import N_SIMULATED, load_rooms

            calls = -(-cfg.n_rooms // N_SIMULATED)  # load_rooms simulates N_SIMULATED rooms per range and seed
            edges = np.linspace(cfg.room_rt60_s[0], cfg.room_rt60_s[1], calls + 1)
            for k in range(calls):
                for room in load_rooms(f"simulated:{edges[k]:.3f},{edges[k + 1]:.3f}", sr, SCENE_SEED + k):
                    self.rooms.append(np.ascontiguousarray(room.audio, dtype=np.float32))
            self.rooms = self.rooms[: cfg.n_rooms]

    def render(self, cols: dict, i: int, audio: np.ndarray, offsets: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Clip i of a plan in a random scene (pitch, room, bed), through `_core.render_clip`."""
        cfg = self.cfg
        ptr = cols["clip_event_ptr"].astype(np.int64)
        s, e = int(ptr[i]), int(ptr[i + 1])
        scene: dict = {}
        if rng.random() < cfg.pitch_probability:
            semis = rng.uniform(*cfg.pitch_semitones, e - s)
            scene["ev_speed"] = np.array([_core.speed_for_semitones(float(x)) for x in semis], np.uint32)
        if self.rooms and rng.random() < cfg.room_probability:
            room = self.rooms[int(rng.integers(len(self.rooms)))]
            scene["rooms"] = _core.Rooms(_one_source(room), clip_room=np.zeros(1, np.int32))
        if self.beds and rng.random() < cfg.bed_probability:
            bed = self.beds[int(rng.integers(len(self.beds)))]
            start, snr = int(rng.integers(len(bed))), float(rng.uniform(*cfg.bed_snr_db))
            scene["beds"] = _core.Beds(_one_source(bed), clip_bed=np.zeros(1, np.int32), clip_bed_start=np.array([start], np.int64),
                                       clip_snr_db=np.array([snr], np.float32))
        events = _core.EventTable(ev_atom=cols["ev_atom"][s:e].astype(np.uint32), ev_onset=cols["ev_onset"][s:e].astype(np.int64),
                                  ev_length=cols["ev_length"][s:e].astype(np.int64),
                                  ev_gain_db=cols["ev_gain_db"][s:e].astype(np.float32),
                                  clip_length=cols["clip_length"][i:i + 1].astype(np.int64))
        out = _core.render_clip(_core.Corpus(_core.AudioBank(audio, offsets), events, _core.Scene(**scene)), _core.Mixer(self.sr))
        return np.asarray(out["audio"], dtype=np.float32)
