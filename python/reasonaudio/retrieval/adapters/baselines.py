"""Sanity baselines: seeded random embeddings (chance) and the qrels oracle (upper bound)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import polars as pl

from reasonaudio.errors import UserError
from reasonaudio.retrieval.base import ClipSet, EmbeddingModel, ModelOptions, QuerySet, ScoringModel
from reasonaudio.retrieval.registry import ModelMeta

RANDOM_DIM = 64


class RandomModel(EmbeddingModel):
    """Gaussian vectors seeded by (seed, side, item), so an item's vector never depends on batching.

    Clips are keyed by file name (not full path), so moving a benchmark keeps the same scores.
    """

    def __init__(self, seed: int = 0, dim: int = RANDOM_DIM) -> None:
        self.seed = seed
        self.dim = dim

    def _vector(self, side: str, key: str) -> np.ndarray:
        digest = hashlib.blake2b(f"{self.seed}\0{side}\0{key}".encode(), digest_size=16).digest()
        rng = np.random.default_rng(int.from_bytes(digest, "little"))
        return rng.standard_normal(self.dim).astype(np.float32)

    def encode_text(self, texts: list[str]) -> np.ndarray:
        return np.stack([self._vector("text", t) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    def encode_audio(self, paths: list[Path]) -> np.ndarray:
        vectors = [self._vector("audio", Path(p).name) for p in paths]
        return np.stack(vectors) if vectors else np.zeros((0, self.dim), np.float32)

    def encode_queries(self, queries: QuerySet) -> np.ndarray:
        # keyed by id, so two queries with the same wording are still independent draws
        return self.encode_text([f"{qid}\0{text}" for qid, text in zip(queries.ids, queries.texts)])


class OracleModel(ScoringModel):
    """Scores 1 for the (query, clip) pairs in qrels, 0 elsewhere."""

    def __init__(self) -> None:
        self.qrels: pl.DataFrame | None = None

    def prepare(self, benchmark) -> None:
        self.qrels = benchmark.qrels

    def score(self, queries: QuerySet, clips: ClipSet) -> np.ndarray:
        if self.qrels is None:
            raise UserError("oracle: prepare(benchmark) must run before score()")
        q_index = {q: i for i, q in enumerate(queries.ids)}
        c_index = {c: i for i, c in enumerate(clips.ids)}
        scores = np.zeros((len(queries.ids), len(clips.ids)), dtype=np.float32)
        relevant = self.qrels.filter(pl.col("relevance") > 0)
        for qid, cid in zip(relevant["query_id"].to_list(), relevant["clip_id"].to_list()):
            if qid in q_index and cid in c_index:
                scores[q_index[qid], c_index[cid]] = 1.0
        return scores


def random_from_spec(argument: str | None, options: ModelOptions) -> RandomModel:
    if argument in (None, ""):
        return RandomModel(seed=options.seed)
    try:
        return RandomModel(seed=int(argument))
    except ValueError:
        raise UserError(f"--model random:{argument}: the argument must be an integer seed") from None


def oracle_from_spec(argument: str | None, options: ModelOptions) -> OracleModel:
    if argument:
        raise UserError(f"--model oracle:{argument}: oracle takes no argument")
    return OracleModel()


MODELS = (
    ModelMeta("random", "model", "random[:SEED]", "baseline", random_from_spec, vram="CPU", extra="", note="chance"),
    ModelMeta("oracle", "model", "oracle", "baseline", oracle_from_spec, vram="CPU", extra="",
              note="the qrels themselves (upper bound)"),
)
