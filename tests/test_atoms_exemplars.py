"""Contract v2: a library with several exemplars per label builds, validates, uses several
exemplars per label, keeps a label once per clip, honours --exemplar-split, and credits every
recording (manifest + ATTRIBUTION.md); a one-exemplar library keeps its v1 bytes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from reasonaudio import _core
from reasonaudio.atoms import AtomLibrary
from reasonaudio.builder import BuildConfig, build
from reasonaudio.errors import UserError
from reasonaudio.atoms.exemplars import LabelView
from reasonaudio.validate import validate_benchmark

N_LABELS = 40
PER_LABEL = 3


def _multi_library(root: Path) -> Path:
    """40 labels x 3 exemplars: each exemplar a procedural atom played at another speed (other
    length and pitch), so exemplars of one label really differ."""
    base = AtomLibrary.procedural(16000)
    ids, labels, phrases, sources, chunks, splits, credits = [], [], [], [], [], [], []
    for j in range(N_LABELS):
        i = j * 5  # spread over families
        for k in range(PER_LABEL):
            x = base.audio(i)
            if k:
                x = _core.resample(np.ascontiguousarray(x), 16000, int(16000 * (1 + 0.15 * k)))
            ids.append(f"a{j:02d}_{k}")
            labels.append(base.labels[i])
            phrases.append(base.phrases[i])
            sources.append(f"fixture/{base.labels[i]}_{k}.wav")
            chunks.append(np.asarray(x, np.float32))
            splits.append("train" if k == 0 else "test")
            credits.append(f"author {k}")
    lib = AtomLibrary(
        atom_ids=ids, labels=labels, phrases=phrases, families=["imported"] * len(ids), sources=sources,
        licenses=["CC-BY-4.0" if k % 2 else "CC0-1.0" for k in range(len(ids))], sample_rate=16000,
        audio_flat=np.concatenate(chunks), offsets=np.concatenate([[0], np.cumsum([len(c) for c in chunks])]).astype(np.uint64),
        splits=splits, attributions=credits,
    )
    return lib.save(root / "multi")


@pytest.fixture(scope="module")
def multi(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("exemplars")
    lib = _multi_library(root)
    out = root / "bench"
    build(out, BuildConfig(clips=400, queries_per_task=5, seed=3, atoms=str(lib), threads=2), progress=False)
    return lib, out


def test_library_round_trip_keeps_exemplars_split_and_credit(multi) -> None:
    lib = AtomLibrary.load(multi[0])
    assert len(lib) == N_LABELS * PER_LABEL and lib.n_labels == N_LABELS
    assert lib.splits.count("test") == N_LABELS * (PER_LABEL - 1)
    assert lib.attributions[1] == "author 1"
    view = LabelView.of(lib)
    assert view.multi and len(view.labels) == N_LABELS
    # representative length: the median exemplar's
    lengths = np.diff(lib.offsets.astype(np.int64))
    assert view.natives[0] == int(np.median(lengths[:3]))


def test_multi_exemplar_build_validates_and_uses_several_exemplars(multi) -> None:
    lib, out = multi
    report = validate_benchmark(out)
    assert report.ok, report.format_text()
    events = pl.read_parquet(out / "events.parquet")
    atoms = pl.read_parquet(out / "atoms.parquet")
    assert atoms.height == N_LABELS * PER_LABEL and "split" in atoms.columns and "attribution" in atoms.columns
    per_label = events.group_by("label").agg(pl.col("atom_id").n_unique().alias("k"))
    assert per_label["k"].max() == PER_LABEL
    assert (per_label["k"] >= 2).sum() >= N_LABELS * 0.8
    assert events.group_by("clip_id", "label").len()["len"].max() == 1
    # the mode follows the drawn exemplar's own length
    joined = events.join(atoms.select("atom_id", "n_samples"), on="atom_id")
    length = joined["offset_sample"] - joined["onset_sample"]
    expected = np.where(length == joined["n_samples"], "native", np.where(length > joined["n_samples"], "loop", "trim"))
    assert (joined["mode"].to_numpy() == expected).all()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["format_version"] == "2"
    used = manifest["recordings"]
    assert used["n_used"] == events["atom_id"].n_unique()
    assert set(used["licenses"]) == {"CC0-1.0", "CC-BY-4.0"}
    text = (out / "ATTRIBUTION.md").read_text()
    for atom_id in events["atom_id"].unique().to_list():
        assert f"| {atom_id} |" in text
    assert "author 2" in text


def test_exemplar_split_test_builds_from_test_exemplars_only(multi, tmp_path: Path) -> None:
    lib, _ = multi
    out = tmp_path / "test_split"
    build(out, BuildConfig(clips=300, queries_per_task=3, seed=4, atoms=str(lib), exemplar_split="test"), progress=False)
    events = pl.read_parquet(out / "events.parquet")
    assert not any(a.endswith("_0") for a in events["atom_id"].unique().to_list())
    assert set(pl.read_parquet(out / "atoms.parquet")["split"].to_list()) == {"test"}
    assert validate_benchmark(out).ok


def test_exemplar_split_needs_a_split_column(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no split column"):
        build(tmp_path / "x", BuildConfig(clips=50, queries_per_task=0, exemplar_split="test"), progress=False)
    assert not (tmp_path / "x").exists()


def test_same_seed_same_exemplars(multi, tmp_path: Path) -> None:
    lib, out = multi
    again = tmp_path / "again"
    build(again, BuildConfig(clips=400, queries_per_task=5, seed=3, atoms=str(lib), threads=1), progress=False)
    for name in ("manifest.json", "events.parquet", "ATTRIBUTION.md"):
        assert (again / name).read_bytes() == (out / name).read_bytes()


def test_validator_flags_v2_breaches(multi, tmp_path: Path) -> None:
    import shutil

    _, out = multi
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    atoms = pl.read_parquet(bad / "atoms.parquet")
    atoms = atoms.with_columns(
        pl.when(pl.col("atom_id") == "a00_1").then(pl.lit("another phrase")).otherwise(pl.col("phrase")).alias("phrase"),
        pl.when(pl.col("atom_id") == "a01_1").then(pl.lit("dev")).otherwise(pl.col("split")).alias("split"),
    )
    atoms.write_parquet(bad / "atoms.parquet")
    text = validate_benchmark(bad, check_audio=False).format_text(max_examples=10)
    assert "exemplars of label 'bell_low' have different phrases" in text
    assert "split 'dev'" in text
    assert "format_version 1" not in text
    manifest = json.loads((bad / "manifest.json").read_text())
    manifest["format_version"] = "1"
    (bad / "manifest.json").write_text(json.dumps(manifest))
    text = validate_benchmark(bad, check_audio=False).format_text(max_examples=10)
    assert "label=bell_low occurs 3 times (format_version 1 has one atom per label" in text


def test_saved_library_bytes_do_not_depend_on_the_clock(multi, tmp_path: Path) -> None:
    """libsndfile stamps float WAVs with the time (PEAK chunk) unless told not to."""
    import time

    lib = AtomLibrary.load(multi[0])
    small = lib.subset(range(3))
    small.save(tmp_path / "a")
    time.sleep(1.1)
    small.save(tmp_path / "b")
    for name in ("atoms.parquet", "audio/a00_0.wav", "audio/a00_2.wav"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    assert b"PEAK" not in (tmp_path / "a" / "audio" / "a00_0.wav").read_bytes()


def test_exemplars_drawn_on_disk_are_those_drawn_in_memory(multi, monkeypatch) -> None:
    from reasonaudio.builder import plan_build
    from reasonaudio.io import spill

    lib, _ = multi
    config = BuildConfig(clips=500, queries_per_task=5, seed=4, atoms=str(lib), threads=2)
    in_memory = plan_build(config)
    monkeypatch.setattr(spill, "SPILL_CLIPS", 0)
    monkeypatch.setattr(spill, "SPILL_BLOCK", 61)  # blocks that do not align with anything
    on_disk = plan_build(config)
    assert isinstance(on_disk.final["ev_atom"].base, memoryview)
    for key, column in in_memory.final.items():
        assert column.dtype == on_disk.final[key].dtype and np.array_equal(column, on_disk.final[key]), key
    assert on_disk.fingerprint() == in_memory.fingerprint()
