"""Structured retrieval (`structured`): query text -> logic -> evaluated on the true events.

The text is parsed by `reasonaudio.queries.parse_query(text, atoms)` into the contract's logic JSON
(§2); the logic is then evaluated against events.parquet, i.e. with perfect perception. Clips where
the logic holds score 1, the others 0, so relevant clips come first and ties keep corpus order.
A query the parser cannot read scores 0 everywhere (recorded in `unparsed`), rather than
aborting the run.
"""

from __future__ import annotations

import json

import numpy as np
import polars as pl

from reasonaudio.errors import UserError
from reasonaudio.retrieval.base import ClipSet, ModelOptions, QuerySet, ScoringModel


def _holds(constraint: dict, events: dict[str, list[tuple[int, int]]], sample_rate: int) -> bool:
    """The contract's §2 table for one clip; `events` maps label -> [(onset, offset)] in samples."""
    if "all" in constraint:
        return all(_holds(c, events, sample_rate) for c in constraint["all"])
    if "has" in constraint:
        return bool(events.get(constraint["has"]))
    if "not" in constraint:
        return not events.get(constraint["not"])
    if "before" in constraint:
        a, b = constraint["before"]
        return any(x[1] <= y[0] for x in events.get(a, ()) for y in events.get(b, ()))
    if "overlap" in constraint:
        a, b = constraint["overlap"]
        return any(min(x[1], y[1]) - max(x[0], y[0]) > 0 for x in events.get(a, ()) for y in events.get(b, ()))
    if "duration" in constraint:
        spec = constraint["duration"]
        lo, hi = spec.get("min_s"), spec.get("max_s")
        for on, off in events.get(spec["label"], ()):
            dur = (off - on) / sample_rate
            if (lo is None or dur >= lo) and (hi is None or dur <= hi):
                return True
        return False
    raise UserError(f"unknown logic constraint {json.dumps(constraint)}")


def relevance_matrix(logics: list[dict], clip_ids: list[str], events: pl.DataFrame, sample_rate: int) -> np.ndarray:
    """bool[n_queries, n_clips]: where each logic holds on each clip's events."""
    by_clip: dict[str, dict[str, list[tuple[int, int]]]] = {cid: {} for cid in clip_ids}
    for cid, label, on, off in zip(events["clip_id"].to_list(), events["label"].to_list(),
                                   events["onset_sample"].to_list(), events["offset_sample"].to_list()):
        if cid in by_clip:
            by_clip[cid].setdefault(label, []).append((int(on), int(off)))
    out = np.zeros((len(logics), len(clip_ids)), dtype=bool)
    for j, cid in enumerate(clip_ids):
        for i, logic in enumerate(logics):
            out[i, j] = _holds(logic, by_clip[cid], sample_rate)
    return out


class StructuredModel(ScoringModel):
    def __init__(self) -> None:
        try:
            from reasonaudio.queries import parse_query
        except ImportError:
            raise UserError("the structured model needs reasonaudio.queries.parse_query, which this build lacks") from None
        self.parse_query = parse_query
        self.benchmark = None
        self.unparsed: list[str] = []

    def prepare(self, benchmark) -> None:
        if benchmark.events.height == 0:
            raise UserError(f"{benchmark.root}: the structured model needs events.parquet")
        self.benchmark = benchmark

    def score(self, queries: QuerySet, clips: ClipSet) -> np.ndarray:
        logics = []
        self.unparsed = []
        for qid, text in zip(queries.ids, queries.texts):
            try:
                logics.append(self.parse_query(text, self.benchmark.atoms))
            except UserError:
                self.unparsed.append(qid)
                logics.append({"all": [{"has": "\0unparsed"}]})  # a label no clip has: holds nowhere
        relevant = relevance_matrix(logics, clips.ids, self.benchmark.events, self.benchmark.sample_rate)
        return relevant.astype(np.float32)


def from_spec(argument: str | None, options: ModelOptions) -> StructuredModel:
    if argument:
        raise UserError(f"--model structured:{argument}: structured takes no argument")
    return StructuredModel()
