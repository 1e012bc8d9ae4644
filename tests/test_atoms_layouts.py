"""`atoms import` on small folders written here in the exact FSD50K, ESC-50, UrbanSound8K and
class-folder layouts: ancestors cut back to the leaf, multi-leaf rows skipped, licenses and
uploaders carried, non-commercial clips excluded on request, padded clips trimmed, background
slices skipped, several exemplars per label, seeded --per-label and --split-fraction."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import soundfile as sf

from reasonaudio.atoms.sources import default_phrase, import_atoms, is_non_commercial, read_phrase_table
from reasonaudio.atoms import AtomLibrary
from reasonaudio.errors import UserError


def tone(sr: int, seconds: float, freq: float, channels: int = 1, pad_to: float | None = None) -> np.ndarray:
    t = np.arange(int(sr * seconds)) / sr
    x = 0.3 * np.sin(2 * np.pi * freq * t) * np.hanning(len(t)) ** 0.1
    if pad_to is not None:  # ESC-50 style: zeros after the sound up to the clip length
        x = np.concatenate([x, np.zeros(int(sr * pad_to) - len(x))])
    return np.stack([x] * channels, axis=1) if channels > 1 else x


BY = "http://creativecommons.org/licenses/by/3.0/"
BY_NC = "http://creativecommons.org/licenses/by-nc/3.0/"
CC0 = "http://creativecommons.org/publicdomain/zero/1.0/"
ANIMAL = "Domestic_animals_and_pets,Animal"
MUSIC = "Plucked_string_instrument,Musical_instrument,Music"
# (part, fname, labels as FSD50K writes them: the leaf, then every ancestor; license; uploader)
FSD_ROWS = [
    ("dev", "101", f"Bark,Dog,{ANIMAL}", BY, "alice"),
    ("dev", "102", f"Bark,Dog,{ANIMAL}", CC0, "bob"),
    ("dev", "103", f"Meow,Cat,{ANIMAL}", BY_NC, "carol"),
    ("dev", "104", f"Dog,{ANIMAL}", BY, "dave"),  # finest class Dog: a parent of Bark
    ("dev", "105", f"Electric_guitar,Bass_guitar,Guitar,{MUSIC}", BY, "erin"),  # two leaves
    ("dev", "106", f"Electric_guitar,Guitar,{MUSIC}", BY, "frank"),
    ("dev", "107", f"Bass_guitar,Guitar,{MUSIC}", CC0, "grace"),
    ("dev", "108", "Tools,Hammer", CC0, "heidi"),  # ancestor written first: only an ontology tells
    ("eval", "201", f"Bark,Dog,{ANIMAL}", BY, "ivan"),
    ("eval", "202", f"Meow,Cat,{ANIMAL}", CC0, "judy"),
]
MIDS = {
    "Bark": "/m/05tny_", "Dog": "/m/0bt9lr", "Domestic_animals_and_pets": "/m/068hy", "Animal": "/m/0jbk",
    "Meow": "/m/07qrkrw", "Cat": "/m/01yrx", "Electric_guitar": "/m/02sgy", "Bass_guitar": "/m/018vs",
    "Guitar": "/m/0342h", "Plucked_string_instrument": "/m/0fx80y", "Musical_instrument": "/m/04szw",
    "Music": "/m/04rlf", "Hammer": "/m/03l9g", "Tools": "/m/07k1x",
}


def make_fsd50k(root: Path) -> Path:
    src = root / "fsd"
    for d in ("FSD50K.dev_audio", "FSD50K.eval_audio", "FSD50K.ground_truth", "FSD50K.metadata"):
        (src / d).mkdir(parents=True)
    tables = {"dev": ["fname,labels,mids,split"], "eval": ["fname,labels,mids"]}
    info: dict[str, dict] = {"dev": {}, "eval": {}}
    for k, (part, fname, labels, lic, uploader) in enumerate(FSD_ROWS):
        # FSD50K audio: 44.1 kHz PCM; one clip stereo 24-bit, to go through the mixdown
        channels, subtype = (2, "PCM_24") if fname == "102" else (1, "PCM_16")
        sf.write(src / f"FSD50K.{part}_audio" / f"{fname}.wav", tone(44100, 0.8 + 0.1 * k, 300 + 90 * k, channels), 44100, subtype=subtype)
        mids = ",".join(MIDS[x] for x in labels.split(","))
        row = f'{fname},"{labels}","{mids}"' + (",train" if part == "dev" else "")
        tables[part].append(row)
        info[part][fname] = {"title": f"clip {fname}", "description": "", "tags": [], "license": lic, "uploader": uploader}
    for part, lines in tables.items():
        (src / "FSD50K.ground_truth" / f"{part}.csv").write_text("\n".join(lines) + "\n")
        (src / "FSD50K.metadata" / f"{part}_clips_info_FSD50K.json").write_text(json.dumps(info[part]))
    vocab = [f"{i},{name},{mid}" for i, (name, mid) in enumerate(MIDS.items())]
    (src / "FSD50K.ground_truth" / "vocabulary.csv").write_text("\n".join(vocab) + "\n")
    return src


def make_ontology(path: Path) -> Path:
    children = {
        "Animal": ["Domestic_animals_and_pets"], "Domestic_animals_and_pets": ["Dog", "Cat"], "Dog": ["Bark"],
        "Cat": ["Meow"], "Music": ["Musical_instrument"], "Musical_instrument": ["Plucked_string_instrument"],
        "Plucked_string_instrument": ["Guitar"], "Guitar": ["Electric_guitar", "Bass_guitar"], "Tools": ["Hammer"],
    }
    nodes = [{"id": MIDS[n], "name": n, "child_ids": [MIDS[c] for c in children.get(n, [])]} for n in MIDS]
    path.write_text(json.dumps(nodes))
    return path


def test_fsd50k_leaf_classes_licenses_and_splits(tmp_path: Path) -> None:
    src = make_fsd50k(tmp_path)
    report = import_atoms(src, tmp_path / "lib")  # layout auto-detected
    lib = AtomLibrary.load(tmp_path / "lib")
    frame = pl.read_parquet(tmp_path / "lib" / "atoms.parquet")
    got = dict(zip(frame["source"].to_list(), frame["label"].to_list()))
    assert got == {
        "FSD50K.dev_audio/101.wav": "Bark", "FSD50K.dev_audio/102.wav": "Bark", "FSD50K.dev_audio/103.wav": "Meow",
        "FSD50K.dev_audio/106.wav": "Electric_guitar", "FSD50K.dev_audio/107.wav": "Bass_guitar",
        "FSD50K.eval_audio/201.wav": "Bark", "FSD50K.eval_audio/202.wav": "Meow",
        # label sets alone cannot order two labels that always come together: FSD50K's order
        # (leaf first) decides, so this contrived row needs an ontology (next test)
        "FSD50K.dev_audio/108.wav": "Tools",
    }
    assert lib.n_labels == 5 and len(lib) == 8
    skipped = dict(report.skipped)
    assert "2 leaf classes (Electric_guitar, Bass_guitar)" in skipped["FSD50K.dev_audio/105.wav"]
    assert "hierarchical label: its finest class Dog is a parent of Bark" in skipped["FSD50K.dev_audio/104.wav"]
    row = frame.filter(pl.col("source") == "FSD50K.dev_audio/103.wav").row(0, named=True)
    assert row["license"] == "CC-BY-NC-3.0" and row["attribution"] == "carol, https://freesound.org/s/103/"
    assert row["phrase"] == "a cat meowing" and row["split"] == "train"
    assert frame.filter(pl.col("source") == "FSD50K.dev_audio/102.wav")["license"].item() == "CC0-1.0"
    assert frame.filter(pl.col("source").str.starts_with("FSD50K.eval"))["split"].unique().to_list() == ["test"]
    assert set(frame.filter(pl.col("label") == "Bark")["phrase"]) == {"a dog barking"}
    # the library returns its report (a script importing reasonaudio sees no output); `atoms import` prints it
    assert "not a single-source clip" in str(report)


def test_fsd50k_exclude_nc_and_ontology(tmp_path: Path) -> None:
    src = make_fsd50k(tmp_path)
    onto = make_ontology(tmp_path / "ontology.json")
    report = import_atoms(src, tmp_path / "lib", exclude_license=["nc"], ontology=onto)
    frame = pl.read_parquet(tmp_path / "lib" / "atoms.parquet")
    assert "FSD50K.dev_audio/103.wav" not in frame["source"].to_list()
    assert not any(is_non_commercial(x) for x in frame["license"])
    assert dict(report.skipped)["FSD50K.dev_audio/103.wav"].startswith("non-commercial license: CC-BY-NC-3.0")
    # the ontology knows Hammer is under Tools, which the lone clip's label set cannot show
    assert frame.filter(pl.col("source") == "FSD50K.dev_audio/108.wav")["label"].item() == "Hammer"


def make_esc50(root: Path) -> Path:
    src = root / "esc"
    (src / "audio").mkdir(parents=True)
    (src / "meta").mkdir()
    rows = ["filename,fold,target,category,esc10,src_file,take"]
    clips = [("1-100032-A-0.wav", 1, 0, "dog", "100032", 0.9), ("1-110389-A-0.wav", 1, 0, "dog", "110389", 1.3),
             ("2-114587-A-0.wav", 2, 0, "dog", "114587", 0.7), ("1-103298-A-9.wav", 1, 9, "crow", "103298", 1.1),
             ("3-151081-A-9.wav", 3, 9, "crow", "151081", 1.6), ("4-181286-A-10.wav", 4, 10, "rain", "181286", 2.0)]
    for k, (name, fold, target, cat, src_file, secs) in enumerate(clips):
        sf.write(src / "audio" / name, tone(44100, secs, 250 + 150 * k, pad_to=5.0), 44100, subtype="PCM_16")
        rows.append(f"{name},{fold},{target},{cat},{'True' if cat == 'dog' else 'False'},{src_file},A")
    (src / "meta" / "esc50.csv").write_text("\n".join(rows) + "\n")
    return src


def test_esc50_padded_clips_trimmed_and_phrases(tmp_path: Path) -> None:
    src = make_esc50(tmp_path)
    import_atoms(src, tmp_path / "lib", layout="esc50")
    lib = AtomLibrary.load(tmp_path / "lib")
    assert lib.labels == ["crow", "crow", "dog", "dog", "dog", "rain"]
    # 5-s clips padded with zeros after the sound: the padding is gone
    assert np.all(lib.durations_s < 2.1) and abs(lib.durations_s[0] - 1.1) < 0.05
    assert lib.phrases[2] == "a dog barking" and lib.phrases[0] == "a crow cawing"
    assert set(lib.licenses) == {"CC-BY-NC-3.0"}
    assert lib.attributions[2].startswith("Freesound clip 100032")


def test_esc50_per_label_is_seeded_and_nc_exclusion_refuses(tmp_path: Path) -> None:
    src = make_esc50(tmp_path)
    a = import_atoms(src, tmp_path / "a", per_label=2, seed=1)
    b = import_atoms(src, tmp_path / "b", per_label=2, seed=1)
    assert a.imported == b.imported and len(a.imported) == 5
    assert sum(1 for _, lab in a.imported if lab == "dog") == 2
    assert any("beyond --per-label 2" in reason for _, reason in a.skipped)
    assert (tmp_path / "a" / "atoms.parquet").read_bytes() == (tmp_path / "b" / "atoms.parquet").read_bytes()
    with pytest.raises(UserError, match="no usable audio files found .*non-commercial license"):
        import_atoms(src, tmp_path / "c", exclude_license=["nc"])
    assert not (tmp_path / "c").exists()


def make_urbansound8k(root: Path) -> Path:
    src = root / "us8k"
    (src / "metadata").mkdir(parents=True)
    rows = ["slice_file_name,fsID,start,end,salience,fold,classID,class"]
    slices = [("100032-3-0-0.wav", 100032, 1, 1, 3, "dog_bark"), ("100263-2-0-117.wav", 100263, 1, 5, 2, "children_playing"),
              ("102305-6-0-0.wav", 102305, 2, 1, 6, "gun_shot"), ("7061-6-0-0.wav", 7061, 1, 2, 6, "gun_shot"),
              ("7383-3-0-0.wav", 7383, 2, 2, 3, "dog_bark")]
    for k, (name, fsid, salience, fold, class_id, cls) in enumerate(slices):
        (src / "audio" / f"fold{fold}").mkdir(parents=True, exist_ok=True)
        sf.write(src / "audio" / f"fold{fold}" / name, tone(22050, 0.8 + 0.2 * k, 400 + 100 * k, channels=2), 22050)
        rows.append(f"{name},{fsid},0.0,{0.8 + 0.2 * k:.3f},{salience},{fold},{class_id},{cls}")
    (src / "metadata" / "UrbanSound8K.csv").write_text("\n".join(rows) + "\n")
    return src


def test_urbansound8k_keeps_foreground_slices(tmp_path: Path) -> None:
    src = make_urbansound8k(tmp_path)
    report = import_atoms(src, tmp_path / "lib")
    lib = AtomLibrary.load(tmp_path / "lib")
    assert lib.labels == ["children_playing", "dog_bark", "gun_shot"]
    assert lib.sources == ["audio/fold5/100263-2-0-117.wav", "audio/fold1/100032-3-0-0.wav", "audio/fold2/7061-6-0-0.wav"]
    assert lib.phrases == ["children playing", "a dog barking", "a gunshot"]
    assert sorted(f for f, _ in report.skipped) == ["audio/fold1/102305-6-0-0.wav", "audio/fold2/7383-3-0-0.wav"]
    assert all("salience 2" in reason for _, reason in report.skipped)


def make_folders(root: Path) -> Path:
    src = root / "classes"
    for label, files in {"dog_bark": ["a.wav", "b.flac", "c.ogg", "d.wav", "e.wav"], "Walk_and_footsteps": ["s1.wav", "s2.ogg", "s3.aiff"]}.items():
        (src / label).mkdir(parents=True)
        for k, name in enumerate(files):
            sf.write(src / label / name, tone(48000 if name.endswith(".ogg") else 32000, 0.6 + 0.1 * k, 300 + 200 * k + 50 * len(label)),
                     48000 if name.endswith(".ogg") else 32000)
    return src


def test_class_folders_many_exemplars_split_and_phrase_override(tmp_path: Path) -> None:
    src = make_folders(tmp_path)
    phrases = tmp_path / "phrases.csv"
    phrases.write_text("label,phrase\ndog_bark,a dog barking loudly\n")
    import_atoms(src, tmp_path / "lib", phrases_csv=phrases, split_fraction=0.4, seed=3)
    lib = AtomLibrary.load(tmp_path / "lib")
    assert lib.labels == ["Walk_and_footsteps"] * 3 + ["dog_bark"] * 5
    assert lib.phrases[0] == default_phrase("Walk_and_footsteps") == "walk and footsteps"
    assert lib.phrases[3] == "a dog barking loudly"
    assert {s.rsplit(".", 1)[1] for s in lib.sources} == {"wav", "flac", "ogg", "aiff"}
    splits = dict(zip(lib.sources, lib.splits))
    dog = [splits[s] for s in lib.sources if s.startswith("dog_bark/")]
    walk = [splits[s] for s in lib.sources if s.startswith("Walk")]
    assert dog.count("test") == 2 and walk.count("test") == 1 and walk.count("train") == 2
    # labels load in parallel: one thread or four, the same bytes
    import_atoms(src, tmp_path / "again", phrases_csv=phrases, split_fraction=0.4, seed=3, threads=1)
    import_atoms(src, tmp_path / "four", phrases_csv=phrases, split_fraction=0.4, seed=3, threads=4)
    for name in ("atoms.parquet", "audio/atom_003.wav"):
        assert (tmp_path / "again" / name).read_bytes() == (tmp_path / "lib" / name).read_bytes() == (tmp_path / "four" / name).read_bytes()


def test_curated_phrase_tables_are_unique_and_cover_the_vocabularies() -> None:
    for name, n in (("fsd50k_phrases.csv", 200), ("esc50_phrases.csv", 50), ("urbansound8k_phrases.csv", 10)):
        table = read_phrase_table(packaged=name)
        assert len(table) == n, name
        assert len(set(table.values())) == n, f"{name}: two labels share a phrase"
    assert read_phrase_table(packaged="fsd50k_phrases.csv")["Walk_and_footsteps"] == "footsteps"


def test_cli_layout_import_and_one_line_refusal(tmp_path: Path) -> None:
    src = make_esc50(tmp_path)
    run = lambda *a: subprocess.run([sys.executable, "-m", "reasonaudio", "atoms", *a], capture_output=True, text=True)
    done = run("import", str(src), "--out", str(tmp_path / "lib"), "--layout", "esc50", "--per-label", "1")
    assert done.returncode == 0, done.stderr
    assert "imported 3 atom(s) of 3 label(s)" in done.stdout
    bad = run("import", str(src), "--out", str(tmp_path / "nc"), "--exclude-license", "nc")
    assert bad.returncode == 2 and "non-commercial" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
    listed = run("list", str(tmp_path / "lib"))
    assert listed.returncode == 0 and "a dog barking" in listed.stdout


# --- one-shot sounds, unknown licenses, malformed rows, contradictory tables ----------------------------

def test_one_shot_sounds_are_imported(tmp_path: Path) -> None:
    """A 0.1-s clap and a 0.09-s snap (ESC-50 and FSD50K label such sounds) are kept: only a recording
    shorter than the contract's 0.05-s audibility window is too short to import."""
    src = tmp_path / "src"
    for label, seconds, freq in (("clap", 0.1, 2000.0), ("finger_snap", 0.09, 3000.0), ("dog", 1.0, 500.0), ("tick", 0.03, 4000.0)):
        (src / label).mkdir(parents=True)
        sf.write(src / label / f"{label}.wav", tone(16000, seconds, freq), 16000)
    report = import_atoms(src, tmp_path / "lib", layout="folders", skip_bad=True)
    lib = AtomLibrary.load(tmp_path / "lib")
    assert sorted(lib.labels) == ["clap", "dog", "finger_snap"] and len(lib) == 3
    assert min(lib.durations_s) < 0.11
    assert [f for f, _ in report.rejected] == ["tick/tick.wav"]
    assert "< 0.05 s" in report.rejected[0][1]


