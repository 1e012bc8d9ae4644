"""Build a complete benchmark directory (contract §4): plans → queries → relevance → hard negatives →
two-option pairs → audio → tables, written into a temporary sibling and renamed into place.

Data flows one way: atoms → clip plans (Rust planner) → queries drawn from real clips → relevance
(Rust engine) → hard negatives found or planned on purpose → audio rendered from the final plans.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from reasonaudio import _core
from reasonaudio.contract import AUDIBLE_DBFS, AUDIBLE_WINDOW_S, FORMAT_VERSION, FORMAT_VERSION_ONE_EXEMPLAR, TASKS
from reasonaudio.errors import UserError
from reasonaudio.exemplars import LabelView, recordings_used, select_split, write_attribution
from reasonaudio.relevance import positive_labels
from reasonaudio.queries import ClipView, QueryCapacityError, QueryGenerator, QuerySpec

AUDIO_FORMATS = {"wav16": ".wav", "wav_f32": ".wav", "flac16": ".flac"}
PATTERNS = ("sequential", "overlap")
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

    def check(self) -> None:
        if self.clips < 1:
            raise UserError(f"--clips must be at least 1, got {self.clips}")
        if not 0.0 <= self.overlap_fraction <= 1.0:
            raise UserError(f"--overlap-fraction must be within [0, 1], got {self.overlap_fraction}")
        if self.queries_per_task < 0:
            raise UserError(f"--queries-per-task must be >= 0, got {self.queries_per_task}")
        if self.audio_format not in AUDIO_FORMATS:
            raise UserError(f"--format must be one of {', '.join(AUDIO_FORMATS)}, got {self.audio_format!r}")
        if self.sample_rate < 8000 or self.sample_rate > 192_000:
            raise UserError(f"--sample-rate must be within 8000..192000 Hz, got {self.sample_rate}")
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
                _note(f"at most {max_events} events per clip (the default {merged['max_events']} does not fit this library or --max-clip-s; set --plan max_events=N to choose)")
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


# --- corpus plans ---------------------------------------------------------------------------------


class Corpus:
    """Columnar clip plans with a few clips replaced on purpose (planned hard negatives)."""

    def __init__(self, cols: dict[str, np.ndarray]):
        self.cols = cols
        self.replaced: dict[int, dict[str, np.ndarray]] = {}

    @property
    def n_clips(self) -> int:
        return len(self.cols["clip_length"])

    def pattern(self, i: int) -> str:
        plan = self.replaced.get(i)
        flag = plan["clip_overlap"][0] if plan is not None else self.cols["clip_overlap"][i]
        return PATTERNS[int(flag)]

    def replace(self, i: int, plan: dict[str, np.ndarray]) -> None:
        if PATTERNS[int(plan["clip_overlap"][0])] != self.pattern(i):
            raise AssertionError("a replacement must keep the clip's pattern")
        self.replaced[i] = plan

    def columns(self) -> dict[str, np.ndarray]:
        """The final plan table: per-event columns sorted by clip, per-clip columns."""
        if not self.replaced:
            return self.cols
        ptr = self.cols["clip_event_ptr"]
        pieces: dict[str, list[np.ndarray]] = {k: [] for k in ("ev_atom", "ev_onset", "ev_length", "ev_gain_db", "ev_mode", "ev_clip")}
        start = 0
        for i in sorted(self.replaced):
            plan = self.replaced[i]
            for k in pieces:
                pieces[k].append(self.cols[k][ptr[start] : ptr[i]])
                pieces[k].append(np.full_like(plan[k], i) if k == "ev_clip" else plan[k])
            start = i + 1
        for k in pieces:
            pieces[k].append(self.cols[k][ptr[start] :])
        out = {k: np.concatenate(v) for k, v in pieces.items()}
        counts = np.bincount(out["ev_clip"], minlength=self.n_clips)
        out["clip_event_ptr"] = np.concatenate([[0], np.cumsum(counts)]).astype(np.uint64)
        out["clip_length"] = self.cols["clip_length"].copy()
        out["clip_overlap"] = self.cols["clip_overlap"].copy()
        for i, plan in self.replaced.items():
            out["clip_length"][i] = plan["clip_length"][0]
        return out

    def views(self) -> list[ClipView]:
        cols = self.columns()
        ptr = cols["clip_event_ptr"].astype(np.int64)
        atoms = cols["ev_atom"].tolist()
        on = cols["ev_onset"].tolist()
        off = (cols["ev_onset"] + cols["ev_length"]).tolist()
        pat = cols["clip_overlap"].tolist()
        return [
            ClipView(atoms[ptr[i] : ptr[i + 1]], on[ptr[i] : ptr[i + 1]], off[ptr[i] : ptr[i + 1]], PATTERNS[pat[i]])
            for i in range(len(pat))
        ]


def relevance(cols: dict[str, np.ndarray], labels: list[str], logics: list[dict], rate: int, threads: int) -> list[np.ndarray]:
    """Relevant clip indices per logic, through the Rust engine."""
    indptr, clips = _core.annotate_csr(
        cols["ev_clip"].astype(np.uint32),
        cols["ev_atom"].astype(np.uint32),
        cols["ev_onset"].astype(np.int64),
        (cols["ev_onset"] + cols["ev_length"]).astype(np.int64),
        len(cols["clip_length"]),
        float(rate),
        labels,
        [json.dumps(lg) for lg in logics],
        None,
        threads,
    )
    return [clips[indptr[q] : indptr[q + 1]] for q in range(len(logics))]


def _containment_logic(logic: dict) -> dict:
    return {"all": [{"has": lab} for lab in positive_labels(logic)]}


# --- hard negatives planned on purpose -------------------------------------------------------------


def _hard_negative_request(spec: QuerySpec, label_index: dict[str, int], bin_of_threshold) -> list[dict]:
    """Ways to plan a clip that holds every positive label of the query and breaks its logic."""
    lid = label_index
    cons = spec.logic["all"]
    nots = [lid[c["not"]] for c in cons if "not" in c]
    befores = [c["before"] for c in cons if "before" in c]
    overlaps = [c["overlap"] for c in cons if "overlap" in c]
    durs = [c["duration"] for c in cons if "duration" in c]
    pos = [lid[x] for x in positive_labels(spec.logic)]
    requests: list[dict] = []
    if nots:
        # contain a negated sound: breaks `not` whatever else happens
        requests.append({"pattern": "sequential", "required": pos + [nots[0]], "ordered": False})
    if befores:
        a, b = befores[0]
        rest = [x for x in pos if x not in (lid[a], lid[b])]
        requests.append({"pattern": "sequential", "required": [lid[b], lid[a]] + rest, "ordered": True})
    if overlaps:
        requests.append({"pattern": "sequential", "required": pos, "ordered": False})
    for d in durs:
        bins = bin_of_threshold(d)
        if bins is not None:
            req_bins = [bins if x == lid[d["label"]] else None for x in pos]
            requests.append({"pattern": "sequential", "required": pos, "ordered": False, "required_bins": req_bins})
    return requests


class _CorpusFull(Exception):
    """Planned hard negatives need more free clips than the corpus has (or cannot be planned);
    `query_index` is the first query that could not get one."""

    def __init__(self, query_index: int, reason: str):
        super().__init__(reason)
        self.query_index = query_index
        self.reason = reason


def _plan_hard_negative(
    spec: QuerySpec,
    query_index: int,
    config: BuildConfig,
    params_json: str,
    natives: np.ndarray,
    labels: list[str],
    bin_of_threshold,
    variant: int = 0,
    patterns: tuple[str, ...] = PATTERNS,
) -> dict[str, np.ndarray]:
    """A clip planned to be a hard negative of `spec`, in one of `patterns` (those with a free clip
    left to replace); `variant` > 0 asks for further, different ones."""
    label_index = {lab: i for i, lab in enumerate(labels)}
    requests = _hard_negative_request(spec, label_index, bin_of_threshold)
    containment = _containment_logic(spec.logic)
    last_error = "every planned clip satisfied the query or lacked a mentioned sound"
    if not requests:
        raise _CorpusFull(query_index, f"no way to plan a hard negative for {json.dumps(spec.logic)}")
    for attempt in range(64):
        req = requests[(attempt + variant) % len(requests)]
        key = (1 << 48) + (variant << 40) + query_index * 1024 + attempt
        # the request's own pattern when a clip of it is free, else the other one
        pattern = req["pattern"] if req["pattern"] in patterns else patterns[attempt % len(patterns)]
        try:
            plan = _core.plan_clip(
                natives,
                config.seed,
                key,
                pattern,
                params_json,
                required=req["required"],
                ordered=req["ordered"],
                required_bins=req.get("required_bins", []),
            )
        except ValueError as err:  # e.g. more required sounds than max_events allows
            last_error = str(err)
            continue
        rel, contains = relevance(plan, labels, [spec.logic, containment], config.sample_rate, 1)
        if len(contains) == 1 and len(rel) == 0:
            return plan
    raise _CorpusFull(query_index, f"could not plan a hard negative for query {spec.text!r} ({json.dumps(spec.logic)}): {last_error}")


@dataclass
class _Pairs:
    """What pairing queries with positives and hard negatives made: the corpus with its planned
    clips, relevance on it, the two-option pairs, hard negatives per query."""

    corpus: Corpus
    relevant: list[np.ndarray]
    positives: list[int]
    negatives: list[int]
    planned: int
    hard_counts: list[int]

    @staticmethod
    def empty(corpus: Corpus) -> "_Pairs":
        return _Pairs(corpus, [], [], [], 0, [])


def _hard_negatives(
    corpus: Corpus,
    specs: list[QuerySpec],
    config: BuildConfig,
    params_json: str,
    natives: np.ndarray,
    labels: list[str],
    bin_of_threshold,
) -> _Pairs:
    """Pick a positive and the hard negatives of every query, planning missing hard negatives into
    free clips of the corpus (raises _CorpusFull when it runs out of them)."""
    n = corpus.n_clips
    rng = np.random.default_rng([config.seed, 0x4D43])
    logics = [s.logic for s in specs]
    containments = [_containment_logic(lg) for lg in logics]
    final = corpus.columns()
    rel = relevance(final, labels, logics, config.sample_rate, config.worker_threads)
    con = relevance(final, labels, containments, config.sample_rate, config.worker_threads)
    protected = {s.anchor for s in specs}
    want = config.min_hard_negatives
    pos_pick: list[int] = []
    neg_pick: list[int | None] = []
    kept: list[list[int]] = []  # hard negatives held per query (protected from replacement)
    for q, spec in enumerate(specs):
        if spec.anchor not in set(rel[q].tolist()):
            raise AssertionError(f"query {q}: its anchor clip does not satisfy it")
        pos_pick.append(int(rel[q][rng.integers(len(rel[q]))]))
        hard = np.setdiff1d(con[q], rel[q], assume_unique=True)
        neg_pick.append(int(hard[rng.integers(len(hard))]) if len(hard) else None)
        extra = [int(x) for x in rng.permutation(hard) if x != neg_pick[q]][: want - 1] if want > 1 else []
        kept.append(([neg_pick[q]] if neg_pick[q] is not None else []) + extra)
    protected.update(pos_pick)
    protected.update(x for held in kept for x in held)
    free = {p: [i for i in range(n) if corpus.pattern(i) == p and i not in protected] for p in PATTERNS}
    planned = 0
    for q, spec in enumerate(specs):
        for variant in range(want - len(kept[q])):
            open_patterns = tuple(p for p in PATTERNS if free[p])
            if not open_patterns:
                raise _CorpusFull(q, "no free clip left to hold a planned hard negative")
            plan = _plan_hard_negative(spec, q, config, params_json, natives, labels, bin_of_threshold, variant, open_patterns)
            pattern = PATTERNS[int(plan["clip_overlap"][0])]
            victim = free[pattern].pop(int(rng.integers(len(free[pattern]))))
            corpus.replace(victim, plan)
            kept[q].append(victim)
            if neg_pick[q] is None:
                neg_pick[q] = victim
            planned += 1
    final = corpus.columns()
    rel = relevance(final, labels, logics, config.sample_rate, config.worker_threads)
    con = relevance(final, labels, containments, config.sample_rate, config.worker_threads)
    for q in range(len(specs)):
        rq = set(rel[q].tolist())
        if pos_pick[q] not in rq or neg_pick[q] in rq or neg_pick[q] not in set(con[q].tolist()):
            raise AssertionError(f"query {q}: two-option pair broken by a replaced clip")
    hard_counts = [len(np.setdiff1d(con[q], rel[q], assume_unique=True)) for q in range(len(specs))]
    if hard_counts and min(hard_counts) < want:
        raise AssertionError(f"a query has fewer than {want} hard negatives after planning")
    return _Pairs(corpus, rel, pos_pick, [int(x) for x in neg_pick], planned, hard_counts)


# An event must be audible in the mix (contract §3.6, AUDIBLE_DBFS over AUDIBLE_WINDOW_S). The
# quietest gain the planner may draw, and 6 dB for fades and window alignment, come on top.


def _inaudible_atoms(library, params: dict) -> list[str]:
    """Labels of atoms whose shortest possible event (a trimmed prefix) would be inaudible at the
    library's rate: a library resampled down loses what lies above the new Nyquist frequency."""
    sr = library.sample_rate
    window = max(1, int(round(AUDIBLE_WINDOW_S * sr)))
    prefix = max(window, int(params["duration_bins"][0][0] * sr))
    floor = 10 ** ((AUDIBLE_DBFS - float(params["gain_db"][0]) + 6.0) / 20)
    quiet = []
    for i, label in enumerate(library.labels):
        x = np.asarray(library.audio(i)[:prefix], dtype=np.float64)
        frames = x[: x.size // window * window].reshape(-1, window) if x.size >= window else x[None, :]
        if float(np.sqrt((frames * frames).mean(axis=1).max())) < floor:
            quiet.append(label)
    return quiet


def _note(message: str) -> None:
    """One line about a decision the build took for the user (printed even with --quiet)."""
    print(f"reasonaudio build: note: {message}", file=sys.stderr)


# --- the build ------------------------------------------------------------------------------------


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# --- the plan, shared by every way of rendering it ------------------------------------------------


@dataclass
class BuildPlan:
    """Everything planning decided (runs once, cheap): the final clip plans, queries, relevance,
    two-option pairs. Rendering any clip range of it, anywhere, gives the same bytes."""

    config: BuildConfig
    library: object
    atom_audio: np.ndarray
    atom_offsets: np.ndarray
    params: dict
    thresholds: list[float]
    final: dict[str, np.ndarray]
    clip_ids: list[str]
    specs: list[QuerySpec]
    query_ids: list[str]
    relevant: list[np.ndarray]
    positives: list[int]
    negatives: list[int]
    planned: int
    hard_counts: list[int]
    seconds: float = 0.0  # how long planning (or loading the plan) took; never written to outputs
    origin: str = "planned corpus and queries"

    @property
    def n_clips(self) -> int:
        return len(self.clip_ids)

    @property
    def rel_paths(self) -> list[str]:
        ext = AUDIO_FORMATS[self.config.audio_format]
        return [f"audio/{cid}{ext}" for cid in self.clip_ids]

    def slice(self, lo: int, hi: int) -> dict[str, np.ndarray]:
        """Plan columns of clips [lo, hi), clip indices rebased to 0: all a renderer needs."""
        return plan_slice(self.final, lo, hi)

    def fingerprint(self) -> str:
        """sha256 of what decides the output: build parameters, final plans, queries and pairs;
        shards of one benchmark must agree on it."""
        h = hashlib.sha256()
        h.update(json.dumps({k: v for k, v in asdict(self.config).items() if k != "threads"}, sort_keys=True).encode())
        for key in sorted(self.final):
            h.update(key.encode())
            h.update(np.ascontiguousarray(self.final[key]).tobytes())
        h.update(json.dumps([self.query_ids, [s.logic for s in self.specs], self.positives, self.negatives]).encode())
        h.update(np.ascontiguousarray(self.atom_audio, dtype="<f4").tobytes())
        return h.hexdigest()


def plan_slice(cols: dict[str, np.ndarray], lo: int, hi: int) -> dict[str, np.ndarray]:
    ptr = cols["clip_event_ptr"].astype(np.int64)
    e0, e1 = int(ptr[lo]), int(ptr[hi])
    return {
        "ev_clip": (cols["ev_clip"][e0:e1].astype(np.int64) - lo).astype(np.uint32),
        "ev_atom": cols["ev_atom"][e0:e1].astype(np.uint32),
        "ev_onset": cols["ev_onset"][e0:e1].astype(np.int64),
        "ev_length": cols["ev_length"][e0:e1].astype(np.int64),
        "ev_gain_db": cols["ev_gain_db"][e0:e1].astype(np.float32),
        "clip_length": cols["clip_length"][lo:hi].astype(np.int64),
    }


def render_range(
    atom_audio: np.ndarray,
    atom_offsets: np.ndarray,
    sl: dict[str, np.ndarray],
    rel_paths: list[str],
    audio_root: str,
    sample_rate: int,
    audio_format: str,
    threads: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Renders the clips of a plan slice to `audio_root` (a local directory, or a URI: rendered to
    a local scratch directory and uploaded); `rel_paths` are `audio/<name>`. Returns the float32
    peaks before the limiter and the limiter gains."""
    from reasonaudio import storage

    names = [p.rpartition("/")[2] for p in rel_paths]
    remote = storage.is_uri(audio_root)
    local_dir = Path(tempfile.mkdtemp(prefix="reasonaudio-render-")) if remote else Path(audio_root)
    try:
        res = _core.render_corpus(
            atom_audio,
            atom_offsets,
            sl["ev_clip"],
            sl["ev_atom"],
            sl["ev_onset"],
            sl["ev_length"],
            sl["ev_gain_db"],
            sl["clip_length"],
            [str(local_dir / name) for name in names],
            sample_rate,
            format=audio_format,
            threads=threads,
        )
        if remote:
            fs, path = storage.open_fs(audio_root)
            storage.upload_dir(local_dir, fs, path)
    finally:
        if remote:
            shutil.rmtree(local_dir, ignore_errors=True)
    return np.asarray(res["peak"]), np.asarray(res["gain"])


RENDER_CHUNK = 512  # clips per render call: bounds memory and paces the progress bar


def render_local(plan: BuildPlan, audio_root: str, lo: int, hi: int, progress: bool) -> tuple[np.ndarray, np.ndarray]:
    """Renders clips [lo, hi) in this process (Rust threads); peaks and gains of the range."""
    from tqdm.auto import tqdm

    peaks = np.zeros(hi - lo, np.float64)
    gains = np.zeros(hi - lo, np.float64)
    paths = plan.rel_paths
    cfg = plan.config
    with tqdm(total=hi - lo, desc="render", unit="clip", disable=not progress) as bar:
        for a in range(lo, hi, RENDER_CHUNK):
            b = min(hi, a + RENDER_CHUNK)
            p, g = render_range(
                plan.atom_audio, plan.atom_offsets, plan.slice(a, b), paths[a:b], audio_root,
                cfg.sample_rate, cfg.audio_format, cfg.worker_threads,
            )
            peaks[a - lo : b - lo] = p
            gains[a - lo : b - lo] = g
            bar.update(b - a)
    return peaks, gains


def write_benchmark(plan: BuildPlan, root: Path, peaks: np.ndarray, gains: np.ndarray) -> dict:
    """Writes the tables, the BEIR export and the manifest of a rendered plan into `root`."""
    manifest = _write_tables(
        root, plan.config, plan.params, list(plan.thresholds), plan.library, plan.final, plan.clip_ids,
        plan.rel_paths, np.asarray(peaks, np.float64), np.asarray(gains, np.float64), plan.specs,
        plan.query_ids, plan.relevant, plan.positives, plan.negatives, plan.planned, plan.hard_counts,
        plan.atom_audio,
    )
    write_attribution(root, plan.library, plan.final["ev_atom"])
    _write_json(root / "manifest.json", manifest)
    return manifest


def plan_build(config: BuildConfig | None = None) -> BuildPlan:
    """The planning half of `build` alone (nothing is written)."""
    return build(None, config, progress=False)


def parse_shard(text: str) -> tuple[int, int]:
    """`K/N` (0 <= K < N) as a pair."""
    k, sep, n = str(text).partition("/")
    try:
        kk, nn = int(k), int(n)
    except ValueError:
        kk = nn = -1
    if not sep or nn < 1 or not 0 <= kk < nn:
        raise UserError(f"--shard must be K/N with 0 <= K < N (e.g. 0/4), got {text!r}")
    return kk, nn


def shard_range(n_clips: int, k: int, n_shards: int) -> tuple[int, int]:
    """Clips [lo, hi) of shard k of n_shards: contiguous, sizes differing by at most one."""
    return k * n_clips // n_shards, (k + 1) * n_clips // n_shards


def build(
    out: str | Path | None,
    config: BuildConfig | None = None,
    *,
    force: bool = False,
    progress: bool = True,
    shard: tuple[int, int] | None = None,
    ray: str | None = None,
    from_plan: str | Path | None = None,
):
    """Build a whole benchmark into `out` (a path or an fsspec URI); returns it. Deterministic in
    `config`. `shard=(k, n)` renders only shard k of n (see `reasonaudio.shard`); `ray` ("local" or
    a cluster address) renders on a Ray cluster; `from_plan` uses a plan saved by
    `reasonaudio.shard.save_plan` (made with the same config) instead of planning again. `out=None`
    only plans and returns the BuildPlan."""
    from reasonaudio.storage import Output, is_uri

    config = config or BuildConfig()
    config.check()
    if shard is not None and ray is not None:
        raise UserError("--shard and --ray are two ways to split a build: choose one")
    def plan() -> BuildPlan:
        if from_plan is None:
            return _plan(config)
        from reasonaudio.shard import load_plan

        return load_plan(from_plan, config)

    if out is None:
        return plan()
    library_inputs = [] if config.atoms == "procedural" else [config.atoms]
    kind = SHARD_KIND if shard is not None else "benchmark"
    with Output(out, kind, inputs=library_inputs, force=force) as dest:
        _realize(plan(), dest, progress=progress, shard=shard, ray=ray)
    return out if is_uri(out) else Path(out)


SHARD_KIND = "benchmark shard"


def _plan(config: BuildConfig) -> BuildPlan:
    """Plan a benchmark: everything decided before rendering (the same wherever it runs)."""
    from reasonaudio.atoms import AtomLibrary

    t0 = time.perf_counter()
    library = select_split(AtomLibrary.open(config.atoms, sample_rate=config.sample_rate), config.exemplar_split)
    # planning, queries and relevance work on labels; exemplars are drawn at the end (exemplars.py)
    label_view = LabelView.of(library)
    labels = label_view.labels
    audio, offsets = library.flat()
    natives = label_view.natives
    params_json, thresholds = config.plan_params(len(labels))
    quiet = _inaudible_atoms(library, json.loads(params_json))
    if quiet:
        raise UserError(
            f"{len(quiet)} atom(s) of {config.atoms} are (nearly) silent at {config.sample_rate} Hz, so their events "
            f"would be inaudible (contract §3.6): {', '.join(quiet[:5])}{', …' if len(quiet) > 5 else ''}; "
            "their sound lies above the Nyquist frequency or in their tail: use a higher --sample-rate or drop them from the library"
        )
    if config.queries_per_task and len(thresholds) < 1:
        raise UserError("duration queries need a duration threshold: --plan duration_bins must give two or more bins")
    try:
        cols = _core.plan_corpus(natives, config.clips, config.overlap_fraction, config.seed, params_json, config.worker_threads)
    except ValueError as err:
        raise UserError(f"planning the corpus: {err}") from None
    params = json.loads(params_json)
    bins = params["duration_bins"]

    def bin_of_threshold(dur: dict):
        """A duration bin on the wrong side of a duration bound."""
        lo, hi = dur.get("min_s"), dur.get("max_s")
        for i, (b_lo, b_hi) in enumerate(bins):
            if lo is not None and b_hi < lo:
                return i
            if hi is not None and b_lo > hi:
                return i
        return None

    n = len(cols["clip_length"])
    width = max(6, len(str(n - 1)))
    clip_ids = [f"clip_{i:0{width}d}" for i in range(n)]
    views = Corpus(cols).views()

    def draw(per_task: int, tasks: list[str]) -> list[QuerySpec]:
        generator = QueryGenerator(views, labels, label_view.phrases, config.sample_rate, list(thresholds), config.seed)
        return [generator.generate(task, j) for task in tasks for j in range(per_task)]

    def pair_up(specs: list[QuerySpec]) -> _Pairs:
        return _hard_negatives(Corpus(cols), specs, config, params_json, natives, labels, bin_of_threshold)

    # The corpus decides how many distinct queries (and planned hard negatives) it can host: the
    # largest number per task up to the one asked for (a bisection over numbers that fail), a task
    # no clip can host left out. Every attempt starts afresh, so the result is exactly the build
    # that asks for that number.
    tasks = list(TASKS)
    best: tuple[int, list[QuerySpec], _Pairs] | None = None
    failing = config.queries_per_task + 1  # the smallest number known to fail
    candidate = config.queries_per_task
    while tasks and candidate > (best[0] if best else 0):
        try:
            drawn = draw(candidate, tasks)
        except QueryCapacityError as err:
            if err.index == 0:
                tasks.remove(err.task)
                _note(f"no clip of this corpus can host {'an' if err.task[0] in 'aeiou' else 'a'} {err.task} query: the benchmark has none ({err})")
            else:
                failing, candidate = candidate, err.index
            continue
        try:
            paired = pair_up(drawn)
        except _CorpusFull:
            failing, candidate = candidate, ((best[0] if best else 0) + candidate) // 2
            continue
        best = (candidate, drawn, paired)
        candidate = (candidate + failing) // 2
    per_task, specs, pairs = best if best else (0, [], _Pairs.empty(Corpus(cols)))
    if config.queries_per_task and not specs:
        raise UserError(
            f"a corpus of {n} clips cannot host queries with hard negatives "
            f"(use more --clips, or --queries-per-task 0 for a corpus without queries)"
        )
    if specs and per_task < config.queries_per_task:
        _note(
            f"{n} clips host {per_task} distinct queries per task with hard negatives "
            f"(asked for {config.queries_per_task}); building {per_task} per task"
        )
    query_ids = [f"{s.task}_{j % max(per_task, 1):04d}" for j, s in enumerate(specs)]
    corpus = pairs.corpus
    final = label_view.draw(corpus.columns(), config.seed)
    rel = pairs.relevant
    positives, negatives, planned, hard_counts = pairs.positives, pairs.negatives, pairs.planned, pairs.hard_counts
    t_plan = time.perf_counter() - t0

    plan = BuildPlan(
        config, library, audio, offsets, params, list(thresholds), final, clip_ids, specs, query_ids,
        rel, positives, negatives, planned, hard_counts, t_plan,
    )
    return plan


def _realize(plan: BuildPlan, dest, *, progress: bool, shard: tuple[int, int] | None, ray: str | None):
    """Renders the plan (here, as one shard, or on Ray) into the staged output `dest`."""
    t0 = time.perf_counter()
    if shard is not None:
        from reasonaudio.shard import write_shard

        write_shard(plan, dest, dest.root, shard, progress)
        return
    if ray is not None:
        from reasonaudio.distributed import render_on_ray

        peaks, gains = render_on_ray(plan, dest.audio_url, ray, progress)
    else:
        peaks, gains = render_local(plan, dest.audio_url, 0, plan.n_clips, progress)
    t_render = time.perf_counter() - t0
    if progress:
        # timings stay out of the manifest: it must be byte-identical across runs
        print(f"{plan.origin} in {plan.seconds:.2f} s, rendered audio in {t_render:.2f} s")
    write_benchmark(plan, dest.root, peaks, gains)


def _write_json(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, indent=2, sort_keys=False) + "\n")


def _write_tables(
    root: Path,
    config: BuildConfig,
    params: dict,
    thresholds: list[float],
    library,
    cols: dict[str, np.ndarray],
    clip_ids: list[str],
    rel_paths: list[str],
    peaks: np.ndarray,
    gains: np.ndarray,
    specs: list[QuerySpec],
    query_ids: list[str],
    rel: list[np.ndarray],
    positives: list[int],
    negatives: list[int],
    planned: int,
    hard_counts: list[int],
    atom_audio: np.ndarray,
) -> dict:
    from reasonaudio import __version__

    sr = config.sample_rate
    n = len(clip_ids)
    ptr = cols["clip_event_ptr"].astype(np.int64)
    n_events = np.diff(ptr)
    atoms_df = library.to_frame()
    atom_ids = atoms_df["atom_id"].to_list()
    labels = atoms_df["label"].to_list()

    ev_clip = cols["ev_clip"].astype(np.int64)
    event_index = np.arange(len(ev_clip)) - ptr[ev_clip]
    onset = cols["ev_onset"].astype(np.int64)
    offset = onset + cols["ev_length"].astype(np.int64)
    atom = cols["ev_atom"].astype(np.int64)
    clip_id_s = pl.Series("clip_id", clip_ids)
    events = pl.DataFrame(
        {
            "clip_id": clip_id_s.gather(ev_clip),
            "event_index": event_index.astype(np.int32),
            "atom_id": pl.Series(atom_ids).gather(atom),
            "label": pl.Series(labels).gather(atom),
            "onset_sample": onset,
            "offset_sample": offset,
            "onset_s": onset / sr,
            "offset_s": offset / sr,
            "gain_db": cols["ev_gain_db"].astype(np.float64).round(2),
            "mode": pl.Series(["native", "loop", "trim"]).gather(cols["ev_mode"].astype(np.int64)),
        }
    )
    clip_len = cols["clip_length"].astype(np.int64)
    clips = pl.DataFrame(
        {
            "clip_id": clip_ids,
            "path": rel_paths,
            "pattern": [PATTERNS[int(x)] for x in cols["clip_overlap"]],
            "duration_s": clip_len / sr,
            "n_events": n_events.astype(np.int32),
            "n_samples": clip_len,
            "peak_before_limiter": peaks.round(6),
            "limiter_gain": gains.round(6),
        }
    )
    queries = pl.DataFrame(
        {
            "query_id": query_ids,
            "task": [s.task for s in specs],
            "text": [s.text for s in specs],
            "logic": [json.dumps(s.logic) for s in specs],
            "shape": [s.shape for s in specs],
            "n_relevant": [len(r) for r in rel],
        },
        schema={"query_id": pl.String, "task": pl.String, "text": pl.String, "logic": pl.String, "shape": pl.String, "n_relevant": pl.Int64},
    )
    qrels = pl.DataFrame(
        {
            "query_id": [qid for qid, r in zip(query_ids, rel) for _ in range(len(r))],
            "clip_id": [clip_ids[int(c)] for r in rel for c in r],
            "relevance": np.ones(sum(len(r) for r in rel), np.int32),
        },
        schema={"query_id": pl.String, "clip_id": pl.String, "relevance": pl.Int32},
    )
    mc = pl.DataFrame(
        {
            "query_id": query_ids,
            "positive_clip_id": [clip_ids[i] for i in positives],
            "negative_clip_id": [clip_ids[i] for i in negatives],
            "task": [s.task for s in specs],
        },
        schema={"query_id": pl.String, "positive_clip_id": pl.String, "negative_clip_id": pl.String, "task": pl.String},
    )
    tables = {"atoms": atoms_df, "clips": clips, "events": events, "queries": queries, "qrels": qrels, "mc": mc}
    for name, frame in tables.items():
        frame.write_parquet(root / f"{name}.parquet", compression="zstd", statistics=False)

    beir = root / "beir"
    (beir / "qrels").mkdir(parents=True)
    with open(beir / "corpus.jsonl", "w") as fh:
        for cid, path in zip(clip_ids, rel_paths):
            fh.write(json.dumps({"_id": cid, "title": "", "text": "", "audio": path}) + "\n")
    with open(beir / "queries.jsonl", "w") as fh:
        for qid, s in zip(query_ids, specs):
            fh.write(json.dumps({"_id": qid, "text": s.text, "task": s.task}) + "\n")
    with open(beir / "qrels" / "test.tsv", "w") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        for qid, cid in zip(qrels["query_id"].to_list(), qrels["clip_id"].to_list()):
            fh.write(f"{qid}\t{cid}\t1\n")

    durations = clip_len / sr
    hist, edges = np.histogram(durations, bins=np.arange(0, config.max_clip_s + 2.5, 2.5))
    label_use: dict[str, int] = {}
    for s in specs:
        for lab in positive_labels(s.logic) + [c["not"] for c in s.logic["all"] if "not" in c]:
            label_use[lab] = label_use.get(lab, 0) + 1
    counts = {
        "atoms": len(atoms_df),
        "clips": n,
        "clips_by_pattern": {p: int((clips["pattern"] == p).sum()) for p in PATTERNS},
        "events": len(events),
        "queries": len(specs),
        "queries_by_task": {t: sum(1 for s in specs if s.task == t) for t in TASKS},
        "queries_by_shape": dict(sorted({s.shape: sum(1 for x in specs if x.shape == s.shape) for s in specs}.items())),
        "qrels": len(qrels),
        "mc_pairs": len(mc),
        "planned_hard_negatives": planned,
        "relevant_per_query": _summary(np.array([len(r) for r in rel], float)) if specs else None,
        "hard_negatives_per_query": _summary(np.array(hard_counts, float)) if specs else None,
        "clip_duration_s": {**_summary(durations), "histogram": {"edges": edges.tolist(), "counts": hist.tolist()}},
        "events_per_clip": {int(k): int(v) for k, v in zip(*np.unique(n_events, return_counts=True))},
        "event_modes": {m: int((events["mode"] == m).sum()) for m in ("native", "loop", "trim")},
        "label_use_in_queries": {
            "labels_used": len(label_use),
            "max": max(label_use.values(), default=0),
            "mean": round(float(np.mean(list(label_use.values()))), 3) if label_use else 0.0,
            "per_label": dict(sorted(label_use.items())),
        },
    }
    hashes = {f"{name}.parquet": _sha256(root / f"{name}.parquet") for name in tables}
    hashes["atoms_audio"] = hashlib.sha256(np.ascontiguousarray(atom_audio, dtype="<f4").tobytes()).hexdigest()
    for rel_name in ("beir/corpus.jsonl", "beir/queries.jsonl", "beir/qrels/test.tsv"):
        hashes[rel_name] = _sha256(root / rel_name)
    # A library with one exemplar per label and no split/attribution is a v1 benchmark: it keeps its
    # v1 manifest byte for byte (a v1 benchmark is a valid v2 one).
    v2 = bool(library.splits or library.attributions) or library.n_labels != len(library)
    extra = {"recordings": recordings_used(library, atom)} if v2 else {}
    return {
        "format_version": FORMAT_VERSION if v2 else FORMAT_VERSION_ONE_EXEMPLAR,
        "tool_version": __version__,
        "seed": config.seed,
        "sample_rate": sr,
        "params": {
            "build": {k: v for k, v in asdict(config).items() if k not in ("threads",) and not (k == "exemplar_split" and not v2)},
            "plan": params,
            "duration_thresholds_s": thresholds,
            "margin_s": params["margin_s"],
            "background": None,
            "audio_format": config.audio_format,
        },
        "counts": counts,
        "hashes": hashes,
        "hash_scheme": "sha256 of file bytes; atoms_audio = sha256 of the atom bank as little-endian float32",
        **extra,
    }


def _summary(x: np.ndarray) -> dict:
    if len(x) == 0:
        return {}
    return {
        "min": round(float(x.min()), 4),
        "p50": round(float(np.median(x)), 4),
        "mean": round(float(x.mean()), 4),
        "max": round(float(x.max()), 4),
    }
