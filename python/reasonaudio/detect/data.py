"""Strongly labelled training mixtures, generated in memory by the project's own planner and mixer.

Every batch is planned by `_core.plan_corpus` (the benchmark's own clip distribution: 2-8 events,
sequential and overlapping clips, loops, trims and gains) and rendered by `_core.render_clip`, so
the labels are exact and the supply is unlimited. Seeds are `TRAIN_SEED_BASE + k` (k < 2^20) for
training and `VALID_SEED` for the held-out checks, far from the small seeds benchmarks use, so no
training clip is planned from a benchmark's random stream.

With augmentation (`detect.augment`), a training batch is planned over a *pool* drawn for that
step: one exemplar of each of up to `POOL` labels, each rendered as a fresh variant (EQ, speed,
stretch, level); the mixture is then put in a room and over a bed. Without it (validation) the
whole library is planned as it is.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np

from reasonaudio import _core
from reasonaudio.detect.augment import AugmentConfig, SceneBank, scene, variant

TRAIN_SEED_BASE = 2**40
VALID_SEED = 2**40 + 2**20
POOL = 32  # labels per augmented step (a batch of 16 clips holds ~80 events); their variants cost ~0.2 s of CPU


def library_hash(library) -> str:
    """sha256 over the vocabulary and the atom audio: the training cache key of a library."""
    h = hashlib.sha256()
    h.update(json.dumps([library.labels, library.phrases, library.sample_rate]).encode())
    audio, offsets = library.flat()
    h.update(np.ascontiguousarray(offsets, dtype="<u8").tobytes())
    h.update(np.ascontiguousarray(audio, dtype="<f4").tobytes())
    return h.hexdigest()


def _flat(chunks: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.concatenate([[0], np.cumsum([len(c) for c in chunks])]).astype(np.uint64)
    return np.concatenate(chunks).astype(np.float32), offsets


class MixtureSource:
    """Batches of (waveforms [B, N], frame targets [B, C, J]) for one library at the feature rate.

    `labels` is the detector's vocabulary (default: the library's labels in order); a library of
    held-out recordings passes the training vocabulary so that its targets line up."""

    def __init__(self, library, hop_out: int, overlap_fraction: float = 0.4, max_clip_s: float = 30.0,
                 plan: dict | None = None, labels: list[str] | None = None):
        self.library = library
        # contract v2: several exemplars may share a label; the detector predicts labels
        self.labels = list(labels) if labels is not None else list(dict.fromkeys(library.labels))
        index = {label: k for k, label in enumerate(self.labels)}
        self.label_of_atom = np.array([index[label] for label in library.labels], dtype=np.int64)
        self.audio, self.offsets = library.flat()
        self.natives = np.diff(self.offsets.astype(np.int64))
        self.sr = library.sample_rate
        self.hop_out = hop_out  # samples per output frame
        self.overlap_fraction = overlap_fraction
        self.max_clip_s = max_clip_s
        self.plan = plan or {}
        self.params_json = self._params(len(set(library.labels)), len(library), {})
        self._scene_bank: SceneBank | None = None
        self.exemplars: dict[int, list[int]] = {}
        for i, c in enumerate(self.label_of_atom):
            self.exemplars.setdefault(int(c), []).append(i)

    def _params(self, n_labels: int, n_atoms: int, extra: dict) -> str:
        params = {**json.loads(_core.plan_params_default()), **self.plan, **extra, "sample_rate": self.sr, "max_clip_s": self.max_clip_s}
        # a label occurs at most once per clip, so a small library caps the events per clip
        params["max_events"] = min(params["max_events"], n_labels)
        params["min_events"] = min(params["min_events"], params["max_events"])
        return _core.plan_params_check(json.dumps(params), n_atoms)[0]

    def plans(self, n: int, seed: int) -> dict[str, np.ndarray]:
        return _core.plan_corpus(self.natives, n, self.overlap_fraction, seed, self.params_json, 1)

    def render(self, cols: dict[str, np.ndarray], i: int, audio=None, offsets=None) -> np.ndarray:
        ptr = cols["clip_event_ptr"].astype(np.int64)
        s, e = ptr[i], ptr[i + 1]
        events = _core.EventTable(ev_atom=cols["ev_atom"][s:e].astype(np.uint32), ev_onset=cols["ev_onset"][s:e].astype(np.int64),
                                  ev_length=cols["ev_length"][s:e].astype(np.int64),
                                  ev_gain_db=cols["ev_gain_db"][s:e].astype(np.float32),
                                  clip_length=cols["clip_length"][i:i + 1].astype(np.int64))
        atoms = _core.AudioBank(self.audio if audio is None else audio, self.offsets if offsets is None else offsets)
        return _core.render_clip(_core.Corpus(atoms, events), _core.Mixer(self.sr))["audio"]

    def _pool(self, seed: int, augment: AugmentConfig):
        """(flat audio, offsets, label per pool atom, plan params) of this step's variants."""
        rng = np.random.default_rng([seed, 0xA06])
        present = sorted(self.exemplars)
        chosen = rng.permutation(present)[: min(POOL, len(present))]
        atoms = [int(rng.choice(self.exemplars[int(c)])) for c in chosen]
        chunks = [variant(self.audio[int(self.offsets[a]) : int(self.offsets[a + 1])], self.sr, augment, rng) for a in atoms]
        audio, offsets = _flat(chunks)
        params = self._params(len(atoms), len(atoms), {"overlap_probability": augment.overlap_probability})
        return audio, offsets, self.label_of_atom[atoms], params

    def batch(self, n: int, seed: int, n_frames, crop_s: float | None = None,
              augment: AugmentConfig | None = None) -> tuple[np.ndarray, np.ndarray]:
        """n clips planned from `seed`, zero-padded (digital silence, as between events) to the longest.

        Output frame j stands for time j * hop_out; it is positive for a label when that instant
        lies inside one of the label's events. `crop_s` cuts each clip to a seeded window of that
        length starting on an output frame (a third of the padding and compute of whole clips, with
        the same sounds per second; the cut events are still labelled exactly)."""
        if augment is not None and augment.enabled:
            audio, offsets, label_of, params = self._pool(seed, augment)
            natives = np.diff(offsets.astype(np.int64))
            cols = _core.plan_corpus(natives, n, augment.overlap_fraction, seed, params, 1)
        else:
            audio, offsets, label_of = self.audio, self.offsets, self.label_of_atom
            cols = self.plans(n, seed)
        lengths = cols["clip_length"].astype(np.int64)
        window = None if crop_s is None else int(round(crop_s * self.sr / self.hop_out)) * self.hop_out
        starts = np.zeros(n, np.int64)
        if window is not None:
            rng = np.random.default_rng([seed, 0xC809])
            room = np.maximum(0, lengths - window) // self.hop_out
            starts = (rng.integers(0, room + 1) * self.hop_out).astype(np.int64)
            lengths = np.minimum(lengths, window)
        scene_rng = np.random.default_rng([seed, 0x5CE])
        core_scene = augment is not None and augment.enabled and augment.renderer == "scene"
        if core_scene and (self._scene_bank is None or self._scene_bank.cfg != augment):
            self._scene_bank = SceneBank(self.sr, augment)
        n_max = int(lengths.max())
        j_max = n_frames(n_max)
        waves = np.zeros((n, n_max), np.float32)
        targets = np.zeros((n, len(self.labels), j_max), np.float32)
        ptr = cols["clip_event_ptr"].astype(np.int64)
        centers = np.arange(j_max, dtype=np.int64) * self.hop_out
        for i in range(n):
            s0 = int(starts[i])
            if core_scene:  # pitch, room and bed by the core's scene renderer, then the window
                clip = self._scene_bank.render(cols, i, audio, offsets, scene_rng)[s0 : s0 + lengths[i]]
            else:
                clip = self.render(cols, i, audio, offsets)[s0 : s0 + lengths[i]]
            if augment is not None and augment.enabled and not core_scene:  # room and bed on the window only (cost)
                active = np.zeros(len(clip), bool)
                for k in range(ptr[i], ptr[i + 1]):
                    on = int(cols["ev_onset"][k]) - s0
                    active[max(0, on) : max(0, on + int(cols["ev_length"][k]))] = True
                clip = scene(clip, active, self.sr, augment, scene_rng)
            waves[i, : lengths[i]] = clip
            for k in range(ptr[i], ptr[i + 1]):
                on = int(cols["ev_onset"][k]) - s0
                off = on + int(cols["ev_length"][k])
                lo, hi = np.searchsorted(centers, [max(on, 0), min(off, int(lengths[i]))], side="left")
                targets[i, label_of[int(cols["ev_atom"][k])], lo:hi] = 1.0
        return waves, targets

    def events(self, n: int, seed: int) -> tuple[list[list[tuple[int, float, float]]], np.ndarray]:
        """True (label, onset_s, offset_s) per clip of the un-augmented batch `seed`, and the clip
        lengths in samples (event F1 of the validation mixtures)."""
        cols = self.plans(n, seed)
        ptr = cols["clip_event_ptr"].astype(np.int64)
        out = []
        for i in range(n):
            evs = []
            for k in range(ptr[i], ptr[i + 1]):
                on = int(cols["ev_onset"][k]) / self.sr
                evs.append((int(self.label_of_atom[int(cols["ev_atom"][k])]), on, on + int(cols["ev_length"][k]) / self.sr))
            out.append(evs)
        return out, cols["clip_length"].astype(np.int64)