def test_fsd50k_without_metadata_and_exclude_nc(tmp_path: Path) -> None:
    """Without FSD50K.metadata every license is unknown: --exclude-license nc leaves those clips out
    (a CC-BY-NC clip cannot be told apart) instead of letting them in as "unspecified"."""
    import shutil

    src = make_fsd50k(tmp_path)
    shutil.rmtree(src / "FSD50K.metadata")
    plain = import_atoms(src, tmp_path / "all")
    assert len(plain.imported) == 8
    assert set(pl.read_parquet(tmp_path / "all" / "atoms.parquet")["license"]) == {"unspecified"}
    with pytest.raises(UserError, match=r"no usable audio files found \(10 skipped: 8 x license unknown"):
        import_atoms(src, tmp_path / "nc", exclude_license=["nc"])
    assert not (tmp_path / "nc").exists()


def test_fsd50k_malformed_row_is_reported_and_the_class_kept(tmp_path: Path) -> None:
    """An unquoted labels cell splits into extra cells; read shifted, its lone `Bark` made Dog look like
    no ancestor of Bark and every Bark clip a two-leaf clip. The row is reported, the others kept."""
    src = make_fsd50k(tmp_path)
    sf.write(src / "FSD50K.dev_audio" / "109.wav", tone(44100, 0.9, 800), 44100)
    dev = src / "FSD50K.ground_truth" / "dev.csv"
    dev.write_text(dev.read_text() + f"109,Bark,Dog,{ANIMAL},{MIDS['Bark']},train\n")
    clean = import_atoms(make_fsd50k(tmp_path / "clean"), tmp_path / "clean_lib")
    report = import_atoms(src, tmp_path / "lib")
    assert sorted(report.imported) == sorted(clean.imported)  # the same exemplars: all three Bark clips
    assert sum(1 for _, lab in report.imported if lab == "Bark") == 3
    skipped = dict(report.skipped)
    assert "malformed row: 7 cell(s), the header has 4" in skipped["FSD50K.ground_truth/dev.csv line 10"]


