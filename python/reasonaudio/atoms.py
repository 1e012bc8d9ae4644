"""Atom libraries: the embedded procedural default and libraries imported from labelled audio files.

A library directory holds

    atoms.parquet        atom_id, label, phrase, duration_s, source, license (contract section 4),
                         plus family, sample_rate, n_samples
    audio/<atom_id>.wav  one mono 32-bit float WAV per atom, all at one sample rate

In memory an `AtomLibrary` keeps all audio in one flat float32 array with uint64 offsets
(atom i is ``audio[offsets[i]:offsets[i+1]]``), the layout the Rust renderer takes.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import numpy.typing as npt
import polars as pl
import soundfile as sf

from reasonaudio import _core
from reasonaudio.errors import UserError

PROCEDURAL = "procedural"
PROCEDURAL_LICENSE = "CC0-1.0"
DEFAULT_SAMPLE_RATE = 16000
#: Columns of atoms.parquet fixed by the contract (extra columns follow them).
CONTRACT_COLUMNS = ("atom_id", "label", "phrase", "duration_s", "source", "license")
#: Leading/trailing silence is trimmed at this level relative to the file's peak
#: (measured on 10 ms frames of RMS), so quiet but real sound is kept.
TRIM_THRESHOLD_DB = -40.0
#: A file whose peak (after mixdown) is below this is called silent.
SILENCE_PEAK_DBFS = -80.0
_LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\- ]*$")


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
        self._label_index = {label: i for i, label in enumerate(self.labels)}
        if len(self._label_index) != n:
            raise ValueError("labels must be unique within a library")

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
        """Mapping label -> atom index."""
        return dict(self._label_index)

    @property
    def durations_s(self) -> npt.NDArray[np.float64]:
        return np.diff(self.offsets.astype(np.int64)) / float(self.sample_rate)

    def to_frame(self) -> pl.DataFrame:
        """The contract's atoms.parquet table (plus family, sample_rate, n_samples)."""
        n_samples = np.diff(self.offsets.astype(np.int64))
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
        dupes = sorted({lb for lb in labels if labels.count(lb) > 1})
        if dupes:
            raise UserError(f"{table_path}: duplicate label(s) {', '.join(dupes)}; labels must be unique")
        chunks: list[np.ndarray] = []
        stored_rate: int | None = None
        for row, atom_id in enumerate(table["atom_id"].cast(pl.Utf8).to_list()):
            wav = root / "audio" / f"{atom_id}.wav"
            try:
                data, rate = sf.read(wav, dtype="float32", always_2d=True)
            except Exception as err:
                raise UserError(f"{wav}: cannot read audio for atom {atom_id} (row {row}): {err}") from err
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
            phrases=table["phrase"].cast(pl.Utf8).to_list(),
            families=families,
            sources=table["source"].cast(pl.Utf8).to_list(),
            licenses=table["license"].cast(pl.Utf8).to_list(),
            sample_rate=target,
            audio_flat=np.concatenate(chunks).astype(np.float32, copy=False),
            offsets=np.concatenate([[0], np.cumsum([len(c) for c in chunks])]).astype(np.uint64),
        )

    def save(self, path: str | os.PathLike[str], overwrite: bool = False) -> Path:
        """Write the library directory atomically (temporary sibling, then rename)."""
        from reasonaudio.outputs import output_directory

        dest = Path(path)
        with output_directory(dest, "atom library", force=overwrite) as tmp:
            (tmp / "audio").mkdir()
            for i, atom_id in enumerate(self.atom_ids):
                sf.write(tmp / "audio" / f"{atom_id}.wav", self.audio(i), self.sample_rate, subtype="FLOAT")
            self.to_frame().write_parquet(tmp / "atoms.parquet")
        return dest


# ------------------------------------------------------------------ import


@dataclass
class ImportReport:
    """What `import_folder` kept and what it refused, file by file."""

    out: Path | None
    imported: list[tuple[str, str]]  # (file, label)
    rejected: list[tuple[str, str]]  # (file, reason)

    def __str__(self) -> str:
        lines = [f"imported {len(self.imported)} atom(s)" + (f" into {self.out}" if self.out else "")]
        if self.rejected:
            lines.append(f"rejected {len(self.rejected)} file(s):")
            lines += [f"  {f}: {reason}" for f, reason in self.rejected]
        return "\n".join(lines)


@dataclass
class _Candidate:
    file: str  # relative to src, forward slashes
    path: Path
    label: str
    phrase: str
    license: str
    audio: npt.NDArray[np.float32] | None = None


def _near_key(label: str) -> str:
    return re.sub(r"[\s_\-]+", "", label.casefold())


def _default_phrase(label: str) -> str:
    return re.sub(r"\s+", " ", label.replace("_", " ").replace("-", " ")).strip()


