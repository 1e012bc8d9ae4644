"""End-to-end builds on small corpora: layout, guarantees, determinism, refusals."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import soundfile as sf
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonaudio.builder import BuildConfig, build
from reasonaudio.cli import main
from reasonaudio.io.benchmark import TASKS, load_benchmark
from reasonaudio.queries import parse_query
from reasonaudio.validate import validate_benchmark

SMALL = dict(clips=300, queries_per_task=6, seed=5)


def _tree_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def small_bench(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "small"
    build(out, BuildConfig(**SMALL, threads=2), progress=False)
    return out


def test_layout_and_counts(small_bench: Path) -> None:
    bench = load_benchmark(small_bench)
    for name in ("manifest.json", "beir/corpus.jsonl", "beir/queries.jsonl", "beir/qrels/test.tsv"):
        assert (small_bench / name).is_file(), name
    assert bench.clips.height == 300
    assert bench.clips["pattern"].value_counts().sort("pattern").rows() == [("overlap", 120), ("sequential", 180)]
    assert bench.queries.height == 6 * len(TASKS)
    assert bench.mc.height == bench.queries.height
    assert bench.queries["query_id"].n_unique() == bench.queries.height
    assert (small_bench / "beir/qrels/test.tsv").read_text().splitlines()[0] == "query-id\tcorpus-id\tscore"
    m = bench.manifest
    assert m["counts"]["qrels"] == bench.qrels.height
    assert m["hashes"]["events.parquet"] == hashlib.sha256((small_bench / "events.parquet").read_bytes()).hexdigest()
    n_ev = bench.events.group_by("clip_id").len()["len"]
    assert n_ev.min() >= 2 and n_ev.max() <= 8


def test_texts_read_back_as_their_logic(small_bench: Path) -> None:
    bench = load_benchmark(small_bench)
    for text, logic in bench.queries.select("text", "logic").iter_rows():
        assert parse_query(text, bench.atoms) == json.loads(logic)


def test_audio_matches_events(small_bench: Path) -> None:
    bench = load_benchmark(small_bench)
    sr = bench.sample_rate
    for clip_id, path, n_samples in bench.clips.select("clip_id", "path", "n_samples").head(40).iter_rows():
        x, file_sr = sf.read(small_bench / path, dtype="float32")
        assert file_sr == sr and x.ndim == 1 and len(x) == n_samples
        assert np.all(np.isfinite(x)) and np.abs(x).max() <= 1.0
        inside = np.zeros(len(x), bool)
        for on, off in bench.events.filter(pl.col("clip_id") == clip_id).select("onset_sample", "offset_sample").iter_rows():
            inside[on:off] = True
            seg = x[on:off]
            assert np.sqrt(np.mean(seg.astype(np.float64) ** 2)) > 10 ** (-40 / 20), f"{clip_id}: inaudible event"
        assert np.abs(x[~inside]).max(initial=0.0) <= 1e-3, f"{clip_id}: sound outside events"


def test_contract_validation_passes(small_bench: Path) -> None:
    report = validate_benchmark(small_bench)
    assert report.ok, report.format_text()


def test_same_seed_same_bytes_whatever_the_threads(small_bench: Path, tmp_path: Path) -> None:
    other = tmp_path / "again"
    build(other, BuildConfig(**SMALL, threads=1), progress=False)
    assert _tree_digest(other) == _tree_digest(small_bench)


def test_other_seed_differs(small_bench: Path, tmp_path: Path) -> None:
    other = tmp_path / "seed6"
    build(other, BuildConfig(**{**SMALL, "seed": 6}), progress=False)
    assert _tree_digest(other)["events.parquet"] != _tree_digest(small_bench)["events.parquet"]


def test_refuses_non_empty_dir_and_leaves_no_partial_output(tmp_path: Path, capsys) -> None:
    out = tmp_path / "taken"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    rc = main(["build", "--out", str(out), "--clips", "50", "--queries-per-task", "1", "--quiet"])
    assert rc == 2
    assert "not empty" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".taken.tmp")]


def test_bad_parameters_are_clear_errors(tmp_path: Path, capsys) -> None:
    rc = main(["build", "--out", str(tmp_path / "x"), "--overlap-fraction", "1.5", "--quiet"])
    assert rc == 2 and "--overlap-fraction" in capsys.readouterr().err
    rc = main(["build", "--out", str(tmp_path / "y"), "--plan", "gap_s=[0.1,0.2]", "--clips", "20", "--quiet"])
    assert rc == 2 and "gap_s" in capsys.readouterr().err
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_build_on_an_imported_library(tmp_path: Path) -> None:
    """A labelled folder of ordinary files (44.1 kHz stereo) -> atoms import -> build -> valid benchmark."""
    from reasonaudio.atoms import AtomLibrary, import_folder

    procedural = AtomLibrary.procedural(sample_rate=44100)
    src = tmp_path / "sounds"
    for i in range(0, 200, 16):  # 13 atoms from different families
        folder = src / procedural.labels[i]
        folder.mkdir(parents=True)
        mono = procedural.audio(i)
        sf.write(folder / "take1.wav", np.stack([mono, 0.5 * mono], axis=1), 44100, subtype="PCM_24")
    import_folder(src, tmp_path / "lib", sample_rate=16000)
    out = tmp_path / "bench"
    build(out, BuildConfig(clips=120, queries_per_task=3, seed=2, atoms=str(tmp_path / "lib")), progress=False)
    bench = load_benchmark(out)
    assert bench.atoms.height == 13
    assert set(bench.events["label"].unique()) <= set(bench.atoms["label"])
    report = validate_benchmark(out)
    assert report.ok, report.format_text()


def test_min_hard_negatives_are_planned_and_keep_the_pattern_split(tmp_path: Path) -> None:
    out = tmp_path / "hard"
    build(out, BuildConfig(clips=400, queries_per_task=4, seed=8, min_hard_negatives=3), progress=False)
    bench = load_benchmark(out)
    assert bench.clips["pattern"].value_counts().sort("pattern").rows() == [("overlap", 160), ("sequential", 240)]
    assert bench.manifest["counts"]["hard_negatives_per_query"]["min"] >= 3
    from reasonaudio.relevance import positive_labels

    labels_of = bench.events.group_by("clip_id").agg(pl.col("label")).rows()
    clip_labels = {cid: set(labs) for cid, labs in labels_of}
    for qid, logic in bench.queries.select("query_id", "logic").iter_rows():
        needed = set(positive_labels(logic))
        relevant = set(bench.qrels.filter(pl.col("query_id") == qid)["clip_id"])
        hard = [c for c, labs in clip_labels.items() if needed <= labs and c not in relevant]
        assert len(hard) >= 3, qid
    report = validate_benchmark(out, check_audio=False)
    assert report.ok, report.format_text()
    rc = main(["build", "--out", str(tmp_path / "bad"), "--min-hard-negatives", "0", "--quiet"])
    assert rc == 2


def test_seed_out_of_range_is_refused_by_the_api_too(tmp_path: Path) -> None:
    from reasonaudio.errors import UserError

    with pytest.raises(UserError, match="--seed"):
        build(tmp_path / "neg", BuildConfig(clips=10, seed=-1), progress=False)


def test_plan_relevance_is_the_same_whatever_the_block() -> None:
    """Planning annotates its columns a block of clips at a time; the relevant clips (values, order,
    dtype) equal one call over the whole corpus, including blocks cut inside a run of clips a query
    holds and a last block of one clip."""
    from reasonaudio.builder.plan import plan_benchmark
    from reasonaudio.relevance import plan_relevance, positive_labels

    plan = plan_benchmark(BuildConfig(clips=601, queries_per_task=4, seed=5))
    logics = [s.logic for s in plan.specs]
    logics += [{"all": [{"has": lab}]} for lg in logics for lab in positive_labels(lg)]
    labels = plan.library.labels
    whole = plan_relevance(plan.final, labels, logics, plan.config.sample_rate, 1)
    assert sum(len(r) for r in whole) > 601  # the logics hold clips in every block
    for block in (1, 7, 100, 600):
        cut = plan_relevance(plan.final, labels, logics, plan.config.sample_rate, 2, block=block)
        assert len(cut) == len(whole)
        for a, b in zip(whole, cut):
            assert a.dtype == b.dtype == np.uint32
            assert a.tolist() == b.tolist()


def _beir_reference(root: Path, plan) -> None:
    """The BEIR files by their plain definition: one json.dumps a line, one line a relevant pair."""
    ext = Path(plan.rel_paths[0]).suffix
    (root / "beir").mkdir(parents=True)
    with open(root / "beir/corpus.jsonl", "w") as fh:
        for cid in plan.clip_ids:
            fh.write(json.dumps({"_id": cid, "title": "", "text": "", "audio": f"audio/{cid}{ext}"}) + "\n")
    with open(root / "beir/queries.jsonl", "w") as fh:
        for qid, s in zip(plan.query_ids, plan.specs):
            fh.write(json.dumps({"_id": qid, "text": s.text, "task": s.task}) + "\n")
    (root / "beir/qrels").mkdir()
    with open(root / "beir/qrels/test.tsv", "w") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        for qid, rel in zip(plan.query_ids, plan.relevant):
            fh.writelines(f"{qid}\t{plan.clip_ids[int(c)]}\t1\n" for c in rel)


@pytest.mark.parametrize("block", [1, 7, 1 << 18])
def test_beir_files_are_json_dumps_lines_whatever_the_block(tmp_path: Path, monkeypatch, block: int) -> None:
    from reasonaudio.builder import tables
    from reasonaudio.builder.plan import plan_benchmark

    plan = plan_benchmark(BuildConfig(clips=301, queries_per_task=3, seed=4))
    monkeypatch.setattr(tables, "BEIR_BLOCK_ROWS", block)
    for case, ids in (("plain", plan.clip_ids), ("escaped", [f'c"{i}\\é\t' if i % 3 else f"c{i}" for i in range(plan.n_clips)])):
        plan.clip_ids = ids
        tables.write_beir(tmp_path / case / "ours", plan)
        _beir_reference(tmp_path / case / "ref", plan)
        for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
            ours, ref = (tmp_path / case / side / "beir" / name for side in ("ours", "ref"))
            assert ours.read_bytes() == ref.read_bytes(), (case, name)


@pytest.mark.parametrize("block", [7, 1 << 16])
def test_audio_hash_list_is_sorted_by_path_whatever_the_order_given(tmp_path: Path, monkeypatch, block: int) -> None:
    from reasonaudio.builder import tables
    from reasonaudio.builder.tables import write_audio_hash_list

    monkeypatch.setattr(tables, "BLOCK_ROWS", block)

    paths = [f"audio/c{i:03d}.wav" for i in range(150)]
    digests = [hashlib.sha256(p.encode()).hexdigest() for p in paths]
    expected = "".join(f"{d}  {p}\n" for p, d in sorted(zip(paths, digests)))
    order = np.random.default_rng(0).permutation(len(paths))
    for case, (ps, ds) in {
        "in order": (paths, digests),
        "shuffled": ([paths[i] for i in order], [digests[i] for i in order]),
        "one swap": ([paths[1], paths[0], *paths[2:]], [digests[1], digests[0], *digests[2:]]),
    }.items():
        (tmp_path / case).mkdir()
        assert write_audio_hash_list(tmp_path / case, ps, ds).read_text() == expected, case


def test_relevance_after_planned_hard_negatives_is_that_of_the_final_corpus() -> None:
    """Planting hard negatives re-annotates only the replaced clips; the lists equal an annotation
    of the whole final corpus."""
    from reasonaudio.atoms import LabelView
    from reasonaudio.builder.plan import plan_benchmark
    from reasonaudio.relevance import plan_relevance

    plan = plan_benchmark(BuildConfig(clips=400, queries_per_task=4, seed=8, min_hard_negatives=3))
    view = LabelView.of(plan.library)
    assert plan.planned > 0 and not view.multi  # the final table's atoms are its labels
    whole = plan_relevance(plan.final, view.labels, [s.logic for s in plan.specs], plan.config.sample_rate, 1)
    assert [r.tolist() for r in plan.relevant] == [r.tolist() for r in whole]
    assert all(r.dtype == np.uint32 for r in plan.relevant)


@pytest.mark.parametrize("clips,want,seed", [(400, 3, 8), (150, 2, 3), (60, 1, 0)])
def test_hard_negatives_are_those_of_the_final_corpus_whatever_the_query_group(monkeypatch, clips: int, want: int, seed: int) -> None:
    """Containment lists are made a group of queries at a time and hard-negative counts carried over
    the replaced clips; the counts equal those of the whole final corpus, the pairs hold there, and
    the plan is the same for any group size."""
    from reasonaudio.atoms import LabelView
    from reasonaudio.builder import corpus
    from reasonaudio.builder.plan import plan_benchmark
    from reasonaudio.relevance import plan_relevance, positive_labels

    config = BuildConfig(clips=clips, queries_per_task=5, seed=seed, min_hard_negatives=want)
    plan = plan_benchmark(config)
    view = LabelView.of(plan.library)
    assert plan.planned > 0
    contain = [{"all": [{"has": lab} for lab in positive_labels(s.logic)]} for s in plan.specs]
    con = plan_relevance(plan.final, view.labels, contain, config.sample_rate, 1)
    hard = [np.setdiff1d(c, r).tolist() for c, r in zip(con, plan.relevant)]
    assert plan.hard_counts == [len(h) for h in hard]
    for q, (pos, neg) in enumerate(zip(plan.positives, plan.negatives)):
        assert pos in plan.relevant[q].tolist() and neg in hard[q]
    for group in (1, 2, 7):
        monkeypatch.setattr(corpus, "CONTAINMENT_GROUP", group)
        again = plan_benchmark(config)
        assert again.fingerprint() == plan.fingerprint() and again.hard_counts == plan.hard_counts


@given(st.integers(1, 2_000), st.data())
@settings(max_examples=60, deadline=None)
def test_clip_ids_are_the_list_they_stand_for(n: int, data) -> None:
    from reasonaudio.builder.plan import ClipIds, ClipPaths, id_series

    ids = ClipIds(n)
    plain = [f"clip_{i:0{max(6, len(str(n - 1)))}d}" for i in range(n)]
    assert len(ids) == n and list(ids) == plain and ids == plain and ids == ClipIds(n) and ids != plain[:-1]
    i = data.draw(st.integers(-n, n - 1))
    assert ids[i] == plain[i]
    lo, hi, step = data.draw(st.tuples(st.integers(-n - 2, n + 2), st.integers(-n - 2, n + 2), st.sampled_from([1, 2, -1, 7])))
    assert ids[lo:hi:step] == plain[lo:hi:step]
    for bad in (n, -n - 1):
        with pytest.raises(IndexError):
            ids[bad]
    picks = np.asarray(data.draw(st.lists(st.integers(0, n - 1), max_size=50)), dtype=np.int64)
    got = id_series(ids, picks, "clip_id")
    assert got.name == "clip_id" and got.to_list() == [plain[k] for k in picks]
    assert id_series(plain, picks, "clip_id").to_list() == got.to_list()
    paths = ClipPaths(ids, ".flac")
    plain_paths = [f"audio/{c}.flac" for c in plain]
    assert len(paths) == n and list(paths) == plain_paths and paths[i] == plain_paths[i]
    assert paths[lo:hi:step] == plain_paths[lo:hi:step]


@pytest.mark.parametrize("n", [1_000_000, 1_000_001, 10_000_001])
def test_clip_id_width_grows_with_the_corpus(n: int) -> None:
    from reasonaudio.builder.plan import ClipIds

    ids = ClipIds(n)
    last = f"clip_{n - 1:0{max(6, len(str(n - 1)))}d}"
    assert ids[-1] == last and ids.series(np.array([0, n - 1]), "c").to_list() == [ids[0], last]
