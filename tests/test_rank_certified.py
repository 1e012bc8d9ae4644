"""FAISS candidates certified by the canonical score give exactly the exact kernel's rankings,
scores, first-relevant ranks and metrics: on random data and on data made to break them (exact
ties, near-ties inside the float32 error bound, zero vectors, duplicate clips)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

faiss = pytest.importorskip("faiss", reason="FAISS is the optional 'faiss' extra")

from reasonaudio.evaluation.run import evaluate  # noqa: E402
from reasonaudio.io.beir import load_beir  # noqa: E402
from reasonaudio.retrieval.adapters.precomputed import PrecomputedModel  # noqa: E402
from reasonaudio.retrieval.certified import CertifiedRanker, choose_index, float32_score_error  # noqa: E402
from reasonaudio.retrieval.index import EmbeddingRanker, l2_normalize  # noqa: E402


def bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float64).view(np.int64)


def same_yields(exact: EmbeddingRanker, certified: CertifiedRanker, depth: int, batch: int, relevant=None) -> None:
    a = list(exact.rank(depth=depth, batch_size=batch, relevant=relevant))
    b = list(certified.rank(depth=depth, batch_size=batch, relevant=relevant))
    assert [p[0] for p in a] == [p[0] for p in b]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(bits(x[1]), bits(y[1]))
        for u, v in zip(x[2:], y[2:]):
            np.testing.assert_array_equal(u, v)


def rankers(q, c, **kw):
    return EmbeddingRanker(q, c), CertifiedRanker(q, c, device="cpu", **kw)


def test_error_bound_covers_float32_scores_of_unit_vectors() -> None:
    rng = np.random.default_rng(0)
    for d in (1, 7, 64, 512, 1024):
        q = rng.standard_normal((20, d)).astype(np.float32) * rng.uniform(1e-3, 1e3, (20, 1)).astype(np.float32)
        c = rng.standard_normal((500, d)).astype(np.float32)
        c[:10] = q[:10]  # scores near 1, where rounding is largest
        canon = np.array([[EmbeddingRanker(q, c).pair_scores(np.array([i]), np.array([j]))[0] for j in range(500)] for i in range(3)])
        f32 = l2_normalize(q[:3]) @ l2_normalize(c).T
        eps = float32_score_error(d)
        assert np.abs(f32 - canon).max() <= eps
        # ... and is not vacuous: a few float32 roundings per term, summed over d terms
        assert eps < 4 * d * 2.0**-24 + 1e-9
    assert float32_score_error(512) == pytest.approx(3.06e-5, rel=0.01)
    with pytest.raises(ValueError):
        float32_score_error(0)


def test_random_corpus_with_blocks_growth_and_deep_relevant_clips() -> None:
    rng = np.random.default_rng(1)
    q = rng.standard_normal((70, 32)).astype(np.float32)
    c = rng.standard_normal((5000, 32)).astype(np.float32)
    relevant = [np.unique(rng.integers(0, 5000, rng.integers(0, 4))) for _ in range(70)]
    # near queries: the first relevant clip is often in the head, certified there
    for i in range(0, 70, 2):
        if len(relevant[i]):
            q[i] = c[relevant[i][0]] + 0.01 * rng.standard_normal(32).astype(np.float32)
    exact, certified = rankers(q, c, clip_block=777)
    for depth, batch in ((1, 9), (10, 256), (100, 33)):
        same_yields(exact, certified, depth, batch)
        same_yields(exact, certified, depth, batch, relevant)
    assert certified.stats["certified"] > 0 and certified.stats["passes"] > 0


def test_exact_ties_duplicates_zero_vectors_and_near_ties() -> None:
    rng = np.random.default_rng(2)
    d = 24
    base = rng.standard_normal((40, d)).astype(np.float32)
    c = base[rng.integers(0, 40, 3000)]  # bitwise duplicates: exact ties across every cut
    c[::97] = 0  # zero clips score exactly 0 against everything
    # near-ties: copies nudged by one float32 ulp, well inside the error bound
    near = rng.integers(0, 3000, 300)
    c[near] = np.nextafter(c[near], np.float32(np.inf))
    q = rng.standard_normal((50, d)).astype(np.float32)
    q[0] = 0  # every clip ties at 0: certification must give up and rank exactly
    q[1] = base[3]  # a query equal to many clips
    q[2:6] = rng.integers(-1, 2, (4, d)).astype(np.float32)
    relevant = [np.unique(rng.integers(0, 3000, 3)) for _ in range(50)]
    exact, certified = rankers(q, c, clip_block=1000, extra_candidates=8)
    for depth in (1, 10, 100):
        same_yields(exact, certified, depth, 16, relevant)
    assert certified.stats["exact_heads"] >= 1


def test_coarse_vectors_have_ties_everywhere() -> None:
    rng = np.random.default_rng(3)
    q = rng.integers(-2, 3, (40, 4)).astype(np.float32)
    c = rng.integers(-2, 3, (4000, 4)).astype(np.float32)
    relevant = [np.unique(rng.integers(0, 4000, 2)) for _ in range(40)]
    exact, certified = rankers(q, c, clip_block=512, extra_candidates=4)
    same_yields(exact, certified, 100, 7, relevant)


@st.composite
def corpora(draw):
    nq, n, d = draw(st.integers(1, 8)), draw(st.integers(40, 400)), draw(st.integers(1, 24))
    coarse = draw(st.booleans())
    elems = (st.integers(-2, 2).map(float) if coarse
             else st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=32))
    q = np.array(draw(st.lists(elems, min_size=nq * d, max_size=nq * d)), dtype=np.float32).reshape(nq, d)
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    c = (rng.integers(-2, 3, (n, d)) if coarse else rng.standard_normal((n, d)) * 10.0 ** rng.uniform(-3, 3, (n, 1))).astype(np.float32)
    for a, b in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=20)):
        c[a] = c[b]
    if draw(st.booleans()):
        c[draw(st.integers(0, n - 1))] = 0
    if draw(st.booleans()):
        q[draw(st.integers(0, nq - 1))] = 0
    relevant = [np.unique(rng.integers(0, n, rng.integers(0, 4))) for _ in range(nq)]
    return q, c, relevant


@settings(max_examples=60, deadline=None)
@given(corpora(), st.integers(1, 12), st.integers(1, 5), st.integers(7, 300))
def test_certified_equals_exact_on_drawn_corpora(data, depth, batch, block) -> None:
    q, c, relevant = data
    exact, certified = rankers(q, c, clip_block=block, extra_candidates=2)
    same_yields(exact, certified, depth, batch, relevant)


def test_gpu_branch_only_when_faiss_reports_a_gpu() -> None:
    from reasonaudio.errors import UserError

    if faiss.get_num_gpus() == 0:
        with pytest.raises(UserError, match="FAISS reports no GPU"):
            CertifiedRanker(np.ones((1, 2), np.float32), np.ones((3, 2), np.float32), device="cuda")
        assert not CertifiedRanker(np.ones((1, 2), np.float32), np.ones((3, 2), np.float32)).gpu
        pytest.skip("FAISS reports no GPU: the GPU search is not exercised (the CPU one is)")
    rng = np.random.default_rng(4)
    q, c = rng.standard_normal((30, 64)).astype(np.float32), rng.standard_normal((20000, 64)).astype(np.float32)
    relevant = [np.unique(rng.integers(0, 20000, 2)) for _ in range(30)]
    gpu = CertifiedRanker(q, c, device="cuda")
    assert gpu.gpu
    same_yields(EmbeddingRanker(q, c), gpu, 100, 8, relevant)


@pytest.mark.parametrize("ties", [False, True])
def test_the_gpu_branch_equals_exact_with_faiss_gpu_standing_in(monkeypatch, ties: bool) -> None:
    """FAISS's GPU search replaced by its CPU search, refusing what the GPU refuses (k above 2048):
    the GPU branch (its candidate cap, its device) yields what exact does, also where ties push the
    candidate depth past the cap and the exact kernel takes over."""
    calls: list[tuple[int, int]] = []

    def knn_gpu(res, xq, xb, k, metric=None, device=-1):
        assert k <= 2048, "FAISS's GPU k-selection stops at 2048"
        calls.append((k, device))
        return faiss.knn(xq, xb, k, metric=metric)

    monkeypatch.setattr(faiss, "get_num_gpus", lambda: 1)
    monkeypatch.setattr(faiss, "StandardGpuResources", object, raising=False)
    monkeypatch.setattr(faiss, "knn_gpu", knn_gpu, raising=False)
    rng = np.random.default_rng(9)
    q = rng.standard_normal((20, 32)).astype(np.float32)
    c = rng.standard_normal((16000, 32)).astype(np.float32)  # a quarter (4,000) above the GPU cap
    if ties:  # 3,000 copies of one clip, the best of every query: no depth up to the cap certifies
        c[:3000] = q.sum(axis=0)
    relevant = [np.unique(rng.integers(0, 16000, 3)) for _ in range(20)]
    gpu = CertifiedRanker(q, c, device="cuda:0")
    assert gpu.gpu and gpu.gpu_device == 0
    same_yields(EmbeddingRanker(q, c), gpu, 100, 8, relevant)
    assert calls and all(device == 0 for _, device in calls)
    if ties:
        assert gpu.stats["exact_heads"] > 0
    else:
        assert gpu.stats["certified"] > 0


def test_the_gpu_check_script_compares_faiss_on_the_gpu_with_exact(monkeypatch, tmp_path, capsys) -> None:
    """benches/gpu_check.py's FAISS step, FAISS's GPU calls standing in on the CPU: it runs the
    product's GPU path (`eval --index faiss --device cuda`) and finds it identical to exact."""
    import importlib.util
    from pathlib import Path

    from reasonaudio.cli import main

    monkeypatch.setattr(faiss, "get_num_gpus", lambda: 1)
    monkeypatch.setattr(faiss, "StandardGpuResources", object, raising=False)
    monkeypatch.setattr(faiss, "knn_gpu", lambda res, xq, xb, k, metric=None, device=-1: faiss.knn(xq, xb, k, metric=metric), raising=False)
    path = Path(__file__).resolve().parent.parent / "benches" / "gpu_check.py"
    spec = importlib.util.spec_from_file_location("gpu_check", path)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert main(["build", "--out", str(tmp_path / "bench"), "--clips", "80", "--quiet"]) == 0
    script.check_faiss(tmp_path, tmp_path / "bench", [3000], 16)
    out = capsys.readouterr().out
    assert "rankings identical, metrics identical to --index exact" in out, out
    assert "x 3,000 clips x 16 d" in out and "; identical;" in out, out


