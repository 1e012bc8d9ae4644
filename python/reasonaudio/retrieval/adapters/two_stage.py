"""Two-stage retrieval: caption every clip (audio -> text), then rank captions against the queries.

`two-stage:CAPTIONER+RANKER`, split at the last `+` (a captions file's path may hold one). Both parts are
registry entries, of kinds "captioner" and "ranker": the captioners are declared here (true events,
captions made elsewhere, Qwen2-Audio, Step-Audio 2), the rankers here (BM25 over lower-cased word tokens
of the captions), in text.py (sentence-transformers, cosine) and in rankers.py (the study's text
retrievers with their cards' pooling and query instruction); `reasonaudio models --paradigm two-stage`
lists them with what each needs.

With the oracle captioner, every caption is correct, so what is left is the text side's reasoning:
comparing a run with `oracle` and with a real captioner separates captioning from reasoning failures.
"""

from __future__ import annotations

import csv
import json
import re
from abc import ABC, abstractmethod
from pathlib import Path

import numpy as np
import polars as pl
from reasonaudio.console import progress_bar as tqdm

from reasonaudio.errors import UserError
from reasonaudio.retrieval import registry
from reasonaudio.retrieval.base import ClipSet, EmbeddingModel, ModelOptions, QuerySet, ScoringModel, require
from reasonaudio.retrieval.registry import ModelMeta
from reasonaudio.retrieval.spec import parse_options, split_part, split_two_stage

# ---------------------------------------------------------------------------------------------
# Captioners


class Captioner(ABC):
    def prepare(self, benchmark) -> None:  # noqa: B027 - optional hook
        pass

    @abstractmethod
    def caption(self, clips: ClipSet) -> list[str]: ...


def describe_events(events: list[tuple[str, int, int]], *, sample_rate: int | None = None) -> str:
    """Caption a clip from (phrase, onset, offset) events.

    Events are taken in onset order and grouped into runs of mutually chained overlaps; runs are
    joined with ", then " and the events of one run with " while " (the second) and
    " together with " (any further ones). With `sample_rate`, each phrase gets "for X.X s".
    """
    if not events:
        return "silence"
    ordered = sorted(events, key=lambda e: (e[1], e[2], e[0]))
    groups: list[list[tuple[str, int, int]]] = []
    group_end = None
    for event in ordered:
        if groups and group_end is not None and event[1] < group_end:
            groups[-1].append(event)
            group_end = max(group_end, event[2])
        else:
            groups.append([event])
            group_end = event[2]

    def phrase(event: tuple[str, int, int]) -> str:
        if sample_rate:
            return f"{event[0]} for {(event[2] - event[1]) / sample_rate:.1f} s"
        return event[0]

    parts = []
    for group in groups:
        text = phrase(group[0])
        if len(group) > 1:
            text += " while " + phrase(group[1])
        for extra in group[2:]:
            text += " together with " + phrase(extra)
        parts.append(text)
    return ", then ".join(parts)


class OracleCaptioner(Captioner):
    """The clip's true events as text (perfect perception)."""

    def __init__(self, timed: bool = False) -> None:
        self.timed = timed
        self.captions: dict[str, str] = {}

    def prepare(self, benchmark) -> None:
        if benchmark.events.height == 0:
            raise UserError(f"{benchmark.root}: the oracle captioner needs events.parquet (this benchmark has no events)")
        phrases = dict(zip(benchmark.atoms["label"].to_list(), benchmark.atoms["phrase"].to_list()))
        missing = sorted(set(benchmark.events["label"].unique().to_list()) - set(phrases))
        if missing:
            raise UserError(f"{benchmark.root / 'atoms.parquet'}: no phrase for label(s) {', '.join(missing[:5])}")
        sample_rate = benchmark.sample_rate if self.timed else None
        grouped = benchmark.events.select("clip_id", "label", "onset_sample", "offset_sample").group_by(
            "clip_id", maintain_order=True
        ).agg(pl.all())
        self.captions = {
            str(row["clip_id"]): describe_events(
                [(phrases[l], on, off) for l, on, off in zip(row["label"], row["onset_sample"], row["offset_sample"])],
                sample_rate=sample_rate,
            )
            for row in grouped.iter_rows(named=True)
        }

    def caption(self, clips: ClipSet) -> list[str]:
        return [self.captions.get(cid, "silence") for cid in clips.ids]


