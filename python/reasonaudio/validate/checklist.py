"""The validator's named checks, their descriptions and thresholds, and the report they fill."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reasonaudio.contract import AUDIBLE_DBFS, AUDIBLE_WINDOW_S  # noqa: F401  (AUDIBLE_WINDOW_S re-exported)

TIME_TOLERANCE_S = 1e-9  # onset_s must equal onset_sample / sample_rate within this
DEFAULT_AUDIBLE_DBFS = AUDIBLE_DBFS

CHECK_DESCRIPTIONS: dict[str, str] = {
    "layout.files": "every §4 file is present and readable",
    "layout.columns": "required columns present with sane types, no nulls",
    "layout.manifest": "manifest has format_version, tool_version, seed, sample_rate, params, counts, hashes",
    "layout.ids": "ids unique (atom_id, clip_id, query_id, event, qrels pair); a label's exemplars share one phrase (v2), labels unique in v1",
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
    "audio.hashes": "every clip file matches its sha256 in audio.sha256 (written by build and merge)",
    "scene.layout": "v3: manifest scene object, §5 columns and tables, bed/room files with their hashes",
    "scene.bed_labels": "no bed label equals, contains or is contained in a vocabulary label (word level)",
    "scene.rooms": "tail_s recomputed from each stored response (Schroeder, 20 dB) matches rooms/clips",
    "scene.tail_margin": "with a room, events overlap by > 2m or are apart by > 2m + tail_s, and duration thresholds sit > 2m + tail_s above and > 2m below event durations (§5)",
    "scene.voicing": "events' pitch_semitones and stretch within the scene's --pitch/--stretch/--varispeed ranges (0 and 1 without)",
    "scene.snr": "every event's SNR over its dry extent >= background_snr_db (bed level measured in the audio)",
    "scene.bed_alone": "outside every event and room tail the audio is the bed alone",
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
