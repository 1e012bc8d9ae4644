"""Checks of contract §5 (acoustic scenes), independent of the renderer: numpy and the files only.

For a clip with a bed, the bed is rebuilt from the stored source (backgrounds/<id>.wav) exactly as
§5 describes it (the source's crossfaded loop from the clip's start sample, faded at the clip edges),
and its level in the file is *measured*: the least-squares gain of the clip's audio onto the rebuilt
bed over the samples outside every event and room tail (where the audio must be the bed alone). The
residual (audio minus the bed at that gain) is what the events contribute; every event's SNR is
10·log10(E_residual / E_bed) over its dry extent, which must be at least background_snr_db - the
tolerance. The recorded bed gain is not trusted: a bed rendered 6 dB too loud is caught whatever
the tables say. Rooms: tail_s is recomputed from the stored response (rooms/<id>.wav) by Schroeder
integration, and the §5 margins are checked on the events (gaps > 2m + tail_s; duration thresholds more
than 2m + tail_s above and 2m below every event duration of their label).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from reasonaudio.contract import (
    BACKGROUNDS_DIR,
    FORMAT_VERSION_SCENE,
    ROOMS_DIR,
    SCENE_TABLE_SCHEMAS,
    SILENCE_ABS,
    SNR_TOLERANCE_DB,
    TAIL_DECAY_DB,
    labels_clash,
)
from reasonaudio.contract.logic import parse_logic
from reasonaudio.errors import LogicError
from reasonaudio.validate.checklist import CHECK_DESCRIPTIONS, _Recorder
from reasonaudio.validate.selection import AudioSelection
from reasonaudio.validate.tables import Tables

#: Samples of bed alone that measure the bed's level well (10 ms at 16 kHz: a gain estimate from a
#: few hundred samples of a texture is accurate to far below the 0.001 bed-alone tolerance).
MIN_BED_ALONE = 160

#: The §5 checks, in report order (their descriptions live with every other check's).
CHECKS = [name for name in CHECK_DESCRIPTIONS if name.startswith("scene.")]


def _read_f32(path) -> tuple[np.ndarray, int]:
    from reasonaudio.io.audio import read_audio

    x, sr = read_audio(path)
    return np.ascontiguousarray(x[:, 0]), sr


def tail_s(h: np.ndarray, sr: int) -> float:
    e = np.cumsum((np.asarray(h, np.float64) ** 2)[::-1])[::-1]
    below = np.nonzero(e <= e[0] * 10 ** (-TAIL_DECAY_DB / 10))[0]
    return (int(below[0]) if below.size else len(h)) / sr


def looped(source: np.ndarray, start: int, length: int, crossfade: int, fade: int) -> np.ndarray:
    """§5's bed: samples [start, start + length) of the source's loop (copies overlapping by an
    equal-power crossfade), then raised-cosine fades at the two clip edges."""
    n = len(source)
    total = max(start + length, n + 1)  # the loop always holds the second copy's crossfade
    out = np.zeros(total, np.float32)
    first = min(n, total)
    out[:first] = source[:first]
    c = min(crossfade, n // 2)
    theta = 0.5 * np.pi * (np.arange(c) + 0.5) / max(c, 1)
    fi, fo = np.sin(theta).astype(np.float32), np.cos(theta).astype(np.float32)
    period, at = n - c, n - c
    while at < total:
        xend = min(at + c, total)
        k = xend - at
        out[at:xend] = out[at:xend] * fo[:k] + source[:k] * fi[:k]
        body_end = min(at + n, total)
        if at + c < body_end:
            out[at + c:body_end] = source[c:body_end - at]
        at += period
    out = out[start:start + length]
    f = min(fade, length // 2)
    if f:
        w = (0.5 - 0.5 * np.cos(np.pi * (np.arange(f) + 1) / (f + 1))).astype(np.float32)
        out[:f] *= w
        out[length - f:] *= w[::-1]
    return out


#: A varispeed renders its pitch on a grid of 1/SPEED_DEN speeds (within 0.09 semitone of the draw).
VARISPEED_GRID_SEMITONES = 0.1


def _check_voicing(scene: dict, events: pl.DataFrame, rec: _Recorder) -> None:
    """events.parquet's pitch_semitones / stretch against the recorded ranges: a varispeed moves both
    (stretch = 2^(-pitch/12) when it acts alone), --pitch the pitch only, --stretch the length only."""

    def span(key: str) -> tuple[float, float] | None:
        v = scene.get(key)
        return (float(v[0]), float(v[1])) if v else None

    vs, ps, st = span("varispeed_semitones"), span("pitch_semitones"), span("stretch")
    pitch, stretch = events["pitch_semitones"].to_numpy(), events["stretch"].to_numpy()
    v_lo, v_hi = vs or (0.0, 0.0)
    p_lo, p_hi = ps or (0.0, 0.0)
    s_lo, s_hi = st or (1.0, 1.0)
    grid = VARISPEED_GRID_SEMITONES if vs else 0.0
    lo_p, hi_p = v_lo + p_lo - grid - 1e-4, v_hi + p_hi + grid + 1e-4
    lo_s, hi_s = s_lo * 2 ** (-(v_hi + grid) / 12) - 1e-6, s_hi * 2 ** (-(v_lo - grid) / 12) + 1e-6
    rows = np.flatnonzero(~((pitch >= lo_p) & (pitch <= hi_p) & (stretch >= lo_s) & (stretch <= hi_s)))
    for r in rows[:5]:
        rec.violation("scene.voicing", f"events.parquet row {r}: pitch_semitones {pitch[r]}, stretch {stretch[r]} outside "
                      f"[{lo_p:.4f}, {hi_p:.4f}] x [{lo_s:.6f}, {hi_s:.6f}] (scene: varispeed {vs}, pitch {ps}, stretch {st})")
    if len(rows) > 5:
        rec.violation("scene.voicing", f"... and {len(rows) - 5} more events", count=len(rows) - 5)
    if vs and not ps and not st:
        tape = np.flatnonzero(np.abs(stretch - 2 ** (-pitch / 12)) > 1e-4)
        for r in tape[:5]:
            rec.violation("scene.voicing", f"events.parquet row {r}: a varispeed alone gives stretch 2^(-pitch/12) = "
                          f"{2 ** (-pitch[r] / 12):.6f}, not {stretch[r]}")


def _duration_thresholds(t: Tables) -> dict[str | None, list[tuple[float, str]]]:
    """label -> (threshold, what sets it) for every duration query; key None: the planner's
    thresholds (manifest params.duration_thresholds_s), which every event keeps clear of."""
    out: dict[str | None, list[tuple[float, str]]] = {}
    params = (t.manifest or {}).get("params")
    for th in (params.get("duration_thresholds_s") or []) if isinstance(params, dict) else []:
        if isinstance(th, (int, float)):
            out.setdefault(None, []).append((float(th), "the plan's duration threshold"))
    if t.has("queries"):
        for qid, logic in t["queries"].select("query_id", "logic").iter_rows():
            try:
                constraints = parse_logic(logic)
            except LogicError:
                continue  # reported by queries.logic
            for c in constraints:
                if c.kind == "duration":
                    for th in (c.min_s, c.max_s):
                        if th is not None:
                            out.setdefault(c.labels[0], []).append((th, f"query {qid}'s duration threshold"))
    return out


def _check_duration_thresholds(t: Tables, rec: _Recorder, margin_s: float, sr: int,
                               by_clip: dict[str, list[tuple[str, int, int]]], tails: dict[str, float]) -> None:
    """§5 with a room: onsets move m either way and offsets m earlier or m + tail_s later, so a
    duration moves 2m down or 2m + tail_s up; a threshold must sit more than 2m + tail_s above and
    more than 2m below every event duration it separates."""
    thresholds = _duration_thresholds(t)
    if not thresholds or not sr:
        return
    for cid, spans in by_clip.items():
        tail = tails.get(cid, 0.0)
        if tail <= 0:
            continue
        for label, on, off in spans:
            d = (off - on) / sr
            for th, what in (*thresholds.get(None, ()), *thresholds.get(label, ())):
                if -2 * margin_s <= th - d <= 2 * margin_s + tail:
                    side = (f"within 2m + tail_s = {2 * margin_s + tail:.3f} s below" if th >= d
                            else f"within 2m = {2 * margin_s:g} s above")
                    rec.violation("scene.tail_margin", f"clip {cid}: an event of {label} lasting {d:.3f} s is {side} "
                                  f"{what} {th:g} s (room tail {tail:.3f} s)")


def _check_scene(t: Tables, rec: _Recorder, margin_s: float, selection: AudioSelection | int | None, check_audio: bool = True) -> None:
    m = t.manifest or {}
    scene = m.get("scene")
    if str(m.get("format_version")) != FORMAT_VERSION_SCENE and scene is None:
        return  # no scene (v1/v2): §5 does not apply, and its checks are not listed
    for name in CHECKS:  # listed, in order, even where they cannot run
        rec.get(name)
    root = t.root
    if scene is None or str(m.get("format_version")) != FORMAT_VERSION_SCENE:
        rec.violation("scene.layout", "manifest.json: a scene needs format_version '3' and a 'scene' object")
        return
    frames: dict[str, pl.DataFrame | None] = {}
    for name in ("backgrounds", "rooms", "scene_events"):
        p = root / f"{name}.parquet"
        frames[name] = pl.read_parquet(p) if p.exists() else None
        if frames[name] is None and name != "scene_events":
            rec.violation("scene.layout", f"{name}.parquet is missing")
    if not t.has("clips", "events") or frames["backgrounds"] is None or frames["rooms"] is None:
        for name in CHECKS:
            rec.skip(name, "needs clips, events, backgrounds and rooms tables")
        return
    clips, events = t["clips"], t["events"]
    for table, cols in (("clips", SCENE_TABLE_SCHEMAS["clips"]), ("events", SCENE_TABLE_SCHEMAS["events"]),
                        ("backgrounds", SCENE_TABLE_SCHEMAS["backgrounds"]), ("rooms", SCENE_TABLE_SCHEMAS["rooms"])):
        frame = {"clips": clips, "events": events}.get(table, frames.get(table))
        missing = [c for c in cols if c not in frame.columns]  # type: ignore[union-attr]
        if missing:
            rec.violation("scene.layout", f"{table}.parquet lacks §5 column(s) {', '.join(missing)}")
    if rec.get("scene.layout").violations:
        for name in CHECKS[1:]:
            rec.skip(name, "scene.layout failed")
        return
    import hashlib

    sr = t.sample_rate or 0
    bg, rooms = frames["backgrounds"], frames["rooms"]
    beds: dict[str, np.ndarray] = {}
    recorded = {b["background_id"]: b for b in scene.get("backgrounds", [])}
    for row in bg.iter_rows(named=True):  # type: ignore[union-attr]
        path = root / BACKGROUNDS_DIR / f"{row['background_id']}.wav"
        if not path.exists():
            rec.violation("scene.layout", f"{path.relative_to(root)} (bed of background_id {row['background_id']}) is missing")
            continue
        want = recorded.get(row["background_id"], {}).get("file_sha256")
        if want and hashlib.sha256(path.read_bytes()).hexdigest() != want:
            rec.violation("scene.layout", f"{path.relative_to(root)}: sha256 differs from manifest scene.backgrounds")
        beds[row["background_id"]], _ = _read_f32(path)
        for label in t["atoms"]["label"].unique().to_list() if t.has("atoms") else []:
            if labels_clash(row["label"], label):
                rec.violation("scene.bed_labels", f"backgrounds.parquet: bed {row['background_id']} label {row['label']!r} clashes with vocabulary label {label!r}")
    responses: dict[str, np.ndarray] = {}
    for row in rooms.iter_rows(named=True):  # type: ignore[union-attr]
        path = root / ROOMS_DIR / f"{row['room_id']}.wav"
        if not path.exists():
            rec.violation("scene.layout", f"{path.relative_to(root)} (room {row['room_id']}) is missing")
            continue
        h, _ = _read_f32(path)
        responses[row["room_id"]] = h
        got = tail_s(h, sr)
        if abs(got - float(row["tail_s"])) > 1.5 / sr:
            rec.violation("scene.rooms", f"rooms.parquet: room {row['room_id']} tail_s {row['tail_s']} but its response decays 20 dB in {got:.6f} s")
    tail_of = {r: tail_s(h, sr) for r, h in responses.items()}
    for cid, rid, ts in clips.select("clip_id", "room_id", "tail_s").iter_rows():
        want = tail_of.get(rid, 0.0) if rid is not None else 0.0
        if rid is not None and rid not in responses:
            rec.violation("scene.rooms", f"clips.parquet: clip {cid} names room {rid!r}, which rooms.parquet lacks")
        elif abs(float(ts or 0.0) - want) > 1.5 / max(sr, 1):
            rec.violation("scene.rooms", f"clips.parquet: clip {cid} tail_s {ts} but its room's response gives {want:.6f} s")

    # §5 margins with a room
    ev = events.select("clip_id", "label", "onset_sample", "offset_sample").sort("clip_id", "onset_sample")
    tails = dict(zip(clips["clip_id"].to_list(), [float(x or 0.0) for x in clips["tail_s"].to_list()]))
    by_clip: dict[str, list[tuple[str, int, int]]] = {}
    for cid, label, on, off in ev.iter_rows():
        by_clip.setdefault(cid, []).append((label, int(on), int(off)))
    sep = 2 * margin_s * sr
    for cid, spans in by_clip.items():
        tail = tails.get(cid, 0.0)
        if tail <= 0:
            continue
        for i, (_, a0, a1) in enumerate(spans):
            for _, b0, b1 in spans[i + 1:]:
                ov = min(a1, b1) - max(a0, b0)
                if not (ov > sep or -ov > sep + tail * sr):
                    rec.violation("scene.tail_margin", f"clip {cid}: events [{a0},{a1}) and [{b0},{b1}) are {-ov} samples apart: a room tail of {tail:.3f} s needs > {sep + tail * sr:.0f}")
    _check_duration_thresholds(t, rec, margin_s, sr, by_clip, tails)

    _check_voicing(scene, events, rec)

    # SNR and bed alone, measured in the audio
    if not check_audio:
        rec.skip("scene.snr", "--no-audio")
        rec.skip("scene.bed_alone", "--no-audio")
        return
    cross = int(scene.get("bed_loop_crossfade_samples", 0))
    fade = int(scene.get("bed_edge_fade_samples", 0))
    with_bed = clips.filter(pl.col("background_id").is_not_null()).sort("clip_id")
    if with_bed.height == 0:
        rec.skip("scene.snr", "no clip has a bed")
    selection = AudioSelection.of(selection)
    if (fewer := selection.describe(with_bed.height, "clips with a bed")) is not None:
        rec.note("scene.snr", fewer)
        with_bed = selection.pick(with_bed)
    room_len = {r: len(h) for r, h in responses.items()}
    worst = math.inf
    crowded = 0
    for row in with_bed.iter_rows(named=True):
        cid = row["clip_id"]
        source = beds.get(row["background_id"])
        if source is None:
            continue
        audio, _ = _read_f32(root / row["path"])
        n = len(audio)
        start = int(row.get("background_start_sample") or 0)
        bed = looped(source, start, n, cross, fade).astype(np.float64)
        spans = by_clip.get(cid, [])
        ring = room_len.get(row["room_id"], 1) if row["room_id"] is not None else 1
        outside = np.ones(n, bool)
        for _, on, off in spans:
            outside[on:min(n, off + ring - 1)] = False
        # The bed's level is measured where the bed is alone; a clip whose events and tails leave
        # fewer than MIN_BED_ALONE samples of it is measured over the whole clip instead (the events
        # then bias the estimate, so its bed-alone check is left out and counted in a note)
        measured_alone = int(outside.sum()) >= MIN_BED_ALONE
        mask = outside if measured_alone else np.ones(n, bool)
        x = audio.astype(np.float64)
        bb = float(bed[mask] @ bed[mask])
        g = float(x[mask] @ bed[mask]) / bb if bb > 0 else 0.0
        resid = x - g * bed
        if not measured_alone:
            crowded += 1
        elif outside.any():
            peak = float(np.abs(resid[outside]).max())
            if peak > SILENCE_ABS:
                rec.violation("scene.bed_alone", f"clip {cid}: outside its events and tails the audio departs from the bed by {peak:.4g} (> {SILENCE_ABS})")
        s = float(row["background_snr_db"])
        for k, (_, on, off) in enumerate(spans):
            e = float(resid[on:off] @ resid[on:off])
            b = g * g * float(bed[on:off] @ bed[on:off])
            if b <= 0:
                continue
            snr = 10 * math.log10(max(e, 1e-300) / b)
            worst = min(worst, snr - s)
            if snr < s - SNR_TOLERANCE_DB:
                rec.violation("scene.snr", f"clip {cid}, event {k}: SNR {snr:.2f} dB over its extent, below background_snr_db {s:g} (bed measured in the audio)")
    if crowded:
        rec.note("scene.bed_alone", f"{crowded} clip(s) leave fewer than {MIN_BED_ALONE} samples outside their events and tails: "
                 "their bed level is measured over the whole clip and their bed-alone samples are not checked")
    if math.isfinite(worst):
        rec.note("scene.snr", f"tightest event: {worst:+.3f} dB from its clip's background_snr_db")
    se = frames.get("scene_events")
    if se is not None and with_bed.height:
        joined = se.join(clips.select(pl.col("clip_id").cast(se.schema["clip_id"]), "background_snr_db"), on="clip_id").filter(pl.col("background_snr_db").is_not_null())
        bad = joined.filter(pl.col("snr_db") < pl.col("background_snr_db"))
        for r in bad.head(3).iter_rows(named=True):
            rec.violation("scene.snr", f"scene_events.parquet: clip {r['clip_id']}, event {r['event_index']} rendered at {r['snr_db']} dB < {r['background_snr_db']}")
