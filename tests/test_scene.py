"""Acoustic scenes (contract §5): end-to-end builds with a bed and a room, the validator catching a
planted fault, one plan in several conditions, bad inputs refused in one line, determinism."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import soundfile as sf

from reasonaudio.builder import BuildConfig, build
from reasonaudio.builder.run import build_conditions
from reasonaudio.errors import UserError
from reasonaudio.validate import validate_benchmark
from reasonaudio.validate.scene import looped

SMALL = dict(clips=40, queries_per_task=3, threads=2)
BED = {"background": "noise:pink", "snr_db": [10.0, 10.0], "room": None, "pitch_semitones": None}


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _failed(report) -> dict[str, list[str]]:
    return {c.name: c.examples for c in report.checks if c.violations}


@pytest.fixture(scope="module")
def bed_build(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("scene") / "bed"
    build(out, BuildConfig(**SMALL, scene={**BED, "pitch_semitones": [-2.0, 2.0], "stretch": [0.8, 1.25]}), progress=False)
    return out


def test_bed_build_is_v3_and_validates(bed_build):
    import json

    m = json.loads((bed_build / "manifest.json").read_text())
    assert m["format_version"] == "3" and m["scene"]["background"] == "noise:pink"
    clips = pl.read_parquet(bed_build / "clips.parquet")
    assert clips["background_snr_db"].to_list() == [10.0] * clips.height
    ev = pl.read_parquet(bed_build / "events.parquet")
    pitch, stretch = ev["pitch_semitones"].to_numpy(), ev["stretch"].to_numpy()
    assert np.abs(pitch).max() <= 2.0 and pitch.std() > 0.5
    assert stretch.min() >= 0.8 and stretch.max() <= 1.25 and stretch.std() > 0.05
    # independent: the stretch is not the varispeed's 2^(-pitch/12)
    assert np.abs(stretch - 2 ** (-pitch / 12)).max() > 0.1
    snr = pl.read_parquet(bed_build / "scene_events.parquet")["snr_db"].to_numpy()
    assert snr.min() >= 10.0 and abs(snr.min() - 10.01) < 0.1
    report = validate_benchmark(bed_build)
    assert not _failed(report), _failed(report)


def test_a_pitch_outside_the_scene_range_is_caught(bed_build, tmp_path):
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(bed_build, bad)
    ev = pl.read_parquet(bad / "events.parquet")
    ev.with_columns(pl.when(pl.int_range(pl.len()) == 3).then(5.0).otherwise(pl.col("pitch_semitones")).alias("pitch_semitones")) \
        .write_parquet(bad / "events.parquet")
    failed = _failed(validate_benchmark(bad, check_audio=False))
    assert "scene.voicing" in failed and "row 3: pitch_semitones 5.0" in failed["scene.voicing"][0], failed
    assert "scene.voicing" not in _failed(validate_benchmark(bed_build, check_audio=False))


def test_a_bed_6_db_too_loud_is_caught(bed_build, tmp_path):
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(bed_build, bad)
    clips = pl.read_parquet(bad / "clips.parquet")
    row = clips.row(0, named=True)
    source, _ = sf.read(bad / "backgrounds" / f"{row['background_id']}.wav", dtype="float32")
    audio, sr = sf.read(bad / row["path"], dtype="float64")
    bed = looped(source, row["background_start_sample"], len(audio), int(0.05 * sr), int(0.005 * sr))
    # the file as a renderer that doubled the bed gain would have written it (+6.02 dB)
    audio = audio + row["background_gain"] * row["limiter_gain"] * bed.astype(np.float64) * 32767 / 32768
    sf.write(bad / row["path"], audio, sr, subtype="PCM_16")
    report = validate_benchmark(bad)
    failed = _failed(report)
    assert "scene.snr" in failed, failed
    assert any(row["clip_id"] in e for e in failed["scene.snr"])
    assert set(failed) <= {"scene.snr", "layout.hashes", "audio.hashes"}, failed  # the file changed after the build, too


def test_one_plan_many_conditions_share_their_tables(tmp_path):
    conds = {"clean": None, "bed0": {**BED, "snr_db": [0.0, 0.0]}, "bed_room": {**BED, "room": "simulated:0.3,0.4"}}
    built = build_conditions(tmp_path / "c", BuildConfig(**SMALL), conds, progress=False)
    for name in ("events", "queries", "qrels", "mc"):
        assert len({_sha(Path(b) / f"{name}.parquet") for b in built.values()}) == 1, name
    assert _sha(tmp_path / "c/clean/audio/clip_000000.wav") != _sha(tmp_path / "c/bed0/audio/clip_000000.wav")
    for b in built.values():
        report = validate_benchmark(b.path)
        assert not _failed(report), _failed(report)
    tails = pl.read_parquet(tmp_path / "c/bed_room/clips.parquet")["tail_s"]
    assert tails.min() > 0 and built["clean"].manifest["params"]["plan"]["tail_s"] >= tails.max()


def test_scene_audio_does_not_depend_on_threads(tmp_path):
    scene = {**BED, "room": "simulated:0.3,0.3"}
    for t in (1, 2):
        build(tmp_path / f"t{t}", BuildConfig(**{**SMALL, "threads": t}, scene=scene), progress=False)
    a = sorted((tmp_path / "t1/audio").iterdir())
    assert a and all(_sha(p) == _sha(tmp_path / "t2/audio" / p.name) for p in a)
    assert _sha(tmp_path / "t1/clips.parquet") == _sha(tmp_path / "t2/clips.parquet")


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "reasonaudio", *args], capture_output=True, text=True, cwd=cwd)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--background", "noise:pink", "--snr", "nan"], "--snr 'nan'"),
        (["--background", "noise:pink", "--snr", "10,inf"], "two finite numbers"),
        (["--background", "noise:pink", "--snr", "90"], "within -20..60"),
        (["--snr", "10"], "give --background too"),
        (["--background", "noise:grey", "--snr", "10"], "unknown noise 'grey'"),
        (["--room", "simulated:0.01,0.3"], "within 0.05..3"),
        (["--room", "simulated:1.2,1.5", "--plan", "duration_bins=[[0.6,1.4],[2.6,3.4],[4.6,6.0]]"], "breaks the duration threshold"),
        (["--pitch=-30,0"], "within -12..12"),
        (["--stretch", "0.3,1"], "within 0.5..2"),
        (["--stretch", "1,nan"], "--stretch '1,nan'"),
        (["--varispeed", "13"], "within -12..12"),
    ],
)
def test_bad_scene_inputs_are_one_line_and_write_nothing(tmp_path, extra, message):
    r = _cli("build", "--out", str(tmp_path / "o"), "--clips", "20", "--queries-per-task", "2", "--quiet", *extra, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = [x for x in r.stderr.strip().splitlines() if x.strip()]
    assert len(lines) == 1 and message in lines[0], r.stderr
    assert not (tmp_path / "o").exists()


def test_bed_and_room_folders(tmp_path):
    from reasonaudio.atoms import AtomLibrary
    from reasonaudio.scene import load_beds, load_rooms

    labels = AtomLibrary.open("procedural", sample_rate=16000).labels
    beds = tmp_path / "beds"
    (beds / "city_hum").mkdir(parents=True)
    sf.write(beds / "city_hum" / "a.wav", np.random.default_rng(0).standard_normal(8000) * 0.1, 16000)
    got = load_beds(str(beds), 16000, 0, list(labels))
    assert [b.label for b in got] == ["city_hum"] and abs(float(np.sqrt(np.mean(got[0].audio**2))) - 0.1) < 1e-4
    clash = tmp_path / "clash"
    clash.mkdir()
    sf.write(clash / f"{labels[0]}_loop.wav", np.ones(800) * 0.1, 16000)
    with pytest.raises(UserError, match=f"clashes with the vocabulary label '{labels[0]}'"):
        load_beds(str(clash), 16000, 0, list(labels))
    irs = tmp_path / "irs"
    irs.mkdir()
    with pytest.raises(UserError, match="no impulse response"):
        load_rooms(str(irs), 16000, 0)
    k = np.arange(4800)
    ir = np.exp(-k / 480.0) * np.random.default_rng(1).standard_normal(4800)
    sf.write(irs / "r.wav", np.stack([ir, -ir], axis=1) * 0.3, 48000)  # stereo, 48 kHz: first channel, resampled
    (room,) = load_rooms(str(irs), 16000, 0)
    rt60 = 480.0 / 48000 * np.log(1000.0)  # amplitude falls 60 dB in 480 ln(1000) samples
    assert abs(room.tail_s - rt60 / 3) < 0.01, (room.tail_s, rt60 / 3)
    (irs / "bad.wav").write_bytes(b"not audio")
    with pytest.raises(UserError, match="bad.wav: cannot read audio"):
        load_rooms(str(irs), 16000, 0)


def test_simulated_rooms_are_cached_as_the_same_bytes(tmp_path, monkeypatch):
    pytest.importorskip("pyroomacoustics", reason="simulated rooms need the scene extra")
    from reasonaudio.scene import load_rooms, rooms

    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    first = load_rooms("simulated:0.3,0.3", 16000, 5)
    cached = sorted((tmp_path / "cache" / "rooms").glob("*.npz"))
    assert len(cached) == 1
    calls, simulate = [], rooms._simulate
    monkeypatch.setattr(rooms, "_simulate", lambda *a: calls.append(a) or simulate(*a))
    again = load_rooms("simulated:0.3,0.3", 16000, 5)
    assert not calls, "the second load simulates nothing"
    assert [r.sha256 for r in again] == [r.sha256 for r in first] and again[0].params == first[0].params
    cached[0].write_bytes(b"truncated")  # an unreadable entry is recomputed, never trusted
    monkeypatch.undo()
    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    assert [r.sha256 for r in load_rooms("simulated:0.3,0.3", 16000, 5)] == [r.sha256 for r in first]
    assert np.load(cached[0])["h"].shape == first[0].audio.shape


def test_a_bed_library_packed_from_debian_packages(tmp_path):
    """`atoms pack debian-beds`: ambience loops under the atom pack's license rules, none of them an atom
    of the atom pack; used as `--background LIB`, each bed keeps its library's label, license and credit."""
    from reasonaudio.atoms.sources.debian import BEDS_TABLE, missing_packages, read_pack_table
    from reasonaudio.cli import main

    rows = read_pack_table(BEDS_TABLE)
    atoms = {(r["package"], r["file"]) for r in read_pack_table()}
    assert rows and not atoms & {(r["package"], r["file"]) for r in rows}
    missing = missing_packages(sorted({r["package"] for r in rows}))
    if missing:
        pytest.skip(f"Debian packages not installed: {' '.join(missing)}")
    assert main(["atoms", "pack", "debian-beds", "--out", str(tmp_path / "beds")]) == 0
    out = tmp_path / "b"
    assert main(["build", "--out", str(out), "--clips", "40", "--queries-per-task", "3", "--background", str(tmp_path / "beds"),
                 "--snr", "0,10", "--quiet"]) == 0
    report = validate_benchmark(out)
    assert not _failed(report), _failed(report)
    bg = pl.read_parquet(out / "backgrounds.parquet")
    assert sorted(bg["label"]) == sorted(r["label"] for r in rows)
    assert set(bg["license"]) <= {"CC0-1.0", "CC-BY-3.0", "CC-BY-4.0", "CC-BY-SA-3.0", "CC-BY-SA-4.0", "MIT", "public-domain"}
    assert all(s.startswith("debian:") for s in bg["source"])
    assert "\n\n## Background beds\n" in (out / "ATTRIBUTION.md").read_text()


