"""`reasonaudio atoms pack debian` on the Debian packages installed here (.ci/run installs them),
and a small benchmark built on it that validates. Skips, naming the apt line, where they are absent."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from reasonaudio.atoms.sources.debian import PACKAGES, REDISTRIBUTABLE, apt_line, missing_packages, read_opensfx_cat, read_pack_table

from reasonaudio.atoms.sources.debian import EXTRA_TABLE  # noqa: E402

MISSING = missing_packages(sorted({r["package"] for r in read_pack_table()}))
needs_packages = pytest.mark.skipif(bool(MISSING), reason=f"Debian sound packages not installed: {apt_line(MISSING)}")
EXTRA_MISSING = missing_packages(sorted({r["package"] for r in read_pack_table(EXTRA_TABLE)}))
needs_extra_packages = pytest.mark.skipif(bool(EXTRA_MISSING), reason=f"Debian sound packages not installed: {apt_line(EXTRA_MISSING)}")


def test_pack_table_is_curated() -> None:
    rows = read_pack_table()
    labels = {r["label"] for r in rows}
    assert len(labels) >= 60
    assert {r["package"] for r in rows} | {r["package"] for r in read_pack_table(EXTRA_TABLE)} == set(PACKAGES)
    first_phrase: dict[str, str] = {}
    for r in rows:
        if r["phrase"]:
            assert first_phrase.setdefault(r["label"], r["phrase"]) == r["phrase"], r
    assert set(first_phrase) == labels  # every label has its phrase
    assert len(set(first_phrase.values())) == len(labels)


def test_missing_package_names_the_apt_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import reasonaudio.atoms.sources.debian as pack

    fake = {n: pack.Package(n, str(tmp_path / "nowhere" / n), p.copyright_prefix) for n, p in PACKAGES.items()}
    monkeypatch.setattr(pack, "PACKAGES", fake)
    from reasonaudio.cli import main

    assert main(["atoms", "pack", "debian", "--out", str(tmp_path / "lib")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.endswith("install with: sudo apt-get install -y lugaru-data minetest-data openttd-opensfx scratch sonic-pi-samples sound-theme-freedesktop")
    assert not (tmp_path / "lib").exists()


@needs_packages
def test_opensfx_archive_titles_carry_license_and_author() -> None:
    sounds = read_opensfx_cat(Path(PACKAGES["openttd-opensfx"].root) / "opensfx.cat")
    license_, credit, wav = sounds["Ship horn"]
    assert license_ == "CC-BY-3.0" and "Leon Milo" in credit and wav[:4] == b"RIFF"
    assert sounds["Cow"][0] == "CC0-1.0"


@pytest.fixture(scope="module")
def pack_and_bench(tmp_path_factory) -> tuple[Path, Path]:
    if MISSING:
        pytest.skip(f"Debian sound packages not installed: {apt_line(MISSING)}")
    root = tmp_path_factory.mktemp("pack")
    lib, bench = root / "debian", root / "bench"
    run = lambda *a: subprocess.run([sys.executable, "-m", "reasonaudio", *a], capture_output=True, text=True)
    done = run("atoms", "pack", "debian", "--out", str(lib), "--split-fraction", "0.3")
    assert done.returncode == 0, done.stderr
    done = run("build", "--atoms", str(lib), "--out", str(bench), "--clips", "600", "--queries-per-task", "6", "--quiet")
    assert done.returncode == 0, done.stderr
    return lib, bench


def test_pack_records_license_source_and_author(pack_and_bench) -> None:
    lib, _ = pack_and_bench
    atoms = pl.read_parquet(lib / "atoms.parquet")
    assert atoms["label"].n_unique() >= 60
    assert atoms.height >= 150
    assert set(atoms["license"]) <= set(REDISTRIBUTABLE)
    assert atoms["source"].str.starts_with("debian:").all()
    assert (atoms["attribution"].str.len_chars() > 0).all()
    assert {"train", "test"} == set(atoms["split"])
    per_label = atoms.group_by("label").len()
    assert (per_label["len"] >= 2).sum() >= 30  # several exemplars where the packages have them
    horn = atoms.filter(pl.col("source").str.ends_with("opensfx.cat:Ship horn")).row(0, named=True)
    assert horn["label"] == "ship_horn" and horn["license"] == "CC-BY-3.0" and "Leon Milo" in horn["attribution"]


def test_benchmark_on_the_pack_validates_and_credits(pack_and_bench) -> None:
    from reasonaudio.validate import validate_benchmark

    _, bench = pack_and_bench
    report = validate_benchmark(bench)
    assert report.ok, report.format_text()
    events = pl.read_parquet(bench / "events.parquet")
    assert events.group_by("label").agg(pl.col("atom_id").n_unique())["atom_id"].max() >= 3
    manifest = json.loads((bench / "manifest.json").read_text())
    assert manifest["format_version"] == "2"
    assert manifest["recordings"]["n_used"] == events["atom_id"].n_unique()
    text = (bench / "ATTRIBUTION.md").read_text()
    assert text.count("| debian:") == events["atom_id"].n_unique()


@needs_packages
def test_without_python_debian_the_error_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    from reasonaudio.atoms.sources.debian import pack_debian
    from reasonaudio.errors import UserError

    real_import = builtins.__import__

    def no_debian(name, *args, **kwargs):
        if name.startswith("debian"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_debian)
    with pytest.raises(UserError, match=r"pip install 'reasonaudio\[atoms\]'"):
        pack_debian(tmp_path / "lib")
    assert not (tmp_path / "lib").exists()


def test_reserved_packages_stay_out_of_every_table() -> None:
    from reasonaudio.atoms.sources.debian import BEDS_TABLE, PACK_TABLE, is_reserved

    # an independent test of the detector on unheard recordings is drawn from these
    assert is_reserved("wesnoth-1.16-data") and is_reserved("tuxpaint-stamps-default") and is_reserved("frozen-bubble-data")
    assert not is_reserved("0ad-data") and not is_reserved("minetest-data")
    assert not any(is_reserved(p) for p in PACKAGES)
    for table in (PACK_TABLE, BEDS_TABLE, EXTRA_TABLE):
        assert not any(is_reserved(r["package"]) for r in read_pack_table(table))


def test_extra_table_speaks_the_packs_vocabulary_from_other_packages() -> None:
    pack = read_pack_table()
    phrase = {r["label"]: r["phrase"] for r in pack if r["phrase"]}
    extra = read_pack_table(EXTRA_TABLE)
    assert len(extra) >= 100
    for r in extra:
        assert phrase.get(r["label"]) == r["phrase"], r  # same label, same phrase: one vocabulary
        assert not r["cut_s"] or 0 < float(r["cut_s"]) <= 10, r
    # its recordings come from packages the pack's test recordings never come from
    assert {r["package"] for r in extra}.isdisjoint({r["package"] for r in pack})
    assert len({(r["package"], r["file"]) for r in extra}) == len(extra)


def test_a_texture_longer_than_the_longest_atom_is_cut_and_faded() -> None:
    import io

    import numpy as np
    import soundfile as sf

    from reasonaudio.atoms.sources.common import Candidate, load_candidate

    noise = (0.3 * np.random.default_rng(0).standard_normal(16000 * 15)).astype(np.float32)
    buf = io.BytesIO()
    sf.write(buf, noise, 16000, format="WAV")
    whole = Candidate("river.wav", None, "flowing_water", "water flowing", "CC0-1.0", data=buf.getvalue())
    assert load_candidate(whole, 16000, 0.15, 10.0)[0] == "length"  # no cut asked: left out, as before
    cut = Candidate("river.wav", None, "flowing_water", "water flowing", "CC0-1.0", data=buf.getvalue(), cut_s=10.0)
    assert load_candidate(cut, 16000, 0.15, 10.0) is None
    assert len(cut.audio) == 160000 and abs(float(cut.audio[-1])) < 1e-3 < float(np.abs(cut.audio[-2000:-800]).max())


@needs_extra_packages
def test_extra_pack_is_training_only(tmp_path: Path) -> None:
    run = lambda *a: subprocess.run([sys.executable, "-m", "reasonaudio", *a], capture_output=True, text=True)
    refused = run("atoms", "pack", "debian-extra", "--out", str(tmp_path / "x"), "--split-fraction", "0.3")
    assert refused.returncode == 2 and "training-only" in refused.stderr and not (tmp_path / "x").exists()
    done = run("atoms", "pack", "debian-extra", "--out", str(tmp_path / "extra"))
    assert done.returncode == 0, done.stderr
    atoms = pl.read_parquet(tmp_path / "extra" / "atoms.parquet")
    assert set(atoms["split"]) == {"train"}
    assert atoms.height >= 0.9 * len(read_pack_table(EXTRA_TABLE))
    assert atoms["duration_s"].max() <= 10.0 + 1e-6
    assert set(atoms["license"]) <= set(REDISTRIBUTABLE)
    zipped = atoms.filter(pl.col("source").str.contains("public.zip:audio/"))
    assert zipped.height > 0 and zipped["license"].unique().to_list() == ["CC-BY-SA-3.0"]
