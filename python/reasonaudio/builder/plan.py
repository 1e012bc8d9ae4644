"""Planning a benchmark: everything decided before rendering (clip plans, queries, relevance,
hard negatives, two-option pairs), the same wherever it runs. Rendering any clip range of the plan,
anywhere, gives the same bytes."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np
import polars as pl

from reasonaudio import _core
from reasonaudio.atoms import AtomLibrary, LabelView, select_split
from reasonaudio.builder.config import AUDIO_FORMATS, BuildConfig, note
from reasonaudio.builder.corpus import Corpus, CorpusFull, Pairs, hard_negatives
from reasonaudio.contract import AUDIBLE_DBFS, AUDIBLE_WINDOW_S, TASKS
from reasonaudio.errors import UserError
from reasonaudio.io import spill
from reasonaudio.io.spill import ArrayFile, release
from reasonaudio.queries import ClipViews, QueryCapacityError, QueryGenerator, QuerySpec
from reasonaudio.scene import SceneConfig, draw, resolve

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


# --- the plan, shared by every way of rendering it ------------------------------------------------


class ClipIds(Sequence[str]):
    """The ids of a planned corpus's clips, `clip_<index>` zero-padded to one width (at least 6
    digits), made when read: as a list of Python strings they take 70 B a clip, the plan's
    second-largest part after its columns."""

    def __init__(self, n: int):
        self.n = int(n)
        self.width = max(6, len(str(self.n - 1)))

    def __len__(self) -> int:
        return self.n

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [f"clip_{k:0{self.width}d}" for k in range(*i.indices(self.n))]
        i = int(i)
        if not -self.n <= i < self.n:
            raise IndexError(i)
        return f"clip_{i % self.n:0{self.width}d}"

    def __iter__(self) -> Iterator[str]:
        return (f"clip_{k:0{self.width}d}" for k in range(self.n))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ClipIds):
            return self.n == other.n
        return isinstance(other, Sequence) and not isinstance(other, str) and len(other) == self.n and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def series(self, indices: np.ndarray, name: str) -> pl.Series:
        """The ids of clips `indices` as a polars string column, made by polars, not one Python
        string at a time."""
        digits = pl.Series(name, np.asarray(indices, dtype=np.int64)).cast(pl.String).str.zfill(self.width)
        return ("clip_" + digits).alias(name)


class ClipPaths(Sequence[str]):
    """The audio paths of a corpus's clips, `audio/<clip id><ext>`, made when read: as a list of
    Python strings they would take ~85 B a clip (0.85 GB at ten million clips) where only a block
    at a time is written."""

    def __init__(self, clip_ids: Sequence[str], ext: str):
        self.clip_ids = clip_ids
        self.ext = ext

    def __len__(self) -> int:
        return len(self.clip_ids)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [f"audio/{cid}{self.ext}" for cid in self.clip_ids[i]]
        return f"audio/{self.clip_ids[i]}{self.ext}"

    def __iter__(self) -> Iterator[str]:
        return (f"audio/{cid}{self.ext}" for cid in self.clip_ids)


def id_series(clip_ids: Sequence[str], indices: np.ndarray, name: str) -> pl.Series:
    """`clip_ids[i]` for every i of `indices`, as a polars string column named `name`."""
    if isinstance(clip_ids, ClipIds):
        return clip_ids.series(indices, name)
    return pl.Series(name, [clip_ids[int(i)] for i in np.asarray(indices)], dtype=pl.String)


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
    clip_ids: Sequence[str]  # a ClipIds when planned or loaded
    specs: list[QuerySpec]
    query_ids: list[str]
    relevant: list[np.ndarray]
    positives: list[int]
    negatives: list[int]
    planned: int
    hard_counts: list[int]
    seconds: float = 0.0  # how long planning (or loading the plan) took; never written to outputs
    origin: str = "planned corpus and queries"
    # set by `load_plan`, which hashes the columns from the file (`fingerprint(columns=...)`)
    known_fingerprint: str | None = None
    scene: object = None  # reasonaudio.scene.SceneAssets when the build has a scene (contract §5)
    draws: object = None  # reasonaudio.scene.SceneDraws of every clip

    @property
    def n_clips(self) -> int:
        return len(self.clip_ids)

    @property
    def rel_paths(self) -> "ClipPaths":
        """Every clip's audio path, `audio/<clip id><ext>`, in clip order (made when read)."""
        return ClipPaths(self.clip_ids, AUDIO_FORMATS[self.config.audio_format])

    def rel_paths_of(self, lo: int, hi: int) -> list[str]:
        """The audio paths of clips [lo, hi): a range's paths without making the corpus's."""
        return self.rel_paths[lo:hi]

    def slice(self, lo: int, hi: int) -> dict[str, np.ndarray]:
        """Plan columns of clips [lo, hi), clip indices rebased to 0: all a renderer needs."""
        return plan_slice(self.final, lo, hi)

    def fingerprint(self, columns: Callable[[str], Iterable[bytes]] | None = None) -> str:
        """sha256 of what decides the output: build parameters, final plans, queries and pairs;
        shards of one benchmark must agree on it. `columns(key)` gives the bytes of a final column
        where they come from elsewhere (a plan file)."""
        if columns is None and self.known_fingerprint is not None:
            return self.known_fingerprint
        h = hashlib.sha256()
        h.update(json.dumps(self.config.recorded(), sort_keys=True).encode())
        for key in sorted(self.final):
            h.update(key.encode())
            if columns is not None:
                for block in columns(key):
                    h.update(block)
            else:  # the array's own buffer a block at a time, not a copy of it
                data = np.ascontiguousarray(self.final[key]).view(np.uint8)
                for lo in range(0, len(data), HASH_BLOCK):
                    h.update(data[lo : lo + HASH_BLOCK])
                    release(data)
        h.update(json.dumps([self.query_ids, [s.logic for s in self.specs], self.positives, self.negatives]).encode())
        h.update(np.ascontiguousarray(self.atom_audio, dtype="<f4").tobytes())
        if self.scene is not None:
            # the bed and room sources too: a room simulated by another simulator version is another output
            for source in (*self.scene.beds, *self.scene.rooms):  # type: ignore[attr-defined]
                h.update(source.sha256.encode())
        return h.hexdigest()


