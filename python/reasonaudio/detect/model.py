"""The frame tagger: a small convolutional-recurrent network on log-mel frames, and its file format.

Architecture (why each part): three small 2-d convolutions over (mel band, frame) (the default
stem, `2d-halftime`) keep a sound's local time-frequency pattern wherever in frequency it lies; a
1-d convolution over their channels (with `--stem 1d`: over the mel channels directly) follows;
the frame rate halves to 25 fps on the way (40 ms, far finer than the benchmark's 0.25 s timing
margin), halving the cost of all later layers; dilated residual convolutions (receptive field ~2.5 s) recognise each sound from its
texture over time, including sounds with silent gaps (ticks, beeps); a bidirectional GRU gives every
frame the context of the whole clip, which keeps an event's frames "on" through quiet stretches;
per-frame sigmoid outputs are independent per label, so overlapping sounds are detected together.

A model file is one `torch.save` dict of tensors and plain values (loadable with
`weights_only=True`): the network weights, its architecture, the feature settings, the
vocabulary (labels and phrases), the library hash it was trained on, the training record and the
post-processing settings.
"""

from __future__ import annotations

import io
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from reasonaudio.detect import torch_module
from reasonaudio.detect.features import FeatureConfig
from reasonaudio.errors import UserError
from reasonaudio.io.outputs import FileKind, write_output

FORMAT = "reasonaudio-detector/1"


def _is_model_file(path: Path) -> bool:
    import zipfile

    if not zipfile.is_zipfile(path):  # every torch.save file is a zip: spares importing torch
        return False
    torch = torch_module()

    payload = torch.load(path, map_location="cpu", weights_only=True)
    return isinstance(payload, dict) and payload.get("format") == FORMAT


#: an earlier model file (what --force may replace): a torch file whose payload has FORMAT
MODEL_FILE = FileKind("detector model", _is_model_file)


@dataclass(frozen=True)
class NetConfig:
    n_labels: int
    n_mels: int = 64
    channels: int = 160
    dilations: tuple[int, ...] = (1, 2, 4, 8, 1, 2, 4, 8)
    gru: int = 0  # hidden units per direction of a BiGRU; 0: none
    front_end: str = "logmel"  # "aisfx": frozen pretrained CNN embeddings beside the log-mel (detect.pretrained)
    dropout: float = 0.0  # on the frame embeddings, before the head (training only)
    # "2d": three 3x3 convolutions over (mel band, frame), each pooling frequency by 2, before the
    # 1-D stem, so a sound shifted or coloured in frequency keeps its local pattern; "1d" (what a
    # model file that names no stem has: every model before the option): the 64 bands are one
    # feature vector per frame (stop 30: the tagger learns a recording's colour);
    # "2d-halftime": the 2-D stem with its first pooling over time too (the frame rate halves there
    # instead of in the 1-D stem's stride), so its two costly layers see half the frames; what
    # `detect train` uses by default is TrainConfig.stem
    stem: str = "1d"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["dilations"] = list(self.dilations)
        for name, default in (("dropout", 0.0), ("stem", "1d")):
            if d[name] == default:  # earlier model files have no such field: the same model, the same bytes
                d.pop(name)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "NetConfig":
        return cls(**{**d, "dilations": tuple(d["dilations"])})


def make_front_end(cfg: NetConfig, features: FeatureConfig, device: str = "cpu"):
    """The callable that turns waveforms [B, N] into the network's input."""
    from reasonaudio.detect.features import LogMel

    if cfg.front_end == "aisfx":
        from reasonaudio.detect.pretrained import AisfxFrontEnd

        return AisfxFrontEnd(features, device)
    return LogMel(features, device)


STEM2D_CHANNELS = (16, 32, 32)
STEMS = ("1d", "2d", "2d-halftime")


