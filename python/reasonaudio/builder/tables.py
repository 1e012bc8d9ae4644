"""The tables, the BEIR export and the manifest of a rendered plan (contract §4)."""

from __future__ import annotations

import hashlib
import itertools
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
from polars.io.plugins import register_io_source

from reasonaudio import _core
from reasonaudio._core import __version__
from reasonaudio.atoms import recordings_used, write_attribution
from reasonaudio.atoms.exemplars import markdown_cell
from reasonaudio.builder.config import AUDIO_FORMATS
from reasonaudio.builder.plan import BuildPlan, id_series
from reasonaudio.contract import (
    BEIR_CORPUS,
    BEIR_FILES,
    BEIR_QRELS,
    BEIR_QRELS_HEADER,
    BEIR_QUERIES,
    FORMAT_VERSION,
    FORMAT_VERSION_ONE_EXEMPLAR,
    FORMAT_VERSION_SCENE,
    BACKGROUNDS_DIR,
    ROOMS_DIR,
    PATTERNS,
    TASKS,
)
from reasonaudio.contract.reference import summary_stats
from reasonaudio.io.audio_hashes import AUDIO_HASHES, write_audio_hashes
from reasonaudio.io.parquet import TABLE_WRITE_OPTIONS, pin_writer_name, write_table
from reasonaudio.io import spill
from reasonaudio.io.spill import ArrayFile, release
from reasonaudio.relevance import as_int64, positive_labels

@dataclass(frozen=True, eq=False)
class Built:
    """What `build` made: where (a path, or the URI given), and the manifest it wrote (a shard: its
    `shard.json` metadata instead). Usable wherever a path is (`os.fspath`, `Path(built)`,
    `built / "manifest.json"`) and equal to that path, as `build` returned before it returned more."""

    path: Path | str
    manifest: dict
    shard: dict | None = None

    def __fspath__(self) -> str:
        return os.fspath(self.path)

    def __str__(self) -> str:
        return str(self.path)

    def __eq__(self, other: object) -> bool:
        return self.path == (other.path if isinstance(other, Built) else other)

    def __hash__(self) -> int:
        return hash(self.path)

    def __truediv__(self, name: str) -> Path | str:
        return self.path / name if isinstance(self.path, Path) else f"{self.path.rstrip('/')}/{name}"


def write_benchmark(plan: BuildPlan, root: Path, peaks: np.ndarray, gains: np.ndarray, dest=None, *,
                    audio_sha256: list[str] | None = None) -> dict:
    """Writes the tables, the BEIR export, the attribution, the manifest and audio.sha256 of a
    rendered plan into `root` (`peaks`/`gains`: the limiter's statistics per clip; `dest`: the staged
    output, whose audio may be elsewhere than root/audio; `audio_sha256`: every clip file's sha256
    in clip order where the renderer hashed what it wrote, else the files are read back)."""
    early = write_plan_files(plan, root)
    return finish_benchmark(plan, root, early, peaks, gains, dest, audio_sha256=audio_sha256)


def write_plan_files(plan: BuildPlan, root: Path) -> dict[str, pl.DataFrame] | None:
    """The part of `write_benchmark` that needs no rendered audio (for a plan without a scene: the
    atoms, events, queries, qrels and mc tables, the BEIR export, the attribution), so that it can
    run while the audio renders; returns the small tables written (atoms, queries, mc; None:
    nothing written, a scene plan). The events and qrels are written block by block
    (`write_blocks`), never held whole."""
    if plan.scene is not None:
        return None
    small = plan_tables(plan, large=False)
    for name in PLAN_TABLES:
        path = root / f"{name}.parquet"
        if name in small:
            write_table(small[name], path)
        elif name == "events":
            write_blocks(path, _event_blocks(plan), int(plan.final["clip_event_ptr"][-1]))
        else:
            write_blocks(path, _qrels_blocks(plan), sum(len(r) for r in plan.relevant))
    write_beir(root, plan)
    write_attribution(root, plan.library, plan.final["ev_atom"])
    release(plan.final, plan.relevant[:1])
    return small


# --- tables written block by block ----------------------------------------------------------------

# A table of up to STREAM_ROWS rows is made whole and written by polars' `write_parquet` (its row
# groups split the rows evenly); a longer one is made BLOCK_ROWS rows at a time and streamed by
# polars' `sink_parquet` in row groups of ROW_GROUP_ROWS rows (the same bytes whatever the blocks).
# So the memory a table takes is bounded by STREAM_ROWS rows (~170 B a row of events.parquet, ~45
# B of qrels.parquet: at most ~180 MB), whatever the corpus size, and a table of up to STREAM_ROWS
# rows keeps the bytes of the whole-frame writer.
STREAM_ROWS = 1 << 20
BLOCK_ROWS = 1 << 16
ROW_GROUP_ROWS = 1 << 17
PLAN_TABLES = ("atoms", "events", "queries", "qrels", "mc")  # write order


