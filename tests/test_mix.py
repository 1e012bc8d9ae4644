"""The Rust mixer and writers through the `_core` binding (render_clip / render_corpus over a Corpus)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from reasonaudio import _core

SR = 16000


def core_render_corpus(audio, offsets, *, paths, sample_rate, clip_lengths, format="wav16", threads=0, ceiling=0.98, **ev):
    """`_core.render_corpus` of a clean corpus given as columns (the value objects made here)."""
    corpus = _core.Corpus(_core.AudioBank(audio, offsets), _core.EventTable(clip_length=clip_lengths, **ev))
    return _core.render_corpus(corpus, paths, _core.Mixer(sample_rate, ceiling=ceiling), format=format, threads=threads)


def core_render_clip(audio, offsets, ev_atom, ev_onset, ev_length, ev_gain_db, clip_length, sample_rate, **mix):
    """One clean clip's limited audio through `_core.render_clip`."""
    events = _core.EventTable(ev_atom=ev_atom, ev_onset=ev_onset, ev_length=ev_length, ev_gain_db=ev_gain_db,
                              clip_length=np.array([clip_length], np.int64))
    corpus = _core.Corpus(_core.AudioBank(audio, offsets), events)
    return _core.render_clip(corpus, _core.Mixer(sample_rate, **mix))["audio"]


def bank() -> tuple[np.ndarray, np.ndarray]:
    t = np.arange(SR, dtype=np.float64) / SR
    atoms = [
        0.8 * np.sin(2 * np.pi * 440 * t[:8000]),
        0.6 * np.sign(np.sin(2 * np.pi * 3 * t[:3000])),
        0.9 * np.sin(2 * np.pi * 97 * t[:12000]) * np.exp(-3 * t[:12000]),
    ]
    audio = np.concatenate(atoms).astype(np.float32)
    offsets = np.cumsum([0] + [len(a) for a in atoms]).astype(np.uint64)
    return audio, offsets


def plan(n_clips: int = 6) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    rows = []
    for clip in range(n_clips):
        onset = 0
        for _ in range(rng.integers(2, 5)):
            onset += int(rng.integers(100, 4000))
            length = int(rng.integers(500, 20000))
            rows.append((clip, int(rng.integers(0, 3)), onset, length, float(rng.uniform(-12, 6))))
    cols = list(zip(*rows))
    return {
        "ev_clip": np.array(cols[0], np.uint32),
        "ev_atom": np.array(cols[1], np.uint32),
        "ev_onset": np.array(cols[2], np.int64),
        "ev_length": np.array(cols[3], np.int64),
        "ev_gain_db": np.array(cols[4], np.float32),
        "clip_lengths": np.full(n_clips, 10 * SR, np.int64),
    }


def render_all(tmp: Path, fmt: str, threads: int, p: dict[str, np.ndarray]) -> tuple[dict, list[Path]]:
    audio, offsets = bank()
    ext = "flac" if fmt == "flac16" else "wav"
    tmp.mkdir(parents=True, exist_ok=True)
    paths = [tmp / f"clip{i:03d}.{ext}" for i in range(len(p["clip_lengths"]))]
    stats = core_render_corpus(audio, offsets, **p, paths=[str(x) for x in paths], sample_rate=SR,
                                format=fmt, threads=threads)
    return stats, paths


def quantize16(x: np.ndarray) -> np.ndarray:
    """The writer's rule: round(x * 32767) in float32, halves away from zero (Rust's f32::round)."""
    y = (np.clip(x, -1, 1).astype(np.float32) * np.float32(32767)).astype(np.float64)
    return (np.sign(y) * np.floor(np.abs(y) + 0.5)).astype(np.int16)


def clip_events(p: dict[str, np.ndarray], clip: int) -> dict[str, np.ndarray]:
    m = p["ev_clip"] == clip
    return {k: p[k][m] for k in ("ev_atom", "ev_onset", "ev_length", "ev_gain_db")}


def test_impulse_lands_on_its_onset_sample() -> None:
    audio = np.array([1, 0, 0, 0, 0.5, 0, 0, 0], np.float32)
    offsets = np.array([0, 4, 8], np.uint64)
    out = core_render_clip(audio, offsets, np.array([0, 1], np.uint32), np.array([5, 77], np.int64),
                            np.array([4, 4], np.int64), np.array([0, 0], np.float32), 100, SR,
                            fade_ms=0.0, ceiling=1.0)
    assert out.dtype == np.float32 and out.shape == (100,)
    assert np.flatnonzero(out).tolist() == [5, 77]
    assert out[5] == 1.0 and out[77] == 0.5