HASH_BLOCK = 1 << 26  # bytes of a column hashed at a time (a plan on disk gives back their pages)


def plan_slice(cols: dict[str, np.ndarray], lo: int, hi: int) -> dict[str, np.ndarray]:
    ptr = cols["clip_event_ptr"]  # two entries read: the corpus's pointers may be a memory map
    e0, e1 = int(ptr[lo]), int(ptr[hi])
    return {
        "ev_clip": (cols["ev_clip"][e0:e1].astype(np.int64) - lo).astype(np.uint32),
        "ev_atom": cols["ev_atom"][e0:e1].astype(np.uint32),
        "ev_onset": cols["ev_onset"][e0:e1].astype(np.int64),
        "ev_length": cols["ev_length"][e0:e1].astype(np.int64),
        "ev_gain_db": cols["ev_gain_db"][e0:e1].astype(np.float32),
        "clip_length": cols["clip_length"][lo:hi].astype(np.int64),
    }

def _plan_columns(natives: np.ndarray, config: BuildConfig, params_json: str) -> dict[str, np.ndarray]:
    """The corpus's clip plans as columns: in memory, or for more than SPILL_CLIPS clips planned a
    block at a time into temporary files read back as memory maps (`reasonaudio.io.spill`)."""
    n = config.clips
    if n <= spill.SPILL_CLIPS:
        return _core.plan_corpus(natives, n, config.overlap_fraction, config.seed, params_json, config.worker_threads)

    def blocks() -> Iterator[tuple[int, dict[str, np.ndarray]]]:
        for lo in range(0, n, spill.SPILL_BLOCK):
            hi = min(lo + spill.SPILL_BLOCK, n)
            block = _core.plan_corpus(natives, n, config.overlap_fraction, config.seed, params_json, config.worker_threads, lo, hi)
            block["ev_clip"] += np.uint32(lo)
            yield lo, block

    return _columns_on_disk(blocks())


def _spilled_final(corpus: Corpus, label_view: LabelView, seed: int) -> dict[str, np.ndarray]:
    """The final columns of a spilled plan (replaced clips in place, exemplars drawn), written a
    block at a time to temporary files read back as memory maps."""
    if not corpus.replaced and not label_view.multi:
        return corpus.cols  # nothing to change: the planner's own columns

    def blocks() -> Iterator[tuple[int, dict[str, np.ndarray]]]:
        for lo, block in corpus.blocks(spill.SPILL_BLOCK):
            yield lo, label_view.draw(block, seed, first_clip=lo)
            release(corpus.cols)

    return _columns_on_disk(blocks())


def _columns_on_disk(blocks: Iterator[tuple[int, dict[str, np.ndarray]]]) -> dict[str, np.ndarray]:
    """Plan columns given a block of clips at a time ((first clip, columns whose event pointers
    count from the block's start), in clip order), appended to temporary files and read back as
    memory maps: one pointer list for the corpus."""
    files: dict[str, ArrayFile] = {}
    events = 0
    for lo, block in blocks:
        ptr = block["clip_event_ptr"] + np.uint64(events)
        block["clip_event_ptr"] = ptr if lo == 0 else ptr[1:]  # each block's first is the last one's end
        events = int(ptr[-1])
        for key, values in block.items():
            files.setdefault(key, ArrayFile(values.dtype)).append(values)
    return {key: f.array() for key, f in files.items()}


