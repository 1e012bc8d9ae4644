"""Prototype heads: every trained label scored by cosine to prototypes of its training recordings.

Where a label has one or two recordings, the tagger's linear head learns those recordings, while
its frame embeddings name an unheard recording of the sound by the nearest prototype far more
often. So the tagger is kept, and each label's frame probability is the mean of its trained head's
and of its prototypes':

    p_t(label) = sigmoid((max_k cos(z_t, v_k) - centre) / scale)

- z_t: the frame embedding (`net.features`, what the head reads), *standardised* by the mean and
  deviation of frame embeddings of training mixtures (the embeddings are sums of ReLUs, all
  positive: un-centred, every cosine is high and the shared component dominates), then unit length;
- v_k: one prototype per training recording of the label (max over them): the recording embedded
  alone, its active frames (within 30 dB of its loudest, as enrolment) standardised, normalised
  and averaged;
- centre, scale per label from *negatives only*: the label's cosine on frames of un-augmented
  training mixtures where it is absent; centre = their QUANTILE percentile, scale = their
  standard deviation times SCALE_K. Positives are not used: the only positives of a label with
  one recording are frames of that recording, which the tagger learnt (a flattering calibration).

Recordings held out for validation at training time (`library.valid_atom_ids`) are left out unless
`include_valid`: a development benchmark built from them then holds audio no prototype came from.
Recorded in the model file (`Detector.prototypes`) and applied by `model.frame_probabilities`;
the trained weights are unchanged. A stage of the `recordings` recipe.
"""

from __future__ import annotations

import numpy as np

from reasonaudio.detect import torch_module, unit_rows
from reasonaudio.errors import UserError

QUANTILE = 99.0
SCALE_K = 0.5
CALIBRATION_SEED = 2**40 + 2**21  # un-augmented training mixtures for the negatives (not a benchmark seed)


def _frames(net, front, waves: np.ndarray, device: str) -> np.ndarray:
    torch = torch_module()

    with torch.inference_mode():
        h = net.features(front(torch.from_numpy(waves).to(device)))
    return h.transpose(1, 2).cpu().numpy().astype(np.float64)  # [B, J, C']


def build(detector, library_spec, *, include_valid: bool = False, clips: int = 96, device: str = "cpu"):
    """A copy of `detector` whose trained labels are scored by prototypes of `library_spec`'s
    training recordings (the library it was trained on)."""
    from reasonaudio.detect.data import MixtureSource
    from reasonaudio.detect.enrol import ACTIVE_DB
    from reasonaudio.detect.model import PrototypeHeads, make_front_end
    from reasonaudio.detect.library import trained_library

    quantile, scale_k = QUANTILE, SCALE_K
    if detector.enrolled:
        raise UserError("this model has enrolled labels: build prototype heads before enrolling")
    n_labels = detector.net_config.n_labels
    library = trained_library(detector, library_spec, include_valid=include_valid)
    if detector.members:
        raise UserError("prototype heads belong to one tagger's embedding space: build them on each tagger before the ensemble")
    labels = detector.labels[:n_labels]
    index = {lab: k for k, lab in enumerate(labels)}
    net = detector.net(device)
    front = make_front_end(detector.net_config, detector.features, device)

    def n_out(n_samples: int) -> int:
        return (front.n_frames(n_samples) + 1) // 2

    # standardiser and negatives: frames of un-augmented mixtures of these recordings
    source = MixtureSource(library, hop_out=2 * detector.features.hop, labels=labels)
    hs, ts = [], []
    for k in range(0, clips, 16):
        waves, targets = source.batch(min(16, clips - k), CALIBRATION_SEED + k, n_out, 10.0)
        h = _frames(net, front, waves, device)
        live = np.abs(waves).reshape(len(waves), -1).max(axis=1) > 0
        for b in np.flatnonzero(live):
            j = min(h.shape[1], targets.shape[2])
            hs.append(h[b, :j])
            ts.append(targets[b, :, :j].T)
    frames = np.concatenate(hs)
    truth = np.concatenate(ts) >= 0.5
    mean = frames.mean(axis=0)
    std = frames.std(axis=0) + 1e-3
    z = unit_rows((frames - mean) / std)

    vectors, owner = [], []
    for i in range(len(library)):
        w = library.audio(i).astype(np.float32)
        h = _frames(net, front, w[None], device)[0]
        mel = front(torch_module().from_numpy(w[None]).to(device))
        energy = mel[0].cpu().numpy().max(axis=0)[::2][: len(h)]
        active = energy >= energy.max() - ACTIVE_DB / 10
        h = h[active] if active.any() else h
        vectors.append(unit_rows(unit_rows((h - mean) / std).mean(axis=0)))
        owner.append(index[library.labels[i]])
    vectors = np.stack(vectors)
    owner = np.asarray(owner, np.int64)
    missing = [labels[c] for c in range(n_labels) if c not in set(owner.tolist())]
    if missing:
        raise UserError(f"no training recording left for {len(missing)} label(s) ({', '.join(missing[:5])}): cannot build their prototypes")
    cos = z @ vectors.T  # [N, P]
    centre = np.zeros(n_labels)
    scale = np.zeros(n_labels)
    for c in range(n_labels):
        s = cos[:, owner == c].max(axis=1)
        neg = s[~truth[:, c]]
        centre[c] = np.percentile(neg, quantile)
        scale[c] = max(0.01, scale_k * float(neg.std()))
    return detector.replaced(prototypes=PrototypeHeads(
        vectors=np.asarray(vectors, np.float32).tolist(),
        label=owner.tolist(),
        centre=np.round(centre, 6).tolist(),
        scale=np.round(scale, 6).tolist(),
        mean=np.asarray(mean, np.float32).tolist(),
        std=np.asarray(std, np.float32).tolist(),
        settings={"quantile": quantile, "scale_k": scale_k, "clips": clips, "include_valid": include_valid,
                  "recordings": len(library), "calibration_seed": CALIBRATION_SEED},
    ))
