"""FSD50K as its archives unpack (FSD50K.{dev,eval}_audio, FSD50K.ground_truth, FSD50K.metadata):
labels cut back to the clip's leaf class, license and uploader per clip, dev = train, eval = test."""

from __future__ import annotations

import functools
import json
from pathlib import Path

from reasonaudio.atoms.sources.common import Candidate, Layout, LayoutOptions, license_from_url, read_csv_rows
from reasonaudio.errors import UserError


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


def collect(src: Path, options: LayoutOptions, rejected: list, skipped: list) -> list[Candidate]:
    ontology = options.ontology
    gt = src / "FSD50K.ground_truth"
    parts = [("dev", "FSD50K.dev_audio", "train"), ("eval", "FSD50K.eval_audio", "test")]
    rows: list[tuple[str, str, str, list[str], list[str]]] = []  # (part, audio dir, split, labels, mids) per clip
    fnames: list[str] = []
    meta: dict[str, dict] = {}
    for part, audio_dir, split in parts:
        table = gt / f"{part}.csv"
        if not table.is_file():
            continue
        _, part_rows = read_csv_rows(table, ("fname", "labels"))
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
        out.append(Candidate(rel, path, leaves[0], "", license_from_url(str(info.get("license", ""))), credit, split))
    return out


LAYOUT = Layout("fsd50k", collect, detect=lambda src: (src / "FSD50K.ground_truth").is_dir(), phrases="fsd50k_phrases.csv", dataset=True)
