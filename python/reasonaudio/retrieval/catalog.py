"""What every model spec needs: the view of the registry behind `reasonaudio models`.

The entries themselves are declared beside their loaders in the adapter modules (see
reasonaudio.retrieval.registry); this module only selects and finds them. Each has the spec to type,
the study's model it reproduces (if any), the paper or card it follows, and what it needs to run: GPU
memory, the sample rate its audio is resampled to, the longest audio it sees (the rest of a clip is cut)
and the Python packages it imports. Memory figures are bf16/fp16 weights plus room for one batch of 10 s
clips at the stated batch size; they are estimates from parameter counts, not measurements.
"""

from __future__ import annotations

from reasonaudio.retrieval.registry import KINDS, PARADIGMS, ModelMeta, listing

__all__ = ["PARADIGMS", "ModelMeta", "card", "cards"]


def cards(paradigm: str | None = None) -> list[ModelMeta]:
    """The listed entries (of one PARADIGMS group: "MLLM", "CLIP", "two-stage", "detect", "baseline")."""
    return listing(paradigm)


def card(name: str, kind: str | None = None) -> ModelMeta:
    """The listed entry called `name`; `kind` chooses where a model and a two-stage part share a name (oracle)."""
    found = [m for m in listing() if m.name == name and (kind is None or m.kind == kind)]
    if len(found) > 1:
        raise KeyError(f"{name}: listed as {', '.join(m.kind for m in found)}; pass kind= (one of {KINDS})")
    if not found:
        raise KeyError(name)
    return found[0]
