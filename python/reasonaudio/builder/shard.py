"""Sharded builds: `build --shard K/N` renders one contiguous clip range, `merge` assembles the shards
into the benchmark the single-process build writes, byte for byte (contract §3.4).

Every shard runs the same deterministic planning (queries, hard negatives and relevance need the
whole corpus, and planned hard negatives replace clips anywhere in it) and renders only its range.
What rendering alone knows, the limiter's peak and gain per clip (clips.parquet's
`peak_before_limiter` / `limiter_gain`), goes into the shard's `render.parquet`. The shard's
`shard.json` carries the plan's fingerprint, so merge refuses shards planned differently (another
seed, parameters, atom library or tool version) instead of mixing them.

A shard directory:

    shard.json       format, shard, shards, clip_range, n_clips, plan_sha256, build parameters
    render.parquet   clip_index, peak, gain (float32, exactly as the renderer returned them);
                     with a scene also bed_gain
    render_events.parquet
                     with a scene: event_row, snr_db (each event's rendered SNR, float32)
    audio/           the range's clips, named as in the final benchmark

A build with a scene shards the same way: its draws depend on (seed, clip) alone, so a shard
renders its clips exactly as the single-process build does.
"""

from __future__ import annotations

import logging
import json
import time
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import asdict
from typing import overload
from pathlib import Path

import numpy as np
import polars as pl

from reasonaudio._core import __version__
from reasonaudio.atoms import AtomLibrary, LabelView
from reasonaudio.builder.config import BuildConfig
from reasonaudio.builder.plan import BuildPlan, ClipIds, attach_scene, plan_benchmark
from reasonaudio.builder.render import render_audio
from reasonaudio.builder.tables import Built, write_audio_hash_list, write_benchmark
from reasonaudio.console import progress_bar as tqdm
from reasonaudio.errors import UserError
from reasonaudio.io import spill, storage
from reasonaudio.io.audio_hashes import AUDIO_HASHES, parse_audio_hashes, read_audio_hashes, write_audio_hashes
from reasonaudio.io.npz import NpzMember, array_of, open_npz, write_npz
from reasonaudio.io.outputs import npz_kind, output_file
from reasonaudio.io.parquet import write_table
from reasonaudio.io.spill import ArrayFile, release
from reasonaudio.queries import QuerySpec
from reasonaudio.scene import SceneConfig, resolve

log = logging.getLogger(__name__)

SHARD_FORMAT = "reasonaudio-shard/1"
SHARD_KIND = "benchmark shard"
SHARD_JSON = "shard.json"
RENDER_STATS = "render.parquet"
RENDER_EVENTS = "render_events.parquet"


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


def write_shard(plan: BuildPlan, dest, root: Path, shard: tuple[int, int], progress: bool) -> dict:
    """Renders shard `shard` = (k, n) of `plan` into the staged output `dest` (tables in `root`)."""
    k, n_shards = shard
    lo, hi = shard_range(plan.n_clips, k, n_shards)
    t0 = time.perf_counter()
    rendered = render_audio(plan, dest.audio_url, lo, hi, progress)
    peaks, gains = rendered.peaks, rendered.gains
    log.info("%s in %.2f s, rendered clips [%d, %d) in %.2f s", plan.origin, plan.seconds, lo, hi, time.perf_counter() - t0)
    stats = {"clip_index": np.arange(lo, hi, dtype=np.int64), "peak": peaks.astype(np.float32), "gain": gains.astype(np.float32)}
    if plan.scene is not None:
        report = plan.scene_report  # type: ignore[attr-defined]
        stats["bed_gain"] = np.asarray(report["bed_gain"], np.float32)
        ptr = plan.final["clip_event_ptr"]
        write_table(pl.DataFrame({"event_row": np.arange(int(ptr[lo]), int(ptr[hi]), dtype=np.int64),
                                  "snr_db": np.asarray(report["ev_snr_db"], np.float32)}), root / RENDER_EVENTS)
    write_table(pl.DataFrame(stats), root / RENDER_STATS)
    # merge checks its copies against them
    if rendered.sha256 is not None:
        write_audio_hash_list(root, plan.rel_paths_of(lo, hi), rendered.sha256)
    else:
        write_audio_hashes(root, plan.rel_paths_of(lo, hi), dest.audio_fs, dest.audio_dir)
    meta = {
        "format": SHARD_FORMAT,
        "tool_version": __version__,
        "shard": k,
        "shards": n_shards,
        "clip_range": [lo, hi],
        "n_clips": plan.n_clips,
        "plan_sha256": plan.fingerprint(),
        "build": plan.config.recorded(),
    }
    # written last, and moved last onto a remote filesystem: a shard is complete when it exists
    (root / SHARD_JSON).write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def read_shard(location: str) -> dict:
    """A shard's metadata plus its filesystem, with the checks a merge needs."""
    fs, path = storage.location(location)
    meta_path = f"{path.rstrip('/')}/{SHARD_JSON}"
    if not fs.exists(meta_path):
        raise UserError(f"{location}: not a finished shard (no {SHARD_JSON}; was it built with --shard K/N?)")
    try:
        meta = json.loads(fs.cat_file(meta_path))
    except (OSError, json.JSONDecodeError) as err:
        raise UserError(f"{location}/{SHARD_JSON}: cannot read ({err})") from None
    if meta.get("format") != SHARD_FORMAT:
        raise UserError(f"{location}/{SHARD_JSON}: format {meta.get('format')!r}, expected {SHARD_FORMAT!r}")
    return {**meta, "fs": fs, "path": path.rstrip("/"), "location": location}


