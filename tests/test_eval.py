"""`reasonaudio eval` / `reasonaudio report` end to end on the fixture benchmark, and the FAISS ranking."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from reasonaudio.cli import main
from reasonaudio.io.benchmark import load_benchmark
from reasonaudio.io.beir import load_beir
from reasonaudio.evaluation.run import evaluate
from reasonaudio.retrieval import load_model
from reasonaudio.retrieval.index import rank_embeddings, rank_scores


@pytest.fixture(scope="module")
def bench(evalfixture, tmp_path_factory) -> Path:
    return evalfixture.write_fixture(tmp_path_factory.mktemp("bench") / "bench")


def test_oracle_end_to_end(evalfixture, bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "oracle"
    assert main(["eval", str(bench), "--model", "oracle", "--out", str(out), "--bootstrap", "50", "--quiet"]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["model"] == "oracle"
    assert results["summary"]["acc@1"]["Avg"]["mean"] == 1.0
    assert results["summary"]["ndcg@10"]["Avg"]["mean"] == 1.0
    for task in ("negation", "order", "overlap", "duration", "mix"):
        assert results["summary"]["acc@1"][task]["mean"] == 1.0
    assert results["two_option"]["accuracy"]["Avg"]["mean"] == 1.0
    import hashlib

    assert results["manifest_hash"] == hashlib.sha256((bench / "manifest.json").read_bytes()).hexdigest()
    rankings = pl.read_parquet(out / "rankings.parquet")
    n_clips = len(evalfixture.CLIPS)
    assert rankings.height == len(evalfixture.QUERIES) * n_clips  # top-100 capped at the corpus size
    top1 = rankings.filter(pl.col("rank") == 1)
    assert top1["relevant"].all()
    report = (out / "report.md").read_text()
    assert "| `oracle` | 100.0 | 100.0 |" in report
    assert (out / "figures" / "tasks.png").stat().st_size > 0
    assert (out / "figures" / "two_option.png").stat().st_size > 0
    assert not (out / "figures" / "tsne.png").exists()  # scoring model: nothing to embed
    assert not list(tmp_path.glob(".oracle.tmp-*"))


def test_random_end_to_end_is_deterministic(evalfixture, bench: Path, tmp_path: Path) -> None:
    args = ["eval", str(bench), "--model", "random", "--bootstrap", "100", "--seed", "7", "--quiet"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    assert main([*args, "--out", str(tmp_path / "b"), "--no-figures"]) == 0
    a = json.loads((tmp_path / "a" / "results.json").read_text())
    b = json.loads((tmp_path / "b" / "results.json").read_text())
    assert a["summary"] == b["summary"] and a["two_option"] == b["two_option"]
    assert (tmp_path / "a" / "figures" / "tsne.png").stat().st_size > 0
    per_query = pl.read_parquet(tmp_path / "a" / "per_query.parquet")
    assert per_query.height == len(evalfixture.QUERIES)
    # the metrics agree with the written ranking
    rankings = pl.read_parquet(tmp_path / "a" / "rankings.parquet")
    for qid, acc in zip(per_query["query_id"], per_query["acc@1"]):
        top = rankings.filter((pl.col("query_id") == qid) & (pl.col("rank") == 1))
        assert float(top["relevant"][0]) == acc
        assert top["clip_id"][0] in evalfixture.relevant_clips(qid) or acc == 0.0
    two = pl.read_parquet(tmp_path / "a" / "two_option.parquet")
    assert set(two["accuracy"].unique().to_list()) <= {0.0, 0.5, 1.0}


def test_report_compares_two_runs(bench: Path, tmp_path: Path) -> None:
    for model in ("oracle", "random"):
        assert main(["eval", str(bench), "--model", model, "--out", str(tmp_path / model), "--bootstrap", "0",
                     "--no-figures", "--quiet"]) == 0
    out = tmp_path / "cmp"
    assert main(["report", str(tmp_path / "oracle"), str(tmp_path / "random"), "--out", str(out)]) == 0
    text = (out / "report.md").read_text()
    assert "| `oracle` |" in text and "| `random` |" in text
    assert "share one benchmark" in text
    assert (out / "comparison.png").stat().st_size > 0


def test_report_rejects_non_results(tmp_path: Path, capsys) -> None:
    (tmp_path / "x").mkdir()
    assert main(["report", str(tmp_path / "x"), "--out", str(tmp_path / "o")]) == 2
    assert "no results.json" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_unknown_model_is_a_user_error(bench: Path, tmp_path: Path, capsys) -> None:
    assert main(["eval", str(bench), "--model", "nosuch:thing", "--out", str(tmp_path / "o"), "--quiet"]) == 2
    assert "unknown model 'nosuch'" in capsys.readouterr().err


def test_beir_folder(bench: Path) -> None:
    beir = load_beir(bench / "beir")
    assert beir.queries["task"].unique().to_list() == ["all"]
    result = evaluate(beir, load_model("oracle"), n_boot=0, progress=False)
    assert result.task_order == ["all"]
    assert result.summary["acc@1"]["all"]["mean"] == 1.0
    assert result.two_option_pairs.height == 0


def test_ties_broken_by_clip_index() -> None:
    # exactly representable scores, so every BLAS kernel agrees on the ties
    clips = np.array([[0, 1], [1, 0], [0, 1], [1, 0], [0, 0], [1, 0]], dtype=np.float32)
    queries = np.array([[1, 0], [0, 1], [1, 1]], dtype=np.float32)
    (start, scores, ranking), = list(rank_embeddings(queries, clips))
    assert start == 0
    assert ranking[0].tolist() == [1, 3, 5, 0, 2, 4]
    assert ranking[1].tolist() == [0, 2, 1, 3, 4, 5]
    assert ranking[2].tolist() == [0, 1, 2, 3, 5, 4]  # zero vector last
    (_, _, from_scores), = list(rank_scores(np.array([[0.5, 1, 0.5, 1]], dtype=np.float32)))
    assert from_scores[0].tolist() == [1, 3, 0, 2]


def test_batches_give_same_ranking_as_numpy() -> None:
    rng = np.random.default_rng(0)
    q, c = rng.standard_normal((37, 16)).astype(np.float32), rng.standard_normal((50, 16)).astype(np.float32)
    parts = list(rank_embeddings(q, c, batch_size=8))
    assert [p[0] for p in parts] == [0, 8, 16, 24, 32]
    ranking = np.concatenate([p[2] for p in parts])
    qn = q / np.linalg.norm(q, axis=1, keepdims=True)
    cn = c / np.linalg.norm(c, axis=1, keepdims=True)
    np.testing.assert_array_equal(ranking, np.argsort(-(qn @ cn.T), axis=1, kind="stable"))


def test_eval_result_two_option_uses_ranking_scores(bench: Path) -> None:
    result = evaluate(load_benchmark(bench), load_model("random:3"), n_boot=0, progress=False)
    pairs = result.two_option_pairs
    scores = {(q, c): s for q, c, s in zip(result.rankings["query_id"], result.rankings["clip_id"], result.rankings["score"])}
    for row in pairs.iter_rows(named=True):
        assert row["positive_score"] == pytest.approx(scores[(row["query_id"], row["positive_clip_id"])], abs=1e-5)
        assert row["negative_score"] == pytest.approx(scores[(row["query_id"], row["negative_clip_id"])], abs=1e-5)


def test_cut_rankings_give_the_same_metrics_as_complete_ones() -> None:
    from reasonaudio.evaluation import metrics
    from reasonaudio.retrieval.index import EmbeddingRanker

    rng = np.random.default_rng(5)
    # coarse scores make many exact ties, including across the cut at 100
    q = rng.integers(-2, 3, size=(30, 4)).astype(np.float32)
    c = rng.integers(-2, 3, size=(400, 4)).astype(np.float32)
    relevant = rng.random((30, 400)) < 0.01
    relevant[np.arange(30), rng.integers(0, 400, 30)] = True
    full = [p for p in rank_embeddings(q, c)]
    cut = [p for p in rank_embeddings(q, c, depth=100)]
    full_rank = np.concatenate([p[2] for p in full])
    cut_rank = np.concatenate([p[2] for p in cut])
    np.testing.assert_array_equal(cut_rank, full_rank[:, :100])
    np.testing.assert_array_equal(np.concatenate([p[1] for p in cut]), np.concatenate([p[1] for p in full])[:, :100])
    ranker = EmbeddingRanker(q, c)
    first = np.array([ranker.deep_rank(i, np.flatnonzero(relevant[i])) for i in range(30)])
    # the deep rank is the position of the first relevant clip in the complete ranking
    np.testing.assert_array_equal(first, metrics.hit_matrix(full_rank, relevant).argmax(axis=1))
    reference = metrics.per_query(metrics.hit_matrix(full_rank, relevant), relevant.sum(1))
    ours = metrics.per_query(metrics.hit_matrix(cut_rank, relevant), relevant.sum(1), first)
    for name in metrics.METRIC_NAMES:
        np.testing.assert_array_equal(ours[name], reference[name])


def test_canonical_scores_do_not_depend_on_batching_or_corpus_order() -> None:
    """Scores that are equal in exact arithmetic must compare equal wherever they are computed: in
    any batch, at any position of the corpus (BLAS tiles rows differently), head or deep rank."""
    from reasonaudio.retrieval.index import EmbeddingRanker

    rng = np.random.default_rng(11)
    base = rng.normal(size=(50, 48)).astype(np.float32)
    c = base[rng.integers(0, 50, size=700)]  # many bitwise-duplicate clips: exact ties everywhere
    q = rng.normal(size=(40, 48)).astype(np.float32)
    perm = rng.permutation(700)
    a = EmbeddingRanker(q, c)
    b = EmbeddingRanker(q, c[perm])
    for batch in (1, 7, 256):
        ranks_a = np.concatenate([p[2] for p in a.rank(depth=100, batch_size=batch)])
        ranks_b = np.concatenate([p[2] for p in b.rank(depth=100, batch_size=batch)])
        scores_a = np.concatenate([p[1] for p in a.rank(depth=100, batch_size=batch)])
        scores_b = np.concatenate([p[1] for p in b.rank(depth=100, batch_size=batch)])
        np.testing.assert_array_equal(scores_a, scores_b)
        # duplicates tie exactly, so a rank holds the same vector in either corpus order
        np.testing.assert_array_equal(c[ranks_a], c[perm][ranks_b])
    i = np.arange(40)
    j = rng.integers(0, 700, 40)
    inverse = np.argsort(perm)
    np.testing.assert_array_equal(a.pair_scores(i, j), b.pair_scores(i, inverse[j]))
    head = np.concatenate([p[1] for p in a.rank(depth=100)])
    full = np.concatenate([p[1] for p in a.rank()])
    np.testing.assert_array_equal(head, full[:, :100])


def test_beir_export_of_a_benchmark_resolves_audio_against_the_benchmark_root(tmp_path: Path) -> None:
    from reasonaudio.builder import BuildConfig, build

    root = build(tmp_path / "bench", BuildConfig(clips=40, queries_per_task=1, seed=4), progress=False)
    beir = load_beir(root / "beir")
    assert beir.clips.height == 40 and beir.qrels.height > 0
    for path in beir.audio_paths():
        assert path.is_file(), path


def test_hugging_face_style_parquet_folder_with_embedded_audio(tmp_path: Path) -> None:
    """corpus/queries as parquet, audio as {bytes, path} values, qrels as parquet: evaluable as is."""
    import io

    import soundfile as sf

    root = tmp_path / "hf"
    (root / "qrels").mkdir(parents=True)
    corpus = []
    for i in range(4):
        buf = io.BytesIO()
        sf.write(buf, (0.1 * np.sin(np.arange(1600) * (i + 1) / 10)).astype(np.float32), 16000, format="WAV")
        corpus.append({"_id": f"c{i}", "audio": {"bytes": buf.getvalue(), "path": f"c{i}.wav"}})
    pl.DataFrame(corpus).write_parquet(root / "corpus.parquet")
    pl.DataFrame({"_id": ["q0", "q1"], "text": ["a", "b"]}).write_parquet(root / "queries.parquet")
    pl.DataFrame({"query-id": ["q0", "q1", "q1"], "corpus-id": ["c1", "c2", "c3"], "score": [1, 1, 0]}).write_parquet(
        root / "qrels" / "test.parquet"
    )
    bench = load_beir(root)
    assert bench.qrels.height == 2
    for path in bench.audio_paths():
        x, sr = sf.read(path)
        assert sr == 16000 and len(x) == 1600
    out = tmp_path / "res"
    assert main(["eval", str(root), "--model", "oracle", "--out", str(out), "--quiet", "--no-figures", "--bootstrap", "0"]) == 0
    assert json.loads((out / "results.json").read_text())["summary"]["acc@1"]["all"]["mean"] == 1.0


def _relevance_reference(root, qrels: pl.DataFrame, query_ids: list[str], clip_ids: list[str]) -> list[list[int]]:
    """The relevant clips of each query by their plain definition: dictionaries of positions."""
    from reasonaudio.errors import UserError

    q_index = {q: i for i, q in enumerate(query_ids)}
    c_index = {c: i for i, c in enumerate(clip_ids)}
    relevant: list[set[int]] = [set() for _ in query_ids]
    rows = qrels.filter(pl.col("relevance") > 0)
    for row, (qid, cid) in enumerate(zip(rows["query_id"].to_list(), rows["clip_id"].to_list())):
        if qid not in q_index:
            raise UserError(f"{root}: qrels row {row}: unknown query_id {qid!r}")
        if cid not in c_index:
            raise UserError(f"{root}: qrels row {row}: unknown clip_id {cid!r}")
        relevant[q_index[qid]].add(c_index[cid])
    return [sorted(r) for r in relevant]


@pytest.mark.parametrize("seed", range(6))
def test_relevance_of_the_qrels_is_their_plain_reading(seed: int, tmp_path: Path) -> None:
    from types import SimpleNamespace

    from reasonaudio.errors import UserError
    from reasonaudio.evaluation.run import _relevance

    rng = np.random.default_rng(seed)
    clip_ids = [f"c{i}" for i in rng.integers(0, 60, 50)]  # repeated ids stand for their last position
    query_ids = [f"q{i}" for i in rng.integers(0, 12, 10)]
    n = int(rng.integers(0, 200))
    qrels = pl.DataFrame({
        "query_id": [query_ids[i] for i in rng.integers(0, len(query_ids), n)],
        "clip_id": [clip_ids[i] for i in rng.integers(0, len(clip_ids), n)],  # repeated pairs too
        "relevance": rng.integers(0, 2, n).astype(np.int32),
    })
    if seed % 3 == 1:
        qrels = qrels.with_columns(pl.col("clip_id").cast(pl.Categorical))
    if seed % 3 == 2 and n:  # an unknown id, after rows of relevance 0 (rows count relevant ones)
        k = int(rng.integers(0, n))
        qrels = qrels.with_columns(relevance=pl.lit(1, pl.Int32)).with_columns(
            pl.when(pl.int_range(pl.len()) == k).then(pl.lit("elsewhere")).otherwise(pl.col("clip_id" if seed % 2 else "query_id")).alias("clip_id" if seed % 2 else "query_id")
        )
    bench = SimpleNamespace(root=tmp_path, qrels=qrels)
    try:
        expected = _relevance_reference(tmp_path, qrels, query_ids, clip_ids)
    except UserError as err:
        with pytest.raises(UserError) as ours:
            _relevance(bench, query_ids, clip_ids)
        assert str(ours.value) == str(err)
        return
    got = _relevance(bench, query_ids, clip_ids)
    assert [r.tolist() for r in got] == expected
    assert all(r.dtype == np.int64 for r in got)


def test_events_table_is_checked_at_load_and_read_when_first_used(bench: Path, tmp_path: Path) -> None:
    import shutil

    from reasonaudio.errors import UserError

    b = load_benchmark(bench)
    assert not isinstance(b.__dict__["_events"], pl.DataFrame)  # not read yet
    assert b.events.equals(pl.read_parquet(bench / "events.parquet"))
    assert b.events is b.events  # read once
    assert "events=" in repr(b)
    copy = Path(shutil.copytree(bench, tmp_path / "b"))
    pl.read_parquet(copy / "events.parquet").drop("label").write_parquet(copy / "events.parquet")
    with pytest.raises(UserError, match=r"events\.parquet: missing column\(s\) label"):
        load_benchmark(copy)
    (copy / "events.parquet").write_bytes(b"not parquet")
    with pytest.raises(UserError, match="not a readable parquet file"):
        load_benchmark(copy)


@pytest.mark.parametrize("rows", [3, 1 << 18])
def test_relevance_read_from_the_file_in_slices(bench: Path, tmp_path: Path, rows: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from reasonaudio.errors import UserError
    from reasonaudio.evaluation import run
    from reasonaudio.io.benchmark import deferred_path

    monkeypatch.setattr(run, "_QRELS_ROWS", rows)
    bench = Path(shutil.copytree(bench, tmp_path / "bench"))  # damaged below
    b = load_benchmark(bench)
    assert deferred_path(b, "qrels") == bench / "qrels.parquet"  # not read by loading
    query_ids = b.queries["query_id"].to_list()
    clip_ids = b.clips["clip_id"].to_list()
    qrels = pl.read_parquet(bench / "qrels.parquet")
    got = run._relevance(b, query_ids, clip_ids)
    assert [r.tolist() for r in got] == _relevance_reference(bench, qrels, query_ids, clip_ids)
    assert deferred_path(b, "qrels") is not None  # coded from the file, never held as a table
    assert b.qrels.equals(qrels) and deferred_path(b, "qrels") is None

    relevant = qrels.filter(pl.col("relevance") > 0)
    k = relevant.height - 1
    damaged = relevant.with_columns(
        pl.when(pl.int_range(pl.len()) == k).then(pl.lit("clip_elsewhere")).otherwise(pl.col("clip_id")).alias("clip_id")
    )
    damaged.write_parquet(bench / "qrels.parquet")
    with pytest.raises(UserError) as err:
        run._relevance(load_benchmark(bench), query_ids, clip_ids)
    assert str(err.value) == f"{bench}: qrels row {k}: unknown clip_id 'clip_elsewhere'"


def test_clip_paths_read_as_audio_paths(bench: Path) -> None:
    b = load_benchmark(bench)
    paths = b.clip_paths()
    assert paths == b.audio_paths() and list(paths) == b.audio_paths() and len(paths) == b.clips.height


def test_a_damaged_qrels_body_is_named_by_eval(bench: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    copy = Path(shutil.copytree(bench, tmp_path / "bench"))
    data = bytearray((copy / "qrels.parquet").read_bytes())
    data[8:40] = b"\xff" * 32  # the first page's header, not the footer
    (copy / "qrels.parquet").write_bytes(bytes(data))
    load_benchmark(copy)  # the footer and columns are checked at load
    code = main(["eval", str(copy), "--model", "random", "--out", str(tmp_path / "r"), "--no-figures", "--bootstrap", "0", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and f"{copy / 'qrels.parquet'}: not a readable parquet file" in err and "Traceback" not in err, err
