"""Approximate FAISS indexes (`--index ivf|hnsw`): heads of canonical scores in canonical order,
a recall of the exact top k that is what it says, results that say they are approximate, and never
chosen by `auto`."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

faiss = pytest.importorskip("faiss", reason="FAISS is the optional 'faiss' extra")

from reasonaudio.evaluation.run import evaluate  # noqa: E402
from reasonaudio.io.beir import load_beir  # noqa: E402
from reasonaudio.retrieval.adapters.precomputed import PrecomputedModel  # noqa: E402
from reasonaudio.retrieval.approximate import ApproximateRanker  # noqa: E402
from reasonaudio.retrieval.certified import choose_index, make_ranker  # noqa: E402
from reasonaudio.retrieval.index import EmbeddingRanker  # noqa: E402
from test_rank_certified import _beir, bits  # noqa: E402


def clustered(n_clips: int, n_queries: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((32, d))
    clips = (centres[rng.integers(0, 32, n_clips)] + 0.3 * rng.standard_normal((n_clips, d))).astype(np.float32)
    queries = (centres[rng.integers(0, 32, n_queries)] + 0.3 * rng.standard_normal((n_queries, d))).astype(np.float32)
    return queries, clips


@pytest.mark.parametrize("kind", ["ivf", "hnsw"])
def test_heads_hold_canonical_scores_in_canonical_order(kind: str) -> None:
    q, c = clustered(4000, 40, 24, 1)
    approx, exact = ApproximateRanker(q, c, kind=kind, device="cpu"), EmbeddingRanker(q, c)
    for start, scores, ids in approx.rank(depth=30, batch_size=16):
        rows = np.repeat(np.arange(start, start + len(ids)), ids.shape[1])
        np.testing.assert_array_equal(bits(scores.ravel()), bits(exact.pair_scores(rows, ids.ravel())))
        for s, i in zip(scores, ids):
            assert len(set(i.tolist())) == len(i)
            assert all((s[j] > s[j + 1]) or (s[j] == s[j + 1] and i[j] < i[j + 1]) for j in range(len(s) - 1))


@pytest.mark.parametrize("kind", ["ivf", "hnsw"])
def test_recall_is_the_share_of_the_exact_top_k_held(kind: str) -> None:
    q, c = clustered(5000, 64, 16, 2)
    approx, exact = ApproximateRanker(q, c, kind=kind, device="cpu"), EmbeddingRanker(q, c)
    if kind == "ivf":
        approx.index.nprobe = 1  # one cell of many: clips of neighbouring cells are missed
    got = approx.recall(50, rows=np.arange(64))
    (_, a_ids, *_), = approx.rank(depth=50, batch_size=64)
    (_, e_ids, *_), = exact.rank(depth=50, batch_size=64)
    held = sum(len(np.intersect1d(x, y)) for x, y in zip(a_ids, e_ids))
    assert got == {"recall": held / (64 * 50), "queries": 64, "k": 50}
    assert 0.0 < got["recall"] <= 1.0
    if kind == "ivf":
        assert got["recall"] < 1.0  # nprobe 1 over clustered data does miss clips


def test_an_ivf_probing_every_cell_finds_the_exact_heads() -> None:
    rng = np.random.default_rng(3)
    q, c = rng.standard_normal((30, 32)).astype(np.float32), rng.standard_normal((3000, 32)).astype(np.float32)
    approx, exact = ApproximateRanker(q, c, kind="ivf", device="cpu"), EmbeddingRanker(q, c)
    approx.index.nprobe = approx.index.nlist
    (_, s_a, i_a), = approx.rank(depth=20, batch_size=30)
    (_, s_e, i_e), = exact.rank(depth=20, batch_size=30)
    np.testing.assert_array_equal(i_a, i_e)
    np.testing.assert_array_equal(bits(s_a), bits(s_e))
    assert approx.recall(20)["recall"] == 1.0


def test_short_candidate_lists_and_deep_relevant_clips_fall_back_to_the_exact_kernel() -> None:
    q, c = clustered(2000, 20, 8, 4)
    approx, exact = ApproximateRanker(q, c, kind="ivf", device="cpu"), EmbeddingRanker(q, c)
    approx.index.nprobe = 1
    depth = 1500  # more than one cell holds: every head comes from the exact kernel
    relevant = [np.array([i * 97 % 2000]) for i in range(20)]
    a = list(approx.rank(depth=depth, batch_size=20, relevant=relevant))
    e = list(exact.rank(depth=depth, batch_size=20, relevant=relevant))
    assert approx.stats["exact_heads"] == 20
    for x, y in zip(a, e):
        np.testing.assert_array_equal(x[2], y[2])
        np.testing.assert_array_equal(x[3], y[3])


def test_eval_results_say_the_run_is_approximate_and_how_far(tmp_path: Path) -> None:
    root, qf, cf = _beir(tmp_path / "beir", 3000, 30, 16, 7)
    bench = load_beir(root)
    exact = evaluate(bench, PrecomputedModel(qf, cf), n_boot=0, progress=False, index="exact")
    for kind in ("ivf", "hnsw"):
        run = evaluate(bench, PrecomputedModel(qf, cf), n_boot=0, progress=False, index=kind)
        info = run.settings["approximate"]
        assert info["index"] == kind and info["approximate"] is True and info["device"] == "cpu"
        rec = info["recall_of_exact_top_k"]
        assert rec["k"] == 100 and rec["queries"] == 30 and 0.0 <= rec["recall"] <= 1.0
        # the recall recorded is that of the heads written, against the exact run's heads
        held = sum(
            len(set(a) & set(b))
            for a, b in zip(run.rankings.group_by("query_id", maintain_order=True).agg("clip_id")["clip_id"].to_list(),
                            exact.rankings.group_by("query_id", maintain_order=True).agg("clip_id")["clip_id"].to_list())
        )
        assert rec["recall"] == held / (30 * 100)
        json.dumps(run.settings)  # results.json can hold it
    assert "approximate" not in exact.settings


def test_auto_never_chooses_an_approximate_index() -> None:
    for n in (10, 50_000, 10_000_000):
        for device in (None, "cpu", "cuda"):
            assert choose_index("auto", n, device) in ("exact", "faiss")
    q, c = clustered(100, 3, 4, 5)
    assert type(make_ranker("auto", q, c, device="cpu")) is EmbeddingRanker
