"""Strongly labelled training mixtures, generated in memory by the project's own planner and mixer.

Every batch is planned by `_core.plan_corpus` (the benchmark's own clip distribution: 2-8 events,
sequential and overlapping clips, loops, trims and gains) and rendered by `_core.render_clip`, so
the labels are exact and the supply is unlimited. Seeds are `TRAIN_SEED_BASE + k` (k < 2^20) for
training and `VALID_SEED` for the held-out check, far from the small seeds benchmarks use, so no
training clip is planned from a benchmark's random stream.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from reasonaudio import _core

TRAIN_SEED_BASE = 2**40
VALID_SEED = 2**40 + 2**20


def library_hash(library) -> str:
    """sha256 over the vocabulary and the atom audio: the training cache key of a library."""
    h = hashlib.sha256()
    h.update(json.dumps([library.labels, library.phrases, library.sample_rate]).encode())
    audio, offsets = library.flat()
    h.update(np.ascontiguousarray(offsets, dtype="<u8").tobytes())
    h.update(np.ascontiguousarray(audio, dtype="<f4").tobytes())
    return h.hexdigest()


class MixtureSource:
    """Batches of (waveforms [B, N], frame targets [B, C, J]) for one library at the feature rate."""

    def __init__(self, library, hop_out: int, overlap_fraction: float = 0.4, max_clip_s: float = 30.0, plan: dict | None = None):
        self.library = library
        self.audio, self.offsets = library.flat()
        self.natives = np.diff(self.offsets.astype(np.int64))
        self.sr = library.sample_rate
        self.hop_out = hop_out  # samples per output frame
        self.overlap_fraction = overlap_fraction
        params = {**json.loads(_core.plan_params_default()), **(plan or {}), "sample_rate": self.sr, "max_clip_s": max_clip_s}
        # a label occurs at most once per clip, so a small library caps the events per clip
        params["max_events"] = min(params["max_events"], len(library))
        params["min_events"] = min(params["min_events"], params["max_events"])
        self.params_json, _ = _core.plan_params_check(json.dumps(params), len(library))

    def plans(self, n: int, seed: int) -> dict[str, np.ndarray]:
        return _core.plan_corpus(self.natives, n, self.overlap_fraction, seed, self.params_json, 1)

    def render(self, cols: dict[str, np.ndarray], i: int) -> np.ndarray:
        ptr = cols["clip_event_ptr"].astype(np.int64)
        s, e = ptr[i], ptr[i + 1]
        return _core.render_clip(
            self.audio,
            self.offsets,
            cols["ev_atom"][s:e].astype(np.uint32),
            cols["ev_onset"][s:e].astype(np.int64),
            cols["ev_length"][s:e].astype(np.int64),
            cols["ev_gain_db"][s:e].astype(np.float32),
            int(cols["clip_length"][i]),
            self.sr,
        )

    def batch(self, n: int, seed: int, n_frames, crop_s: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """n clips planned from `seed`, zero-padded (digital silence, as between events) to the longest.

        Output frame j stands for time j * hop_out; it is positive for a label when that instant
        lies inside one of the label's events. `crop_s` cuts each clip to a seeded window of that
        length starting on an output frame (a third of the padding and compute of whole clips, with
        the same sounds per second; the cut events are still labelled exactly)."""
        cols = self.plans(n, seed)
        lengths = cols["clip_length"].astype(np.int64)
        window = None if crop_s is None else int(round(crop_s * self.sr / self.hop_out)) * self.hop_out
        starts = np.zeros(n, np.int64)
        if window is not None:
            rng = np.random.default_rng([seed, 0xC809])
            room = np.maximum(0, lengths - window) // self.hop_out
            starts = (rng.integers(0, room + 1) * self.hop_out).astype(np.int64)
            lengths = np.minimum(lengths, window)
        n_max = int(lengths.max())
        j_max = n_frames(n_max)
        waves = np.zeros((n, n_max), np.float32)
        targets = np.zeros((n, len(self.library), j_max), np.float32)
        ptr = cols["clip_event_ptr"].astype(np.int64)
        centers = np.arange(j_max, dtype=np.int64) * self.hop_out
        for i in range(n):
            s0 = int(starts[i])
            waves[i, : lengths[i]] = self.render(cols, i)[s0 : s0 + lengths[i]]
            for k in range(ptr[i], ptr[i + 1]):
                on = int(cols["ev_onset"][k]) - s0
                off = on + int(cols["ev_length"][k])
                lo, hi = np.searchsorted(centers, [max(on, 0), min(off, int(lengths[i]))], side="left")
                targets[i, int(cols["ev_atom"][k]), lo:hi] = 1.0
        return waves, targets