def plan_benchmark(config: BuildConfig) -> BuildPlan:
    """Plan a benchmark: everything decided before rendering (the same wherever it runs)."""
    t0 = time.perf_counter()
    library = select_split(AtomLibrary.open(config.atoms, sample_rate=config.sample_rate), config.exemplar_split)
    # planning, queries and relevance work on labels; exemplars are drawn at the end (exemplars.py)
    label_view = LabelView.of(library)
    labels = label_view.labels
    audio, offsets = library.flat()
    natives = label_view.natives
    assets = None
    if config.scene is not None:
        scene_cfg = SceneConfig.from_recorded(config.scene)
        assets = resolve(scene_cfg, config.sample_rate, config.seed, list(labels))
    # one plan for several conditions is made for the longest tail among them (contract §5)
    tail_s = max(assets.max_tail_s if assets else 0.0, float((config.scene or {}).get("plan_tail_s") or 0.0))
    params_json, thresholds = config.plan_params(len(labels), tail_s)
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
        cols = _plan_columns(natives, config, params_json)
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
    clip_ids = ClipIds(n)
    views = ClipViews(cols, release=lambda: release(cols))

    generator = QueryGenerator(views, labels, label_view.phrases, config.sample_rate, list(thresholds), config.seed)
    release(cols)  # the pages its corpus-wide counts read (when the plan is on disk)

    def draw(per_task: int, tasks: list[str]) -> list[QuerySpec]:
        generator.restart()  # each attempt draws as a fresh generator would
        specs = []
        for task in tasks:
            for j in range(per_task):
                specs.append(generator.generate(task, j))
                release(cols)  # the pages of the clips it read (a plan on disk)
        return specs

    def pair_up(specs: list[QuerySpec]) -> Pairs:
        return hard_negatives(Corpus(cols), specs, config, params_json, natives, labels, bin_of_threshold)

    # The corpus decides how many distinct queries (and planned hard negatives) it can host: the
    # largest number per task up to the one asked for (a bisection over numbers that fail), a task
    # no clip can host left out. Every attempt starts afresh, so the result is exactly the build
    # that asks for that number. The search starts at the clip count at most and doubles up from
    # there while nothing has failed: drawing and pairing cost time in the number tried, so asking
    # a million queries of 60 clips (which host 7) bisected down from a million for minutes.
    tasks = list(TASKS)
    best: tuple[int, list[QuerySpec], Pairs] | None = None
    failing = config.queries_per_task + 1  # the smallest number known to fail
    candidate = min(config.queries_per_task, n)
    while tasks and candidate > (best[0] if best else 0):
        try:
            drawn = draw(candidate, tasks)
        except QueryCapacityError as err:
            if err.index == 0:
                tasks.remove(err.task)
                note(f"no clip of this corpus can host {'an' if err.task[0] in 'aeiou' else 'a'} {err.task} query: the benchmark has none ({err})")
            else:
                failing, candidate = candidate, err.index
            continue
        try:
            paired = pair_up(drawn)
        except CorpusFull:
            failing, candidate = candidate, ((best[0] if best else 0) + candidate) // 2
            continue
        best = (candidate, drawn, paired)
        if failing == config.queries_per_task + 1 and candidate < config.queries_per_task:
            candidate = min(2 * candidate, config.queries_per_task)  # nothing failed yet: gallop up
        else:
            candidate = (candidate + failing) // 2
    per_task, specs, pairs = best if best else (0, [], Pairs.empty(Corpus(cols)))
    if config.queries_per_task and not specs:
        raise UserError(
            f"a corpus of {n} clips cannot host queries with {config.min_hard_negatives} hard negative(s) each "
            f"(use more --clips{', fewer --min-hard-negatives' if config.min_hard_negatives > 1 else ''}, "
            f"or --queries-per-task 0 for a corpus without queries)"
        )
    if specs and per_task < config.queries_per_task:
        note(
            f"{n} clips host {per_task} distinct queries per task with hard negatives "
            f"(asked for {config.queries_per_task}); building {per_task} per task"
        )
    query_ids = [f"{s.task}_{j % max(per_task, 1):04d}" for j, s in enumerate(specs)]
    corpus = pairs.corpus
    final = label_view.draw(corpus.columns(), config.seed) if n <= spill.SPILL_CLIPS else _spilled_final(corpus, label_view, config.seed)
    rel = pairs.relevant
    positives, negatives, planned, hard_counts = pairs.positives, pairs.negatives, pairs.planned, pairs.hard_counts
    t_plan = time.perf_counter() - t0

    plan = BuildPlan(
        config, library, audio, offsets, params, list(thresholds), final, clip_ids, specs, query_ids,
        rel, positives, negatives, planned, hard_counts, t_plan,
    )
    if assets is not None:
        attach_scene(plan, assets)
    return plan


def attach_scene(plan: BuildPlan, assets) -> None:
    """Gives `plan` a scene: its assets and every clip's draws (from (seed, clip) alone)."""
    cfg = assets.config
    plan.scene = assets
    plan.draws = draw(
        plan.config.seed, plan.final["clip_event_ptr"], [len(b.audio) for b in assets.beds], cfg.snr_db,
        len(assets.rooms), cfg.varispeed_semitones, cfg.pitch_semitones, cfg.stretch,
    )

