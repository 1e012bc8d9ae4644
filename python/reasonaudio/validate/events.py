"""Checks of the events (§1, §3.1): per-clip events, labels, times, patterns, margin between events."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import polars as pl

from reasonaudio.contract import (
    PATTERNS,
)
from reasonaudio.validate.checklist import TIME_TOLERANCE_S, _Recorder
from reasonaudio.validate.layout import _duplicates
from reasonaudio.validate.tables import Tables


def _clip_lengths(t: Tables) -> pl.DataFrame:
    sr = t.sample_rate
    return t["clips"].select("clip_id", (pl.col("duration_s") * sr).round(0).cast(pl.Int64).alias("clip_samples"))


def _clip_codes(t: Tables) -> tuple[np.ndarray, np.ndarray, int]:
    """Each clip_id as an integer: (code of each clips.parquet row, code of each events.parquet row,
    number of codes). Equal ids share a code; the ids clips.parquet lists come first (first
    occurrence order), then the ids only events.parquet names. The counts and pairs key on these
    integers instead of hashing a string per event."""
    ids = t["clips"].select("clip_id").unique(maintain_order=True).with_row_index("_code")

    def code_of(frame: pl.DataFrame) -> pl.Series:
        located = frame.lazy().select("clip_id").join(ids.lazy(), on="clip_id", how="left", maintain_order="left")
        return located.select("_code").collect(engine="streaming")["_code"]

    clip_code = code_of(t["clips"]).to_numpy()
    located = code_of(t["events"])
    n_codes = ids.height
    # 4-byte codes where they fit (a code is at most the number of clip and event rows)
    code = np.int32 if t["clips"].height + t["events"].height < 2**31 else np.int64
    if located.null_count():
        orphan = located.is_null().to_numpy()
        extra = t["events"].select(pl.col("clip_id").filter(pl.Series(orphan)).rank("dense").cast(pl.Int64) - 1)["clip_id"].to_numpy()
        event_code = located.fill_null(0).to_numpy().astype(code)
        event_code[orphan] = n_codes + extra
        n_codes += int(extra.max()) + 1
    else:
        event_code = located.to_numpy().astype(code)
    return clip_code.astype(code), event_code, n_codes


def _event_pairs(
    code: np.ndarray, event_index: np.ndarray, on: np.ndarray, off: np.ndarray, block: int = 1 << 20
) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Every unordered pair of events with the same clip `code` and different event indices, a block
    at a time: (row of the lower event_index, row of the higher, their common time in samples, negative
    = gap). The events are sorted by (clip, event_index); block d pairs each event with the one d places
    further in its clip, so the work and memory follow the pairs a block holds, never the tens of
    millions of pairs a corpus has in all. A block of more than `block` pairs (the first ones hold
    about one pair an event) comes in parts of `block`."""
    n = code.size
    # positions as 4-byte integers where they fit: the first blocks hold ~n positions each
    position = np.int32 if n < 2**31 else np.int64
    order = np.lexsort((event_index, code)).astype(position)
    code_s, index_s = code[order], event_index[order]
    alive = np.arange(max(n - 1, 0), dtype=position)
    d = 1
    while alive.size:
        alive = alive[alive < n - d]
        alive = alive[code_s[alive + d] == code_s[alive]]  # shrinks: a clip's run holds or not
        kept = alive[index_s[alive] < index_s[alive + d]]  # equal indices are no pair (a layout fault)
        for lo in range(0, kept.size, block):
            part = kept[lo:lo + block]
            a, b = order[part], order[part + d]
            yield a, b, np.minimum(off[a], off[b]) - np.maximum(on[a], on[b])
        d += 1


