"""A small library of real-looking recordings: eight procedural sounds of distinct families, each
recorded twice (procedural noise seeds 0 and 1), so that a label has a second, unheard recording."""

from __future__ import annotations

import numpy as np

from reasonaudio import _core
from reasonaudio.atoms import AtomLibrary

FAMILIES = ("bells", "sirens", "rain", "drums", "whistles", "engines", "chirps", "alarms")
SR = 16000


def two_recordings_per_label() -> AtomLibrary:
    """One label of each of FAMILIES; atoms 0-7 are seed 0's recordings, 8-15 seed 1's."""
    lab0, phr0, fam0, _, _ = _core.procedural_atoms(SR, 0)
    pick = [next(i for i, f in enumerate(fam0) if f == fam) for fam in FAMILIES]
    ids, labels, phrases, families, chunks = [], [], [], [], []
    for seed in (0, 1):
        _, _, _, audio, offsets = _core.procedural_atoms(SR, seed)
        for i in pick:
            ids.append(f"{lab0[i]}_s{seed}")
            labels.append(lab0[i])
            phrases.append(phr0[i])
            families.append(fam0[i])
            chunks.append(np.asarray(audio[int(offsets[i]) : int(offsets[i + 1])], np.float32))
    return AtomLibrary(atom_ids=ids, labels=labels, phrases=phrases, families=families, sources=["procedural"] * len(ids),
                       licenses=["CC0-1.0"] * len(ids), sample_rate=SR, audio_flat=np.concatenate(chunks),
                       offsets=np.concatenate([[0], np.cumsum([len(c) for c in chunks])]).astype(np.uint64))
