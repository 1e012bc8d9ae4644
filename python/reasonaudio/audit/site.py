"""Write the listening-audit site: sampled queries as blind cards, audio and spectrograms copied in.

Layout of SITE:

    index.html, audit.js, audit.css   the page (package data, copied verbatim)
    cards.js                          `window.REASONAUDIO_AUDIT = {...}`: site id, benchmark hash, cards
    audio/<clip>.<ext>                copies of the benchmark's audio (file:// needs no server)
    spec/<clip>.png                   small palette spectrograms

Card data is a script rather than JSON because Chromium refuses fetch() of file:// URLs. A card
lists its clips in a seeded random order and says nothing about which one is relevant: the key
stays in the benchmark (qrels), where `audit score` reads it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np
import polars as pl

from reasonaudio.io.benchmark import TASKS, Benchmark, load_benchmark
from reasonaudio.errors import UserError, require
from reasonaudio.contract.logic import Constraint, LogicError, parse_logic
from reasonaudio.contract.reference import EventIndex

SITE_FORMAT = "reasonaudio-audit-site"
JUDGMENTS_FORMAT = "reasonaudio-audit-judgments"
FORMAT_VERSION = 1
ASSETS = ("index.html", "audit.js", "audit.css")

SPEC_WIDTH, SPEC_HEIGHT = 480, 96  # pixels; about the width of an <audio> player
SPEC_FLOOR_DB = -80.0

# stream tags of numpy.random.default_rng([seed, tag, ...]) so each draw is independent of the others
_TAG_SAMPLE, _TAG_ORDER, _TAG_CLIPS = 0xA0D1, 0xA0D2, 0xA0D3


def manifest_sha256(bench_root: Path) -> str:
    """Identity of the benchmark a site was built from (the manifest holds the tables' hashes)."""
    return hashlib.sha256((Path(bench_root) / "manifest.json").read_bytes()).hexdigest()


# ----------------------------------------------------------------------------------- plain words


def _phrase(label: str, phrases: dict[str, str]) -> str:
    return phrases.get(label) or label.replace("_", " ")


def _constraint_words(c: Constraint, phrases: dict[str, str]) -> str:
    p = [_phrase(l, phrases) for l in c.labels]
    if c.kind == "has":
        return f"contains {p[0]}"
    if c.kind == "not":
        return f"does not contain {p[0]}"
    if c.kind == "before":
        return f"{p[0]} ends before {p[1]} starts"
    if c.kind == "overlap":
        return f"{p[0]} and {p[1]} are heard at the same time"
    if c.min_s is not None and c.max_s is not None:
        return f"{p[0]} lasts between {c.min_s:g} and {c.max_s:g} seconds"
    if c.min_s is not None:
        return f"{p[0]} lasts at least {c.min_s:g} seconds"
    return f"{p[0]} lasts at most {c.max_s:g} seconds"


def plain_logic(logic: str, phrases: dict[str, str] | None = None) -> list[str]:
    """One plain-English line per constraint of a query's logic, phrased with the atoms' phrases."""
    phrases = phrases or {}
    return [_constraint_words(c, phrases) for c in parse_logic(logic)]


# -------------------------------------------------------------------------------------- sampling


@dataclass(frozen=True)
class Card:
    query_id: str
    task: str
    text: str
    logic_words: tuple[str, ...]
    clip_ids: tuple[str, ...]  # display order, already shuffled


def _task_order(tasks: list[str]) -> list[str]:
    known = [t for t in TASKS if t in tasks]
    return known + sorted(set(tasks) - set(known))


def _candidates(index: EventIndex, clip_ids: list[str], logic: str, pair: set[str]) -> list[str]:
    """Clips that contain every label the query mentions positively (relevant ones and hard
    negatives alike), in clip order, without the two-option pair."""
    mask = np.ones(len(clip_ids), dtype=bool)
    for label in {l for c in parse_logic(logic) for l in c.positive_labels}:
        mask &= index.present(label)
    return [clip_ids[i] for i in np.flatnonzero(mask) if clip_ids[i] not in pair]


def sample_cards(bench: Benchmark, per_task: int, seed: int, extra: int = 0) -> list[Card]:
    """`per_task` queries of each task (all where a task has fewer), each with its two-option pair and
    up to `extra` more clips, clip order shuffled per card, card order shuffled across tasks."""
    if per_task < 1:
        raise UserError(f"--per-task must be at least 1, got {per_task}")
    if extra < 0:
        raise UserError(f"--extra must be 0 or more, got {extra}")
    if seed < 0:
        raise UserError(f"--seed must be 0 or more, got {seed}")
    phrases = dict(zip(bench.atoms["label"].to_list(), bench.atoms["phrase"].to_list()))
    pairs = {r["query_id"]: (r["positive_clip_id"], r["negative_clip_id"]) for r in bench.mc.iter_rows(named=True)}
    queries = bench.queries.filter(pl.col("query_id").is_in(list(pairs))).sort("query_id")
    if queries.height == 0:
        raise UserError(f"{bench.root / 'mc.parquet'}: no query has a two-option pair, so there is nothing to audit")
    known_clips = set(bench.clips["clip_id"].to_list())
    clip_ids = bench.clips["clip_id"].to_list()
    index = EventIndex(bench.events, clip_ids, bench.sample_rate) if extra else None

    cards: list[Card] = []
    tasks = _task_order(queries["task"].unique().to_list())
    for t, task in enumerate(tasks):
        rows = queries.filter(pl.col("task") == task).to_dicts()
        rng = np.random.default_rng([seed, _TAG_SAMPLE, t])
        chosen = sorted(rng.choice(len(rows), size=min(per_task, len(rows)), replace=False).tolist())
        for i in chosen:
            q = rows[i]
            qid = q["query_id"]
            pair = pairs[qid]
            for clip in pair:
                if clip not in known_clips:
                    raise UserError(f"{bench.root / 'mc.parquet'}: query {qid} names clip {clip!r}, which clips.parquet lacks")
            try:
                words = tuple(plain_logic(q["logic"], phrases))
            except LogicError as err:
                raise UserError(f"{bench.root / 'queries.parquet'}: query {qid}: logic is not valid ({err})") from None
            clip_rng = np.random.default_rng([seed, _TAG_CLIPS, t, i])
            shown = list(pair)
            if extra:
                more = _candidates(index, clip_ids, q["logic"], set(pair))
                take = clip_rng.choice(len(more), size=min(extra, len(more)), replace=False).tolist() if more else []
                shown += [more[k] for k in sorted(take)]
            order = clip_rng.permutation(len(shown)).tolist()
            cards.append(Card(qid, task, q["text"], words, tuple(shown[k] for k in order)))
    order = np.random.default_rng([seed, _TAG_ORDER]).permutation(len(cards)).tolist()
    return [cards[k] for k in order]


# ------------------------------------------------------------------------------------ spectrogram


def _palette() -> list[int]:
    require("matplotlib", "figures", "the listening page's spectrograms")
    from matplotlib import colormaps

    rgb = (colormaps["magma"](np.linspace(0.0, 1.0, 256))[:, :3] * 255).round().astype(np.uint8)
    return rgb.reshape(-1).tolist()


def _pool(spec: np.ndarray, n: int, axis: int) -> np.ndarray:
    """Max over `n` near-equal blocks along `axis` (a short event stays visible when shrunk)."""
    size = spec.shape[axis]
    if size <= n:
        return spec
    edges = np.linspace(0, size, n + 1).astype(np.int64)[:-1]
    return np.maximum.reduceat(spec, edges, axis=axis)


def write_spectrogram(audio_path: Path, out: Path, palette: list[int]) -> None:
    """A SPEC_WIDTH x SPEC_HEIGHT palette PNG, dB re full scale from SPEC_FLOOR_DB to 0, low
    frequencies at the bottom. Palette images keep a 250-card site small (about 20 KB a clip); PIL
    writes no timestamp."""
    from PIL import Image

    from reasonaudio.audit.inspect import _spectrogram_db  # the same calibration as `inspect --png`
    from reasonaudio.io.audio import read_audio

    x, sr = read_audio(audio_path)
    n_fft = 1 << max(6, int(np.log2(sr * 0.032)))
    spec = _spectrogram_db(x[:, 0], sr, n_fft, n_fft // 4)  # (freq, time)
    spec = _pool(_pool(spec, SPEC_HEIGHT, 0), SPEC_WIDTH, 1)
    level = np.clip((spec - SPEC_FLOOR_DB) / -SPEC_FLOOR_DB, 0.0, 1.0)
    pixels = (level[::-1] * 255).round().astype(np.uint8)
    image = Image.fromarray(pixels)  # mode L: the pixel values become palette indices below
    image.putpalette(palette)
    image = image.resize((SPEC_WIDTH, SPEC_HEIGHT), Image.NEAREST)
    image.save(out, format="PNG")  # zlib level 9 would save 1% for 7x the time


# ---------------------------------------------------------------------------------------- writing


def _file_stem(clip_id: str) -> str:
    """A clip id as a file name; an id with characters unsafe in a URL or a path gets a hash."""
    if re.fullmatch(r"[A-Za-z0-9_-]{1,100}", clip_id):
        return clip_id
    return "clip-" + hashlib.sha256(clip_id.encode("utf-8")).hexdigest()[:16]


def site_data(bench: Benchmark, cards: list[Card], per_task: int, seed: int, extra: int, files: dict[str, dict]) -> dict:
    payload = {
        "format": SITE_FORMAT,
        "version": FORMAT_VERSION,
        "bench": {"name": bench.root.resolve().name, "manifest_sha256": manifest_sha256(bench.root)},
        "params": {"per_task": per_task, "seed": seed, "extra": extra},
        "cards": [
            {
                "query_id": c.query_id,
                "task": c.task,
                "text": c.text,
                "logic": list(c.logic_words),
                "clips": [{"clip_id": clip, **files[clip]} for clip in c.clip_ids],
            }
            for c in cards
        ],
    }
    body = json.dumps(payload, sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    # the site id names this exact sample, so two listeners' files can be matched to the same page
    return {"site_id": hashlib.sha256(body.encode("ascii")).hexdigest()[:16], **payload}


def build_site(
    bench_path: str | Path,
    out: str | Path,
    *,
    per_task: int = 50,
    seed: int = 0,
    extra: int = 0,
    force: bool = False,
    hardlink: bool = False,
) -> dict:
    """Write the audit site for `bench_path` into `out` (atomically); returns the embedded data.

    `hardlink` links the audio instead of copying it where the file system allows (same bytes, no
    extra space; a benchmark's audio is never rewritten in place), and copies where it does not."""
    from reasonaudio.io.outputs import check_not_an_input, output_directory

    out = Path(out)
    check_not_an_input(out, [bench_path])
    bench = load_benchmark(bench_path)
    cards = sample_cards(bench, per_task, seed, extra)
    paths = dict(zip(bench.clips["clip_id"].to_list(), bench.clips["path"].to_list()))
    durations = dict(zip(bench.clips["clip_id"].to_list(), bench.clips["duration_s"].to_list()))
    used = sorted({clip for c in cards for clip in c.clip_ids})
    with output_directory(out, "audit site", inputs=[bench_path], force=force) as tmp:
        (tmp / "audio").mkdir()
        (tmp / "spec").mkdir()
        palette = _palette()
        files: dict[str, dict] = {}
        for clip in used:
            source = bench.root / paths[clip]
            if not source.is_file():
                raise UserError(f"{source}: audio of clip {clip} not found (named by clips.parquet)")
            stem = _file_stem(clip)
            files[clip] = {
                "audio": f"audio/{stem}{source.suffix.lower()}",
                "spectrogram": f"spec/{stem}.png",
                "duration_s": round(float(durations[clip]), 3),
            }

        def copy_and_draw(clip: str) -> None:
            source = bench.root / paths[clip]
            target = tmp / files[clip]["audio"]
            try:
                if not hardlink:
                    raise OSError
                os.link(source, target)
            except OSError:  # another file system, or links not allowed: copy
                shutil.copyfile(source, target)
            write_spectrogram(source, tmp / files[clip]["spectrogram"], palette)

        # one file per clip, so threads change nothing in the output; numpy's FFT and zlib release the GIL
        with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
            list(pool.map(copy_and_draw, used))
        data = site_data(bench, cards, per_task, seed, extra, files)
        script = "window.REASONAUDIO_AUDIT = " + json.dumps(data, indent=1, ensure_ascii=True) + ";\n"
        (tmp / "cards.js").write_text(script, encoding="ascii")
        assets = resources.files("reasonaudio.audit") / "assets"
        for name in ASSETS:
            (tmp / name).write_bytes((assets / name).read_bytes())
    return data
