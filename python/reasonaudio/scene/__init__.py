"""Acoustic scenes (contract §5): what a scene is (`SceneConfig`, parsed from --background, --snr,
--room, --pitch), the beds and rooms it uses (`resolve` -> `SceneAssets`), and the per-clip and
per-event draws (`draw`), all seeded so that clip i's scene depends on (seed, i) alone.

A scene changes how a clip sounds, never what it means: the planner only learns the longest room
tail (`SceneAssets.max_tail_s`, which spaces events, contract §5), and the renderer gets the draws.
"""

from reasonaudio.scene.beds import Bed, load_beds
from reasonaudio.scene.config import SceneConfig, parse_range
from reasonaudio.scene.draws import SceneDraws, draw
from reasonaudio.scene.rooms import Room, load_rooms
from reasonaudio.scene.assets import SceneAssets, resolve

__all__ = [
    "Bed", "Room", "SceneAssets", "SceneConfig", "SceneDraws", "draw", "load_beds", "load_rooms", "parse_range", "resolve",
]
