"""Rendering clip ranges of a plan through the core (here, in this process; `ray` ships ranges to
workers); returns each clip's limiter statistics, which the tables record."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from reasonaudio import _core
from reasonaudio.builder.plan import BuildPlan
from reasonaudio.io import storage
from reasonaudio.io.outputs import scratch_directory

def render_range(
    atom_audio: np.ndarray,
    atom_offsets: np.ndarray,
    sl: dict[str, np.ndarray],
    rel_paths: list[str],
    audio_root: str,
    sample_rate: int,
    audio_format: str,
    threads: int,
    sha256: bool = False,
) -> tuple[np.ndarray, np.ndarray, list[str] | None]:
    """Renders the clips of a plan slice to `audio_root` (a local directory, or a URI: rendered to
    a local scratch directory and uploaded); `rel_paths` are `audio/<name>`. Returns the float32
    peaks before the limiter, the limiter gains and, with `sha256`, every file's sha256 (hex),
    hashed by the core while the bytes are in memory (else None)."""
    names = [p.rpartition("/")[2] for p in rel_paths]
    remote = storage.is_uri(audio_root)
    # a URI's audio is rendered into a locked scratch folder (removed in `finally`, or by the next
    # command if this one is killed) and uploaded
    scratch = scratch_directory("render") if remote else contextlib.nullcontext(Path(audio_root))
    with scratch as local_dir:
        res = _core.render_corpus(
            atom_audio,
            atom_offsets,
            sl["ev_clip"],
            sl["ev_atom"],
            sl["ev_onset"],
            sl["ev_length"],
            sl["ev_gain_db"],
            sl["clip_length"],
            [str(local_dir / name) for name in names],
            sample_rate,
            format=audio_format,
            threads=threads,
            sha256=sha256,
        )
        if remote:
            fs, path = storage.open_fs(audio_root)
            storage.upload_dir(local_dir, fs, path)
    digests = list(res["sha256"]) if sha256 else None
    return np.asarray(res["peak"]), np.asarray(res["gain"]), digests


RENDER_CHUNK = 512  # clips per render call: bounds memory and paces the progress bar


def render_scene_range(plan: BuildPlan, lo: int, hi: int, audio_root: str) -> dict[str, np.ndarray]:
    """Renders clips [lo, hi) of a plan with a scene into the local directory `audio_root`;
    returns the core's report (peak, gain, bed_gain per clip; ev_snr_db per event)."""
    cfg = plan.config
    sl = plan.slice(lo, hi)
    ptr = plan.final["clip_event_ptr"].astype(np.int64)
    d = plan.draws.slice(lo, hi, int(ptr[lo]), int(ptr[hi]))  # type: ignore[attr-defined]
    bed_audio, bed_offsets = plan.scene.bed_bank()  # type: ignore[attr-defined]
    room_audio, room_offsets = plan.scene.room_bank()  # type: ignore[attr-defined]
    names = [p.rpartition("/")[2] for p in plan.rel_paths[lo:hi]]
    return _core.render_corpus_scene(
        plan.atom_audio, plan.atom_offsets, sl["ev_clip"], sl["ev_atom"], sl["ev_onset"], sl["ev_length"], sl["ev_gain_db"],
        sl["clip_length"], [str(Path(audio_root) / n) for n in names], cfg.sample_rate,
        bed_audio, bed_offsets, d.clip_bed, d.clip_bed_start, d.clip_snr_db, room_audio, room_offsets, d.clip_room, d.ev_speed,
        format=cfg.audio_format, threads=cfg.worker_threads,
    )


@dataclass
class RenderedRange:
    """What rendering clips [lo, hi) of a plan reports: the limiter's peak and gain of every clip,
    and the sha256 (hex) of every audio file in clip order where the renderer hashed the bytes it
    wrote (None where it did not: a plan with a scene)."""

    peaks: np.ndarray
    gains: np.ndarray
    sha256: list[str] | None = None


def render_local(plan: BuildPlan, audio_root: str, lo: int, hi: int, progress: bool) -> tuple[np.ndarray, np.ndarray]:
    """Renders clips [lo, hi) in this process (Rust threads); peaks and gains of the range. With a
    scene, the bed gains and event SNRs are left in `plan.scene_report`."""
    r = render_audio(plan, audio_root, lo, hi, progress, sha256=False)
    return r.peaks, r.gains


def render_audio(plan: BuildPlan, audio_root: str, lo: int, hi: int, progress: bool, *, sha256: bool = True) -> RenderedRange:
    """`render_local`, also returning every file's sha256 (with `sha256`, for a plan without a
    scene: hashed by the core from the bytes it writes, so audio.sha256 needs no second read of
    the audio)."""
    if plan.scene is not None:
        if storage.is_uri(audio_root):
            from reasonaudio.errors import UserError

            raise UserError("a build with a scene (--background/--room/--pitch) writes to a local directory only, for now")
        parts = []
        with tqdm(total=hi - lo, desc="render", unit="clip", disable=not progress) as bar:
            for a in range(lo, hi, RENDER_CHUNK):
                b = min(hi, a + RENDER_CHUNK)
                parts.append(render_scene_range(plan, a, b, audio_root))
                bar.update(b - a)
        report = {k: np.concatenate([np.asarray(p[k]) for p in parts]) for k in ("peak", "gain", "bed_gain", "ev_snr_db")}
        plan.scene_report = report  # type: ignore[attr-defined]
        return RenderedRange(report["peak"].astype(np.float64), report["gain"].astype(np.float64))
    peaks = np.zeros(hi - lo, np.float64)
    gains = np.zeros(hi - lo, np.float64)
    digests: list[str] | None = [] if sha256 else None
    paths = plan.rel_paths
    cfg = plan.config
    with tqdm(total=hi - lo, desc="render", unit="clip", disable=not progress) as bar:
        for a in range(lo, hi, RENDER_CHUNK):
            b = min(hi, a + RENDER_CHUNK)
            p, g, d = render_range(
                plan.atom_audio, plan.atom_offsets, plan.slice(a, b), paths[a:b], audio_root,
                cfg.sample_rate, cfg.audio_format, cfg.worker_threads, sha256,
            )
            peaks[a - lo : b - lo] = p
            gains[a - lo : b - lo] = g
            if digests is not None and d is not None:
                digests.extend(d)
            bar.update(b - a)
    return RenderedRange(peaks, gains, digests)


