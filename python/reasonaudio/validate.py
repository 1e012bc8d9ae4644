"""Check a benchmark directory against the contract (`spec/benchmark.md`).

`validate_benchmark(path)` reads the on-disk layout of contract §4 and nothing else: it never calls
the generator or the Rust relevance engine, so it can cross-check both. Every guarantee becomes a
named check (`layout.files`, `relevance.qrels`, `margin.relevance`, `audio.background`, ...) that
counts its violations and keeps a few concrete examples naming file, row, clip and query.

Relevance is recomputed here from the §2 table in plain numpy/polars (one vectorised pass per query
over all clips). The same evaluator, run with every onset and offset moved to its worst case by the
margin m, yields for each (query, clip) a lower bound ("holds under every perturbation") and an upper
bound ("holds under some perturbation"); §3.1 holds when the two agree. The bounds of a query are the AND
of its constraints' bounds: exact when its constraints are decided by different quantities (the usual
case, labels being unique per clip), otherwise erring towards reporting (a flagged clip may be one
where two individually unstable constraints could never flip together).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import polars as pl

from reasonaudio.errors import UserError

from reasonaudio.contract import (  # noqa: F401  (re-exported: the validator's names of the contract's facts)
    BEIR_FILES,
    BEIR_QRELS_HEADER,
    MANIFEST_KEYS,
    PATTERNS,
    SILENCE_ABS,
    TASKS,
)
from reasonaudio.contract import TABLE_SCHEMAS as TABLE_COLUMNS
from reasonaudio.contract.logic import Constraint, LogicError, parse_logic, task_shape_problem  # noqa: F401
from reasonaudio.contract.reference import EventIndex, Truth  # noqa: F401

TIME_TOLERANCE_S = 1e-9  # onset_s must equal onset_sample / sample_rate within this
DEFAULT_AUDIBLE_DBFS = -50.0
AUDIBLE_WINDOW_S = 0.05  # loudest 50 ms window, so sparse sounds (knocks, drips) still count as audible

CHECK_DESCRIPTIONS: dict[str, str] = {
    "layout.files": "every §4 file is present and readable",
    "layout.columns": "required columns present with sane types, no nulls",
    "layout.manifest": "manifest has format_version, tool_version, seed, sample_rate, params, counts, hashes",
    "layout.ids": "ids unique (atom_id, label, clip_id, query_id, event, qrels pair)",
    "layout.references": "events -> clips/atoms (labels agree), qrels/mc -> queries/clips",
    "layout.counts": "manifest counts match the tables",
    "layout.hashes": "manifest hashes match sha256 of the files",
    "clips.events": "every clip has 2-8 events and n_events agrees",
    "events.labels": "a label occurs at most once per clip",
    "events.times": "0 <= onset < offset <= clip length; *_s == *_sample / sample_rate",
    "clips.pattern": "sequential clips have no overlapping pair, overlap clips at least one",
    "queries.logic": "logic parses as §2 constraints over known labels",
    "queries.task_shape": "constraints fit the task (§2 task shapes)",
    "relevance.qrels": "qrels.parquet equals the relevance recomputed from §2",
    "margin.relevance": "no relevance changes when onsets/offsets move by up to m (§3.1)",
    "margin.event_gaps": "any two events in a clip overlap by > 2m or are apart by > 2m (§3.1)",
    "queries.positives": "every query has at least one relevant clip (§3.2)",
    "queries.hard_negatives": "every query has a hard negative (§3.2)",
    "mc.pairs": "one (relevant, hard negative) pair per query (§3.3)",
    "audio.readable": "clip file exists, mono, at sample_rate, length == duration_s * sample_rate",
    "audio.range": "every sample finite and within [-1, 1] (§3.5)",
    "audio.background": "outside every event |x| <= 1e-3 (§3.6)",
    "audio.audible": "inside every event the sound is audible (§3.6)",
    "beir.corpus": "beir/corpus.jsonl: one row per clip naming its audio file",
    "beir.queries": "beir/queries.jsonl: one row per query with its text",
    "beir.qrels": "beir/qrels/test.tsv: header and rows agree with qrels.parquet",
}


# --------------------------------------------------------------------------------------------- report


@dataclass
class Check:
    """One named check: how many violations it found and a few concrete examples."""

    name: str
    description: str
    violations: int = 0
    examples: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    skipped: str | None = None  # why the check did not run

    @property
    def passed(self) -> bool:
        return self.skipped is None and self.violations == 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "passed": self.passed,
            "skipped": self.skipped,
            "violations": self.violations,
            "examples": self.examples,
            "notes": self.notes,
        }


@dataclass
class ValidationReport:
    path: Path
    checks: list[Check]
    fatal: list[str]  # unreadable/missing files, missing columns, wrong types: the CLI exits 2
    margin_s: float
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.fatal and all(c.violations == 0 for c in self.checks)

    @property
    def failed(self) -> list[str]:
        return [c.name for c in self.checks if c.violations]

    def check(self, name: str) -> Check:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "ok": self.ok,
            "fatal": self.fatal,
            "margin_s": self.margin_s,
            "elapsed_s": round(self.elapsed_s, 3),
            "checks": [c.to_dict() for c in self.checks],
        }

    def format_text(self, max_examples: int = 3) -> str:
        width = max(len(c.name) for c in self.checks) if self.checks else 10
        lines = [f"validate {self.path} (margin {self.margin_s:g} s)"]
        for c in self.checks:
            if c.skipped is not None:
                lines.append(f"  - {c.name:<{width}}  skipped: {c.skipped}")
                continue
            mark = "✓" if c.violations == 0 else "✗"
            summary = c.description if c.violations == 0 else f"{c.violations} violation(s): {c.description}"
            lines.append(f"  {mark} {c.name:<{width}}  {summary}")
            for example in c.examples[: max_examples if c.violations else 0]:
                lines.append(f"      {example}")
            for note in c.notes:
                lines.append(f"      note: {note}")
        n_failed = len(self.failed)
        verdict = "OK" if self.ok else f"{n_failed} check(s) failed"
        lines.append(f"{verdict} ({self.elapsed_s:.1f} s)")
        return "\n".join(lines)


class _Recorder:
    """Collects checks in order; `violation` keeps only the first `max_examples` examples."""

    def __init__(self, max_examples: int) -> None:
        self.max_examples = max_examples
        self.checks: dict[str, Check] = {}

    def get(self, name: str) -> Check:
        if name not in self.checks:
            self.checks[name] = Check(name, CHECK_DESCRIPTIONS.get(name, name))
        return self.checks[name]

    def violation(self, name: str, example: str, count: int = 1) -> None:
        check = self.get(name)
        check.violations += count
        if len(check.examples) < self.max_examples:
            check.examples.append(example)

    def note(self, name: str, text: str) -> None:
        self.get(name).notes.append(text)

    def skip(self, name: str, reason: str) -> None:
        check = self.get(name)
        if check.skipped is None and check.violations == 0:
            check.skipped = reason


# --------------------------------------------------------------------------------------------- logic


# ------------------------------------------------------------------------------------------- loading


@dataclass
class Tables:
    """What could be read of a benchmark directory; a table is None when unusable."""

    root: Path
    manifest: dict | None
    frames: dict[str, pl.DataFrame | None]
    fatal: list[str]

    @property
    def sample_rate(self) -> int | None:
        if self.manifest is None:
            return None
        sr = self.manifest.get("sample_rate")
        return sr if isinstance(sr, int) and not isinstance(sr, bool) and sr > 0 else None

    def __getitem__(self, name: str) -> pl.DataFrame:
        frame = self.frames.get(name)
        if frame is None:
            raise KeyError(name)
        return frame

    def has(self, *names: str) -> bool:
        return all(self.frames.get(n) is not None for n in names)


def _kind_ok(dtype: pl.DataType, kind: str) -> bool:
    is_str = dtype in (pl.String, pl.Categorical) or isinstance(dtype, (pl.Categorical, pl.Enum))
    if kind == "str":
        return is_str
    if kind == "int":
        return dtype.is_integer()
    if kind == "num":
        return dtype.is_numeric()
    if kind == "id":
        return is_str or dtype.is_integer()
    raise ValueError(kind)


def _read_tables(root: Path, rec: _Recorder) -> Tables:
    fatal: list[str] = []
    manifest: dict | None = None
    frames: dict[str, pl.DataFrame | None] = {}
    rec.get("layout.files")
    rec.get("layout.columns")

    manifest_path = root / "manifest.json"
    if not manifest_path.is_file():
        msg = f"{manifest_path}: file not found"
        rec.violation("layout.files", msg)
        fatal.append(msg)
    else:
        try:
            manifest = json.loads(manifest_path.read_text())
            if not isinstance(manifest, dict):
                raise ValueError("top level is not a JSON object")
        except (ValueError, UnicodeDecodeError) as err:
            msg = f"{manifest_path}: not readable JSON ({err})"
            rec.violation("layout.files", msg)
            fatal.append(msg)
            manifest = None

    for name, columns in TABLE_COLUMNS.items():
        path = root / f"{name}.parquet"
        frames[name] = None
        if not path.is_file():
            msg = f"{path}: file not found"
            rec.violation("layout.files", msg)
            fatal.append(msg)
            continue
        try:
            frame = pl.read_parquet(path)
        except Exception as err:  # polars raises several error types for corrupt files
            msg = f"{path}: not a readable parquet file ({type(err).__name__}: {str(err)[:200]})"
            rec.violation("layout.files", msg)
            fatal.append(msg)
            continue
        problems = []
        for column, kind in columns.items():
            if column not in frame.columns:
                problems.append(f"missing column {column!r} (found {', '.join(frame.columns)})")
            elif not _kind_ok(frame.schema[column], kind):
                problems.append(f"column {column!r} has type {frame.schema[column]}, expected {kind}")
            else:
                nulls = frame[column].null_count()
                if nulls:
                    rows = frame.with_row_index("_row").filter(pl.col(column).is_null())["_row"].head(3).to_list()
                    problems.append(f"column {column!r} has {nulls} null(s) (rows {', '.join(map(str, rows))})")
        for problem in problems:
            msg = f"{name}.parquet: {problem}"
            rec.violation("layout.columns", msg)
            fatal.append(msg)
        if problems:
            continue
        # ids are compared as strings everywhere (atom ids may be integers); categoricals become strings
        casts = [pl.col(c).cast(pl.String) for c, k in columns.items() if k in ("str", "id")]
        frames[name] = frame.with_columns(casts)

    for rel in BEIR_FILES:
        if not (root / rel).is_file():
            msg = f"{root / rel}: file not found"
            rec.violation("layout.files", msg)
            fatal.append(msg)
    if not (root / "audio").is_dir():
        msg = f"{root / 'audio'}: directory not found"
        rec.violation("layout.files", msg)
        fatal.append(msg)

    tables = Tables(root, manifest, frames, fatal)
    if manifest is not None and tables.sample_rate is None:
        msg = f"{manifest_path}: sample_rate must be a positive integer, got {manifest.get('sample_rate')!r}"
        rec.violation("layout.manifest", msg)
        fatal.append(msg)
    return tables


def open_benchmark(path: str | Path) -> Tables:
    """Read a benchmark directory for inspection; an unusable manifest or metadata table is a UserError."""
    root = Path(path)
    if not root.is_dir():
        raise UserError(f"{root}: not a directory")
    tables = _read_tables(root, _Recorder(max_examples=3))
    # beir/ and audio/ are not needed to read the metadata; the tables and the sample rate are
    if not tables.has(*TABLE_COLUMNS) or tables.sample_rate is None:
        raise UserError("; ".join(tables.fatal[:3]) + (f" (+{len(tables.fatal) - 3} more)" if len(tables.fatal) > 3 else ""))
    return tables


# ------------------------------------------------------------------------------------------- checks


def _ids(values: Iterable[Any], n: int = 3) -> str:
    values = list(values)
    shown = ", ".join(str(v) for v in values[:n])
    return shown + (f", ... ({len(values)} in all)" if len(values) > n else "")


def _check_manifest(t: Tables, rec: _Recorder) -> None:
    name = "layout.manifest"
    rec.get(name)
    m = t.manifest
    if m is None:
        rec.skip(name, "manifest.json unreadable")
        return
    missing = [k for k in MANIFEST_KEYS if k not in m]
    if missing:
        rec.violation(name, f"manifest.json: missing key(s) {', '.join(missing)}", len(missing))
    expected_types = {"params": dict, "counts": dict, "hashes": dict}
    for key, typ in expected_types.items():
        if key in m and not isinstance(m[key], typ):
            rec.violation(name, f"manifest.json: {key} should be an object, got {type(m[key]).__name__}")
    if "seed" in m and (isinstance(m["seed"], bool) or not isinstance(m["seed"], int)):
        rec.violation(name, f"manifest.json: seed should be an integer, got {m['seed']!r}")
    for key in ("format_version", "tool_version"):
        if key in m and not isinstance(m[key], (str, int)):
            rec.violation(name, f"manifest.json: {key} should be a string, got {m[key]!r}")


def _duplicates(frame: pl.DataFrame, columns: list[str]) -> pl.DataFrame:
    return frame.group_by(columns).len().filter(pl.col("len") > 1).sort(columns)


def _check_ids(t: Tables, rec: _Recorder) -> None:
    name = "layout.ids"
    rec.get(name)
    keys = {
        "atoms": [["atom_id"], ["label"]],
        "clips": [["clip_id"], ["path"]],
        "events": [["clip_id", "event_index"]],
        "queries": [["query_id"]],
        "qrels": [["query_id", "clip_id"]],
    }
    for table, key_sets in keys.items():
        if not t.has(table):
            continue
        for cols in key_sets:
            dup = _duplicates(t[table], cols)
            for row in dup.head(rec.max_examples).iter_rows(named=True):
                key = ", ".join(f"{c}={row[c]}" for c in cols)
                rec.violation(name, f"{table}.parquet: {key} occurs {row['len']} times", 0)
            rec.get(name).violations += dup.height


def _check_references(t: Tables, rec: _Recorder) -> None:
    name = "layout.references"
    rec.get(name)
    if t.has("events", "clips"):
        orphans = t["events"].join(t["clips"].select("clip_id"), on="clip_id", how="anti")
        for row in orphans.head(rec.max_examples).iter_rows(named=True):
            rec.violation(name, f"events.parquet: clip_id {row['clip_id']} (event {row['event_index']}) is not in clips.parquet", 0)
        rec.get(name).violations += orphans.height
    if t.has("events", "atoms"):
        joined = t["events"].join(
            t["atoms"].select("atom_id", pl.col("label").alias("atom_label")), on="atom_id", how="left"
        )
        unknown = joined.filter(pl.col("atom_label").is_null())
        for row in unknown.head(rec.max_examples).iter_rows(named=True):
            rec.violation(name, f"events.parquet: clip {row['clip_id']} event {row['event_index']}: atom_id {row['atom_id']} is not in atoms.parquet", 0)
        rec.get(name).violations += unknown.height
        wrong = joined.filter(pl.col("atom_label").is_not_null() & (pl.col("atom_label") != pl.col("label")))
        for row in wrong.head(rec.max_examples).iter_rows(named=True):
            rec.violation(
                name,
                f"events.parquet: clip {row['clip_id']} event {row['event_index']}: label {row['label']!r} "
                f"but atom {row['atom_id']} is {row['atom_label']!r}",
                0,
            )
        rec.get(name).violations += wrong.height
    refs = [
        ("qrels", "query_id", "queries", "query_id"),
        ("qrels", "clip_id", "clips", "clip_id"),
        ("mc", "query_id", "queries", "query_id"),
        ("mc", "positive_clip_id", "clips", "clip_id"),
        ("mc", "negative_clip_id", "clips", "clip_id"),
    ]
    for table, column, target, target_column in refs:
        if not t.has(table, target):
            continue
        known = t[target].select(pl.col(target_column).alias(column))
        orphans = t[table].with_row_index("_row").join(known, on=column, how="anti")
        for row in orphans.head(rec.max_examples).iter_rows(named=True):
            rec.violation(name, f"{table}.parquet row {row['_row']}: {column} {row[column]} is not in {target}.parquet", 0)
        rec.get(name).violations += orphans.height


_COUNT_ALIASES = re.compile(r"^(?:n_|num_)?(atoms|clips|events|queries|qrels|mc)(?:_count|_rows|_pairs)?$")


def _summary_of(values: np.ndarray) -> dict:
    """The builder's summary statistics of a count: min, median, mean, max (rounded to 4 places)."""
    if len(values) == 0:
        return {}
    return {
        "min": round(float(values.min()), 4),
        "p50": round(float(np.median(values)), 4),
        "mean": round(float(values.mean()), 4),
        "max": round(float(values.max()), 4),
    }