def write_blocks(path: Path, blocks: Iterator[pl.DataFrame], n_rows: int) -> None:
    """Writes the frames `blocks` yields (together `n_rows` rows, in order) as one parquet table,
    with the options and the footer of `io.parquet.write_table`."""
    if n_rows <= STREAM_ROWS:
        write_table(pl.concat(list(blocks), rechunk=True), path)
        return
    first = next(blocks)
    schema = first.schema

    def source(with_columns, predicate, n_rows, batch_size):
        for frame in itertools.chain([first], blocks):
            yield frame if with_columns is None else frame.select(with_columns)

    register_io_source(source, schema=schema).sink_parquet(path, **TABLE_WRITE_OPTIONS, row_group_size=ROW_GROUP_ROWS)
    pin_writer_name(path)


def _clip_blocks(plan: BuildPlan) -> Iterator[tuple[int, int]]:
    """Clip ranges holding about BLOCK_ROWS events each (at least one clip)."""
    ptr = as_int64(plan.final["clip_event_ptr"])
    lo = 0
    while lo < plan.n_clips:
        hi = max(lo + 1, int(np.searchsorted(ptr, ptr[lo] + BLOCK_ROWS, side="right")) - 1)
        hi = min(hi, plan.n_clips)
        yield lo, hi
        lo = hi


def _event_blocks(plan: BuildPlan) -> Iterator[pl.DataFrame]:
    """events.parquet, a clip range at a time."""
    cols, sr = plan.final, plan.config.sample_rate
    ptr = as_int64(cols["clip_event_ptr"])
    atoms_df = plan.library.to_frame()
    atom_ids, labels = pl.Series(atoms_df["atom_id"].to_list()), pl.Series(atoms_df["label"].to_list())
    modes = pl.Series(["native", "loop", "trim"])
    for lo, hi in _clip_blocks(plan):
        e0, e1 = int(ptr[lo]), int(ptr[hi])
        ev_clip = cols["ev_clip"][e0:e1].astype(np.int64)
        onset = cols["ev_onset"][e0:e1].astype(np.int64)
        offset = onset + cols["ev_length"][e0:e1].astype(np.int64)
        atom = cols["ev_atom"][e0:e1].astype(np.int64)
        yield pl.DataFrame(
            {
                "clip_id": id_series(plan.clip_ids, ev_clip, "clip_id"),
                "event_index": (np.arange(e0, e1) - ptr[ev_clip]).astype(np.int32),
                "atom_id": atom_ids.gather(atom),
                "label": labels.gather(atom),
                "onset_sample": onset,
                "offset_sample": offset,
                "onset_s": onset / sr,
                "offset_s": offset / sr,
                "gain_db": cols["ev_gain_db"][e0:e1].astype(np.float64).round(2),
                "mode": modes.gather(cols["ev_mode"][e0:e1].astype(np.int64)),
            }
        )
        release(cols)  # a plan on disk: the pages of the block just read


def _qrels_blocks(plan: BuildPlan) -> Iterator[pl.DataFrame]:
    """qrels.parquet (every relevant pair, by query), about BLOCK_ROWS rows at a time."""
    schema = {"query_id": pl.String, "clip_id": pl.String, "relevance": pl.Int32}
    pieces: list[tuple[str, np.ndarray]] = []
    held = 0

    def frame() -> pl.DataFrame:
        n = sum(len(c) for _, c in pieces)
        clips = np.concatenate([np.asarray(c, dtype=np.int64) for _, c in pieces]) if pieces else np.zeros(0, np.int64)
        return pl.DataFrame(
            {
                "query_id": [qid for qid, c in pieces for _ in range(len(c))],
                "clip_id": id_series(plan.clip_ids, clips, "clip_id"),
                "relevance": np.ones(n, np.int32),
            },
            schema=schema,
        )

    yielded = False
    for qid, rel in zip(plan.query_ids, plan.relevant):
        for start in range(0, len(rel), BLOCK_ROWS):
            part = rel[start : start + BLOCK_ROWS]
            pieces.append((qid, part))
            held += len(part)
            if held >= BLOCK_ROWS:
                yield frame()
                pieces, held, yielded = [], 0, True
    if pieces or not yielded:
        yield frame()