def _collect_from_csv(src: Path, labels_csv: Path, rejected: list[tuple[str, str]]) -> list[_Candidate]:
    try:
        with open(labels_csv, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
    except (OSError, UnicodeDecodeError) as err:
        raise UserError(f"{labels_csv}: cannot read labels CSV ({err})") from err
    if not rows:
        raise UserError(f"{labels_csv}: empty; expected a header 'file,label[,phrase][,license]'")
    header = [h.strip().lower() for h in rows[0]]
    if "file" not in header or "label" not in header:
        raise UserError(f"{labels_csv}: header {rows[0]} must name columns 'file' and 'label' (optional 'phrase', 'license')")
    col = {name: header.index(name) for name in ("file", "label", "phrase", "license") if name in header}
    out: list[_Candidate] = []
    for line_no, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        cells = row + [""] * (len(header) - len(row))
        rel = cells[col["file"]].strip()
        label = cells[col["label"]].strip()
        where = f"{labels_csv.name} line {line_no}"
        if not rel:
            rejected.append((where, "empty 'file' cell"))
            continue
        path = (src / rel).resolve()
        if not path.is_file():
            rejected.append((rel, f"listed in {where} but not found under {src}"))
            continue
        phrase = cells[col["phrase"]].strip() if "phrase" in col else ""
        license_ = cells[col["license"]].strip() if "license" in col else ""
        out.append(_Candidate(rel, path, label, phrase or _default_phrase(label), license_ or "unspecified"))
    return out


def _collect_from_folders(src: Path, rejected: list[tuple[str, str]]) -> list[_Candidate]:
    out: list[_Candidate] = []
    for path in sorted(p for p in src.rglob("*") if p.is_file()):
        rel = path.relative_to(src).as_posix()
        if any(part.startswith(".") for part in path.relative_to(src).parts):
            continue  # hidden files and folders (.DS_Store, .git) are not sounds
        parts = path.relative_to(src).parts
        if len(parts) < 2:
            rejected.append((rel, "not inside a label folder (expected SRC/<label>/<file>, or pass a labels CSV)"))
            continue
        label = parts[0].strip()
        out.append(_Candidate(rel, path, label, _default_phrase(label), "unspecified"))
    return out


def _trim_silence(x: npt.NDArray[np.float32], sample_rate: int) -> npt.NDArray[np.float32]:
    """Cut leading/trailing 10 ms frames whose RMS is below TRIM_THRESHOLD_DB relative to the peak."""
    frame = max(1, sample_rate // 100)
    n_frames = int(np.ceil(len(x) / frame))
    padded = np.zeros(n_frames * frame, dtype=np.float64)
    padded[: len(x)] = x
    frame_rms = np.sqrt(np.mean(padded.reshape(n_frames, frame) ** 2, axis=1))
    threshold = float(np.max(np.abs(x))) * 10 ** (TRIM_THRESHOLD_DB / 20)
    loud = np.flatnonzero(frame_rms >= threshold)
    if len(loud) == 0:
        return x[:0]
    return x[loud[0] * frame : min(len(x), (loud[-1] + 1) * frame)]


def _load_candidate(c: _Candidate, sample_rate: int, min_duration_s: float, max_duration_s: float) -> str | None:
    """Decode, mix down, resample, trim and normalise; return a rejection reason or None."""
    try:
        data, rate = sf.read(c.path, dtype="float32", always_2d=True)
    except Exception as err:  # libsndfile reports corrupt/unknown files in several ways
        return f"unreadable or corrupt audio ({str(err).strip() or type(err).__name__})"
    if data.shape[0] == 0:
        return "contains no audio frames"
    if not np.all(np.isfinite(data)):
        return "contains NaN or infinite samples"
    mono = np.ascontiguousarray(data.mean(axis=1, dtype=np.float64).astype(np.float32))
    peak = float(np.max(np.abs(mono)))
    if peak <= 10 ** (SILENCE_PEAK_DBFS / 20):
        return f"silent (peak below {SILENCE_PEAK_DBFS:.0f} dBFS)"
    if rate != sample_rate:
        mono = _core.resample(mono, int(rate), int(sample_rate))
    trimmed = _trim_silence(mono, sample_rate)
    duration = len(trimmed) / sample_rate
    if duration < min_duration_s:
        return f"too short after trimming silence: {duration:.2f} s < {min_duration_s:g} s"
    if duration > max_duration_s:
        return f"too long after trimming silence: {duration:.2f} s > {max_duration_s:g} s"
    c.audio = _core.finish_atom(np.ascontiguousarray(trimmed, dtype=np.float32), int(sample_rate))
    return None


def _label_problems(candidates: Sequence[_Candidate]) -> dict[str, str]:
    """Rejection reasons for label/phrase clashes, keyed by file."""
    problems: dict[str, str] = {}
    for c in candidates:
        if not _LABEL_RE.match(c.label):
            problems[c.file] = f"invalid label {c.label!r}: use letters, digits, '_', '-' or spaces (e.g. dog_bark)"
    by_label: dict[str, list[_Candidate]] = {}
    by_key: dict[str, list[_Candidate]] = {}
    by_phrase: dict[str, list[_Candidate]] = {}
    for c in candidates:
        by_label.setdefault(c.label, []).append(c)
        by_key.setdefault(_near_key(c.label), []).append(c)
        by_phrase.setdefault(c.phrase.casefold(), []).append(c)
    for label, group in by_label.items():
        if len(group) > 1:
            for c in group:
                others = ", ".join(o.file for o in group if o is not c)
                problems.setdefault(c.file, f"duplicate label {label!r} (also used by {others})")
    for group in by_key.values():
        if len({c.label for c in group}) > 1:
            for c in group:
                others = ", ".join(f"{o.label!r} ({o.file})" for o in group if o.label != c.label)
                problems.setdefault(c.file, f"label {c.label!r} is nearly identical to {others}")
    for phrase, group in by_phrase.items():
        if len({c.label for c in group}) > 1:
            for c in group:
                others = ", ".join(o.file for o in group if o.label != c.label)
                problems.setdefault(c.file, f"duplicate phrase {c.phrase!r} (also used by {others})")
    return problems


def import_folder(
    src: str | os.PathLike[str],
    out: str | os.PathLike[str],
    labels_csv: str | os.PathLike[str] | None = None,
    sample_rate: int = DEFAULT_SAMPLE_RATE,
    skip_bad: bool = False,
    min_duration_s: float = 0.3,
    max_duration_s: float = 10.0,
    overwrite: bool = False,
) -> ImportReport:
    """Build a library directory at ``out`` from labelled audio files under ``src``.

    Labels come from ``labels_csv`` (columns ``file,label[,phrase][,license]``, files relative to
    ``src``) or else from folders (``src/<label>/<file>``); a missing phrase is the label with
    underscores as spaces. Every file libsndfile reads is accepted (WAV, FLAC, OGG, MP3; any
    rate, channel count, bit depth): it is mixed down to mono, resampled once to ``sample_rate``,
    trimmed of leading/trailing silence (10 ms frames below -40 dB relative to the file's peak) and
    loudness-normalised like the procedural atoms (RMS -20 dBFS, peak <= 0.9).

    Files are rejected, with a reason, when unreadable or corrupt, silent, non-finite, too short or
    too long after trimming, or when their label duplicates another file's (exactly or up to
    case/space/underscore/hyphen) or their phrase does. With any rejection and ``skip_bad`` false,
    nothing is written and `UserError` lists every bad file; with ``skip_bad`` the rest is imported
    and the report printed.
    """
    src_dir = Path(src)
    if not src_dir.is_dir():
        raise UserError(f"{src_dir}: not a directory of audio files")
    if sample_rate < 4000:
        raise UserError(f"sample rate must be at least 4000 Hz, got {sample_rate}")
    if not 0 < min_duration_s < max_duration_s:
        raise UserError(f"need 0 < min_duration_s < max_duration_s, got {min_duration_s} and {max_duration_s}")
    from reasonaudio.outputs import check_directory, check_not_an_input

    out_dir = Path(out)
    check_not_an_input(out_dir, [src_dir] + ([Path(labels_csv)] if labels_csv is not None else []))
    check_directory(out_dir, "atom library", overwrite)

    rejected: list[tuple[str, str]] = []
    if labels_csv is not None:
        candidates = _collect_from_csv(src_dir, Path(labels_csv), rejected)
    else:
        candidates = _collect_from_folders(src_dir, rejected)

    label_problems = _label_problems(candidates)
    kept: list[_Candidate] = []
    for c in candidates:
        reason = _load_candidate(c, sample_rate, min_duration_s, max_duration_s)
        reason = reason or label_problems.get(c.file)
        if reason:
            rejected.append((c.file, reason))
        else:
            kept.append(c)

    if rejected and not skip_bad:
        listing = "\n".join(f"  {f}: {reason}" for f, reason in rejected)
        raise UserError(
            f"{len(rejected)} file(s) under {src_dir} cannot be imported (nothing was written; "
            f"fix them or pass --skip-bad to import the rest):\n{listing}"
        )
    if not kept:
        raise UserError(f"{src_dir}: no usable audio files found; nothing was written")

    kept.sort(key=lambda c: c.label)
    chunks = [c.audio for c in kept if c.audio is not None]
    lib = AtomLibrary(
        atom_ids=[f"atom_{i:03d}" for i in range(len(kept))],
        labels=[c.label for c in kept],
        phrases=[c.phrase for c in kept],
        families=["imported"] * len(kept),
        sources=[c.file for c in kept],
        licenses=[c.license for c in kept],
        sample_rate=int(sample_rate),
        audio_flat=np.concatenate(chunks),
        offsets=np.concatenate([[0], np.cumsum([len(a) for a in chunks])]).astype(np.uint64),
    )
    lib.save(out_dir, overwrite=overwrite)
    report = ImportReport(out=out_dir, imported=[(c.file, c.label) for c in kept], rejected=rejected)
    if rejected:
        print(report)
    return report


# ------------------------------------------------------------------ features and pictures


def mel_filterbank(sample_rate: int, n_fft: int, n_mels: int, f_max: float | None = None) -> npt.NDArray[np.float64]:
    """Triangular filters on the HTK mel scale, shape (n_mels, n_fft // 2 + 1)."""
    f_max = f_max or sample_rate / 2

    def mel(f: npt.ArrayLike) -> npt.NDArray[np.float64]:
        return 2595.0 * np.log10(1.0 + np.asarray(f, dtype=np.float64) / 700.0)

    edges_hz = 700.0 * (10 ** (np.linspace(mel(30.0), mel(f_max), n_mels + 2) / 2595.0) - 1.0)
    bins = np.linspace(0, sample_rate / 2, n_fft // 2 + 1)
    fb = np.zeros((n_mels, len(bins)))
    for m in range(n_mels):
        lo, mid, hi = edges_hz[m : m + 3]
        rise = (bins - lo) / (mid - lo)
        fall = (hi - bins) / (hi - mid)
        fb[m] = np.clip(np.minimum(rise, fall), 0.0, None)
    return fb


def log_mel(x: npt.ArrayLike, sample_rate: int, n_mels: int = 64, hop_s: float = 0.010) -> npt.NDArray[np.float64]:
    """Log-mel power spectrogram in dB, shape (n_mels, frames); 32 ms Hann windows."""
    x = np.asarray(x, dtype=np.float64)
    n_fft = int(2 ** np.ceil(np.log2(0.032 * sample_rate)))
    hop = max(1, int(hop_s * sample_rate))
    if len(x) < n_fft:
        x = np.pad(x, (0, n_fft - len(x)))
    n_frames = 1 + (len(x) - n_fft) // hop
    idx = np.arange(n_fft)[None, :] + hop * np.arange(n_frames)[:, None]
    frames = x[idx] * np.hanning(n_fft)[None, :]
    power = np.abs(np.fft.rfft(frames, axis=1)) ** 2
    mel_power = mel_filterbank(sample_rate, n_fft, n_mels) @ power.T
    return 10.0 * np.log10(mel_power + 1e-10)


def contact_sheet(
    lib: AtomLibrary,
    out_png: str | os.PathLike[str],
    columns: int = 10,
    indices: Iterable[int] | None = None,
    progress: bool = False,
) -> Path:
    """A grid of log-mel images of the atoms, each titled with its label (written atomically)."""
    from tqdm.auto import tqdm

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    chosen = list(range(len(lib))) if indices is None else list(indices)
    if not chosen:
        raise UserError("contact sheet: no atoms to draw")
    columns = max(1, min(columns, len(chosen)))
    rows = int(np.ceil(len(chosen) / columns))
    fig, axes = plt.subplots(rows, columns, figsize=(columns * 1.9, rows * 1.35), squeeze=False)
    for ax in axes.ravel():
        ax.axis("off")
    for ax, i in tqdm(list(zip(axes.ravel(), chosen)), desc="contact sheet", unit="atom", disable=not progress, leave=False):
        spec = log_mel(lib.audio(i), lib.sample_rate)
        vmax = spec.max()
        ax.imshow(spec, origin="lower", aspect="auto", cmap="magma", vmin=vmax - 80, vmax=vmax,
                  extent=(0, len(lib.audio(i)) / lib.sample_rate, 0, spec.shape[0]))
        ax.set_title(lib.labels[i], fontsize=7)
        ax.axis("on")
        ax.set_yticks([])
        ax.tick_params(axis="x", labelsize=5, length=2, pad=1)
    fig.suptitle(f"{len(chosen)} atoms, log-mel (64 bands, 30 Hz-{lib.sample_rate // 2} Hz), seconds on x", fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.985))
    from reasonaudio.outputs import output_file

    dest = Path(out_png)
    try:
        with output_file(dest, force=True) as tmp:
            if progress:
                print("drawing the sheet …", file=sys.stderr, flush=True)
            fig.savefig(tmp, dpi=90)
    finally:
        plt.close(fig)
    return dest
