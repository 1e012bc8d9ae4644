"""transformers CLAP (`clap:DIR`): ClapModel + ClapProcessor, loaded offline.

DIR is a local directory (save_pretrained layout) or a Hub repo id `ORG/NAME[@REV]`, fetched into the
Hugging Face cache at its pinned revision (`retrieval.weights`); `clap` alone is laion/clap-htsat-unfused.
The load itself reads only local files (`local_files_only=True`, HF_HUB_OFFLINE=1 while loading).

Audio is read with soundfile, mixed to mono and resampled to the feature extractor's rate (48 kHz
for LAION CLAP) by `reasonaudio._core.resample`. Clips longer than the model's window
(`max_length_s`, 10 s for LAION CLAP) are cropped to their *first* window, so no random crop is
ever taken; and `is_longer` is set from that crop (all False) instead of the feature extractor's
random pick for fused checkpoints, so embeddings do not depend on batching or global RNG state.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from reasonaudio.console import progress_bar as tqdm

from reasonaudio.errors import UserError
from reasonaudio.retrieval.base import EmbeddingModel, ModelOptions, require
from reasonaudio.devices import torch_device
from reasonaudio.retrieval.registry import ModelMeta, Pin
from reasonaudio.retrieval.weights import locate


def _features(output) -> "torch.Tensor":  # noqa: F821
    """get_*_features returns a tensor (transformers 4) or an output object (5)."""
    if hasattr(output, "pooler_output") and not hasattr(output, "shape"):
        return output.pooler_output
    return output


class ClapAdapter(EmbeddingModel):
    def __init__(self, location: str, options: ModelOptions) -> None:
        from reasonaudio.retrieval.adapters.text import hf_offline

        transformers = require("transformers")
        self.torch = require("torch")
        self.options = options
        self.device = torch_device(options.device)
        location = str(locate(location, options))
        if not Path(location).is_dir():
            raise UserError(f"{location}: no such CLAP model directory")
        with hf_offline():
            try:
                self.processor = transformers.ClapProcessor.from_pretrained(location, local_files_only=True)
                self.model = transformers.ClapModel.from_pretrained(location, local_files_only=True)
            except (OSError, ValueError) as err:
                raise UserError(f"{location}: cannot load a CLAP model and processor offline ({err})") from None
        self.model.to(self.device).eval()
        extractor = self.processor.feature_extractor
        self.sample_rate = int(extractor.sampling_rate)
        self.max_seconds = float(getattr(extractor, "max_length_s", 10))

    def encode_text(self, texts: list[str]) -> np.ndarray:
        out = []
        for start in tqdm(range(0, len(texts), self.options.batch_size), desc="encode text", unit="batch",
                          disable=not self.options.progress):
            batch = texts[start : start + self.options.batch_size]
            inputs = self.processor.tokenizer(batch, padding=True, truncation=True, return_tensors="pt")
            inputs = {k: v.to(self.device) for k, v in inputs.items()}
            with self.torch.no_grad():
                out.append(_features(self.model.get_text_features(**inputs)).float().cpu().numpy())
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, 0), np.float32)

    def encode_audio(self, paths: list[Path]) -> np.ndarray:
        from reasonaudio.retrieval.adapters.audio import load_mono

        out = []
        for start in tqdm(range(0, len(paths), self.options.batch_size), desc="encode audio", unit="batch",
                          disable=not self.options.progress):
            audio = [load_mono(p, self.sample_rate, self.max_seconds) for p in paths[start : start + self.options.batch_size]]
            inputs = self.processor.feature_extractor(audio, sampling_rate=self.sample_rate, return_tensors="pt")
            features = inputs["input_features"].to(self.device)
            kwargs = {}
            if "is_longer" in inputs:
                kwargs["is_longer"] = self.torch.zeros_like(inputs["is_longer"]).to(self.device)
            with self.torch.no_grad():
                out.append(_features(self.model.get_audio_features(input_features=features, **kwargs)).float().cpu().numpy())
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, 0), np.float32)


def from_spec(argument: str | None, options: ModelOptions) -> ClapAdapter:
    return ClapAdapter(argument or MODELS[0].repo, options)


MODELS = (
    ModelMeta("clap", "model", "clap[:DIR_OR_HUB_ID]", "CLIP-style", from_spec,
              hub=(Pin("laion/clap-htsat-unfused", "8fa0f1c6d0433df6e97c127f64b2a1d6c0dcda8a",
                       "mteb 2.26 ModelMeta, model_implementations/clap_models.py"),),
              follows="transformers ClapModel + ClapProcessor", vram="< 2 GB",
              sample_rate="extractor's (48 kHz for LAION)", max_audio="extractor's window (10 s)",
              packages=("torch", "transformers"),
              note="transformers ClapModel; a directory or any Hub id of that format (laion/clap-htsat-*)"),
)
