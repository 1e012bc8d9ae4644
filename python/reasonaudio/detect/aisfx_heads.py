"""The aiSFX head: the pretrained sound-effects CNN's view of each trained label, mixed with the tagger's.

Where a label has few recordings, a tagger names unheard recordings of it poorly; the pretrained
aiSFX CNN (`detect.pretrained`, trained on nine sound-effects libraries) never heard the library and
errs elsewhere. So the trained tagger is kept and each trained label's frame probability p is mixed
with a score a from a small network (the aiSFX frame and its two neighbours -> 512 ReLU units -> one
sigmoid per label) fitted on aiSFX embeddings of mixtures of the library's training recordings,
drawn by the tagger's own `MixtureSource` with per-recording variants (level, EQ, speed, stretch),
rooms and beds, 60 % overlapping; targets are the share of each aiSFX frame's 186 ms during which a
label sounds. Each frame's embedding is standardised by the training data's mean and deviation; the
scores are interpolated to the tagger's frames and mixed as (1 - w) p + w a, so aiSFX can also name
a sound the tagger misses. A label without a training recording keeps p.

The aiSFX CNN stays frozen; the network is fitted once, with a seeded data order, in torch's
deterministic mode, and cached by its inputs (`build_cached`): it depends on the training
recordings, their labels and the rate, never on the tagger, so every tagger of a library shares
it. The aiSFX weights are read from the installed wheel (never stored here, CC BY 4.0): the model
file holds the small network's weights, the standardiser and the checkpoint's sha256, checked at
load. Detection costs an aiSFX pass over every clip (3-5x the tagger's time).
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from dataclasses import asdict, dataclass, fields

import numpy as np

from reasonaudio.detect import TRAIN_THREADS, Deterministic, torch_module
from reasonaudio.errors import UserError

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


@dataclass(frozen=True)
class AisfxHead:
    """The pretrained aiSFX CNN's label scores, from a small network fitted on its embeddings of
    training mixtures (detect.aisfx_heads), mixed into the trained labels' probabilities as
    (1 - weight) p + weight a. The aiSFX weights stay in the installed wheel (checkpoint_sha256)."""

    network: dict  # the small network's state dict
    known: list  # [L] whether a label had a training recording (the others keep p)
    mean: list  # [512] standardiser of the aiSFX embeddings
    std: list  # [512]
    weight: float  # aiSFX's share of the mix
    checkpoint_sha256: str
    attribution: str
    settings: dict  # how it was built (mixtures, epochs, context, hidden, …)

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}  # the network's tensors kept as they are

    @classmethod
    def from_dict(cls, d: dict) -> "AisfxHead":
        return cls(**{f.name: d[f.name] for f in fields(cls)})


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


def build(detector, library_spec, *, weight: float = 0.3, include_valid: bool = False, config: HeadConfig | None = None,
          progress: bool = False):
    """A copy of `detector` whose trained labels are also scored by the aiSFX head, fitted on
    `library_spec`'s training recordings (the library it was trained on)."""
    head = build_head(detector, library_spec, include_valid=include_valid, config=config, progress=progress)
    return detector.replaced(aisfx=AisfxHead(**head, weight=weight))


def _inputs(detector, library, include_valid: bool, config: HeadConfig) -> dict:
    """Everything the head depends on: the cache key's contents."""
    from reasonaudio.detect.data import library_hash
    from reasonaudio.detect.pretrained import checkpoint_sha256

    n_labels = detector.net_config.n_labels
    return {"library": library_hash(library), "labels": list(detector.labels[:n_labels]), "rate": detector.features.sample_rate,
            "include_valid": include_valid, "config": asdict(config), "checkpoint": checkpoint_sha256(), "format": 2}


