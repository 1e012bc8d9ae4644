"""An optional pretrained front end: the aiSFX sound-effects CNN (`pip install --no-deps aisfx`).

aiSFX (A. B. Ma and A. Lerch, "Representation Learning for the Automatic Indexing of Sound
Effects Libraries", ISMIR 2022; https://github.com/alisonbma/aisfx) ships in its wheel a
CNN (the DCASE cross-task "Cnn_9layers" embedding net, X-Sequential-CE weights) trained on nine
commercial sound-effects libraries. License: the wheel's LICENSE file is the Creative Commons
Attribution 4.0 International license, "Copyright (c) 2022 A.B. Ma and A. Lerch", and its README
says "This pre-trained model and paper is made available under ... CC BY 4.0"; only the package
classifier says MIT (the code). So the *weights* are CC BY 4.0: use them with that attribution.
They are read from the installed wheel, never copied into this repository or into a model file
(a detector trained with this front end names the checkpoint's sha256 and needs aisfx installed).

The package pins numpy 1.23 and librosa 0.9, which conflict with ours, so it is installed without
its dependencies and nothing of it is imported: the checkpoint is loaded with torch and the
embedding net rebuilt here (same module names, so the state dict loads key for key), and its
documented input is reproduced in torch: 44.1 kHz, 2048-sample Hann frames every 1024 samples
(frames centred, zero-padded like Essentia's FrameCutter), power spectrum, 96 HTK-mel bands over
0-22,050 Hz with unit-sum weights (Essentia MelBands, weighting "warping", normalize "unit_sum"),
log10(10^4 x + 1), divided by the paper's maximum 9.4578 — the Essentia path the paper used. The
net takes time-major input [batch, frames, 96]; aiSFX's own librosa path returns librosa's
[96, frames] and blocks it along axis 0 without transposing, i.e. it feeds mel bands as time (a
bug of that path, not copied). Instead of its 100-frame blocks pooled to one vector, the
fully convolutional net runs over the whole clip and the last block's map, averaged over
frequency, gives a 512-d embedding every 8 input frames (186 ms), which the tagger interpolates
to its own 40-ms frames.
"""

from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

import numpy as np

from reasonaudio import _core
from reasonaudio.detect import torch_module
from reasonaudio.errors import UserError

SAMPLE_RATE = 44_100
N_FFT, HOP = 2048, 1024
N_MELS = 96
SPEC_MAX = 9.457798957824707  # aisfx preprocessing.spectrogram_normalize, 'original'
EMBED_DIM = 512
ATTRIBUTION = ("aiSFX pretrained CNN (X-Sequential-CE) by A. B. Ma and A. Lerch, ISMIR 2022, "
               "https://github.com/alisonbma/aisfx, CC BY 4.0")


def available() -> bool:
    """Whether the aisfx wheel is installed (the `recordings` recipe's aiSFX head needs it)."""
    return importlib.util.find_spec("aisfx") is not None


def checkpoint_path() -> Path:
    spec = importlib.util.find_spec("aisfx")
    if spec is None or not spec.submodule_search_locations:
        raise UserError("the aiSFX CNN (the aiSFX head of the recordings recipe, and the models that have it) needs the aisfx wheel: pip install --no-deps aisfx")
    path = Path(list(spec.submodule_search_locations)[0]) / "models" / "checkpoint.pth"
    if not path.is_file():
        raise UserError(f"{path}: aisfx checkpoint not found (reinstall: pip install --no-deps --force-reinstall aisfx)")
    return path


def checkpoint_sha256() -> str:
    return hashlib.sha256(checkpoint_path().read_bytes()).hexdigest()


def load_weights() -> dict:
    """The embedding net's state dict from the wheel's checkpoint (a (weights, datasets) pickle,
    loaded with weights_only and the one numpy global it needs allowed)."""
    torch = torch_module()

    allowed = [(np._core.multiarray.scalar, "numpy.core.multiarray.scalar"), np.dtype]
    allowed += [getattr(np.dtypes, n) for n in dir(np.dtypes) if n.endswith("DType")]
    with torch.serialization.safe_globals(allowed):
        weights, _datasets = torch.load(checkpoint_path(), map_location="cpu", weights_only=True)
    prefix = "embedding_net."
    return {k[len(prefix):]: v for k, v in weights.items() if k.startswith(prefix)}


