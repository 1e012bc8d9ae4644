"""Log-mel frames: the detector's only view of a clip.

The filterbank is the HTK/Slaney-free "triangles on the mel scale" construction, built once in
numpy; the STFT runs in torch so that a GPU, when present, does it too. Frames are centred: frame
i describes the audio around i * hop / sample_rate seconds.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from reasonaudio.detect import torch_module


@dataclass(frozen=True)
class FeatureConfig:
    sample_rate: int = 16_000
    n_fft: int = 1024
    hop: int = 320  # 20 ms
    n_mels: int = 64
    fmin: float = 50.0
    fmax: float = 8_000.0
    floor: float = 1e-6  # power floor: digital silence maps to one finite value

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def frame_s(self) -> float:
        return self.hop / self.sample_rate


def _hz_to_mel(f):
    return 2595.0 * np.log10(1.0 + np.asarray(f, dtype=np.float64) / 700.0)


def _mel_to_hz(m):
    return 700.0 * (10.0 ** (np.asarray(m, dtype=np.float64) / 2595.0) - 1.0)


def mel_filterbank(cfg: FeatureConfig) -> np.ndarray:
    """float32 [n_mels, n_fft // 2 + 1] triangular filters, each of unit area in power."""
    n_bins = cfg.n_fft // 2 + 1
    freqs = np.linspace(0.0, cfg.sample_rate / 2, n_bins)
    edges = _mel_to_hz(np.linspace(_hz_to_mel(cfg.fmin), _hz_to_mel(min(cfg.fmax, cfg.sample_rate / 2)), cfg.n_mels + 2))
    lo, mid, hi = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    up = (freqs[None, :] - lo) / (mid - lo)
    down = (hi - freqs[None, :]) / (hi - mid)
    fb = np.maximum(0.0, np.minimum(up, down))
    fb *= 2.0 / (hi - lo)
    return fb.astype(np.float32)


class LogMel:
    """Batched log-mel in torch: waveforms [B, N] -> [B, n_mels, frames]."""

    def __init__(self, cfg: FeatureConfig, device: str = "cpu"):
        torch = torch_module()

        self.cfg = cfg
        self.device = device
        self.window = torch.hann_window(cfg.n_fft, device=device)
        self.fb = torch.from_numpy(mel_filterbank(cfg)).to(device)

    def n_frames(self, n_samples: int) -> int:
        return n_samples // self.cfg.hop + 1

    def __call__(self, wave):
        torch = torch_module()

        spec = torch.stft(wave, self.cfg.n_fft, self.cfg.hop, window=self.window, center=True, return_complex=True)
        power = spec.real**2 + spec.imag**2
        mel = torch.matmul(self.fb, power)
        return torch.log10(mel + self.cfg.floor)