def merge(
    shards: list[str], out: str | Path, *, force: bool = False, progress: bool = True, threads: int = 0,
    from_plan: str | Path | None = None, copy_audio: bool = True,
):
    """Assembles the shards of one sharded build into `out` (a path or URI); returns the `Built`. With
    `from_plan` (the shards' saved plan) nothing is planned again. With `copy_audio=False` no audio is
    read or copied (it may be gone from the shards): the tables, manifest and audio.sha256, byte for
    byte those of a merge with the audio, come from each shard's render statistics and its
    audio.sha256, which must list exactly the shard's clips; `out/audio` stays empty."""
    if not shards:
        raise UserError("merge needs at least one shard directory")
    metas = [read_shard(s) for s in shards]
    first = metas[0]
    for m in metas[1:]:
        if m["plan_sha256"] != first["plan_sha256"] or m["shards"] != first["shards"]:
            raise UserError(
                f"{m['location']}: shard of a different build than {first['location']} "
                f"(plan {m['plan_sha256'][:12]} of {m['shards']} shards vs {first['plan_sha256'][:12]} of {first['shards']})"
            )
    by_k: dict[int, dict] = {}
    for m in metas:
        if m["shard"] in by_k:
            raise UserError(f"{m['location']}: shard {m['shard']}/{m['shards']} is also {by_k[m['shard']]['location']}")
        by_k[m["shard"]] = m
    missing = [k for k in range(first["shards"]) if k not in by_k]
    if missing:
        total = first["shards"]
        names = ", ".join(f"{k}/{total}" for k in missing)
        raise UserError(f"missing shard(s) {names} (got {len(by_k)} of {total})")

    config = BuildConfig(**first["build"], threads=threads)
    library_inputs = [] if config.atoms == "procedural" else [config.atoms]
    inputs = [*shards, *library_inputs, *([from_plan] if from_plan is not None else [])]
    with storage.Output(out, "benchmark", inputs=inputs, force=force) as dest:
        # The tables need the whole plan: planning is deterministic and cheap next to rendering, so
        # it runs again here and must reproduce the shards' fingerprint.
        plan = load_plan(from_plan, config) if from_plan is not None else plan_benchmark(config)
        if plan.fingerprint() != first["plan_sha256"]:
            raise UserError(
                f"re-planning the build of {first['location']} gives another plan than its shards "
                "(another tool version or atom library?): build the shards and merge with the same installation"
            )
        n = plan.n_clips
        scene = plan.scene is not None
        # a large corpus's render statistics and digests go to temporary files, shard by shard (the
        # shards are contiguous clip ranges in order): in memory they take ~130 B a clip
        on_disk = n > spill.SPILL_CLIPS and not scene
        peaks = np.full(0 if on_disk else n, np.nan, np.float64)
        gains = np.full(0 if on_disk else n, np.nan, np.float64)
        if on_disk:
            peak_file, gain_file, digest_file = ArrayFile(np.float64), ArrayFile(np.float64), ArrayFile("S64")
        ptr = plan.final["clip_event_ptr"]
        # a scene's bed gains and event SNRs (none without a scene: 24 B a clip)
        bed_gain = np.full(n if scene else 0, np.nan, np.float32)
        snr = np.full(int(ptr[n]) if scene else 0, np.nan, np.float32)
        paths = plan.rel_paths
        digest_list: list[str] = []
        with tqdm(total=n, desc="merge", unit="clip", disable=not progress) as bar:
            for k in range(first["shards"]):
                m = by_k[k]
                lo, hi = m["clip_range"]
                stats = _render_stats(m, RENDER_STATS, ("clip_index", "peak", "gain", *(("bed_gain",) if scene else ())))
                if stats["clip_index"].to_list() != list(range(lo, hi)):
                    raise UserError(f"{m['location']}/{RENDER_STATS}: does not list clips {lo}..{hi - 1} in order")
                if on_disk:
                    if lo != peak_file.n:
                        raise AssertionError(f"shard {k} starts at clip {lo}, not {peak_file.n}")
                    peak_file.append(stats["peak"].to_numpy())
                    gain_file.append(stats["gain"].to_numpy())
                else:
                    peaks[lo:hi] = stats["peak"].to_numpy()
                    gains[lo:hi] = stats["gain"].to_numpy()
                if scene:
                    bed_gain[lo:hi] = stats["bed_gain"].to_numpy()
                    ev = _render_stats(m, RENDER_EVENTS, ("event_row", "snr_db"))
                    e0, e1 = int(ptr[lo]), int(ptr[hi])
                    if ev["event_row"].to_list() != list(range(e0, e1)):
                        raise UserError(f"{m['location']}/{RENDER_EVENTS}: does not list event rows {e0}..{e1 - 1} in order")
                    snr[e0:e1] = ev["snr_db"].to_numpy()
                if copy_audio:
                    names = [p.rpartition("/")[2] for p in paths[lo:hi]]
                    _copy_files(m["fs"], [f"{m['path']}/{p}" for p in paths[lo:hi]], dest.audio_fs,
                                [f"{dest.audio_dir}/{x}" for x in names], m["location"])
                elif on_disk:
                    digest_file.append(np.array(shard_audio_hashes(m, paths[lo:hi]), dtype="S64"))
                else:
                    digest_list += shard_audio_hashes(m, paths[lo:hi])
                bar.update(hi - lo)
        digests: Sequence[str] = digest_list
        if on_disk:
            peaks, gains = peak_file.array(), gain_file.array()
            if not copy_audio:
                digests = HexDigests(digest_file.array())
        if scene:
            plan.scene_report = {"bed_gain": bed_gain, "ev_snr_db": snr}  # type: ignore[attr-defined]
        if copy_audio:
            manifest = write_benchmark(plan, dest.root, peaks, gains, dest)
            _check_copies(dest.root, [by_k[k] for k in range(first["shards"])])
        else:
            manifest = write_benchmark(plan, dest.root, peaks, gains, dest, audio_sha256=digests)
    return Built(out if storage.is_uri(out) else Path(out), manifest)


