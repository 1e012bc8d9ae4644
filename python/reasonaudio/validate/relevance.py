"""Relevance recomputed from §2 by the reference evaluator, its robustness under the margin (§3.1), positives, hard negatives and two-option pairs (§3.2-3.3)."""

from __future__ import annotations

import math
from typing import Literal

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
    clip_ids = t["clips"]["clip_id"]  # a Series: a million Python strings would take ~70 MB
    index = EventIndex(t["events"], clip_ids, sr)
    slack = 2 * margin_s * sr

    # relevant pairs as (query ordinal, clip position) integers: 7.6M pairs at a million clips are
    # 60 MB of positions where strings would take gigabytes to build and join
    expected: list[np.ndarray] = []
    mc_named = _mc_positions(t)
    mc_flags: dict[str, dict[int, tuple[bool, bool]]] = {}
    near_thresholds = 0
    for k, (qid, (task, constraints)) in enumerate(parsed.items()):
        truth = index.evaluate(constraints, slack)
        relevant = truth.nominal
        rel_idx = np.flatnonzero(relevant)
        expected.append(k * index.n_clips + rel_idx)

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
        # mc.pairs needs the flags of the few clips the query's two-option rows name, not of every clip
        mc_flags[qid] = {int(i): (bool(relevant[i]), bool(hard[i])) for i in mc_named.get(qid, ())}
        if not relevant.any():
            rec.violation("queries.positives", f"query {qid} ({task}): no relevant clip for {' & '.join(map(str, constraints))}")
        if not hard.any():
            rec.violation(
                "queries.hard_negatives",
                f"query {qid} ({task}): no hard negative — all {int(candidate.sum())} clip(s) containing {', '.join(positive) or '(no label)'} are relevant",
            )
    del index
    params = (t.manifest or {}).get("params")  # a malformed manifest is reported by layout.manifest
    recorded = params.get("margin_s") if isinstance(params, dict) else None
    if isinstance(recorded, (int, float)) and not math.isclose(recorded, margin_s):
        rec.note("margin.relevance", f"checked with m = {margin_s:g} s; the manifest records params.margin_s = {recorded:g} s")
    if near_thresholds and not rec.get("margin.relevance").violations:
        rec.note("margin.relevance", f"{near_thresholds} (duration constraint, clip) pair(s) sit within 2m of a threshold without changing relevance")

    if t.has("queries") and len(parsed) < t["queries"].height:
        rec.note("relevance.qrels", f"{t['queries'].height - len(parsed)} query(ies) with unparsable logic not compared (see queries.logic)")
    _compare_qrels(t, rec, list(parsed), np.concatenate(expected) if expected else np.zeros(0, np.int64))
    _check_mc(t, rec, mc_flags)


def _first_positions(t: Tables, keep: Literal["first", "last"]) -> pl.DataFrame:
    """clip_id -> `_at`, its position in clips.parquet (the first or last where an id repeats, a
    fault layout.ids reports)."""
    return t["clips"].select("clip_id").with_row_index("_at").unique("clip_id", keep=keep, maintain_order=True)


def _mc_positions(t: Tables) -> dict[str, np.ndarray]:
    """query_id -> the positions in clips.parquet of the clips its mc.parquet rows name."""
    if not t.has("mc", "clips"):
        return {}
    at = _first_positions(t, "last")
    named = pl.concat([
        t["mc"].select("query_id", pl.col(column).alias("clip_id")) for column in ("positive_clip_id", "negative_clip_id")
    ]).join(at, on="clip_id", how="inner").group_by("query_id").agg(pl.col("_at").unique())
    return {qid: np.asarray(positions, dtype=np.int64) for qid, positions in named.iter_rows()}