def _pair_rows(t: Tables, pairs: pl.DataFrame) -> pl.DataFrame:
    """`pairs` (a few: `_row`, `_row_b`, `common`) with both events' clip_id, event_index, label, on
    and off, sorted by clip_id and event indices."""
    ev = t["events"].select(
        "clip_id", "event_index", "label", pl.col("onset_sample").cast(pl.Int64).alias("on"), pl.col("offset_sample").cast(pl.Int64).alias("off")
    )
    first = ev[pairs["_row"].to_numpy()]
    second = ev.drop("clip_id")[pairs["_row_b"].to_numpy()]
    both = pl.concat([pairs.select("_row", "_row_b", "common"), first, second.rename(lambda c: f"{c}_b")], how="horizontal")
    return both.sort("clip_id", "event_index", "event_index_b")


def _first_overlap(t: Tables, clip_id: str) -> dict:
    """The first pair of events of clip `clip_id` (by event indices) that overlap, as `_pair_rows` gives it."""
    rows = t["events"].with_row_index("_row").filter(pl.col("clip_id") == clip_id).select(
        "_row", "event_index", pl.col("onset_sample").cast(pl.Int64), pl.col("offset_sample").cast(pl.Int64)
    )
    found: list[pl.DataFrame] = []
    for a, b, common in _event_pairs(np.zeros(rows.height, np.int64), *(rows[c].to_numpy() for c in rows.columns[1:])):
        hit = common > 0
        found.append(pl.DataFrame({"_row": rows["_row"].to_numpy()[a[hit]], "_row_b": rows["_row"].to_numpy()[b[hit]], "common": common[hit]}))
    return _pair_rows(t, pl.concat(found)).row(0, named=True)


