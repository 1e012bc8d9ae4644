"""A scene resolved for one build: its beds and rooms loaded, checked against the vocabulary."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from reasonaudio.scene.beds import Bed, load_beds
from reasonaudio.scene.config import SceneConfig
from reasonaudio.scene.rooms import Room, load_rooms


def _bank(arrays: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(arrays) + 1, np.uint64)
    offsets[1:] = np.cumsum([len(a) for a in arrays]) if arrays else []
    audio = np.concatenate(arrays).astype(np.float32) if arrays else np.zeros(0, np.float32)
    return np.ascontiguousarray(audio), offsets


@dataclass
class SceneAssets:
    config: SceneConfig
    beds: list[Bed]
    rooms: list[Room]

    @property
    def max_tail_s(self) -> float:
        return max((r.tail_s for r in self.rooms), default=0.0)

    def bed_bank(self) -> tuple[np.ndarray, np.ndarray]:
        return _bank([b.audio for b in self.beds])

    def room_bank(self) -> tuple[np.ndarray, np.ndarray]:
        return _bank([r.audio for r in self.rooms])


def resolve(config: SceneConfig, sample_rate: int, seed: int, vocabulary: list[str]) -> SceneAssets:
    beds = load_beds(config.background, sample_rate, seed, vocabulary) if config.background else []
    rooms = load_rooms(config.room, sample_rate, seed) if config.room else []
    return SceneAssets(config, beds, rooms)
