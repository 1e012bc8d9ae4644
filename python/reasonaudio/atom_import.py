"""Import labelled recordings as an atom library, several exemplars per label (contract v2).

Layouts (`--layout`, `auto` picks by the files present):

* ``folders``       SRC/<label>/<file>, any number of files per label;
* ``csv``           a labels CSV ``file,label[,phrase][,license][,attribution][,split]``, many rows per label;
* ``fsd50k``        FSD50K as its archives unpack: FSD50K.{dev,eval}_audio/<fname>.wav,
                    FSD50K.ground_truth/{dev,eval,vocabulary}.csv, FSD50K.metadata/*_clips_info_FSD50K.json;
                    labels propagated up the AudioSet ontology are cut back to the clip's leaf class
                    (from an ontology.json, or inferred: a label on a strict superset of another's
                    clips is its ancestor; labels always together are ordered leaf first, as FSD50K
                    writes them); a clip whose leaf is another clip's parent class is left out;
                    a clip with two leaf classes is skipped; license and uploader per clip;
                    dev clips are `train`, eval clips `test`;
* ``esc50``         audio/*.wav (5-s clips, zero-padded after the sound) and meta/esc50.csv;
* ``urbansound8k``  audio/foldN/*.wav and metadata/UrbanSound8K.csv; only foreground (salience 1) slices.

Every file goes through the same pipeline: any libsndfile format, rate and channel count, mixed to
mono, resampled once, trimmed of leading/trailing silence, loudness-normalised; bad files are
reported one by one. Phrases come from the layout's curated table (package data) unless a
``--phrases`` CSV overrides them.
"""

from __future__ import annotations

import csv
import functools
import io
import json
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
import soundfile as sf

from reasonaudio import _core
from reasonaudio.atoms import DEFAULT_SAMPLE_RATE, SILENCE_PEAK_DBFS, TRIM_THRESHOLD_DB, AtomLibrary
from reasonaudio.errors import UserError

LAYOUTS = ("auto", "folders", "csv", "fsd50k", "esc50", "urbansound8k")
#: Layouts of published datasets: a clip outside the duration range is skipped, not an error.
DATASET_LAYOUTS = ("fsd50k", "esc50", "urbansound8k")
ESC50_LICENSE = "CC-BY-NC-3.0"  # the ESC-50 dataset's license (README of karolpiczak/ESC-50)
URBANSOUND8K_LICENSE = "CC-BY-NC-3.0"  # the UrbanSound8K dataset's license (its README)
_LABEL_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-() ]*$")


# ------------------------------------------------------------------ report


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
            lines += [f"  {f}: {reason}" for f, reason in self.rejected]
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
    audio: npt.NDArray[np.float32] | None = None


# ------------------------------------------------------------------ phrases and labels


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
    for line_no, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) < 2 or not row[0].strip() or not row[1].strip():
            raise UserError(f"{where} line {line_no}: expected 'label,phrase', got {row}")
        table[row[0].strip()] = row[1].strip()
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


def _license_from_url(url: str) -> str:
    """An SPDX-style name for a Creative Commons URL (FSD50K's metadata gives URLs)."""
    u = url.strip().lower()
    if "publicdomain/zero" in u:
        return "CC0-1.0"
    m = re.search(r"licenses/([a-z\-+]+)/(\d\.\d)", u)
    if m:
        kind = m.group(1).upper().replace("SAMPLING+", "Sampling+")
        return f"CC-{kind}-{m.group(2)}"
    return url.strip() or "unspecified"


def is_non_commercial(license_: str) -> bool:
    low = license_.lower()
    return "noncommercial" in low or "non-commercial" in low or re.search(r"(^|[-_ /])nc([-_ /]|$)", low) is not None


# ------------------------------------------------------------------ layouts


def detect_layout(src: Path, labels_csv: Path | None) -> str:
    if labels_csv is not None:
        return "csv"
    if (src / "FSD50K.ground_truth").is_dir():
        return "fsd50k"
    if (src / "meta" / "esc50.csv").is_file():
        return "esc50"
    if (src / "metadata" / "UrbanSound8K.csv").is_file():
        return "urbansound8k"
    return "folders"


def _read_csv_rows(path: Path, required: Sequence[str]) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
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
        cells = row + [""] * (len(header) - len(row))
        out.append((line_no, {h: cells[k].strip() for k, h in enumerate(header)}))
    return header, out


