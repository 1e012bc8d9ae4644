"""Checks of the BEIR/MTEB export (§4 beir/)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from reasonaudio.contract import (
    BEIR_FILES,
    BEIR_QRELS_HEADER,
)
from reasonaudio.errors import UserError
from reasonaudio.validate.checklist import _Recorder
from reasonaudio.validate.layout import _duplicates, _ids
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
    values = [v for k, v in row.items() if k not in ("_id", "_line") and isinstance(v, str)]
    # the usual row names the clip's own path: no file-system lookups (resolve() costs more than
    # reading the row)
    if clip_path in values:
        return True
    target = (root / clip_path).resolve()
    return any((root / value).resolve() == target or (beir_dir / value).resolve() == target for value in values)


def _check_beir(t: Tables, rec: _Recorder) -> None:
    names = ("beir.corpus", "beir.queries", "beir.qrels")
    for n in names:
        rec.get(n)
    beir = t.root / "beir"
    corpus_path, queries_path, qrels_path = (t.root / p for p in BEIR_FILES)

    if not corpus_path.is_file() or not t.has("clips"):
        rec.skip("beir.corpus", "needs beir/corpus.jsonl and clips.parquet")
    else:
        rows = None if _corpus_is_clips(corpus_path, t["clips"]) else _read_jsonl(corpus_path, rec, "beir.corpus")
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
    truth = t["qrels"].select("query_id", "clip_id", pl.col("relevance").cast(pl.Int64, strict=False))
    if _tsv_is_parquet(qrels_path, truth):
        return
    try:
        lines = qrels_path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        rec.violation("beir.qrels", f"{qrels_path}: not readable ({err})")
        return
    if not lines or lines[0] != BEIR_QRELS_HEADER:
        rec.violation("beir.qrels", f"test.tsv header is {lines[0] if lines else ''!r}, expected {BEIR_QRELS_HEADER!r}")
    _compare_qrels_tsv(lines[1:], truth, rec)


def _corpus_is_clips(path: Path, clips: pl.DataFrame) -> bool:
    """Whether corpus.jsonl has one row per clip of clips.parquet, in its order, each with a string
    field naming the clip's path as clips.parquet gives it (what `build` writes): read by polars'
    NDJSON reader, without a Python dict per row. Anything else is left to the row-by-row check."""
    try:
        corpus = pl.read_ndjson(path)
    except Exception:  # polars raises several types for a malformed file
        return False
    if corpus.height != clips.height or corpus.schema.get("_id") != pl.String or not clips["clip_id"].is_unique().all():
        return False
    fields = [name for name, dtype in corpus.schema.items() if name != "_id" and dtype == pl.String]
    if not fields:
        return False
    paired = corpus.with_columns(clips.select(pl.col("clip_id").cast(pl.String).alias("_clip"), pl.col("path").alias("_path")))
    return paired.select(
        (pl.col("_id") == pl.col("_clip")).all() & pl.any_horizontal(pl.col(f) == pl.col("_path") for f in fields).fill_null(False).all()
    ).item()


def _tsv_is_parquet(path: Path, truth: pl.DataFrame) -> bool:
    """Whether test.tsv lists `truth` (qrels.parquet's pairs and scores) row for row with the header and integer scores
    (what `build` writes): read by polars' streaming CSV reader beside `truth`, a batch of lines at a
    time, without a Python string per line nor the whole file as a frame. Anything else, unreadable
    files included, is left to `_compare_qrels_tsv`, which names the lines."""
    try:
        tsv = pl.scan_csv(path, separator="\t", quote_char=None, infer_schema=False, has_header=True)
        if tsv.collect_schema().names() != BEIR_QRELS_HEADER.split("\t"):
            return False
        if tsv.select(pl.len()).collect(engine="streaming").item() != truth.height:
            return False
        query, clip, score = BEIR_QRELS_HEADER.split("\t")
        # the lines' ids take the type of qrels.parquet's (categoricals, read coded), a batch at a time
        ids = pl.col(query).cast(truth.schema["query_id"]).alias("_q"), pl.col(clip).cast(truth.schema["clip_id"]).alias("_c")
        beside = pl.concat([tsv.select(*ids, pl.col(score).alias("_s")), truth.lazy()], how="horizontal")
        same = beside.select(
            pl.col("_s").str.contains(r"^-?\d+$").all()
            & (
                pl.col("_q").eq_missing(pl.col("query_id"))
                & pl.col("_c").eq_missing(pl.col("clip_id"))
                & pl.col("_s").cast(pl.Int64, strict=False).eq_missing(pl.col("relevance"))
            ).all()
        ).collect(engine="streaming").item()
    except Exception:  # polars raises several types for a malformed file
        return False
    # row for row the parquet's pairs: a pair listed twice is one qrels.parquet repeats
    return bool(same) and _duplicates(truth, ["query_id", "clip_id"]).height == 0


def _compare_qrels_tsv(body: list[str], truth: pl.DataFrame, rec: _Recorder) -> None:
    """test.tsv's rows (`body`: the lines after the header) against `truth` (qrels.parquet's pairs and scores), as frames: a
    corpus's millions of pairs are compared by joins, not one Python tuple each."""
    name = "beir.qrels"
    truth = truth.with_columns(pl.col("query_id", "clip_id").cast(pl.String))

    def report(frame: pl.DataFrame, message) -> None:
        for row in frame.head(rec.max_examples).iter_rows(named=True):
            rec.violation(name, message(row), 0)
        rec.get(name).violations += frame.height

    rows = (
        pl.DataFrame({"line": body}, schema={"line": pl.String})
        .with_row_index("lineno", offset=2)
        .filter(pl.col("line").str.strip_chars() != "")
        .with_columns(fields=pl.col("line").str.split("\t"))
    )
    well_formed = (pl.col("fields").list.len() == 3) & pl.col("fields").list.get(2, null_on_oob=True).str.contains(r"^-?\d+$")
    report(
        rows.filter(~well_formed),
        lambda r: f"test.tsv line {r['lineno']}: expected query-id<TAB>corpus-id<TAB>integer score, got {r['line'][:80]!r}",
    )
    listed = rows.filter(well_formed).select(
        "lineno",
        pl.col("fields").list.get(0).alias("query_id"),
        pl.col("fields").list.get(1).alias("clip_id"),
        # a score too large for int64 is still an integer score, just never the parquet's
        pl.col("fields").list.get(2).alias("score"),
        pl.col("fields").list.get(2).cast(pl.Int64, strict=False).alias("listed"),
    )
    keys = ["query_id", "clip_id"]
    twice = listed.filter(~pl.struct(keys).is_first_distinct())
    report(twice, lambda r: f"test.tsv line {r['lineno']}: pair ({r['query_id']!r}, {r['clip_id']!r}) listed twice")
    if twice.height:
        listed = listed.unique(keys, keep="last", maintain_order=True)
    if listed.select(*keys, pl.col("listed").alias("relevance")).equals(truth):
        return  # row for row the parquet's pairs (how `build` writes them): nothing lacks, nothing differs
    report(
        truth.join(listed, on=keys, how="anti").sort(keys),
        lambda r: f"test.tsv lacks ({r['query_id']}, {r['clip_id']}) from qrels.parquet",
    )
    report(
        listed.join(truth, on=keys, how="anti").sort(keys),
        lambda r: f"test.tsv has ({r['query_id']}, {r['clip_id']}) not in qrels.parquet",
    )
    both = listed.join(truth, on=keys, how="inner")
    report(
        both.filter(pl.col("listed").is_null() | (pl.col("listed") != pl.col("relevance"))).sort(keys),
        lambda r: f"test.tsv scores ({r['query_id']}, {r['clip_id']}) {r['score']}, qrels.parquet {r['relevance']}",
    )
