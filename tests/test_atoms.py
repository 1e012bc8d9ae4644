"""The procedural atom library: shape, loudness, distinctness, save/load round trip."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reasonaudio import _core
from reasonaudio.atoms import AtomLibrary, contact_sheet, log_mel
from reasonaudio.errors import UserError

SR = 16000


@pytest.fixture(scope="module")
def lib() -> AtomLibrary:
    return AtomLibrary.procedural(SR)


def summary_features(x: np.ndarray, sr: int) -> np.ndarray:
    """Gain-invariant log-mel summary of one atom.

    32 mel bands: mean level per band relative to the overall level, spread over time per band,
    the temporal-modulation spectrum (0.5-32 Hz, six octave bands) of four coarse bands' envelopes,
    and the slope of the spectral centroid over the atom (rising vs falling).
    """
    m = log_mel(x, sr, n_mels=32)
    m = np.maximum(m, m.max() - 80.0)
    mean = m.mean(axis=1)
    coarse = m.reshape(4, 8, -1).mean(axis=1)
    env = coarse - coarse.mean(axis=1, keepdims=True)
    spec = np.abs(np.fft.rfft(env * np.hanning(env.shape[1]), axis=1)) / env.shape[1]
    freqs = np.fft.rfftfreq(env.shape[1], d=0.010)
    edges = [0.5, 1, 2, 4, 8, 16, 32]
    mod = np.stack([spec[:, (freqs >= a) & (freqs < b)].mean(axis=1) for a, b in zip(edges[:-1], edges[1:])], axis=1)
    w = 10 ** ((m - m.max()) / 10)
    centroid = (w * np.arange(32)[:, None]).sum(0) / w.sum(0)
    slope = float(np.polyfit(np.linspace(-1, 1, len(centroid)), centroid, 1)[0])
    return np.concatenate([mean - mean.mean(), m.std(axis=1), 20 * np.log10(mod.ravel() + 1e-3), [slope, slope]])


def test_library_columns(lib: AtomLibrary) -> None:
    assert len(lib) == 200
    assert lib.atom_ids[0] == "atom_000" and lib.atom_ids[-1] == "atom_199"
    assert len(set(lib.labels)) == 200 and len(set(lib.phrases)) == 200
    assert all(s == f"procedural:{f}" for s, f in zip(lib.sources, lib.families))
    assert set(lib.licenses) == {"CC0-1.0"}
    assert len(set(lib.families)) >= 15
    d = lib.durations_s
    assert d.min() >= 0.5 and d.max() <= 4.0
    audio, offsets = lib.flat()
    assert audio.dtype == np.float32 and offsets.dtype == np.uint64 and offsets[-1] == len(audio)
    assert lib.label_to_index["bell_low"] == 0
    rms_db = [20 * np.log10(np.sqrt(np.mean(lib.audio(i).astype(np.float64) ** 2))) for i in range(len(lib))]
    assert max(abs(r + 20.0) for r in rms_db) < 0.5
    assert float(np.max(np.abs(audio))) <= 0.9
    frame = lib.to_frame()
    assert frame.columns[:6] == ["atom_id", "label", "phrase", "duration_s", "source", "license"]


def test_every_pair_of_atoms_is_distinct(lib: AtomLibrary) -> None:
    """No two atoms are near-duplicates in a log-mel summary.

    Reference scale: how far one atom moves when re-rendered with another noise seed (other hit
    timings and noise), 3 dB louder and shifted by 20 ms. The median of that self-distance over
    the library is the "same sound" scale; every pair of different atoms must be at least 2.5
    times that far apart (features standardised per dimension over the library). 2.5 leaves a
    margin over the worst re-rendering of most atoms (90th percentile ~2x median) while still
    failing when two recipes collapse onto one sound (e.g. two broadband hisses or a tone pair).
    """
    _, _, _, audio2, offsets2 = _core.procedural_atoms(SR, 1)
    base = np.stack([summary_features(lib.audio(i), SR) for i in range(len(lib))])
    moved = np.stack(
        [
            summary_features(np.roll(audio2[offsets2[i] : offsets2[i + 1]] * 10 ** (3 / 20), int(0.02 * SR)), SR)
            for i in range(len(lib))
        ]
    )
    scale = base.std(axis=0) + 1e-6
    fz, mz = base / scale, moved / scale
    self_dist = np.sqrt(((fz - mz) ** 2).sum(axis=1))
    dist = np.sqrt(((fz[:, None, :] - fz[None, :, :]) ** 2).sum(axis=-1))
    threshold = 2.5 * float(np.median(self_dist))
    iu = np.triu_indices(len(lib), 1)
    pair_d = dist[iu]
    order = np.argsort(pair_d)
    closest = [f"{lib.labels[iu[0][k]]} ~ {lib.labels[iu[1][k]]}: {pair_d[k]:.2f}" for k in order[:10]]
    print(f"threshold {threshold:.2f}; closest pairs:\n" + "\n".join(closest))
    assert pair_d.min() > threshold, f"threshold {threshold:.2f}; closest pairs: {closest}"
    # No atom's nearest other atom is closer than its own re-rendering.
    np.fill_diagonal(dist, np.inf)
    confused = [lib.labels[i] for i in range(len(lib)) if dist[i].min() <= self_dist[i]]
    assert not confused, confused


def test_save_load_round_trip_and_resample(lib: AtomLibrary, tmp_path: Path) -> None:
    small = AtomLibrary(
        atom_ids=lib.atom_ids[:5], labels=lib.labels[:5], phrases=lib.phrases[:5], families=lib.families[:5],
        sources=lib.sources[:5], licenses=lib.licenses[:5], sample_rate=SR,
        audio_flat=lib.audio_flat[: int(lib.offsets[5])], offsets=lib.offsets[:6],
    )
    out = small.save(tmp_path / "lib")
    assert sorted(p.name for p in (out / "audio").iterdir()) == [f"atom_00{i}.wav" for i in range(5)]
    back = AtomLibrary.load(out)
    assert back.labels == small.labels and back.phrases == small.phrases and back.sources == small.sources
    np.testing.assert_array_equal(back.audio_flat, small.audio_flat)
    np.testing.assert_array_equal(back.offsets, small.offsets)
    with pytest.raises(UserError, match="earlier atom library; pass --force"):
        small.save(out)
    up = AtomLibrary.load(out, sample_rate=22050)
    assert up.sample_rate == 22050
    assert all(len(up.audio(i)) == round(len(small.audio(i)) * 22050 / SR) for i in range(5))
    assert not list(tmp_path.glob(".lib.tmp-*"))


def test_load_rejects_non_library(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no atoms.parquet"):
        AtomLibrary.load(tmp_path)


def test_contact_sheet(lib: AtomLibrary, tmp_path: Path) -> None:
    png = contact_sheet(lib, tmp_path / "sheet.png", columns=4, indices=range(8))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