def _collect_csv(src: Path, labels_csv: Path, rejected: list, skipped: list) -> list[Candidate]:
    _, rows = _read_csv_rows(labels_csv, ("file", "label"))
    out: list[Candidate] = []
    for line_no, row in rows:
        rel, label = row["file"], row["label"]
        where = f"{labels_csv.name} line {line_no}"
        if not rel:
            rejected.append((where, "empty 'file' cell"))
            continue
        path = (src / rel).resolve()
        if not path.is_file():
            rejected.append((rel, f"listed in {where} but not found under {src}"))
            continue
        split = row.get("split", "")
        if split not in ("", "train", "test"):
            rejected.append((rel, f"{where}: split {split!r}; expected train, test or empty"))
            continue
        out.append(Candidate(rel, path, label, row.get("phrase", ""), row.get("license", "") or "unspecified",
                             row.get("attribution", ""), split))
    return out


def _collect_folders(src: Path, rejected: list, skipped: list) -> list[Candidate]:
    out: list[Candidate] = []
    for path in sorted(p for p in src.rglob("*") if p.is_file()):
        parts = path.relative_to(src).parts
        if any(part.startswith(".") for part in parts):
            continue  # hidden files and folders (.DS_Store, .git) are not sounds
        rel = path.relative_to(src).as_posix()
        if len(parts) < 2:
            rejected.append((rel, "not inside a label folder (expected SRC/<label>/<file>, or pass a labels CSV)"))
            continue
        out.append(Candidate(rel, path, parts[0].strip(), "", "unspecified"))
    return out


def _ontology_ancestors(path: Path) -> dict[str, set[str]]:
    """mid -> every ancestor mid, from an AudioSet ontology.json (a list of {id, child_ids})."""
    try:
        nodes = json.loads(path.read_text())
        children = {n["id"]: list(n.get("child_ids", [])) for n in nodes}
    except (OSError, ValueError, TypeError, KeyError) as err:
        raise UserError(f"{path}: not an AudioSet ontology.json (a list of objects with id and child_ids): {err}") from err
    parents: dict[str, set[str]] = {}
    for mid, kids in children.items():
        for kid in kids:
            parents.setdefault(kid, set()).add(mid)
    memo: dict[str, set[str]] = {}

    def up(mid: str, seen: frozenset = frozenset()) -> set[str]:
        if mid not in memo:
            acc: set[str] = set()
            for p in parents.get(mid, ()):
                if p not in seen:
                    acc |= {p} | up(p, seen | {mid})
            memo[mid] = acc
        return memo[mid]

    return {mid: up(mid) for mid in set(children) | set(parents)}