def _same_count(claimed, expected) -> bool:
    if isinstance(expected, dict) and isinstance(claimed, dict):
        return set(claimed) == set(expected) and all(_same_count(claimed[k], expected[k]) for k in expected)
    if isinstance(expected, float) or isinstance(claimed, float):
        return isinstance(claimed, (int, float)) and abs(float(claimed) - float(expected)) <= 1e-4 * max(1.0, abs(float(expected)))
    if isinstance(expected, list) and isinstance(claimed, list):
        return len(claimed) == len(expected) and all(_same_count(a, b) for a, b in zip(claimed, expected))
    return claimed == expected


_NOT_RECOMPUTABLE = object()


def _count_relevant_per_query(t: Tables):
    if not t.has("queries", "qrels"):
        return None
    per = t["queries"].select("query_id").join(t["qrels"].group_by("query_id").len("n"), on="query_id", how="left")
    return _summary_of(per["n"].fill_null(0).to_numpy().astype(float)) if per.height else None


def _count_clip_durations(t: Tables):
    if not t.has("clips") or not isinstance((t.manifest or {}).get("counts", {}).get("clip_duration_s"), dict):
        return None
    durations = t["clips"]["duration_s"].to_numpy().astype(float)
    claimed = t.manifest["counts"]["clip_duration_s"]
    expected = _summary_of(durations)
    edges = claimed.get("histogram", {}).get("edges")
    if isinstance(edges, list) and len(edges) > 1:
        hist, _ = np.histogram(durations, bins=np.asarray(edges, dtype=float))
        expected["histogram"] = {"edges": edges, "counts": hist.tolist()}
    return expected


