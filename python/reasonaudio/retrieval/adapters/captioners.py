"""The captioners of two-stage retrieval (audio -> text), the first part of `two-stage:CAPTIONER+RANKER`.

Registry entries of kind "captioner": the clip's true events (`oracle`, `oracle-timed`), captions made
elsewhere (`captions=FILE`), Qwen2-Audio (`qwen2audio=LOCATION`, through the one audio-LM home,
`audio_lm`) and Step-Audio 2 (`stepaudio=LOCATION,code=REPO`). The rankers are in two_stage.py (BM25),
text.py and rankers.py.

With the oracle captioner, every caption is correct, so what is left is the text side's reasoning:
comparing a run with `oracle` and with a real captioner separates captioning from reasoning failures.
"""

from __future__ import annotations

import csv
import json
from abc import ABC, abstractmethod
from pathlib import Path

import polars as pl
from reasonaudio.console import progress_bar as tqdm

from reasonaudio.errors import UserError
from reasonaudio.retrieval.adapters.audio_lm import QWEN2_AUDIO, parse_max_new_tokens
from reasonaudio.retrieval.base import ClipSet, ModelOptions, require
from reasonaudio.retrieval.registry import ModelMeta, Pin
from reasonaudio.retrieval.spec import parse_options
from reasonaudio.retrieval.weights import locate


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
    """An audio LM (`audio_lm.Qwen2Audio`) asked to describe each clip, a batch at a time."""

    INSTRUCTION = "Describe every sound in this audio clip, in the order the sounds happen."
    MAX_NEW_TOKENS = 64  # default caption budget; `,max_new_tokens=N` or ModelOptions.extra["max_new_tokens"] overrides it

    def __init__(self, value: str | None, options: ModelOptions) -> None:
        from reasonaudio.retrieval.adapters.audio_lm import load_qwen2_audio

        self.lm = load_qwen2_audio(value, options, "two-stage:qwen2audio=", self.MAX_NEW_TOKENS)
        self.sample_rate = self.lm.sample_rate
        self.options = options

    def inputs(self, paths: list[Path]):
        return self.lm.inputs(paths, [self.INSTRUCTION] * len(paths))

    def caption(self, clips: ClipSet) -> list[str]:
        out: list[str] = []
        batch = self.options.batch_size
        for start in tqdm(range(0, len(clips.paths), batch), desc="caption", unit="batch",
                          disable=not self.options.progress):
            paths = clips.paths[start : start + batch]
            out += self.lm.generate(paths, [self.INSTRUCTION] * len(paths))
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
        path = locate(str(path), options)
        if not path.is_dir():
            raise UserError(f"{path}: no such Step-Audio model directory")
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
        self.max_new_tokens = parse_max_new_tokens(
            options.extra.get("max_new_tokens", Qwen2AudioCaptioner.MAX_NEW_TOKENS), "stepaudio captioner")
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


def _stepaudio(value: str | None, options: ModelOptions) -> StepAudioCaptioner:
    location, extra = parse_options(value or STEP_AUDIO[0].repo, "two-stage:stepaudio=", ("code",))
    return StepAudioCaptioner(Path(location), options, code=extra.get("code"))


def _path(value: str | None) -> Path:
    assert value  # the registry gives a part whose form takes a value only with one
    return Path(value)


_AUDIO_LM_BATCH = "--batch-size 8 on 24 GB, 32 on 80 GB"
STEP_AUDIO = (Pin("stepfun-ai/Step-Audio-2-mini", "main", "no public pinned revision: follows main"),)

MODELS = (
    ModelMeta("oracle", "captioner", "oracle", "two-stage captioner", lambda value, options: OracleCaptioner(),
              extra="", note="true events as captions (perfect perception)"),
    ModelMeta("oracle-timed", "captioner", "oracle-timed", "two-stage captioner",
              lambda value, options: OracleCaptioner(timed=True), extra="",
              note="true events as captions, each with its duration (perfect perception)"),
    ModelMeta("captions", "captioner", "captions=FILE", "two-stage captioner",
              lambda value, options: FileCaptioner(_path(value)), extra="",
              note="captions made elsewhere: JSON object or list, JSONL, CSV / TSV or parquet of clip_id, caption "
                   "(the captions.parquet every two-stage eval writes)"),
    ModelMeta("qwen2audio", "captioner", "qwen2audio=DIR_OR_HUB_ID[,max_new_tokens=N]", "two-stage captioner",
              lambda value, options: Qwen2AudioCaptioner(value, options), hub=QWEN2_AUDIO,
              study="Qwen2-Audio-7B(-Instruct)",
              follows="transformers Qwen2AudioForConditionalGeneration; the Instruct checkpoints' chat template",
              vram=f"~16 GB bf16 weights; {_AUDIO_LM_BATCH}", sample_rate="16 kHz", max_audio="30 s",
              packages=("torch", "transformers"), note=f"greedy, {Qwen2AudioCaptioner.MAX_NEW_TOKENS} new tokens"),
    ModelMeta("stepaudio", "captioner", "stepaudio=DIR_OR_HUB_ID,code=STEP_AUDIO2_REPO", "two-stage captioner",
              _stepaudio, hub=STEP_AUDIO, study="Step-Audio (2 mini)",
              follows="the Step-Audio2 repository's StepAudio2 class and speech-to-text turn (stepaudio2.py, utils.py)",
              vram="~17 GB bf16 weights; one clip at a time", sample_rate="16 kHz",
              max_audio="whole clip (25 s mel chunks)", packages=("torch", "transformers", "librosa"),
              note="runs the Step-Audio2 repository's StepAudio2 class (a git checkout, not on the Hub); greedy"),
)