class HexDigests(Sequence[str]):
    """sha256 hex digests held as 64-byte strings of an array (a memory map of them), read as `str`."""

    def __init__(self, raw: np.ndarray):
        self.raw = raw

    def __len__(self) -> int:
        return len(self.raw)

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [d.decode("ascii") for d in self.raw[i].tolist()]
        return self.raw[i].decode("ascii")

    def __iter__(self) -> Iterator[str]:
        for lo in range(0, len(self.raw), 1 << 16):
            yield from self[lo : lo + (1 << 16)]
            release(self.raw)


def shard_audio_hashes(meta: dict, rel_paths: list[str]) -> list[str]:
    """The sha256 of each of `rel_paths` (the shard's clips, in clip order) from the shard's
    audio.sha256, which must name exactly those files: a UserError names the shard's file and the
    first path missing from it or foreign to the shard."""
    where = f"{meta['location']}/{AUDIO_HASHES}"
    listed = _shard_hash_list(meta)
    if listed is None:
        raise UserError(f"{where}: missing (a merge without the audio takes each clip's sha256 from it): "
                        "build that shard again")
    missing = [p for p in rel_paths if p not in listed]
    if missing:
        raise UserError(f"{where}: does not list {missing[0]} ({len(missing)} of the shard's {len(rel_paths)} clips "
                        "missing; a hash list of another shard or build?)")
    if len(listed) != len(rel_paths):
        extra = sorted(set(listed) - set(rel_paths))
        raise UserError(f"{where}: lists {extra[0]}, not a clip of this shard ({len(extra)} such line(s))")
    return [listed[p] for p in rel_paths]


