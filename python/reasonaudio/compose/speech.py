"""Speech sources for two-segment samples.

A source turns a request (downstream content or a wish for some, a gender, an emotion) into one
mono float32 segment at the build's sample rate plus the facts about it. Two are built in:

- `TtsSource`: offline text-to-speech through espeak-ng, with several male and several female
  voices. It can speak any text, so it serves every task; it cannot vary emotion.
- `RecordingSource`: the user's own recordings listed in a CSV `path,text,gender,emotion` (plus an
  optional `answers` column, aliases separated by '|', for math/facts questions). It serves the cues
  its columns fill (e.g. CREMA-D for emotion).
"""

from __future__ import annotations

import csv
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from reasonaudio.io.audio import read_mono, to_rate  # noqa: F401  (re-exported for compose)
from reasonaudio.compose.content import Item
from reasonaudio.errors import UserError

GENDERS = ("female", "male")
_GENDER_ALIASES = {"f": "female", "female": "female", "woman": "female", "w": "female",
                   "m": "male", "male": "male", "man": "male"}
# CREMA-D / RAVDESS style codes to plain names.
_EMOTION_ALIASES = {"ang": "angry", "anger": "angry", "angry": "angry", "sad": "sad", "sadness": "sad",
                    "hap": "happy", "happy": "happy", "happiness": "happy", "joy": "happy",
                    "neu": "neutral", "neutral": "neutral", "fea": "fearful", "fear": "fearful",
                    "fearful": "fearful", "dis": "disgusted", "disgust": "disgusted",
                    "disgusted": "disgusted", "sur": "surprised", "surprise": "surprised",
                    "surprised": "surprised", "calm": "calm"}


@dataclass
class Segment:
    audio: np.ndarray
    text: str
    answers: tuple[str, ...]
    gender: str | None
    emotion: str | None
    speaker: str
    level: int | None = None
    origin: str | None = None


class TtsSource:
    """espeak-ng voices; `voices` maps gender -> espeak voice names (language+variant)."""

    name = "tts"
    DEFAULT_VOICES = {
        "male": ("en-us+m1", "en-us+m3", "en-us+m7"),
        "female": ("en-us+f1", "en-us+f3", "en-us+f4"),
    }

    def __init__(self, sample_rate: int, voices: dict[str, tuple[str, ...]] | None = None,
                 words_per_minute: int = 160, program: str = "espeak-ng") -> None:
        self.sample_rate = sample_rate
        self.voices = dict(voices or self.DEFAULT_VOICES)
        self.words_per_minute = words_per_minute
        found = shutil.which(program)
        if found is None:
            raise UserError(f"the tts speech source needs '{program}' on PATH (Debian: apt-get install espeak-ng), "
                            "or pass --speech recordings.csv")
        self.program = found
        self._cache: dict[tuple[str, str], np.ndarray] = {}

    def cue_values(self, cue: str) -> list[str]:
        if cue == "gender":
            return list(GENDERS)
        if cue == "emotion":
            raise UserError("the tts speech source cannot speak with a chosen emotion; for --cue emotion pass "
                            "--speech recordings.csv with an emotion column (e.g. CREMA-D)")
        raise UserError(f"the tts speech source does not provide the cue {cue!r}")

    def supports_task(self, task: str) -> None:
        return None

    def segment(self, rng: np.random.Generator, task: str, content: Callable[[np.random.Generator], Item],
                gender: str | None, emotion: str | None, avoid: set[str]) -> Segment:
        if emotion is not None:
            raise UserError("the tts speech source cannot speak with a chosen emotion")
        if gender is None:
            gender = GENDERS[int(rng.integers(2))]
        item = content(rng)
        for _ in range(100):
            if item.text not in avoid and not (set(item.answers) & avoid):
                break
            item = content(rng)
        else:
            raise UserError("could not find two segments with different content; the content pool is too small")
        voices = self.voices[gender]
        voice = voices[int(rng.integers(len(voices)))]
        return Segment(self.speak(item.text, voice), item.text, item.answers, gender, None, voice, item.level)

    def speak(self, text: str, voice: str) -> np.ndarray:
        key = (text, voice)
        if key not in self._cache:
            fd, tmp = tempfile.mkstemp(suffix=".wav", prefix="reasonaudio-tts-")
            os.close(fd)
            try:
                proc = subprocess.run(
                    [self.program, "-v", voice, "-s", str(self.words_per_minute), "-w", tmp, "--", text],
                    capture_output=True, text=True,
                )
                if proc.returncode != 0:
                    raise UserError(f"espeak-ng failed for voice {voice!r}: {proc.stderr.strip()}")
                audio, sr = read_mono(Path(tmp))
            finally:
                os.unlink(tmp)
            self._cache[key] = to_rate(audio, sr, self.sample_rate)
        return self._cache[key]


