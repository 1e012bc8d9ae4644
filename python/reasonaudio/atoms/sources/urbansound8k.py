"""UrbanSound8K: audio/foldN/*.wav and metadata/UrbanSound8K.csv; only foreground (salience 1) slices."""

from __future__ import annotations

from pathlib import Path

from reasonaudio.atoms.sources.common import Candidate, Layout, LayoutOptions, read_csv_rows

URBANSOUND8K_LICENSE = "CC-BY-NC-3.0"  # the UrbanSound8K dataset's license (its README)


def collect(src: Path, options: LayoutOptions, rejected: list, skipped: list) -> list[Candidate]:
    table = src / "metadata" / "UrbanSound8K.csv"
    _, rows = read_csv_rows(table, ("slice_file_name", "fold", "class", "salience"))
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


LAYOUT = Layout("urbansound8k", collect, detect=lambda src: (src / "metadata" / "UrbanSound8K.csv").is_file(), phrases="urbansound8k_phrases.csv", dataset=True)