def _count_event_modes(t: Tables):
    if not t.has("events") or "mode" not in t["events"].columns:
        return None
    claimed = t.manifest["counts"]["event_modes"]
    return {m: int((t["events"]["mode"] == m).sum()) for m in claimed}


def _count_queries_by_shape(t: Tables):
    if not t.has("queries") or "shape" not in t["queries"].columns:
        return None
    shapes = t["queries"]["shape"].value_counts()
    return dict(sorted(zip(shapes["shape"].to_list(), shapes["count"].to_list())))


def _count_label_use(t: Tables):
    if not t.has("queries"):
        return None
    use: dict[str, int] = {}
    for text in t["queries"]["logic"].to_list():
        try:
            constraints = json.loads(text)["all"]
        except (ValueError, KeyError, TypeError):
            return None  # reported by queries.logic
        positive: list[str] = []
        negated: list[str] = []
        for c in constraints:
            for kind, arg in c.items():
                if kind == "not":
                    negated.append(arg)
                    continue
                for lab in arg if kind in ("before", "overlap") else [arg["label"]] if kind == "duration" else [arg]:
                    if lab not in positive:
                        positive.append(lab)
        # each distinct positive label once per query, each negated one per mention
        for lab in positive + negated:
            use[lab] = use.get(lab, 0) + 1
    return {
        "labels_used": len(use),
        "max": max(use.values(), default=0),
        "mean": round(float(np.mean(list(use.values()))), 3) if use else 0.0,
        "per_label": dict(sorted(use.items())),
    }