def test_render_clip_is_bounded_and_silent_outside_events() -> None:
    audio, offsets = bank()
    n = 4
    out = core_render_clip(audio, offsets, np.zeros(n, np.uint32), np.arange(n, dtype=np.int64) * 10 + 1000,
                            np.full(n, 30000, np.int64), np.full(n, 12.0, np.float32), 40000, SR)
    assert np.isfinite(out).all()
    assert np.abs(out).max() <= 0.98 + 1e-6
    assert (out[:1000] == 0).all() and (out[1030 + 30000:] == 0).all()


@pytest.mark.parametrize("fmt", ["wav16", "wav_f32", "flac16"])
def test_corpus_reads_back_and_matches_render_clip(tmp_path: Path, fmt: str) -> None:
    p = plan()
    stats, paths = render_all(tmp_path, fmt, 2, p)
    assert stats["peak"].dtype == np.float32 and stats["peak"].shape == (6,)
    assert ((stats["gain"] > 0) & (stats["gain"] <= 1)).all()
    audio, offsets = bank()
    for clip, path in enumerate(paths):
        info = sf.info(str(path))
        assert (info.samplerate, info.channels, info.frames) == (SR, 1, 10 * SR)
        want = core_render_clip(audio, offsets, **clip_events(p, clip), clip_length=10 * SR, sample_rate=SR)
        if fmt == "wav_f32":
            got = sf.read(str(path), dtype="float32")[0]
            np.testing.assert_array_equal(got, want)
        else:
            got = sf.read(str(path), dtype="int16")[0]
            np.testing.assert_array_equal(got, quantize16(want))
        end = int((p["ev_onset"] + p["ev_length"])[p["ev_clip"] == clip].max())
        assert (got[end:] == 0).all()
    assert not list(tmp_path.glob("*.tmp"))


@pytest.mark.parametrize("fmt", ["wav16", "flac16"])
def test_corpus_bytes_do_not_depend_on_threads(tmp_path: Path, fmt: str) -> None:
    p = plan(8)
    s1, paths1 = render_all(tmp_path / "t1", fmt, 1, p)
    s2, paths2 = render_all(tmp_path / "t2", fmt, 2, p)
    np.testing.assert_array_equal(s1["peak"], s2["peak"])
    np.testing.assert_array_equal(s1["gain"], s2["gain"])
    for a, b in zip(paths1, paths2):
        assert a.read_bytes() == b.read_bytes()


def test_readonly_inputs_are_accepted(tmp_path: Path) -> None:
    p = plan(2)
    for arr in p.values():
        arr.flags.writeable = False
    render_all(tmp_path, "wav16", 1, p)


def test_bad_inputs_raise_clear_errors(tmp_path: Path) -> None:
    audio, offsets = bank()
    paths = [str(tmp_path / f"{i}.wav") for i in range(6)]

    def call(**over):
        args = {**plan(), "paths": paths, "sample_rate": SR, **over}
        return core_render_corpus(audio, offsets, **args)

    p = plan()
    with pytest.raises(ValueError, match="different lengths"):
        call(ev_atom=p["ev_atom"][:-1])
    with pytest.raises(ValueError, match="unknown audio format 'mp3'|unknown audio format \"mp3\""):
        call(format="mp3")
    with pytest.raises(ValueError, match="6 clip lengths but 2 output paths"):
        call(paths=paths[:2])
    far = p["ev_onset"].copy()
    far[-1] = 10 * SR
    with pytest.raises(ValueError, match=r"clip 5, event \d+ \(row %d\).*outside the clip" % (len(far) - 1)):
        call(ev_onset=far)
    bad_atom = p["ev_atom"].copy()
    bad_atom[0] = 3
    with pytest.raises(ValueError, match="atom index 3 is out of range"):
        call(ev_atom=bad_atom)
    with pytest.raises(TypeError, match="ev_onset must be a 1-D numpy array of int64, got a 1-D array of int32"):
        call(ev_onset=p["ev_onset"].astype(np.int32))
    with pytest.raises(ValueError, match="ceiling"):
        call(ceiling=1.5)
    assert not list(tmp_path.iterdir()), "nothing may be written for an invalid plan"