def _compare_qrels(t: Tables, rec: _Recorder, queries: list[str], expected: np.ndarray) -> None:
    """qrels.parquet's pairs of the `queries` that were evaluated against the relevant ones
    recomputed (`expected`: q * n + c for the query of ordinal q in `queries` and the clip at
    position c of clips.parquet's n, ascending)."""
    name = "relevance.qrels"
    if not t.has("qrels"):
        rec.skip(name, "qrels.parquet unusable")
        return
    qrels = t["qrels"]
    not_one = qrels.with_row_index("_row").filter(pl.col("relevance") != 1)
    for row in not_one.head(rec.max_examples).iter_rows(named=True):
        rec.violation(name, f"qrels.parquet row {row['_row']}: ({row['query_id']}, {row['clip_id']}) has relevance {row['relevance']} (v1 lists relevant pairs only, relevance = 1)", 0)
    rec.get(name).violations += not_one.height
    # pairs as integers q * n + clip, the clip by the first position of its id (a repeated id is one clip)
    n = t["clips"].height
    first = _first_positions(t, "first")
    if first.height < n:
        canon = t["clips"].select("clip_id").join(first, on="clip_id", how="left", maintain_order="left")["_at"].to_numpy().astype(np.int64)
        expected = expected // n * n + canon[expected % n]
    ordinals = pl.DataFrame({"query_id": queries, "_q": np.arange(len(queries), dtype=np.int64)}, schema={"query_id": pl.String, "_q": pl.Int64})
    ordinals = ordinals.with_columns(pl.col("query_id").cast(qrels.schema["query_id"]))
    # each row's pair as its integer; -2: a query not evaluated, -1: a clip_id clips.parquet lacks. The
    # streaming engine joins a batch of rows at a time (tens of MB where the joined frame takes ~1 GB)
    listed_key = (
        qrels.lazy()
        .select("query_id", "clip_id")
        .join(ordinals.lazy(), on="query_id", how="left", maintain_order="left")
        .join(first.lazy(), on="clip_id", how="left", maintain_order="left")
        .select(pl.when(pl.col("_q").is_null()).then(-2).otherwise((pl.col("_q") * n + pl.col("_at").cast(pl.Int64)).fill_null(-1)).alias("_key"))
        .collect(engine="streaming")["_key"]
        .to_numpy()
    )
    is_missing = ~_within(expected, listed_key)
    is_extra = (listed_key != -2) & ~_within(listed_key, expected)
    names = np.asarray(queries, dtype=object)
    missing = pl.DataFrame(
        {"query_id": names[expected[is_missing] // n].tolist(), "clip_id": t["clips"]["clip_id"].gather(expected[is_missing] % n).cast(pl.String)},
        schema={"query_id": pl.String, "clip_id": pl.String},
    ).sort("query_id", "clip_id")
    extra = qrels.with_row_index("_row").filter(pl.Series(is_extra)).sort("query_id", "clip_id")
    for row in missing.head(rec.max_examples).iter_rows(named=True):
        rec.violation(name, f"missing from qrels.parquet: ({row['query_id']}, {row['clip_id']}) is relevant by §2", 0)
    for row in extra.head(rec.max_examples).iter_rows(named=True):
        rec.violation(name, f"extra in qrels.parquet row {row['_row']}: ({row['query_id']}, {row['clip_id']}) is not relevant by §2", 0)
    rec.get(name).violations += missing.height + extra.height
    rec.note(name, f"{expected.size} relevant pair(s) recomputed, {missing.height} missing, {extra.height} extra")


def _within(values: np.ndarray, among: np.ndarray, block: int = 1 << 20) -> np.ndarray:
    """Whether each of `values` is in `among`: binary searches in `among` sorted (as the pairs
    usually come, else a sorted copy), a block of values at a time (8 bytes a key, no hash table)."""
    found = np.zeros(values.size, dtype=bool)
    if not among.size:
        return found
    ordered = among if bool(np.all(among[1:] >= among[:-1])) else np.sort(among)
    for lo in range(0, values.size, block):
        part = values[lo:lo + block]
        at = np.minimum(np.searchsorted(ordered, part), ordered.size - 1)
        found[lo:lo + block] = ordered[at] == part
    return found


def _check_mc(t: Tables, rec: _Recorder, flags: dict[str, dict[int, tuple[bool, bool]]]) -> None:
    """mc.parquet's pairs against each query's relevant and hard-negative clips (`flags`: query_id ->
    clip position -> (relevant, hard negative), for the clips its rows name)."""
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
    at = _first_positions(t, "last")  # _check_relevance runs only with clips.parquet
    located = (
        mc.join(at.rename({"clip_id": "positive_clip_id", "_at": "_pos"}), on="positive_clip_id", how="left", maintain_order="left")
        .join(at.rename({"clip_id": "negative_clip_id", "_at": "_neg"}), on="negative_clip_id", how="left", maintain_order="left")
    )
    for row in located.iter_rows(named=True):
        qid, pos, neg = row["query_id"], row["positive_clip_id"], row["negative_clip_id"]
        if qid not in flags:
            continue  # unknown query (layout.references) or unparsable logic (queries.logic)
        where = f"mc.parquet row {row['_row']} (query {qid})"
        if row["_pos"] is not None and not flags[qid][row["_pos"]][0]:
            rec.violation(name, f"{where}: positive {pos} is not relevant")
        if row["_neg"] is not None:
            relevant, hard = flags[qid][row["_neg"]]
            if relevant:
                rec.violation(name, f"{where}: negative {neg} is relevant")
            elif not hard:
                rec.violation(name, f"{where}: negative {neg} is not a hard negative (lacks a positively mentioned label)")