_DERIVED_COUNTS = {
    "relevant_per_query": _count_relevant_per_query,
    "clip_duration_s": _count_clip_durations,
    "event_modes": _count_event_modes,
    "queries_by_shape": _count_queries_by_shape,
    "label_use_in_queries": _count_label_use,
    # which clips were planned on purpose, and how many hard negatives each query had before
    # the two-option pairs were drawn, are decisions of the planner, not facts of the tables
    "planned_hard_negatives": lambda t: _NOT_RECOMPUTABLE,
    "hard_negatives_per_query": lambda t: _NOT_RECOMPUTABLE,
}


def _check_counts(t: Tables, rec: _Recorder) -> None:
    name = "layout.counts"
    rec.get(name)
    counts = (t.manifest or {}).get("counts")
    if not isinstance(counts, dict):
        rec.skip(name, "manifest has no counts object")
        return
    by_pattern = t["clips"]["pattern"].value_counts() if t.has("clips") else None
    by_task = t["queries"]["task"].value_counts() if t.has("queries") else None

    def grouped(frame: pl.DataFrame | None, column: str) -> dict[str, int]:
        return {} if frame is None else dict(zip(frame[column].to_list(), frame["count"].to_list()))

    patterns, tasks = grouped(by_pattern, "pattern"), grouped(by_task, "task")
    unchecked: list[str] = []
    informational: list[str] = []
    for key, value in counts.items():
        match = _COUNT_ALIASES.match(key)
        if match and t.has(match.group(1)) and isinstance(value, int):
            actual = t[match.group(1)].height
            if value != actual:
                rec.violation(name, f"manifest counts.{key} = {value} but {match.group(1)}.parquet has {actual} rows")
        elif isinstance(value, dict) and value and set(value) <= set(PATTERNS) and by_pattern is not None and key not in ("tasks", "task"):
            for k, v in value.items():
                if v != patterns.get(k, 0):
                    rec.violation(name, f"manifest counts.{key}.{k} = {v} but clips.parquet has {patterns.get(k, 0)} {k} clips")
        elif isinstance(value, dict) and value and set(value) <= set(TASKS) and by_task is not None:
            for k, v in value.items():
                if v != tasks.get(k, 0):
                    rec.violation(name, f"manifest counts.{key}.{k} = {v} but queries.parquet has {tasks.get(k, 0)} {k} queries")
        elif key == "events_per_clip" and isinstance(value, dict) and all(str(k).isdigit() for k in value) and t.has("events", "clips"):
            per_clip = t["clips"].select("clip_id").join(t["events"].group_by("clip_id").len("n"), on="clip_id", how="left")
            histogram = dict(zip(*per_clip["n"].fill_null(0).value_counts().sort("n").to_dict(as_series=False).values()))
            if {int(k): v for k, v in value.items() if v} != histogram:
                rec.violation(name, f"manifest counts.events_per_clip = {value} but the tables give {histogram}")
        elif key in PATTERNS and isinstance(value, int) and "sequential" in counts and by_pattern is not None:
            # top-level pattern counts; a lone "overlap" could as well count overlap queries
            if value != patterns.get(key, 0):
                rec.violation(name, f"manifest counts.{key} = {value} but clips.parquet has {patterns.get(key, 0)} {key} clips")
        elif key in _DERIVED_COUNTS:
            expected = _DERIVED_COUNTS[key](t)
            if expected is _NOT_RECOMPUTABLE:
                informational.append(key)
            elif expected is not None and not _same_count(value, expected):
                rec.violation(name, f"manifest counts.{key} = {json.dumps(value)[:200]} but the tables give {json.dumps(expected)[:200]}")
        else:
            unchecked.append(key)
    if informational:
        rec.note(name, f"not recomputed here: {', '.join(informational)} (planner decisions; every query's hard negatives are checked by queries.hard_negatives)")
    if unchecked:
        rec.note(name, f"counts not checked (unknown meaning): {', '.join(unchecked)}")