def finish_benchmark(plan: BuildPlan, root: Path, early: dict[str, pl.DataFrame] | None, peaks: np.ndarray,
                     gains: np.ndarray, dest=None, *, audio_sha256: list[str] | None = None) -> dict:
    """The rest of `write_benchmark` once the audio is rendered (`early`: what `write_plan_files`
    returned): clips.parquet, the manifest and audio.sha256."""
    peaks, gains = np.asarray(peaks, np.float64), np.asarray(gains, np.float64)
    if early is None:
        tables = benchmark_tables(plan, peaks, gains)
        for name, frame in tables.items():
            write_table(frame, root / f"{name}.parquet")
        if plan.scene is not None:
            write_scene_sources(root, plan)
            if getattr(plan.config, "scene", None) and (plan.config.scene or {}).get("annotations"):
                write_dcase(root, plan, tables)
        write_beir(root, plan)
        beds = plan.scene.beds if plan.scene is not None else []  # type: ignore[attr-defined]
        write_attribution(root, plan.library, plan.final["ev_atom"], _beds_attribution(beds) if beds else "")
    else:
        write_blocks(root / "clips.parquet", _clips_blocks(plan, peaks, gains), plan.n_clips)
    names = list(tables) if early is None else ["atoms", "clips", *PLAN_TABLES[1:]]
    manifest = benchmark_manifest(plan, root, names)
    write_json(root / "manifest.json", manifest)
    if audio_sha256 is not None:
        write_audio_hash_list(root, plan.rel_paths, audio_sha256)
    elif dest is not None:
        write_audio_hashes(root, plan.rel_paths, dest.audio_fs, dest.audio_dir)
    else:
        write_audio_hashes(root, plan.rel_paths)
    return manifest


def write_audio_hash_list(root: Path, rel_paths: Sequence[str], digests: Sequence[str]) -> Path:
    """root/audio.sha256 from digests the renderer computed (one per path, same order): the lines
    `write_audio_hashes` writes after reading every file back (sha256sum format, sorted by path)."""
    if len(digests) != len(rel_paths):
        raise AssertionError(f"{len(digests)} audio hashes for {len(rel_paths)} clips")
    path = root / AUDIO_HASHES
    # a plan's paths are in order already (zero-padded ids): written a block at a time, no sorted copy
    in_order = all(a < b for a, b in zip(rel_paths, itertools.islice(rel_paths, 1, None)))
    rows = zip(rel_paths, digests) if in_order else iter(sorted(zip(rel_paths, digests)))
    with open(path, "w", encoding="utf-8") as fh:
        while block := list(itertools.islice(rows, BLOCK_ROWS)):
            fh.write("".join(f"{d}  {rel}\n" for rel, d in block))
    return path


def write_json(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, indent=2, sort_keys=False) + "\n")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def benchmark_tables(plan: BuildPlan, peaks: np.ndarray, gains: np.ndarray) -> dict[str, pl.DataFrame]:
    """The contract's tables (§4) of a plan, in the order they are written."""
    early = plan_tables(plan)
    clips = clips_table(plan, peaks, gains)
    tables = {"atoms": early["atoms"], "clips": clips, **{k: v for k, v in early.items() if k != "atoms"}}
    if plan.scene is not None:
        tables.update(scene_tables(plan, clips, tables["events"]))
    return tables


def clips_table(plan: BuildPlan, peaks: np.ndarray, gains: np.ndarray) -> pl.DataFrame:
    """clips.parquet: the one table that needs the rendered audio's limiter statistics."""
    return pl.concat(list(_clips_blocks(plan, peaks, gains)), rechunk=True)


def _clips_blocks(plan: BuildPlan, peaks: np.ndarray, gains: np.ndarray) -> Iterator[pl.DataFrame]:
    """clips.parquet, BLOCK_ROWS clips at a time."""
    cols, sr = plan.final, plan.config.sample_rate
    ptr = cols["clip_event_ptr"].astype(np.int64)
    for lo in range(0, plan.n_clips, BLOCK_ROWS):
        hi = min(lo + BLOCK_ROWS, plan.n_clips)
        clip_len = cols["clip_length"][lo:hi].astype(np.int64)
        yield pl.DataFrame(
            {
                "clip_id": plan.clip_ids[lo:hi],
                "path": plan.rel_paths_of(lo, hi),
                "pattern": [PATTERNS[int(x)] for x in cols["clip_overlap"][lo:hi]],
                "duration_s": clip_len / sr,
                "n_events": np.diff(ptr[lo : hi + 1]).astype(np.int32),
                "n_samples": clip_len,
                "peak_before_limiter": peaks[lo:hi].round(6),
                "limiter_gain": gains[lo:hi].round(6),
            }
        )


