"""Two-stage retrieval: caption every clip (audio -> text), then rank captions against the queries.

`two-stage:CAPTIONER+RANKER`, split at the last `+` (a captions file's path may hold one). Both parts are
registry entries, of kinds "captioner" and "ranker": the captioners live in captioners.py, the rankers in
rankers.py (BM25 and the study's text retrievers) and text.py (sentence-transformers);
`reasonaudio models --paradigm two-stage` lists them with what each needs. This module only composes
them: an encoder ranker embeds queries and captions (`TwoStageEmbedding`), a ranker that scores by itself
builds its own model (`ranker.two_stage(captioner)`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from reasonaudio.errors import UserError
from reasonaudio.retrieval import registry
from reasonaudio.retrieval.base import ClipSet, EmbeddingModel, ModelOptions
from reasonaudio.retrieval.registry import ModelMeta
from reasonaudio.retrieval.spec import split_part, split_two_stage


class CaptioningModel:
    """What both two-stage kinds share: the captions of the last clips they ranked."""

    captions: list[str]
    caption_ids: list[str]

    def caption_table(self) -> pl.DataFrame:
        """clip_id, caption of the clips last captioned (loadable back as `captions=FILE.parquet`)."""
        return pl.DataFrame({"clip_id": self.caption_ids, "caption": self.captions},
                            schema={"clip_id": pl.Utf8, "caption": pl.Utf8})

    def _caption(self, captioner, clips: ClipSet) -> list[str]:
        captions = captioner.caption(clips)
        if len(captions) != len(clips.ids):
            raise UserError(f"{self.spec}: the captioner returned {len(captions)} captions for {len(clips.ids)} clips")
        self.captions, self.caption_ids = [str(c) for c in captions], list(clips.ids)
        return self.captions


class TwoStageEmbedding(CaptioningModel, EmbeddingModel):
    """Captions embedded by a text encoder; queries embedded by the same encoder."""

    def __init__(self, captioner, encoder) -> None:
        self.captioner = captioner
        self.encoder = encoder
        self.captions: list[str] = []
        self.caption_ids: list[str] = []

    def prepare(self, benchmark) -> None:
        self.captioner.prepare(benchmark)

    def encode_text(self, texts: list[str]) -> np.ndarray:
        # named rankers (rankers.py) give queries their card's instruction; plain encoders have none
        encode = getattr(self.encoder, "encode_queries", self.encoder.encode)
        return encode(texts)

    def encode_audio(self, paths: list[Path]) -> np.ndarray:
        raise UserError("two-stage models caption clips by id; call encode_clips")

    def encode_clips(self, clips: ClipSet) -> np.ndarray:
        encode = getattr(self.encoder, "encode_documents", self.encoder.encode)
        return encode(self._caption(self.captioner, clips))


def from_spec(argument: str | None, options: ModelOptions):
    parts = split_two_stage(argument)
    if parts is None:
        raise UserError("--model two-stage:CAPTIONER+RANKER, e.g. two-stage:oracle+minilm or two-stage:captions=caps.json+bm25")
    # both parts are looked up before either loads its (possibly large) weights
    (captioner_name, captioner_value), (ranker_name, ranker_value) = (split_part(p) for p in parts)
    captioner_meta = registry.part("captioner", parts[0], captioner_name, captioner_value)
    ranker_meta = registry.part("ranker", parts[1], ranker_name, ranker_value)
    assert captioner_meta.loader is not None and ranker_meta.loader is not None  # part() refuses the unloadable
    captioner = captioner_meta.loader(captioner_value, options)
    ranker = ranker_meta.loader(ranker_value, options)
    # an encoder (text.py, rankers.py) embeds queries and captions; a ranker that scores them itself builds its model
    build = getattr(ranker, "two_stage", None)
    return build(captioner) if build is not None else TwoStageEmbedding(captioner, ranker)


MODELS = (
    ModelMeta("two-stage", "model", "two-stage:CAPTIONER+RANKER", "two-stage", from_spec, listed=False,
              parts=("captioner", "ranker"),
              note="caption every clip, then rank captions against query texts; the captioner part may itself "
                   "contain '+', the ranker is what follows the last '+'"),
)
