"""CLIP-style audio-text models from their own packages' checkpoints: Wav2CLIP, Microsoft CLAP, LAION CLAP.

transformers-format CLAP checkpoints (laion/clap-htsat-*) are `clap:DIR` (clap.py); these adapters take
the checkpoints the study's models were published as, each loaded with its maintained package:

- `wav2clip:CKPT,clip=DIR`: Wav2CLIP (Wu et al., ICASSP 2022; package `wav2clip`). The audio encoder is
  the package's `ResNetExtractor` built exactly as `wav2clip.get_model` builds it (frozen, with the
  audio transform MLP) from a local copy of the released `Wav2CLIP.pt`; it maps 16 kHz audio into the
  image space of CLIP ViT-B/32, so queries go through that CLIP's text tower (`CLIPModel` from a local
  directory, e.g. a saved openai/clip-vit-base-patch32). The whole clip is encoded (the ResNet pools over
  time), one clip per forward pass: the ResNet standardises its input with the statistics of the whole
  tensor, so batching would make a clip's vector depend on the other clips in its batch.
- `msclap:CKPT[,version=2023]`: Microsoft CLAP (Elizalde et al.; package `msclap`, `CLAP(model_fp=...)`).
  Its preprocessing is kept (44.1 kHz, a fixed 7 s window for 2023 / 5 s for 2022, short clips tiled)
  except the random crop of long clips, which becomes the first window. Its text encoder (gpt2 for 2023,
  bert-base-uncased for 2022) is loaded by the package by name: it must already be in the HF cache.
- `laion-clap:CKPT[,fusion=1][,amodel=NAME]`: LAION CLAP original checkpoints (package `laion_clap`,
  `CLAP_Module(enable_fusion, amodel).load_ckpt(path)`): 48 kHz, 10 s; clips are cut to their first
  10 s here so the package's random truncation never runs. Its RoBERTa tokenizer and text model are
  loaded by name (`roberta-base`), so they too must be in the HF cache.

msclap pins transformers<5 and numpy<2 and laion_clap numpy<2, which conflict with this project's own
requirements, so neither is in an extra. msclap runs here when installed without them (`pip install
--no-deps msclap torchlibrosa`): its one transformers-5 break, `tokenizer.encode_plus` in its text
preprocessing, is avoided by tokenising here (`MSClapModel.text_inputs`); checked on msclap 1.3.4 with
transformers 5.24 and numpy 2.4 (tests/test_adapters_clip_style.py, skipped where msclap is absent).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from reasonaudio.console import progress_bar as tqdm

from reasonaudio.errors import UserError
from reasonaudio.retrieval.base import EmbeddingModel, ModelOptions, require
from reasonaudio.devices import torch_device
from reasonaudio.retrieval.registry import ModelMeta, Pin
from reasonaudio.retrieval.spec import parse_options
from reasonaudio.retrieval.weights import hub_ref, locate


def fixed_window(audio: np.ndarray, n: int) -> np.ndarray:
    """Exactly `n` samples: the first `n`, or the clip tiled until it fills them (msclap's filling)."""
    if audio.shape[0] >= n:
        return audio[:n]
    if audio.shape[0] == 0:
        return np.zeros(n, np.float32)
    reps = int(np.ceil(n / audio.shape[0]))
    return np.tile(audio, reps)[:n]


def _checkpoint(path: str, what: str) -> Path:
    file = Path(path)
    if not file.is_file():
        raise UserError(f"{file}: no such {what} checkpoint file (the weights must be on local disk)")
    return file


def _optional_package(module: str, install: str):
    from reasonaudio import errors

    return errors.require(module, None, "this model", hint=install)


class _Batched(EmbeddingModel):
    options: ModelOptions

    def _batches(self, n: int, desc: str):
        return tqdm(range(0, n, self.options.batch_size), desc=desc, unit="batch", disable=not self.options.progress)


class Wav2CLIPModel(_Batched):
    SAMPLE_RATE = 16_000  # VGGSound at 16 kHz, 10 s clips (wav2clip/pre_training/dataset.py defaults)

    def __init__(self, checkpoint: str, clip: str | None, options: ModelOptions) -> None:
        from reasonaudio.retrieval.adapters.text import hf_offline

        self.torch = require("torch")
        transformers = require("transformers")
        require("wav2clip", extra="paper-models")
        from wav2clip.model.encoder import ResNetExtractor

        self.options = options
        self.device = torch_device(options.device)
        state = self.torch.load(str(_checkpoint(checkpoint, "Wav2CLIP")), map_location="cpu", weights_only=True)
        if isinstance(state, dict) and "state_dict" in state:
            state = state["state_dict"]
        if not isinstance(state, dict) or not any(str(k).startswith("audio_encoder.") for k in state):
            raise UserError(f"{checkpoint}: not a Wav2CLIP checkpoint (no audio_encoder.* weights)")
        try:
            # the arguments wav2clip.get_model uses for the released model
            self.audio = ResNetExtractor(checkpoint=state, scenario="frozen", transform=True)
        except RuntimeError as err:
            raise UserError(f"{checkpoint}: the weights do not fit Wav2CLIP's ResNetExtractor ({err})") from None
        self.audio.to(self.device).eval()
        clip_dir = locate(clip or MODELS[1].repo, options, "clip")
        if not clip_dir.is_dir():
            raise UserError(f"{clip_dir}: no such CLIP model directory")
        with hf_offline():
            try:
                self.tokenizer = transformers.AutoTokenizer.from_pretrained(str(clip_dir), local_files_only=True)
                self.clip = transformers.CLIPModel.from_pretrained(str(clip_dir), local_files_only=True)
            except (OSError, ValueError, KeyError) as err:
                raise UserError(f"{clip_dir}: cannot load a CLIP model and tokenizer offline ({err})") from None
        self.clip.to(self.device).eval()
        self.sample_rate = self.SAMPLE_RATE
        self.max_seconds = None

    def encode_text(self, texts: list[str]) -> np.ndarray:
        from reasonaudio.retrieval.adapters.clap import _features

        out = []
        for start in self._batches(len(texts), "encode text"):
            batch = self.tokenizer(texts[start : start + self.options.batch_size], padding=True, truncation=True,
                                   max_length=77, return_tensors="pt").to(self.device)
            with self.torch.inference_mode():
                out.append(_features(self.clip.get_text_features(**batch)).float().cpu().numpy())
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, 0), np.float32)

    def encode_audio(self, paths: list[Path]) -> np.ndarray:
        from reasonaudio.retrieval.adapters.audio import load_mono

        out = []
        for start in self._batches(len(paths), "encode audio"):
            for path in paths[start : start + self.options.batch_size]:
                # one clip per forward pass: the ResNet standardises its log-spectrogram with the mean and
                # std of the whole input tensor, so a batched clip's vector would depend on its neighbours
                x = self.torch.from_numpy(load_mono(path, self.sample_rate))[None].to(self.device)
                with self.torch.inference_mode():
                    out.append(self.audio(x).float().cpu().numpy()[0])
        return np.stack(out).astype(np.float32) if out else np.zeros((0, 0), np.float32)


