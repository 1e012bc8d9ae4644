"""Text-to-audio retrieval: the model protocol (`base`), the model registry (`registry`, `spec`), the adapters
(`adapters/`) and exhaustive ranking (`index`). `load_any_benchmark` lives in `reasonaudio.io` (re-exported
here for existing callers)."""

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
    parse_spec,
)
from reasonaudio.retrieval.registry import ModelMeta, model_names

__all__ = [
    "ClipSet",
    "EmbeddingModel",
    "ModelMeta",
    "ModelOptions",
    "QuerySet",
    "RetrievalModel",
    "ScoringModel",
    "load_any_benchmark",
    "load_model",
    "model_names",
    "parse_spec",
]