def build_head(detector, library_spec, *, include_valid: bool = False, config: HeadConfig | None = None, progress: bool = False,
               cache: bool = False, log=None) -> dict:
    """The head's fields of `model.AisfxHead` (without its weight). With `cache`, read from or
    written to the user's cache, keyed by the head's inputs."""
    from reasonaudio.detect.library import trained_library
    from reasonaudio.detect.pretrained import ATTRIBUTION, AisfxFrontEnd, checkpoint_sha256

    if detector.enrolled:
        raise UserError("this model has enrolled labels: add the aiSFX head before enrolling")
    config = config or HeadConfig()
    library = trained_library(detector, library_spec, include_valid=include_valid)
    if not len(library):
        raise UserError("no training recording left to build the aiSFX head from")
    torch = torch_module()
    path = None
    if cache:
        from reasonaudio.io.cache import cache_dir

        key = hashlib.sha256(json.dumps(_inputs(detector, library, include_valid, config), sort_keys=True).encode()).hexdigest()[:16]
        path = cache_dir("detect") / f"aisfx-head-{key}.pt"
        if path.is_file():
            try:
                return torch.load(path, map_location="cpu", weights_only=True)
            except Exception:  # an entry that cannot be read is rebuilt (io.cache)
                pass
        if log is not None:
            log(f"building the aiSFX head ({config.mixtures} mixtures, {config.epochs} epochs); cached at {path}")
    fields = _trained(detector, library, AisfxFrontEnd(detector.features), config, progress)
    settings = {"recordings": len(library), "include_valid": include_valid, **fields.pop("settings")}
    head = {**fields, "checkpoint_sha256": checkpoint_sha256(), "attribution": ATTRIBUTION, "settings": settings}
    if path is not None:
        from reasonaudio.io.outputs import write_atomic

        buf = io.BytesIO()
        torch.save(head, buf)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, buf.getvalue())
    return head


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
    """The aiSFX head of a detector at detection time (its aiSFX CNN and small network built once):
    `fuse(wave, probs)` for one clip."""

    def __init__(self, detector, device: str = "cpu"):
        from reasonaudio.detect.pretrained import AisfxFrontEnd, checkpoint_sha256

        torch = torch_module()
        h = detector.aisfx
        if checkpoint_sha256() != h.checkpoint_sha256:
            raise UserError("the installed aisfx wheel's checkpoint is not the one this model's aiSFX head was built with "
                            f"(sha256 {h.checkpoint_sha256[:12]}…): reinstall that aisfx version or retrain the model")
        self.front = AisfxFrontEnd(detector.features, device)
        self.front.net = self.front.net.to(memory_format=torch.channels_last)  # about 1.5x faster on CPU, the same values to float rounding
        self.weight = float(h.weight)
        self.known = np.asarray(h.known, bool)
        self.mean = np.asarray(h.mean, np.float32)
        self.std = np.asarray(h.std, np.float32)
        self.context = int(h.settings["context"])
        self.network = _network(len(self.mean) * (2 * self.context + 1), int(h.settings["hidden"]), len(self.known))
        self.network.load_state_dict(h.network)
        self.network.eval()
        self.frame_s, self.centre_s = frame_times()
        self.tagger_frame_s = detector.output_frame_s

    def embed(self, wave: np.ndarray) -> np.ndarray:
        """[T, 512] aiSFX frame embeddings of one clip."""
        return embed(self.front, wave)

    def frame_scores(self, embedding: np.ndarray) -> np.ndarray:
        """[T, known labels] aiSFX scores at aiSFX's own frames."""
        torch = torch_module()
        z = (embedding - self.mean) / self.std
        with torch.inference_mode():
            logits = self.network(torch.from_numpy(with_context(z, self.context).astype(np.float32)))
        return torch.sigmoid(logits).numpy()[:, self.known]

    def scores(self, embedding: np.ndarray, n_frames: int) -> np.ndarray:
        """[n_frames, known labels] aiSFX scores of a clip's embeddings on the tagger's frame grid."""
        a = self.frame_scores(embedding)
        t_a = self.centre_s + np.arange(len(a)) * self.frame_s
        t = np.arange(n_frames) * self.tagger_frame_s
        return np.stack([np.interp(t, t_a, a[:, k]) for k in range(a.shape[1])], axis=1)

    def mix(self, p: np.ndarray, a: np.ndarray) -> np.ndarray:
        """The fused probability of the tagger's p and aiSFX's a (same shape)."""
        return (1 - self.weight) * p + self.weight * a

    def fuse(self, wave: np.ndarray, probs: np.ndarray) -> np.ndarray:
        """probs [J, labels] of one clip (trained labels first) with the known labels' mixed in."""
        if not len(probs) or not len(wave):
            return probs
        cols = np.flatnonzero(self.known)
        p = probs[:, cols].astype(np.float64)
        out = probs.copy()
        out[:, cols] = self.mix(p, self.scores(self.embed(wave), len(probs))).astype(probs.dtype)
        return out