def _shard_hash_list(meta: dict) -> dict[str, str] | None:
    """A shard's audio.sha256 as {relative path: sha256}; None when the shard has none."""
    try:
        data = meta["fs"].cat_file(f"{meta['path']}/{AUDIO_HASHES}")
    except FileNotFoundError:
        return None
    return parse_audio_hashes(data, f"{meta['location']}/{AUDIO_HASHES}")


def _check_copies(root: Path, metas: list[dict]) -> None:
    """The merged audio against each shard's audio.sha256 (where the shard wrote one): a shard WAV
    that changed after its build is named, and nothing is merged."""
    merged = read_audio_hashes(root) or {}
    for m in metas:
        where = f"{m['location']}/{AUDIO_HASHES}"
        listed = _shard_hash_list(m)
        if listed is None:
            continue  # a shard built before the file existed
        for rel, digest in listed.items():
            if merged.get(rel) != digest:
                raise UserError(f"{m['location']}/{rel}: sha256 differs from {where} (the file changed after the shard "
                                "was built); nothing was merged: build that shard again")


def _render_stats(meta: dict, name: str, columns: tuple[str, ...]) -> pl.DataFrame:
    """A shard's render statistics (`name`), or a UserError naming the file (truncated, foreign, columns missing)."""
    where = f"{meta['location']}/{name}"
    try:
        stats = pl.read_parquet(meta["fs"].cat_file(f"{meta['path']}/{name}"))
    except FileNotFoundError:
        raise UserError(f"{where}: missing (the shard is incomplete: build it again)") from None
    except Exception as err:  # polars raises several types for a corrupt file
        raise UserError(f"{where}: cannot read parquet ({err}); the shard is damaged: build it again") from None
    missing = [c for c in columns if c not in stats.columns]
    if missing:
        raise UserError(f"{where}: missing column(s) {', '.join(missing)}")
    return stats


def _copy_files(src_fs, srcs: list[str], dst_fs, dsts: list[str], where: str) -> None:
    """Copies audio between filesystems (same filesystem: its own copy, e.g. server-side on S3)."""
    if not srcs:
        return
    try:
        if type(src_fs) is type(dst_fs) and src_fs.protocol == dst_fs.protocol:
            src_fs.copy(srcs, dsts)
        elif isinstance(dst_fs, type(storage.local_fs())):
            src_fs.get(srcs, dsts)
        elif isinstance(src_fs, type(storage.local_fs())):
            dst_fs.put(srcs, dsts)
        else:
            for s, d in zip(srcs, dsts):
                dst_fs.pipe_file(d, src_fs.cat_file(s))
    except FileNotFoundError as err:
        raise UserError(f"{where}: audio file missing ({err})") from None


# --- a plan computed once, shipped to every shard ---------------------------------------------------

PLAN_FORMAT = "reasonaudio-plan/2"
# format 1 held every clip id in its JSON header (~20 B a clip, ~70 B a clip once decoded); it is read still
PLAN_FORMATS = ("reasonaudio-plan/1", PLAN_FORMAT)
PLAN_FILE = npz_kind("build plan", PLAN_FORMATS)


def save_plan(plan, path: str | Path, *, inputs=(), force: bool = False) -> Path:
    """Writes `plan` as one .npz file (arrays plus a JSON header; no pickle), atomically; an
    existing file is replaced only when it is an earlier plan and `force` is given."""
    path = Path(path)
    rel = plan.relevant
    meta = {
        "format": PLAN_FORMAT,
        "config": asdict(plan.config),
        "params": plan.params,
        "thresholds": list(plan.thresholds),
        "specs": [asdict(s) for s in plan.specs],
        "query_ids": plan.query_ids,
        "n_clips": plan.n_clips,
        "positives": plan.positives,
        "negatives": plan.negatives,
        "planned": plan.planned,
        "hard_counts": plan.hard_counts,
        "fingerprint": plan.fingerprint(),
    }
    arrays = {f"final_{k}": np.ascontiguousarray(v) for k, v in plan.final.items()}
    arrays["relevant_indptr"] = np.concatenate([[0], np.cumsum([len(r) for r in rel])]).astype(np.int64)
    arrays["relevant_clips"] = _joined(rel, on_disk=plan.n_clips > spill.SPILL_CLIPS)
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), np.uint8)
    with output_file(path, PLAN_FILE, inputs=inputs, force=force, option="--save-plan") as tmp:
        with open(tmp, "wb") as fh:
            write_npz(fh, arrays)
    return path


