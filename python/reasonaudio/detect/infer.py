"""Run a detector over audio files: frame probabilities -> an event index of the corpus.

Clips are read by the package's audio reader (reasonaudio.io.audio: mono mix-down, resampled to
the model's rate by the Rust resampler when they differ), sorted by length so that batches carry little padding, tagged in
batches, and post-processed one by one; only the compact result (presence per label, events per
threshold) is kept, so memory does not grow with the corpus's hours of audio.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from reasonaudio.detect import torch_module, torch_threads
from reasonaudio.detect.model import Detector, frame_probabilities
from reasonaudio.detect.postprocess import events_of_clip, smooth
from reasonaudio.errors import UserError

#: Thresholds at which the relevance engine is run when ranking; the event index written to disk
#: uses the model's threshold (0.5). 0.1 and 0.2 were added for sounds masked by an overlapping one
#: (their probability rarely reaches 0.3): on a development benchmark (seed 7, 2,000 clips, the
#: scene-trained model) overlap Acc@1 32.5 -> 50.0 %, the other tasks equal or better
#: (benches/bench_detect_overlap.py).
RANK_THRESHOLDS = (0.1, 0.2, 0.3, 0.5, 0.7)
#: Labels whose raw probability never reaches this are not median-filtered (they have no event at
#: any threshold); their presence is their raw maximum.
SMOOTH_FLOOR = 0.02
ATOM_RMS_DBFS = -20.0  # atoms are normalised to this RMS (finish_atom), so level - this ~ gain_db


@dataclass
class EventIndex:
    """Detected events of a corpus at several thresholds, with per-label presence."""

    clip_ids: list[str]
    durations_s: np.ndarray  # float64 [M]
    sample_rates: np.ndarray  # int64 [M]
    labels: list[str]
    atom_ids: list[str]
    thresholds: tuple[float, ...]
    presence: np.ndarray  # float32 [M, C]: max smoothed frame probability
    events: list[pl.DataFrame]  # per threshold: clip (int), label (int), onset_s, offset_s, confidence, gain_db
    operating: int = 1  # index into thresholds of the model's threshold
    scores: dict | None = field(default=None, repr=False)  # clip_id -> smoothed [J, C] (metrics only)
    frame_s: float = 0.04
    # (label a, label b) -> float32 [M]: max over frames of min(p_a, p_b), smoothed probabilities
    # (0 for a label that never reaches SMOOTH_FLOOR); the soft truth of `overlap a, b` (rank.py)
    coactive: dict | None = field(default=None, repr=False)

    def table(self, which: int | None = None) -> pl.DataFrame:
        """The events.parquet columns (contract §4) plus `confidence`, at one threshold."""
        ev = self.events[self.operating if which is None else which]
        clip = ev["clip"].to_numpy()
        label = ev["label"].to_numpy()
        rate = self.sample_rates[clip].astype(np.float64)
        onset = np.rint(ev["onset_s"].to_numpy() * rate).astype(np.int64)
        offset = np.rint(ev["offset_s"].to_numpy() * rate).astype(np.int64)
        first = np.r_[True, clip[1:] != clip[:-1]] if len(clip) else np.zeros(0, bool)
        start = np.maximum.accumulate(np.where(first, np.arange(len(clip)), 0)) if len(clip) else np.zeros(0, np.int64)
        return pl.DataFrame(
            {
                "clip_id": pl.Series(self.clip_ids, dtype=pl.String).gather(clip),
                "event_index": (np.arange(len(clip)) - start).astype(np.int32),
                "atom_id": pl.Series(self.atom_ids, dtype=pl.String).gather(label),
                "label": pl.Series(self.labels, dtype=pl.String).gather(label),
                "onset_sample": onset,
                "offset_sample": offset,
                "onset_s": onset / rate,
                "offset_s": offset / rate,
                "gain_db": ev["gain_db"].to_numpy(),
                "confidence": ev["confidence"].to_numpy(),
            },
            schema_overrides={"clip_id": pl.String, "atom_id": pl.String, "label": pl.String},
        )


def detect(
    detector: Detector,
    paths: list[Path],
    clip_ids: list[str],
    *,
    device: str = "cpu",
    batch_seconds: float = 240.0,
    thresholds: tuple[float, ...] = RANK_THRESHOLDS,
    keep_scores: bool = False,
    progress: bool = True,
    pairs: tuple[tuple[int, int], ...] | list[tuple[int, int]] = (),
) -> EventIndex:
    """The event index of a corpus. `pairs`: label pairs whose frame-wise co-activation to keep
    (`EventIndex.coactive`; the ranker asks for those of its overlap queries)."""
    torch = torch_module()
    from reasonaudio.console import progress_bar as tqdm

    from reasonaudio.io.audio import audio_info, load_mono

    if len(paths) != len(clip_ids):
        raise ValueError("one clip id per path")
    cfg = detector.features
    sr = cfg.sample_rate
    frame_s = detector.output_frame_s
    post = detector.post
    thresholds = tuple(sorted(set(thresholds) | {post.threshold}))
    operating = thresholds.index(post.threshold)
    n = len(paths)
    lengths = np.zeros(n, np.int64)
    rates = np.zeros(n, np.int64)
    for i, p in enumerate(paths):  # lengths from headers only, for the batching order
        frames, rates[i] = audio_info(p)
        lengths[i] = int(round(frames * sr / rates[i]))
    order = np.argsort(-lengths, kind="stable")
    presence = np.zeros((n, len(detector.labels)), np.float32)
    found: list[list[tuple]] = [[] for _ in thresholds]
    scores: dict | None = {} if keep_scores else None
    durations = np.zeros(n, np.float64)
    pairs = sorted({(min(a, b), max(a, b)) for a, b in pairs})
    coactive = {pair: np.zeros(n, np.float32) for pair in pairs}
    pair_labels = np.array(sorted({x for pair in pairs for x in pair}), np.int64)
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        if current and (len(current) + 1) * lengths[current[0]] / sr > batch_seconds:
            batches.append(current)
            current = []
        current.append(int(i))
    if current:
        batches.append(current)
    threads = torch.get_num_threads()
    torch.set_num_threads(torch_threads())
    with torch.inference_mode(), tqdm(total=n, desc="detect", unit="clip", disable=not progress) as bar:
        for batch in batches:
            waves = [load_mono(paths[i], sr) for i in batch]
            probs = frame_probabilities(detector, waves, device)
            for k, i in enumerate(batch):
                w, p = waves[k], probs[k]
                j = len(p)
                durations[i] = lengths[i] / sr if rates[i] == sr else len(w) / sr
                live = np.flatnonzero(p.max(axis=0) >= SMOOTH_FLOOR) if j else np.zeros(0, np.int64)
                pres, per_t = events_of_clip(p[:, live], frame_s, len(w) / sr, post, list(thresholds))
                presence[i] = p.max(axis=0) if j else 0.0
                presence[i, live] = pres
                for t, evs in enumerate(per_t):
                    for label, on, off, conf in evs:
                        seg = w[int(on * sr) : max(int(on * sr) + 1, int(off * sr))]
                        level = 10 * np.log10(float(np.mean(seg.astype(np.float64) ** 2)) + 1e-12) - ATOM_RMS_DBFS
                        found[t].append((i, int(live[label]), on, off, conf, round(level, 2)))
                if pairs and j:
                    col = {int(c): k for k, c in enumerate(pair_labels)}
                    on_ = p[:, pair_labels].max(axis=0) >= SMOOTH_FLOOR  # as events_of_clip: the others never live
                    sm = np.zeros((j, len(pair_labels)), np.float32)
                    if on_.any():
                        sm[:, on_] = smooth(p[:, pair_labels[on_]], post.median_frames)
                    for a, b in pairs:
                        coactive[(a, b)][i] = float(np.max(np.minimum(sm[:, col[a]], sm[:, col[b]])))
                if scores is not None:
                    full = np.zeros_like(p)
                    full[:, live] = smooth(p[:, live], post.median_frames)
                    scores[clip_ids[i]] = full.astype(np.float16)
            bar.update(len(batch))
    torch.set_num_threads(threads)
    frames = []
    for evs in found:
        evs.sort(key=lambda e: (e[0], e[2], e[1]))
        frames.append(
            pl.DataFrame(
                evs,
                schema={"clip": pl.Int64, "label": pl.Int64, "onset_s": pl.Float64, "offset_s": pl.Float64, "confidence": pl.Float64, "gain_db": pl.Float64},
                orient="row",
            )
        )
    return EventIndex(
        clip_ids=list(clip_ids),
        durations_s=durations,
        sample_rates=rates,
        labels=list(detector.labels),
        atom_ids=detector.atom_of_label(),
        thresholds=thresholds,
        presence=presence,
        events=frames,
        operating=operating,
        scores=scores,
        frame_s=frame_s,
        coactive=coactive if pairs else None,
    )


def audio_inputs(path: str | os.PathLike[str]) -> tuple[list[str], list[Path], object | None]:
    """(clip ids, audio paths, benchmark or None) for a benchmark, a BEIR folder or a folder of audio."""
    from reasonaudio.io import load_any_benchmark

    root = Path(path)
    if not root.exists():
        raise UserError(f"{root}: not found")
    if (root / "manifest.json").is_file() or (root / "corpus.jsonl").is_file() or (root / "corpus.parquet").is_file():
        bench = load_any_benchmark(root)
        return bench.clips["clip_id"].cast(pl.String).to_list(), bench.audio_paths(), bench
    if (root / "beir" / "corpus.jsonl").is_file():
        bench = load_any_benchmark(root / "beir")
        return bench.clips["clip_id"].cast(pl.String).to_list(), bench.audio_paths(), bench
    if root.is_dir():
        files = sorted(p for p in root.rglob("*") if p.suffix.lower() in (".wav", ".flac", ".ogg") and p.is_file())
        if not files:
            raise UserError(f"{root}: no .wav/.flac/.ogg files (expected a benchmark, a BEIR folder or a folder of audio)")
        return [p.relative_to(root).with_suffix("").as_posix() for p in files], files, None
    raise UserError(f"{root}: expected a benchmark directory, a BEIR folder or a folder of audio files")
