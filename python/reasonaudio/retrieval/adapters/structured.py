"""Structured retrieval (`structured`): query text -> logic -> evaluated on the true events.

The text is parsed by the template grammar (`reasonaudio.queries.QueryParser`) into the contract's
logic JSON (§2); the logic is then evaluated against events.parquet by the Rust relevance engine,
i.e. with perfect perception. Clips where
the logic holds score 1, the others 0, so relevant clips come first and ties keep corpus order.
A query the parser cannot read scores 0 everywhere (recorded in `unparsed`), rather than
aborting the run.
"""

from __future__ import annotations

import numpy as np

from reasonaudio.relevance import relevance_csr
from reasonaudio.errors import UserError
from reasonaudio.queries import QueryParser
from reasonaudio.retrieval.base import ClipSet, ModelOptions, QuerySet, ScoringModel
from reasonaudio.retrieval.registry import ModelMeta


class StructuredModel(ScoringModel):
    def __init__(self) -> None:
        self.benchmark = None
        self.unparsed: list[str] = []

    def prepare(self, benchmark) -> None:
        if benchmark.events.height == 0:
            raise UserError(f"{benchmark.root}: the structured model needs events.parquet")
        self.benchmark = benchmark

    def score(self, queries: QuerySet, clips: ClipSet) -> np.ndarray:
        atoms = self.benchmark.atoms
        parser = QueryParser(atoms["label"].to_list(), atoms["phrase"].to_list())
        logics = []
        self.unparsed = []
        for qid, text in zip(queries.ids, queries.texts):
            try:
                logics.append(parser.parse(text))
            except UserError:
                self.unparsed.append(qid)
                logics.append({"all": [{"has": "\0unparsed"}]})  # a label no clip has: holds nowhere
        csr = relevance_csr(
            self.benchmark.events,
            logics,
            sample_rate=self.benchmark.sample_rate,
            clip_ids=list(clips.ids),
            query_ids=list(queries.ids),
        )
        scores = np.zeros((len(logics), len(clips.ids)), dtype=np.float32)
        rows = np.repeat(np.arange(len(logics)), np.diff(csr.indptr.astype(np.int64)))
        scores[rows, csr.clip_indices.astype(np.int64)] = 1.0
        return scores


def from_spec(argument: str | None, options: ModelOptions) -> StructuredModel:
    if argument:
        raise UserError(f"--model structured:{argument}: structured takes no argument")
    return StructuredModel()


MODELS = (
    ModelMeta("structured", "model", "structured", "baseline", from_spec, vram="CPU", extra="",
              note="query logic on true events"),
)
