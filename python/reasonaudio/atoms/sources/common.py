"""What every layout shares: the candidate recordings a layout lists, phrase tables, label and
license rules, and the one pipeline from candidates to a library (read any libsndfile format, mix to
mono, resample once, trim silence, normalise; bad files reported one by one)."""

from __future__ import annotations

import csv
import io
import os
import re
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Sequence

import numpy as np
import numpy.typing as npt

from reasonaudio import _core
from reasonaudio.atoms.library import DEFAULT_SAMPLE_RATE, SILENCE_PEAK_DBFS, TRIM_THRESHOLD_DB, AtomLibrary
from reasonaudio.contract import AUDIBLE_WINDOW_S
from reasonaudio.errors import UserError
from reasonaudio.io.audio import UnreadableAudio, read_audio
from reasonaudio.io.outputs import check_directory, check_not_an_input

#: The shortest atom an import keeps by default, after trimming silence. Datasets label one-shot
#: sounds of 0.09-0.2 s (a finger snap, a clap, a drip, a single bark in ESC-50 and FSD50K) and the
#: planner loops an atom shorter than its event (events last >= 0.6 s), so such sounds are kept:
#: a 0.3-s floor would drop every one of them. The floor left is the contract's audibility
#: window (§3.6: a sound is audible when its loudest AUDIBLE_WINDOW_S window is loud enough): a
#: recording shorter than one window is a click at most, too short to be heard as what its label names.
MIN_ATOM_S = AUDIBLE_WINDOW_S

_LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-() ]*$")


@dataclass(frozen=True)
class Layout:
    """One dataset layout: how to recognise it, how to list its recordings, its curated phrases.
    `collect(src, options, rejected, skipped)` lists the candidates; `dataset` layouts are
    published datasets, whose clips outside the duration range are skipped rather than errors."""

    name: str
    collect: object
    detect: object = None
    phrases: str | None = None
    dataset: bool = False


@dataclass(frozen=True)
class LayoutOptions:
    """Options only some layouts read (each layout refuses the ones it does not)."""

    labels_csv: Path | None = None
    ontology: Path | None = None


#: Lines a listing of bad files shows: 200,000 missing files printed 200,001 lines, which buries the
#: first (usually telling) ones and floods a terminal; the rest are counted, with their reasons.
LISTED = 20


def listing(items: list[tuple[str, str]], limit: int = LISTED) -> str:
    """`  file: reason` lines for the first `limit` items, then one line counting the others by reason."""
    lines = [f"  {f}: {reason}" for f, reason in items[:limit]]
    rest = items[limit:]
    if rest:
        lines.append(f"  … and {len(rest)} more ({_kinds(rest)})")
    return "\n".join(lines)


def _kinds(items: list[tuple[str, str]]) -> str:
    """`n x reason` for the most common kinds of reason (the text before its first colon)."""
    kinds: dict[str, int] = {}
    for _, reason in items:
        kind = reason.split(":")[0].split(" (")[0]
        kinds[kind] = kinds.get(kind, 0) + 1
    return "; ".join(f"{n} x {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1])[:5])


@dataclass
class ImportReport:
    """What an import kept, what it skipped on purpose (not an error) and what it refused."""

    out: Path | None
    imported: list[tuple[str, str]]  # (file, label)
    rejected: list[tuple[str, str]]  # (file, reason): bad files
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file, reason): left out by rule

    @property
    def n_labels(self) -> int:
        return len({label for _, label in self.imported})

    def __str__(self) -> str:
        lines = [
            f"imported {len(self.imported)} atom(s) of {self.n_labels} label(s)" + (f" into {self.out}" if self.out else "")
        ]
        if self.skipped:
            by_kind: dict[str, list[tuple[str, str]]] = {}
            for f, reason in self.skipped:
                by_kind.setdefault(reason.split(":")[0], []).append((f, reason))
            lines.append(f"skipped {len(self.skipped)} file(s) or row(s):")
            for kind, items in sorted(by_kind.items(), key=lambda kv: -len(kv[1])):
                lines.append(f"  {len(items)} x {kind}, e.g. {items[0][0]}: {items[0][1]}")
        if self.rejected:
            lines.append(f"rejected {len(self.rejected)} file(s):")
            lines.append(listing(self.rejected))
        return "\n".join(lines)

