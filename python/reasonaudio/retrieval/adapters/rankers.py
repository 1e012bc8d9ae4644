"""The rankers of two-stage retrieval: BM25 over caption words, and the study's text retrievers with the
pooling and query instructions their cards give (sentence-transformers directories are text.py's).

`two-stage:CAPTIONER+bm25` scores captions with Okapi BM25 (rank-bm25) over lower-cased word tokens;
nothing is embedded, so the two-stage model is a scoring one (`TwoStageBM25`).

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

import re
from typing import TYPE_CHECKING

import numpy as np

from reasonaudio.errors import UserError
from reasonaudio.retrieval.adapters.two_stage import CaptioningModel
from reasonaudio.retrieval.base import ClipSet, ModelOptions, QuerySet, ScoringModel, require
from reasonaudio.devices import torch_device
from reasonaudio.retrieval.registry import ModelMeta, Pin
from reasonaudio.retrieval.weights import locate

if TYPE_CHECKING:
    from reasonaudio.retrieval.adapters.captioners import Captioner

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
        self.path = locate(location, options)
        if not self.path.is_dir():
            raise UserError(f"{self.path}: no such {self.title} model directory")
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


TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


class TwoStageBM25(CaptioningModel, ScoringModel):
    """Okapi BM25 (rank-bm25) of each query's tokens over the caption tokens."""

    def __init__(self, captioner: "Captioner", progress: bool = False) -> None:
        self.captioner = captioner
        self.captions: list[str] = []
        self.caption_ids: list[str] = []
        self.progress = progress

    def prepare(self, benchmark) -> None:
        self.captioner.prepare(benchmark)

    def score(self, queries: QuerySet, clips: ClipSet) -> np.ndarray:
        from reasonaudio.console import progress_bar as tqdm

        rank_bm25 = require("rank_bm25", extra="eval")
        self._caption(self.captioner, clips)
        # rank-bm25 divides by the mean document length; an all-empty corpus would divide by zero
        corpus = [tokenize(c) or ["<empty>"] for c in self.captions]
        bm25 = rank_bm25.BM25Okapi(corpus)
        # rank-bm25 scores one query at a time in Python: ~25 ms per query over 10k captions
        texts = tqdm(queries.texts, desc="bm25", unit="query", disable=not self.progress)
        return np.stack([bm25.get_scores(tokenize(q)) for q in texts]).astype(np.float32)


class BM25Ranker:
    """The `bm25` ranker: nothing to embed; it makes the two-stage model a scoring one (TwoStageBM25)."""

    def __init__(self, progress: bool) -> None:
        self.progress = progress

    def two_stage(self, captioner: "Captioner") -> TwoStageBM25:
        return TwoStageBM25(captioner, progress=self.progress)


def _loader(cls: type[HFTextRanker]):
    def load(value: str | None, options: ModelOptions) -> HFTextRanker:
        assert value  # the registry gives a part whose form takes a value only with one
        return cls(value, options)

    return load


_QWEN3_SOURCE = "mteb 2.26 ModelMeta, model_implementations/qwen3_models.py"

MODELS = (
    ModelMeta("bge-m3", "ranker", "bge-m3=DIR_OR_HUB_ID", "two-stage ranker", _loader(BGEM3Ranker), study="BGE-M3",
              hub=(Pin("BAAI/bge-m3", "5617a9f61b028005a4858fdac845db406aefb181",
                       "mteb 2.26 ModelMeta, model_implementations/bge_models.py"),),
              follows="BAAI/bge-m3 model card; FlagEmbedding BGEM3 dense retrieval", vram="~1.2 GB fp16",
              packages=("torch", "transformers"), note="dense [CLS], L2, no query instruction"),
    ModelMeta("qwen3-emb", "ranker", "qwen3-emb=DIR_OR_HUB_ID", "two-stage ranker", _loader(Qwen3EmbeddingRanker),
              hub=(Pin("Qwen/Qwen3-Embedding-8B", "4e423935c619ae4df87b646a3ce949610c66241c", _QWEN3_SOURCE),
                   Pin("Qwen/Qwen3-Embedding-4B", "636cd9bf47d976946cdbb2b0c3ca0cb2f8eea5ff", _QWEN3_SOURCE),
                   Pin("Qwen/Qwen3-Embedding-0.6B", "b22da495047858cce924d27d76261e96be6febc0", _QWEN3_SOURCE)),
              study="Qwen3-Embedding", follows="Qwen/Qwen3-Embedding-* model card, transformers usage",
              vram="8B ~16 GB bf16 (0.6B ~1.2 GB)", packages=("torch", "transformers"),
              note="last token, left padding, L2, 'Instruct: ...\\nQuery:' on queries"),
    ModelMeta("bm25", "ranker", "bm25", "two-stage ranker", lambda value, options: BM25Ranker(options.progress),
              follows="rank-bm25 BM25Okapi", vram="CPU", packages=("rank_bm25",),
              note="Okapi BM25 over caption words", extra="eval"),
)
