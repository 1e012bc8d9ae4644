"""Every parameter of a build (recorded in the manifest) and the planner's parameters they imply."""

from __future__ import annotations

import logging
import json
import math
import os
from dataclasses import asdict, dataclass, field

from reasonaudio import _core
from reasonaudio.contract import MAX_SAMPLE_RATE, MIN_SAMPLE_RATE
from reasonaudio.errors import UserError

log = logging.getLogger(__name__)

AUDIO_FORMATS = {"wav16": ".wav", "wav_f32": ".wav", "flac16": ".flac"}
# Rendering is CPU-bound: more threads than cores only adds scheduling (1,000 threads ran 10x slower
# than 2); output never depends on the count, so the cap only refuses nonsense.
MAX_THREADS = 1024
# A plan of more than SPILL_CLIPS clips lives in temporary files (reasonaudio.io.spill), ~0.2 KB a
# clip, and planning's own memory stays that of a block of clips; `validate --no-audio` of ten
# million clips takes 7.9-8.8 GB (docs/results/scale.md): beyond that a build is a mistake or a job
# for several builds.
MAX_CLIPS = 10_000_000
# A render thread holds one clip's samples (and the mixer a float copy): 600 s at 192 kHz is
# ~0.5 GB per thread. The contract's relevance needs no longer clips (a clip holds at most one event
# per label); 1e9 s asked for 24 GB and more before failing.
MAX_CLIP_S = 600.0
# Queries are drawn until the corpus cannot host more (plan.py searches from the clip count up), so
# this bound only refuses numbers no corpus reaches (the query ids carry the index).
MAX_QUERIES_PER_TASK = 1_000_000
# The planner's parameters that are probabilities (the Rust planner's random draws need [0, 1]).
PLAN_PROBABILITIES = ("native_probability", "overlap_probability")

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
    # contract §5: SceneConfig.recorded() (+ "plan_tail_s" when one plan serves several conditions);
    # None: no scene, and the key is left out of everything recorded (v1/v2 bytes unchanged)
    scene: dict | None = None

    def recorded(self) -> dict:
        """The parameters that decide the output, as the manifest, shards and saved plans record
        them: everything but the thread count (output never depends on it)."""
        return {k: v for k, v in asdict(self).items() if k != "threads" and not (k == "scene" and v is None)}

    def check(self) -> None:
        if not 1 <= self.clips <= MAX_CLIPS:
            raise UserError(f"--clips must be within 1..{MAX_CLIPS:,}, got {self.clips}")
        if not 0.0 <= self.overlap_fraction <= 1.0:
            raise UserError(f"--overlap-fraction must be within [0, 1], got {self.overlap_fraction}")
        if not 0 <= self.queries_per_task <= MAX_QUERIES_PER_TASK:
            raise UserError(f"--queries-per-task must be within 0..{MAX_QUERIES_PER_TASK:,}, got {self.queries_per_task}")
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
        if self.queries_per_task and self.min_hard_negatives >= self.clips:
            raise UserError(
                f"--min-hard-negatives {self.min_hard_negatives} needs more clips than that (a positive and "
                f"{self.min_hard_negatives} hard negatives per query); --clips is {self.clips}"
            )
        if not (math.isfinite(self.max_clip_s) and 0 < self.max_clip_s <= MAX_CLIP_S):
            raise UserError(f"--max-clip-s must be within (0, {MAX_CLIP_S:g}] seconds, got {self.max_clip_s}")
        if not math.isfinite(self.overlap_fraction):
            raise UserError(f"--overlap-fraction must be within [0, 1], got {self.overlap_fraction}")
        self._check_plan_keys()

    @property
    def inputs(self) -> list[str]:
        """The folders the build reads (an atom library, bed and room directories): no output may lie
        inside one (the next build would read it back as atoms, beds or impulse responses)."""
        from reasonaudio.scene.config import SceneConfig

        library = [] if self.atoms == "procedural" else [self.atoms]
        scene = SceneConfig.from_recorded(self.scene)
        return library + (scene.folders if scene is not None else [])

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
            numbers = _numbers(value)
            if any(not math.isfinite(x) for x in numbers):
                raise UserError(f"--plan {key}={json.dumps(value)}: numbers must be finite")
            if key in PLAN_PROBABILITIES and isinstance(value, (int, float)) and not 0.0 <= value <= 1.0:
                raise UserError(f"--plan {key}={json.dumps(value)}: a probability, must be within [0, 1]")
            if key in ("min_events", "max_events") and isinstance(value, int) and value < 1:
                raise UserError(f"--plan {key}={json.dumps(value)}: must be at least 1 (a clip has one event or more)")
            try:
                _core.plan_params_check(json.dumps({**defaults, key: value}), 1 << 20)
            except ValueError as err:
                if _is_parse_error(err):
                    raise UserError(f"--plan {key}={json.dumps(value)}: expected a value shaped like the default {expected}") from None
                # a value of the right type that breaks a rule is reported with every setting below

    def plan_params(self, n_atoms: int, tail_s: float = 0.0) -> tuple[str, list[float]]:
        """The planner's parameters as JSON (defaults, then --plan overrides, then the options that
        have a flag of their own), checked against a library of `n_atoms` labels; and the duration
        thresholds they imply."""
        self._check_plan_keys()
        merged = {**json.loads(_core.plan_params_default()), **self.plan, "sample_rate": self.sample_rate, "max_clip_s": self.max_clip_s}
        if tail_s > 0:
            # contract §5: events apart by more than 2m + tail_s; the gap range moves up by the tail
            # unless --plan sets it (then the planner refuses a range that is too short)
            merged["tail_s"] = tail_s
            if "gap_s" not in self.plan:
                merged["gap_s"] = [round(g + tail_s, 6) for g in merged["gap_s"]]
            if "duration_bins" not in self.plan:
                # a duration may grow by 2m + tail_s: each gap between bins widens by twice the tail,
                # so its midpoint (the threshold) stays more than 2m + guard + tail_s above the bin
                # below and more than 2m + guard below the bin above
                merged["duration_bins"] = [[round(lo + 2 * tail_s * i, 6), round(hi + 2 * tail_s * i, 6)]
                                           for i, (lo, hi) in enumerate(merged["duration_bins"])]
        first_error = None
        # Unless --plan sets max_events, the default is lowered to what the library (a label at
        # most once per clip) and --max-clip-s allow, rather than refusing a small library.
        fewer = range(merged["max_events"], merged["min_events"] - 1, -1) if "max_events" not in self.plan else []
        fewer = fewer or [merged["max_events"]]  # min_events above the default max_events: report that range
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
        if tail_s > 0 and ("room tail" in message or "tail_s" in message):
            scene = self.scene or {}
            # one plan for several conditions: the room of the condition with the longest tail
            room = scene.get("room") or scene.get("plan_tail_room")
            raise UserError(f"--room {room}: {message}") from None
        raise UserError(
            f"planner parameters: {message} (set by --max-clip-s, --sample-rate and --plan KEY=JSON, "
            f"e.g. --plan max_events=6)"
        ) from None


PLAN_KEYS_WITH_FLAGS = {"sample_rate": "--sample-rate", "max_clip_s": "--max-clip-s"}


def _numbers(value) -> list[float]:
    """Every number inside a --plan value (JSON numbers, nested lists); bools are not numbers."""
    if isinstance(value, bool):
        return []
    if isinstance(value, (int, float)):
        return [float(value)]
    if isinstance(value, list):
        return [x for v in value for x in _numbers(v)]
    return []


def _is_parse_error(err: ValueError) -> bool:
    """serde's messages for a value of the wrong type end in its position in the JSON text."""
    return " at line " in str(err) and " column " in str(err)



def note(message: str) -> None:
    """One line about a decision the build took for the user (a warning: the CLI prints it even with --quiet)."""
    log.warning("reasonaudio build: note: %s", message)

