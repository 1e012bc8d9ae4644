"""Metrics against pytrec_eval on random runs, plus hand-computed cases."""

from __future__ import annotations

import math

import numpy as np
import pytest

from reasonaudio.evaluation import metrics


def _random_case(rng: np.random.Generator, n_queries: int, n_clips: int):
    scores = rng.permutation(n_queries * n_clips).reshape(n_queries, n_clips).astype(np.float64)
    relevant = rng.random((n_queries, n_clips)) < rng.uniform(0.01, 0.2, size=(n_queries, 1))
    relevant[np.arange(n_queries), rng.integers(0, n_clips, n_queries)] = True  # at least one each
    ranking = np.argsort(-scores, axis=1, kind="stable")
    return scores, relevant, ranking


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_pytrec_eval(seed: int) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(seed)
    n_queries, n_clips = 40, 150
    scores, relevant, ranking = _random_case(rng, n_queries, n_clips)
    qrel = {f"q{q}": {f"d{c}": 1 for c in np.flatnonzero(relevant[q])} for q in range(n_queries)}
    run = {f"q{q}": {f"d{c}": float(scores[q, c]) for c in range(n_clips)} for q in range(n_queries)}
    evaluator = pytrec_eval.RelevanceEvaluator(qrel, {"ndcg_cut.10", "recip_rank", "recall.1,5,10,100"})
    reference = evaluator.evaluate(run)

    ours = metrics.per_query(metrics.hit_matrix(ranking, relevant), relevant.sum(axis=1))
    for q in range(n_queries):
        ref = reference[f"q{q}"]
        assert ours["ndcg@10"][q] == pytest.approx(ref["ndcg_cut_10"], abs=1e-4)
        assert ours["mrr"][q] == pytest.approx(ref["recip_rank"], abs=1e-4)
        for k in metrics.RECALL_CUTOFFS:
            assert ours[f"recall@{k}"][q] == pytest.approx(ref[f"recall_{k}"], abs=1e-4)
        assert ours["acc@1"][q] == float(relevant[q, ranking[q, 0]])


def test_hand_case() -> None:
    # ranks: 0 miss, 1 hit, 2 miss, 3 hit; 3 relevant in the corpus (one never retrieved in the top 4)
    hits = np.array([[False, True, False, True]])
    out = metrics.per_query(hits, np.array([3]))
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    idcg = 1 + 1 / math.log2(3) + 1 / math.log2(4)
    assert out["acc@1"][0] == 0.0
    assert out["ndcg@10"][0] == pytest.approx(dcg / idcg)
    assert out["mrr"][0] == pytest.approx(0.5)
    assert out["recall@1"][0] == 0.0
    assert out["recall@5"][0] == pytest.approx(2 / 3)
    assert out["recall@100"][0] == pytest.approx(2 / 3)


def test_acc1_is_not_recall1() -> None:
    hits = np.array([[True, True, False]])
    out = metrics.per_query(hits, np.array([2]))
    assert out["acc@1"][0] == 1.0
    assert out["recall@1"][0] == 0.5
    assert out["ndcg@10"][0] == pytest.approx(1.0)


def test_summary_avg_is_macro_over_tasks_and_bootstrap_is_seeded() -> None:
    values = {"acc@1": np.array([1.0, 1.0, 1.0, 0.0])}
    tasks = ["negation", "negation", "negation", "order"]
    summary = metrics.summarize(values, tasks, ("negation", "order"), n_boot=200, seed=3)
    assert summary["acc@1"]["negation"]["mean"] == 1.0
    assert summary["acc@1"]["order"]["mean"] == 0.0
    assert summary["acc@1"]["Avg"]["mean"] == 0.5  # not the micro mean 0.75
    assert summary["acc@1"]["negation"]["ci"] == [1.0, 1.0]
    again = metrics.summarize(values, tasks, ("negation", "order"), n_boot=200, seed=3)
    assert again == summary
    rng_values = {"mrr": np.random.default_rng(0).random(50)}
    s = metrics.summarize(rng_values, ["mix"] * 50, ("mix",), n_boot=500, seed=1)["mrr"]["mix"]
    lo, hi = s["ci"]
    assert lo < s["mean"] < hi


def test_two_option_ties_count_half() -> None:
    out = metrics.two_option(np.array([0.9, 0.1, 0.5]), np.array([0.2, 0.4, 0.5]))
    assert out["accuracy"].tolist() == [1.0, 0.0, 0.5]
    assert out["picked_negative"].tolist() == [0.0, 1.0, 0.0]
    assert out["tie"].tolist() == [0.0, 0.0, 1.0]
