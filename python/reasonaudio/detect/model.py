"""The detector: the frame tagger network, its heads, its file format, and its one forward pass.

Architecture (why each part): three small 2-d convolutions over (mel band, frame) keep a sound's
local time-frequency pattern wherever in frequency it lies, the first pooling time too (50 -> 25
frames per second, 40 ms, far finer than the benchmark's 0.25 s timing margin, halving the cost of
every later layer); a 1-d convolution over their channels follows; dilated residual convolutions
(receptive field ~2.5 s) recognise each sound from its texture over time, including sounds with
silent gaps; per-frame sigmoid outputs are independent per label, so overlapping sounds are
detected together.

Heads beside the trained weights, each optional and built after training: prototype heads
(detect.prototypes: a trained label also scored by cosine to prototypes of its recordings), the
other taggers of an ensemble (detect.ensemble), the pretrained aiSFX head (detect.aisfx_heads) and
enrolled labels (detect.enrol). `frame_probabilities` applies them all, in that order: `detect
run`, `eval --model detect:…` and the Python API get the same numbers.

A model file is one `torch.save` dict of tensors and plain values (loadable with
`weights_only=True`) with a `format` version; `migrate` turns an older file's dict into the
current one (the one place that knows earlier layouts). Each part is read into a typed value
(the heads here, the library and training records in detect.records) and written back by it.
"""

from __future__ import annotations

import io
import os
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

import numpy as np

from reasonaudio.detect import torch_module
from reasonaudio.detect.aisfx_heads import AisfxHead, AisfxHeads
from reasonaudio.detect.features import FeatureConfig
from reasonaudio.detect.records import LibraryRecord, TrainingRecord
from reasonaudio.errors import UserError
from reasonaudio.io.outputs import FileKind, write_output

FORMAT = "reasonaudio-detector/2"
FORMATS = ("reasonaudio-detector/1", FORMAT)  # what `load` reads (migrate turns /1 into /2)


def _is_model_file(path: Path) -> bool:
    import zipfile

    if not zipfile.is_zipfile(path):  # every torch.save file is a zip: spares importing torch
        return False
    torch = torch_module()

    payload = torch.load(path, map_location="cpu", weights_only=True)
    return isinstance(payload, dict) and payload.get("format") in FORMATS


#: an earlier model file (what --force may replace): a torch file whose payload has FORMAT
MODEL_FILE = FileKind("detector model", _is_model_file)


@dataclass(frozen=True)
class NetConfig:
    n_labels: int
    n_mels: int = 64
    channels: int = 160
    dilations: tuple[int, ...] = (1, 2, 4, 8, 1, 2, 4, 8)
    dropout: float = 0.0  # on the frame embeddings, before the head (training only)
    #: "2d-halftime": the 2-D stem pools time by 2 at its first layer; "2d": at full time resolution
    #: (the 1-D stem's stride halves it); "1d": no 2-D stem, the mel bands are one vector per frame
    stem: str = "2d-halftime"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["dilations"] = list(self.dilations)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> "NetConfig":
        return cls(**{**d, "dilations": tuple(d["dilations"])})


def make_front_end(cfg: NetConfig, features: FeatureConfig, device: str = "cpu"):
    """The callable that turns waveforms [B, N] into the network's input (log-mel)."""
    from reasonaudio.detect.features import LogMel

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
            self.head = nn.Conv1d(c, cfg.n_labels, 1)
            self.drop = nn.Dropout(cfg.dropout) if cfg.dropout else None

        def features(self, x):  # the frame embeddings the head reads: [B, C', J]
            x = self.inorm(x)
            if self.stem2d is not None:
                x = self.stem2d(x.unsqueeze(1)).flatten(1, 2)  # [B, C2, mel / 8, F] -> [B, C2 * mel / 8, F]
            return self.blocks(self.stem(x))

        def forward(self, x):  # [B, n_mels, F] -> logits [B, n_labels, ceil(F / 2)]
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