@dataclass(frozen=True)
class Recording:
    path: Path
    text: str
    gender: str | None
    emotion: str | None
    answers: tuple[str, ...]
    speaker: str
    row: int


class RecordingSource:
    """User recordings from a CSV with header `path,text,gender,emotion[,answers][,speaker]`.
    Relative paths are resolved against the CSV's folder."""

    name = "recordings"

    def __init__(self, csv_path: str | Path, sample_rate: int) -> None:
        self.csv_path = Path(csv_path)
        self.sample_rate = sample_rate
        if not self.csv_path.is_file():
            raise UserError(f"speech CSV {self.csv_path} does not exist")
        self.recordings = self._read()
        self._cache: dict[Path, np.ndarray] = {}

    def _read(self) -> list[Recording]:
        rows: list[Recording] = []
        with self.csv_path.open(encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh)
            missing = {"path", "text"} - set(reader.fieldnames or [])
            if missing:
                raise UserError(f"speech CSV {self.csv_path}: missing column(s) {sorted(missing)}; "
                                "expected header path,text,gender,emotion")
            for lineno, row in enumerate(reader, 2):
                where = f"{self.csv_path}:{lineno}"
                path = Path(row["path"] or "")
                if not path.is_absolute():
                    path = self.csv_path.parent / path
                if not row["path"] or not path.is_file():
                    raise UserError(f"{where}: audio file {row['path']!r} does not exist")
                text = (row.get("text") or "").strip()
                if not text:
                    raise UserError(f"{where}: empty 'text'")
                gender = _norm_value(row.get("gender"), _GENDER_ALIASES, where, "gender")
                emotion = _norm_value(row.get("emotion"), _EMOTION_ALIASES, where, "emotion", keep_unknown=True)
                answers = tuple(a.strip() for a in (row.get("answers") or "").split("|") if a.strip())
                speaker = (row.get("speaker") or "").strip() or path.stem
                rows.append(Recording(path, text, gender, emotion, answers, speaker, lineno))
        if not rows:
            raise UserError(f"speech CSV {self.csv_path} lists no recordings")
        return rows

    def cue_values(self, cue: str) -> list[str]:
        if cue not in ("gender", "emotion"):
            raise UserError(f"recordings do not provide the cue {cue!r}")
        values = sorted({getattr(r, cue) for r in self.recordings if getattr(r, cue)})
        if len(values) < 2:
            raise UserError(f"speech CSV {self.csv_path}: the {cue} cue needs at least two distinct values in "
                            f"the '{cue}' column, found {values}")
        return values

    def supports_task(self, task: str) -> None:
        if task in ("math", "facts") and not any(r.answers for r in self.recordings):
            raise UserError(f"speech CSV {self.csv_path}: task {task!r} needs an 'answers' column "
                            "(accepted answers separated by '|'); recordings without it serve --task asr")

    def segment(self, rng: np.random.Generator, task: str, content: Callable[[np.random.Generator], Item],
                gender: str | None, emotion: str | None, avoid: set[str]) -> Segment:
        pool = [r for r in self.recordings
                if (gender is None or r.gender == gender) and (emotion is None or r.emotion == emotion)
                and r.text not in avoid and not (set(r.answers) & avoid)
                and (task == "asr" or r.answers)]
        if not pool:
            raise UserError(f"speech CSV {self.csv_path}: no recording with gender={gender} emotion={emotion} "
                            "and content different from the other segment")
        rec = pool[int(rng.integers(len(pool)))]
        if rec.path not in self._cache:
            audio, sr = read_mono(rec.path)
            self._cache[rec.path] = to_rate(audio, sr, self.sample_rate)
        answers = (rec.text,) if task == "asr" else rec.answers
        return Segment(self._cache[rec.path], rec.text, answers, rec.gender, rec.emotion, rec.speaker,
                       None, str(rec.path))


def _norm_value(raw: str | None, aliases: dict[str, str], where: str, column: str,
                keep_unknown: bool = False) -> str | None:
    value = (raw or "").strip().lower()
    if not value:
        return None
    if value in aliases:
        return aliases[value]
    if keep_unknown:
        return value
    raise UserError(f"{where}: {column} {raw!r} not understood; expected one of {sorted(set(aliases.values()))}")
