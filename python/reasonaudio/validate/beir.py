"""Checks of the BEIR/MTEB export (§4 beir/)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from reasonaudio.contract import (
    BEIR_FILES,
    BEIR_QRELS_HEADER,
)
from reasonaudio.errors import UserError
from reasonaudio.validate.checklist import _Recorder
from reasonaudio.validate.layout import _ids
from reasonaudio.validate.tables import Tables

# --------------------------------------------------------------------------------------------- beir


def _read_jsonl(path: Path, rec: _Recorder, check: str) -> list[dict] | None:
    """Every row of a BEIR JSONL file that is an object with a string _id; each other line is a
    violation of `check` (all of them are recorded, not only the first)."""
    from reasonaudio.io.benchmark import iter_jsonl

    def bad(lineno: int, reason: str) -> None:
        rec.violation(check, f"{path.name} line {lineno}: {reason}")

    rows = []
    try:
        for lineno, row in iter_jsonl(path, on_bad_line=bad):
            if not isinstance(row.get("_id"), str):
                bad(lineno, "expected an object with a string _id")
                continue
            row["_line"] = lineno
            rows.append(row)
    except (OSError, UnicodeDecodeError, UserError) as err:
        rec.violation(check, f"{path}: not readable ({err})")
        return None
    return rows


def _names_file(row: dict, clip_path: str, beir_dir: Path, root: Path) -> bool:
    target = (root / clip_path).resolve()
    for key, value in row.items():
        if key in ("_id", "_line") or not isinstance(value, str):
            continue
        if value == clip_path or (root / value).resolve() == target or (beir_dir / value).resolve() == target:
            return True
    return False


def _check_beir(t: Tables, rec: _Recorder) -> None:
    names = ("beir.corpus", "beir.queries", "beir.qrels")
    for n in names:
        rec.get(n)
    beir = t.root / "beir"
    corpus_path, queries_path, qrels_path = (t.root / p for p in BEIR_FILES)

    if not corpus_path.is_file() or not t.has("clips"):
        rec.skip("beir.corpus", "needs beir/corpus.jsonl and clips.parquet")
    else:
        rows = _read_jsonl(corpus_path, rec, "beir.corpus")
        if rows is not None:
            paths = dict(zip(t["clips"]["clip_id"].to_list(), t["clips"]["path"].to_list()))
            seen: set[str] = set()
            for row in rows:
                cid = row["_id"]
                where = f"corpus.jsonl line {row['_line']} (_id {cid})"
                if cid in seen:
                    rec.violation("beir.corpus", f"{where}: duplicate _id")
                seen.add(cid)
                if cid not in paths:
                    rec.violation("beir.corpus", f"{where}: not a clip_id in clips.parquet")
                elif not _names_file(row, paths[cid], beir, t.root):
                    fields = {k: v for k, v in row.items() if k != "_line"}
                    rec.violation("beir.corpus", f"{where}: no field names its audio file {paths[cid]} (row {json.dumps(fields)[:120]})")
            absent = [c for c in paths if c not in seen]
            if absent:
                rec.violation("beir.corpus", f"corpus.jsonl lacks {len(absent)} clip(s): {_ids(absent)}", len(absent))

    if not queries_path.is_file() or not t.has("queries"):
        rec.skip("beir.queries", "needs beir/queries.jsonl and queries.parquet")
    else:
        rows = _read_jsonl(queries_path, rec, "beir.queries")
        if rows is not None:
            texts = dict(zip(t["queries"]["query_id"].to_list(), t["queries"]["text"].to_list()))
            seen = set()
            for row in rows:
                qid = row["_id"]
                where = f"queries.jsonl line {row['_line']} (_id {qid})"
                if qid in seen:
                    rec.violation("beir.queries", f"{where}: duplicate _id")
                seen.add(qid)
                if qid not in texts:
                    rec.violation("beir.queries", f"{where}: not a query_id in queries.parquet")
                elif row.get("text") != texts[qid]:
                    rec.violation("beir.queries", f"{where}: text {str(row.get('text'))[:60]!r} != queries.parquet text {texts[qid][:60]!r}")
            absent = [q for q in texts if q not in seen]
            if absent:
                rec.violation("beir.queries", f"queries.jsonl lacks {len(absent)} query(ies): {_ids(absent)}", len(absent))

    if not qrels_path.is_file() or not t.has("qrels"):
        rec.skip("beir.qrels", "needs beir/qrels/test.tsv and qrels.parquet")
        return
    try:
        lines = qrels_path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        rec.violation("beir.qrels", f"{qrels_path}: not readable ({err})")
        return
    if not lines or lines[0] != BEIR_QRELS_HEADER:
        rec.violation("beir.qrels", f"test.tsv header is {lines[0] if lines else ''!r}, expected {BEIR_QRELS_HEADER!r}")
    listed: dict[tuple[str, str], int] = {}
    for lineno, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != 3 or not re.fullmatch(r"-?\d+", fields[2]):
            rec.violation("beir.qrels", f"test.tsv line {lineno}: expected query-id<TAB>corpus-id<TAB>integer score, got {line[:80]!r}")
            continue
        key = (fields[0], fields[1])
        if key in listed:
            rec.violation("beir.qrels", f"test.tsv line {lineno}: pair {key} listed twice")
        listed[key] = int(fields[2])
    truth = {(q, c): r for q, c, r in t["qrels"].select("query_id", "clip_id", "relevance").iter_rows()}
    for key in sorted(set(truth) - set(listed)):
        rec.violation("beir.qrels", f"test.tsv lacks ({key[0]}, {key[1]}) from qrels.parquet")
    for key in sorted(set(listed) - set(truth)):
        rec.violation("beir.qrels", f"test.tsv has ({key[0]}, {key[1]}) not in qrels.parquet")
    for key in sorted(set(listed) & set(truth)):
        if listed[key] != truth[key]:
            rec.violation("beir.qrels", f"test.tsv scores ({key[0]}, {key[1]}) {listed[key]}, qrels.parquet {truth[key]}")