class MSClapModel(_Batched):
    def __init__(self, checkpoint: str, version: str, options: ModelOptions) -> None:
        from reasonaudio.retrieval.adapters.text import hf_offline

        self.torch = require("torch")
        if version not in ("2022", "2023"):
            raise UserError(f"--model msclap:{checkpoint},version={version}: expected version=2022 or version=2023")
        if hub_ref(checkpoint) is not None:  # the repository holds both versions' files: fetch the one asked for
            name = f"CLAP_weights_{version}.pth"
            checkpoint = str(locate(checkpoint, options, files=(name,)) / name)
            # msclap builds its text encoder by name (offline, below): put it in the cache first
            locate(MSCLAP_TEXT[version], options, "text encoder")
        file = _checkpoint(checkpoint, "Microsoft CLAP")
        msclap = _optional_package("msclap", "install it without its pins, `pip install --no-deps msclap torchlibrosa` "
                                              "(it pins transformers<5 and numpy<2, which this adapter does not need)")
        self.options = options
        self.device = torch_device(options.device)
        with hf_offline():
            try:
                self.wrapper = msclap.CLAP(model_fp=str(file), version=version, use_cuda=self.device.startswith("cuda"))
            except (OSError, ValueError, KeyError, RuntimeError) as err:
                raise UserError(f"{file}: cannot load Microsoft CLAP {version} offline; its text encoder must be in the "
                                f"Hugging Face cache ({err})") from None
        self.sample_rate = int(self.wrapper.args.sampling_rate)
        self.max_seconds = float(self.wrapper.args.duration)

    def text_inputs(self, texts: list[str]) -> dict:
        """msclap's preprocess_text in one batched call: GPT-2 texts end with " <|endoftext|>", every text
        is padded to text_len (77). (msclap calls tokenizer.encode_plus, which transformers 5 removed.)"""
        args = self.wrapper.args
        if "gpt" in args.text_model:
            texts = [t + " <|endoftext|>" for t in texts]
        tokens = self.wrapper.tokenizer(texts, add_special_tokens=True, max_length=args.text_len, padding="max_length",
                                        truncation=True, return_tensors="pt")
        device = next(self.wrapper.clap.parameters()).device
        return {key: tokens[key].to(device) for key in self.wrapper.token_keys}

    def encode_text(self, texts: list[str]) -> np.ndarray:
        out = []
        for start in self._batches(len(texts), "encode text"):
            inputs = self.text_inputs(texts[start : start + self.options.batch_size])
            with self.torch.inference_mode():
                out.append(self.wrapper._get_text_embeddings(inputs).float().cpu().numpy())
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, 0), np.float32)

    def encode_audio(self, paths: list[Path]) -> np.ndarray:
        from reasonaudio.retrieval.adapters.audio import load_mono

        n = int(round(self.max_seconds * self.sample_rate))
        out = []
        for start in self._batches(len(paths), "encode audio"):
            x = np.stack([fixed_window(load_mono(p, self.sample_rate), n) for p in paths[start : start + self.options.batch_size]])
            batch = self.torch.from_numpy(x)[:, None, :].to(next(self.wrapper.clap.parameters()).device)
            with self.torch.inference_mode():
                out.append(self.wrapper._get_audio_embeddings(batch).float().cpu().numpy())
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, 0), np.float32)