def build_net(cfg: NetConfig):
    torch = torch_module()
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, c: int, dilation: int):
            super().__init__()
            self.conv = nn.Conv1d(c, c, 3, padding=dilation, dilation=dilation)
            self.norm = nn.BatchNorm1d(c)

        def forward(self, x):
            return x + torch.relu(self.norm(self.conv(x)))

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            c = cfg.channels
            self.inorm = nn.BatchNorm1d(cfg.n_mels)
            stem_in = cfg.n_mels
            self.stem2d = None
            halftime = cfg.stem == "2d-halftime"  # 50 -> 25 frames per second in the 2-D stem, else in the 1-D stem's stride
            if cfg.stem in ("2d", "2d-halftime"):
                layers, cin = [], 1
                for i, cout in enumerate(STEM2D_CHANNELS):
                    # ceil_mode: an odd frame count gives ceil(F / 2) frames, as the strided 1-D stem does
                    pool = nn.MaxPool2d((2, 2), ceil_mode=True) if i == 0 and halftime else nn.MaxPool2d((2, 1))
                    layers += [nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(), pool]
                    cin = cout
                self.stem2d = nn.Sequential(*layers)
                stem_in = STEM2D_CHANNELS[-1] * (cfg.n_mels // 2 ** len(STEM2D_CHANNELS))
            self.stem = nn.Sequential(nn.Conv1d(stem_in, c, 5, stride=1 if halftime else 2, padding=2), nn.BatchNorm1d(c), nn.ReLU())
            self.blocks = nn.Sequential(*[Block(c, d) for d in cfg.dilations])
            self.gru = nn.GRU(c, cfg.gru, batch_first=True, bidirectional=True) if cfg.gru else None
            self.pre = None
            if cfg.front_end == "aisfx":
                from reasonaudio.detect.pretrained import EMBED_DIM

                # the pretrained embeddings (frozen, computed by the front end) join the log-mel
                # features after a normalisation and a 1x1 projection
                self.pre = nn.Sequential(nn.BatchNorm1d(EMBED_DIM), nn.Conv1d(EMBED_DIM, c, 1), nn.ReLU())
                self.fuse = nn.Conv1d(2 * c, c, 1)
            self.head = nn.Conv1d(c + (2 * cfg.gru if cfg.gru else 0), cfg.n_labels, 1)
            self.drop = nn.Dropout(cfg.dropout) if cfg.dropout else None

        def features(self, x):  # the frame embeddings the head reads: [B, C', J]
            emb = None
            if isinstance(x, tuple):
                x, emb = x
            x = self.inorm(x)
            if self.stem2d is not None:
                x = self.stem2d(x.unsqueeze(1)).flatten(1, 2)  # [B, C2, mel / 8, F] -> [B, C2 * mel / 8, F]
            h = self.stem(x)
            if self.pre is not None:
                e = torch.nn.functional.interpolate(self.pre(emb), size=h.shape[-1], mode="linear", align_corners=False)
                h = self.fuse(torch.cat([h, e], dim=1))
            h = self.blocks(h)
            if self.gru is not None:
                r, _ = self.gru(h.transpose(1, 2))
                h = torch.cat([h, r.transpose(1, 2)], dim=1)
            return h

        def forward(self, x):  # [B, n_mels, F] (or (mel, embeddings)) -> logits [B, n_labels, ceil(F / 2)]
            h = self.features(x)
            return self.head(self.drop(h) if self.drop is not None else h)

    return Tagger()


@dataclass(frozen=True)
class PostConfig:
    """Frame probabilities -> events: median filter, threshold, gap filling, minimum length."""

    median_frames: int = 7  # 280 ms at 25 fps
    threshold: float = 0.5
    fill_gap_s: float = 0.5  # a label occurs once per clip, so close gaps inside one event
    min_event_s: float = 0.2

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Detector:
    """A trained model with everything needed to run it and interpret its outputs."""

    labels: list[str]
    phrases: list[str]
    features: FeatureConfig
    net_config: NetConfig
    state_dict: dict
    library: dict  # {"spec", "hash", "n_atoms", "sample_rate", "exemplar_split"}
    training: dict = field(default_factory=dict)
    post: PostConfig = field(default_factory=PostConfig)
    #: labels enrolled without retraining (detect.enrol): {"labels", "phrases", "prototypes" [K, C'],
    #: "centre" [K], "scale" [K], "shots"}; None: none
    enrolled: dict | None = None
    #: float16 [K, C'] frame embeddings of training mixtures (the negatives of enrolment); None: none
    background: object = None
    #: prototype heads of the trained labels (detect.prototypes): {"mode", "per", "vectors" [P, C'],
    #: "label" [P], "centre" [L], "scale" [L], "mean" [C'], "std" [C'], "settings"}; None: the linear head
    prototypes: dict | None = None
    #: the other taggers of an ensemble (detect.ensemble): same vocabulary, features and library;
    #: their trained-label probabilities are averaged with this one's. Empty: a single tagger
    members: list = field(default_factory=list)
    #: aiSFX label heads fused with the trained labels' probabilities at detection (detect.aisfx_heads):
    #: {"head", "fusion", "weight", "network" (trained) or "tau", "vectors" [L, 512] (prototypes), "known" [L],
    #: "mean" [512], "std" [512], "checkpoint_sha256", "settings", …}; stop 34's files name no head
    aisfx: dict | None = None
    _net: object = field(default=None, init=False, repr=False)
    #: wall-clock figures of the run that trained this detector (not stored: they vary with load)
    run_info: dict = field(default_factory=dict, init=False, repr=False)

    @property
    def output_frame_s(self) -> float:
        return 2 * self.features.frame_s

    def replaced(self, **changes) -> Detector:
        """A copy with `changes` (as dataclasses.replace) sharing the network already built: heads,
        prototypes and enrolled labels are added beside the trained weights, never into them."""
        out = replace(self, **changes)
        out._net = self._net
        return out

    def net(self, device: str = "cpu"):
        torch = torch_module()

        if self._net is None:
            net = build_net(self.net_config)
            net.load_state_dict(self.state_dict)
            net.eval()
            self._net = net
        return self._net.to(torch.device(device))

    def _payload(self) -> dict:
        """The model file's dict (without `format`); ensemble members nest their own."""
        payload = {
            "labels": list(self.labels),
            "phrases": list(self.phrases),
            "features": self.features.to_dict(),
            "net": self.net_config.to_dict(),
            "state_dict": {k: v.detach().cpu() for k, v in self.state_dict.items()},
            "library": dict(self.library),
            "training": dict(self.training),
            "post": self.post.to_dict(),
        }
        if self.enrolled is not None:
            payload["enrolled"] = dict(self.enrolled)
        if self.background is not None:
            payload["background"] = self.background
        if self.prototypes is not None:
            payload["prototypes"] = dict(self.prototypes)
        if self.members:
            payload["members"] = [m._payload() for m in self.members]
        if self.aisfx is not None:
            payload["aisfx"] = dict(self.aisfx)
        return payload

    @classmethod
    def _from_payload(cls, payload: dict) -> "Detector":
        return cls(
            labels=list(payload["labels"]),
            phrases=list(payload["phrases"]),
            features=FeatureConfig(**payload["features"]),
            net_config=NetConfig.from_dict(payload["net"]),
            state_dict=payload["state_dict"],
            library=dict(payload["library"]),
            training=dict(payload["training"]),
            post=PostConfig(**payload["post"]),
            enrolled=dict(payload["enrolled"]) if payload.get("enrolled") else None,
            background=payload.get("background"),
            prototypes=dict(payload["prototypes"]) if payload.get("prototypes") else None,
            members=[cls._from_payload(m) for m in payload.get("members") or []],
            aisfx=dict(payload["aisfx"]) if payload.get("aisfx") else None,
        )

    def save(self, path: str | os.PathLike[str], *, inputs=(), force: bool = False) -> Path:
        """Written atomically; an existing file is replaced only when it is an earlier model and
        `force` is given."""
        torch = torch_module()

        path = Path(path)
        payload = {"format": FORMAT, **self._payload()}
        # torch.save into memory: the archive's inner folder is then always "archive", not named
        # after a temporary file, so the same model is the same bytes
        buf = io.BytesIO()
        torch.save(payload, buf)
        write_output(path, MODEL_FILE, buf.getvalue(), inputs=inputs, force=force)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> "Detector":
        torch = torch_module()

        path = Path(path)
        if not path.is_file():
            raise UserError(f"{path}: detector model file not found")
        try:
            payload = torch.load(path, map_location="cpu", weights_only=True)
        except Exception as err:  # torch raises several error types for a foreign file
            raise UserError(f"{path}: not a reasonaudio detector model ({err.__class__.__name__}: {err})") from None
        if not isinstance(payload, dict) or payload.get("format") != FORMAT:
            found = payload.get("format") if isinstance(payload, dict) else type(payload).__name__
            raise UserError(f"{path}: not a reasonaudio detector model (format {found!r}, expected {FORMAT!r})")
        return cls._from_payload(payload)

    def _trained_probs(self, net, h):
        """[B, trained labels, J] from this tagger's frame embeddings h: its head, its prototype heads, or their mean."""
        torch = torch_module()

        p = torch.sigmoid(net.head(h))
        if self.prototypes:
            q = prototype_probs(self, h)
            p = q if self.prototypes["mode"] == "prototypes" else (p + q) / 2
        return p

    def probabilities(self, net, x):
        """Frame probabilities [B, labels, J] of the trained labels (the mean over the ensemble's
        taggers, detect.ensemble) and then the enrolled ones (this tagger's embeddings)."""
        torch = torch_module()

        h = net.features(x)
        p = self._trained_probs(net, h)
        if self.members:
            for m in self.members:
                member_net = m.net(h.device)
                p = p + m._trained_probs(member_net, member_net.features(x))
            p = p / (1 + len(self.members))
        if self.enrolled:
            p = torch.cat([p, enrolled_probs(self, h)], dim=1)
        return p

    def atom_of_label(self) -> list[str]:
        """One atom id per label (its first exemplar's; enrolled labels: "enrolled:<label>")."""
        ids = list(self.library.get("atom_ids") or [])
        per_label = self.library.get("label_atom_ids")
        if per_label:
            ids = list(per_label)
        elif len(ids) != self.net_config.n_labels:
            ids = [f"atom_{i:03d}" for i in range(self.net_config.n_labels)]
        return ids[: self.net_config.n_labels] + [f"enrolled:{lab}" for lab in self.labels[self.net_config.n_labels :]]


def enrolled_probs(detector, h):
    """torch [B, K, J] probabilities of the enrolled labels (detect.enrol) from frame embeddings h [B, C', J]:
    sigmoid((cos(h_t, prototype) - centre) / scale)."""
    torch = torch_module()

    e = detector.enrolled
    protos = torch.tensor(np.asarray(e["prototypes"], np.float32), device=h.device)  # [K, C']
    centre = torch.tensor(e["centre"], dtype=torch.float32, device=h.device)[None, :, None]
    scale = torch.tensor(e["scale"], dtype=torch.float32, device=h.device)[None, :, None]
    hn = torch.nn.functional.normalize(h.float(), dim=1)
    cos = torch.einsum("kc,bcj->bkj", protos, hn)
    return torch.sigmoid((cos - centre) / scale)


def prototype_probs(detector, h):
    """torch [B, L, J] probabilities of the trained labels from frame embeddings h [B, C', J] by their
    prototype heads (detect.prototypes builds them): the max cosine over a label's prototypes, calibrated."""
    torch = torch_module()

    p = detector.prototypes
    dev = h.device
    mean = torch.tensor(p["mean"], dtype=torch.float32, device=dev)[None, :, None]
    std = torch.tensor(p["std"], dtype=torch.float32, device=dev)[None, :, None]
    z = torch.nn.functional.normalize((h.float() - mean) / std, dim=1)
    vec = torch.tensor(np.asarray(p["vectors"], np.float32), device=dev)  # [P, C']
    cos = torch.einsum("pc,bcj->bpj", vec, z)
    owner = torch.tensor(p["label"], dtype=torch.int64, device=dev)
    n = len(p["centre"])
    best = torch.full((h.shape[0], n, h.shape[2]), -2.0, device=dev)
    best = best.scatter_reduce(1, owner[None, :, None].expand_as(cos), cos, reduce="amax")
    centre = torch.tensor(p["centre"], dtype=torch.float32, device=dev)[None, :, None]
    scale = torch.tensor(p["scale"], dtype=torch.float32, device=dev)[None, :, None]
    return torch.sigmoid((best - centre) / scale)
