"""Background beds: a generated texture (noise:pink|brown|white), an atom library used as a bed
library, or every audio file of a folder.

A library (a directory with atoms.parquet: written by `reasonaudio atoms import`, the dataset
importers or `reasonaudio atoms pack debian-beds`) gives one bed per exemplar, with the library's
label, source, license and attribution, so beds are imported exactly as atoms are.

A texture is one BED_TEXTURE_S-second source generated from (seed, kind) by the core; each clip
takes its own seeded start in it (scene.draws), so clips do not share a bed segment. A folder's
files are read by libsndfile (any format), mixed to mono, resampled once to the benchmark's rate
and scaled to unit RMS level TEXTURE_RMS (the renderer sets the level per clip); a file's label is
its sub-folder's name when it lies in one, else its file name without extension, normalised as
the atom importers do (word level). A bed label that equals, contains or is contained in a
vocabulary label is refused before any work (contract §5), naming both."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from reasonaudio import _core
from reasonaudio.contract import labels_clash
from reasonaudio.errors import UserError
from reasonaudio.io.audio import read_mono, to_rate

BED_TEXTURE_S = 60.0
AUDIO_SUFFIXES = (".wav", ".flac", ".ogg", ".aiff", ".aif", ".mp3", ".opus")
_TEXTURE_KEY = {"white": 0x5CE0_0001, "pink": 0x5CE0_0002, "brown": 0x5CE0_0003}


@dataclass
class Bed:
    background_id: str
    label: str
    source: str
    license: str
    attribution: str
    audio: np.ndarray  # float32, unit level (RMS TEXTURE_RMS), at the benchmark's rate

    @property
    def sha256(self) -> str:
        return hashlib.sha256(np.ascontiguousarray(self.audio, dtype="<f4").tobytes()).hexdigest()


def _label_of(path: Path, root: Path) -> str:
    rel = path.relative_to(root)
    return (rel.parts[0] if len(rel.parts) > 1 else path.stem).strip()


def _unit_level(x: np.ndarray, where: str) -> np.ndarray:
    rms = float(np.sqrt(np.mean(np.asarray(x, np.float64) ** 2))) if x.size else 0.0
    if not np.isfinite(x).all() or rms == 0.0:
        raise UserError(f"--background {where}: the recording is silent or holds non-finite samples")
    return np.ascontiguousarray(x * (_core.TEXTURE_RMS / rms), dtype=np.float32)


def _folder_beds(root: Path, sample_rate: int) -> list[Bed]:
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in AUDIO_SUFFIXES)
    if not files:
        raise UserError(f"--background {root}: the directory holds no audio file ({', '.join(AUDIO_SUFFIXES)})")
    beds = []
    for i, path in enumerate(files):
        x, sr = read_mono(path)
        beds.append(Bed(f"bg_{i:04d}", _label_of(path, root), str(path), "see source", "", _unit_level(to_rate(x, sr, sample_rate), str(path))))
    return beds


def _library_beds(root: Path, sample_rate: int) -> list[Bed]:
    from reasonaudio.atoms import AtomLibrary

    lib = AtomLibrary.load(root, sample_rate=sample_rate)
    return [
        Bed(f"bg_{i:04d}", lib.labels[i], lib.sources[i], lib.licenses[i], lib.attributions[i] if lib.attributions else "",
            _unit_level(np.asarray(lib.audio(i)), f"{root} atom {lib.atom_ids[i]}"))
        for i in range(len(lib))
    ]


def load_beds(spec: str, sample_rate: int, seed: int, vocabulary: list[str]) -> list[Bed]:
    if spec.startswith("noise:"):
        kind = spec.partition(":")[2]
        n = int(round(BED_TEXTURE_S * sample_rate))
        audio = _core.scene_noise(kind, n, seed, _TEXTURE_KEY[kind])
        beds = [Bed(f"noise_{kind}", f"{kind}_noise", f"generated:noise:{kind}", "CC0-1.0", "", audio)]
    else:
        root = Path(spec)
        if (root / "atoms.parquet").is_file():
            beds = _library_beds(root, sample_rate)
        elif root.is_dir():
            beds = _folder_beds(root, sample_rate)
        else:
            raise UserError(f"--background {spec!r}: not noise:pink|brown|white, an atom library or a directory")
    for bed in beds:
        for label in vocabulary:
            if labels_clash(bed.label, label):
                raise UserError(
                    f"--background: bed label {bed.label!r} ({bed.source}) clashes with the vocabulary label {label!r} "
                    "(equal, containing or contained word for word): a query could be decided by the bed (contract §5)"
                )
    return beds