@dataclass(frozen=True)
class PrototypeHeads:
    """Every trained label also scored by cosine to prototypes of its training recordings
    (detect.prototypes builds them): the max over the label's prototypes of the cosine to the
    standardised frame embedding, calibrated, averaged with the linear head's probability."""

    vectors: list  # [P][C'] unit prototypes
    label: list  # [P] the trained label each prototype belongs to
    centre: list  # [L]
    scale: list  # [L]
    mean: list  # [C'] standardiser of the frame embeddings
    std: list  # [C']
    settings: dict  # how they were built (recordings, quantile, …)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "PrototypeHeads":
        return cls(**{f.name: d[f.name] for f in fields(cls)})


@dataclass(frozen=True)
class EnrolledLabels:
    """Labels added from a few recordings without retraining (detect.enrol): one prototype each in
    the first tagger's embedding space, with the centre and scale of its calibration."""

    labels: list
    phrases: list
    prototypes: list  # [K][C']
    centre: list  # [K]
    scale: list  # [K]
    shots: list  # per label: {"n", "positive_p20", "background_p99_5"}

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> "EnrolledLabels":
        return cls(**{f.name: list(d[f.name]) for f in fields(cls)})

    def plus(self, label: str, phrase: str, prototype: list, centre: float, scale: float, shot: dict) -> "EnrolledLabels":
        return EnrolledLabels(labels=[*self.labels, label], phrases=[*self.phrases, phrase], prototypes=[*self.prototypes, prototype],
                              centre=[*self.centre, centre], scale=[*self.scale, scale], shots=[*self.shots, shot])


