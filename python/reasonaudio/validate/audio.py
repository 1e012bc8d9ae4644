"""Checks of the audio files (§3.5-3.6): readable, in range, silent outside events, audible inside."""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from reasonaudio.contract import (
    SILENCE_ABS,
)
from reasonaudio.contract import AUDIBLE_WINDOW_S
from reasonaudio.validate.checklist import _Recorder
from reasonaudio.validate.tables import Tables

# -------------------------------------------------------------------------------------------- audio


def _background_recorded(manifest: dict | None) -> bool:
    """A background bed, if any, is recorded in the manifest (top level or params)."""
    if not manifest:
        return False
    if manifest.get("scene") is not None:
        return True  # §5: a bed, or room tails; scene.bed_alone checks what is outside events and tails
    for holder in (manifest, manifest.get("params") if isinstance(manifest.get("params"), dict) else {}):
        value = holder.get("background")
        if value not in (None, False, "", "none", "None", 0, {}):
            return True
    return False


def _check_audio(t: Tables, rec: _Recorder, max_audio_files: int | None, audible_dbfs: float, show_progress: bool = False) -> None:
    import soundfile as sf

    names = ("audio.readable", "audio.range", "audio.background", "audio.audible")
    for n in names:
        rec.get(n)
    if not t.has("clips", "events") or t.sample_rate is None:
        for n in names:
            rec.skip(n, "needs clips and events tables and the manifest sample_rate")
        return
    sr = t.sample_rate
    check_background = not _background_recorded(t.manifest)
    if not check_background:
        rec.skip("audio.background", "the manifest records a background bed")
    audible_amp = 10.0 ** (audible_dbfs / 20.0)
    window = max(1, int(round(AUDIBLE_WINDOW_S * sr)))

    clips = t["clips"].sort("clip_id")
    if max_audio_files is not None and clips.height > max_audio_files:
        rec.note("audio.readable", f"checked the first {max_audio_files} of {clips.height} clips (by clip_id)")
        clips = clips.head(max_audio_files)
    events = t["events"].select(
        "clip_id", "label", pl.col("onset_sample").cast(pl.Int64), pl.col("offset_sample").cast(pl.Int64)
    ).sort("clip_id", "onset_sample")
    ev_clip = events["clip_id"].to_numpy()
    ev_label = events["label"].to_list()
    ev_on, ev_off = events["onset_sample"].to_numpy(), events["offset_sample"].to_numpy()

    n_checked = 0
    from tqdm.auto import tqdm

    rows = clips.select("clip_id", "path", "duration_s")
    for clip_id, rel_path, duration_s in tqdm(rows.iter_rows(), total=rows.height, desc="audio", unit="clip", disable=not show_progress, leave=False):
        path = t.root / rel_path
        where = f"clip {clip_id} ({rel_path})"
        try:
            with sf.SoundFile(path) as fh:
                channels, rate, frames, subtype = fh.channels, fh.samplerate, fh.frames, fh.subtype
                data = fh.read(dtype="float32", always_2d=True)
        except (OSError, RuntimeError, sf.LibsndfileError) as err:
            rec.violation("audio.readable", f"{where}: not readable ({str(err)[:120]})")
            continue
        n_checked += 1
        expected = int(round(duration_s * sr))
        problems = []
        if channels != 1:
            problems.append(f"{channels} channels (expected mono)")
        if rate != sr:
            problems.append(f"sample rate {rate} Hz (manifest says {sr})")
        if abs(frames - expected) > 1:
            problems.append(f"{frames} samples, expected {expected} (= {duration_s:g} s x {sr} Hz)")
        if problems:
            rec.violation("audio.readable", f"{where}: " + "; ".join(problems))
        x = data[:, 0]

        if not np.isfinite(x).all():
            bad = ~np.isfinite(x)
            rec.violation("audio.range", f"{where}: {int(bad.sum())} non-finite sample(s), first at {int(np.flatnonzero(bad)[0]) / sr:.3f} s")
            x = np.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0)
        magnitude = np.abs(x)
        if magnitude.size and magnitude.max() > 1.0:
            over = np.flatnonzero(magnitude > 1.0)
            rec.violation(
                "audio.range",
                f"{where}: {over.size} sample(s) outside [-1, 1] ({subtype}), first at {over[0] / sr:.3f} s = {x[over[0]]:.4f}",
            )

        lo, hi = np.searchsorted(ev_clip, clip_id, "left"), np.searchsorted(ev_clip, clip_id, "right")
        if lo == hi:
            continue
        spans = [(ev_label[i], int(min(max(ev_on[i], 0), x.size)), int(min(max(ev_off[i], 0), x.size))) for i in range(lo, hi)]
        if check_background:
            loud = magnitude > SILENCE_ABS
            for _, a, b in spans:
                loud[a:b] = False
            if loud.any():
                outside = np.ones(x.size, dtype=bool)
                for _, a, b in spans:
                    outside[a:b] = False
                rec.violation(
                    "audio.background",
                    f"{where}: {int(loud.sum())} sample(s) above {SILENCE_ABS:g} outside every event, "
                    f"first at {int(np.flatnonzero(loud)[0]) / sr:.3f} s, peak {float(magnitude[outside].max()):.4f}",
                )
        power = x * x
        for label, a, b in spans:
            segment = power[a:b]
            if segment.size == 0:
                loudest = 0.0
            elif segment.size <= window:
                loudest = float(np.sqrt(segment.mean(dtype=np.float64)))
            else:
                frames_of = segment[: segment.size // window * window].reshape(-1, window)
                loudest = float(np.sqrt(frames_of.mean(axis=1, dtype=np.float64).max()))
            if loudest < audible_amp:
                level = 20 * math.log10(loudest) if loudest > 0 else -math.inf
                rec.violation(
                    "audio.audible",
                    f"{where}: {label} [{a / sr:.3f}-{b / sr:.3f} s] peaks at {level:.1f} dBFS RMS (50 ms), below {audible_dbfs:g} dBFS",
                )
    rec.note("audio.readable", f"{n_checked} file(s) read")
    rec.get("audio.audible").description = f"inside every event the loudest 50 ms reaches {audible_dbfs:g} dBFS RMS (§3.6)"
