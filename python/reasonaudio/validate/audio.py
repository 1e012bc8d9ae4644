"""Checks of the audio files (§3.5-3.6): readable, in range, silent outside events, audible inside."""

from __future__ import annotations

import hashlib
import io
import math
import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import polars as pl

from reasonaudio.contract import (
    SILENCE_ABS,
)
from reasonaudio.contract import AUDIBLE_WINDOW_S
from reasonaudio.validate.checklist import _Recorder
from reasonaudio.validate.selection import AudioSelection
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


# One file's checks run on a worker thread: soundfile (libsndfile through cffi) and numpy's
# reductions release the GIL, so reading and checking spread over the cores without the start-up
# and copying costs of worker processes. At most WINDOW_PER_WORKER files per worker are in flight
# (each holds one file's samples), so memory stays bounded whatever the corpus size; results are
# recorded in clip order, so the report is the same for any number of workers.
WINDOW_PER_WORKER = 2


def _workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _gaps(spans: list[tuple[str, int, int]], n: int) -> list[tuple[int, int]]:
    """The stretches of [0, n) outside every span."""
    out, at = [], 0
    for _, a, b in sorted(spans, key=lambda s: s[1]):
        if a > at:
            out.append((at, a))
        at = max(at, b)
    if at < n:
        out.append((at, n))
    return out