@dataclass
class Detector:
    """A trained model with everything needed to run it and interpret its outputs."""

    labels: list[str]
    phrases: list[str]
    features: FeatureConfig
    net_config: NetConfig
    state_dict: dict
    library: LibraryRecord  # what it was trained on
    training: TrainingRecord  # how, and which later stages built it
    post: PostConfig = field(default_factory=PostConfig)
    enrolled: EnrolledLabels | None = None  # labels added without retraining (detect.enrol)
    #: float16 [K, C'] frame embeddings of training mixtures (the negatives of enrolment); None: none
    background: object = None
    prototypes: PrototypeHeads | None = None  # averaged with the linear head (detect.prototypes)
    #: the other taggers of an ensemble (detect.ensemble): same vocabulary, features and library;
    #: their trained-label probabilities are averaged with this one's. Empty: a single tagger
    members: list = field(default_factory=list)
    aisfx: AisfxHead | None = None  # the pretrained aiSFX CNN's scores mixed in (detect.aisfx_heads)
    _net: object = field(default=None, init=False, repr=False)
    _aisfx_heads: object = field(default=None, init=False, repr=False)  # built on first use
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
            "library": self.library.to_dict(),
            "training": self.training.to_dict(),
            "post": self.post.to_dict(),
        }
        if self.enrolled is not None:
            payload["enrolled"] = self.enrolled.to_dict()
        if self.background is not None:
            payload["background"] = self.background
        if self.prototypes is not None:
            payload["prototypes"] = self.prototypes.to_dict()
        if self.members:
            payload["members"] = [m._payload() for m in self.members]
        if self.aisfx is not None:
            payload["aisfx"] = self.aisfx.to_dict()
        return payload

    @classmethod
    def _from_payload(cls, payload: dict, path: object = "model", where: str = "") -> "Detector":
        """The detector of a current-format dict (see `migrate`); `where`: an ensemble member's place in it."""
        return cls(
            labels=list(payload["labels"]),
            phrases=list(payload["phrases"]),
            features=FeatureConfig(**payload["features"]),
            net_config=NetConfig.from_dict(payload["net"]),
            state_dict=payload["state_dict"],
            library=LibraryRecord.from_dict(payload.get("library"), path, f"{where}library"),
            training=TrainingRecord.from_dict(payload.get("training"), path, f"{where}training"),
            post=PostConfig(**payload["post"]),
            enrolled=EnrolledLabels.from_dict(payload["enrolled"]) if payload.get("enrolled") else None,
            background=payload.get("background"),
            prototypes=PrototypeHeads.from_dict(payload["prototypes"]) if payload.get("prototypes") else None,
            members=[cls._from_payload(m, path, f"{where}members[{k}].") for k, m in enumerate(payload.get("members") or [])],
            aisfx=AisfxHead.from_dict(payload["aisfx"]) if payload.get("aisfx") else None,
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
        if not isinstance(payload, dict) or payload.get("format") not in FORMATS:
            found = payload.get("format") if isinstance(payload, dict) else type(payload).__name__
            raise UserError(f"{path}: not a reasonaudio detector model (format {found!r}, expected {FORMAT!r})")
        return cls._from_payload(migrate(payload, path), path)

    def _trained_probs(self, net, h):
        """[B, trained labels, J] from this tagger's frame embeddings h: its head, or its mean with the prototype heads."""
        torch = torch_module()

        p = torch.sigmoid(net.head(h))
        if self.prototypes:
            p = (p + prototype_probs(self, h)) / 2
        return p

    def frame_probabilities(self, waves, device: str = "cpu") -> list[np.ndarray]:
        """Per clip, float32 [frames, labels] probabilities of mono waveforms at the model's rate
        (see the module's `frame_probabilities`)."""
        return frame_probabilities(self, waves, device)

    def atom_of_label(self) -> list[str]:
        """One atom id per label (its first exemplar's; enrolled labels: "enrolled:<label>")."""
        ids = list(self.library.atom_ids)
        per_label = self.library.label_atom_ids
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
    protos = torch.tensor(np.asarray(e.prototypes, np.float32), device=h.device)  # [K, C']
    centre = torch.tensor(e.centre, dtype=torch.float32, device=h.device)[None, :, None]
    scale = torch.tensor(e.scale, dtype=torch.float32, device=h.device)[None, :, None]
    hn = torch.nn.functional.normalize(h.float(), dim=1)
    cos = torch.einsum("kc,bcj->bkj", protos, hn)
    return torch.sigmoid((cos - centre) / scale)


def prototype_probs(detector, h):
    """torch [B, L, J] probabilities of the trained labels from frame embeddings h [B, C', J] by their
    prototype heads (detect.prototypes builds them): the max cosine over a label's prototypes, calibrated."""
    torch = torch_module()

    p = detector.prototypes
    dev = h.device
    mean = torch.tensor(p.mean, dtype=torch.float32, device=dev)[None, :, None]
    std = torch.tensor(p.std, dtype=torch.float32, device=dev)[None, :, None]
    z = torch.nn.functional.normalize((h.float() - mean) / std, dim=1)
    vec = torch.tensor(np.asarray(p.vectors, np.float32), device=dev)  # [P, C']
    cos = torch.einsum("pc,bcj->bpj", vec, z)
    owner = torch.tensor(p.label, dtype=torch.int64, device=dev)
    n = len(p.centre)
    best = torch.full((h.shape[0], n, h.shape[2]), -2.0, device=dev)
    best = best.scatter_reduce(1, owner[None, :, None].expand_as(cos), cos, reduce="amax")
    centre = torch.tensor(p.centre, dtype=torch.float32, device=dev)[None, :, None]
    scale = torch.tensor(p.scale, dtype=torch.float32, device=dev)[None, :, None]
    return torch.sigmoid((best - centre) / scale)


def frame_probabilities(detector: Detector, waves, device: str = "cpu") -> list[np.ndarray]:
    """The detector's output: per clip, float32 [frames, labels] probabilities (one frame per
    `detector.output_frame_s`) of mono float32 waveforms at `detector.features.sample_rate`.

    Every head, in one place: the tagger's trained labels (its linear head, averaged with its
    prototype heads when it has them), averaged over an ensemble's taggers, the pretrained aiSFX
    head's scores mixed in, then the enrolled labels (cosine to their prototypes in the first
    tagger's embedding space). Clips of a call are padded to the longest and run as one batch."""
    torch = torch_module()

    waves = [np.ascontiguousarray(w, dtype=np.float32) for w in waves]
    if not waves:
        return []
    longest = max(1, max(len(w) for w in waves))
    x = np.zeros((len(waves), longest), np.float32)
    for k, w in enumerate(waves):
        x[k, : len(w)] = w
    hop = detector.features.hop
    with torch.inference_mode():
        mel = make_front_end(detector.net_config, detector.features, device)(torch.from_numpy(x).to(device))
        net = detector.net(device)
        h = net.features(mel)
        p = detector._trained_probs(net, h)
        for member in detector.members:
            member_net = member.net(device)
            p = p + member._trained_probs(member_net, member_net.features(mel))
        p = p / (1 + len(detector.members))
        enrolled = enrolled_probs(detector, h) if detector.enrolled else None
        p = p.transpose(1, 2).float().cpu().numpy()
        e = enrolled.transpose(1, 2).float().cpu().numpy() if enrolled is not None else None
    if detector.aisfx and detector._aisfx_heads is None:
        detector._aisfx_heads = AisfxHeads(detector, device)
    out = []
    for k, w in enumerate(waves):
        j = (len(w) // hop + 1 + 1) // 2 if len(w) else 0  # the stem halves the log-mel's frames
        clip = p[k, :j]
        if detector._aisfx_heads is not None:
            clip = detector._aisfx_heads.fuse(w, clip)
        if e is not None:
            clip = np.concatenate([clip, e[k, :j]], axis=1)
        out.append(np.ascontiguousarray(clip, dtype=np.float32))
    return out


#: /1 -> /2: the fields of the library and training records that early /1 files lack (unknown),
#: and the wall-clock figures early /1 training records held
LIBRARY_1 = {"n_train_atoms": None, "label_atom_ids": [], "valid_atom_ids": [], "exemplar_split": None}
TRAINING_1 = {"valid_train_recordings": None, "valid_held_out_recordings": None, "held_out_recordings": None, "checks": [],
              "deterministic": False}
WALL_CLOCK_1 = ("train_seconds", "train_cpu_seconds", "torch_threads")


def migrate(payload: dict, path: object = "model") -> dict:
    """A model file's dict in the current format (FORMAT), from any format `load` reads.

    /1 -> /2: the network config names its stem and dropout (files without a stem had the 1-D
    stem); a recurrent layer and the aiSFX front end inside the network are gone (such files are
    refused: retrain them); the aiSFX head is the trained one and the prototype heads are averaged
    with the linear head (files with the other variants are refused: retrain them); the library and
    training records gain the fields later /1 files had (unknown: None or empty) and lose the
    wall-clock figures early ones held (they vary with load)."""
    if payload.get("format") == FORMAT:
        return payload
    retrain = "retrain it with `detect train`"
    out = dict(payload)
    net = dict(out["net"])
    if net.pop("gru", 0):
        raise UserError(f"{path}: a detector with a recurrent layer (format {payload.get('format')}): {retrain}")
    if net.pop("front_end", "logmel") != "logmel":
        raise UserError(f"{path}: a detector with the aiSFX front end inside the network (format {payload.get('format')}): {retrain}")
    net.setdefault("stem", "1d")
    net.setdefault("dropout", 0.0)
    out["net"] = net
    aisfx = out.get("aisfx")
    if aisfx:
        if aisfx.get("head", "prototypes") != "trained":
            raise UserError(f"{path}: its aiSFX head is the prototype head (format {payload.get('format')}): {retrain}")
        out["aisfx"] = {k: v for k, v in aisfx.items() if k not in ("head", "fusion")}
    prototypes = out.get("prototypes")
    if prototypes:
        if prototypes.get("mode") != "both":
            raise UserError(f"{path}: its prototype heads replace the linear head (format {payload.get('format')}): {retrain}")
        out["prototypes"] = {k: v for k, v in prototypes.items() if k not in ("mode", "per")}
    if isinstance(out.get("library"), dict):
        out["library"] = {**LIBRARY_1, **out["library"]}
    if isinstance(out.get("training"), dict):
        training = {k: v for k, v in out["training"].items() if k not in WALL_CLOCK_1}
        out["training"] = {**TRAINING_1, "selected_step": training.get("steps_done"), **training}
    out["members"] = [{k: v for k, v in migrate({**m, "format": payload["format"]}, path).items() if k != "format"}
                      for m in out.get("members") or []]
    out["format"] = FORMAT
    return out
