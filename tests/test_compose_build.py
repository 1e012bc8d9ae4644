"""Builder properties: balance, unique target, SNR, exact gap, determinism, refusals."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonaudio.compose.build import ComposeConfig, balanced_plan, build_set, mix_sample, read_dataset
from reasonaudio.compose.mixing import gap_samples, snr_db
from reasonaudio.compose.speech import RecordingSource, TtsSource
from reasonaudio.errors import UserError

SR = 16000


@settings(max_examples=40, deadline=None)
@given(k=st.integers(2, 5), blocks=st.integers(1, 30), n_snr=st.integers(1, 3), seed=st.integers(0, 2**31))
def test_plan_balances_position_and_roles(k, blocks, n_snr, seed):
    values = [f"v{i}" for i in range(k)]
    plan = balanced_plan(values, 4 * blocks, list(range(n_snr)), seed)
    assert len(plan) == 4 * blocks
    assert sum(p["target_segment"] == 1 for p in plan) == 2 * blocks
    assert all(p["target_value"] != p["distractor_value"] for p in plan)
    targets = Counter(p["target_value"] for p in plan)
    distractors = Counter(p["distractor_value"] for p in plan)
    assert targets == distractors


def test_full_cycle_balances_every_value_and_snr():
    values = ["a", "b", "c", "d", "e"]
    plan = balanced_plan(values, 600, [0, 10, 20], seed=3)  # cycle = 10 pairs x 3 SNRs x 4 = 120
    assert Counter(p["target_value"] for p in plan) == {v: 120 for v in values}
    assert Counter(p["distractor_value"] for p in plan) == {v: 120 for v in values}
    assert Counter(p["snr_db"] for p in plan) == {0: 200, 10: 200, 20: 200}
    assert Counter((p["snr_db"], p["target_segment"]) for p in plan)[(10, 1)] == 100


def test_plan_refuses_n_not_multiple_of_4():
    with pytest.raises(UserError, match="multiple of 4"):
        balanced_plan(["a", "b"], 10, [None], 0)


@pytest.mark.parametrize("snr", [-5.0, 0.0, 10.0, 20.0])
def test_mixed_segments_have_the_exact_snr_and_gap(snr):
    """The core's mixer places both segments, fits each background (looped: shorter than the
    segment; cropped: longer) and scales it by RMS to the SNR; the gap is exact silence."""
    rng = np.random.default_rng(1)
    speech = [rng.standard_normal(12345).astype(np.float32) * 0.05, rng.standard_normal(3000).astype(np.float32) * 0.05]
    short_bed = rng.standard_normal(4000).astype(np.float32) * 0.1  # looped with crossfades
    long_bed = rng.standard_normal(9000).astype(np.float32) * 0.1  # cropped
    gap = gap_samples(SR)
    audio, bounds, gain = mix_sample(speech, [short_bed, long_bed], snr, gap, SR)
    assert bounds == [(0, 12345), (12345 + gap, 12345 + gap + 3000)] and audio.size == bounds[1][1]
    assert np.all(audio[12345:12345 + gap] == 0) and audio[12344] != 0 and audio[12345 + gap] != 0
    assert 0 < gain <= 1 and np.abs(audio).max() <= 0.97 + 1e-6
    for (start, end), voice in zip(bounds, speech):
        noise = audio[start:end] / gain - voice
        assert abs(snr_db(voice, noise) - snr) < 1e-3


def test_without_background_the_segments_are_the_speech_itself():
    a, b = np.full(10, 0.5, np.float32), np.full(7, -0.25, np.float32)
    audio, bounds, gain = mix_sample([a, b], [None, None], None, 24, SR)
    assert bounds == [(0, 10), (34, 41)] and gain == 1.0
    assert np.all(audio[10:34] == 0) and np.all(audio[:10] == 0.5) and np.all(audio[34:] == -0.25)
    assert gap_samples(24000) == 36000 and gap_samples(22050) == 33075


def _build_env(fakes, tmp_path: Path, name: str, seed: int = 0, n: int = 12, task: str = "math") -> tuple[dict, list[dict], Path]:
    out = tmp_path / name
    cfg = ComposeConfig(cue="environment", task=task, n=n, snrs=(0.0, 10.0, 20.0), sample_rate=SR, seed=seed)
    build_set(out, cfg, source=fakes.ToneSource(SR), library=fakes.ToneLibrary(SR))
    manifest, rows = read_dataset(out)
    return manifest, rows, out


def _band_power(x: np.ndarray, lo: float, hi: float) -> float:
    spec = np.abs(np.fft.rfft(x.astype(np.float64))) ** 2
    freqs = np.fft.rfftfreq(x.size, 1 / SR)
    return float(spec[(freqs >= lo) & (freqs < hi)].sum())


def test_environment_set_snr_gap_and_uniqueness(compose_fakes, tmp_path):
    manifest, rows, out = _build_env(compose_fakes, tmp_path, "env")
    assert manifest["counts"]["target_segment"] == {"1": 6, "2": 6}
    gap = gap_samples(SR)
    for row in rows:
        audio, sr = sf.read(out / row["audio"], dtype="float64")
        assert sr == SR and audio.size == row["num_samples"]
        s1, s2 = row["segments"]
        assert s2["start_sample"] - s1["end_sample"] == gap
        assert np.all(audio[s1["end_sample"]:s2["start_sample"]] == 0)
        assert audio[s1["end_sample"] - 1] != 0 and audio[s2["start_sample"]] != 0
        assert s1["cue_value"] != s2["cue_value"]
        assert row["segments"][row["target_segment"] - 1]["cue_value"] == row["target_value"]
        assert s1["answers"] != s2["answers"] and s1["text"] != s2["text"]
        for seg in (s1, s2):
            part = audio[seg["start_sample"]:seg["end_sample"]]
            measured = 10 * np.log10(_band_power(part, 100, 1000) / _band_power(part, 2000, 4000))
            assert abs(measured - seg["snr_db"]) < 0.1, (row["id"], measured, seg["snr_db"])


def test_build_is_byte_identical_for_a_seed(compose_fakes, tmp_path):
    _, _, a = _build_env(compose_fakes, tmp_path, "a", seed=7)
    _, _, b = _build_env(compose_fakes, tmp_path, "b", seed=7)
    _, _, c = _build_env(compose_fakes, tmp_path, "c", seed=8)
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    for f in files:
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    assert (a / "metadata.jsonl").read_bytes() != (c / "metadata.jsonl").read_bytes()


def test_build_refuses_existing_and_replaces_with_force(compose_fakes, tmp_path):
    _build_env(compose_fakes, tmp_path, "x")
    with pytest.raises(UserError, match="earlier compose set; pass --force"):
        _build_env(compose_fakes, tmp_path, "x")
    cfg = ComposeConfig(cue="gender", task="asr", n=4, sample_rate=SR)
    build_set(tmp_path / "x", cfg, source=compose_fakes.ToneSource(SR), force=True)
    manifest, rows = read_dataset(tmp_path / "x")
    assert manifest["params"]["cue"] == "gender" and len(rows) == 4
    assert [p.name for p in tmp_path.iterdir()] == ["x"]  # no temp siblings left


@pytest.mark.skipif(shutil.which("espeak-ng") is None, reason="espeak-ng not installed")
def test_tts_refuses_emotion_and_speaks_both_genders(tmp_path):
    tts = TtsSource(SR)
    with pytest.raises(UserError, match="emotion"):
        build_set(tmp_path / "e", ComposeConfig(cue="emotion", task="asr", n=4, sample_rate=SR), source=tts)
    build_set(tmp_path / "g", ComposeConfig(cue="gender", task="facts", n=4, sample_rate=22050, seed=1))
    _, rows = read_dataset(tmp_path / "g")
    genders = Counter(s["gender"] for r in rows for s in r["segments"])
    assert genders == {"female": 4, "male": 4}
    assert all(s["speaker"].startswith("en-us+" + s["gender"][0]) for r in rows for s in r["segments"])


def test_recordings_csv_emotion_and_errors(tmp_path):
    clips = tmp_path / "clips"
    clips.mkdir()
    lines = ["path,text,gender,emotion"]
    for i, (emo, gen) in enumerate([("ANG", "F"), ("SAD", "M"), ("HAP", "F"), ("ANG", "M"), ("SAD", "F"), ("HAP", "M")]):
        sf.write(clips / f"c{i}.wav", np.full(800, 0.1 * (i + 1), np.float32), SR)
        lines.append(f"clips/c{i}.wav,Sentence number {i}.,{gen},{emo}")
    csv_path = tmp_path / "rec.csv"
    csv_path.write_text("\n".join(lines) + "\n")
    build_set(tmp_path / "emo", ComposeConfig(cue="emotion", task="asr", n=12, sample_rate=SR, speech=str(csv_path)))
    manifest, rows = read_dataset(tmp_path / "emo")
    assert [c["value"] for c in manifest["cue_values"]] == ["angry", "happy", "sad"]
    for r in rows:
        assert [s["emotion"] for s in r["segments"]] == [s["cue_value"] for s in r["segments"]]
        assert r["segments"][0]["text"] != r["segments"][1]["text"]
    with pytest.raises(UserError, match="answers"):
        build_set(tmp_path / "m", ComposeConfig(cue="emotion", task="math", n=4, sample_rate=SR, speech=str(csv_path)))
    bad = tmp_path / "bad.csv"
    bad.write_text("path,text,gender,emotion\nmissing.wav,hi,F,ANG\n")
    with pytest.raises(UserError, match=r"bad.csv:2: audio file 'missing.wav' does not exist"):
        RecordingSource(bad, SR)


def test_default_backgrounds_are_the_studys_five_classes_in_the_procedural_library() -> None:
    from reasonaudio.atoms import AtomLibrary
    from reasonaudio.compose.build import choose_backgrounds

    chosen = [c.value for c in choose_backgrounds(AtomLibrary.procedural(), None)]
    assert chosen == ["rain_light", "crickets", "wind_howl_low", "ocean_waves", "bird_trill"]


def test_default_backgrounds_match_whole_label_words_in_other_libraries() -> None:
    from types import SimpleNamespace

    from reasonaudio.compose.build import choose_backgrounds

    lib = SimpleNamespace(labels=["wind_chimes", "microwave_beeps", "strong_wind", "sea_waves", "chirping_birds"],
                          phrases=["a", "b", "c", "d", "e"], sample_rate=16000)
    chosen = [c.value for c in choose_backgrounds(lib, None)]
    assert chosen == ["strong_wind", "sea_waves", "chirping_birds"]
