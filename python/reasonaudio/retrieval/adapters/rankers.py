"""Named text rankers for two-stage retrieval, with the pooling and query instructions their cards give.

`two-stage:CAPTIONER+bge-m3=DIR` and `two-stage:CAPTIONER+qwen3-emb=DIR` embed query texts and clip
captions with one of the study's text retrievers, loaded from a local directory with transformers
(AutoTokenizer + AutoModel, offline); the generic `st=DIR` ranker would not apply their recipes.

- BGE-M3 (BAAI/bge-m3 model card; FlagEmbedding BGEM3 dense retrieval): the dense vector is the
  [CLS] (first) state of the last layer, L2-normalised; queries and documents are encoded the same
  way, with no instruction ("no need to add instruction to queries"). Inputs up to 8192 tokens.
- Qwen3-Embedding 0.6B / 4B / 8B (Qwen/Qwen3-Embedding-* model card, transformers usage): the vector
  is the last real token's state (left padding, `last_token_pool`), L2-normalised; queries are written
  `Instruct: {task}\\nQuery:{query}`, documents carry no instruction. The card asks for a one-sentence
  task description per use; ours is `QWEN3_TASK` (ModelOptions.extra["instruction"] replaces it).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from reasonaudio.errors import UserError
from reasonaudio.devices import torch_device
from reasonaudio.retrieval.base import ModelOptions, require
from reasonaudio.retrieval.registry import ModelMeta

QWEN3_TASK = "Given a description of sounds and their order, retrieve the audio caption that matches it"
MAX_TOKENS = 8192  # both cards' maximum input length


class HFTextRanker:
    """A transformers text encoder with one pooling rule and an optional query instruction."""

    pooling = "cls"
    padding_side = "right"
    title = "text ranker"

    def __init__(self, location: str, options: ModelOptions) -> None:
        from reasonaudio.retrieval.adapters.text import hf_offline

        transformers = require("transformers")
        self.torch = require("torch")
        self.path = Path(location)
        if not self.path.is_dir():
            raise UserError(f"{self.path}: no such {self.title} model directory (the weights must be on local disk)")
        self.options = options
        self.device = torch_device(options.device)
        with hf_offline():
            try:
                self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(self.path), local_files_only=True)
                self.model = transformers.AutoModel.from_pretrained(str(self.path), local_files_only=True)
            except (OSError, ValueError, KeyError) as err:
                raise UserError(f"{self.path}: cannot load a {self.title} tokenizer and model offline ({err})") from None
        self.tokenizer.padding_side = self.padding_side
        if self.device.startswith("cuda"):
            self.model.to(self.torch.float16 if self.pooling == "cls" else self.torch.bfloat16)
        self.model.to(self.device).eval()
        self.max_length = min(MAX_TOKENS, int(getattr(self.tokenizer, "model_max_length", MAX_TOKENS) or MAX_TOKENS))

    def query_text(self, text: str) -> str:
        return text

    def _pool(self, hidden, mask):
        if self.pooling == "cls":
            return hidden[:, 0]
        from reasonaudio.retrieval.adapters.omni import last_token_pool

        return last_token_pool(hidden, mask)

    def _encode(self, texts: list[str]) -> np.ndarray:
        out = []
        for start in range(0, len(texts), self.options.batch_size):
            batch = self.tokenizer(texts[start : start + self.options.batch_size], padding=True, truncation=True,
                                   max_length=self.max_length, return_tensors="pt").to(self.device)
            with self.torch.inference_mode():
                hidden = self.model(**batch, return_dict=True).last_hidden_state
                pooled = self.torch.nn.functional.normalize(self._pool(hidden, batch["attention_mask"]).float(), p=2, dim=-1)
            out.append(pooled.cpu().numpy())
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, 0), np.float32)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        return self._encode([self.query_text(t) for t in texts])

    def encode_documents(self, texts: list[str]) -> np.ndarray:
        return self._encode(list(texts))

    # the plain TextEncoder interface: no instruction on either side
    def encode(self, texts: list[str]) -> np.ndarray:
        return self.encode_documents(texts)


class BGEM3Ranker(HFTextRanker):
    pooling = "cls"
    padding_side = "right"
    title = "BGE-M3"


class Qwen3EmbeddingRanker(HFTextRanker):
    pooling = "last"
    padding_side = "left"
    title = "Qwen3-Embedding"

    def __init__(self, location: str, options: ModelOptions) -> None:
        super().__init__(location, options)
        self.task = str(options.extra.get("instruction", QWEN3_TASK))

    def query_text(self, text: str) -> str:
        return f"Instruct: {self.task}\nQuery:{text}"


def _loader(cls: type[HFTextRanker]):
    def load(value: str | None, options: ModelOptions) -> HFTextRanker:
        assert value  # the registry gives a part whose form takes a value only with one
        return cls(value, options)

    return load


MODELS = (
    ModelMeta("bge-m3", "ranker", "bge-m3=DIR", "two-stage ranker", _loader(BGEM3Ranker), study="BGE-M3",
              follows="BAAI/bge-m3 model card; FlagEmbedding BGEM3 dense retrieval", vram="~1.2 GB fp16",
              packages=("torch", "transformers"), note="dense [CLS], L2, no query instruction"),
    ModelMeta("qwen3-emb", "ranker", "qwen3-emb=DIR", "two-stage ranker", _loader(Qwen3EmbeddingRanker),
              study="Qwen3-Embedding", follows="Qwen/Qwen3-Embedding-* model card, transformers usage",
              vram="8B ~16 GB bf16 (0.6B ~1.2 GB)", packages=("torch", "transformers"),
              note="last token, left padding, L2, 'Instruct: ...\\nQuery:' on queries"),
)