def plan_tables(plan: BuildPlan, *, large: bool = True) -> dict[str, pl.DataFrame]:
    """The tables decided by the plan alone (atoms, events, queries, qrels, mc), in write order;
    `large=False` leaves out the two that grow with the corpus (events, qrels)."""
    config, clip_ids = plan.config, plan.clip_ids
    specs, query_ids, rel, positives, negatives = plan.specs, plan.query_ids, plan.relevant, plan.positives, plan.negatives
    atoms_df = plan.library.to_frame()
    del config
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
    mc = pl.DataFrame(
        {
            "query_id": query_ids,
            "positive_clip_id": [clip_ids[i] for i in positives],
            "negative_clip_id": [clip_ids[i] for i in negatives],
            "task": [s.task for s in specs],
        },
        schema={"query_id": pl.String, "positive_clip_id": pl.String, "negative_clip_id": pl.String, "task": pl.String},
    )
    if not large:
        return {"atoms": atoms_df, "queries": queries, "mc": mc}
    events = pl.concat(list(_event_blocks(plan)), rechunk=True)
    qrels = pl.concat(list(_qrels_blocks(plan)), rechunk=True)
    return {"atoms": atoms_df, "events": events, "queries": queries, "qrels": qrels, "mc": mc}


def scene_tables(plan: BuildPlan, clips: pl.DataFrame, events: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """Contract §5's columns and tables. events.parquet gets only the plan's pitch/stretch (the same
    in every condition of one plan); what a condition changes (bed, SNR, room) lives in clips.parquet
    and scene_events.parquet (every event's rendered SNR), so events/queries/qrels/mc stay identical
    across the conditions of one plan."""
    assets, d = plan.scene, plan.draws
    report = getattr(plan, "scene_report", None)
    sr = plan.config.sample_rate
    beds = [b.background_id for b in assets.beds]  # type: ignore[attr-defined]
    rooms = assets.rooms  # type: ignore[attr-defined]
    has_bed = d.clip_bed >= 0  # type: ignore[attr-defined]
    has_room = d.clip_room >= 0  # type: ignore[attr-defined]
    clips = clips.with_columns(
        pl.Series("background_id", [beds[int(b)] if b >= 0 else None for b in d.clip_bed], pl.String),  # type: ignore[attr-defined]
        pl.Series("background_snr_db", [float(x) if h else None for x, h in zip(d.clip_snr_db, has_bed)], pl.Float64),  # type: ignore[attr-defined]
        pl.Series("room_id", [rooms[int(r)].room_id if r >= 0 else None for r in d.clip_room], pl.String),  # type: ignore[attr-defined]
        pl.Series("tail_s", [float(rooms[int(r)].tail_s) if r >= 0 else 0.0 for r in d.clip_room], pl.Float64),  # type: ignore[attr-defined]
        pl.Series("background_start_sample", np.where(has_bed, d.clip_bed_start, 0).astype(np.int64)),  # type: ignore[attr-defined]
        pl.Series("background_gain", np.round(report["bed_gain"].astype(np.float64), 9) if report is not None else np.zeros(len(has_bed))),
    )
    del has_room
    n_ev = events.height
    # An event's pitch and stretch compose: its varispeed's, then its shift's and stretch's.
    pitch, stretch = np.zeros(n_ev), np.ones(n_ev)
    if d.ev_speed.size:  # type: ignore[attr-defined]
        info = {int(k): _core.speed_info(int(k)) for k in np.unique(d.ev_speed)}  # type: ignore[attr-defined]
        pitch = pitch + np.array([info[int(k)][0] for k in d.ev_speed])  # type: ignore[attr-defined]
        stretch = stretch * np.array([info[int(k)][1] for k in d.ev_speed])  # type: ignore[attr-defined]
    if d.ev_pitch_cents.size:  # type: ignore[attr-defined]
        pitch = pitch + d.ev_pitch_cents / 100.0  # type: ignore[attr-defined]
    if d.ev_stretch.size:  # type: ignore[attr-defined]
        stretch = stretch * (d.ev_stretch / _core.STRETCH_DEN)  # type: ignore[attr-defined]
    pitch, stretch = pitch.round(4) + 0.0, stretch.round(6)
    events = events.with_columns(pl.Series("pitch_semitones", pitch, pl.Float64), pl.Series("stretch", stretch, pl.Float64))
    snr = report["ev_snr_db"].astype(np.float64) if report is not None else np.full(n_ev, np.inf)
    scene_events = pl.DataFrame({
        "clip_id": events["clip_id"], "event_index": events["event_index"],
        "snr_db": pl.Series([float(x) if np.isfinite(x) else None for x in np.round(snr, 4)], dtype=pl.Float64),
    })
    backgrounds = pl.DataFrame(
        {
            "background_id": beds,
            "label": [b.label for b in assets.beds],  # type: ignore[attr-defined]
            "source": [b.source for b in assets.beds],  # type: ignore[attr-defined]
            "license": [b.license for b in assets.beds],  # type: ignore[attr-defined]
            "attribution": [b.attribution for b in assets.beds],  # type: ignore[attr-defined]
            "duration_s": [len(b.audio) / sr for b in assets.beds],  # type: ignore[attr-defined]
            "path": [f"{BACKGROUNDS_DIR}/{b}.wav" for b in beds],
        },
        schema={"background_id": pl.String, "label": pl.String, "source": pl.String, "license": pl.String,
                "attribution": pl.String, "duration_s": pl.Float64, "path": pl.String},
    )
    rooms_df = pl.DataFrame(
        {
            "room_id": [r.room_id for r in rooms],
            "source": [r.source for r in rooms],
            "rt60_s": [float(r.rt60_s) for r in rooms],
            "tail_s": [float(r.tail_s) for r in rooms],
            "path": [f"{ROOMS_DIR}/{r.room_id}.wav" for r in rooms],
            "simulation": [json.dumps(r.params, sort_keys=True) if r.params else None for r in rooms],
        },
        schema={"room_id": pl.String, "source": pl.String, "rt60_s": pl.Float64, "tail_s": pl.Float64, "path": pl.String, "simulation": pl.String},
    )
    return {"clips": clips, "events": events, "backgrounds": backgrounds, "rooms": rooms_df, "scene_events": scene_events}


def _beds_attribution(beds) -> str:
    """ATTRIBUTION.md's section for the background beds (their licenses travel with the audio too)."""
    lines = ["", "## Background beds", "", "| background_id | label | license | source | attribution |", "|---|---|---|---|---|"]
    lines += ["| " + " | ".join(markdown_cell(x) for x in (b.background_id, b.label, b.license, b.source, b.attribution)) + " |"
              for b in beds]
    return "\n".join(lines) + "\n"


def write_scene_sources(root: Path, plan: BuildPlan) -> None:
    """The bed sources and prepared responses as rendered (float32 WAV), for the validator."""
    sr = plan.config.sample_rate
    for sub, items in ((BACKGROUNDS_DIR, [(b.background_id, b.audio) for b in plan.scene.beds]),  # type: ignore[attr-defined]
                       (ROOMS_DIR, [(r.room_id, r.audio) for r in plan.scene.rooms])):  # type: ignore[attr-defined]
        if not items:
            continue
        (root / sub).mkdir(exist_ok=True)
        for name, audio in items:
            (root / sub / f"{name}.wav").write_bytes(_core.encode_audio(np.ascontiguousarray(audio, np.float32), sr, "wav_f32"))


# Clips and relevant pairs per block of the BEIR files (their lines are made by polars, a block at a time).
BEIR_BLOCK_ROWS = 1 << 18

# A string JSON writes as itself between quotes: no quote, backslash, control or non-ASCII character.
_JSON_PLAIN = r"^[ !#-\[\]-~]*$"


def _write_lines(fh, lines: pl.Series) -> None:
    """`lines`, each followed by a newline, written as they are (no quoting)."""
    if len(lines):
        fh.write(("\n".join(lines.to_list()) + "\n").encode())


def write_beir(root: Path, plan: BuildPlan) -> None:
    """The BEIR/MTEB retrieval layout of the benchmark (a corpus row names its audio file). The lines
    are those `json.dumps` writes (default separators, ASCII), made a block at a time."""
    clip_ids, query_ids, specs = plan.clip_ids, plan.query_ids, plan.specs
    ext = AUDIO_FORMATS[plan.config.audio_format]
    (root / BEIR_QRELS).parent.mkdir(parents=True)
    with open(root / BEIR_CORPUS, "wb") as fh:
        for lo in range(0, len(clip_ids), BEIR_BLOCK_ROWS):
            block = id_series(clip_ids, np.arange(lo, min(lo + BEIR_BLOCK_ROWS, len(clip_ids))), "cid")
            if bool((block + ext).str.contains(_JSON_PLAIN).all()):
                lines = pl.select(pl.format('{{"_id": "{}", "title": "", "text": "", "audio": "audio/{}{}"}}', block, block, pl.lit(ext))).to_series()
            else:
                lines = pl.Series([json.dumps({"_id": c, "title": "", "text": "", "audio": f"audio/{c}{ext}"}) for c in block.to_list()], dtype=pl.String)
            _write_lines(fh, lines)
    with open(root / BEIR_QUERIES, "w") as fh:
        for qid, s in zip(query_ids, specs):
            fh.write(json.dumps({"_id": qid, "text": s.text, "task": s.task}) + "\n")
    counts = np.array([len(r) for r in plan.relevant], dtype=np.int64)
    ends = np.cumsum(counts)
    with open(root / BEIR_QRELS, "wb") as fh:
        fh.write((BEIR_QRELS_HEADER + "\n").encode())
        q0 = 0
        while q0 < len(query_ids):
            # whole queries per block: at least one, and at most BEIR_BLOCK_ROWS pairs beyond it
            start = int(ends[q0] - counts[q0])
            q1 = max(q0 + 1, int(np.searchsorted(ends, start + BEIR_BLOCK_ROWS, "right")))
            clips = np.concatenate([np.asarray(r, dtype=np.int64) for r in plan.relevant[q0:q1]])
            qids = pl.Series(query_ids[q0:q1], dtype=pl.String).gather(np.repeat(np.arange(q1 - q0), counts[q0:q1]))
            _write_lines(fh, pl.select(pl.format("{}\t{}\t1", qids, id_series(clip_ids, clips, "cid"))).to_series())
            q0 = q1



COUNT_BLOCK = 1 << 20  # values counted at a time by the manifest's counts


def _counts(parts: Iterator[np.ndarray], minlength: int = 0) -> np.ndarray:
    """np.bincount of the values of `parts` together, a part at a time: a count of a whole
    column copies it as int64 (80 MB for ten million clips)."""
    counts = np.zeros(minlength, dtype=np.int64)
    for part in parts:
        found = np.bincount(part, minlength=minlength)
        counts = np.pad(counts, (0, max(len(found) - len(counts), 0)))
        counts[: len(found)] += found
    return counts


def _blocks_of(column: np.ndarray, overlap: int = 0) -> Iterator[np.ndarray]:
    """`column` COUNT_BLOCK values at a time (`overlap` more at each block's end), its mapped pages
    given back after each."""
    for lo in range(0, max(len(column) - overlap, 0), COUNT_BLOCK):
        yield np.asarray(column[lo : lo + COUNT_BLOCK + overlap])
        release(column)


def _events_per_clip(ptr: np.ndarray) -> dict[int, int]:
    """How many clips hold each number of events, from the event pointers."""
    counts = _counts(np.diff(p.astype(np.int64)) for p in _blocks_of(ptr, overlap=1))
    return {int(k): int(v) for k, v in enumerate(counts) if v}


def _durations(clip_length: np.ndarray, sr: int, on_disk: bool) -> np.ndarray:
    """Every clip's duration in seconds: for a plan on disk written a block at a time to a
    temporary file read as a memory map (8 B a clip), else in memory."""
    if not on_disk:
        return np.asarray(clip_length) / sr
    out = ArrayFile(np.float64)
    for part in _blocks_of(clip_length):
        out.append(part / sr)
    return out.array()


def _duration_stats(durations: np.ndarray, clip_length: np.ndarray, sr: int, on_disk: bool) -> dict:
    """`summary_stats(durations)`; for a plan on disk without the copy `np.median` sorts: the
    median is read from a count of each clip length (whole samples), the middle values averaged as
    np.median does."""
    if not on_disk or len(durations) == 0:
        return summary_stats(durations)
    ends = np.cumsum(_counts(p.astype(np.int64) for p in _blocks_of(clip_length)))
    n = len(durations)
    middle = np.array([np.searchsorted(ends, k, side="right") for k in sorted({(n - 1) // 2, n // 2})], dtype=np.int64)
    stats = {
        "min": round(float(durations.min()), 4),
        "p50": round(float(np.mean(middle / sr)), 4),
        "mean": round(float(durations.mean()), 4),
        "max": round(float(durations.max()), 4),
    }
    release(durations)
    return stats


def benchmark_manifest(plan: BuildPlan, root: Path, tables: list[str]) -> dict:
    """manifest.json of the written tables (`tables`: their names, in write order): parameters,
    counts derived from the plan the tables were made of, content hashes."""
    config, params, library, specs = plan.config, plan.params, plan.library, plan.specs
    rel, planned, hard_counts, thresholds = plan.relevant, plan.planned, plan.hard_counts, list(plan.thresholds)
    sr = config.sample_rate
    n = plan.n_clips
    on_disk = n > spill.SPILL_CLIPS
    durations = _durations(plan.final["clip_length"], sr, on_disk)
    hist, edges = np.histogram(durations, bins=np.arange(0, config.max_clip_s + 2.5, 2.5))
    label_use: dict[str, int] = {}
    for s in specs:
        for lab in positive_labels(s.logic) + [c["not"] for c in s.logic["all"] if "not" in c]:
            label_use[lab] = label_use.get(lab, 0) + 1
    counts = {
        "atoms": len(library),
        "clips": n,
        "clips_by_pattern": {p: int(k) for p, k in zip(PATTERNS, _counts(_blocks_of(plan.final["clip_overlap"]), len(PATTERNS)))},
        "events": len(plan.final["ev_atom"]),
        "queries": len(specs),
        "queries_by_task": {t: sum(1 for s in specs if s.task == t) for t in TASKS},
        "queries_by_shape": dict(sorted({s.shape: sum(1 for x in specs if x.shape == s.shape) for s in specs}.items())),
        "qrels": sum(len(r) for r in rel),
        "mc_pairs": len(plan.positives),
        "planned_hard_negatives": planned,
        "relevant_per_query": summary_stats(np.array([len(r) for r in rel], float)) if specs else None,
        "hard_negatives_per_query": summary_stats(np.array(hard_counts, float)) if specs else None,
        "clip_duration_s": {**_duration_stats(durations, plan.final["clip_length"], sr, on_disk), "histogram": {"edges": edges.tolist(), "counts": hist.tolist()}},
        "events_per_clip": _events_per_clip(plan.final["clip_event_ptr"]),
        "event_modes": {m: int(k) for m, k in zip(("native", "loop", "trim"), _counts(_blocks_of(plan.final["ev_mode"]), 3))},
        "label_use_in_queries": {
            "labels_used": len(label_use),
            "max": max(label_use.values(), default=0),
            "mean": round(float(np.mean(list(label_use.values()))), 3) if label_use else 0.0,
            "per_label": dict(sorted(label_use.items())),
        },
    }
    hashes = {f"{name}.parquet": sha256_file(root / f"{name}.parquet") for name in tables}
    hashes["atoms_audio"] = hashlib.sha256(np.ascontiguousarray(plan.atom_audio, dtype="<f4").tobytes()).hexdigest()
    for rel_name in BEIR_FILES:
        hashes[rel_name] = sha256_file(root / rel_name)
    # A library with one exemplar per label and no split/attribution is a v1 benchmark: it keeps its
    # v1 manifest byte for byte (a v1 benchmark is a valid v2 one).
    v2 = bool(library.splits or library.attributions) or library.n_labels != len(library)
    extra = {"recordings": recordings_used(library, plan.final["ev_atom"])} if v2 else {}
    if plan.scene is not None:
        extra["scene"] = scene_manifest(plan, root)
    version = FORMAT_VERSION_SCENE if plan.scene is not None else FORMAT_VERSION if v2 else FORMAT_VERSION_ONE_EXEMPLAR
    return {
        "format_version": version,
        "tool_version": __version__,
        "seed": config.seed,
        "sample_rate": sr,
        "params": {
            "build": {k: v for k, v in config.recorded().items() if not (k == "exemplar_split" and not v2)},
            "plan": params,
            "duration_thresholds_s": thresholds,
            "margin_s": params["margin_s"],
            "background": (plan.config.scene or {}).get("background") if plan.scene is not None else None,
            "audio_format": config.audio_format,
        },
        "counts": counts,
        "hashes": hashes,
        "hash_scheme": "sha256 of file bytes; atoms_audio = sha256 of the atom bank as little-endian float32",
        **extra,
    }


def scene_manifest(plan: BuildPlan, root: Path) -> dict:
    """Every scene parameter, and the bed and room sources with their hashes (contract §5)."""
    assets = plan.scene
    cfg = plan.config
    sr = cfg.sample_rate
    return {
        **(cfg.scene or {}),
        "snr_headroom_db": _core.SNR_HEADROOM_DB,
        "speed_den": _core.SPEED_DEN,
        "bed_loop_crossfade_samples": int(round(50.0 * sr / 1000)),
        "bed_edge_fade_samples": int(round(5.0 * sr / 1000)),
        "plan_tail_s": plan.params.get("tail_s", 0.0),
        "backgrounds": [
            {"background_id": b.background_id, "label": b.label, "source": b.source, "sha256": b.sha256,
             "file_sha256": sha256_file(root / BACKGROUNDS_DIR / f"{b.background_id}.wav")}
            for b in assets.beds  # type: ignore[attr-defined]
        ],
        "rooms": [
            {"room_id": r.room_id, "source": r.source, "sha256": r.sha256, "tail_s": r.tail_s,
             "file_sha256": sha256_file(root / ROOMS_DIR / f"{r.room_id}.wav")}
            for r in assets.rooms  # type: ignore[attr-defined]
        ],
    }


def write_dcase(root: Path, plan: BuildPlan, tables: dict[str, pl.DataFrame]) -> None:
    """DCASE-style strong labels (filename, onset, offset, event_label; seconds, tab-separated) and
    one JAMS file per clip under jams/, both from the dry extents. A JAMS file has two annotations
    (valid against jams' schema): `tag_open` (each event's label over its extent) and `scaper` (Scaper's namespace: per event its source file,
    onset, duration, SNR, role, pitch_shift and time_stretch; the bed as the background event), with
    the clip's room and bed level in the annotation's sandbox."""
    sr = plan.config.sample_rate
    events, clips = tables["events"], tables["clips"]
    name_of = dict(zip(plan.clip_ids, (p.rpartition("/")[2] for p in plan.rel_paths)))
    dur_of = dict(zip(plan.clip_ids, (plan.final["clip_length"].astype(np.int64) / sr).tolist()))
    source_of = dict(tables["atoms"].select("atom_id", "source").iter_rows())
    snr_of = {(c, k): v for c, k, v in tables["scene_events"].select("clip_id", "event_index", "snr_db").iter_rows()}
    beds = {b.background_id: b for b in plan.scene.beds}  # type: ignore[attr-defined]
    clip_rows = {r["clip_id"]: r for r in clips.select(
        "clip_id", "background_id", "background_snr_db", "background_start_sample", "room_id", "tail_s").iter_rows(named=True)}
    cols = ("clip_id", "event_index", "atom_id", "onset_s", "offset_s", "label", "pitch_semitones", "stretch")
    sound_events: dict[str, list] = {}
    scaper: dict[str, list] = {}
    with open(root / "strong_labels.tsv", "w") as fh:
        fh.write("filename\tonset\toffset\tevent_label\n")
        for cid, k, atom, on, off, lab, pitch, stretch in events.select(cols).iter_rows():
            fh.write(f"{name_of[cid]}\t{on:.6f}\t{off:.6f}\t{lab}\n")
            dur = round(off - on, 6)
            sound_events.setdefault(cid, []).append({"time": on, "duration": dur, "value": lab, "confidence": 1.0})
            value = {"label": lab, "source_file": str(source_of[atom]), "source_time": 0.0, "event_time": on,
                     "event_duration": dur, "role": "foreground", "pitch_shift": pitch, "time_stretch": stretch}
            if snr_of.get((cid, k)) is not None:
                value["snr"] = snr_of[(cid, k)]
            scaper.setdefault(cid, []).append({"time": on, "duration": dur, "value": value, "confidence": 1.0})
    (root / "jams").mkdir(exist_ok=True)
    for cid, obs in sound_events.items():
        row, dur = clip_rows[cid], dur_of[cid]
        bg = []
        if row["background_id"] is not None:
            bed = beds[row["background_id"]]
            # Scaper's convention: the background is the SNR reference (0) and spans the clip.
            bg = [{"time": 0.0, "duration": dur, "confidence": 1.0, "value": {
                "label": bed.label, "source_file": bed.source, "source_time": row["background_start_sample"] / sr,
                "event_time": 0.0, "event_duration": dur, "snr": 0.0, "role": "background",
                "pitch_shift": None, "time_stretch": None}}]
        sandbox = {"reasonaudio": {
            "room_id": row["room_id"], "tail_s": row["tail_s"], "background_snr_db": row["background_snr_db"],
            "snr": "10*log10(E_event / E_bed) over the event's dry extent, on its own (wet) signal (contract §5)"}}
        meta = {"annotator": {"name": "reasonaudio"}}
        doc = {
            "file_metadata": {"title": cid, "duration": dur, "jams_version": "0.3.4"},
            "annotations": [
                {"namespace": "tag_open", "data": obs, "annotation_metadata": meta, "sandbox": {}, "time": 0, "duration": dur},
                {"namespace": "scaper", "data": bg + scaper[cid], "annotation_metadata": meta, "sandbox": sandbox,
                 "time": 0, "duration": dur},
            ],
            "sandbox": {},
        }
        (root / "jams" / f"{cid}.jams").write_text(json.dumps(doc, indent=1) + "\n")
