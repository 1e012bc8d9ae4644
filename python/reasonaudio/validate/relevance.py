"""Relevance recomputed from §2 by the reference evaluator, its robustness under the margin (§3.1), positives, hard negatives and two-option pairs (§3.2-3.3)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from reasonaudio.contract.logic import (
    Constraint,
    LogicError,
    parse_logic,
    task_shape_problem,
)
from reasonaudio.contract.reference import EventIndex
from reasonaudio.validate.checklist import _Recorder
from reasonaudio.validate.layout import _duplicates
from reasonaudio.validate.tables import Tables


def _parsed_queries(t: Tables, rec: _Recorder) -> dict[str, tuple[str, list[Constraint]]]:
    """query_id -> (task, constraints) for every query whose logic parses; reports logic and shape problems."""
    rec.get("queries.logic")
    rec.get("queries.task_shape")
    parsed: dict[str, tuple[str, list[Constraint]]] = {}
    if not t.has("queries"):
        rec.skip("queries.logic", "queries.parquet unusable")
        rec.skip("queries.task_shape", "queries.parquet unusable")
        return parsed
    labels = set(t["atoms"]["label"].to_list()) if t.has("atoms") else None
    for row in t["queries"].with_row_index("_row").iter_rows(named=True):
        qid = row["query_id"]
        try:
            constraints = parse_logic(row["logic"])
        except LogicError as err:
            rec.violation("queries.logic", f"queries.parquet row {row['_row']} (query {qid}): logic {err}")
            continue
        if labels is not None:
            unknown = sorted({l for c in constraints for l in c.labels} - labels)
            if unknown:
                rec.violation("queries.logic", f"query {qid}: unknown label(s) {', '.join(unknown)} (not in atoms.parquet)")
        problem = task_shape_problem(row["task"], constraints)
        if problem:
            rec.violation("queries.task_shape", f"query {qid} ({row['task']}): {problem}; logic {row['logic']}")
        parsed[qid] = (row["task"], constraints)
    return parsed


def _check_relevance(t: Tables, rec: _Recorder, margin_s: float, parsed: dict[str, tuple[str, list[Constraint]]]) -> None:
    names = ("relevance.qrels", "margin.relevance", "queries.positives", "queries.hard_negatives", "mc.pairs")
    for n in names:
        rec.get(n)
    if not t.has("events", "clips", "queries") or t.sample_rate is None:
        for n in names:
            rec.skip(n, "needs events, clips and queries tables and the manifest sample_rate")
        return
    sr = t.sample_rate
    clip_ids = t["clips"]["clip_id"].to_list()
    index = EventIndex(t["events"], clip_ids, sr)
    slack = 2 * margin_s * sr
    clip_array = np.array(clip_ids, dtype=object)

    expected_q: list[np.ndarray] = []
    expected_c: list[np.ndarray] = []
    relevant_sets: dict[str, np.ndarray] = {}
    hard_sets: dict[str, np.ndarray] = {}
    near_thresholds = 0
    for qid, (task, constraints) in parsed.items():
        truth = index.evaluate(constraints, slack)
        relevant = truth.nominal
        rel_idx = np.flatnonzero(relevant)
        expected_q.append(np.full(rel_idx.size, qid, dtype=object))
        expected_c.append(clip_array[rel_idx])
        relevant_sets[qid] = np.packbits(relevant)  # 1 bit a clip: Q x N flags stay small at corpus scale

        unstable = np.flatnonzero(truth.robust != truth.possible)
        if unstable.size:
            clip = int(unstable[0])
            shaky = []
            for c in constraints:
                tc = index.truth(c, slack)
                if tc.robust[clip] != tc.possible[clip]:
                    shaky.append(c)
            detail = "; ".join(index.explain(c, clip) for c in shaky)
            rec.violation(
                "margin.relevance",
                f"query {qid} ({task}), clip {clip_ids[clip]}: relevance {int(relevant[clip])} can flip when times move by "
                f"{margin_s:g} s ({detail}){f'; {unstable.size - 1} more clip(s)' if unstable.size > 1 else ''}",
                int(unstable.size),
            )
        for c in constraints:
            if c.kind == "duration":
                tc = index.truth(c, slack)
                near_thresholds += int(np.count_nonzero(tc.robust != tc.possible))

        positive = sorted({l for c in constraints for l in c.positive_labels})
        candidate = np.ones(index.n_clips, dtype=bool)
        for label in positive:
            candidate &= index.present(label)
        hard = candidate & ~relevant
        hard_sets[qid] = np.packbits(hard)
        if not relevant.any():
            rec.violation("queries.positives", f"query {qid} ({task}): no relevant clip for {' & '.join(map(str, constraints))}")
        if not hard.any():
            rec.violation(
                "queries.hard_negatives",
                f"query {qid} ({task}): no hard negative — all {int(candidate.sum())} clip(s) containing {', '.join(positive) or '(no label)'} are relevant",
            )
    params = (t.manifest or {}).get("params")  # a malformed manifest is reported by layout.manifest
    recorded = params.get("margin_s") if isinstance(params, dict) else None
    if isinstance(recorded, (int, float)) and not math.isclose(recorded, margin_s):
        rec.note("margin.relevance", f"checked with m = {margin_s:g} s; the manifest records params.margin_s = {recorded:g} s")
    if near_thresholds and not rec.get("margin.relevance").violations:
        rec.note("margin.relevance", f"{near_thresholds} (duration constraint, clip) pair(s) sit within 2m of a threshold without changing relevance")

    if t.has("queries") and len(parsed) < t["queries"].height:
        rec.note("relevance.qrels", f"{t['queries'].height - len(parsed)} query(ies) with unparsable logic not compared (see queries.logic)")
    _compare_qrels(t, rec, expected_q, expected_c, set(parsed))
    _check_mc(t, rec, relevant_sets, hard_sets, {c: i for i, c in enumerate(clip_ids)})


def _compare_qrels(t: Tables, rec: _Recorder, expected_q: list[np.ndarray], expected_c: list[np.ndarray], evaluated: set[str]) -> None:
    name = "relevance.qrels"
    if not t.has("qrels"):
        rec.skip(name, "qrels.parquet unusable")
        return
    qrels = t["qrels"].with_row_index("_row")
    not_one = qrels.filter(pl.col("relevance") != 1)
    for row in not_one.head(rec.max_examples).iter_rows(named=True):
        rec.violation(name, f"qrels.parquet row {row['_row']}: ({row['query_id']}, {row['clip_id']}) has relevance {row['relevance']} (v1 lists relevant pairs only, relevance = 1)", 0)
    rec.get(name).violations += not_one.height
    expected = pl.DataFrame(
        {
            "query_id": np.concatenate(expected_q).tolist() if expected_q else [],
            "clip_id": np.concatenate(expected_c).tolist() if expected_c else [],
        },
        schema={"query_id": pl.String, "clip_id": pl.String},
    )
    listed = qrels.filter(pl.col("query_id").is_in(list(evaluated)))
    missing = expected.join(listed, on=["query_id", "clip_id"], how="anti").sort("query_id", "clip_id")
    extra = listed.join(expected, on=["query_id", "clip_id"], how="anti").sort("query_id", "clip_id")
    for row in missing.head(rec.max_examples).iter_rows(named=True):
        rec.violation(name, f"missing from qrels.parquet: ({row['query_id']}, {row['clip_id']}) is relevant by §2", 0)
    for row in extra.head(rec.max_examples).iter_rows(named=True):
        rec.violation(name, f"extra in qrels.parquet row {row['_row']}: ({row['query_id']}, {row['clip_id']}) is not relevant by §2", 0)
    rec.get(name).violations += missing.height + extra.height
    rec.note(name, f"{expected.height} relevant pair(s) recomputed, {missing.height} missing, {extra.height} extra")


def _bit(packed: np.ndarray, i: int) -> bool:
    """Flag `i` of an array packed by `np.packbits` (big-endian bit order)."""
    return bool((packed[i >> 3] >> (7 - (i & 7))) & 1)


def _check_mc(t: Tables, rec: _Recorder, relevant: dict[str, np.ndarray], hard: dict[str, np.ndarray], position: dict[str, int]) -> None:
    """mc.parquet's pairs against each query's relevant and hard-negative clips (`relevant`, `hard`:
    flags per clip position, packed by `np.packbits`)."""
    name = "mc.pairs"
    if not t.has("mc", "queries"):
        rec.skip(name, "mc.parquet or queries.parquet unusable")
        return
    mc = t["mc"].with_row_index("_row")
    dup = _duplicates(mc, ["query_id"])
    for row in dup.head(rec.max_examples).iter_rows(named=True):
        rec.violation(name, f"mc.parquet: query {row['query_id']} has {row['len']} rows (expected one)", 0)
    rec.get(name).violations += dup.height
    absent = t["queries"].join(mc, on="query_id", how="anti")
    for row in absent.head(rec.max_examples).iter_rows(named=True):
        rec.violation(name, f"mc.parquet: no pair for query {row['query_id']}", 0)
    rec.get(name).violations += absent.height
    for row in mc.iter_rows(named=True):
        qid, pos, neg = row["query_id"], row["positive_clip_id"], row["negative_clip_id"]
        if qid not in relevant:
            continue  # unknown query (layout.references) or unparsable logic (queries.logic)
        where = f"mc.parquet row {row['_row']} (query {qid})"
        if pos in position and not _bit(relevant[qid], position[pos]):
            rec.violation(name, f"{where}: positive {pos} is not relevant")
        if neg in position:
            if _bit(relevant[qid], position[neg]):
                rec.violation(name, f"{where}: negative {neg} is relevant")
            elif not _bit(hard[qid], position[neg]):
                rec.violation(name, f"{where}: negative {neg} is not a hard negative (lacks a positively mentioned label)")
