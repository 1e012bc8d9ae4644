"""MLLM embedders on the Qwen2.5-Omni thinker: audio and text through the same model, one vector each.

`lco-omni:DIR`, `e5-omni:DIR`, `omniembed:DIR` load `Qwen2_5OmniThinkerForConditionalGeneration` and
`Qwen2_5OmniProcessor` from local files only. Each family differs only in how an input is written as a
chat turn and where the vector is read; the recipes below follow each model's own published code:

- LCO-Embedding-Omni 3B / 7B (github.com/LCO-Embedding/LCO-Embedding, README "Text Batch Encodings" and
  Training/train_omni_any2any.py): the user turn is the item followed by "\\nSummarize the above <kind> in
  one word:", rendered with the generation prompt; the vector is the last position of the last hidden
  layer with left padding, L2-normalised in training. The README shows the text and image prompts; the
  audio prompt is the same sentence with "audio" (training writes one per modality the same way).
- e5-omni 3B / 7B (Haon-Chen/e5-omni-*, as wrapped in mteb's e5_omni model implementation): queries
  are "Query: " + text, documents carry no text, the turn is rendered with the generation prompt and
  "<|endoftext|>" appended; last position, left padding, L2-normalised. The checkpoint ships no
  processor: pass `processor=DIR` (the base Qwen2.5-Omni-3B/7B directory) when DIR has none.
- OmniEmbed-v0.1 (Tevatron/OmniEmbed-v0.1; tevatron examples/multimodal/qwen_omni and
  retriever/collator.py MultiModalEncodeCollator): a LoRA adapter on Tevatron/Qwen2.5-Omni-7B-Thinker;
  queries "Query: " + text, documents without text, *no* generation prompt, "<|endoftext|>" appended
  (--append_eos_token), pooling "last", --normalize. DIR may be the adapter (adapter_config.json, loaded
  with peft onto `base=DIR`, or onto the adapter's own base path when that is a local directory) or a
  merged checkpoint.

Audio is read as mono, resampled to the feature extractor's rate (16 kHz) and cropped to its first
window (chunk_length, 30 s for the Whisper extractor the processor uses), so long clips never depend on
a random crop. Weights are bfloat16 on CUDA and float32 on CPU.
"""

from __future__ import annotations

import inspect
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from reasonaudio.console import progress_bar as tqdm

from reasonaudio.errors import UserError
from reasonaudio.retrieval.base import EmbeddingModel, ModelOptions, require
from reasonaudio.devices import torch_device
from reasonaudio.retrieval.registry import ModelMeta, Pin
from reasonaudio.retrieval.spec import parse_options
from reasonaudio.retrieval.weights import hub_ref, locate


@dataclass(frozen=True)
class OmniRecipe:
    """How one embedder family writes an input as a chat turn."""

    name: str
    title: str
    query_template: str  # "{}" is the query text
    text_after_audio: str | None  # instruction placed after the audio in a document turn
    generation_prompt: bool  # render the assistant header after the user turn
    suffix: str  # appended to the rendered turn (the token whose state is pooled)
    source: str


RECIPES = {
    "lco-omni": OmniRecipe(
        name="lco-omni", title="LCO-Embedding-Omni",
        query_template="{}\nSummarize the above text in one word:",
        text_after_audio="\nSummarize the above audio in one word:",
        generation_prompt=True, suffix="",
        source="github.com/LCO-Embedding/LCO-Embedding README + Training/train_omni_any2any.py",
    ),
    "e5-omni": OmniRecipe(
        name="e5-omni", title="e5-omni",
        query_template="Query: {}", text_after_audio=None, generation_prompt=True, suffix="<|endoftext|>",
        source="mteb model implementation e5_omni (E5OmniWrapper), arXiv:2601.03666",
    ),
    "omniembed": OmniRecipe(
        name="omniembed", title="OmniEmbed-v0.1",
        query_template="Query: {}", text_after_audio=None, generation_prompt=False, suffix="<|endoftext|>",
        source="github.com/texttron/tevatron examples/multimodal/qwen_omni, retriever/collator.py",
    ),
}


def last_token_pool(hidden, attention_mask):
    """The state at each row's last real position, whichever side the batch was padded on."""
    torch = require("torch")

    if bool(attention_mask[:, -1].all()):  # left padding (or none): the last column is real for every row
        return hidden[:, -1]
    last = attention_mask.long().sum(dim=1) - 1
    return hidden[torch.arange(hidden.shape[0], device=hidden.device), last]


def _has_processor(path: Path) -> bool:
    return any((path / name).is_file() for name in ("processor_config.json", "preprocessor_config.json"))


def _require_dir(path: Path, what: str) -> Path:
    if not path.is_dir():
        raise UserError(f"{path}: no such {what} directory (a local directory or a Hub id ORG/NAME[@REV])")
    return path


