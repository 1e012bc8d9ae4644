"""aiSFX label heads: the pretrained sound-effects CNN's view of each trained label, fused with the tagger's.

Issue 21: on the Debian pack the tagger names unheard recordings of 110 labels, 80 of them with one
training recording, and its Acc@1 there stalled near 44-49 % whatever it was trained with. The
pretrained aiSFX CNN (`detect.pretrained`, trained on nine sound-effects libraries) never saw the
pack, and errs elsewhere. So the trained tagger is kept and each trained label's frame probability p
is mixed with an aiSFX score a, computed at each aiSFX frame (every 186 ms) from the frame's embedding
standardised by the training data's mean and deviation, then interpolated to the tagger's frames.
Two heads give a:

- ``trained`` (the default): a small network (the frame and its two neighbours -> 512 ReLU units ->
  one sigmoid per label) trained on aiSFX embeddings of mixtures of the library's training
  recordings, drawn by the tagger's own `MixtureSource` with per-recording variants (level, EQ,
  speed, stretch), rooms and beds, 60 % overlapping; targets are the share of each aiSFX frame's
  186 ms during which a label sounds. The aiSFX CNN stays frozen; the network is fitted once, with
  a seeded data order, in torch's deterministic mode. Fused as the mean (1 - w) p + w a, so aiSFX
  can also name a sound the tagger misses. On the pack's development build (devb2) the head alone
  ranks as well as the tagger (59.0 against 61.0 % Acc@1) and they err apart (docs/detect.md).
- ``prototypes`` (stop 34): the cosine of the unit-length embedding to each label's prototype (the
  mean over its training recordings of each recording's louder frames), softmax over the labels at
  temperature `tau`, fused as p' = (1 - w) p + w sqrt(p a): it can veto a label the tagger hears in a
  frame that sounds like another label, never add one (sqrt(p a) <= max(p, a), and 0 where p is 0).

A label without a training recording keeps p. The aiSFX weights are read from the installed wheel
(never stored here, CC BY 4.0): the model file holds the head (prototypes or the small network's
weights), the standardiser and the checkpoint's sha256, checked at load. The cost is an aiSFX pass
over every clip at detection (3-5x the tagger's time), and for the trained head about one aiSFX pass
over each training mixture at build time (docs/detect.md).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from reasonaudio.detect import torch_module, unit_rows
from reasonaudio.errors import UserError

HEADS = ("trained", "prototypes")
#: How each head's score a joins the tagger's probability p (the prototypes' softmax is a vote among
#: labels, fit to veto; the trained head's sigmoids are per-label probabilities, fit to average).
FUSION = {"trained": "mean", "prototypes": "geometric"}
LOUD_QUANTILE = 0.3  # a recording's frames above this quantile of activation make its prototype
POOLING = 8  # the CNN's three 2x poolings: one embedding per 8 STFT frames
#: Training mixtures of the head: seeds far from the tagger's training (2^40 + k, k < 2^20) and
#: validation (2^40 + 2^20) streams, so the head never sees the tagger's own validation mixtures.
HEAD_SEED_BASE = 2**40 + 2**21
MIXTURE_BATCH = 16
CROP_S = 10.0
#: Overlap-heavy, as the default tagger's plans (the benchmark's own share is 0.4).
OVERLAP_FRACTION = 0.6
TARGET_RATE = 100  # frame targets are first laid on a 10-ms grid, then averaged over each aiSFX frame


@dataclass(frozen=True)
class HeadConfig:
    """The trained head: its training mixtures and the small network fitted on their aiSFX frames."""

    mixtures: int = 4000
    epochs: int = 30
    context: int = 1  # neighbouring aiSFX frames each side joined to a frame's input
    hidden: int = 512
    batch: int = 512
    lr: float = 1e-3
    weight_decay: float = 1e-4
    seed: int = 0


def embed(front, wave: np.ndarray) -> np.ndarray:
    """[T, 512] aiSFX frame embeddings of one mono waveform at the detector's rate."""
    torch = torch_module()

    with torch.inference_mode():
        return front.embed(torch.from_numpy(np.ascontiguousarray(wave, dtype=np.float32)[None]))[0].T.cpu().numpy()


def frame_times() -> tuple[float, float]:
    """(spacing, centre of the first) of aiSFX's frames in seconds."""
    from reasonaudio.detect.pretrained import HOP, SAMPLE_RATE

    return POOLING * HOP / SAMPLE_RATE, (POOLING - 1) / 2 * HOP / SAMPLE_RATE  # the middle of the 8 centred STFT frames pooled


def with_context(z: np.ndarray, context: int) -> np.ndarray:
    """[T, D] frames -> [T, D * (2 context + 1)]: each frame beside its neighbours (the clip's edge frames repeated)."""
    if context == 0:
        return z
    padded = np.pad(z, ((context, context), (0, 0)), mode="edge")
    return np.concatenate([padded[k : k + len(z)] for k in range(2 * context + 1)], axis=1)