def _collect_fsd50k(src: Path, rejected: list, skipped: list, ontology: Path | None) -> list[Candidate]:
    gt = src / "FSD50K.ground_truth"
    parts = [("dev", "FSD50K.dev_audio", "train"), ("eval", "FSD50K.eval_audio", "test")]
    rows: list[tuple[str, str, str, list[str], list[str]]] = []  # (part, audio dir, split, labels, mids) per clip
    fnames: list[str] = []
    meta: dict[str, dict] = {}
    for part, audio_dir, split in parts:
        table = gt / f"{part}.csv"
        if not table.is_file():
            continue
        _, part_rows = _read_csv_rows(table, ("fname", "labels"))
        for line_no, row in part_rows:
            labels = [x.strip() for x in row["labels"].split(",") if x.strip()]
            mids = [x.strip() for x in row.get("mids", "").split(",") if x.strip()]
            rows.append((part, audio_dir, split, labels, mids))
            fnames.append(row["fname"])
        info = src / "FSD50K.metadata" / f"{part}_clips_info_FSD50K.json"
        if info.is_file():
            try:
                meta[part] = json.loads(info.read_text())
            except ValueError as err:
                raise UserError(f"{info}: not JSON ({err})") from err
    if not rows:
        raise UserError(f"{gt}: neither dev.csv nor eval.csv found; expected the FSD50K.ground_truth folder as unpacked")
    # a label is an ancestor of another when the ontology says so, or (without one) when every clip
    # carrying the other also carries it and it occurs on more clips: FSD50K propagates labels upwards
    if ontology is not None:
        up = _ontology_ancestors(ontology)
        mid_of = {lab: mid for _, _, _, labs, mids in rows if len(labs) == len(mids) for lab, mid in zip(labs, mids)}

        def is_ancestor(a: str, b: str) -> bool:
            return a in mid_of and b in mid_of and mid_of[a] in up.get(mid_of[b], set())
    else:
        clips_of: dict[str, set[int]] = {}
        rank: dict[tuple[str, str], int] = {}  # (a, b) -> +1 where a came after b in the first row holding both
        for i, (_, _, _, labs, _) in enumerate(rows):
            for pos, lab in enumerate(labs):
                clips_of.setdefault(lab, set()).add(i)
                for earlier in labs[:pos]:
                    rank.setdefault((lab, earlier), 1)
                    rank.setdefault((earlier, lab), -1)

        def is_ancestor(a: str, b: str) -> bool:
            # labels always together: FSD50K writes the leaf first, then its ancestors upwards
            return clips_of[b] < clips_of[a] or (clips_of[b] == clips_of[a] and rank.get((a, b)) == 1)

    is_ancestor = functools.lru_cache(maxsize=None)(is_ancestor)  # 51k clips share ~200 labels
    leaf_of: list[list[str]] = [[a for a in labs if not any(b != a and is_ancestor(a, b) for b in labs)] for _, _, _, labs, _ in rows]
    single = sorted({ls[0] for ls in leaf_of if len(ls) == 1})
    children_of = {a: [b for b in single if b != a and is_ancestor(a, b)] for a in single}
    out: list[Candidate] = []
    for (part, audio_dir, split, labels, _), fname, leaves in zip(rows, fnames, leaf_of):
        rel = f"{audio_dir}/{fname}.wav"
        if len(leaves) != 1:
            skipped.append((rel, f"not a single-source clip: {len(leaves)} leaf classes ({', '.join(leaves)}) in {part}.csv"))
            continue
        # labels of one library must not be hierarchical (contract §1): a clip whose finest class is
        # the parent of another clip's ("Dog" beside "Bark") is left out
        children = children_of[leaves[0]]
        if children:
            skipped.append((rel, f"hierarchical label: its finest class {leaves[0]} is a parent of {', '.join(children[:3])} (another clip's label)"))
            continue
        path = src / rel
        if not path.is_file():
            rejected.append((rel, f"listed in FSD50K.ground_truth/{part}.csv but not found"))
            continue
        info = meta.get(part, {}).get(fname, {})
        uploader = str(info.get("uploader", "")).strip()
        credit = f"{uploader}, https://freesound.org/s/{fname}/" if uploader else f"https://freesound.org/s/{fname}/"
        out.append(Candidate(rel, path, leaves[0], "", _license_from_url(str(info.get("license", ""))), credit, split))
    return out


def _collect_esc50(src: Path, rejected: list, skipped: list) -> list[Candidate]:
    table = src / "meta" / "esc50.csv"
    _, rows = _read_csv_rows(table, ("filename", "category"))
    out: list[Candidate] = []
    for line_no, row in rows:
        rel = f"audio/{row['filename']}"
        path = src / rel
        if not path.is_file():
            rejected.append((rel, f"listed in meta/esc50.csv line {line_no} but not found"))
            continue
        credit = f"Freesound clip {row.get('src_file', '?')} (ESC-50, K. J. Piczak)"
        out.append(Candidate(rel, path, row["category"], "", ESC50_LICENSE, credit))
    return out


def _collect_urbansound8k(src: Path, rejected: list, skipped: list) -> list[Candidate]:
    table = src / "metadata" / "UrbanSound8K.csv"
    _, rows = _read_csv_rows(table, ("slice_file_name", "fold", "class", "salience"))
    out: list[Candidate] = []
    for line_no, row in rows:
        rel = f"audio/fold{row['fold']}/{row['slice_file_name']}"
        if row["salience"] != "1":
            skipped.append((rel, f"background sound: salience {row['salience']} (only foreground, salience 1, is a clear atom)"))
            continue
        path = src / rel
        if not path.is_file():
            rejected.append((rel, f"listed in metadata/UrbanSound8K.csv line {line_no} but not found"))
            continue
        credit = f"Freesound {row.get('fsid', '?')} (UrbanSound8K, J. Salamon et al.)"
        out.append(Candidate(rel, path, row["class"], "", URBANSOUND8K_LICENSE, credit))
    return out