def _pair_frame(a: list[np.ndarray], b: list[np.ndarray], common: list[np.ndarray]) -> pl.DataFrame:
    """The blocks of pairs `_event_pairs` gave (rows a, rows b, common times) as one frame for `_pair_rows`."""
    def joined(parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    return pl.DataFrame({"_row": joined(a), "_row_b": joined(b), "common": joined(common)})


def _check_events(t: Tables, rec: _Recorder, margin_s: float) -> None:
    for n in ("clips.events", "events.labels", "events.times", "clips.pattern", "margin.event_gaps"):
        rec.get(n)
    if not t.has("events", "clips") or t.sample_rate is None:
        for n in ("clips.events", "events.labels", "events.times", "clips.pattern", "margin.event_gaps"):
            rec.skip(n, "needs events.parquet, clips.parquet and manifest sample_rate")
        return
    sr = t.sample_rate
    clips, events = t["clips"], t["events"]

    clip_code, event_code, n_codes = _clip_codes(t)
    found = np.bincount(event_code, minlength=n_codes)[clip_code]
    counted = clips.select("clip_id", "n_events").with_columns(found=pl.Series(found, dtype=pl.UInt32))
    bad_count = counted.filter((pl.col("found") < 2) | (pl.col("found") > 8))
    for row in bad_count.head(rec.max_examples).iter_rows(named=True):
        rec.violation("clips.events", f"clip {row['clip_id']}: {row['found']} events (contract: 2-8)", 0)
    rec.get("clips.events").violations += bad_count.height
    bad_n = counted.filter(pl.col("found") != pl.col("n_events"))
    for row in bad_n.head(rec.max_examples).iter_rows(named=True):
        rec.violation("clips.events", f"clip {row['clip_id']}: n_events = {row['n_events']} but events.parquet has {row['found']}", 0)
    rec.get("clips.events").violations += bad_n.height
    del counted, found

    dup = _duplicates(events, ["clip_id", "label"])
    for row in dup.head(rec.max_examples).iter_rows(named=True):
        rec.violation("events.labels", f"clip {row['clip_id']}: label {row['label']!r} occurs {row['len']} times", 0)
    rec.get("events.labels").violations += dup.height

    rules = [
        (pl.col("onset_sample") < 0, "onset_sample {onset_sample} < 0"),
        (pl.col("onset_sample") >= pl.col("offset_sample"), "onset_sample {onset_sample} >= offset_sample {offset_sample}"),
        (pl.col("offset_sample") > pl.col("clip_samples"), "offset_sample {offset_sample} > clip length {clip_samples} samples"),
        ((pl.col("onset_s") - pl.col("onset_sample") / sr).abs() > TIME_TOLERANCE_S, "onset_s {onset_s} != onset_sample/sample_rate = {onset_sample}/" + str(sr)),
        ((pl.col("offset_s") - pl.col("offset_sample") / sr).abs() > TIME_TOLERANCE_S, "offset_s {offset_s} != offset_sample/sample_rate = {offset_sample}/" + str(sr)),
    ]
    # one streamed pass keeps the rows that break any rule (a batch of events at a time through the
    # join with the clips' lengths); each rule then picks its own from those few
    broken = (
        t.lazy("events")
        .select("clip_id", "event_index", "label", "onset_sample", "offset_sample", "onset_s", "offset_s")
        .with_row_index("_row")
        .join(_clip_lengths(t).lazy(), on="clip_id", how="left")
        .filter(pl.any_horizontal(condition.fill_null(False) for condition, _ in rules))
        .collect(engine="streaming")
        .sort("_row")
    )
    for condition, template in rules:
        bad = broken.filter(condition.fill_null(False))
        for row in bad.head(rec.max_examples).iter_rows(named=True):
            rec.violation(
                "events.times",
                f"events.parquet row {row['_row']} (clip {row['clip_id']}, event {row['event_index']}, {row['label']}): " + template.format(**row),
                0,
            )
        rec.get("events.times").violations += bad.height

    del broken
    slack = 2 * margin_s * sr
    overlaps = np.zeros(n_codes, dtype=bool)
    close_a: list[np.ndarray] = []
    close_b: list[np.ndarray] = []
    close_common: list[np.ndarray] = []
    index = events["event_index"].to_numpy()
    on = events["onset_sample"].cast(pl.Int64).to_numpy()
    off = events["offset_sample"].cast(pl.Int64).to_numpy()
    for a, b, common in _event_pairs(event_code, index, on, off):
        overlaps[event_code[a[common > 0]]] = True
        near = np.abs(common.astype(np.float64)) <= slack
        close_a.append(a[near])
        close_b.append(b[near])
        close_common.append(common[near])
    del on, off
    close = _pair_frame(close_a, close_b, close_common)
    pattern = clips.select("clip_id", "pattern").with_columns(overlaps=pl.Series(overlaps[clip_code]))
    bad_pattern = pattern.filter(~pl.col("pattern").is_in(list(PATTERNS)))
    seq_overlapping = pattern.filter((pl.col("pattern") == "sequential") & pl.col("overlaps"))
    ovl_none = pattern.filter((pl.col("pattern") == "overlap") & ~pl.col("overlaps"))
    for row in bad_pattern.head(rec.max_examples).iter_rows(named=True):
        rec.violation("clips.pattern", f"clip {row['clip_id']}: pattern {row['pattern']!r} (expected sequential or overlap)", 0)
    for row in seq_overlapping.head(rec.max_examples).iter_rows(named=True):
        first = _first_overlap(t, row["clip_id"])
        rec.violation("clips.pattern", f"clip {row['clip_id']}: sequential but {first['label']} and {first['label_b']} overlap by {first['common'] / sr:.3f} s", 0)
    for row in ovl_none.head(rec.max_examples).iter_rows(named=True):
        rec.violation("clips.pattern", f"clip {row['clip_id']}: pattern overlap but no two events overlap", 0)
    rec.get("clips.pattern").violations += bad_pattern.height + seq_overlapping.height + ovl_none.height

    for row in _pair_rows(t, close).head(rec.max_examples).iter_rows(named=True):
        relation = f"overlap by {row['common'] / sr:.3f} s" if row["common"] > 0 else f"are {-row['common'] / sr:.3f} s apart"
        rec.violation(
            "margin.event_gaps",
            f"clip {row['clip_id']}: {row['label']} [{row['on'] / sr:.3f}-{row['off'] / sr:.3f} s] and {row['label_b']} "
            f"[{row['on_b'] / sr:.3f}-{row['off_b'] / sr:.3f} s] {relation} (need more than {2 * margin_s:g} s either way)",
            0,
        )
    rec.get("margin.event_gaps").violations += close.height
