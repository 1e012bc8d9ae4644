"""Detect-then-reason end to end on a tiny library: train for seconds, detect, rank, eval.

An eight-atom library (one atom of each of eight procedural families) is trained for 40 steps;
that is enough for the tagger to find a loud isolated atom, and for `eval --model detect:MODEL`
to run on a folder holding only beir/ and audio/.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import numpy as np
import polars as pl
import pytest
import soundfile as sf

pytest.importorskip("torch")
pytest.importorskip("scipy")

from reasonaudio.atoms import AtomLibrary  # noqa: E402
from reasonaudio.detect.model import Detector  # noqa: E402
from reasonaudio.detect.train import TrainConfig, train, train_cached  # noqa: E402

FAMILIES = ("bells", "sirens", "rain", "drums", "whistles", "engines", "chirps", "alarms")
TINY = TrainConfig(steps=40, batch=8, channels=32, crop_s=6.0, valid_clips=8, lr=1e-2)


def _env():
    # the subprocess imports reasonaudio exactly as this test process does (the installed build,
    # or whatever PYTHONPATH names): never the checkout's python/ folder, which has no extension
    return dict(os.environ)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("detect")
    lib = AtomLibrary.procedural()
    first: dict[str, int] = {}
    for i, fam in enumerate(lib.families):
        first.setdefault(fam, i)
    pick = [first[f] for f in FAMILIES]
    audio = [lib.audio(i) for i in pick]
    sub = AtomLibrary(
        atom_ids=[lib.atom_ids[i] for i in pick], labels=[lib.labels[i] for i in pick], phrases=[lib.phrases[i] for i in pick],
        families=[lib.families[i] for i in pick], sources=[lib.sources[i] for i in pick], licenses=[lib.licenses[i] for i in pick],
        sample_rate=lib.sample_rate, audio_flat=np.concatenate(audio),
        offsets=np.concatenate([[0], np.cumsum([len(a) for a in audio])]).astype(np.uint64),
    )
    sub.save(root / "lib")
    detector = train(str(root / "lib"), TINY, progress=False)
    model = detector.save(root / "model.pt")
    return {"root": root, "lib": sub, "model": model, "detector": detector}


def test_training_learns_and_the_model_file_round_trips(tiny):
    d = tiny["detector"]
    assert d.training.steps_done == TINY.steps
    assert d.training.valid_train_recordings["frame_f1"] > 0.6  # mixtures from seeds no training batch used
    loaded = Detector.load(tiny["model"])
    assert loaded.labels == d.labels and loaded.library.hash == d.library.hash
    assert all(np.array_equal(loaded.state_dict[k].numpy(), v.numpy()) for k, v in d.state_dict.items())


def test_a_loud_isolated_atom_is_found_with_its_label_and_timing(tiny, tmp_path):
    from reasonaudio.detect.infer import detect

    lib, sr = tiny["lib"], tiny["lib"].sample_rate
    k = 3
    atom = lib.audio(k)
    clip = np.zeros(int(8 * sr), np.float32)
    clip[int(2.0 * sr) : int(2.0 * sr) + len(atom)] = atom
    sf.write(tmp_path / "one.wav", clip, sr, subtype="PCM_16")
    index = detect(Detector.load(tiny["model"]), [tmp_path / "one.wav"], ["one"], progress=False)
    table = index.table()
    assert table.height >= 1
    best = table.sort("confidence", descending=True).row(0, named=True)
    assert best["label"] == lib.labels[k]
    assert abs(best["onset_s"] - 2.0) < 0.3 and abs(best["offset_s"] - (2.0 + len(atom) / sr)) < 0.4
    assert index.presence[0, k] == index.presence[0].max()


def test_training_is_cached_by_library_hash(tiny, monkeypatch, tmp_path):
    monkeypatch.setenv("REASONAUDIO_CACHE", str(tmp_path / "cache"))
    cfg = TrainConfig(steps=2, batch=2, channels=8, crop_s=3.0, valid_clips=2)
    first, path = train_cached(str(tiny["root"] / "lib"), cfg, progress=False)
    assert path.is_file() and path.name.startswith(first.library.hash[:16])
    again, path2 = train_cached(str(tiny["root"] / "lib"), cfg, progress=False)
    assert path2 == path and again.training == first.training  # loaded, not retrained


def test_cli_run_writes_events_and_metrics_and_eval_needs_only_beir_and_audio(tiny):
    pytest.importorskip("sed_scores_eval")
    from reasonaudio.builder import BuildConfig, build

    root = tiny["root"]
    bench = build(root / "bench", BuildConfig(atoms=str(root / "lib"), clips=40, queries_per_task=2, max_clip_s=12.0,
                                              plan={"max_events": 4}), progress=False)
    run = subprocess.run(
        [sys.executable, "-m", "reasonaudio", "detect", "run", str(tiny["model"]), str(bench), "--out", str(root / "pred.parquet"),
         "--metrics", str(root / "sed.json"), "--quiet"],
        capture_output=True, text=True, env=_env(),
    )
    assert run.returncode == 0, run.stderr
    again = subprocess.run(
        [sys.executable, "-m", "reasonaudio", "detect", "run", str(tiny["model"]), str(bench), "--out", str(root / "pred2.parquet"), "--quiet"],
        capture_output=True, text=True, env=_env(),
    )
    assert again.returncode == 0, again.stderr
    assert (root / "pred.parquet").read_bytes() == (root / "pred2.parquet").read_bytes()  # same model, same audio: same bytes
    pred = pl.read_parquet(root / "pred.parquet")
    truth = pl.read_parquet(bench / "events.parquet")
    assert set(pred["clip_id"]) <= set(truth["clip_id"]) and pred.height > 0
    assert set(truth.columns) - {"mode"} <= set(pred.columns) and "confidence" in pred.columns
    sed = json.loads((root / "sed.json").read_text())
    assert sed["library"] == "sed_scores_eval" and 0.0 < sed["event_based"]["micro_f1"] <= 1.0 and sed["psds1"] is not None

    only = root / "only"
    only.mkdir()
    shutil.copytree(bench / "beir", only / "beir")
    shutil.copytree(bench / "audio", only / "audio")
    ev = subprocess.run(
        [sys.executable, "-m", "reasonaudio", "eval", str(only / "beir"), "--model", f"detect:{tiny['model']}", "--out",
         str(root / "res"), "--quiet", "--no-figures", "--bootstrap", "0"],
        capture_output=True, text=True, env=_env(),
    )
    assert ev.returncode == 0, ev.stderr
    res = json.loads((root / "res" / "results.json").read_text())
    setting = res["settings"]["model"]
    assert setting["vocabulary"]["labels"] == len(FAMILIES) and setting["unparsed_queries"] == []
    assert "mixtures" in setting["training_data"] and setting["exemplar_split"] is None
    assert res["summary"]["acc@1"]["Avg"]["mean"] > 0.0
    ranks = pl.read_parquet(root / "res" / "rankings.parquet")
    top = ranks.filter(pl.col("rank") <= 2)
    assert top["score"].n_unique() > 1  # graded, not a 0/1 verdict


def test_bad_model_file_is_a_clear_error(tmp_path):
    bad = tmp_path / "model.pt"
    bad.write_bytes(b"not a model")
    (tmp_path / "audio").mkdir()  # the output may not lie inside the audio folder, an input
    run = subprocess.run([sys.executable, "-m", "reasonaudio", "detect", "run", str(bad), str(tmp_path / "audio"), "--out", str(tmp_path / "x.parquet")],
                         capture_output=True, text=True, env=_env())
    assert run.returncode == 2 and "not a reasonaudio detector model" in run.stderr and "Traceback" not in run.stderr


def test_cli_train_writes_a_model_file(tmp_path):
    out = tmp_path / "m.pt"
    run = subprocess.run(
        [sys.executable, "-m", "reasonaudio", "detect", "train", "procedural", "--out", str(out), "--labels", "3", "--steps", "2",
         "--batch", "2", "--channels", "8", "--valid-clips", "2", "--quiet"],
        capture_output=True, text=True, env=_env(),
    )
    assert run.returncode == 0, run.stderr
    d = Detector.load(out)
    assert len(d.labels) == 3 and d.training.steps_done == 2
    assert "mixtures of training recordings: frame F1" in run.stdout and "mixtures of held-out recordings: frame F1" in run.stdout
    # --force: the earlier model may be replaced (without it that refusal comes first), so the bad option is what fails
    bad = subprocess.run([sys.executable, "-m", "reasonaudio", "detect", "train", "procedural", "--labels", "0", "--out", str(out), "--force"],
                         capture_output=True, text=True, env=_env())
    assert bad.returncode == 2 and "--labels must be within 1..200" in bad.stderr
    assert Detector.load(out).training.steps_done == 2  # the earlier model is kept


def test_exemplars_of_one_label_are_one_class_and_only_train_exemplars_train(tmp_path):
    """Contract v2: a label's exemplars share one output of the detector, and a library with a split
    trains on its `train` exemplars (a --exemplar-split test benchmark is then unheard audio)."""
    lib = AtomLibrary.procedural()
    first: dict[str, int] = {}
    for i, fam in enumerate(lib.families):
        first.setdefault(fam, i)
    pick = [first[f] for f in FAMILIES[:4]]
    ids, labels, phrases, chunks, splits = [], [], [], [], []
    for i in pick:
        for k, split in enumerate(("train", "test", "train")):
            ids.append(f"{lib.atom_ids[i]}_{k}")
            labels.append(lib.labels[i])
            phrases.append(lib.phrases[i])
            chunks.append(lib.audio(i) * (0.5 + 0.25 * k))
            splits.append(split)
    multi = AtomLibrary(
        atom_ids=ids, labels=labels, phrases=phrases, families=["test"] * len(ids), sources=ids,
        licenses=["CC0-1.0"] * len(ids), sample_rate=lib.sample_rate, audio_flat=np.concatenate(chunks).astype(np.float32),
        offsets=np.concatenate([[0], np.cumsum([len(c) for c in chunks])]).astype(np.uint64), splits=splits,
    )
    multi.save(tmp_path / "multi")
    detector = train(str(tmp_path / "multi"), TrainConfig(steps=3, batch=4, channels=16, crop_s=4.0, valid_clips=4), progress=False)
    assert detector.labels == [lib.labels[i] for i in pick]
    assert detector.library.exemplar_split == "train"
    assert list(detector.library.atom_ids) == [a for a, s in zip(ids, splits) if s == "train"]