# ------------------------------------------------------------------ audio


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
        data, rate = sf.read(io.BytesIO(c.data) if c.data is not None else c.path, dtype="float32", always_2d=True)
    except Exception as err:  # libsndfile reports corrupt/unknown files in several ways
        return "bad", f"unreadable or corrupt audio ({str(err).strip() or type(err).__name__})"
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
        return "length", f"too short after trimming silence: {duration:.2f} s < {min_duration_s:g} s"
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
    min_duration_s: float = 0.3,
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
    from reasonaudio.outputs import check_directory, check_not_an_input

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
    for c in candidates:
        if "nc" in [x.lower() for x in exclude_license] and is_non_commercial(c.license):
            skipped.append((c.file, f"non-commercial license: {c.license} (--exclude-license nc)"))
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
        listing = "\n".join(f"  {f}: {reason}" for f, reason in rejected)
        raise UserError(
            f"{len(rejected)} file(s) under {where} cannot be imported (nothing was written; "
            f"fix them or pass --skip-bad to import the rest):\n{listing}"
        )
    if not kept:
        detail = f" ({len(skipped)} skipped: {skipped[0][1]}, ...)" if skipped else ""
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


def import_atoms(
    src: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    layout: str = "auto",
    labels_csv: str | os.PathLike[str] | None = None,
    phrases_csv: str | os.PathLike[str] | None = None,
    ontology: str | os.PathLike[str] | None = None,
    sample_rate: int = DEFAULT_SAMPLE_RATE,
    skip_bad: bool = False,
    min_duration_s: float = 0.3,
    max_duration_s: float = 10.0,
    per_label: int | None = None,
    exclude_license: Sequence[str] = (),
    split_fraction: float | None = None,
    seed: int = 0,
    overwrite: bool = False,
    threads: int = 0,
) -> ImportReport:
    """Build a library directory at ``out`` from the recordings under ``src`` (see the module
    docstring for the layouts). Bad files (unreadable, corrupt, silent, non-finite; in folders/CSV
    also too short/long) are refused: with any and ``skip_bad`` false nothing is written and
    `UserError` lists each one. Rows left out by rule (multi-leaf FSD50K clips, background
    UrbanSound8K slices, --exclude-license, --per-label, dataset clips outside the duration range)
    are reported, not errors."""
    src_dir = Path(src)
    if not src_dir.is_dir():
        raise UserError(f"{src_dir}: not a directory of audio files")
    from reasonaudio.outputs import check_not_an_input

    check_not_an_input(out, [src_dir])
    if layout not in LAYOUTS:
        raise UserError(f"--layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    csv_path = Path(labels_csv) if labels_csv is not None else None
    if layout == "auto":
        layout = detect_layout(src_dir, csv_path)
    if layout == "csv" and csv_path is None:
        raise UserError("--layout csv needs --labels CSV (columns file,label[,phrase][,license][,attribution][,split])")
    if csv_path is not None and layout != "csv":
        raise UserError(f"--labels is for --layout csv, not {layout}")
    if ontology is not None and layout != "fsd50k":
        raise UserError("--ontology is for --layout fsd50k")
    rejected: list[tuple[str, str]] = []
    skipped: list[tuple[str, str]] = []
    packaged = {"fsd50k": "fsd50k_phrases.csv", "esc50": "esc50_phrases.csv", "urbansound8k": "urbansound8k_phrases.csv"}
    phrases = read_phrase_table(packaged=packaged[layout]) if layout in packaged else {}
    overrides = read_phrase_table(phrases_csv) if phrases_csv is not None else {}
    if layout == "csv":
        assert csv_path is not None
        candidates = _collect_csv(src_dir, csv_path, rejected, skipped)
    elif layout == "folders":
        candidates = _collect_folders(src_dir, rejected, skipped)
    elif layout == "fsd50k":
        candidates = _collect_fsd50k(src_dir, rejected, skipped, Path(ontology) if ontology else None)
    elif layout == "esc50":
        candidates = _collect_esc50(src_dir, rejected, skipped)
    else:
        candidates = _collect_urbansound8k(src_dir, rejected, skipped)
    report = assemble(
        candidates, out, where=str(src_dir), phrases=phrases, phrase_overrides=overrides, sample_rate=sample_rate, skip_bad=skip_bad,
        min_duration_s=min_duration_s, max_duration_s=max_duration_s,
        lengths_are_errors=layout not in DATASET_LAYOUTS, per_label=per_label, exclude_license=exclude_license,
        split_fraction=split_fraction, seed=seed, overwrite=overwrite, rejected=rejected, skipped=skipped,
        threads=threads,
    )
    if report.rejected or report.skipped:
        print(report)
    return report
