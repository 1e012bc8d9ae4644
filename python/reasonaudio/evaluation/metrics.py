"""Retrieval metrics from full rankings, per query, per task, with bootstrap intervals.

Everything starts from a *hit matrix*: `hits[q, r]` is True when the clip ranked at position `r`
(0-based) for query `q` is relevant. The ranking must be complete (every clip of the corpus), or
at least 100 deep with the rank of the first relevant clip given separately for MRR; `n_relevant[q]` counts the
relevant clips of query q in the whole corpus (the ideal DCG and the recall denominator).

Definitions (binary relevance):
- Acc@1: 1 when the top-ranked clip is relevant, else 0 (the ReasonAudio study's Acc@1; it is *not*
  MTEB's recall_at_1, which divides by the number of relevant clips).
- nDCG@10: DCG = sum over ranks r < 10 of hit / log2(r + 2) (linear gain, log2 discount); the ideal
  DCG puts min(10, n_relevant) hits at the top.
- Recall@k: relevant clips in the top k / n_relevant.
- MRR: 1 / (1 + rank of the first relevant clip), 0 when none is relevant.
The study's "Avg" is the unweighted mean of the per-task means over the tasks present.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

RECALL_CUTOFFS = (1, 5, 10, 100)
NDCG_CUTOFF = 10
METRIC_NAMES = ("acc@1", "ndcg@10", *(f"recall@{k}" for k in RECALL_CUTOFFS), "mrr")
AVG = "Avg"


def hit_matrix(ranking: np.ndarray, relevant: np.ndarray) -> np.ndarray:
    """`ranking[q, r]` = clip index at rank r; `relevant[q, c]` = relevance of clip c (bool)."""
    return np.take_along_axis(relevant, ranking, axis=1)


def per_query(
    hits: np.ndarray, n_relevant: np.ndarray, first_relevant_rank: np.ndarray | None = None
) -> dict[str, np.ndarray]:
    """Every metric of METRIC_NAMES for each query (float64 arrays of length n_queries).

    `hits` may be cut at a depth >= 100 (every cutoff here); then `first_relevant_rank` (0-based,
    -1 when the query has no relevant clip) supplies MRR for queries whose first hit lies deeper.
    """
    hits = np.asarray(hits, dtype=bool)
    n_relevant = np.asarray(n_relevant, dtype=np.int64)
    if hits.ndim != 2 or hits.shape[0] != n_relevant.shape[0]:
        raise ValueError(f"hits {hits.shape} and n_relevant {n_relevant.shape} disagree")
    depth = hits.shape[1]
    out: dict[str, np.ndarray] = {}
    out["acc@1"] = hits[:, 0].astype(np.float64) if depth else np.zeros(len(n_relevant))

    cut = min(NDCG_CUTOFF, depth)
    discount = 1.0 / np.log2(np.arange(NDCG_CUTOFF) + 2.0)
    dcg = hits[:, :cut].astype(np.float64) @ discount[:cut]
    ideal_cum = np.concatenate([[0.0], np.cumsum(discount)])
    idcg = ideal_cum[np.minimum(n_relevant, NDCG_CUTOFF)]
    out["ndcg@10"] = np.divide(dcg, idcg, out=np.zeros_like(dcg), where=idcg > 0)

    denom = np.maximum(n_relevant, 1).astype(np.float64)
    cum_hits = np.cumsum(hits, axis=1)
    for k in RECALL_CUTOFFS:
        found = cum_hits[:, min(k, depth) - 1] if depth else np.zeros(len(n_relevant))
        out[f"recall@{k}"] = np.where(n_relevant > 0, found / denom, 0.0)

    if first_relevant_rank is None:
        any_hit = hits.any(axis=1)
        first = np.argmax(hits, axis=1)
    else:
        first = np.asarray(first_relevant_rank, dtype=np.int64)
        any_hit = first >= 0
    out["mrr"] = np.where(any_hit, 1.0 / (np.maximum(first, 0) + 1.0), 0.0)
    return out


def bootstrap_interval(
    values_by_group: Sequence[np.ndarray], n_boot: int, rng: np.random.Generator, level: float = 0.95
) -> tuple[list[tuple[float, float]], tuple[float, float]]:
    """Percentile intervals for each group's mean and for the mean of the group means.

    Queries are resampled with replacement within each group (stratified), so the interval of the
    macro average reflects the same draws as the per-group intervals.
    """
    alpha = (1.0 - level) / 2.0
    group_means = []
    per_group = []
    for values in values_by_group:
        values = np.asarray(values, dtype=np.float64)
        idx = rng.integers(0, len(values), size=(n_boot, len(values)))
        means = values[idx].mean(axis=1)
        group_means.append(means)
        per_group.append((float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))))
    macro = np.mean(np.stack(group_means), axis=0)
    return per_group, (float(np.quantile(macro, alpha)), float(np.quantile(macro, 1 - alpha)))


def summarize(
    metrics: dict[str, np.ndarray],
    tasks: Sequence[str],
    task_order: Sequence[str],
    *,
    n_boot: int = 1000,
    seed: int = 0,
) -> dict[str, dict[str, dict]]:
    """Per-task means (+ the macro "Avg") of every metric, with bootstrap 95% intervals when n_boot > 0.

    Returns {metric: {task_or_Avg: {"mean": float, "ci": [lo, hi] | None, "n": int}}}. Task order
    fixes the bootstrap draw order, so the same seed gives the same intervals.
    """
    tasks_arr = np.asarray(tasks)
    present = [t for t in task_order if (tasks_arr == t).any()]
    result: dict[str, dict[str, dict]] = {}
    for offset, name in enumerate(metrics):
        values = np.asarray(metrics[name], dtype=np.float64)
        groups = [values[tasks_arr == t] for t in present]
        table: dict[str, dict] = {}
        if n_boot > 0 and present:
            rng = np.random.default_rng([seed, offset])
            cis, macro_ci = bootstrap_interval(groups, n_boot, rng)
        else:
            cis, macro_ci = [None] * len(present), None
        for task, group, ci in zip(present, groups, cis):
            table[task] = {"mean": float(group.mean()), "ci": list(ci) if ci else None, "n": int(len(group))}
        if present:
            table[AVG] = {
                "mean": float(np.mean([g.mean() for g in groups])),
                "ci": list(macro_ci) if macro_ci else None,
                "n": int(len(values)),
            }
        result[name] = table
    return result


def two_option(
    positive_scores: np.ndarray, negative_scores: np.ndarray
) -> dict[str, np.ndarray]:
    """Per-pair outcome of the two-option test: the model picks the higher-scoring candidate.

    An exact tie counts as half a correct answer (a fair coin), so a model that cannot tell the two
    apart sits at the 50% chance level; `picked_negative` counts strict preferences for the hard
    negative and `tie` the exact ties.
    """
    pos = np.asarray(positive_scores, dtype=np.float64)
    neg = np.asarray(negative_scores, dtype=np.float64)
    correct = np.where(pos > neg, 1.0, np.where(pos == neg, 0.5, 0.0))
    return {
        "accuracy": correct,
        "picked_negative": (neg > pos).astype(np.float64),
        "tie": (pos == neg).astype(np.float64),
    }