@dataclass
class Candidate:
    """One recording offered for import."""

    file: str  # as reported (relative to SRC, forward slashes)
    path: Path | None
    label: str
    phrase: str  # "" = the label's phrase from elsewhere
    license: str
    attribution: str = ""
    split: str = ""
    source: str = ""  # atoms.parquet `source`; defaults to `file`
    data: bytes | None = None  # audio bytes when the recording is not a file of its own
    cut_s: float | None = None  # a texture (a river, a storm) longer than the longest atom keeps its first cut_s seconds
    audio: npt.NDArray[np.float32] | None = None

def default_phrase(label: str) -> str:
    """A readable phrase from a class name: underscores and hyphens as spaces, lower case."""
    text = re.sub(r"\s+", " ", label.replace("_", " ").replace("-", " ")).strip()
    return text.lower() if text[:1].isupper() and not text.isupper() else text

def read_phrase_table(path: str | os.PathLike[str] | None = None, *, packaged: str | None = None) -> dict[str, str]:
    """label -> phrase from a CSV with header ``label,phrase`` (a file, or a table shipped in
    reasonaudio/data)."""
    if packaged is not None:
        text = resources.files("reasonaudio").joinpath("data", packaged).read_text(encoding="utf-8")
        where = f"reasonaudio/data/{packaged}"
    else:
        assert path is not None
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise UserError(f"{path}: cannot read phrase CSV ({err})") from err
        where = str(path)
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or [h.strip().lower() for h in rows[0][:2]] != ["label", "phrase"]:
        raise UserError(f"{where}: expected a header 'label,phrase'")
    table: dict[str, str] = {}
    line_of: dict[str, int] = {}
    for line_no, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) < 2 or not row[0].strip() or not row[1].strip():
            raise UserError(f"{where} line {line_no}: expected 'label,phrase', got {row}")
        label, phrase = row[0].strip(), row[1].strip()
        if label in table and table[label] != phrase:  # the last one silently won
            raise UserError(
                f"{where} lines {line_of[label]} and {line_no}: two phrases for label {label!r} "
                f"({table[label]!r} and {phrase!r}); a label has one phrase"
            )
        table[label] = phrase
        line_of.setdefault(label, line_no)
    return table

def _near_key(label: str) -> str:
    return re.sub(r"[\s_\-()]+", "", label.casefold())

def _label_problems(candidates: Sequence[Candidate]) -> dict[int, str]:
    """Rejection reasons by candidate position: bad labels, labels that differ only in case or
    separators, one phrase for two labels, two phrases for one label."""
    problems: dict[int, str] = {}
    for i, c in enumerate(candidates):
        if not _LABEL_RE.match(c.label):
            problems[i] = f"invalid label {c.label!r}: use letters, digits, '_', '-', '()' or spaces (e.g. dog_bark)"
    first_of_key: dict[str, int] = {}
    phrase_of: dict[str, tuple[str, str]] = {}  # label -> (phrase, file that set it)
    label_of_phrase: dict[str, tuple[str, str]] = {}  # phrase -> (label, file)
    for i, c in enumerate(candidates):
        key = _near_key(c.label)
        j = first_of_key.setdefault(key, i)
        if candidates[j].label != c.label:
            other = candidates[j]
            problems.setdefault(i, f"label {c.label!r} is nearly identical to {other.label!r} ({other.file})")
            problems.setdefault(j, f"label {other.label!r} is nearly identical to {c.label!r} ({c.file})")
            continue
        known = phrase_of.setdefault(c.label, (c.phrase, c.file))
        if known[0] != c.phrase:
            problems.setdefault(i, f"phrase {c.phrase!r} differs from {known[0]!r} given for label {c.label!r} by {known[1]}; exemplars of one label share its phrase")
            continue
        owner = label_of_phrase.setdefault(c.phrase.casefold(), (c.label, c.file))
        if owner[0] != c.label:
            problems.setdefault(i, f"duplicate phrase {c.phrase!r} (also used by label {owner[0]!r}, {owner[1]})")
    return problems