class LaionClapModel(_Batched):
    SAMPLE_RATE, WINDOW_SECONDS = 48_000, 10.0  # laion_clap's audio_cfg: 48 kHz, 480000-sample window

    def __init__(self, checkpoint: str, fusion: bool, amodel: str, options: ModelOptions) -> None:
        from reasonaudio.retrieval.adapters.text import hf_offline

        self.torch = require("torch")
        file = _checkpoint(checkpoint, "LAION CLAP")
        laion_clap = _optional_package("laion_clap", "install it with `pip install laion-clap` in an environment of "
                                                      "its own (it pins numpy<2)")
        self.options = options
        self.device = torch_device(options.device)
        with hf_offline():
            try:
                self.module = laion_clap.CLAP_Module(enable_fusion=fusion, amodel=amodel, device=self.device)
                self.module.load_ckpt(ckpt=str(file), verbose=False)
            except (OSError, ValueError, KeyError, RuntimeError) as err:
                raise UserError(f"{file}: cannot load LAION CLAP ({amodel}, fusion={fusion}) offline; roberta-base must "
                                f"be in the Hugging Face cache ({err})") from None
        self.sample_rate = self.SAMPLE_RATE
        self.max_seconds = self.WINDOW_SECONDS

    def encode_text(self, texts: list[str]) -> np.ndarray:
        out = []
        for start in self._batches(len(texts), "encode text"):
            with self.torch.inference_mode():
                out.append(np.asarray(self.module.get_text_embedding(texts[start : start + self.options.batch_size])))
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, 0), np.float32)

    def encode_audio(self, paths: list[Path]) -> np.ndarray:
        from reasonaudio.retrieval.adapters.audio import load_mono

        out = []
        for start in self._batches(len(paths), "encode audio"):
            audio = [load_mono(p, self.sample_rate, self.max_seconds) for p in paths[start : start + self.options.batch_size]]
            with self.torch.inference_mode():
                out.append(np.asarray(self.module.get_audio_embedding_from_data(audio)))
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, 0), np.float32)


#: the text encoder msclap builds by name for each version (its config files' text_model)
MSCLAP_TEXT = {"2023": "openai-community/gpt2", "2022": "google-bert/bert-base-uncased"}


