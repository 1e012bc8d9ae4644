"""Frame probabilities -> events: median filtering, thresholds, gap filling, minimum length.

A segment is a run of frames whose smoothed probability reaches the threshold. Runs of one label
closer than `fill_gap_s` are joined (a label occurs at most once per clip, contract §1, so two
nearby runs are one event with a quiet stretch, e.g. a clock's ticks), and runs shorter than
`min_event_s` are dropped. Frame j stands for time j * frame_s, so frames a..b-1 cover
[(a - 0.5) * frame_s, (b - 0.5) * frame_s), clipped to the clip.
"""

from __future__ import annotations

import numpy as np

from reasonaudio.detect.model import PostConfig


def smooth(probs: np.ndarray, frames: int) -> np.ndarray:
    """Median filter along time of [J, C] probabilities (edges repeat the end frames)."""
    if frames <= 1 or probs.shape[0] == 0:
        return probs
    from reasonaudio.errors import require

    median_filter = require("scipy.ndimage", "detect", "the detector's median filter (SciPy)").median_filter
    return median_filter(probs, size=(frames, 1), mode="nearest")


def segments(smoothed: np.ndarray, threshold: float, frame_s: float, post: PostConfig) -> list[tuple[int, int, int]]:
    """(label, first frame, end frame) for each event of one clip, ordered by onset then label."""
    active = smoothed >= threshold
    out: list[tuple[int, int, int]] = []
    gap = int(round(post.fill_gap_s / frame_s))
    shortest = post.min_event_s / frame_s
    for label in np.flatnonzero(active.any(axis=0)):
        col = np.concatenate([[False], active[:, label], [False]])
        edges = np.flatnonzero(col[1:] != col[:-1])
        runs = edges.reshape(-1, 2)
        merged: list[list[int]] = [list(runs[0])]
        for a, b in runs[1:]:
            if a - merged[-1][1] <= gap:
                merged[-1][1] = b
            else:
                merged.append([a, b])
        out.extend((int(label), a, b) for a, b in merged if b - a >= shortest)
    out.sort(key=lambda s: (s[1], s[0]))
    return out


def events_of_clip(
    probs: np.ndarray, frame_s: float, duration_s: float, post: PostConfig, thresholds: list[float]
) -> tuple[np.ndarray, list[list[tuple[int, float, float, float]]]]:
    """Presence (max smoothed probability per label) and, per threshold, events (label, onset_s,
    offset_s, confidence = mean raw probability over the event's frames)."""
    sm = smooth(probs, post.median_frames)
    presence = sm.max(axis=0) if len(sm) else np.zeros(probs.shape[1], np.float32)
    per_threshold = []
    for t in thresholds:
        evs = []
        for label, a, b in segments(sm, t, frame_s, post):
            onset = max(0.0, (a - 0.5) * frame_s)
            offset = min(duration_s, (b - 0.5) * frame_s)
            if offset > onset:
                evs.append((label, onset, offset, float(probs[a:b, label].mean())))
        per_threshold.append(evs)
    return presence.astype(np.float32), per_threshold