def license_from_url(url: str) -> str:
    """An SPDX-style name for a Creative Commons URL (FSD50K's metadata gives URLs)."""
    u = url.strip().lower()
    if "publicdomain/zero" in u:
        return "CC0-1.0"
    m = re.search(r"licenses/([a-z\-+]+)/(\d\.\d)", u)
    if m:
        kind = m.group(1).upper().replace("SAMPLING+", "Sampling+")
        return f"CC-{kind}-{m.group(2)}"
    return url.strip() or "unspecified"

def is_unknown_license(license_: str) -> bool:
    """No license recorded for the recording (the importers write "unspecified" then)."""
    return license_.strip().lower() in ("", "unspecified", "unknown", "none")


def is_non_commercial(license_: str) -> bool:
    low = license_.lower()
    return "noncommercial" in low or "non-commercial" in low or re.search(r"(^|[-_ /])nc([-_ /]|$)", low) is not None

def read_csv_rows(
    path: Path, required: Sequence[str], ragged: list[tuple[int, int]] | None = None
) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """Rows as {header: cell} with their line numbers. With `ragged` (a list), a row whose number of
    cells differs from the header's (an unquoted comma inside a cell) is left out and recorded there
    as (line, cells) instead of being read with its cells shifted."""
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            rows = list(csv.reader(fh))
    except (OSError, UnicodeDecodeError) as err:
        raise UserError(f"{path}: cannot read CSV ({err})") from err
    if not rows:
        raise UserError(f"{path}: empty; expected a header naming {', '.join(required)}")
    header = [h.strip().lower() for h in rows[0]]
    missing = [r for r in required if r not in header]
    if missing:
        raise UserError(f"{path}: header {rows[0]} lacks column(s) {', '.join(missing)} (expected {', '.join(required)})")
    out = []
    for line_no, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if ragged is not None and len(row) != len(header):
            ragged.append((line_no, len(row)))
            continue
        cells = row + [""] * (len(header) - len(row))
        out.append((line_no, {h: cells[k].strip() for k, h in enumerate(header)}))
    return header, out

def trim_silence(x: npt.NDArray[np.float32], sample_rate: int) -> npt.NDArray[np.float32]:
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

def load_candidate(c: Candidate, sample_rate: int, min_duration_s: float, max_duration_s: float) -> tuple[str, str] | None:
    """Decode, mix down, resample, trim and normalise into ``c.audio``; else (kind, reason) with
    kind "bad" (the file is broken) or "length" (fine, but outside the duration range)."""
    try:
        data, rate = read_audio(io.BytesIO(c.data) if c.data is not None else c.path)
    except UnreadableAudio as err:
        return "bad", f"unreadable or corrupt audio ({err.reason})"
    if data.shape[0] == 0:
        return "bad", "contains no audio frames"
    if not np.all(np.isfinite(data)):
        return "bad", "contains NaN or infinite samples"
    mono = np.ascontiguousarray(data.mean(axis=1, dtype=np.float64).astype(np.float32))
    peak = float(np.max(np.abs(mono)))
    if peak <= 10 ** (SILENCE_PEAK_DBFS / 20):
        return "bad", f"silent (peak below {SILENCE_PEAK_DBFS:.0f} dBFS)"
    if rate != sample_rate:
        mono = _core.resample(mono, int(rate), int(sample_rate))
    trimmed = trim_silence(mono, sample_rate)
    duration = len(trimmed) / sample_rate
    if duration < min_duration_s:
        # three decimals: at two, a 0.049-s recording read "0.05 s < 0.05 s"
        return "length", f"too short after trimming silence: {duration:.3f} s < {min_duration_s:g} s"
    if duration > max_duration_s and c.cut_s is not None and 0 < c.cut_s <= max_duration_s:
        # a texture has no end to keep: its first seconds stand for it, faded out over 50 ms so the
        # planner's loop of the atom does not click
        trimmed = trimmed[: int(round(c.cut_s * sample_rate))].copy()
        fade = min(len(trimmed), int(0.05 * sample_rate))
        trimmed[len(trimmed) - fade :] *= np.linspace(1.0, 0.0, fade, dtype=np.float32)
        duration = len(trimmed) / sample_rate
    if duration > max_duration_s:
        return "length", f"too long after trimming silence: {duration:.2f} s > {max_duration_s:g} s"
    c.audio = _core.finish_atom(np.ascontiguousarray(trimmed, dtype=np.float32), int(sample_rate))
    return None