def wav2clip_from_spec(argument: str | None, options: ModelOptions) -> Wav2CLIPModel:
    checkpoint, extra = parse_options(argument, "wav2clip:", ("clip",))
    return Wav2CLIPModel(checkpoint, extra.get("clip"), options)


def msclap_from_spec(argument: str | None, options: ModelOptions) -> MSClapModel:
    checkpoint, extra = parse_options(argument or MODELS[0].repo, "msclap:", ("version",))
    return MSClapModel(checkpoint, extra.get("version", "2023"), options)


def laion_clap_from_spec(argument: str | None, options: ModelOptions) -> LaionClapModel:
    checkpoint, extra = parse_options(argument, "laion-clap:", ("fusion", "amodel"))
    fusion = extra.get("fusion", "0")
    if fusion not in ("0", "1"):
        raise UserError(f"--model laion-clap:{argument}: fusion must be 0 or 1")
    return LaionClapModel(checkpoint, fusion == "1", extra.get("amodel", "HTSAT-tiny"), options)


MODELS = (
    ModelMeta("msclap", "model", "msclap[:CLAP_weights_2023.pth_OR_HUB_ID][,version=2023]", "CLIP-style",
              msclap_from_spec,
              hub=(Pin("microsoft/msclap", "c47d441165daa21986ead0850660917636a81775",
                       "mteb 2.26 ModelMeta, model_implementations/msclap_models.py",
                       files=("CLAP_weights_2023.pth", "CLAP_weights_2022.pth")),
                   Pin(MSCLAP_TEXT["2023"], "main", "no public pinned revision: follows main", role="text encoder",
                       files=("*.json", "*.txt", "*.safetensors"))),
              study="CLAP (Elizalde et al.)", follows="Microsoft CLAP (Elizalde et al.); package msclap, CLAP(model_fp=...)",
              vram="< 2 GB", sample_rate="44.1 kHz", max_audio="7 s (2023) / 5 s (2022), shorter clips tiled",
              packages=("torch", "msclap"), extra="",
              note="first window instead of msclap's random crop; gpt2 / bert-base-uncased must be in the HF cache; "
                   "install with `pip install --no-deps msclap torchlibrosa`"),
    ModelMeta("wav2clip", "model", "wav2clip:Wav2CLIP.pt[,clip=CLIP_VIT_B32]", "CLIP-style", wav2clip_from_spec,
              hub=(Pin("openai/clip-vit-base-patch32", "3d74acf9a28c67741b2f4f2ea7635f0aaf6f0268",
                       "mteb 2.26 ModelMeta, model_implementations/clip_models.py", role="clip"),),
              study="Wav2CLIP", follows="Wav2CLIP (Wu et al., ICASSP 2022); package wav2clip, as wav2clip.get_model builds it",
              vram="< 2 GB", sample_rate="16 kHz", max_audio="whole clip (trained on 10 s)",
              packages=("torch", "transformers", "wav2clip"), extra="paper-models",
              note="audio into CLIP ViT-B/32 image space, queries through that CLIP's text tower; one clip per pass; "
                   "Wav2CLIP.pt is published on GitHub (descriptinc/lyrebird-wav2clip releases), not the Hub"),
    # listed so the study's table has its row, with the reason it cannot run
    ModelMeta("audioclip", "model", "audioclip", "CLIP-style", None, study="AudioCLIP", sample_rate="44.1 kHz",
              extra="",
              note="left out: no maintained package; its ESResNeXt-fbsp audio head would have to be rewritten to load "
                   "the published checkpoint (see README). Embeddings made elsewhere: precomputed:Q,C"),
    ModelMeta("laion-clap", "model", "laion-clap:630k-audioset-best.pt[,fusion=1][,amodel=HTSAT-tiny]", "CLIP-style",
              laion_clap_from_spec, follows="LAION CLAP; package laion_clap, CLAP_Module(enable_fusion, amodel).load_ckpt",
              vram="< 2 GB", sample_rate="48 kHz", max_audio="10 s", packages=("torch", "laion_clap"), extra="",
              note="original LAION checkpoints; first 10 s instead of random truncation; roberta-base must be in the "
                   "HF cache"),
)