def test_scenes_takes_and_bounds_the_plan_options_as_build_does(tmp_path):
    """`scenes` shares build's plan options (one parser): their bounds refuse in one line, nothing written."""
    r = _cli("scenes", "--out", str(tmp_path / "s"), "--clips", "0", cwd=tmp_path)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "clips" in r.stderr, r.stderr
    r = _cli("scenes", "--out", str(tmp_path / "s"), "--condition", "c=--background noise:pink --snr 5 --pitch 1", cwd=tmp_path)
    assert r.returncode == 2 and "unknown option(s) --pitch" in r.stderr and "give them to `scenes` itself" in r.stderr, r.stderr
    assert not any((tmp_path / "s").glob("*/manifest.json"))


def test_a_default_condition_named_alone_is_that_condition_not_clean_audio_under_its_name():
    from reasonaudio.commands.scenes import parse_condition

    assert parse_condition("pink_snr10_room") == parse_condition("pink_snr10_room=--background noise:pink --snr 10 --room simulated:0.3,0.6")
    name, scene = parse_condition("pink_snr0")
    assert name == "pink_snr0" and scene is not None and scene == parse_condition("x=--background noise:pink --snr 0")[1]
    assert parse_condition("clean") == ("clean", None) and parse_condition("dry") == ("dry", None)
    assert parse_condition("pink_snr0=--background noise:pink --snr 5")[1] != scene  # an explicit definition wins


