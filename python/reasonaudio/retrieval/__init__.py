"""Text-to-audio retrieval: model adapters (`base`, `adapters/`) and exhaustive ranking (`index`).
`load_any_benchmark` lives in `reasonaudio.io` (re-exported here for existing callers)."""

from __future__ import annotations

from reasonaudio.io import load_any_benchmark
from reasonaudio.retrieval.base import (
    ClipSet,
    EmbeddingModel,
    ModelOptions,
    QuerySet,
    RetrievalModel,
    ScoringModel,
    load_model,
    model_names,
    parse_spec,
)

__all__ = [
    "ClipSet",
    "EmbeddingModel",
    "ModelOptions",
    "QuerySet",
    "RetrievalModel",
    "ScoringModel",
    "load_any_benchmark",
    "load_model",
    "model_names",
    "parse_spec",
]
