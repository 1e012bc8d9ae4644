"""Label then exemplar (contract v2 §1): the build plans, queries and judges relevance over labels,
then each planned event gets one exemplar of its label, drawn from (seed, clip index).

Relevance speaks of labels only, so swapping the recording under an event never changes it; the
event keeps its planned onset and length, and the renderer trims or loops the exemplar to that
length (the event's mode says which). A library with one exemplar per label plans exactly as
before and draws nothing, so its benchmarks stay byte-identical.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from reasonaudio.contract import ATOM_SPLITS
from reasonaudio.errors import UserError

#: `ev_mode` codes of the planner: the event is the atom as is, looped, or its head trimmed.
MODE_NATIVE, MODE_LOOP, MODE_TRIM = 0, 1, 2
_EXEMPLAR_STREAM = 0x4558_454D  # "EXEM": keeps exemplar draws independent of every other stream
SPLITS = ("all", *ATOM_SPLITS)


@dataclass
class LabelView:
    """One entry per label, the unit the planner and the query generator work on."""

    labels: list[str]
    phrases: list[str]
    natives: npt.NDArray[np.int64]  # a representative length per label: its median exemplar's
    members: list[npt.NDArray[np.int64]]  # atom indices of each label's exemplars
    atom_lengths: npt.NDArray[np.int64]

    @property
    def multi(self) -> bool:
        """Whether any label has more than one exemplar (else planning is per atom, as in v1)."""
        return any(len(m) > 1 for m in self.members)

    @classmethod
    def of(cls, library) -> LabelView:
        lengths = np.diff(library.offsets.astype(np.int64))
        groups = library.exemplars()
        members = [np.asarray(ix, np.int64) for ix in groups.values()]
        natives = np.array([int(np.sort(lengths[m])[(len(m) - 1) // 2]) for m in members], np.int64)
        phrases = [library.phrases[int(m[0])] for m in members]
        return cls(list(groups), phrases, natives, members, lengths)

    def draw(self, cols: dict[str, np.ndarray], seed: int, first_clip: int = 0) -> dict[str, np.ndarray]:
        """The plan table with each event's label index replaced by one of its exemplars' atom
        index (uniform, seeded by (seed, clip index)) and its mode set from the exemplar's length;
        `cols` may be the clips of a corpus from `first_clip` on (its pointers counted from 0)."""
        if not self.multi:
            return cols
        ptr = cols["clip_event_ptr"].astype(np.int64)
        label_of = cols["ev_atom"].astype(np.int64)
        atom = np.empty_like(label_of)
        sizes = np.array([len(m) for m in self.members], np.int64)
        for clip in range(len(ptr) - 1):
            lo, hi = ptr[clip], ptr[clip + 1]
            if hi == lo:
                continue
            rng = np.random.default_rng([seed, _EXEMPLAR_STREAM, first_clip + clip])
            picks = rng.integers(0, sizes[label_of[lo:hi]])
            atom[lo:hi] = [self.members[lb][k] for lb, k in zip(label_of[lo:hi], picks)]
        length = cols["ev_length"].astype(np.int64)
        native = self.atom_lengths[atom]
        mode = np.where(length == native, MODE_NATIVE, np.where(length > native, MODE_LOOP, MODE_TRIM))
        out = dict(cols)
        out["ev_atom"] = atom.astype(cols["ev_atom"].dtype)
        out["ev_mode"] = mode.astype(cols["ev_mode"].dtype)
        return out


def select_split(library, split: str):
    """The library restricted to exemplars of `split` ('all' keeps every atom)."""
    if split not in SPLITS:
        raise UserError(f"--exemplar-split must be one of {', '.join(SPLITS)}, got {split!r}")
    if split == "all":
        return library
    if not library.splits:
        raise UserError(f"--exemplar-split {split}: the library has no split column (import it with --split-fraction F)")
    keep = [i for i, s in enumerate(library.splits) if s == split]
    if not keep:
        raise UserError(f"--exemplar-split {split}: the library has no {split} exemplars")
    return library.subset(keep)


def markdown_cell(text: str) -> str:
    """One cell of a markdown table: pipes escaped, line breaks flattened, '-' when empty."""
    return str(text).replace("|", "\\|").replace("\n", " ") or "-"


def atoms_used(events_atoms: npt.ArrayLike, block: int = 1 << 22) -> list[int]:
    """The atoms (ascending) that occur in `events_atoms`, every event's atom index: counted a block
    at a time, so a corpus's events are neither copied nor made Python ints."""
    seen = np.zeros(0, dtype=bool)
    atoms = np.asarray(events_atoms)
    for lo in range(0, len(atoms), block):
        part = np.bincount(np.asarray(atoms[lo : lo + block], dtype=np.int64)) > 0
        seen = np.pad(seen, (0, max(len(part) - len(seen), 0)))
        seen[: len(part)] |= part
    return np.flatnonzero(seen).tolist()


def attribution_markdown(library, used: npt.NDArray[np.int64], title: str) -> str:
    """ATTRIBUTION.md: every recording the benchmark's clips use, with license, source and author."""
    used_set = atoms_used(used)
    lines = [
        f"# Recordings used in {title}",
        "",
        f"{len(used_set)} of the library's {len(library)} atoms occur in the clips. Each row: atom, label, "
        "license, source (original file or package), author / credit.",
        "",
        "| atom_id | label | license | source | attribution |",
        "|---|---|---|---|---|",
    ]

    for i in used_set:
        credit = library.attributions[i] if library.attributions else ""
        lines.append(
            f"| {markdown_cell(library.atom_ids[i])} | {markdown_cell(library.labels[i])} | {markdown_cell(library.licenses[i])} | "
            f"{markdown_cell(library.sources[i])} | {markdown_cell(credit)} |"
        )
    licenses: dict[str, int] = {}
    for i in used_set:
        licenses[library.licenses[i]] = licenses.get(library.licenses[i], 0) + 1
    lines += ["", "Licenses: " + ", ".join(f"{k} ({v})" for k, v in sorted(licenses.items())), ""]
    return "\n".join(lines)


def write_attribution(root: Path, library, used: npt.NDArray[np.int64], extra: str = "") -> Path:
    """ATTRIBUTION.md of a benchmark; `extra` (markdown) follows the atoms' table (the beds of a scene)."""
    path = root / "ATTRIBUTION.md"
    path.write_text(attribution_markdown(library, used, "this benchmark") + extra)
    return path


def recordings_used(library, used: npt.NDArray[np.int64]) -> dict:
    """The manifest's list of recordings the clips use (atom, license, source, attribution), with
    a count per license."""
    used_set = atoms_used(used)
    rows = [
        {
            "atom_id": library.atom_ids[i],
            "label": library.labels[i],
            "license": library.licenses[i],
            "source": library.sources[i],
            "attribution": library.attributions[i] if library.attributions else "",
        }
        for i in used_set
    ]
    licenses: dict[str, int] = {}
    for r in rows:
        licenses[r["license"]] = licenses.get(r["license"], 0) + 1
    return {"file": "ATTRIBUTION.md", "n_used": len(rows), "licenses": dict(sorted(licenses.items())), "atoms": rows}
