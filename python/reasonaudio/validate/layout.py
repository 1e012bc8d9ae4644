"""Checks of the layout (§4): manifest, ids, exemplars, references, counts, hashes."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterable

import numpy as np
import polars as pl

from reasonaudio.contract import (
    ATOM_SPLITS,
    FORMAT_VERSIONS,
    MANIFEST_KEYS,
    PATTERNS,
    TASKS,
)
from reasonaudio.contract import TABLE_SCHEMAS
from reasonaudio.contract.reference import summary_stats
from reasonaudio.errors import UserError
from reasonaudio.validate.selection import AudioSelection
from reasonaudio.validate.checklist import _Recorder
from reasonaudio.validate.tables import Tables

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
    if "format_version" in m and str(m["format_version"]) not in FORMAT_VERSIONS:
        rec.violation(name, f"manifest.json: format_version {m['format_version']!r} is not one this validator knows ({', '.join(FORMAT_VERSIONS)})")


def _duplicates(frame: pl.DataFrame, columns: list[str]) -> pl.DataFrame:
    """Every key of `columns` that occurs more than once, with its count (`len`), sorted by key.

    A group-by over millions of string keys (qrels' pairs) costs gigabytes of hash table; the rows
    are first screened by a 64-bit hash of their key, sorted in numpy (8 bytes a row), and only the
    rows whose hash repeats (every duplicate, and the rare collision) are grouped by their keys."""
    key = pl.lit(0, dtype=pl.UInt64)
    for seed, column in enumerate(columns):
        # odd multiplier: the hashes of the key's columns do not cancel when two of them are equal
        key = key * 0x9E3779B97F4A7C15 + pl.col(column).hash(seed)
    hashes = frame.select(key.alias("_key"))["_key"].to_numpy()
    ordered = np.sort(hashes)
    repeated = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
    del ordered
    candidates = frame.select(columns).filter(pl.Series(np.isin(hashes, repeated)))
    return candidates.group_by(columns).len().filter(pl.col("len") > 1).sort(columns)


def _check_ids(t: Tables, rec: _Recorder) -> None:
    name = "layout.ids"
    rec.get(name)
    if t.has("atoms"):
        _check_exemplars(t, rec)
    keys = {
        "atoms": [["atom_id"]],
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


def _check_exemplars(t: Tables, rec: _Recorder) -> None:
    """Contract v2 §1: several atoms may share a label (exemplars) but then share its phrase; an
    atom's split is train or test. A v1 benchmark keeps labels unique."""
    name = "layout.ids"
    atoms = t["atoms"]
    version = str((t.manifest or {}).get("format_version", "2"))
    if version == "1":
        dup = _duplicates(atoms, ["label"])
        for row in dup.head(rec.max_examples).iter_rows(named=True):
            rec.violation(name, f"atoms.parquet: label={row['label']} occurs {row['len']} times (format_version 1 has one atom per label; exemplars need format_version 2)", 0)
        rec.get(name).violations += dup.height
    if "phrase" in atoms.columns:
        mixed = atoms.group_by("label").agg(pl.col("phrase").unique().sort().alias("phrases")).filter(pl.col("phrases").list.len() > 1).sort("label")
        for row in mixed.head(rec.max_examples).iter_rows(named=True):
            rec.violation(name, f"atoms.parquet: exemplars of label {row['label']!r} have different phrases {row['phrases']}", 0)
        rec.get(name).violations += mixed.height
    if "split" in atoms.columns:
        bad = atoms.with_row_index("_row").filter(pl.col("split").is_not_null() & ~pl.col("split").cast(pl.Utf8).is_in(list(ATOM_SPLITS) + [""]))
        for row in bad.head(rec.max_examples).iter_rows(named=True):
            rec.violation(name, f"atoms.parquet row {row['_row']}: split {row['split']!r}; expected one of {', '.join(ATOM_SPLITS)}", 0)
        rec.get(name).violations += bad.height


def _streamed(frame: pl.LazyFrame) -> pl.DataFrame:
    """`frame` run by polars' streaming engine (batches of rows through the joins: tens of MB where a
    joined copy of a million-clip table takes ~1 GB), in the order of its `_row` column."""
    return frame.collect(engine="streaming").sort("_row")


def _check_references(t: Tables, rec: _Recorder) -> None:
    name = "layout.references"
    rec.get(name)
    if t.has("events", "clips"):
        orphans = _streamed(
            t["events"].lazy().select("clip_id", "event_index").with_row_index("_row").join(t["clips"].lazy().select("clip_id"), on="clip_id", how="anti")
        )
        for row in orphans.head(rec.max_examples).iter_rows(named=True):
            rec.violation(name, f"events.parquet: clip_id {row['clip_id']} (event {row['event_index']}) is not in clips.parquet", 0)
        rec.get(name).violations += orphans.height
    if t.has("events", "atoms"):
        joined = _streamed(
            t["events"].lazy().select("clip_id", "event_index", "atom_id", "label").with_row_index("_row")
            .join(t["atoms"].lazy().select("atom_id", pl.col("label").alias("atom_label")), on="atom_id", how="left")
            .filter(pl.col("atom_label").is_null() | (pl.col("atom_label") != pl.col("label")))
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
        known = t[target].lazy().select(pl.col(target_column).alias(column))
        orphans = _streamed(t[table].lazy().select(column).with_row_index("_row").join(known, on=column, how="anti"))
        for row in orphans.head(rec.max_examples).iter_rows(named=True):
            rec.violation(name, f"{table}.parquet row {row['_row']}: {column} {row[column]} is not in {target}.parquet", 0)
        rec.get(name).violations += orphans.height


_COUNT_ALIASES = re.compile(r"^(?:n_|num_)?(atoms|clips|events|queries|qrels|mc)(?:_count|_rows|_pairs)?$")


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
    per = t["queries"].lazy().select("query_id").join(
        t["qrels"].lazy().select("query_id").group_by("query_id").len("n"), on="query_id", how="left", maintain_order="left"
    ).collect(engine="streaming")
    return summary_stats(per["n"].fill_null(0).to_numpy().astype(float)) if per.height else None


def _count_clip_durations(t: Tables):
    if not t.has("clips") or not isinstance((t.manifest or {}).get("counts", {}).get("clip_duration_s"), dict):
        return None
    durations = t["clips"]["duration_s"].to_numpy().astype(float)
    claimed = t.manifest["counts"]["clip_duration_s"]
    expected = summary_stats(durations)
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
            per_clip = t["clips"].lazy().select("clip_id").join(t["events"].lazy().select("clip_id").group_by("clip_id").len("n"), on="clip_id", how="left")
            histogram = dict(zip(*per_clip.select(pl.col("n").fill_null(0)).collect(engine="streaming")["n"].value_counts().sort("n").to_dict(as_series=False).values()))
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


def _start_hashes(t: Tables, rec: _Recorder) -> Callable[[], None]:
    """Starts the hash checks; the returned call finishes them and records what they found.

    The atom bank's hash needs the library synthesised again (about a second of one core for the
    procedural one, in Rust with the GIL released): it runs on a thread of its own while the other
    checks go on, and is waited for only when the findings are recorded."""
    name = "layout.hashes"
    rec.get(name)
    hashes = (t.manifest or {}).get("hashes")
    if not isinstance(hashes, dict):
        rec.skip(name, "manifest has no hashes object")
        return lambda: None
    atoms: Future | None = None
    pool: ThreadPoolExecutor | None = None
    if "atoms_audio" in hashes:
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="atoms-hash")
        atoms = pool.submit(_atoms_audio_problem, t, hashes["atoms_audio"])
        pool.shutdown(wait=False)

    def finish() -> None:
        _record_hashes(t, rec, hashes, atoms)

    return finish


def _record_hashes(t: Tables, rec: _Recorder, hashes: dict, atoms: Future | None) -> None:
    name = "layout.hashes"
    unknown: list[str] = []
    verified = 0
    for key, value in hashes.items():
        if key == "atoms_audio":
            assert atoms is not None
            problem = atoms.result()
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
        if algo is None or algo.lower() not in hashlib.algorithms_available or not isinstance(digest, str):
            unknown.append(key)
            continue
        if target is None:  # the build hashed a file that is gone: nothing can vouch for it
            rec.violation(name, f"manifest hashes[{key!r}]: {' or '.join(p.name for p in candidates[:1 if '.' in key else 2])} is missing")
            continue
        h = hashlib.new(algo.lower())
        with open(target, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        verified += 1
        if h.hexdigest() != digest.lower():
            rec.violation(name, f"manifest hashes[{key!r}] = {digest[:16]}... but {algo}({target.name}) = {h.hexdigest()[:16]}...")
    missing = [f"{n}.parquet" for n in TABLE_SCHEMAS if n != "atoms" and f"{n}.parquet" not in hashes and n not in hashes]
    rec.note(name, f"{verified} hash(es) verified")
    if unknown:
        rec.note(name, f"not verifiable (unknown scheme): {', '.join(unknown)}")
    if missing:
        rec.note(name, f"no hash recorded for {', '.join(missing)}")


def _atoms_audio_problem(t: Tables, claimed) -> str | None:
    """The atom bank's hash (sha256 of every atom's samples as little-endian float32, in atoms.parquet
    order, at the benchmark's rate) against the library named in the manifest: the embedded
    procedural one is synthesised again, a library directory is read if it is still there."""
    params = (t.manifest or {}).get("params")  # a malformed manifest is reported by layout.manifest
    build = params.get("build") if isinstance(params, dict) else None
    build = build if isinstance(build, dict) else {}
    source = build.get("atoms")
    if not isinstance(claimed, str) or not isinstance(source, str) or t.sample_rate is None:
        return "unverifiable: no library named in params.build.atoms"
    from reasonaudio.atoms import AtomLibrary

    if source != "procedural" and not (Path(source) / "atoms.parquet").is_file():
        return f"unverifiable: the library {source} is not on this machine"
    from reasonaudio.atoms.exemplars import select_split

    try:
        library = select_split(AtomLibrary.open(source, sample_rate=int(t.sample_rate)), build.get("exemplar_split", "all"))
    except Exception as err:  # a library that cannot be read cannot confirm the hash
        return f"unverifiable: {source}: {err}"
    digest = hashlib.sha256(np.ascontiguousarray(library.audio_flat, dtype="<f4").tobytes()).hexdigest()
    if digest != claimed.lower():
        return f"manifest hashes['atoms_audio'] = {claimed[:16]}... but the atoms of {source} at {t.sample_rate} Hz hash to {digest[:16]}..."
    return None


def _check_audio_hashes(t: Tables, rec: _Recorder, selection: AudioSelection | int | None = None, digests: dict[str, str] | None = None) -> None:
    """Every clip file against audio.sha256: the audio checks see peaks, silence and audibility, not
    a few hundred flipped bytes inside an event; the hashes do. `digests` ({path: sha256}) are those
    the audio checks took while reading the files; a file not among them is read here."""
    from reasonaudio.io.audio_hashes import AUDIO_HASHES, read_audio_hashes, sha256_bytes_of

    name = "audio.hashes"
    rec.get(name)
    try:
        recorded = read_audio_hashes(t.root)
    except UserError as err:
        rec.violation(name, str(err))
        return
    if recorded is None:  # an optional extra file (§4): its absence breaks nothing, and nothing is compared
        rec.note(name, f"no {AUDIO_HASHES} (a build before it existed, or a hand-made benchmark): nothing to compare")
        return
    if not t.has("clips"):
        rec.skip(name, "needs clips.parquet")
        return
    paths = [str(p) for p in t["clips"]["path"].to_list()]
    unlisted = [p for p in paths if p not in recorded]
    for p in unlisted[: rec.max_examples]:
        rec.violation(name, f"{p}: not listed in {AUDIO_HASHES}", 0)
    rec.get(name).violations += len(unlisted)
    listed = t["clips"].select("clip_id", pl.col("path").cast(pl.String)).sort("clip_id", maintain_order=True)
    listed = listed.filter(pl.col("path").is_in(list(recorded)))
    checked = 0
    for p in AudioSelection.of(selection).pick(listed)["path"].to_list():
        file = t.root / p
        if not file.is_file():
            continue  # audio.readable reports a missing file
        checked += 1
        if ((digests or {}).get(p) or sha256_bytes_of(file)) != recorded[p]:
            rec.violation(name, f"{p}: sha256 differs from {AUDIO_HASHES} (the file changed after the build)")
    rec.note(name, f"{checked} file(s) hashed")