def test_scenes_pitch_and_stretch_are_the_plans_the_same_in_every_condition(tmp_path):
    r = _cli("scenes", "--out", str(tmp_path / "s"), "--clips", "24", "--queries-per-task", "2", "--quiet",
             "--condition", "dry", "--condition", "bed=--background noise:pink --snr 5",
             "--pitch=-2,2", "--stretch", "0.9,1.2", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    dry, bed = tmp_path / "s/dry", tmp_path / "s/bed"
    for name in ("events", "queries", "qrels", "mc"):
        assert _sha(dry / f"{name}.parquet") == _sha(bed / f"{name}.parquet"), name
    ev = pl.read_parquet(dry / "events.parquet")
    assert ev["pitch_semitones"].abs().max() > 0.5 and (ev["stretch"] != 1.0).any()
    for b in (dry, bed):
        report = validate_benchmark(b)
        assert not _failed(report), _failed(report)


def test_clips_crowded_with_events_and_tails_validate(tmp_path):
    """Long overlapping events in a 0.6-s room leave some clips almost no bed-alone samples: the bed's
    level is measured wherever it is alone (not over the whole clip once less than 1% is left, which
    biased the estimate and reported a correct clip as departing from its bed)."""
    pytest.importorskip("pyroomacoustics", reason="simulated rooms need the scene extra")
    scene = {**BED, "room": "simulated:0.6,0.6"}
    plan = {"duration_weights": [0.0, 0.0, 1.0], "edge_silence_s": [0.0, 0.01]}
    out = build(tmp_path / "crowd", BuildConfig(clips=60, queries_per_task=3, overlap_fraction=1.0, plan=plan, scene=scene), progress=False)
    report = validate_benchmark(out)
    assert not _failed(report), _failed(report)
    notes = " ".join(n for c in report.checks if c.name == "scene.bed_alone" for n in c.notes)
    assert "samples outside their events and tails" in notes


def test_varispeed_moves_pitch_and_length_together_and_pitch_shift_keeps_the_length(tmp_path):
    """--varispeed: the recorded stretch is 2^(-pitch/12) (tape speed); --pitch alone keeps stretch 1;
    both render the same clips' meaning (events, qrels) as the dry build."""
    from reasonaudio import _core

    dry, tape, shifted = tmp_path / "dry", tmp_path / "tape", tmp_path / "shifted"
    build(dry, BuildConfig(**SMALL), progress=False)
    build(tape, BuildConfig(**SMALL, scene={"varispeed_semitones": [-3.0, 3.0]}), progress=False)
    build(shifted, BuildConfig(**SMALL, scene={"pitch_semitones": [-3.0, 3.0]}), progress=False)
    ev = pl.read_parquet(tape / "events.parquet")
    p, s = ev["pitch_semitones"].to_numpy(), ev["stretch"].to_numpy()
    assert p.std() > 0.5 and np.allclose(s, 2 ** (-p / 12), atol=1e-5)
    ev2 = pl.read_parquet(shifted / "events.parquet")
    assert ev2["pitch_semitones"].std() > 0.5 and (ev2["stretch"] == 1.0).all()
    for b in (tape, shifted):
        assert _sha(b / "qrels.parquet") == _sha(dry / "qrels.parquet")
        report = validate_benchmark(b)
        assert not _failed(report), _failed(report)
    # The shifted exemplar is the core's shift_stretch of the atom: a 440 Hz tone moves by the cents asked.
    sr = 16000
    x = (0.5 * np.sin(2 * np.pi * 440 * np.arange(sr) / sr)).astype(np.float32)
    y = _core.shift_stretch(x, -500, 1000, sr)
    mid = y[sr // 4: 3 * sr // 4]
    hz = np.count_nonzero(np.diff(np.signbit(mid))) / 2 / (len(mid) / sr)
    assert len(y) == sr and abs(hz - 440 * 2 ** (-5 / 12)) < 4, hz


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # jams' own use of jsonschema
def test_annotations_are_dcase_strong_labels_and_jams_that_validate(tmp_path):
    """--annotations: strong_labels.tsv lists every event's dry extent; each clip's JAMS validates
    against jams' schema, its `scaper` annotation carries the bed as background and every event's
    pitch shift, stretch and rendered SNR as events.parquet / scene_events.parquet have them."""
    jams = pytest.importorskip("jams")
    out = tmp_path / "a"
    scene = {**BED, "pitch_semitones": [-2.0, 2.0], "stretch": [0.9, 1.1], "annotations": True}
    build(out, BuildConfig(**SMALL, scene=scene), progress=False)
    ev = pl.read_parquet(out / "events.parquet").join(pl.read_parquet(out / "scene_events.parquet"), on=["clip_id", "event_index"])
    clips = pl.read_parquet(out / "clips.parquet")
    strong = pl.read_csv(out / "strong_labels.tsv", separator="\t")
    assert strong.columns == ["filename", "onset", "offset", "event_label"] and strong.height == ev.height
    assert np.allclose(strong["onset"].to_numpy(), ev["onset_s"].to_numpy(), atol=1e-6)
    assert strong["event_label"].to_list() == ev["label"].to_list()
    assert strong["filename"].to_list() == [p.rpartition("/")[2] for p in ev.join(clips.select("clip_id", "path"), on="clip_id", maintain_order="left")["path"]]
    for cid in clips["clip_id"].to_list()[:12]:
        doc = jams.load(str(out / "jams" / f"{cid}.jams"), validate=True)
        tags, sc = doc.annotations.search(namespace="tag_open")[0], doc.annotations.search(namespace="scaper")[0]
        mine = ev.filter(pl.col("clip_id") == cid)
        assert [o.value for o in tags.data] == mine["label"].to_list()
        bg = [o.value for o in sc.data if o.value["role"] == "background"]
        fg = [o.value for o in sc.data if o.value["role"] == "foreground"]
        assert len(bg) == 1 and bg[0]["label"] == "pink_noise" and bg[0]["snr"] == 0.0
        assert [v["pitch_shift"] for v in fg] == mine["pitch_semitones"].to_list()
        assert [v["time_stretch"] for v in fg] == mine["stretch"].to_list()
        assert [v["snr"] for v in fg] == mine["snr_db"].to_list()
        assert sc.sandbox["reasonaudio"]["background_snr_db"] == 10.0
