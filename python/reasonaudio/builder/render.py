"""Rendering clip ranges of a plan through the core (here, in this process; `ray` ships ranges to
workers); returns each clip's limiter statistics, which the tables record."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from reasonaudio.console import progress_bar as tqdm

from reasonaudio import _core
from reasonaudio.builder.plan import BuildPlan
from reasonaudio.io import storage
from reasonaudio.io.outputs import scratch_directory

RENDER_CHUNK = 512  # clips per render call: bounds memory and paces the progress bar


def render_bank(plan: BuildPlan) -> tuple[np.ndarray, ...]:
    """The read-only audio every range of `plan` renders from: the atoms, and with a scene the bed
    and room sources (what Ray puts in its object store once)."""
    banks = (plan.atom_audio, plan.atom_offsets)
    if plan.scene is not None:
        banks += (*plan.scene.bed_bank(), *plan.scene.room_bank())  # type: ignore[attr-defined]
    return banks


def scene_slice(plan: BuildPlan, lo: int, hi: int):
    """The scene draws of clips [lo, hi) (None without a scene)."""
    if plan.scene is None:
        return None
    ptr = plan.final["clip_event_ptr"]
    return plan.draws.slice(lo, hi, int(ptr[lo]), int(ptr[hi]))  # type: ignore[attr-defined]


def render_range(
    bank: tuple[np.ndarray, ...],
    sl: dict[str, np.ndarray],
    draws,
    rel_paths: list[str],
    audio_root: str,
    sample_rate: int,
    audio_format: str,
    threads: int,
    sha256: bool = False,
) -> dict:
    """Renders the clips of a plan slice to `audio_root` (a local directory, or a URI: rendered to
    a local scratch directory and uploaded); `rel_paths` are `audio/<name>`; `bank` is
    `render_bank(plan)`, `draws` the slice's scene draws or None. Returns the core's report: the
    float32 peaks before the limiter and the limiter gains; with a scene the bed gains and every
    event's SNR; with `sha256`, every file's sha256 (hex), hashed by the core while the bytes are
    in memory. Files go straight to their names (no temporary + rename each): every caller renders
    into a staged output (io.outputs.Output) or a scratch folder, renamed into place or uploaded
    whole, so a killed render never leaves a half-written file where a reader looks."""
    names = [p.rpartition("/")[2] for p in rel_paths]
    remote = storage.is_uri(audio_root)
    # a URI's audio is rendered into a locked scratch folder (removed in `finally`, or by the next
    # command if this one is killed) and uploaded
    scratch = scratch_directory("render") if remote else contextlib.nullcontext(Path(audio_root))
    with scratch as local_dir:
        atoms = _core.AudioBank(*bank[:2])
        events = _core.EventTable(ev_clip=sl["ev_clip"], ev_atom=sl["ev_atom"], ev_onset=sl["ev_onset"],
                                  ev_length=sl["ev_length"], ev_gain_db=sl["ev_gain_db"], clip_length=sl["clip_length"])
        scene = None if draws is None else draws.scene(_core.AudioBank(*bank[2:4]), _core.AudioBank(*bank[4:6]))
        paths = [str(local_dir / name) for name in names]
        res = _core.render_corpus(_core.Corpus(atoms, events, scene), paths, _core.Mixer(sample_rate), format=audio_format,
                                  threads=threads, sha256=sha256, atomic=False)
        if remote:
            fs, path = storage.open_fs(audio_root)
            storage.upload_dir(local_dir, fs, path)
    return {k: (list(v) if k == "sha256" else np.asarray(v)) for k, v in res.items()}


SCENE_REPORT = ("bed_gain", "ev_snr_db")


@dataclass
class RenderedRange:
    """What rendering clips [lo, hi) of a plan reports: the limiter's peak and gain of every clip,
    and the sha256 (hex) of every audio file in clip order where the renderer hashed the bytes it
    wrote (None where it was not asked to)."""

    peaks: np.ndarray
    gains: np.ndarray
    sha256: list[str] | None = None


def render_audio(plan: BuildPlan, audio_root: str, lo: int, hi: int, progress: bool, *, sha256: bool = True) -> RenderedRange:
    """Renders clips [lo, hi) in this process (Rust threads): the limiter's figures of the range and,
    with `sha256`, every file's sha256 (hashed by the core from the bytes it writes, so audio.sha256
    needs no second read of the audio). With a scene, the bed gains and event SNRs of the range are
    left in `plan.scene_report`."""
    cfg = plan.config
    bank = render_bank(plan)
    hashed = sha256
    parts = []
    with tqdm(total=hi - lo, desc="render", unit="clip", disable=not progress) as bar:
        for a in range(lo, hi, RENDER_CHUNK):
            b = min(hi, a + RENDER_CHUNK)
            parts.append(render_range(bank, plan.slice(a, b), scene_slice(plan, a, b), plan.rel_paths_of(a, b), audio_root,
                                      cfg.sample_rate, cfg.audio_format, cfg.worker_threads, hashed))
            bar.update(b - a)
    keys = ("peak", "gain", *(SCENE_REPORT if plan.scene is not None else ()))
    report = {k: np.concatenate([p[k] for p in parts]) if parts else np.zeros(0, np.float32) for k in keys}
    if plan.scene is not None:
        plan.scene_report = {k: report[k] for k in SCENE_REPORT}  # type: ignore[attr-defined]
    digests = [d for p in parts for d in p["sha256"]] if hashed else None
    return RenderedRange(report["peak"].astype(np.float64), report["gain"].astype(np.float64), digests)
