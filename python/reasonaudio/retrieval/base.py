"""The retrieval-model protocol and `load_model(SPEC)`.

A model is one of two kinds:

- an :class:`EmbeddingModel` maps query texts and clip audio into one vector space
  (`encode_text(list[str]) -> float32[n, d]`, `encode_audio(list[path]) -> float32[n, d]`); the
  evaluator L2-normalises the vectors and ranks clips by the core's canonical inner product (cosine);
- a :class:`ScoringModel` returns a score matrix `float32[n_queries, n_clips]` directly (BM25 over
  captions, structured logic, the qrels oracle) — nothing to embed, so nothing to index.

Both get the loaded benchmark through `prepare(benchmark)` before any encoding, for adapters that
need metadata (the oracle captioner reads events, precomputed embeddings map ids to rows). The
id-aware hooks `encode_queries` / `encode_clips` default to the text/path methods; adapters keyed
by id (precomputed) override them.

Which specs exist, and what each needs, is the registry's (reasonaudio.retrieval.registry): every
adapter module declares its entries beside its loaders; `reasonaudio models` lists them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from reasonaudio.errors import UserError
from reasonaudio.errors import require  # noqa: F401  (the adapters' import of it)
from reasonaudio.retrieval import registry
from reasonaudio.retrieval.options import ModelOptions

if TYPE_CHECKING:
    from reasonaudio.io.benchmark import Benchmark


@dataclass(frozen=True)
class QuerySet:
    ids: list[str]
    texts: list[str]


@dataclass(frozen=True)
class ClipSet:
    # read-only sequences: `evaluate` passes columns that make each id and path when it is read
    # (`reasonaudio.io.columns`), so that a million clips are not a million Python objects
    ids: Sequence[str]
    # files, or for audio embedded in a Hub dataset `reasonaudio.io.hub.EmbeddedAudio` references
    # (os.PathLike) that `adapters.audio.load_mono` decodes when a batch reaches them
    paths: Sequence[Path]


class RetrievalModel(ABC):
    """Common part of both model kinds."""

    spec: str = ""

    def prepare(self, benchmark: "Benchmark") -> None:  # noqa: B027 - optional hook
        """Receive the benchmark before encoding (metadata-hungry adapters override this)."""


class EmbeddingModel(RetrievalModel):
    @abstractmethod
    def encode_text(self, texts: list[str]) -> np.ndarray: ...

    @abstractmethod
    def encode_audio(self, paths: list[Path]) -> np.ndarray: ...

    def encode_queries(self, queries: QuerySet) -> np.ndarray:
        return self.encode_text(queries.texts)

    def encode_clips(self, clips: ClipSet) -> np.ndarray:
        return self.encode_audio(clips.paths)


class ScoringModel(RetrievalModel):
    @abstractmethod
    def score(self, queries: QuerySet, clips: ClipSet) -> np.ndarray:
        """float32[n_queries, n_clips]; higher is better."""


def as_float32_matrix(x, what: str, rows: int | None = None) -> np.ndarray:
    """Check an adapter's output: finite float32 [n, d]."""
    arr = np.asarray(x, dtype=np.float32)
    if arr.ndim != 2:
        raise UserError(f"{what}: expected a 2-d array [n, d], got shape {arr.shape}")
    if rows is not None and arr.shape[0] != rows:
        raise UserError(f"{what}: expected {rows} rows, got {arr.shape[0]}")
    # in blocks of rows: a memory-mapped store is checked without a mask of its whole size
    if not all(np.isfinite(arr[i : i + 65_536]).all() for i in range(0, max(len(arr), 1), 65_536)):
        raise UserError(f"{what}: contains NaN or infinite values")
    return np.ascontiguousarray(arr)


def parse_spec(spec: str) -> tuple[str, str | None]:
    """Split `NAME[:ARGUMENT]` of a registered model; the argument keeps any further colons (Windows paths,
    nested specs)."""
    meta, argument = registry.lookup(spec)
    return meta.name, argument


def load_model(spec: str, options: ModelOptions | None = None) -> RetrievalModel:
    """Build the adapter a spec names (heavy libraries are imported here, not before)."""
    options = options or ModelOptions()
    meta, argument = registry.lookup(spec)
    assert meta.loader is not None  # lookup refuses entries without one
    model = meta.loader(argument, options)
    model.spec = spec
    return model


