"""Test doubles for compose tests: a tone speech source and a tone background library."""

from __future__ import annotations

import numpy as np

from reasonaudio.compose.speech import Segment


def tone(freq: float, seconds: float, sr: int, amp: float = 0.3, phase: float = 0.7) -> np.ndarray:
    t = np.arange(int(seconds * sr)) / sr
    return (amp * np.cos(2 * np.pi * freq * t + phase)).astype(np.float32)


class ToneSource:
    """Speaks any content as a 300 Hz tone whose length depends on the text; knows gender and emotion."""

    name = "tone"

    def __init__(self, sr: int) -> None:
        self.sr = sr

    def cue_values(self, cue: str) -> list[str]:
        return ["female", "male"] if cue == "gender" else ["angry", "happy", "sad"]

    def supports_task(self, task: str) -> None:
        return None

    def segment(self, rng, task, content, gender, emotion, avoid):
        item = content(rng)
        while item.text in avoid or set(item.answers) & avoid:
            item = content(rng)
        seconds = 0.5 + 0.01 * len(item.text)
        return Segment(tone(300.0, seconds, self.sr), item.text, item.answers, gender or "female", emotion,
                       "tone", item.level)


class ToneLibrary:
    """Backgrounds as pure tones between 2 and 4 kHz (far from the 300 Hz speech)."""

    def __init__(self, sr: int, seconds: float = 10.0) -> None:
        self.sample_rate = sr
        self.labels = ["rain", "wind", "crickets"]
        self.phrases = ["rain falling", "wind blowing", "crickets chirping"]
        self.seconds = seconds

    def audio(self, i: int) -> np.ndarray:
        return tone(2500.0 + 500.0 * i, self.seconds, self.sample_rate, amp=0.1)
