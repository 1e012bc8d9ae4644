"""Class folders: SRC/<label>/<file>, any number of files per label."""

from __future__ import annotations

from pathlib import Path

from reasonaudio.atoms.sources.common import Candidate, Layout, LayoutOptions


def collect(src: Path, options: LayoutOptions, rejected: list, skipped: list) -> list[Candidate]:
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


LAYOUT = Layout("folders", collect)
