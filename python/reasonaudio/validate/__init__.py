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

import math
import time
from pathlib import Path

from reasonaudio.contract import (  # noqa: F401  (re-exported: the validator's names of the contract's facts)
    ATOM_SPLITS,
    BEIR_FILES,
    DEFAULT_MARGIN_S,
    BEIR_QRELS_HEADER,
    FORMAT_VERSIONS,
    MANIFEST_KEYS,
    PATTERNS,
    SILENCE_ABS,
    TASKS,
)
from reasonaudio.contract import TABLE_COLUMNS, TABLE_SCHEMAS  # noqa: F401
from reasonaudio.contract.logic import (  # noqa: F401
    Constraint,
    LogicError,
    parse_logic,
    task_shape_problem,
)
from reasonaudio.contract.reference import EventIndex, Truth  # noqa: F401
from reasonaudio.errors import UserError
from reasonaudio.validate.audio import _check_audio
from reasonaudio.validate.selection import AudioSelection
from reasonaudio.validate.beir import _check_beir
from reasonaudio.validate.checklist import (  # noqa: F401  (public names of the validator)
    AUDIBLE_WINDOW_S,
    CHECK_DESCRIPTIONS,
    DEFAULT_AUDIBLE_DBFS,
    TIME_TOLERANCE_S,
    Check,
    ValidationReport,
    _Recorder,
)
from reasonaudio.validate.events import _check_events
from reasonaudio.validate.layout import (
    _check_audio_hashes,
    _check_counts,
    _check_ids,
    _check_manifest,
    _check_references,
    _start_hashes,
)
from reasonaudio.validate.relevance import _check_relevance, _parsed_queries
from reasonaudio.validate.scene import _check_scene
from reasonaudio.validate.tables import Tables, _read_tables, open_benchmark  # noqa: F401

__all__ = [
    "Check", "Constraint", "EventIndex", "LogicError", "Tables", "Truth", "ValidationReport",
    "open_benchmark", "parse_logic", "task_shape_problem", "validate_benchmark",
    "TASKS", "PATTERNS", "MANIFEST_KEYS", "TABLE_COLUMNS", "TABLE_SCHEMAS", "BEIR_FILES", "BEIR_QRELS_HEADER", "SILENCE_ABS",
    "FORMAT_VERSIONS", "ATOM_SPLITS", "DEFAULT_AUDIBLE_DBFS",
]

# ------------------------------------------------------------------------------------------- driver


def validate_benchmark(
    path: str | Path,
    margin_s: float = DEFAULT_MARGIN_S,
    check_audio: bool = True,
    max_audio_files: int | None = None,
    *,
    audio_sample: int | None = None,
    audible_dbfs: float = DEFAULT_AUDIBLE_DBFS,
    max_examples: int = 10,
    progress=None,
) -> ValidationReport:
    """Check a benchmark directory against every guarantee of the contract; never raises on bad content.

    The audio checks read every clip, the first `max_audio_files` by clip id, or `audio_sample`
    clips evenly spaced over the clip ids (the first and the last among them).
    Missing or unreadable files, missing columns and wrong column types are listed in `report.fatal`
    (checks that need them are skipped); a path that is not a directory is a UserError.
    """
    root = Path(path)
    if not root.is_dir():
        raise UserError(f"{root}: not a directory")
    if not (margin_s >= 0 and math.isfinite(margin_s)):
        raise UserError(f"margin must be a finite number >= 0 seconds, got {margin_s}")
    try:
        selection = AudioSelection(first=max_audio_files, sample=audio_sample)
    except ValueError as err:
        raise UserError(f"audio files to check: {err}") from None
    from threadpoolctl import threadpool_limits

    # One BLAS thread: the checks' numpy dot products are over single clips (~10^5 samples), where
    # OpenBLAS's threads only spin-wait for a busy core — the §5 check of 2,000 clips took 190 s
    # beside one other job, 7 s on one BLAS thread. The validator reads files on threads of its own.
    with threadpool_limits(limits=1, user_api="blas"):
        return _validate(root, margin_s, check_audio, selection, audible_dbfs, max_examples, progress)


def _validate(root: Path, margin_s: float, check_audio: bool, selection: AudioSelection, audible_dbfs: float,
              max_examples: int, progress) -> ValidationReport:
    started = time.perf_counter()
    rec = _Recorder(max_examples)
    stage = progress or (lambda what: None)
    stage("reading tables")
    t = _read_tables(root, rec, coded=True)
    _check_manifest(t, rec)
    _check_ids(t, rec)
    _check_references(t, rec)
    stage("checking counts and hashes")
    _check_counts(t, rec)
    # the atom bank's hash is recomputed on a thread of its own meanwhile (see _start_hashes)
    finish_hashes = _start_hashes(t, rec)
    stage("checking events")
    _check_events(t, rec, margin_s)
    stage("recomputing relevance and margin robustness")
    parsed = _parsed_queries(t, rec)
    _check_relevance(t, rec, margin_s, parsed)
    if check_audio:
        stage("reading audio")
        digests = _check_audio(t, rec, selection, audible_dbfs, show_progress=progress is not None)
        _check_audio_hashes(t, rec, selection, digests)
    else:
        for n in ("audio.readable", "audio.range", "audio.background", "audio.audible", "audio.hashes"):
            rec.skip(n, "--no-audio")
    stage("checking the scene (§5)")
    _check_scene(t, rec, margin_s, selection, check_audio)
    _check_beir(t, rec)
    finish_hashes()
    order = list(CHECK_DESCRIPTIONS)
    checks = sorted(rec.checks.values(), key=lambda c: order.index(c.name) if c.name in order else len(order))
    return ValidationReport(root, checks, t.fatal, margin_s, time.perf_counter() - started)