def _label_rng(seed: int, label: str, stream: int) -> np.random.Generator:
    return np.random.default_rng([seed, zlib.crc32(label.encode("utf-8")), stream])

def assemble(
    candidates: list[Candidate],
    out: str | os.PathLike[str],
    *,
    where: str,
    phrases: dict[str, str] | None = None,
    phrase_overrides: dict[str, str] | None = None,
    sample_rate: int = DEFAULT_SAMPLE_RATE,
    skip_bad: bool = False,
    min_duration_s: float = MIN_ATOM_S,
    max_duration_s: float = 10.0,
    lengths_are_errors: bool = True,
    per_label: int | None = None,
    exclude_license: Sequence[str] = (),
    split_fraction: float | None = None,
    seed: int = 0,
    overwrite: bool = False,
    rejected: list[tuple[str, str]] | None = None,
    skipped: list[tuple[str, str]] | None = None,
    family: str = "imported",
    threads: int = 0,
) -> ImportReport:
    """Check, load, select and write candidates as a library (the common back half of every import).

    Phrases: ``phrase_overrides[label]``, else the candidate's own, else ``phrases[label]`` (a
    curated table), else `default_phrase`. With
    ``per_label`` N, N exemplars per label are drawn (seeded by (seed, label)) among those that
    load. ``split_fraction`` F puts round(F·k) of a label's k exemplars in `test` (at least one of
    each split when k >= 2), the rest in `train`; without it candidates keep their own split."""
    rejected = [] if rejected is None else rejected
    skipped = [] if skipped is None else skipped
    if sample_rate < 4000:
        raise UserError(f"sample rate must be at least 4000 Hz, got {sample_rate}")
    if not 0 < min_duration_s < max_duration_s:
        raise UserError(f"need 0 < min duration < max duration, got {min_duration_s} and {max_duration_s}")
    if per_label is not None and per_label < 1:
        raise UserError(f"--per-label must be at least 1, got {per_label}")
    if split_fraction is not None and not 0.0 <= split_fraction <= 1.0:
        raise UserError(f"--split-fraction must be within [0, 1], got {split_fraction}")
    unknown = [x for x in exclude_license if x.lower() != "nc"]
    if unknown:
        raise UserError(f"--exclude-license: unknown class(es) {', '.join(unknown)} (known: nc = non-commercial)")
    out_dir = Path(out)
    # the output must not be, contain or lie inside a folder the recordings come from
    check_not_an_input(out_dir, sorted({c.path.parent for c in candidates if c.path is not None}))
    check_directory(out_dir, "atom library", overwrite)

    phrases = phrases or {}
    overrides = phrase_overrides or {}
    # a label's phrase: the override CSV's, else the first one its candidates give, else the
    # curated table's, else one made from the label
    explicit: dict[str, str] = {}
    for c in candidates:
        if c.phrase:
            explicit.setdefault(c.label, c.phrase)
    for c in candidates:
        if c.label in overrides:
            c.phrase = overrides[c.label]
        elif not c.phrase:
            c.phrase = explicit.get(c.label) or phrases.get(c.label) or default_phrase(c.label)

    kept_candidates: list[Candidate] = []
    exclude_nc = "nc" in [x.lower() for x in exclude_license]
    for c in candidates:
        if exclude_nc and is_non_commercial(c.license):
            skipped.append((c.file, f"non-commercial license: {c.license} (--exclude-license nc)"))
        elif exclude_nc and is_unknown_license(c.license):
            # --exclude-license nc promises a library free of non-commercial terms; a recording
            # whose license is unknown (FSD50K without its metadata folder, a folder import) may
            # be CC-BY-NC, so it is left out too rather than let in unchecked
            skipped.append((c.file, f"license unknown: {c.license or 'none given'} (--exclude-license nc keeps only known licenses)"))
        else:
            kept_candidates.append(c)
    problems = _label_problems(kept_candidates)
    by_label: dict[str, list[Candidate]] = {}
    for i, c in enumerate(kept_candidates):
        if i in problems:
            rejected.append((c.file, problems[i]))
        else:
            by_label.setdefault(c.label, []).append(c)

    def take(label: str) -> tuple[list[Candidate], list[tuple[str, str]], list[tuple[str, str]]]:
        """Load a label's candidates (in seeded order, until --per-label are kept) and split them."""
        group = sorted(by_label[label], key=lambda c: c.file)
        order = _label_rng(seed, label, 0).permutation(len(group)) if per_label else range(len(group))
        chosen: list[Candidate] = []
        left_out: list[tuple[str, str]] = []
        bad: list[tuple[str, str]] = []
        for k in order:
            c = group[int(k)]
            if per_label and len(chosen) >= per_label:
                left_out.append((c.file, f"beyond --per-label {per_label}: label {label!r} has {len(group)} candidate(s)"))
                continue
            problem = load_candidate(c, sample_rate, min_duration_s, max_duration_s)
            if problem is None:
                chosen.append(c)
            elif problem[0] == "length" and not lengths_are_errors:
                left_out.append((c.file, problem[1]))
            else:
                bad.append((c.file, problem[1]))
        chosen.sort(key=lambda c: c.file)
        if split_fraction is not None:
            n = len(chosen)
            n_test = int(round(split_fraction * n))
            if n >= 2 and 0.0 < split_fraction < 1.0:
                n_test = min(max(n_test, 1), n - 1)
            test = set(_label_rng(seed, label, 1).permutation(n)[:n_test].tolist())
            for k, c in enumerate(chosen):
                c.split = "test" if k in test else "train"
        return chosen, left_out, bad

    # labels load in parallel (decoding and the Rust resampler release the GIL); results are
    # gathered in label order, so the library does not depend on the thread count
    workers = max(1, min(threads or (os.cpu_count() or 1), len(by_label) or 1))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(take, sorted(by_label)))
    kept: list[Candidate] = []
    for chosen, left_out, bad in results:
        kept += chosen
        skipped += left_out
        rejected += bad

    if rejected and not skip_bad:
        raise UserError(
            f"{len(rejected)} file(s) under {where} cannot be imported (nothing was written; "
            f"fix them or pass --skip-bad to import the rest):\n{listing(rejected)}"
        )
    if not kept:
        detail = f" ({len(skipped)} skipped: {_kinds(skipped)})" if skipped else ""
        raise UserError(f"{where}: no usable audio files found{detail}; nothing was written")

    width = max(3, len(str(len(kept) - 1)))
    chunks = [c.audio for c in kept if c.audio is not None]
    lib = AtomLibrary(
        atom_ids=[f"atom_{i:0{width}d}" for i in range(len(kept))],
        labels=[c.label for c in kept],
        phrases=[c.phrase for c in kept],
        families=[family] * len(kept),
        sources=[c.source or c.file for c in kept],
        licenses=[c.license for c in kept],
        sample_rate=int(sample_rate),
        audio_flat=np.concatenate(chunks),
        offsets=np.concatenate([[0], np.cumsum([len(a) for a in chunks])]).astype(np.uint64),
        splits=[c.split for c in kept] if any(c.split for c in kept) else [],
        attributions=[c.attribution for c in kept] if any(c.attribution for c in kept) else [],
    )
    lib.save(out_dir, overwrite=overwrite)
    return ImportReport(out=out_dir, imported=[(c.file, c.label) for c in kept], rejected=rejected, skipped=skipped)
