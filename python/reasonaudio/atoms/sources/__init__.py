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

import os
import sys
from pathlib import Path
from typing import Sequence

from reasonaudio.atoms.library import DEFAULT_SAMPLE_RATE
from reasonaudio.atoms.sources import csv_labels, esc50, folders, fsd50k, urbansound8k
from reasonaudio.atoms.sources.common import (
    Candidate,
    ImportReport,
    Layout,
    LayoutOptions,
    assemble,
    default_phrase,
    MIN_ATOM_S,
    is_non_commercial,
    load_candidate,
    read_phrase_table,
    trim_silence,
)
from reasonaudio.errors import UserError
from reasonaudio.io.outputs import check_not_an_input

#: The one registry of layouts (`--layout NAME`); `auto` tries the `detect` of each in this order
#: and falls back to class folders.
LAYOUTS: dict[str, Layout] = {m.LAYOUT.name: m.LAYOUT for m in (folders, csv_labels, fsd50k, esc50, urbansound8k)}


def detect_layout(src: Path, labels_csv: Path | None) -> str:
    if labels_csv is not None:
        return "csv"
    return next((lay.name for lay in LAYOUTS.values() if lay.detect is not None and lay.detect(src)), "folders")


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
    min_duration_s: float = MIN_ATOM_S,
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
    check_not_an_input(out, [src_dir])
    if layout != "auto" and layout not in LAYOUTS:
        raise UserError(f"--layout must be one of auto, {', '.join(LAYOUTS)}, got {layout!r}")
    csv_path = Path(labels_csv) if labels_csv is not None else None
    if layout == "auto":
        layout = detect_layout(src_dir, csv_path)
        parts = [d for d in ("FSD50K.dev_audio", "FSD50K.eval_audio") if (src_dir / d).is_dir()]
        if layout == "folders" and parts:
            # FSD50K's labels and per-clip licenses live in FSD50K.ground_truth/ and
            # FSD50K.metadata/: without them every clip is labelled by its folder, license unspecified
            print(f"reasonaudio atoms: note: {src_dir} has {' and '.join(parts)} but no FSD50K.ground_truth/: imported as plain "
                  "folders (labels from folder names, license 'unspecified'); add FSD50K's metadata for its labels and licenses",
                  file=sys.stderr)
    if layout == "csv" and csv_path is None:
        raise UserError("--layout csv needs --labels CSV (columns file,label[,phrase][,license][,attribution][,split])")
    if csv_path is not None and layout != "csv":
        raise UserError(f"--labels is for --layout csv, not {layout}")
    if ontology is not None and layout != "fsd50k":
        raise UserError("--ontology is for --layout fsd50k")
    chosen = LAYOUTS[layout]
    rejected: list[tuple[str, str]] = []
    skipped: list[tuple[str, str]] = []
    phrases = read_phrase_table(packaged=chosen.phrases) if chosen.phrases else {}
    overrides = read_phrase_table(phrases_csv) if phrases_csv is not None else {}
    options = LayoutOptions(labels_csv=csv_path, ontology=Path(ontology) if ontology else None)
    candidates = chosen.collect(src_dir, options, rejected, skipped)
    report = assemble(
        candidates, out, where=str(src_dir), phrases=phrases, phrase_overrides=overrides, sample_rate=sample_rate, skip_bad=skip_bad,
        min_duration_s=min_duration_s, max_duration_s=max_duration_s,
        lengths_are_errors=not chosen.dataset, per_label=per_label, exclude_license=exclude_license,
        split_fraction=split_fraction, seed=seed, overwrite=overwrite, rejected=rejected, skipped=skipped,
        threads=threads,
    )
    return report


def import_folder(
    src: str | os.PathLike[str],
    out: str | os.PathLike[str],
    labels_csv: str | os.PathLike[str] | None = None,
    sample_rate: int = DEFAULT_SAMPLE_RATE,
    skip_bad: bool = False,
    min_duration_s: float = MIN_ATOM_S,
    max_duration_s: float = 10.0,
    overwrite: bool = False,
):
    """A class-folder (``src/<label>/<file>``, many files per label) or labels-CSV import; see
    `import_atoms` for every layout and option."""
    return import_atoms(
        src, out, layout="csv" if labels_csv is not None else "folders", labels_csv=labels_csv,
        sample_rate=sample_rate, skip_bad=skip_bad, min_duration_s=min_duration_s,
        max_duration_s=max_duration_s, overwrite=overwrite,
    )


__all__ = [
    "LAYOUTS", "Candidate", "ImportReport", "Layout", "LayoutOptions", "assemble", "default_phrase", "detect_layout",
    "MIN_ATOM_S", "import_atoms", "import_folder", "is_non_commercial", "load_candidate", "read_phrase_table", "trim_silence",
]
