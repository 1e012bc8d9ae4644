"""A labels CSV `file,label[,phrase][,license][,attribution][,split]`, many rows per label."""

from __future__ import annotations

from pathlib import Path

from reasonaudio.atoms.sources.common import Candidate, Layout, LayoutOptions, read_csv_rows
from reasonaudio.contract import ATOM_SPLITS


def collect(src: Path, options: LayoutOptions, rejected: list, skipped: list) -> list[Candidate]:
    labels_csv = options.labels_csv
    assert labels_csv is not None  # import_atoms requires --labels for this layout
    _, rows = read_csv_rows(labels_csv, ("file", "label"))
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
        if split and split not in ATOM_SPLITS:
            rejected.append((rel, f"{where}: split {split!r}; expected train, test or empty"))
            continue
        out.append(Candidate(rel, path, label, row.get("phrase", ""), row.get("license", "") or "unspecified",
                             row.get("attribution", ""), split))
    return out


LAYOUT = Layout("csv", collect)
