"""Few-shot enrolment: add a label from a handful of recordings, without retraining.

The tagger's last layer reads a frame embedding (the output of its convolutions, `features`).
A new sound is described by a *prototype* in that space: each enrolment recording (one sound,
isolated, ~5 of them) is embedded, its active frames (within 30 dB of its loudest frame) are
L2-normalised and averaged, and the prototype is the normalised mean of those shot vectors. At
detection time the enrolled label's frame probability is

    p_t = sigmoid((cos(h_t, prototype) - centre) / scale)

where `centre` and `scale` come from the enrolment itself: the positives are the frames of each
shot scored against the prototype of the *other* shots (leave one out, so the calibration does
not flatter itself), the negatives are the detector's background bank (frame embeddings of
training mixtures, stored in the model file at training time). centre = midway between the
positives' 20th percentile and the negatives' 99.5th percentile; scale = a quarter of that gap
(at least 0.01), so p = 0.5 at the midpoint and ~0.12 / 0.88 at the two percentiles.

The trained weights are untouched: the base labels detect exactly as before, and the enrolled
labels join the vocabulary (labels, phrases) that queries are parsed with.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from reasonaudio.detect import torch_module
from reasonaudio.errors import UserError

ACTIVE_DB = 30.0
MIN_SHOTS = 2
SILENT = 1e-4  # -80 dBFS: a recording whose every sample is below this holds no sound
LABEL_RE = re.compile(r"^[a-z][a-z0-9_]*$")


def _shot_vectors(detector, waves: list[np.ndarray], device: str) -> list[np.ndarray]:
    """Per recording: its active frames' normalised embeddings [n_t, C']."""
    torch = torch_module()

    from reasonaudio.detect.model import make_front_end

    net = detector.net(device)
    front = make_front_end(detector.net_config, detector.features, device)
    out = []
    with torch.inference_mode():
        for w in waves:
            mel = front(torch.from_numpy(w[None]).to(device))
            h = net.features(mel)[0].T.cpu().numpy().astype(np.float64)  # [J, C']
            energy = mel[0].cpu().numpy().max(axis=0)  # log10 power per input frame
            energy = energy[::2][: len(h)]  # the stem's stride 2: output frame j is input frame 2j
            active = energy >= energy.max() - ACTIVE_DB / 10
            h = h[active] if active.any() else h
            out.append(h / (np.linalg.norm(h, axis=1, keepdims=True) + 1e-12))
    return out


def _unit(v: np.ndarray) -> np.ndarray:
    return v / (np.linalg.norm(v) + 1e-12)


def enrol(detector, label: str, phrase: str, recordings: list[np.ndarray], *, device: str = "cpu"):
    """A copy of `detector` with `label` enrolled from `recordings` (mono float32 at the model's rate)."""
    if not LABEL_RE.match(label):
        raise UserError(f"--label {label!r}: use snake_case (a-z, 0-9, _), starting with a letter")
    if not phrase.strip():
        raise UserError(f"--phrase {phrase!r}: give the words queries use for the sound, e.g. 'a squeaky door'")
    if label in detector.labels:
        raise UserError(f"--label {label!r}: the model already has this label")
    if len(recordings) < MIN_SHOTS:
        raise UserError(f"enrolment needs at least {MIN_SHOTS} recordings of the sound (leave-one-out calibration), got {len(recordings)}")
    if detector.background is None:
        raise UserError("this model has no background bank (trained before enrolment existed): retrain it to enrol labels")
    frames = _shot_vectors(detector, recordings, device)
    shots = np.stack([_unit(f.mean(axis=0)) for f in frames])
    prototype = _unit(shots.mean(axis=0))
    positives = []
    for k, f in enumerate(frames):
        others = _unit(np.delete(shots, k, axis=0).mean(axis=0))
        positives.append(f @ others)
    pos = np.concatenate(positives)
    bank = np.asarray(detector.background, np.float64)
    bank = bank / (np.linalg.norm(bank, axis=1, keepdims=True) + 1e-12)
    neg = bank @ prototype
    lo, hi = float(np.percentile(neg, 99.5)), float(np.percentile(pos, 20))
    centre = (lo + hi) / 2
    scale = max(0.01, (hi - lo) / 4)
    from reasonaudio.detect.model import EnrolledLabels

    before = detector.enrolled or EnrolledLabels(labels=[], phrases=[], prototypes=[], centre=[], scale=[], shots=[])
    enrolled = before.plus(label, phrase, [float(v) for v in prototype.astype(np.float32)], round(centre, 6), round(scale, 6),
                           {"n": len(recordings), "positive_p20": round(hi, 4), "background_p99_5": round(lo, 4)})
    return detector.replaced(labels=[*detector.labels, label], phrases=[*detector.phrases, phrase], enrolled=enrolled)


def read_recordings(paths: list[Path], sample_rate: int) -> list[np.ndarray]:
    """The enrolment recordings, mono at the model's rate; each must hold a sound (not silence)."""
    from reasonaudio.io.audio import load_mono

    out = []
    for p in paths:
        x = load_mono(Path(p), sample_rate)
        if len(x) < sample_rate // 10:
            raise UserError(f"{p}: shorter than 0.1 s; an enrolment recording must hold the sound")
        if not np.any(np.abs(x) > SILENT):
            raise UserError(f"{p}: silent (every sample below {SILENT:g}); an enrolment recording must hold the sound")
        out.append(x)
    return out