def build_embedding_net():
    torch = torch_module()
    nn = torch_module().nn

    class ConvBlock(nn.Module):
        def __init__(self, cin: int, cout: int, pool: tuple[int, int]):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
            self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.bn2 = nn.BatchNorm2d(cout)
            self.pool = pool

        def forward(self, x):
            x = torch.relu(self.bn1(self.conv1(x)))
            x = torch.relu(self.bn2(self.conv2(x)))
            return torch.nn.functional.max_pool2d(x, self.pool) if self.pool != (1, 1) else x

    class EmbeddingNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv_block1 = ConvBlock(1, 64, (2, 2))
            self.conv_block2 = ConvBlock(64, 128, (2, 2))
            self.conv_block3 = ConvBlock(128, 256, (2, 2))
            self.conv_block4 = ConvBlock(256, 512, (1, 1))

        def forward(self, spec):  # [B, frames, 96] -> frame embeddings [B, 512, frames // 8]
            x = spec.unsqueeze(1)
            for block in (self.conv_block1, self.conv_block2, self.conv_block3, self.conv_block4):
                x = block(x)
            return x.mean(dim=3)

    return EmbeddingNet()


def mel_weights() -> np.ndarray:
    """[96, 1025] HTK-mel triangles over 0-22,050 Hz, built on the mel scale, each summing to 1."""
    freqs = np.linspace(0.0, SAMPLE_RATE / 2, N_FFT // 2 + 1)
    mel = 2595.0 * np.log10(1.0 + freqs / 700.0)
    edges = np.linspace(0.0, 2595.0 * np.log10(1.0 + (SAMPLE_RATE / 2) / 700.0), N_MELS + 2)
    lo, mid, hi = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    w = np.maximum(0.0, np.minimum((mel[None] - lo) / (mid - lo), (hi - mel[None]) / (hi - mid)))
    w /= np.maximum(w.sum(axis=1, keepdims=True), 1e-12)
    return w.astype(np.float32)


class AisfxFrontEnd:
    """Waveforms [B, N] at the detector's rate -> (log-mel [B, n_mels, F], aiSFX embeddings [B, 512, T]).
    The pretrained net is frozen (eval mode, no gradients)."""

    def __init__(self, features, device: str = "cpu"):
        torch = torch_module()

        from reasonaudio.detect.features import LogMel

        self.logmel = LogMel(features, device)
        self.cfg = features
        self.device = device
        net = build_embedding_net()
        net.load_state_dict(load_weights())
        self.net = net.eval().to(device)
        for p in self.net.parameters():
            p.requires_grad_(False)
        self.window = torch.hann_window(N_FFT, periodic=False, device=device)  # Essentia's Hann is symmetric
        self.fb = torch.from_numpy(mel_weights()).to(device)

    def n_frames(self, n_samples: int) -> int:
        return self.logmel.n_frames(n_samples)

    def spectrogram(self, wave44):
        torch = torch_module()

        spec = torch.stft(wave44, N_FFT, HOP, window=self.window, center=True, pad_mode="constant", return_complex=True)
        power = spec.real**2 + spec.imag**2
        return (torch.log10(torch.matmul(self.fb, power) * 1e4 + 1.0) / SPEC_MAX).transpose(1, 2)  # time-major

    def embed(self, wave):
        torch = torch_module()

        x = wave.detach().cpu().numpy()
        up = np.stack([_core.resample(np.ascontiguousarray(r), self.cfg.sample_rate, SAMPLE_RATE) for r in x]) \
            if self.cfg.sample_rate != SAMPLE_RATE else x
        with torch.no_grad():
            spec = self.spectrogram(torch.from_numpy(up).to(self.device))
            if spec.shape[1] < 8:  # three 2x poolings need 8 frames; 0 is silence on this log scale
                spec = torch.nn.functional.pad(spec, (0, 0, 0, 8 - spec.shape[1]))
            return self.net(spec)

    def __call__(self, wave):
        return self.logmel(wave), self.embed(wave)
