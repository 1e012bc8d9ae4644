"""Rendering clip ranges of a plan through the core (here, in this process; `ray` ships ranges to
workers); returns each clip's limiter statistics, which the tables record."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from reasonaudio import _core
from reasonaudio.builder.plan import BuildPlan
from reasonaudio.io import storage

def render_range(
    atom_audio: np.ndarray,
    atom_offsets: np.ndarray,
    sl: dict[str, np.ndarray],
    rel_paths: list[str],
    audio_root: str,
    sample_rate: int,
    audio_format: str,
    threads: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Renders the clips of a plan slice to `audio_root` (a local directory, or a URI: rendered to
    a local scratch directory and uploaded); `rel_paths` are `audio/<name>`. Returns the float32
    peaks before the limiter and the limiter gains."""
    names = [p.rpartition("/")[2] for p in rel_paths]
    remote = storage.is_uri(audio_root)
    local_dir = Path(tempfile.mkdtemp(prefix="reasonaudio-render-")) if remote else Path(audio_root)
    try:
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
        )
        if remote:
            fs, path = storage.open_fs(audio_root)
            storage.upload_dir(local_dir, fs, path)
    finally:
        if remote:
            shutil.rmtree(local_dir, ignore_errors=True)
    return np.asarray(res["peak"]), np.asarray(res["gain"])


RENDER_CHUNK = 512  # clips per render call: bounds memory and paces the progress bar


def render_local(plan: BuildPlan, audio_root: str, lo: int, hi: int, progress: bool) -> tuple[np.ndarray, np.ndarray]:
    """Renders clips [lo, hi) in this process (Rust threads); peaks and gains of the range."""
    peaks = np.zeros(hi - lo, np.float64)
    gains = np.zeros(hi - lo, np.float64)
    paths = plan.rel_paths
    cfg = plan.config
    with tqdm(total=hi - lo, desc="render", unit="clip", disable=not progress) as bar:
        for a in range(lo, hi, RENDER_CHUNK):
            b = min(hi, a + RENDER_CHUNK)
            p, g = render_range(
                plan.atom_audio, plan.atom_offsets, plan.slice(a, b), paths[a:b], audio_root,
                cfg.sample_rate, cfg.audio_format, cfg.worker_threads,
            )
            peaks[a - lo : b - lo] = p
            gains[a - lo : b - lo] = g
            bar.update(b - a)
    return peaks, gains