def _network(d_in: int, hidden: int, n_out: int):
    nn = torch_module().nn
    return nn.Sequential(nn.Dropout(0.1), nn.Linear(d_in, hidden), nn.ReLU(), nn.Dropout(0.3), nn.Linear(hidden, n_out))


def _check_joining(detector, weight: float | None) -> None:
    """The model the heads join, and aiSFX's share of the mix (None: the heads' own)."""
    if weight is not None and not 0.0 < weight <= 1.0:
        raise UserError(f"--weight must be within (0, 1], got {weight}")
    if detector.enrolled:
        raise UserError("this model has enrolled labels: add aiSFX heads before enrolling")


def build(detector, library_spec, *, head: str = "trained", weight: float = 0.3, tau: float = 0.05,
          include_valid: bool = False, config: HeadConfig | None = None, progress: bool = False):
    """A copy of `detector` whose trained labels are also scored by aiSFX, from `library_spec`'s
    training recordings (the library it was trained on): a `head` of HEADS."""
    from reasonaudio.detect.pretrained import ATTRIBUTION, AisfxFrontEnd, checkpoint_sha256
    from reasonaudio.detect.train import trained_library

    if head not in HEADS:
        raise UserError(f"unknown aiSFX head {head!r}: expected one of {', '.join(HEADS)}")
    _check_joining(detector, weight)
    if not tau > 0.0:
        raise UserError(f"--tau must be positive, got {tau}")
    library = trained_library(detector, library_spec, include_valid=include_valid)
    if not len(library):
        raise UserError("no training recording left to build aiSFX heads from")
    front = AisfxFrontEnd(detector.features)
    if head == "trained":
        fields = _trained(detector, library, front, config or HeadConfig(), progress)
        fields = {"head": "trained", "fusion": FUSION["trained"], "weight": weight, **fields}
    else:
        fields = {"weight": weight, "tau": tau, **_prototypes(detector, library, front)}  # stop 34's files, key for key
    settings = {"recordings": len(library), "include_valid": include_valid, **fields.pop("settings")}
    return detector.replaced(aisfx={**fields, "checkpoint_sha256": checkpoint_sha256(), "attribution": ATTRIBUTION, "settings": settings})


def reuse(detector, source, library_spec, *, include_valid: bool = False, weight: float | None = None):
    """A copy of `detector` with `source`'s aiSFX heads, built for another tagger of the same library.

    Neither head reads the tagger's weights: both come from the training recordings (the library,
    which of them were held out, the rate they are read at) and the trained labels' order. So the
    heads one build made (about 20 min of CPU for the trained head) serve every tagger of that
    library: each seed of an ensemble, the ensemble itself. What they depend on must match, and
    `library_spec` must be the library both were trained on; `weight` replaces aiSFX's share."""
    from reasonaudio.detect.train import trained_library

    if not source.aisfx:
        raise UserError("--head-from: that model file has no aiSFX heads (build them with `detect aisfx`)")
    _check_joining(detector, weight)
    n_labels = detector.net_config.n_labels
    if source.net_config.n_labels != n_labels or list(source.labels[:n_labels]) != list(detector.labels[:n_labels]):
        raise UserError("--head-from: its heads score other trained labels (or another order) than this model's")
    if source.features.sample_rate != detector.features.sample_rate or source.library.get("hash") != detector.library.get("hash"):
        raise UserError("--head-from: its heads were built from another library (or another rate) than this model was trained on")
    built_with_valid = bool(source.aisfx["settings"]["include_valid"])
    if include_valid != built_with_valid:
        raise UserError(f"--head-from: its heads were built {'with' if built_with_valid else 'without'} the validation recordings: "
                        f"{'give' if built_with_valid else 'leave out'} --include-valid")
    if not include_valid and sorted(source.library.get("valid_atom_ids") or []) != sorted(detector.library.get("valid_atom_ids") or []):
        raise UserError("--head-from: its tagger held out other validation recordings than this one (train both with the same "
                        "--valid-seed, or build the heads with --include-valid)")
    trained_library(detector, library_spec, include_valid=include_valid)  # the library given is the one both were trained on
    return detector.replaced(aisfx={**source.aisfx, **({} if weight is None else {"weight": weight})})


