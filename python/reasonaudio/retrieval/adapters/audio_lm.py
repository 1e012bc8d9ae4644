"""Audio language models: loaded and prompted in one place, for two-stage captioning and `compose run`.

One spec grammar serves both: `qwen2audio:LOCATION[,max_new_tokens=N]` (inside a two-stage model
`qwen2audio=LOCATION[,...]`, the part's own separator). LOCATION is a local directory or a Hub repo id
`ORG/NAME[@REV]` (`retrieval.weights`); alone, `qwen2audio` is Qwen/Qwen2-Audio-7B-Instruct.

`Qwen2Audio` is a Qwen2-Audio-class model (transformers `Qwen2AudioForConditionalGeneration` +
`AutoProcessor`, local files only), greedy decoding so the same clip always gets the same answer. Each
clip is read as mono, resampled to the feature extractor's rate and cropped to its window (30 s for
Whisper features). The prompt goes through the processor's chat template when it has one (the Instruct
checkpoints) and is the base model's raw audio-then-instruction format otherwise. Batches are
left-padded, so every row's new tokens start at the same position.
"""

from __future__ import annotations

from pathlib import Path

from reasonaudio.errors import UserError
from reasonaudio.devices import torch_device
from reasonaudio.errors import require
from reasonaudio.retrieval.options import ModelOptions
from reasonaudio.retrieval.registry import Pin
from reasonaudio.retrieval.spec import parse_options
from reasonaudio.retrieval.weights import locate

#: the repositories a bare `qwen2audio` and its documentation name (mteb pins the base model only)
QWEN2_AUDIO = (
    Pin("Qwen/Qwen2-Audio-7B-Instruct", "main", "no public pinned revision: follows main"),
    Pin("Qwen/Qwen2-Audio-7B", "dd84470756e6277a71d4d7188773a43cde92696e",
        "mteb 2.26 ModelMeta, model_implementations/audio_qwen2_models.py"),
)
OPTIONS = ("max_new_tokens",)


def parse_max_new_tokens(value, what: str) -> int:
    """A caption or answer budget: an integer >= 1 (from a spec's text or ModelOptions.extra)."""
    if isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            pass
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise UserError(f"{what}: max_new_tokens must be an integer >= 1, got {value!r}")
    return value


def split_location(argument: str | None, where: str) -> tuple[str, dict[str, str]]:
    """`LOCATION[,max_new_tokens=N]` of the one grammar; a missing location is the default repository."""
    return parse_options(argument or QWEN2_AUDIO[0].repo, where, OPTIONS)


class Qwen2Audio:
    """A Qwen2-Audio-class model from a local directory or the Hub cache; greedy generation."""

    def __init__(self, location: str, options: ModelOptions, max_new_tokens: int) -> None:
        from reasonaudio.retrieval.adapters.text import hf_offline

        transformers = require("transformers")
        self.torch = require("torch")
        path = locate(location, options)
        if not path.is_dir():
            raise UserError(f"{path}: no such Qwen2-Audio model directory")
        self.max_new_tokens = max_new_tokens
        self.options = options
        self.device = torch_device(options.device)
        # bfloat16 halves a 7B model's memory on GPU; CPUs are slow at it, so they keep float32
        dtype = self.torch.bfloat16 if self.device.startswith("cuda") else self.torch.float32
        with hf_offline():
            try:
                self.processor = transformers.AutoProcessor.from_pretrained(str(path), local_files_only=True)
                self.model = transformers.Qwen2AudioForConditionalGeneration.from_pretrained(
                    str(path), local_files_only=True, dtype=dtype
                ).to(self.device).eval()
            except (OSError, ValueError) as err:
                raise UserError(f"{path}: cannot load a Qwen2-Audio model and processor ({err})") from None
        extractor = getattr(self.processor, "feature_extractor", None)
        tokenizer = getattr(self.processor, "tokenizer", None)
        if extractor is None or tokenizer is None:
            raise UserError(f"{path}: the processor has no audio feature extractor and tokenizer (not Qwen2-Audio?)")
        # decoder-only generation appends after the last position: pad on the left
        tokenizer.padding_side = "left"
        self.model.padding_side = "left"
        self.pad_token_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
        self.sample_rate = int(extractor.sampling_rate)
        self.max_seconds = float(getattr(extractor, "chunk_length", 30))

    def prompt(self, instruction: str) -> str:
        if getattr(self.processor, "chat_template", None):
            conversation = [{"role": "user", "content": [{"type": "audio", "audio_url": "clip"},
                                                         {"type": "text", "text": instruction}]}]
            return self.processor.apply_chat_template(conversation, add_generation_prompt=True, tokenize=False)
        bos = getattr(self.processor, "audio_bos_token", "<|audio_bos|>")
        token = getattr(self.processor, "audio_token", "<|AUDIO|>")
        eos = getattr(self.processor, "audio_eos_token", "<|audio_eos|>")
        return f"{bos}{token}{eos}{instruction}"

    def inputs(self, paths: list[Path], instructions: list[str]):
        """The processor's model inputs for a batch of clips, each with its instruction (on the model's device)."""
        from reasonaudio.retrieval.adapters.audio import load_mono

        audio = [load_mono(p, self.sample_rate, self.max_seconds) for p in paths]
        inputs = self.processor(text=[self.prompt(i) for i in instructions], audio=audio, sampling_rate=self.sample_rate,
                                return_tensors="pt", padding=True)
        return inputs.to(self.device)

    def generate(self, paths: list[Path], instructions: list[str]) -> list[str]:
        """One answer per (clip, instruction): only the new tokens, decoded and stripped."""
        inputs = self.inputs(paths, instructions)
        with self.torch.inference_mode():
            generated = self.model.generate(**inputs, max_new_tokens=self.max_new_tokens, do_sample=False,
                                            num_beams=1, pad_token_id=self.pad_token_id)
        new_tokens = generated[:, inputs["input_ids"].shape[1] :]
        return [t.strip() for t in self.processor.batch_decode(new_tokens, skip_special_tokens=True)]


def load_qwen2_audio(argument: str | None, options: ModelOptions, where: str, default_tokens: int) -> Qwen2Audio:
    """The model a `qwen2audio` spec names; its budget from the spec, else ModelOptions.extra, else the default."""
    location, extra = split_location(argument, where)
    budget = extra.get("max_new_tokens", options.extra.get("max_new_tokens", default_tokens))
    return Qwen2Audio(location, options, parse_max_new_tokens(budget, where.rstrip(":=")))
