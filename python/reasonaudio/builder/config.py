"""Every parameter of a build (recorded in the manifest) and the planner's parameters they imply."""

from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import asdict, dataclass, field

from reasonaudio import _core
from reasonaudio.contract import MAX_SAMPLE_RATE, MIN_SAMPLE_RATE
from reasonaudio.errors import UserError

AUDIO_FORMATS = {"wav16": ".wav", "wav_f32": ".wav", "flac16": ".flac"}
# Rendering is CPU-bound: more threads than cores only adds scheduling (1,000 threads ran 10x slower
# than 2); output never depends on the count, so the cap only refuses nonsense.
MAX_THREADS = 1024

@dataclass
class BuildConfig:
    """Every parameter of a build; recorded in the manifest."""

    clips: int = 10_000
    overlap_fraction: float = 0.4
    queries_per_task: int = 200
    atoms: str = "procedural"
    sample_rate: int = 16_000
    seed: int = 0
    max_clip_s: float = 30.0
    audio_format: str = "wav16"
    threads: int = 0
    min_hard_negatives: int = 1  # per query; more than one makes ranking metrics harder for mention-matchers
    plan: dict = field(default_factory=dict)  # overrides of the Rust planner's parameters
    exemplar_split: str = "all"  # build from the library's "test" (or "train") exemplars only

    def recorded(self) -> dict:
        """The parameters that decide the output, as the manifest, shards and saved plans record
        them: everything but the thread count (output never depends on it)."""
        return {k: v for k, v in asdict(self).items() if k != "threads"}

    def check(self) -> None:
        if self.clips < 1:
            raise UserError(f"--clips must be at least 1, got {self.clips}")
        if not 0.0 <= self.overlap_fraction <= 1.0:
            raise UserError(f"--overlap-fraction must be within [0, 1], got {self.overlap_fraction}")
        if self.queries_per_task < 0:
            raise UserError(f"--queries-per-task must be >= 0, got {self.queries_per_task}")
        if self.audio_format not in AUDIO_FORMATS:
            raise UserError(f"--format must be one of {', '.join(AUDIO_FORMATS)}, got {self.audio_format!r}")
        if not MIN_SAMPLE_RATE <= self.sample_rate <= MAX_SAMPLE_RATE:
            raise UserError(f"--sample-rate must be within {MIN_SAMPLE_RATE}..{MAX_SAMPLE_RATE} Hz, got {self.sample_rate}")
        if not 0 <= self.seed < 2**64:
            raise UserError(f"--seed must be within 0..2^64-1, got {self.seed}")
        if not 0 <= self.threads <= MAX_THREADS:
            raise UserError(
                f"--threads must be within 0..{MAX_THREADS} (0 = one per core; this machine has {os.cpu_count()}), got {self.threads}"
            )
        if self.min_hard_negatives < 1:
            raise UserError(f"--min-hard-negatives must be >= 1 (contract §3.2), got {self.min_hard_negatives}")
        if not (math.isfinite(self.max_clip_s) and self.max_clip_s > 0):
            raise UserError(f"--max-clip-s must be a positive number of seconds, got {self.max_clip_s}")
        if not math.isfinite(self.overlap_fraction):
            raise UserError(f"--overlap-fraction must be within [0, 1], got {self.overlap_fraction}")
        self._check_plan_keys()

    @property
    def worker_threads(self) -> int:
        """Threads the Rust work uses: --threads capped at the core count (0 = one per core)."""
        cores = os.cpu_count() or 1
        return cores if self.threads == 0 else min(self.threads, cores)

    def _check_plan_keys(self) -> None:
        """Each --plan override on its own: a known key, with a value of the right type."""
        defaults = json.loads(_core.plan_params_default())
        for key, value in self.plan.items():
            if key in PLAN_KEYS_WITH_FLAGS:
                raise UserError(f"--plan {key}=...: {key} has its own option, {PLAN_KEYS_WITH_FLAGS[key]}")
            if key not in defaults:
                known = ", ".join(sorted(k for k in defaults if k not in PLAN_KEYS_WITH_FLAGS))
                raise UserError(f"--plan {key}=...: unknown planner parameter (known: {known})")
            expected = json.dumps(defaults[key])
            try:
                _core.plan_params_check(json.dumps({**defaults, key: value}), 1 << 20)
            except ValueError as err:
                if _is_parse_error(err):
                    raise UserError(f"--plan {key}={json.dumps(value)}: expected a value shaped like the default {expected}") from None
                # a value of the right type that breaks a rule is reported with every setting below

    def plan_params(self, n_atoms: int) -> tuple[str, list[float]]:
        """The planner's parameters as JSON (defaults, then --plan overrides, then the options that
        have a flag of their own), checked against a library of `n_atoms` labels; and the duration
        thresholds they imply."""
        self._check_plan_keys()
        merged = {**json.loads(_core.plan_params_default()), **self.plan, "sample_rate": self.sample_rate, "max_clip_s": self.max_clip_s}
        first_error = None
        # Unless --plan sets max_events, the default is lowered to what the library (a label at
        # most once per clip) and --max-clip-s allow, rather than refusing a small library.
        fewer = range(merged["max_events"], merged["min_events"] - 1, -1) if "max_events" not in self.plan else [merged["max_events"]]
        for max_events in fewer:
            try:
                checked = _core.plan_params_check(json.dumps({**merged, "max_events": max_events}), n_atoms)
            except ValueError as err:
                first_error = err  # the last one: the smallest max_events tried
                continue
            if max_events != merged["max_events"]:
                note(f"at most {max_events} events per clip (the default {merged['max_events']} does not fit this library or --max-clip-s; set --plan max_events=N to choose)")
            return checked
        message = str(first_error).removeprefix("plan parameters: ").removeprefix("invalid plan parameters: ")
        raise UserError(
            f"planner parameters: {message} (set by --max-clip-s, --sample-rate and --plan KEY=JSON, "
            f"e.g. --plan max_events=6)"
        ) from None


PLAN_KEYS_WITH_FLAGS = {"sample_rate": "--sample-rate", "max_clip_s": "--max-clip-s"}


def _is_parse_error(err: ValueError) -> bool:
    """serde's messages for a value of the wrong type end in its position in the JSON text."""
    return " at line " in str(err) and " column " in str(err)



def note(message: str) -> None:
    """One line about a decision the build took for the user (printed even with --quiet)."""
    print(f"reasonaudio build: note: {message}", file=sys.stderr)