def _file_findings(
    path: Path,
    where: str,
    duration_s: float,
    sr: int,
    spans_of: list[tuple[str, int, int]],
    check_background: bool,
    audible_amp: float,
    audible_dbfs: float,
    window: int,
) -> tuple[bool, list[tuple[str, str]], str | None]:
    """(readable, [(check, example)], sha256 of the file's bytes or None) of one file, the checks in
    the order they are reported. The file is read once: its bytes are hashed (for audio.hashes) and
    decoded from memory."""
    import soundfile as sf

    found: list[tuple[str, str]] = []
    digest = None

    def decode(source):
        with sf.SoundFile(source) as fh:
            return fh.channels, fh.samplerate, fh.frames, fh.subtype, fh.read(dtype="float32", always_2d=True)

    try:
        raw = path.read_bytes()
        digest = hashlib.sha256(raw).hexdigest()  # releases the GIL: the workers hash in parallel
        channels, rate, frames, subtype, data = decode(io.BytesIO(raw))
        del raw
    except (OSError, RuntimeError, sf.LibsndfileError):
        try:  # the same failure, met opening the file itself, so that the message names the file
            channels, rate, frames, subtype, data = decode(path)
        except (OSError, RuntimeError, sf.LibsndfileError) as err:
            return False, [("audio.readable", f"{where}: not readable ({str(err)[:120]})")], digest
    expected = int(round(duration_s * sr))
    problems = []
    if channels != 1:
        problems.append(f"{channels} channels (expected mono)")
    if rate != sr:
        problems.append(f"sample rate {rate} Hz (manifest says {sr})")
    if abs(frames - expected) > 1:
        problems.append(f"{frames} samples, expected {expected} (= {duration_s:g} s x {sr} Hz)")
    if problems:
        found.append(("audio.readable", f"{where}: " + "; ".join(problems)))
    x = np.ascontiguousarray(data[:, 0]) if channels != 1 else data.reshape(-1)

    # two reductions stand for the finiteness and range scans: max/min are NaN or infinite
    # exactly when a sample is, and max |x| = max(max, -min)
    hi, lo = (float(x.max()), float(x.min())) if x.size else (0.0, 0.0)
    if not (math.isfinite(hi) and math.isfinite(lo)):
        bad = ~np.isfinite(x)
        found.append(("audio.range", f"{where}: {int(bad.sum())} non-finite sample(s), first at {int(np.flatnonzero(bad)[0]) / sr:.3f} s"))
        x = np.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0)
        hi, lo = (float(x.max()), float(x.min())) if x.size else (0.0, 0.0)
    if max(hi, -lo) > 1.0:
        magnitude = np.abs(x)
        over = np.flatnonzero(magnitude > 1.0)
        found.append((
            "audio.range",
            f"{where}: {over.size} sample(s) outside [-1, 1] ({subtype}), first at {over[0] / sr:.3f} s = {x[over[0]]:.4f}",
        ))

    if not spans_of:
        return True, found, digest
    spans = [(label, int(min(max(on, 0), x.size)), int(min(max(off, 0), x.size))) for label, on, off in spans_of]
    if check_background:
        gaps = _gaps(spans, x.size)
        # loud outside every event <=> some gap's max or -min passes the threshold (compared as
        # float32 numpy scalars, exactly like the float32 array against the Python float)
        if any(x[a:b].max() > SILENCE_ABS or x[a:b].min() < -SILENCE_ABS for a, b in gaps):
            outside = np.concatenate([np.abs(x[a:b]) for a, b in gaps])
            positions = np.concatenate([np.arange(a, b) for a, b in gaps])
            loud = outside > SILENCE_ABS
            found.append((
                "audio.background",
                f"{where}: {int(loud.sum())} sample(s) above {SILENCE_ABS:g} outside every event, "
                f"first at {int(positions[np.flatnonzero(loud)[0]]) / sr:.3f} s, peak {float(outside.max()):.4f}",
            ))
    for label, a, b in spans:
        piece = x[a:b]
        segment = piece * piece
        if segment.size == 0:
            loudest = 0.0
        elif segment.size <= window:
            loudest = float(np.sqrt(segment.mean(dtype=np.float64)))
        else:
            frames_of = segment[: segment.size // window * window].reshape(-1, window)
            loudest = float(np.sqrt(frames_of.mean(axis=1, dtype=np.float64).max()))
        if loudest < audible_amp:
            level = 20 * math.log10(loudest) if loudest > 0 else -math.inf
            found.append((
                "audio.audible",
                f"{where}: {label} [{a / sr:.3f}-{b / sr:.3f} s] peaks at {level:.1f} dBFS RMS (50 ms), below {audible_dbfs:g} dBFS",
            ))
    return True, found, digest


def _check_audio(
    t: Tables,
    rec: _Recorder,
    selection: AudioSelection | int | None,
    audible_dbfs: float,
    show_progress: bool = False,
    workers: int | None = None,
) -> dict[str, str]:
    """Runs the audio checks on the `selection` of clips (an int: the first N); returns {clip path:
    sha256 of its bytes} of every file read (what audio.hashes compares, so no file is read twice)."""
    names = ("audio.readable", "audio.range", "audio.background", "audio.audible")
    for n in names:
        rec.get(n)
    digests: dict[str, str] = {}
    if not t.has("clips", "events") or t.sample_rate is None:
        for n in names:
            rec.skip(n, "needs clips and events tables and the manifest sample_rate")
        return digests
    sr = t.sample_rate
    check_background = not _background_recorded(t.manifest)
    if not check_background:
        rec.skip("audio.background", "the manifest records a background bed")
    audible_amp = 10.0 ** (audible_dbfs / 20.0)
    window = max(1, int(round(AUDIBLE_WINDOW_S * sr)))

    clips = t["clips"].sort("clip_id")
    selection = AudioSelection.of(selection)
    if (fewer := selection.describe(clips.height)) is not None:
        rec.note("audio.readable", fewer)
        clips = selection.pick(clips)
    events = t["events"].select(
        pl.col("clip_id").cast(pl.String), pl.col("label").cast(pl.String), pl.col("onset_sample").cast(pl.Int64), pl.col("offset_sample").cast(pl.Int64)
    ).sort("clip_id", "onset_sample")
    ev_clip = events["clip_id"].to_numpy()
    ev_label = events["label"].to_list()
    ev_on, ev_off = events["onset_sample"].to_list(), events["offset_sample"].to_list()

    from reasonaudio.console import progress_bar as tqdm

    rows = clips.select(pl.col("clip_id").cast(pl.String), "path", "duration_s")
    ids = rows["clip_id"].to_numpy()
    lo_all, hi_all = np.searchsorted(ev_clip, ids, "left"), np.searchsorted(ev_clip, ids, "right")

    def job(i: int, clip_id, rel_path, duration_s):
        lo, hi = int(lo_all[i]), int(hi_all[i])
        spans_of = [(ev_label[j], ev_on[j], ev_off[j]) for j in range(lo, hi)]
        return rel_path, _file_findings(
            t.root / rel_path, f"clip {clip_id} ({rel_path})", duration_s, sr, spans_of, check_background, audible_amp, audible_dbfs, window
        )

    n_workers = workers or _workers()
    n_checked = 0
    bar = tqdm(total=rows.height, desc="audio", unit="clip", disable=not show_progress, leave=False)
    with ThreadPoolExecutor(max_workers=n_workers) as pool:
        pending: deque[Future] = deque()

        def record(future: Future) -> None:
            nonlocal n_checked
            rel_path, (readable, found, digest) = future.result()
            n_checked += readable
            if digest is not None:
                digests[str(rel_path)] = digest
            for name, example in found:
                rec.violation(name, example)
            bar.update(1)

        for i, (clip_id, rel_path, duration_s) in enumerate(rows.iter_rows()):
            if len(pending) >= WINDOW_PER_WORKER * n_workers:
                record(pending.popleft())
            pending.append(pool.submit(job, i, clip_id, rel_path, duration_s))
        while pending:
            record(pending.popleft())
    bar.close()
    rec.note("audio.readable", f"{n_checked} file(s) read")
    rec.get("audio.audible").description = f"inside every event the loudest 50 ms reaches {audible_dbfs:g} dBFS RMS (§3.6)"
    return digests