def _adapter_weights(path: Path) -> dict:
    torch = require("torch")

    if (path / "adapter_model.safetensors").is_file():
        from safetensors.torch import load_file

        return load_file(str(path / "adapter_model.safetensors"))
    if (path / "adapter_model.bin").is_file():
        return torch.load(str(path / "adapter_model.bin"), map_location="cpu", weights_only=True)
    raise UserError(f"{path}: adapter_config.json but no adapter_model.safetensors / adapter_model.bin")


# transformers 5 moved the thinker's towers and text model under `thinker.model` (audio_tower, visual,
# language_model); adapters saved with transformers 4 (OmniEmbed-v0.1) name them one level up. Recent
# peft maps these itself; an older one would leave the weights unloaded with only a warning and the
# model would run as the bare base thinker, so the names are mapped here and leftovers are refused.
_V4_TO_V5 = (
    ("base_model.model.model.layers.", "base_model.model.model.language_model.layers."),
    ("base_model.model.model.embed_tokens.", "base_model.model.model.language_model.embed_tokens."),
    ("base_model.model.audio_tower.", "base_model.model.model.audio_tower."),
    ("base_model.model.visual.", "base_model.model.model.visual."),
)


def _remap_lora_keys(state: dict, model_keys: set[str]) -> dict:
    def present(key: str) -> bool:
        # the model's keys carry the adapter name ("lora_A.default.weight"); saved ones do not
        head, sep, tail = key.rpartition(".")
        return key in model_keys or f"{head}.default{sep}{tail}" in model_keys

    out = {}
    for key, value in state.items():
        if not present(key):
            for old, new in _V4_TO_V5:
                if key.startswith(old) and present(new + key[len(old):]):
                    key = new + key[len(old):]
                    break
        out[key] = value
    return out