def test_labels_csv_duplicate_rows_and_two_labels_for_one_file(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name, freq in (("a.wav", 400.0), ("b.wav", 600.0), ("c.wav", 800.0)):
        sf.write(src / name, tone(16000, 1.0, freq), 16000)
    labels = tmp_path / "labels.csv"
    labels.write_text("file,label\na.wav,dog\na.wav,dog\nb.wav,cat\nc.wav,cat\nc.wav,bird\n")
    with pytest.raises(UserError) as err:
        import_atoms(src, tmp_path / "lib", layout="csv", labels_csv=labels)
    assert "c.wav: labels.csv line 6: listed under label 'bird' and under 'cat' in labels.csv line 5" in str(err.value)
    report = import_atoms(src, tmp_path / "lib", layout="csv", labels_csv=labels, skip_bad=True)
    assert sorted(report.imported) == [("a.wav", "dog"), ("b.wav", "cat")]  # a.wav once; c.wav under neither label
    assert dict(report.skipped)["a.wav"] == "duplicate row: labels.csv line 3 repeats labels.csv line 2 (imported once)"


def test_phrase_table_with_two_phrases_for_a_label_names_both_rows(tmp_path: Path) -> None:
    table = tmp_path / "phrases.csv"
    table.write_text("label,phrase\ndog,a dog barking\ncat,a cat\ndog,a dog howling\n")
    with pytest.raises(UserError, match=r"phrases.csv lines 2 and 4: two phrases for label 'dog' \('a dog barking' and 'a dog howling'\)"):
        read_phrase_table(table)
    table.write_text("label,phrase\ndog,a dog barking\ndog,a dog barking\n")  # the same phrase twice is no contradiction
    assert read_phrase_table(table) == {"dog": "a dog barking"}


def test_one_shot_sounds_in_the_dataset_layouts_keep_every_exemplar(tmp_path: Path) -> None:
    """ESC-50 and FSD50K, as laid out: one-shot clips (0.09-0.2 s of sound; ESC-50 pads them to 5 s)
    are imported with every exemplar of their label; only a clip shorter than the 0.05-s audibility
    window is skipped (a dataset clip is skipped and reported, not an error)."""
    esc = make_esc50(tmp_path)
    rows = [(f"5-9{k}0000-A-22.wav", 5, 22, "clapping", f"9{k}0000", s) for k, s in enumerate((0.1, 0.15, 0.2))]
    rows += [("5-990000-A-44.wav", 5, 44, "water_drops", "990000", 0.09), ("5-991000-A-44.wav", 5, 44, "water_drops", "991000", 0.03)]
    meta = esc / "meta" / "esc50.csv"
    lines = meta.read_text().splitlines()
    for k, (name, fold, target, cat, src_file, secs) in enumerate(rows):
        sf.write(esc / "audio" / name, tone(44100, secs, 1500 + 300 * k, pad_to=5.0), 44100, subtype="PCM_16")
        lines.append(f"{name},{fold},{target},{cat},False,{src_file},A")
    meta.write_text("\n".join(lines) + "\n")
    report = import_atoms(esc, tmp_path / "esc_lib", layout="esc50")
    counts = pl.read_parquet(tmp_path / "esc_lib" / "atoms.parquet")["label"].value_counts()
    assert dict(counts.iter_rows()) == {"crow": 2, "dog": 3, "rain": 1, "clapping": 3, "water_drops": 1}
    skipped = dict(report.skipped)
    assert list(skipped) == ["audio/5-991000-A-44.wav"] and "< 0.05 s" in skipped["audio/5-991000-A-44.wav"]

    fsd = make_fsd50k(tmp_path / "f")
    sf.write(fsd / "FSD50K.dev_audio" / "301.wav", tone(44100, 0.09, 3000), 44100)
    sf.write(fsd / "FSD50K.eval_audio" / "302.wav", tone(44100, 0.12, 3300), 44100)
    for part, fname in (("dev", "301"), ("eval", "302")):
        table = fsd / "FSD50K.ground_truth" / f"{part}.csv"
        table.write_text(table.read_text() + f'{fname},"Finger_snapping","/m/025_jnm"' + (",train\n" if part == "dev" else "\n"))
        info = fsd / "FSD50K.metadata" / f"{part}_clips_info_FSD50K.json"
        clips = json.loads(info.read_text())
        clips[fname] = {"title": "snap", "description": "", "tags": [], "license": CC0, "uploader": "kim"}
        info.write_text(json.dumps(clips))
    vocab = fsd / "FSD50K.ground_truth" / "vocabulary.csv"
    vocab.write_text(vocab.read_text() + f"{len(MIDS)},Finger_snapping,/m/025_jnm\n")
    import_atoms(fsd, tmp_path / "fsd_lib")
    frame = pl.read_parquet(tmp_path / "fsd_lib" / "atoms.parquet")
    assert dict(frame["label"].value_counts().iter_rows()) == {
        "Bark": 3, "Meow": 2, "Electric_guitar": 1, "Bass_guitar": 1, "Tools": 1, "Finger_snapping": 2}
    snaps = frame.filter(pl.col("label") == "Finger_snapping").sort("source")
    assert snaps["split"].to_list() == ["train", "test"] and snaps["duration_s"].max() < 0.13
