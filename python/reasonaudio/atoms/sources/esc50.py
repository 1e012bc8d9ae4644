"""ESC-50: audio/*.wav (5-s clips, zero-padded after the sound) and meta/esc50.csv."""

from __future__ import annotations

from pathlib import Path

from reasonaudio.atoms.sources.common import Candidate, Layout, LayoutOptions, read_csv_rows

ESC50_LICENSE = "CC-BY-NC-3.0"  # the ESC-50 dataset's license (README of karolpiczak/ESC-50)


def collect(src: Path, options: LayoutOptions, rejected: list, skipped: list) -> list[Candidate]:
    table = src / "meta" / "esc50.csv"
    _, rows = read_csv_rows(table, ("filename", "category"))
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


LAYOUT = Layout("esc50", collect, detect=lambda src: (src / "meta" / "esc50.csv").is_file(), phrases="esc50_phrases.csv", dataset=True)
