"""Text-to-audio retrieval: the model protocol (`base`), the model registry (`registry`, `spec`), the adapters
(`adapters/`) and exhaustive FAISS ranking (`index`)."""

from __future__ import annotations

from pathlib import Path

from reasonaudio.errors import UserError
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


def load_any_benchmark(path: str | Path):
    """A benchmark directory (manifest.json), a BEIR-style folder (corpus.jsonl) or a Hugging Face
    dataset folder as the Hub hands it out (corpus/, queries/, qrels/ config folders or README configs)."""
    from reasonaudio.dataset import load_beir, load_benchmark
    from reasonaudio.hub import is_hub_folder, load_hub

    root = Path(path)
    if (root / "manifest.json").is_file():
        return load_benchmark(root)
    if (root / "corpus.jsonl").is_file() or (root / "corpus.parquet").is_file():
        return load_beir(root)
    if is_hub_folder(root):
        return load_hub(root)
    raise UserError(
        f"{root}: neither a benchmark directory (manifest.json), a BEIR folder (corpus.jsonl) nor a Hugging Face "
        "dataset folder (corpus/ or <subset>-corpus/ data folders, or README.md `configs:`)"
    )