class OmniEmbedder(EmbeddingModel):
    """Qwen2.5-Omni thinker as a bi-encoder, following one family's `OmniRecipe`."""

    def __init__(self, recipe: OmniRecipe, location: str, options: ModelOptions,
                 base: str | None = None, processor: str | None = None) -> None:
        from reasonaudio.retrieval.adapters.text import hf_offline

        transformers = require("transformers")
        self.torch = require("torch")
        require("torchvision", extra="paper-models")  # the processor's video part cannot be built without it
        self.recipe = recipe
        self.options = options
        self.path = _require_dir(locate(location, options), f"{recipe.title} model")
        self.device = torch_device(options.device)
        # bfloat16 halves a 7B thinker (~17 GB instead of ~34 GB); CPUs are slow at it, so they keep float32
        self.dtype = self.torch.bfloat16 if self.device.startswith("cuda") else self.torch.float32
        adapter = self.path / "adapter_config.json"
        if adapter.is_file() and base is None:
            declared = json.loads(adapter.read_text()).get("base_model_name_or_path") or ""
            if not Path(declared).is_dir() and hub_ref(declared) is None:
                raise UserError(
                    f"{self.path} is a LoRA adapter for {declared or 'an unnamed base'!r}, which is neither a local "
                    f"directory nor a Hub id; pass the base thinker with ,base=DIR"
                )
            base = declared  # the Hub id the published adapter records is fetched as any other
        if base is not None:
            base = str(locate(base, options, "base"))
        processor_dir = _require_dir(locate(processor, options, "processor"), "processor") if processor else self.path
        if not processor and not _has_processor(processor_dir) and base and _has_processor(Path(base)):
            processor_dir = Path(base)  # a LoRA directory has none; its base (full Qwen2.5-Omni) may
        if not _has_processor(processor_dir):
            raise UserError(
                f"{processor_dir}: no processor files (processor_config.json / preprocessor_config.json); "
                f"pass the base Qwen2.5-Omni directory with ,processor=DIR"
            )
        with hf_offline():
            try:
                self.processor = transformers.Qwen2_5OmniProcessor.from_pretrained(str(processor_dir), local_files_only=True)
                self.model = self._load_model(transformers, base)
            except (OSError, ValueError, KeyError) as err:
                raise UserError(f"{self.path}: cannot load a Qwen2.5-Omni thinker and processor offline ({err})") from None
        self.model.to(self.device).eval()
        self.processor.tokenizer.padding_side = "left"
        extractor = self.processor.feature_extractor
        self.sample_rate = int(extractor.sampling_rate)
        self.max_seconds = float(getattr(extractor, "chunk_length", 30))
        # transformers 5 merges audio into the sequence inside `thinker.model`; calling it skips the
        # LM head (a [batch, length, 152k] logits tensor nobody reads). Older versions merge in forward.
        inner = getattr(self.model, "model", None)
        self._inner = inner if inner is not None and "input_features" in inspect.signature(inner.forward).parameters else None

    def _thinker(self, transformers, path: Path):
        """The thinker of a thinker-only checkpoint, or of a full Qwen2.5-Omni one (talker not built)."""
        config = path / "config.json"
        model_type = json.loads(config.read_text()).get("model_type") if config.is_file() else None
        if model_type == "qwen2_5_omni":
            full = transformers.Qwen2_5OmniForConditionalGeneration.from_pretrained(
                str(path), local_files_only=True, dtype=self.dtype, enable_audio_output=False)
            return full.thinker
        return transformers.Qwen2_5OmniThinkerForConditionalGeneration.from_pretrained(
            str(path), local_files_only=True, dtype=self.dtype)

    def _load_model(self, transformers, base: str | None):
        adapter = self.path / "adapter_config.json"
        if not adapter.is_file():
            return self._thinker(transformers, self.path)
        peft = require("peft", extra="paper-models")
        base_model = self._thinker(transformers, _require_dir(Path(base), "base thinker"))
        model = peft.get_peft_model(base_model, peft.PeftConfig.from_pretrained(str(self.path)))
        state = _remap_lora_keys(_adapter_weights(self.path), set(model.state_dict()))
        result = peft.set_peft_model_state_dict(model, state)
        unexpected = list(getattr(result, "unexpected_keys", []) or [])
        if unexpected:
            raise UserError(
                f"{self.path}: {len(unexpected)} LoRA weight(s) match no module of this thinker, e.g. {unexpected[0]} "
                f"(a different base architecture?)"
            )
        # merged once at load: the forward pass is then the plain thinker's, at its speed
        return model.merge_and_unload()

    # -- inputs ---------------------------------------------------------------------------------

    def render(self, contents: list[list[dict]]) -> list[str]:
        """Each user turn through the checkpoint's own chat template, plus the recipe's suffix."""
        out = []
        for content in contents:
            text = self.processor.apply_chat_template(
                [{"role": "user", "content": content}], tokenize=False, add_generation_prompt=self.recipe.generation_prompt
            )
            if isinstance(text, list):
                text = text[0]
            out.append(text + self.recipe.suffix)
        return out

    def query_contents(self, texts: list[str]) -> list[list[dict]]:
        return [[{"type": "text", "text": self.recipe.query_template.format(t)}] for t in texts]

    def audio_contents(self, n: int) -> list[list[dict]]:
        content: list[dict] = [{"type": "audio", "audio": "clip"}]
        if self.recipe.text_after_audio:
            content.append({"type": "text", "text": self.recipe.text_after_audio})
        return [list(content) for _ in range(n)]

    def text_inputs(self, texts: list[str]):
        return self.processor(text=self.render(self.query_contents(texts)), return_tensors="pt", padding=True)

    def audio_inputs(self, paths: list[Path]):
        from reasonaudio.retrieval.adapters.audio import load_mono

        audio = [load_mono(p, self.sample_rate, self.max_seconds) for p in paths]
        return self.processor(text=self.render(self.audio_contents(len(audio))), audio=audio,
                              sampling_rate=self.sample_rate, return_tensors="pt", padding=True)

    # -- encoding -------------------------------------------------------------------------------

    def embed(self, inputs) -> np.ndarray:
        inputs = inputs.to(self.device)
        if "input_features" in inputs:
            inputs["input_features"] = inputs["input_features"].to(self.dtype)
        with self.torch.inference_mode():
            if self._inner is not None:
                hidden = self._inner(**inputs, use_cache=False, return_dict=True).last_hidden_state
            else:
                hidden = self.model(**inputs, use_cache=False, output_hidden_states=True, return_dict=True).hidden_states[-1]
            pooled = last_token_pool(hidden, inputs["attention_mask"]).float()
            pooled = self.torch.nn.functional.normalize(pooled, p=2, dim=-1)
        return pooled.cpu().numpy().astype(np.float32)

    def _batches(self, items: list, desc: str):
        return tqdm(range(0, len(items), self.options.batch_size), desc=desc, unit="batch",
                    disable=not self.options.progress)

    def encode_text(self, texts: list[str]) -> np.ndarray:
        out = [self.embed(self.text_inputs(texts[s : s + self.options.batch_size])) for s in self._batches(texts, "encode text")]
        return np.concatenate(out) if out else np.zeros((0, 0), np.float32)

    def encode_audio(self, paths: list[Path]) -> np.ndarray:
        out = [self.embed(self.audio_inputs(paths[s : s + self.options.batch_size])) for s in self._batches(paths, "encode audio")]
        return np.concatenate(out) if out else np.zeros((0, 0), np.float32)