def _prototypes(detector, library, front) -> dict:
    n_labels = detector.net_config.n_labels
    index = {lab: k for k, lab in enumerate(detector.labels[:n_labels])}
    per_recording = [(index[library.labels[i]], embed(front, library.audio(i))) for i in range(len(library))]
    frames = np.concatenate([e for _, e in per_recording]).astype(np.float64)
    mean, std = frames.mean(axis=0), frames.std(axis=0) + 1e-6
    vectors = np.zeros((n_labels, frames.shape[1]))
    for label, e in per_recording:
        activation = e.max(axis=1)
        loud = activation >= np.quantile(activation, LOUD_QUANTILE)
        vectors[label] += unit_rows(unit_rows((e - mean) / std)[loud].mean(axis=0))
    known = np.linalg.norm(vectors, axis=1) > 0
    return {
        "vectors": np.asarray(unit_rows(vectors), np.float32).tolist(),
        "known": known.tolist(),
        "mean": np.asarray(mean, np.float32).tolist(),
        "std": np.asarray(std, np.float32).tolist(),
        "settings": {"loud_quantile": LOUD_QUANTILE},
    }


def mixture_frames(detector, library, front, config: HeadConfig, progress: bool = False):
    """aiSFX frame embeddings of `config.mixtures` training mixtures of `library` (each [T, 512]) and
    their targets (each [T, trained labels]: the share of the frame's span a label sounds)."""
    from reasonaudio.console import progress_bar as tqdm

    from reasonaudio.detect.augment import AugmentConfig
    from reasonaudio.detect.data import MixtureSource

    torch = torch_module()
    n_labels = detector.net_config.n_labels
    hop = library.sample_rate // TARGET_RATE
    source = MixtureSource(library, hop_out=hop, overlap_fraction=OVERLAP_FRACTION, labels=detector.labels[:n_labels])
    augment = AugmentConfig()  # per-recording variants, rooms and beds (detect.augment's defaults)
    frame_s, centre_s = frame_times()
    embeddings, targets = [], []
    batches = math.ceil(config.mixtures / MIXTURE_BATCH)
    for b in tqdm(range(batches), desc="aiSFX head: mixtures", unit="batch", disable=not progress):
        n = min(MIXTURE_BATCH, config.mixtures - b * MIXTURE_BATCH)
        seed = HEAD_SEED_BASE + config.seed * 2**16 + b
        waves, on = source.batch(n, seed, lambda samples: samples // hop + 1, crop_s=CROP_S, augment=augment)
        with torch.inference_mode():
            e = front.embed(torch.from_numpy(waves)).cpu().numpy()  # [B, 512, T]
        centres = centre_s + np.arange(e.shape[2]) * frame_s
        lo = np.clip(np.round((centres - frame_s / 2) * TARGET_RATE).astype(np.int64), 0, on.shape[2])
        hi = np.clip(np.round((centres + frame_s / 2) * TARGET_RATE).astype(np.int64), 0, on.shape[2])
        cum = np.concatenate([np.zeros(on.shape[:2] + (1,), np.float64), np.cumsum(on, axis=2, dtype=np.float64)], axis=2)
        share = (cum[:, :, hi] - cum[:, :, lo]) / np.maximum(hi - lo, 1)
        for i in range(n):
            embeddings.append(e[i].T.astype(np.float32))
            targets.append(share[i].T.astype(np.float32))
    return embeddings, targets


def _trained(detector, library, front, config: HeadConfig, progress: bool) -> dict:
    from reasonaudio.console import progress_bar as tqdm

    from reasonaudio.detect.train import TRAIN_THREADS, Deterministic

    torch = torch_module()
    if config.mixtures < 1 or config.epochs < 1:
        raise UserError(f"--mixtures and --epochs must be at least 1, got {config.mixtures} and {config.epochs}")
    n_labels = detector.net_config.n_labels
    front.net = front.net.to(memory_format=torch.channels_last)  # as at detection: the same frames
    # one thread and torch's deterministic mode, as `detect train`: the same command, the same bytes
    with Deterministic(TRAIN_THREADS):
        embeddings, targets = mixture_frames(detector, library, front, config, progress)
        frames = np.concatenate(embeddings).astype(np.float64)
        mean, std = frames.mean(axis=0), frames.std(axis=0) + 1e-6
        del frames
        # each clip's inputs cast on its own: the same values (the same model bytes, checked) without
        # a float64 copy of them all (4,000 mixtures: 212,000 frames x 1,536 inputs, 2.6 GB)
        z = torch.from_numpy(np.concatenate([with_context((e - mean) / std, config.context).astype(np.float32) for e in embeddings]))
        y = torch.from_numpy(np.concatenate(targets))
        del embeddings, targets
        with torch.random.fork_rng():
            torch.manual_seed(config.seed)
            net = _network(z.shape[1], config.hidden, n_labels)
            opt = torch.optim.AdamW(net.parameters(), config.lr, weight_decay=config.weight_decay)
            per_epoch = max(1, len(z) // config.batch)
            schedule = torch.optim.lr_scheduler.OneCycleLR(opt, config.lr, total_steps=config.epochs * per_epoch)
            loss_sum = 0.0
            for epoch in tqdm(range(config.epochs), desc="aiSFX head: fit", unit="epoch", disable=not progress):
                order = torch.from_numpy(np.random.default_rng([config.seed, epoch]).permutation(len(z)))
                loss_sum = 0.0
                for k in range(per_epoch):
                    rows = order[k * config.batch : (k + 1) * config.batch]
                    loss = torch.nn.functional.binary_cross_entropy_with_logits(net(z[rows]), y[rows])
                    opt.zero_grad()
                    loss.backward()
                    opt.step()
                    schedule.step()
                    loss_sum += float(loss.detach())
        net.eval()
    known = np.isin(detector.labels[:n_labels], library.labels)
    return {
        "network": {k: v.detach().clone().contiguous() for k, v in net.state_dict().items()},
        "known": known.tolist(),
        "mean": np.asarray(mean, np.float32).tolist(),
        "std": np.asarray(std, np.float32).tolist(),
        "settings": {**asdict(config), "frames": len(z), "final_loss": round(loss_sum / per_epoch, 6),
                     "overlap_fraction": OVERLAP_FRACTION, "crop_s": CROP_S, "augment": "detect.augment defaults"},
    }


class AisfxHeads:
    """The fusion at detection time: `fuse(wave, probs)` for one clip."""

    def __init__(self, detector, device: str = "cpu"):
        from reasonaudio.detect.pretrained import AisfxFrontEnd, checkpoint_sha256

        torch = torch_module()
        h = detector.aisfx
        if checkpoint_sha256() != h["checkpoint_sha256"]:
            raise UserError("the installed aisfx wheel's checkpoint is not the one this model's aiSFX heads were built with "
                            f"(sha256 {h['checkpoint_sha256'][:12]}…): reinstall that aisfx version or rebuild the heads")
        self.front = AisfxFrontEnd(detector.features, device)
        self.front.net = self.front.net.to(memory_format=torch.channels_last)  # about 1.5x faster on CPU, the same values to float rounding
        self.head = h.get("head", "prototypes")  # stop 34's files name no head
        self.fusion = h.get("fusion", FUSION[self.head])
        self.weight = float(h["weight"])
        self.known = np.asarray(h["known"], bool)
        self.mean = np.asarray(h["mean"], np.float32)
        self.std = np.asarray(h["std"], np.float32)
        if self.head == "trained":
            settings = h["settings"]
            self.context = int(settings["context"])
            self.network = _network(len(self.mean) * (2 * self.context + 1), int(settings["hidden"]), len(self.known))
            self.network.load_state_dict(h["network"])
            self.network.eval()
        else:
            self.tau = float(h["tau"])
            self.vectors = np.asarray(h["vectors"], np.float32)
        self.frame_s, self.centre_s = frame_times()
        self.tagger_frame_s = detector.output_frame_s

    def embed(self, wave: np.ndarray) -> np.ndarray:
        """[T, 512] aiSFX frame embeddings of one clip."""
        return embed(self.front, wave)

    def frame_scores(self, embedding: np.ndarray) -> np.ndarray:
        """[T, known labels] aiSFX scores at aiSFX's own frames."""
        z = (embedding - self.mean) / self.std
        if self.head == "trained":
            torch = torch_module()
            with torch.inference_mode():
                logits = self.network(torch.from_numpy(with_context(z, self.context).astype(np.float32)))
            return torch.sigmoid(logits).numpy()[:, self.known]
        cos = unit_rows(z) @ self.vectors[self.known].T
        a = np.exp((cos - cos.max(axis=1, keepdims=True)) / self.tau)
        return a / a.sum(axis=1, keepdims=True)

    def scores(self, embedding: np.ndarray, n_frames: int) -> np.ndarray:
        """[n_frames, known labels] aiSFX scores of a clip's embeddings on the tagger's frame grid."""
        a = self.frame_scores(embedding)
        t_a = self.centre_s + np.arange(len(a)) * self.frame_s
        t = np.arange(n_frames) * self.tagger_frame_s
        return np.stack([np.interp(t, t_a, a[:, k]) for k in range(a.shape[1])], axis=1)

    def mix(self, p: np.ndarray, a: np.ndarray) -> np.ndarray:
        """The fused probability of the tagger's p and aiSFX's a (same shape)."""
        if self.fusion == "mean":
            return (1 - self.weight) * p + self.weight * a
        return (1 - self.weight) * p + self.weight * np.sqrt(p * a)

    def fuse(self, wave: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """probs [J, labels] of one clip (trained labels first) with the known labels' mixed in."""
        if not len(probs) or not len(wave):
            return probs
        cols = np.flatnonzero(self.known)
        p = probs[:, cols].astype(np.float64)
        out = probs.copy()
        out[:, cols] = self.mix(p, self.scores(self.embed(wave), len(probs))).astype(probs.dtype)
        return out
