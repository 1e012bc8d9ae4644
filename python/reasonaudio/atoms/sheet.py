"""The contact sheet of a library: a log-mel spectrogram per atom on one page, to look at a
library before building from it."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Iterable

import numpy as np
import numpy.typing as npt

from reasonaudio.atoms.library import AtomLibrary
from reasonaudio.console import progress_bar as tqdm
from reasonaudio.errors import UserError, require
from reasonaudio.io.outputs import check_file, output_file, png_kind, png_metadata

log = logging.getLogger(__name__)

SHEET = png_kind("contact sheet")


def mel_filterbank(sample_rate: int, n_fft: int, n_mels: int, f_max: float | None = None) -> npt.NDArray[np.float64]:
    """Triangular filters on the HTK mel scale, shape (n_mels, n_fft // 2 + 1)."""
    f_max = f_max or sample_rate / 2

    def mel(f: npt.ArrayLike) -> npt.NDArray[np.float64]:
        return 2595.0 * np.log10(1.0 + np.asarray(f, dtype=np.float64) / 700.0)

    edges_hz = 700.0 * (10 ** (np.linspace(mel(30.0), mel(f_max), n_mels + 2) / 2595.0) - 1.0)
    bins = np.linspace(0, sample_rate / 2, n_fft // 2 + 1)
    fb = np.zeros((n_mels, len(bins)))
    for m in range(n_mels):
        lo, mid, hi = edges_hz[m : m + 3]
        rise = (bins - lo) / (mid - lo)
        fall = (hi - bins) / (hi - mid)
        fb[m] = np.clip(np.minimum(rise, fall), 0.0, None)
    return fb


def log_mel(x: npt.ArrayLike, sample_rate: int, n_mels: int = 64, hop_s: float = 0.010) -> npt.NDArray[np.float64]:
    """Log-mel power spectrogram in dB, shape (n_mels, frames); 32 ms Hann windows."""
    x = np.asarray(x, dtype=np.float64)
    n_fft = int(2 ** np.ceil(np.log2(0.032 * sample_rate)))
    hop = max(1, int(hop_s * sample_rate))
    if len(x) < n_fft:
        x = np.pad(x, (0, n_fft - len(x)))
    n_frames = 1 + (len(x) - n_fft) // hop
    idx = np.arange(n_fft)[None, :] + hop * np.arange(n_frames)[:, None]
    frames = x[idx] * np.hanning(n_fft)[None, :]
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    mel_power = mel_filterbank(sample_rate, n_fft, n_mels) @ power.T
    return 10.0 * np.log10(mel_power + 1e-10)


def contact_sheet(
    lib: AtomLibrary,
    out_png: str | os.PathLike[str],
    columns: int = 10,
    indices: Iterable[int] | None = None,
    progress: bool = False,
    *,
    inputs: Iterable[str | os.PathLike[str]] = (),
    force: bool = False,
) -> Path:
    """A grid of log-mel images of the atoms, each titled with its label (written atomically; an
    existing file is replaced only when it is an earlier contact sheet and `force` is given)."""
    require("matplotlib", "figures", "the contact sheet (atoms show)")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    check_file(Path(out_png), SHEET, force)  # before drawing; claimed again when written
    chosen = list(range(len(lib))) if indices is None else list(indices)
    if not chosen:
        raise UserError("contact sheet: no atoms to draw")
    columns = max(1, min(columns, len(chosen)))
    rows = int(np.ceil(len(chosen) / columns))
    fig, axes = plt.subplots(rows, columns, figsize=(columns * 1.9, rows * 1.35), squeeze=False)
    for ax in axes.ravel():
        ax.axis("off")
    for ax, i in tqdm(list(zip(axes.ravel(), chosen)), desc="contact sheet", unit="atom", disable=not progress, leave=False):
        spec = log_mel(lib.audio(i), lib.sample_rate)
        vmax = spec.max()
        ax.imshow(spec, origin="lower", aspect="auto", cmap="magma", vmin=vmax - 80, vmax=vmax,
                  extent=(0, len(lib.audio(i)) / lib.sample_rate, 0, spec.shape[0]))
        ax.set_title(lib.labels[i], fontsize=7)
        ax.axis("on")
        ax.set_yticks([])
        ax.tick_params(axis="x", labelsize=5, length=2, pad=1)
    fig.suptitle(f"{len(chosen)} atoms, log-mel (64 bands, 30 Hz-{lib.sample_rate // 2} Hz), seconds on x", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.985))
    dest = Path(out_png)
    try:
        with output_file(dest, SHEET, inputs=inputs, force=force) as tmp:
            log.info("drawing the sheet …")
            fig.savefig(tmp, dpi=90, metadata=png_metadata(SHEET))
    finally:
        plt.close(fig)
    return dest