def _factory(name: str, allowed: tuple[str, ...]):
    def from_spec(argument: str | None, options: ModelOptions) -> OmniEmbedder:
        location, extra = parse_options(argument, f"{name}:", allowed)
        return OmniEmbedder(RECIPES[name], location, options, **extra)

    return from_spec


lco_from_spec = _factory("lco-omni", ("processor",))
e5_from_spec = _factory("e5-omni", ("processor",))
omniembed_from_spec = _factory("omniembed", ("base", "processor"))

# Memory: bf16 weights plus one batch of 10 s clips; parameter counts are mteb's ModelMeta for
# e5-omni-3B/7B, the architecture LCO-Embedding-Omni-3B/7B and OmniEmbed share. Audio: the Whisper
# feature extractor's 16 kHz and first 30 s window (see the module docstring).
_PACKAGES = ("torch", "transformers", "torchvision")
_OMNI_PROCESSOR = Pin("Qwen/Qwen2.5-Omni-7B", "ae9e1690543ffd5c0221dc27f79834d0294cba00",
                      "mteb 2.26 ModelMeta, model_implementations/qwen_omni_lm.py", role="processor")
_OMNI_PROCESSOR_3B = Pin("Qwen/Qwen2.5-Omni-3B", "f75b40e3da2003cdd6e1829b1f420ca70797c34e",
                         "mteb 2.26 ModelMeta, model_implementations/qwen_omni_lm.py", role="processor")
_BATCH = "--batch-size 8 on 24 GB, 32 on 80 GB"

MODELS = (
    ModelMeta("lco-omni", "model", "lco-omni:DIR_OR_HUB_ID", "MLLM embedder", lco_from_spec,
              hub=(Pin("LCO-Embedding/LCO-Embedding-Omni-7B", "3d38f58aae1253a4443b1270b0767f1e533936cf",
                       "mteb 2.26 ModelMeta, model_implementations/lco_embedding_models.py"),
                   Pin("LCO-Embedding/LCO-Embedding-Omni-3B", "eea763cfaf673e955ae86c64968896a3fea70189",
                       "mteb 2.26 ModelMeta, model_implementations/lco_embedding_models.py")),
              study="LCO-Embedding-Omni-3B, LCO-Embedding-Omni-7B", follows=RECIPES["lco-omni"].source,
              vram=f"~17 GB (7B) / ~9 GB (3B) bf16 weights; {_BATCH}", sample_rate="16 kHz", max_audio="30 s",
              packages=_PACKAGES, extra="paper-models",
              note="prompt '...Summarize the above audio in one word:', last token, L2"),
    ModelMeta("e5-omni", "model", "e5-omni:DIR_OR_HUB_ID[,processor=QWEN_OMNI]", "MLLM embedder", e5_from_spec,
              hub=(Pin("Haon-Chen/e5-omni-7B", "ffea4ae1382fc26dc9fc337a89ced3fab58e408b",
                       "mteb 2.26 ModelMeta, model_implementations/e5_omni_models.py"),
                   Pin("Haon-Chen/e5-omni-3B", "bc2c24d7596ea578d08adffd96146ed47b1e5f72",
                       "mteb 2.26 ModelMeta, model_implementations/e5_omni_models.py"),
                   _OMNI_PROCESSOR, _OMNI_PROCESSOR_3B),
              study="e5-omni-7B", follows=RECIPES["e5-omni"].source,
              vram=f"~17 GB bf16 weights (8.9B params); {_BATCH}", sample_rate="16 kHz", max_audio="30 s",
              packages=_PACKAGES, extra="paper-models",
              note="'Query: ' on queries, generation prompt + <|endoftext|>, last token, L2; processor from the "
                   "base Qwen2.5-Omni-7B if DIR has none"),
    ModelMeta("omniembed", "model", "omniembed:LORA[,base=THINKER][,processor=QWEN_OMNI]", "MLLM embedder",
              omniembed_from_spec, study="OmniEmbed-7B (v0.1)", follows=RECIPES["omniembed"].source,
              hub=(Pin("Tevatron/OmniEmbed-v0.1", "fa8be315e74d07f563b07c0d053525de6dc7eda8",
                       "mteb 2.26 ModelMeta, model_implementations/tevatron_omni_embed_models.py"),
                   Pin("Tevatron/Qwen2.5-Omni-7B-Thinker", "main", "no public pinned revision: follows main",
                       role="base"),
                   _OMNI_PROCESSOR),
              vram=f"~17 GB bf16 weights (LoRA merged at load); {_BATCH}", sample_rate="16 kHz", max_audio="30 s",
              packages=_PACKAGES + ("peft",), extra="paper-models",
              note="LoRA on Tevatron/Qwen2.5-Omni-7B-Thinker; 'Query: ', no generation prompt, <|endoftext|>, "
                   "last token, L2"),
)
