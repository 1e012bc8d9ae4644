"""Atom libraries: the embedded procedural default and libraries imported from labelled audio files.

A library directory holds

    atoms.parquet        atom_id, label, phrase, duration_s, source, license (contract section 4),
                         plus family, sample_rate, n_samples, and where the library has them
                         split (train/test) and attribution (author, original file)
    audio/<atom_id>.wav  one mono 32-bit float WAV per atom, all at one sample rate

Several atoms may share a label (contract v2): they are exemplars of one class and share its phrase.

In memory an `AtomLibrary` keeps all audio in one flat float32 array with uint64 offsets
(atom i is ``audio[offsets[i]:offsets[i+1]]``), the layout the Rust renderer takes.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import numpy.typing as npt
import polars as pl
import soundfile as sf

from reasonaudio import _core
from reasonaudio.contract import ATOM_SPLITS, TABLE_COLUMNS
from reasonaudio.errors import UserError
from reasonaudio.io.audio import read_audio
from reasonaudio.io.outputs import output_directory
from reasonaudio.io.parquet import write_table

PROCEDURAL = "procedural"
PROCEDURAL_LICENSE = "CC0-1.0"
DEFAULT_SAMPLE_RATE = 16000
#: Columns of atoms.parquet fixed by the contract (extra columns follow them).
CONTRACT_COLUMNS = TABLE_COLUMNS["atoms"]
#: Leading/trailing silence is trimmed at this level relative to the file's peak
#: (measured on 10 ms frames of RMS), so quiet but real sound is kept.
TRIM_THRESHOLD_DB = -40.0
#: A file whose peak (after mixdown) is below this is called silent.
SILENCE_PEAK_DBFS = -80.0


@dataclass
class AtomLibrary:
    """A set of atoms sharing one sample rate, with their audio in one flat float32 array."""

    atom_ids: list[str]
    labels: list[str]
    phrases: list[str]
    families: list[str]
    sources: list[str]
    licenses: list[str]
    sample_rate: int
    audio_flat: npt.NDArray[np.float32]
    offsets: npt.NDArray[np.uint64]
    #: per atom "train", "test" or "" (none); empty list = no split column
    splits: list[str] = field(default_factory=list)
    #: per atom author / original-file credit; empty list = no attribution column
    attributions: list[str] = field(default_factory=list)
    _label_index: dict[str, int] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        n = len(self.atom_ids)
        columns = (self.labels, self.phrases, self.families, self.sources, self.licenses)
        if any(len(c) != n for c in columns) or len(self.offsets) != n + 1:
            raise ValueError("AtomLibrary columns and offsets must all describe the same atoms")
        self.audio_flat = np.ascontiguousarray(self.audio_flat, dtype=np.float32)
        self.offsets = np.ascontiguousarray(self.offsets, dtype=np.uint64)
        if int(self.offsets[-1]) != len(self.audio_flat) or np.any(np.diff(self.offsets.astype(np.int64)) <= 0):
            raise ValueError("offsets must increase strictly and end at len(audio_flat)")
        for name, column in (("splits", self.splits), ("attributions", self.attributions)):
            if column and len(column) != n:
                raise ValueError(f"AtomLibrary {name} must be empty or describe every atom")
        if any(s and s not in ATOM_SPLITS for s in self.splits):
            raise ValueError(f"splits must be one of {ATOM_SPLITS} or ''")
        self._label_index = {}
        phrase_of: dict[str, str] = {}
        for i, label in enumerate(self.labels):
            self._label_index.setdefault(label, i)
            if phrase_of.setdefault(label, self.phrases[i]) != self.phrases[i]:
                raise ValueError(f"exemplars of label {label!r} must share one phrase, got {phrase_of[label]!r} and {self.phrases[i]!r}")

    # ---- access
    def __len__(self) -> int:
        return len(self.atom_ids)

    def audio(self, i: int) -> npt.NDArray[np.float32]:
        """Audio of atom ``i`` (a view into the flat array)."""
        return self.audio_flat[int(self.offsets[i]) : int(self.offsets[i + 1])]

    def flat(self) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.uint64]]:
        """(audio, offsets) in the layout the Rust renderer takes."""
        return self.audio_flat, self.offsets

    @property
    def label_to_index(self) -> dict[str, int]:
        """Mapping label -> index of its first atom."""
        return dict(self._label_index)

    @property
    def n_labels(self) -> int:
        return len(self._label_index)

    def exemplars(self) -> dict[str, list[int]]:
        """Atom indices of every label's exemplars, labels in order of first appearance."""
        groups: dict[str, list[int]] = {}
        for i, label in enumerate(self.labels):
            groups.setdefault(label, []).append(i)
        return groups

    def subset(self, indices: Sequence[int]) -> AtomLibrary:
        """The atoms at ``indices`` (in that order), their audio copied."""
        idx = list(indices)
        if not idx:
            raise UserError("the atom selection is empty")
        chunks = [self.audio(i) for i in idx]
        return AtomLibrary(
            atom_ids=[self.atom_ids[i] for i in idx],
            labels=[self.labels[i] for i in idx],
            phrases=[self.phrases[i] for i in idx],
            families=[self.families[i] for i in idx],
            sources=[self.sources[i] for i in idx],
            licenses=[self.licenses[i] for i in idx],
            sample_rate=self.sample_rate,
            audio_flat=np.concatenate(chunks),
            offsets=np.concatenate([[0], np.cumsum([len(c) for c in chunks])]).astype(np.uint64),
            splits=[self.splits[i] for i in idx] if self.splits else [],
            attributions=[self.attributions[i] for i in idx] if self.attributions else [],
        )

    @property
    def durations_s(self) -> npt.NDArray[np.float64]:
        return np.diff(self.offsets.astype(np.int64)) / float(self.sample_rate)

    def to_frame(self) -> pl.DataFrame:
        """The contract's atoms.parquet table (plus family, sample_rate, n_samples)."""
        n_samples = np.diff(self.offsets.astype(np.int64))
        extra: dict[str, list[str]] = {}
        # v1 libraries keep exactly their v1 columns, so their benchmarks stay byte-identical
        if self.splits:
            extra["split"] = self.splits
        if self.attributions:
            extra["attribution"] = self.attributions
        return pl.DataFrame(
            {
                "atom_id": self.atom_ids,
                "label": self.labels,
                "phrase": self.phrases,
                "duration_s": (n_samples / float(self.sample_rate)).astype(np.float64),
                "source": self.sources,
                "license": self.licenses,
                "family": self.families,
                "sample_rate": pl.Series([self.sample_rate] * len(self), dtype=pl.Int64),
                "n_samples": pl.Series(n_samples, dtype=pl.Int64),
                **{k: pl.Series(v, dtype=pl.Utf8) for k, v in extra.items()},
            }
        )

    # ---- construction
    @classmethod
    def procedural(cls, sample_rate: int = DEFAULT_SAMPLE_RATE) -> AtomLibrary:
        """The embedded default library of 200 procedural atoms (CC0), rendered at ``sample_rate``."""
        if sample_rate < 4000:
            raise UserError(f"sample rate must be at least 4000 Hz, got {sample_rate}")
        labels, phrases, families, audio, offsets = _core.procedural_atoms(int(sample_rate))
        n = len(labels)
        return cls(
            atom_ids=[f"atom_{i:03d}" for i in range(n)],
            labels=list(labels),
            phrases=list(phrases),
            families=list(families),
            sources=[f"procedural:{f}" for f in families],
            licenses=[PROCEDURAL_LICENSE] * n,
            sample_rate=int(sample_rate),
            audio_flat=audio,
            offsets=offsets,
        )

    @classmethod
    def open(cls, spec: str | os.PathLike[str], sample_rate: int | None = None) -> AtomLibrary:
        """``"procedural"`` for the embedded default, otherwise a library directory."""
        if str(spec) == PROCEDURAL:
            return cls.procedural(sample_rate or DEFAULT_SAMPLE_RATE)
        return cls.load(spec, sample_rate=sample_rate)

    @classmethod
    def load(cls, path: str | os.PathLike[str], sample_rate: int | None = None) -> AtomLibrary:
        """Read a library directory; resample every atom once if ``sample_rate`` differs from the stored rate."""
        root = Path(path)
        table_path = root / "atoms.parquet"
        if not table_path.is_file():
            raise UserError(f"{root}: not an atom library (no atoms.parquet); expected a directory written by `reasonaudio atoms import`")
        try:
            table = pl.read_parquet(table_path)
        except Exception as err:  # polars raises several error types for a bad file
            raise UserError(f"{table_path}: cannot read parquet table ({err})") from err
        missing = [c for c in ("atom_id", "label", "phrase", "source", "license") if c not in table.columns]
        if missing:
            raise UserError(f"{table_path}: missing column(s) {', '.join(missing)}; expected {', '.join(CONTRACT_COLUMNS)}")
        if table.height == 0:
            raise UserError(f"{table_path}: the library has no atoms")
        labels = table["label"].cast(pl.Utf8).to_list()
        phrases = table["phrase"].cast(pl.Utf8).to_list()
        phrase_of: dict[str, str] = {}
        for row, (label, phrase) in enumerate(zip(labels, phrases)):
            if phrase_of.setdefault(label, phrase) != phrase:
                raise UserError(
                    f"{table_path} row {row}: label {label!r} has phrase {phrase!r} but an earlier exemplar has "
                    f"{phrase_of[label]!r}; exemplars of one label share its phrase"
                )
        splits = table["split"].cast(pl.Utf8).fill_null("").to_list() if "split" in table.columns else []
        bad_split = next((r for r, v in enumerate(splits) if v and v not in ATOM_SPLITS), None)
        if bad_split is not None:
            raise UserError(f"{table_path} row {bad_split}: split {splits[bad_split]!r}; expected 'train', 'test' or empty")
        attributions = table["attribution"].cast(pl.Utf8).fill_null("").to_list() if "attribution" in table.columns else []
        chunks: list[np.ndarray] = []
        stored_rate: int | None = None
        for row, atom_id in enumerate(table["atom_id"].cast(pl.Utf8).to_list()):
            wav = root / "audio" / f"{atom_id}.wav"
            data, rate = read_audio(wav, f"{wav} (atom {atom_id}, row {row})")
            if data.shape[1] != 1:
                raise UserError(f"{wav}: expected mono audio, found {data.shape[1]} channels")
            if stored_rate is None:
                stored_rate = rate
            elif rate != stored_rate:
                raise UserError(f"{wav}: sample rate {rate} Hz differs from the library's {stored_rate} Hz")
            if data.shape[0] == 0 or not np.all(np.isfinite(data)):
                raise UserError(f"{wav}: empty or non-finite audio")
            chunks.append(data[:, 0])
        assert stored_rate is not None
        target = int(sample_rate or stored_rate)
        if target != stored_rate:
            chunks = [_core.resample(np.ascontiguousarray(c), stored_rate, target) for c in chunks]
        families = table["family"].cast(pl.Utf8).to_list() if "family" in table.columns else ["imported"] * table.height
        return cls(
            atom_ids=table["atom_id"].cast(pl.Utf8).to_list(),
            labels=labels,
            phrases=phrases,
            families=families,
            sources=table["source"].cast(pl.Utf8).to_list(),
            licenses=table["license"].cast(pl.Utf8).to_list(),
            sample_rate=target,
            audio_flat=np.concatenate(chunks).astype(np.float32, copy=False),
            offsets=np.concatenate([[0], np.cumsum([len(c) for c in chunks])]).astype(np.uint64),
            splits=splits,
            attributions=attributions,
        )

    def save(self, path: str | os.PathLike[str], overwrite: bool = False) -> Path:
        """Write the library directory atomically (temporary sibling, then rename)."""
        dest = Path(path)
        with output_directory(dest, "atom library", force=overwrite) as tmp:
            (tmp / "audio").mkdir()
            for i, atom_id in enumerate(self.atom_ids):
                _write_float_wav(tmp / "audio" / f"{atom_id}.wav", self.audio(i), self.sample_rate)
            write_table(self.to_frame(), tmp / "atoms.parquet")
        return dest


#: libsndfile's SFC_SET_ADD_PEAK_CHUNK (sndfile.h): float WAVs get a PEAK chunk stamped with the
#: wall-clock time unless it is turned off, which would make two saves of one library differ.
_SFC_SET_ADD_PEAK_CHUNK = 0x1050


def _write_float_wav(path: Path, x: npt.NDArray[np.float32], sample_rate: int) -> None:
    with sf.SoundFile(path, "w", sample_rate, 1, subtype="FLOAT", format="WAV") as fh:
        sf._snd.sf_command(fh._file, _SFC_SET_ADD_PEAK_CHUNK, sf._ffi.NULL, 0)  # soundfile has no public switch
        fh.write(x)