def test_auto_chooses_faiss_on_a_gpu_for_large_corpora() -> None:
    from reasonaudio.retrieval.certified import AUTO_MIN_CLIPS

    gpu = "faiss" if faiss.get_num_gpus() > 0 else "exact"
    assert choose_index("auto", AUTO_MIN_CLIPS - 1) == "exact"
    assert choose_index("auto", AUTO_MIN_CLIPS) == gpu  # CPUs: the exact kernel was the faster
    assert choose_index("auto", AUTO_MIN_CLIPS, "cpu") == "exact"
    assert choose_index("exact", 10**9) == "exact" and choose_index("faiss", 1) == "faiss"


def _beir(root: Path, n_clips: int, n_queries: int, d: int, seed: int) -> tuple[Path, Path, Path]:
    rng = np.random.default_rng(seed)
    root.mkdir()
    (root / "qrels").mkdir()
    clip_ids = [f"c{i:05d}" for i in range(n_clips)]
    query_ids = [f"q{i:03d}" for i in range(n_queries)]
    with open(root / "corpus.jsonl", "w") as f:
        for cid in clip_ids:
            f.write(json.dumps({"_id": cid, "path": f"{cid}.wav"}) + "\n")
    with open(root / "queries.jsonl", "w") as f:
        for i, qid in enumerate(query_ids):
            f.write(json.dumps({"_id": qid, "text": f"query {i}", "task": ["negation", "order", "overlap"][i % 3]}) + "\n")
    clips = rng.standard_normal((n_clips, d)).astype(np.float32)
    clips[rng.integers(0, n_clips, 300)] = clips[rng.integers(0, n_clips, 300)]
    queries = rng.standard_normal((n_queries, d)).astype(np.float32)
    lines = []
    for i, qid in enumerate(query_ids):
        rel = np.unique(rng.integers(0, n_clips, rng.integers(1, 5)))
        if i % 2:
            queries[i] = clips[rel[0]] + 0.05 * rng.standard_normal(d).astype(np.float32)
        lines += [f"{qid}\t{clip_ids[r]}\t1" for r in rel]
    (root / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "\n".join(lines) + "\n")
    qf, cf = root.parent / "q.npz", root.parent / "c.npz"
    np.savez(qf, ids=np.array(query_ids), embeddings=queries)
    np.savez(cf, ids=np.array(clip_ids), embeddings=clips)
    return root, qf, cf


def test_eval_with_faiss_equals_exact_on_every_output(tmp_path: Path) -> None:
    root, qf, cf = _beir(tmp_path / "beir", 6000, 60, 48, 5)
    bench = load_beir(root)
    runs = {index: evaluate(bench, PrecomputedModel(qf, cf), n_boot=50, progress=False, index=index) for index in ("exact", "faiss")}
    a, b = runs["exact"], runs["faiss"]
    assert a.per_query.equals(b.per_query)
    assert a.rankings.equals(b.rankings)
    assert a.two_option_pairs.equals(b.two_option_pairs)
    assert json.dumps(a.summary, sort_keys=True) == json.dumps(b.summary, sort_keys=True)
    assert a.settings == b.settings
    assert (a.per_query["first_relevant_rank"] > 100).any()  # deep first relevant clips are counted too
    assert isinstance(a.per_query, pl.DataFrame)


def test_unknown_index_is_a_user_error(tmp_path: Path) -> None:
    from reasonaudio.errors import UserError

    root, qf, cf = _beir(tmp_path / "beir", 50, 3, 4, 6)
    with pytest.raises(UserError, match="index must be one of"):
        evaluate(load_beir(root), PrecomputedModel(qf, cf), n_boot=0, progress=False, index="annoy")