class FileCaptioner(Captioner):
    """Captions a user made elsewhere, keyed by clip_id: a JSON object {clip_id: caption}, a JSON list / JSONL of
    {clip_id, caption}, or CSV / TSV / parquet with columns clip_id, caption (the `captions.parquet` that
    `reasonaudio eval` writes for every two-stage run is one)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.captions = self._read(path)

    @staticmethod
    def _read(path: Path) -> dict[str, str]:
        if not path.is_file():
            raise UserError(f"{path}: captions file not found")
        suffix = path.suffix.lower()
        rows: list[dict]
        try:
            if suffix == ".json":
                data = json.loads(path.read_text())
                if isinstance(data, dict):
                    return {str(k): str(v) for k, v in data.items()}
                rows = data
            elif suffix == ".jsonl":
                rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            elif suffix == ".parquet":
                rows = FileCaptioner._parquet_rows(path)
            elif suffix in (".csv", ".tsv"):
                with open(path, newline="") as fh:
                    rows = list(csv.DictReader(fh, delimiter="\t" if suffix == ".tsv" else ","))
            else:
                raise UserError(f"{path}: captions must be .json, .jsonl, .csv, .tsv or .parquet")
        except json.JSONDecodeError as err:
            raise UserError(f"{path}: invalid JSON at line {err.lineno}: {err.msg}") from None
        captions = {}
        for index, row in enumerate(rows, start=1):
            text = row.get("caption", row.get("text")) if isinstance(row, dict) else None
            if not isinstance(row, dict) or "clip_id" not in row or text is None:
                raise UserError(f"{path}: row {index}: expected fields 'clip_id' and 'caption' (or 'text')")
            captions[str(row["clip_id"])] = str(text)
        return captions

    @staticmethod
    def _parquet_rows(path: Path) -> list[dict]:
        try:
            frame = pl.read_parquet(path)
        except (OSError, pl.exceptions.PolarsError) as err:
            raise UserError(f"{path}: cannot read parquet ({err})") from None
        text = "caption" if "caption" in frame.columns else "text"
        if "clip_id" not in frame.columns or text not in frame.columns:
            raise UserError(f"{path}: expected columns 'clip_id' and 'caption' (or 'text'), found {frame.columns}")
        return frame.select("clip_id", text).to_dicts()

    def caption(self, clips: ClipSet) -> list[str]:
        missing = [c for c in clips.ids if c not in self.captions]
        if missing:
            raise UserError(f"{self.path}: no caption for {len(missing)} clip(s), e.g. {', '.join(map(repr, missing[:5]))}")
        return [self.captions[c] for c in clips.ids]


class Qwen2AudioCaptioner(Captioner):
    """An audio-LM (Qwen2-Audio class) from a local directory, greedy decoding (deterministic).

    Each clip is read as mono, resampled to the feature extractor's rate and cropped to its window
    (30 s for Whisper features). The prompt goes through the processor's chat template when it has
    one (the Instruct checkpoints) and is the base model's raw audio-then-instruction format
    otherwise. Batches are left-padded, so every row's new tokens start at the same position.
    """

    INSTRUCTION = "Describe every sound in this audio clip, in the order the sounds happen."
    MAX_NEW_TOKENS = 64  # default caption budget; ModelOptions.extra["max_new_tokens"] overrides it

    def __init__(self, path: Path, options: ModelOptions, max_new_tokens: int | None = None) -> None:
        from reasonaudio.retrieval.adapters.text import hf_offline
        from reasonaudio.retrieval.base import torch_device

        transformers = require("transformers")
        self.torch = require("torch")
        if not path.is_dir():
            raise UserError(f"{path}: no such Qwen2-Audio model directory")
        if max_new_tokens is None:
            max_new_tokens = options.extra.get("max_new_tokens", self.MAX_NEW_TOKENS)
        if not isinstance(max_new_tokens, int) or isinstance(max_new_tokens, bool) or max_new_tokens < 1:
            raise UserError(f"qwen2audio captioner: max_new_tokens must be an integer >= 1, got {max_new_tokens!r}")
        self.max_new_tokens = max_new_tokens
        self.device = torch_device(options)
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
        self.prompt = self._prompt()
        self.options = options

    def _prompt(self) -> str:
        if getattr(self.processor, "chat_template", None):
            conversation = [{"role": "user", "content": [{"type": "audio", "audio_url": "clip"},
                                                         {"type": "text", "text": self.INSTRUCTION}]}]
            return self.processor.apply_chat_template(conversation, add_generation_prompt=True, tokenize=False)
        bos = getattr(self.processor, "audio_bos_token", "<|audio_bos|>")
        token = getattr(self.processor, "audio_token", "<|AUDIO|>")
        eos = getattr(self.processor, "audio_eos_token", "<|audio_eos|>")
        return f"{bos}{token}{eos}{self.INSTRUCTION}"

    def inputs(self, paths: list[Path]):
        """The processor's model inputs for a batch of clips (on the model's device)."""
        from reasonaudio.retrieval.adapters.audio import load_mono

        audio = [load_mono(p, self.sample_rate, self.max_seconds) for p in paths]
        inputs = self.processor(text=[self.prompt] * len(audio), audio=audio, sampling_rate=self.sample_rate,
                                return_tensors="pt", padding=True)
        return inputs.to(self.device)

    def caption(self, clips: ClipSet) -> list[str]:
        out: list[str] = []
        batch = self.options.batch_size
        for start in tqdm(range(0, len(clips.paths), batch), desc="caption", unit="batch",
                          disable=not self.options.progress):
            inputs = self.inputs(clips.paths[start : start + batch])
            with self.torch.inference_mode():
                generated = self.model.generate(**inputs, max_new_tokens=self.max_new_tokens, do_sample=False,
                                                num_beams=1, pad_token_id=self.pad_token_id)
            new_tokens = generated[:, inputs["input_ids"].shape[1] :]
            out += [t.strip() for t in self.processor.batch_decode(new_tokens, skip_special_tokens=True)]
        return out


class StepAudioCaptioner(Captioner):
    """Step-Audio 2 (mini) from a local `trust_remote_code` directory, through the official `StepAudio2` class.

    The model's input format (its <|BOT|> turns, 25 s mel chunks and <audio_patch> counts) lives only in
    the Step-Audio2 repository's own code (stepaudio2.py, utils.py), which is not a package: give its
    checkout with `,code=DIR` (or put it on PYTHONPATH). The turn is the repository's speech-to-text one
    (system "You are a helpful assistant.", a human turn of instruction + audio, an open assistant
    turn); decoding is greedy. Each clip is read, mixed to mono and resampled to 16 kHz here (the rate
    the repository's load_audio produces) and handed over as a temporary WAV.
    """

    INSTRUCTION = Qwen2AudioCaptioner.INSTRUCTION
    SAMPLE_RATE = 16_000
    SYSTEM = "You are a helpful assistant."

    def __init__(self, path: Path, options: ModelOptions, code: str | None = None) -> None:
        import importlib
        import sys

        from reasonaudio.retrieval.adapters.text import hf_offline

        self.torch = require("torch")
        require("transformers")
        if not path.is_dir():
            raise UserError(f"{path}: no such Step-Audio model directory (the weights must be on local disk)")
        if code is not None:
            if not (Path(code) / "stepaudio2.py").is_file():
                raise UserError(f"{code}: not a Step-Audio2 repository checkout (no stepaudio2.py)")
            if code not in sys.path:
                sys.path.insert(0, code)
        try:
            stepaudio2 = importlib.import_module("stepaudio2")
        except ImportError as err:
            raise UserError(
                f"the Step-Audio captioner needs the Step-Audio2 repository's code ({err}); pass its checkout with "
                f"stepaudio={path},code=DIR"
            ) from None
        max_new_tokens = options.extra.get("max_new_tokens", Qwen2AudioCaptioner.MAX_NEW_TOKENS)
        if not isinstance(max_new_tokens, int) or isinstance(max_new_tokens, bool) or max_new_tokens < 1:
            raise UserError(f"stepaudio captioner: max_new_tokens must be an integer >= 1, got {max_new_tokens!r}")
        self.max_new_tokens = max_new_tokens
        self.options = options
        with hf_offline():
            try:
                self.model = stepaudio2.StepAudio2(str(path))
            except (OSError, ValueError) as err:
                raise UserError(f"{path}: cannot load Step-Audio 2 offline ({err})") from None

    def messages(self, audio_path: Path) -> list[dict]:
        return [
            {"role": "system", "content": self.SYSTEM},
            {"role": "human", "content": [{"type": "text", "text": self.INSTRUCTION},
                                          {"type": "audio", "audio": str(audio_path)}]},
            {"role": "assistant", "content": None},
        ]

    def caption(self, clips: ClipSet) -> list[str]:
        import tempfile

        import soundfile as sf

        from reasonaudio.retrieval.adapters.audio import load_mono

        out = []
        with tempfile.TemporaryDirectory(prefix="reasonaudio-stepaudio-") as tmp:
            wav = Path(tmp) / "clip.wav"
            for path in tqdm(clips.paths, desc="caption", unit="clip", disable=not self.options.progress):
                sf.write(wav, load_mono(path, self.SAMPLE_RATE), self.SAMPLE_RATE, subtype="FLOAT")
                with self.torch.inference_mode():
                    _, text, _ = self.model(self.messages(wav), max_new_tokens=self.max_new_tokens, do_sample=False)
                out.append(str(text).strip())
        return out


# ---------------------------------------------------------------------------------------------
# Two-stage models

TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    return TOKEN.findall(text.lower())


class CaptioningModel:
    """What both two-stage kinds share: the captions of the last clips they ranked."""

    captions: list[str]
    caption_ids: list[str]

    def caption_table(self) -> pl.DataFrame:
        """clip_id, caption of the clips last captioned (loadable back as `captions=FILE.parquet`)."""
        return pl.DataFrame({"clip_id": self.caption_ids, "caption": self.captions},
                            schema={"clip_id": pl.Utf8, "caption": pl.Utf8})

    def _caption(self, captioner: Captioner, clips: ClipSet) -> list[str]:
        captions = captioner.caption(clips)
        if len(captions) != len(clips.ids):
            raise UserError(f"{self.spec}: the captioner returned {len(captions)} captions for {len(clips.ids)} clips")
        self.captions, self.caption_ids = [str(c) for c in captions], list(clips.ids)
        return self.captions


class TwoStageEmbedding(CaptioningModel, EmbeddingModel):
    """Captions embedded by a text encoder; queries embedded by the same encoder."""

    def __init__(self, captioner: Captioner, encoder) -> None:
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


class TwoStageBM25(CaptioningModel, ScoringModel):
    """Okapi BM25 (rank-bm25) of each query's tokens over the caption tokens."""

    def __init__(self, captioner: Captioner, progress: bool = False) -> None:
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

    def two_stage(self, captioner: Captioner) -> TwoStageBM25:
        return TwoStageBM25(captioner, progress=self.progress)


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


def _stepaudio(value: str | None, options: ModelOptions) -> StepAudioCaptioner:
    location, extra = parse_options(value, "two-stage:stepaudio=", ("code",))
    return StepAudioCaptioner(Path(location), options, code=extra.get("code"))


def _path(value: str | None) -> Path:
    assert value  # the registry gives a part whose form takes a value only with one
    return Path(value)


_AUDIO_LM_BATCH = "--batch-size 8 on 24 GB, 32 on 80 GB"

MODELS = (
    ModelMeta("two-stage", "model", "two-stage:CAPTIONER+RANKER", "two-stage", from_spec, listed=False,
              parts=("captioner", "ranker"),
              note="caption every clip, then rank captions against query texts; the captioner part may itself "
                   "contain '+', the ranker is what follows the last '+'"),
    ModelMeta("oracle", "captioner", "oracle", "two-stage captioner", lambda value, options: OracleCaptioner(),
              extra="", note="true events as captions (perfect perception)"),
    ModelMeta("oracle-timed", "captioner", "oracle-timed", "two-stage captioner",
              lambda value, options: OracleCaptioner(timed=True), extra="",
              note="true events as captions, each with its duration (perfect perception)"),
    ModelMeta("captions", "captioner", "captions=FILE", "two-stage captioner",
              lambda value, options: FileCaptioner(_path(value)), extra="",
              note="captions made elsewhere: JSON object or list, JSONL, CSV / TSV or parquet of clip_id, caption "
                   "(the captions.parquet every two-stage eval writes)"),
    ModelMeta("qwen2audio", "captioner", "qwen2audio=DIR", "two-stage captioner",
              lambda value, options: Qwen2AudioCaptioner(_path(value), options),
              study="Qwen2-Audio-7B(-Instruct)",
              follows="transformers Qwen2AudioForConditionalGeneration; the Instruct checkpoints' chat template",
              vram=f"~16 GB bf16 weights; {_AUDIO_LM_BATCH}", sample_rate="16 kHz", max_audio="30 s",
              packages=("torch", "transformers"), note=f"greedy, {Qwen2AudioCaptioner.MAX_NEW_TOKENS} new tokens"),
    ModelMeta("stepaudio", "captioner", "stepaudio=DIR,code=STEP_AUDIO2_REPO", "two-stage captioner", _stepaudio,
              study="Step-Audio (2 mini)",
              follows="the Step-Audio2 repository's StepAudio2 class and speech-to-text turn (stepaudio2.py, utils.py)",
              vram="~17 GB bf16 weights; one clip at a time", sample_rate="16 kHz",
              max_audio="whole clip (25 s mel chunks)", packages=("torch", "transformers", "librosa"),
              note="runs the Step-Audio2 repository's StepAudio2 class; greedy"),
    ModelMeta("bm25", "ranker", "bm25", "two-stage ranker", lambda value, options: BM25Ranker(options.progress),
              follows="rank-bm25 BM25Okapi", vram="CPU", packages=("rank_bm25",),
              note="Okapi BM25 over caption words", extra="eval"),
)