def _joined(lists: list[np.ndarray], on_disk: bool) -> np.ndarray:
    """The lists end to end as int64: in a temporary file read as a memory map for a plan on disk
    (8 B a relevant pair would grow with the corpus), else in memory."""
    if not on_disk:
        return np.concatenate([np.asarray(r, np.int64) for r in lists]) if lists else np.zeros(0, np.int64)
    joined = ArrayFile(np.int64)
    for r in lists:
        joined.append(r)
        release(r)
    return joined.array()


def load_plan(path: str | Path, config=None):
    """The BuildPlan saved by `save_plan`; with `config`, refuses a plan made with other build
    parameters (threads aside). The atom library is opened again and must match the plan.

    The plan's arrays are memory maps of the file (`reasonaudio.io.npz`): a shard reads the pages
    of its own clips, so its memory does not grow with the corpus. The final columns are checked
    against the plan's fingerprint and the other arrays against their CRC-32, each read from the
    file a chunk at a time."""
    path = Path(path)
    t0 = time.perf_counter()
    try:
        arrays = open_npz(path, verify={"meta", "relevant_indptr", "relevant_clips"})
        meta = json.loads(bytes(array_of(arrays["meta"])).decode())
        stored = {k[len("final_"):]: v for k, v in arrays.items() if k.startswith("final_")}
        final = {k: array_of(v) for k, v in stored.items()}
        indptr, clips = array_of(arrays["relevant_indptr"]), array_of(arrays["relevant_clips"])
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:  # truncated or foreign
        raise UserError(f"{path}: not a reasonaudio plan file ({err.__class__.__name__}: {err})") from None
    if not isinstance(meta, dict):
        raise UserError(f"{path}: not a reasonaudio plan file (its header is not a JSON object)")
    if meta.get("format") not in PLAN_FORMATS:
        raise UserError(f"{path}: format {meta.get('format')!r}, expected {PLAN_FORMAT!r}")
    saved = BuildConfig(**meta["config"])
    if config is not None:
        mine, theirs = config.recorded(), saved.recorded()
        diff = sorted(k for k in mine if mine[k] != theirs.get(k))
        if diff:
            shown = ", ".join(f"{k}={theirs.get(k)!r} (here {mine[k]!r})" for k in diff)
            raise UserError(f"{path}: planned with other build parameters: {shown}")
        saved.threads = config.threads
    library = AtomLibrary.open(saved.atoms, sample_rate=saved.sample_rate)
    audio, offsets = library.flat()
    if "clip_ids" in meta:  # format 1
        clip_ids = ClipIds(len(meta["clip_ids"]))
        if any(a != b for a, b in zip(clip_ids, meta.pop("clip_ids"))):
            raise UserError(f"{path}: not a reasonaudio plan file (its clip ids are not clip_<index>)")
    else:
        clip_ids = ClipIds(int(meta["n_clips"]))
    plan = BuildPlan(
        saved, library, audio, offsets, meta["params"], meta["thresholds"], final, clip_ids,
        [QuerySpec(**s) for s in meta["specs"]], meta["query_ids"],
        [clips[indptr[q] : indptr[q + 1]] for q in range(len(indptr) - 1)],
        meta["positives"], meta["negatives"], meta["planned"], meta["hard_counts"], 0.0,
    )
    if saved.scene is not None:
        # the scene's sources are loaded again (seeded; their hashes are in the fingerprint) and its
        # draws depend on (seed, clip) alone: the loaded plan renders what the planning process would
        scene_cfg = SceneConfig.from_recorded(saved.scene)
        attach_scene(plan, resolve(scene_cfg, saved.sample_rate, saved.seed, list(LabelView.of(library).labels)))
    def column_bytes(key: str):
        item = stored[key]
        return item.chunks() if isinstance(item, NpzMember) else [np.ascontiguousarray(item).view(np.uint8)]

    try:
        found = plan.fingerprint(column_bytes)
    except (OSError, ValueError) as err:
        raise UserError(f"{path}: not a reasonaudio plan file ({err.__class__.__name__}: {err})") from None
    if found != meta["fingerprint"]:
        raise UserError(f"{path}: the atom library, scene sources or tool version differ from the ones that made this plan")
    plan.known_fingerprint = found
    plan.seconds = time.perf_counter() - t0
    plan.origin = f"loaded the plan {path}"
    return plan
