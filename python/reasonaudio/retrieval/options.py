"""The settings the evaluator passes to every adapter (a module of its own: the registry's loaders are
typed with it, and the model protocol imports the registry)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ModelOptions:
    """Settings the evaluator passes to every adapter."""

    batch_size: int = 32
    seed: int = 0
    device: str | None = None  # None: CUDA when torch sees one, else CPU
    progress: bool = True
    extra: dict = field(default_factory=dict)
    offline: bool = False  # Hub ids resolve from the cache only (as HF_HUB_OFFLINE=1 does)
    # what the adapter loaded, one record per weights folder or file (retrieval.weights.locate appends):
    # repo id, resolved commit, local path, bytes; results.json keeps them
    loaded: list[dict] = field(default_factory=list)
