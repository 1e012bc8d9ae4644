"""aiSFX label heads: the pretrained sound-effects CNN's view of each trained label, fused with the tagger's.

Issue 21: on the Debian pack the tagger names unheard recordings of 110 labels, 80 of them with one
training recording, and its Acc@1 there stalled near 44-49 % whatever it was trained with. The
pretrained aiSFX CNN (`detect.pretrained`, trained on nine sound-effects libraries) never saw the
pack, and errs elsewhere: naming each of the pack's test recordings by the nearest training-recording
prototype, the tagger's embeddings alone 55.6 %, aiSFX alone 51.4 %, their sum 65.3 %. So the trained
tagger is kept and each trained label's frame probability p is mixed with an aiSFX score a:

    p' = (1 - w) p + w sqrt(p a)

- a: at each aiSFX frame (every 186 ms), the embedding standardised by the mean and deviation of the
  training recordings' frames, unit length, its cosine to each label's prototype, and a softmax over
  the labels at temperature `tau` (a distribution: a frame votes for the labels it resembles most),
  interpolated to the tagger's frames;
- prototype of a label: the mean over its training recordings of each recording's louder frames
  (max activation above the recording's 30th percentile), standardised, averaged and normalised;
- the geometric term lets aiSFX *veto* a label the tagger hears in a frame that sounds like another
  label, never add one the tagger does not hear (sqrt(p a) <= max(p, a), and 0 where p is 0), so
  detection timing stays the tagger's. A label without a training recording keeps p.

The aiSFX weights are read from the installed wheel (never stored here, CC BY 4.0): the model file
holds only the prototypes, the standardiser and the checkpoint's sha256, checked at load. The cost
is an aiSFX pass over every clip at detection: 3-5x the tagger's time (docs/detect.md).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from reasonaudio.detect import torch_module, unit_rows
from reasonaudio.errors import UserError

LOUD_QUANTILE = 0.3  # a recording's frames above this quantile of activation make its prototype
POOLING = 8  # the CNN's three 2x poolings: one embedding per 8 STFT frames


def embed(front, wave: np.ndarray) -> np.ndarray:
    """[T, 512] aiSFX frame embeddings of one mono waveform at the detector's rate."""
    torch = torch_module()

    with torch.inference_mode():
        return front.embed(torch.from_numpy(np.ascontiguousarray(wave, dtype=np.float32)[None]))[0].T.cpu().numpy()


def build(detector, library_spec, *, weight: float = 0.3, tau: float = 0.05, include_valid: bool = False):
    """A copy of `detector` whose trained labels are also scored by aiSFX prototypes of
    `library_spec`'s training recordings (the library it was trained on)."""
    from reasonaudio.detect.pretrained import ATTRIBUTION, AisfxFrontEnd, checkpoint_sha256
    from reasonaudio.detect.train import trained_library

    if not 0.0 < weight <= 1.0:
        raise UserError(f"--weight must be within (0, 1], got {weight}")
    if not tau > 0.0:
        raise UserError(f"--tau must be positive, got {tau}")
    if detector.enrolled:
        raise UserError("this model has enrolled labels: add aiSFX heads before enrolling")
    library = trained_library(detector, library_spec, include_valid=include_valid)
    n_labels = detector.net_config.n_labels
    index = {lab: k for k, lab in enumerate(detector.labels[:n_labels])}
    front = AisfxFrontEnd(detector.features)
    per_recording = [(index[library.labels[i]], embed(front, library.audio(i))) for i in range(len(library))]
    if not per_recording:
        raise UserError("no training recording left to build aiSFX prototypes from")
    frames = np.concatenate([e for _, e in per_recording]).astype(np.float64)
    mean, std = frames.mean(axis=0), frames.std(axis=0) + 1e-6
    vectors = np.zeros((n_labels, frames.shape[1]))
    for label, e in per_recording:
        activation = e.max(axis=1)
        loud = activation >= np.quantile(activation, LOUD_QUANTILE)
        vectors[label] += unit_rows(unit_rows((e - mean) / std)[loud].mean(axis=0))
    known = np.linalg.norm(vectors, axis=1) > 0
    out = replace(detector, aisfx={
        "weight": weight,
        "tau": tau,
        "vectors": np.asarray(unit_rows(vectors), np.float32).tolist(),
        "known": known.tolist(),
        "mean": np.asarray(mean, np.float32).tolist(),
        "std": np.asarray(std, np.float32).tolist(),
        "checkpoint_sha256": checkpoint_sha256(),
        "attribution": ATTRIBUTION,
        "settings": {"recordings": len(library), "include_valid": include_valid, "loud_quantile": LOUD_QUANTILE},
    })
    out._net = detector._net
    return out


class AisfxHeads:
    """The fusion at detection time: `fuse(wave, probs)` for one clip."""

    def __init__(self, detector, device: str = "cpu"):
        from reasonaudio.detect.pretrained import HOP, SAMPLE_RATE, AisfxFrontEnd, checkpoint_sha256

        h = detector.aisfx
        if checkpoint_sha256() != h["checkpoint_sha256"]:
            raise UserError("the installed aisfx wheel's checkpoint is not the one this model's aiSFX heads were built with "
                            f"(sha256 {h['checkpoint_sha256'][:12]}…): reinstall that aisfx version or rebuild the heads")
        self.front = AisfxFrontEnd(detector.features, device)
        self.front.net = self.front.net.to(memory_format=torch_module().channels_last)  # about 1.5x faster on CPU, the same values to float rounding
        self.weight, self.tau = float(h["weight"]), float(h["tau"])
        self.vectors = np.asarray(h["vectors"], np.float32)
        self.known = np.asarray(h["known"], bool)
        self.mean = np.asarray(h["mean"], np.float32)
        self.std = np.asarray(h["std"], np.float32)
        self.frame_s = POOLING * HOP / SAMPLE_RATE
        self.centre_s = (POOLING - 1) / 2 * HOP / SAMPLE_RATE  # the middle of the 8 centred STFT frames pooled
        self.tagger_frame_s = detector.output_frame_s

    def embed(self, wave: np.ndarray) -> np.ndarray:
        """[T, 512] aiSFX frame embeddings of one clip."""
        return embed(self.front, wave)

    def scores(self, embedding: np.ndarray, n_frames: int) -> np.ndarray:
        """[n_frames, known labels] aiSFX scores of a clip's embeddings on the tagger's frame grid."""
        z = unit_rows((embedding - self.mean) / self.std)
        cos = z @ self.vectors[self.known].T
        a = np.exp((cos - cos.max(axis=1, keepdims=True)) / self.tau)
        a /= a.sum(axis=1, keepdims=True)
        t_a = self.centre_s + np.arange(len(a)) * self.frame_s
        t = np.arange(n_frames) * self.tagger_frame_s
        return np.stack([np.interp(t, t_a, a[:, k]) for k in range(a.shape[1])], axis=1)

    def fuse(self, wave: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """probs [J, labels] of one clip (trained labels first) with the known labels' mixed in."""
        if not len(probs) or not len(wave):
            return probs
        cols = np.flatnonzero(self.known)
        p = probs[:, cols].astype(np.float64)
        a = self.scores(self.embed(wave), len(probs))
        out = probs.copy()
        out[:, cols] = ((1 - self.weight) * p + self.weight * np.sqrt(p * a)).astype(probs.dtype)
        return out