def _check_hashes(t: Tables, rec: _Recorder) -> None:
    name = "layout.hashes"
    rec.get(name)
    hashes = (t.manifest or {}).get("hashes")
    if not isinstance(hashes, dict):
        rec.skip(name, "manifest has no hashes object")
        return
    unknown: list[str] = []
    verified = 0
    for key, value in hashes.items():
        if key == "atoms_audio":
            problem = _atoms_audio_problem(t, value)
            if problem is None:
                verified += 1
            elif problem.startswith("unverifiable"):
                unknown.append(f"atoms_audio ({problem})")
            else:
                rec.violation(name, problem)
            continue
        candidates = [t.root / key, t.root / f"{key}.parquet"]
        target = next((p for p in candidates if p.is_file()), None)
        algo, digest = None, None
        if isinstance(value, str) and re.fullmatch(r"[0-9a-fA-F]{64}", value):
            algo, digest = "sha256", value
        elif isinstance(value, str) and ":" in value:
            algo, digest = value.split(":", 1)
        elif isinstance(value, dict) and len(value) == 1:
            (algo, digest), = value.items()
        if target is None or algo is None or algo.lower() not in hashlib.algorithms_available or not isinstance(digest, str):
            unknown.append(key)
            continue
        h = hashlib.new(algo.lower())
        with open(target, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        verified += 1
        if h.hexdigest() != digest.lower():
            rec.violation(name, f"manifest hashes[{key!r}] = {digest[:16]}... but {algo}({target.name}) = {h.hexdigest()[:16]}...")
    missing = [f"{n}.parquet" for n in TABLE_COLUMNS if n != "atoms" and f"{n}.parquet" not in hashes and n not in hashes]
    rec.note(name, f"{verified} hash(es) verified")
    if unknown:
        rec.note(name, f"not verifiable (unknown scheme or not a file): {', '.join(unknown)}")
    if missing:
        rec.note(name, f"no hash recorded for {', '.join(missing)}")


def _atoms_audio_problem(t: Tables, claimed) -> str | None:
    """The atom bank's hash (sha256 of every atom's samples as little-endian float32, in atoms.parquet
    order, at the benchmark's rate) against the library named in the manifest: the embedded
    procedural one is synthesised again, a library directory is read if it is still there."""
    build = ((t.manifest or {}).get("params") or {}).get("build") or {}
    source = build.get("atoms")
    if not isinstance(claimed, str) or not isinstance(source, str) or t.sample_rate is None:
        return "unverifiable: no library named in params.build.atoms"
    from reasonaudio.atoms import AtomLibrary

    if source != "procedural" and not (Path(source) / "atoms.parquet").is_file():
        return f"unverifiable: the library {source} is not on this machine"
    try:
        library = AtomLibrary.open(source, sample_rate=int(t.sample_rate))
    except Exception as err:  # a library that cannot be read cannot confirm the hash
        return f"unverifiable: {source}: {err}"
    digest = hashlib.sha256(np.ascontiguousarray(library.audio_flat, dtype="<f4").tobytes()).hexdigest()
    if digest != claimed.lower():
        return f"manifest hashes['atoms_audio'] = {claimed[:16]}... but the atoms of {source} at {t.sample_rate} Hz hash to {digest[:16]}..."
    return None


def _clip_lengths(t: Tables) -> pl.DataFrame:
    sr = t.sample_rate
    return t["clips"].select("clip_id", (pl.col("duration_s") * sr).round(0).cast(pl.Int64).alias("clip_samples"))


def _event_pairs(t: Tables) -> pl.DataFrame:
    """Every unordered pair of events in the same clip with its common time (negative = gap), in samples."""
    ev = t["events"].select(
        "clip_id", "event_index", "label", pl.col("onset_sample").cast(pl.Int64).alias("on"), pl.col("offset_sample").cast(pl.Int64).alias("off")
    )
    pairs = ev.join(ev, on="clip_id", suffix="_b").filter(pl.col("event_index") < pl.col("event_index_b"))
    return pairs.with_columns(
        (pl.min_horizontal("off", "off_b") - pl.max_horizontal("on", "on_b")).alias("common")
    )


def _check_events(t: Tables, rec: _Recorder, margin_s: float) -> None:
    for n in ("clips.events", "events.labels", "events.times", "clips.pattern", "margin.event_gaps"):
        rec.get(n)
    if not t.has("events", "clips") or t.sample_rate is None:
        for n in ("clips.events", "events.labels", "events.times", "clips.pattern", "margin.event_gaps"):
            rec.skip(n, "needs events.parquet, clips.parquet and manifest sample_rate")
        return
    sr = t.sample_rate
    clips, events = t["clips"], t["events"]

    per_clip = events.group_by("clip_id").len("found")
    counted = clips.join(per_clip, on="clip_id", how="left").with_columns(pl.col("found").fill_null(0))
    bad_count = counted.filter((pl.col("found") < 2) | (pl.col("found") > 8))
    for row in bad_count.head(rec.max_examples).iter_rows(named=True):
        rec.violation("clips.events", f"clip {row['clip_id']}: {row['found']} events (contract: 2-8)", 0)
    rec.get("clips.events").violations += bad_count.height
    bad_n = counted.filter(pl.col("found") != pl.col("n_events"))
    for row in bad_n.head(rec.max_examples).iter_rows(named=True):
        rec.violation("clips.events", f"clip {row['clip_id']}: n_events = {row['n_events']} but events.parquet has {row['found']}", 0)
    rec.get("clips.events").violations += bad_n.height

    dup = _duplicates(events, ["clip_id", "label"])
    for row in dup.head(rec.max_examples).iter_rows(named=True):
        rec.violation("events.labels", f"clip {row['clip_id']}: label {row['label']!r} occurs {row['len']} times", 0)
    rec.get("events.labels").violations += dup.height

    timed = events.with_row_index("_row").join(_clip_lengths(t), on="clip_id", how="left")
    rules = [
        (pl.col("onset_sample") < 0, "onset_sample {onset_sample} < 0"),
        (pl.col("onset_sample") >= pl.col("offset_sample"), "onset_sample {onset_sample} >= offset_sample {offset_sample}"),
        (pl.col("offset_sample") > pl.col("clip_samples"), "offset_sample {offset_sample} > clip length {clip_samples} samples"),
        ((pl.col("onset_s") - pl.col("onset_sample") / sr).abs() > TIME_TOLERANCE_S, "onset_s {onset_s} != onset_sample/sample_rate = {onset_sample}/" + str(sr)),
        ((pl.col("offset_s") - pl.col("offset_sample") / sr).abs() > TIME_TOLERANCE_S, "offset_s {offset_s} != offset_sample/sample_rate = {offset_sample}/" + str(sr)),
    ]
    for condition, template in rules:
        bad = timed.filter(condition.fill_null(False))
        for row in bad.head(rec.max_examples).iter_rows(named=True):
            rec.violation(
                "events.times",
                f"events.parquet row {row['_row']} (clip {row['clip_id']}, event {row['event_index']}, {row['label']}): " + template.format(**row),
                0,
            )
        rec.get("events.times").violations += bad.height

    pairs = _event_pairs(t)
    overlapping = pairs.filter(pl.col("common") > 0).group_by("clip_id").len("n_overlapping")
    pattern = clips.select("clip_id", "pattern").join(overlapping, on="clip_id", how="left").with_columns(pl.col("n_overlapping").fill_null(0))
    bad_pattern = pattern.filter(~pl.col("pattern").is_in(list(PATTERNS)))
    seq_overlapping = pattern.filter((pl.col("pattern") == "sequential") & (pl.col("n_overlapping") > 0))
    ovl_none = pattern.filter((pl.col("pattern") == "overlap") & (pl.col("n_overlapping") == 0))
    for row in bad_pattern.head(rec.max_examples).iter_rows(named=True):
        rec.violation("clips.pattern", f"clip {row['clip_id']}: pattern {row['pattern']!r} (expected sequential or overlap)", 0)
    for row in seq_overlapping.head(rec.max_examples).iter_rows(named=True):
        first = pairs.filter((pl.col("clip_id") == row["clip_id"]) & (pl.col("common") > 0)).row(0, named=True)
        rec.violation("clips.pattern", f"clip {row['clip_id']}: sequential but {first['label']} and {first['label_b']} overlap by {first['common'] / sr:.3f} s", 0)
    for row in ovl_none.head(rec.max_examples).iter_rows(named=True):
        rec.violation("clips.pattern", f"clip {row['clip_id']}: pattern overlap but no two events overlap", 0)
    rec.get("clips.pattern").violations += bad_pattern.height + seq_overlapping.height + ovl_none.height

    slack = 2 * margin_s * sr
    close = pairs.filter(pl.col("common").cast(pl.Float64).abs() <= slack).sort("clip_id", "event_index", "event_index_b")
    for row in close.head(rec.max_examples).iter_rows(named=True):
        relation = f"overlap by {row['common'] / sr:.3f} s" if row["common"] > 0 else f"are {-row['common'] / sr:.3f} s apart"
        rec.violation(
            "margin.event_gaps",
            f"clip {row['clip_id']}: {row['label']} [{row['on'] / sr:.3f}-{row['off'] / sr:.3f} s] and {row['label_b']} "
            f"[{row['on_b'] / sr:.3f}-{row['off_b'] / sr:.3f} s] {relation} (need more than {2 * margin_s:g} s either way)",
            0,
        )
    rec.get("margin.event_gaps").violations += close.height


def _parsed_queries(t: Tables, rec: _Recorder) -> dict[str, tuple[str, list[Constraint]]]:
    """query_id -> (task, constraints) for every query whose logic parses; reports logic and shape problems."""
    rec.get("queries.logic")
    rec.get("queries.task_shape")
    parsed: dict[str, tuple[str, list[Constraint]]] = {}
    if not t.has("queries"):
        rec.skip("queries.logic", "queries.parquet unusable")
        rec.skip("queries.task_shape", "queries.parquet unusable")
        return parsed
    labels = set(t["atoms"]["label"].to_list()) if t.has("atoms") else None
    for row in t["queries"].with_row_index("_row").iter_rows(named=True):
        qid = row["query_id"]
        try:
            constraints = parse_logic(row["logic"])
        except LogicError as err:
            rec.violation("queries.logic", f"queries.parquet row {row['_row']} (query {qid}): logic {err}")
            continue
        if labels is not None:
            unknown = sorted({l for c in constraints for l in c.labels} - labels)
            if unknown:
                rec.violation("queries.logic", f"query {qid}: unknown label(s) {', '.join(unknown)} (not in atoms.parquet)")
        problem = task_shape_problem(row["task"], constraints)
        if problem:
            rec.violation("queries.task_shape", f"query {qid} ({row['task']}): {problem}; logic {row['logic']}")
        parsed[qid] = (row["task"], constraints)
    return parsed


def _check_relevance(t: Tables, rec: _Recorder, margin_s: float, parsed: dict[str, tuple[str, list[Constraint]]]) -> None:
    names = ("relevance.qrels", "margin.relevance", "queries.positives", "queries.hard_negatives", "mc.pairs")
    for n in names:
        rec.get(n)
    if not t.has("events", "clips", "queries") or t.sample_rate is None:
        for n in names:
            rec.skip(n, "needs events, clips and queries tables and the manifest sample_rate")
        return
    sr = t.sample_rate
    clip_ids = t["clips"]["clip_id"].to_list()
    index = EventIndex(t["events"], clip_ids, sr)
    slack = 2 * margin_s * sr
    clip_array = np.array(clip_ids, dtype=object)

    expected_q: list[np.ndarray] = []
    expected_c: list[np.ndarray] = []
    relevant_sets: dict[str, np.ndarray] = {}
    hard_sets: dict[str, np.ndarray] = {}
    near_thresholds = 0
    for qid, (task, constraints) in parsed.items():
        truth = index.evaluate(constraints, slack)
        relevant = truth.nominal
        rel_idx = np.flatnonzero(relevant)
        expected_q.append(np.full(rel_idx.size, qid, dtype=object))
        expected_c.append(clip_array[rel_idx])
        relevant_sets[qid] = relevant

        unstable = np.flatnonzero(truth.robust != truth.possible)
        if unstable.size:
            clip = int(unstable[0])
            shaky = []
            for c in constraints:
                tc = index.truth(c, slack)
                if tc.robust[clip] != tc.possible[clip]:
                    shaky.append(c)
            detail = "; ".join(index.explain(c, clip) for c in shaky)
            rec.violation(
                "margin.relevance",
                f"query {qid} ({task}), clip {clip_ids[clip]}: relevance {int(relevant[clip])} can flip when times move by "
                f"{margin_s:g} s ({detail}){f'; {unstable.size - 1} more clip(s)' if unstable.size > 1 else ''}",
                int(unstable.size),
            )
        for c in constraints:
            if c.kind == "duration":
                tc = index.truth(c, slack)
                near_thresholds += int(np.count_nonzero(tc.robust != tc.possible))

        positive = sorted({l for c in constraints for l in c.positive_labels})
        candidate = np.ones(index.n_clips, dtype=bool)
        for label in positive:
            candidate &= index.present(label)
        hard = candidate & ~relevant
        hard_sets[qid] = hard
        if not relevant.any():
            rec.violation("queries.positives", f"query {qid} ({task}): no relevant clip for {' & '.join(map(str, constraints))}")
        if not hard.any():
            rec.violation(
                "queries.hard_negatives",
                f"query {qid} ({task}): no hard negative — all {int(candidate.sum())} clip(s) containing {', '.join(positive) or '(no label)'} are relevant",
            )
    recorded = ((t.manifest or {}).get("params") or {}).get("margin_s")
    if isinstance(recorded, (int, float)) and not math.isclose(recorded, margin_s):
        rec.note("margin.relevance", f"checked with m = {margin_s:g} s; the manifest records params.margin_s = {recorded:g} s")
    if near_thresholds and not rec.get("margin.relevance").violations:
        rec.note("margin.relevance", f"{near_thresholds} (duration constraint, clip) pair(s) sit within 2m of a threshold without changing relevance")

    if t.has("queries") and len(parsed) < t["queries"].height:
        rec.note("relevance.qrels", f"{t['queries'].height - len(parsed)} query(ies) with unparsable logic not compared (see queries.logic)")
    _compare_qrels(t, rec, expected_q, expected_c, set(parsed))
    _check_mc(t, rec, relevant_sets, hard_sets, {c: i for i, c in enumerate(clip_ids)})


def _compare_qrels(t: Tables, rec: _Recorder, expected_q: list[np.ndarray], expected_c: list[np.ndarray], evaluated: set[str]) -> None:
    name = "relevance.qrels"
    if not t.has("qrels"):
        rec.skip(name, "qrels.parquet unusable")
        return
    qrels = t["qrels"].with_row_index("_row")
    not_one = qrels.filter(pl.col("relevance") != 1)
    for row in not_one.head(rec.max_examples).iter_rows(named=True):
        rec.violation(name, f"qrels.parquet row {row['_row']}: ({row['query_id']}, {row['clip_id']}) has relevance {row['relevance']} (v1 lists relevant pairs only, relevance = 1)", 0)
    rec.get(name).violations += not_one.height
    expected = pl.DataFrame(
        {
            "query_id": np.concatenate(expected_q).tolist() if expected_q else [],
            "clip_id": np.concatenate(expected_c).tolist() if expected_c else [],
        },
        schema={"query_id": pl.String, "clip_id": pl.String},
    )
    listed = qrels.filter(pl.col("query_id").is_in(list(evaluated)))
    missing = expected.join(listed, on=["query_id", "clip_id"], how="anti").sort("query_id", "clip_id")
    extra = listed.join(expected, on=["query_id", "clip_id"], how="anti").sort("query_id", "clip_id")
    for row in missing.head(rec.max_examples).iter_rows(named=True):
        rec.violation(name, f"missing from qrels.parquet: ({row['query_id']}, {row['clip_id']}) is relevant by §2", 0)
    for row in extra.head(rec.max_examples).iter_rows(named=True):
        rec.violation(name, f"extra in qrels.parquet row {row['_row']}: ({row['query_id']}, {row['clip_id']}) is not relevant by §2", 0)
    rec.get(name).violations += missing.height + extra.height
    rec.note(name, f"{expected.height} relevant pair(s) recomputed, {missing.height} missing, {extra.height} extra")


def _check_mc(t: Tables, rec: _Recorder, relevant: dict[str, np.ndarray], hard: dict[str, np.ndarray], position: dict[str, int]) -> None:
    name = "mc.pairs"
    if not t.has("mc", "queries"):
        rec.skip(name, "mc.parquet or queries.parquet unusable")
        return
    mc = t["mc"].with_row_index("_row")
    dup = _duplicates(mc, ["query_id"])
    for row in dup.head(rec.max_examples).iter_rows(named=True):
        rec.violation(name, f"mc.parquet: query {row['query_id']} has {row['len']} rows (expected one)", 0)
    rec.get(name).violations += dup.height
    absent = t["queries"].join(mc, on="query_id", how="anti")
    for row in absent.head(rec.max_examples).iter_rows(named=True):
        rec.violation(name, f"mc.parquet: no pair for query {row['query_id']}", 0)
    rec.get(name).violations += absent.height
    for row in mc.iter_rows(named=True):
        qid, pos, neg = row["query_id"], row["positive_clip_id"], row["negative_clip_id"]
        if qid not in relevant:
            continue  # unknown query (layout.references) or unparsable logic (queries.logic)
        where = f"mc.parquet row {row['_row']} (query {qid})"
        if pos in position and not relevant[qid][position[pos]]:
            rec.violation(name, f"{where}: positive {pos} is not relevant")
        if neg in position:
            if relevant[qid][position[neg]]:
                rec.violation(name, f"{where}: negative {neg} is relevant")
            elif not hard[qid][position[neg]]:
                rec.violation(name, f"{where}: negative {neg} is not a hard negative (lacks a positively mentioned label)")


# -------------------------------------------------------------------------------------------- audio


def _background_recorded(manifest: dict | None) -> bool:
    """A background bed, if any, is recorded in the manifest (top level or params)."""
    if not manifest:
        return False
    for holder in (manifest, manifest.get("params") if isinstance(manifest.get("params"), dict) else {}):
        value = holder.get("background")
        if value not in (None, False, "", "none", "None", 0, {}):
            return True
    return False


def _check_audio(t: Tables, rec: _Recorder, max_audio_files: int | None, audible_dbfs: float, show_progress: bool = False) -> None:
    import soundfile as sf

    names = ("audio.readable", "audio.range", "audio.background", "audio.audible")
    for n in names:
        rec.get(n)
    if not t.has("clips", "events") or t.sample_rate is None:
        for n in names:
            rec.skip(n, "needs clips and events tables and the manifest sample_rate")
        return
    sr = t.sample_rate
    check_background = not _background_recorded(t.manifest)
    if not check_background:
        rec.skip("audio.background", "the manifest records a background bed")
    audible_amp = 10.0 ** (audible_dbfs / 20.0)
    window = max(1, int(round(AUDIBLE_WINDOW_S * sr)))

    clips = t["clips"].sort("clip_id")
    if max_audio_files is not None and clips.height > max_audio_files:
        rec.note("audio.readable", f"checked the first {max_audio_files} of {clips.height} clips (by clip_id)")
        clips = clips.head(max_audio_files)
    events = t["events"].select(
        "clip_id", "label", pl.col("onset_sample").cast(pl.Int64), pl.col("offset_sample").cast(pl.Int64)
    ).sort("clip_id", "onset_sample")
    ev_clip = events["clip_id"].to_numpy()
    ev_label = events["label"].to_list()
    ev_on, ev_off = events["onset_sample"].to_numpy(), events["offset_sample"].to_numpy()

    n_checked = 0
    from tqdm.auto import tqdm

    rows = clips.select("clip_id", "path", "duration_s")
    for clip_id, rel_path, duration_s in tqdm(rows.iter_rows(), total=rows.height, desc="audio", unit="clip", disable=not show_progress, leave=False):
        path = t.root / rel_path
        where = f"clip {clip_id} ({rel_path})"
        try:
            with sf.SoundFile(path) as fh:
                channels, rate, frames, subtype = fh.channels, fh.samplerate, fh.frames, fh.subtype
                data = fh.read(dtype="float32", always_2d=True)
        except (OSError, RuntimeError, sf.LibsndfileError) as err:
            rec.violation("audio.readable", f"{where}: not readable ({str(err)[:120]})")
            continue
        n_checked += 1
        expected = int(round(duration_s * sr))
        problems = []
        if channels != 1:
            problems.append(f"{channels} channels (expected mono)")
        if rate != sr:
            problems.append(f"sample rate {rate} Hz (manifest says {sr})")
        if abs(frames - expected) > 1:
            problems.append(f"{frames} samples, expected {expected} (= {duration_s:g} s x {sr} Hz)")
        if problems:
            rec.violation("audio.readable", f"{where}: " + "; ".join(problems))
        x = data[:, 0]

        if not np.isfinite(x).all():
            bad = ~np.isfinite(x)
            rec.violation("audio.range", f"{where}: {int(bad.sum())} non-finite sample(s), first at {int(np.flatnonzero(bad)[0]) / sr:.3f} s")
            x = np.nan_to_num(x, nan=0.0, posinf=0.0, neginf=0.0)
        magnitude = np.abs(x)
        if magnitude.size and magnitude.max() > 1.0:
            over = np.flatnonzero(magnitude > 1.0)
            rec.violation(
                "audio.range",
                f"{where}: {over.size} sample(s) outside [-1, 1] ({subtype}), first at {over[0] / sr:.3f} s = {x[over[0]]:.4f}",
            )

        lo, hi = np.searchsorted(ev_clip, clip_id, "left"), np.searchsorted(ev_clip, clip_id, "right")
        if lo == hi:
            continue
        spans = [(ev_label[i], int(min(max(ev_on[i], 0), x.size)), int(min(max(ev_off[i], 0), x.size))) for i in range(lo, hi)]
        if check_background:
            loud = magnitude > SILENCE_ABS
            for _, a, b in spans:
                loud[a:b] = False
            if loud.any():
                outside = np.ones(x.size, dtype=bool)
                for _, a, b in spans:
                    outside[a:b] = False
                rec.violation(
                    "audio.background",
                    f"{where}: {int(loud.sum())} sample(s) above {SILENCE_ABS:g} outside every event, "
                    f"first at {int(np.flatnonzero(loud)[0]) / sr:.3f} s, peak {float(magnitude[outside].max()):.4f}",
                )
        power = x * x
        for label, a, b in spans:
            segment = power[a:b]
            if segment.size == 0:
                loudest = 0.0
            elif segment.size <= window:
                loudest = float(np.sqrt(segment.mean(dtype=np.float64)))
            else:
                frames_of = segment[: segment.size // window * window].reshape(-1, window)
                loudest = float(np.sqrt(frames_of.mean(axis=1, dtype=np.float64).max()))
            if loudest < audible_amp:
                level = 20 * math.log10(loudest) if loudest > 0 else -math.inf
                rec.violation(
                    "audio.audible",
                    f"{where}: {label} [{a / sr:.3f}-{b / sr:.3f} s] peaks at {level:.1f} dBFS RMS (50 ms), below {audible_dbfs:g} dBFS",
                )
    rec.note("audio.readable", f"{n_checked} file(s) read")
    rec.get("audio.audible").description = f"inside every event the loudest 50 ms reaches {audible_dbfs:g} dBFS RMS (§3.6)"


# --------------------------------------------------------------------------------------------- beir


def _read_jsonl(path: Path, rec: _Recorder, check: str) -> list[dict] | None:
    rows = []
    try:
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError as err:
                    rec.violation(check, f"{path.name} line {lineno}: invalid JSON ({err.msg})")
                    continue
                if not isinstance(row, dict) or not isinstance(row.get("_id"), str):
                    rec.violation(check, f"{path.name} line {lineno}: expected an object with a string _id")
                    continue
                row["_line"] = lineno
                rows.append(row)
    except (OSError, UnicodeDecodeError) as err:
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


# ------------------------------------------------------------------------------------------- driver


def validate_benchmark(
    path: str | Path,
    margin_s: float = 0.25,
    check_audio: bool = True,
    max_audio_files: int | None = None,
    *,
    audible_dbfs: float = DEFAULT_AUDIBLE_DBFS,
    max_examples: int = 10,
    progress=None,
) -> ValidationReport:
    """Check a benchmark directory against every guarantee of the contract; never raises on bad content.

    Missing or unreadable files, missing columns and wrong column types are listed in `report.fatal`
    (checks that need them are skipped); a path that is not a directory is a UserError.
    """
    root = Path(path)
    if not root.is_dir():
        raise UserError(f"{root}: not a directory")
    if not (margin_s >= 0 and math.isfinite(margin_s)):
        raise UserError(f"margin must be a finite number >= 0 seconds, got {margin_s}")
    started = time.perf_counter()
    rec = _Recorder(max_examples)
    stage = progress or (lambda what: None)
    stage("reading tables")
    t = _read_tables(root, rec)
    _check_manifest(t, rec)
    _check_ids(t, rec)
    _check_references(t, rec)
    stage("checking counts and hashes")
    _check_counts(t, rec)
    _check_hashes(t, rec)
    stage("checking events")
    _check_events(t, rec, margin_s)
    stage("recomputing relevance and margin robustness")
    parsed = _parsed_queries(t, rec)
    _check_relevance(t, rec, margin_s, parsed)
    if check_audio:
        stage("reading audio")
    if check_audio:
        _check_audio(t, rec, max_audio_files, audible_dbfs, show_progress=progress is not None)
    else:
        for n in ("audio.readable", "audio.range", "audio.background", "audio.audible"):
            rec.skip(n, "--no-audio")
    _check_beir(t, rec)
    order = list(CHECK_DESCRIPTIONS)
    checks = sorted(rec.checks.values(), key=lambda c: order.index(c.name) if c.name in order else len(order))
    return ValidationReport(root, checks, t.fatal, margin_s, time.perf_counter() - started)
