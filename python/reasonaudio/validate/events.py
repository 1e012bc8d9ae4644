"""Checks of the events (§1, §3.1): per-clip events, labels, times, patterns, margin between events."""

from __future__ import annotations

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


def _event_rows(t: Tables) -> pl.DataFrame:
    """events.parquet with its row numbers (`_row`) and its times in samples as `on` and `off`."""
    return t["events"].with_row_index("_row").with_columns(
        pl.col("onset_sample").cast(pl.Int64).alias("on"), pl.col("offset_sample").cast(pl.Int64).alias("off")
    )


def _event_pairs(t: Tables) -> pl.DataFrame:
    """Every unordered pair of events in the same clip (`_row`, `_row_b`: their rows of events.parquet;
    `clip`: the clip_id as a category) with its common time (negative = gap), in samples. A corpus
    has tens of millions of pairs: they carry row numbers, not the events' strings."""
    ev = _event_rows(t).select("_row", pl.col("clip_id").cast(pl.Categorical).alias("clip"), "event_index", "on", "off")
    pairs = ev.join(ev, on="clip", suffix="_b").filter(pl.col("event_index") < pl.col("event_index_b"))
    return pairs.select(
        "_row", "_row_b", "clip", (pl.min_horizontal("off", "off_b") - pl.max_horizontal("on", "on_b")).alias("common")
    )


def _pair_rows(t: Tables, pairs: pl.DataFrame) -> pl.DataFrame:
    """`pairs` (a few) with both events' clip_id, event_index, label, on and off, sorted by clip_id
    and event indices."""
    ev = _event_rows(t).select("_row", "clip_id", "event_index", "label", "on", "off")
    both = pairs.select("_row", "_row_b", "common").join(ev, on="_row").join(ev.drop("clip_id"), left_on="_row_b", right_on="_row", suffix="_b")
    return both.sort("clip_id", "event_index", "event_index_b")


def _check_events(t: Tables, rec: _Recorder, margin_s: float) -> None:
    for n in ("clips.events", "events.labels", "events.times", "clips.pattern", "margin.event_gaps"):
        rec.get(n)
    if not t.has("events", "clips") or t.sample_rate is None:
        for n in ("clips.events", "events.labels", "events.times", "clips.pattern", "margin.event_gaps"):
            rec.skip(n, "needs events.parquet, clips.parquet and manifest sample_rate")
        return
    sr = t.sample_rate
    clips, events = t["clips"], t["events"]

    per_clip = events.group_by("clip_id").len("found")
    counted = clips.join(per_clip, on="clip_id", how="left").with_columns(pl.col("found").fill_null(0))
    bad_count = counted.filter((pl.col("found") < 2) | (pl.col("found") > 8))
    for row in bad_count.head(rec.max_examples).iter_rows(named=True):
        rec.violation("clips.events", f"clip {row['clip_id']}: {row['found']} events (contract: 2-8)", 0)
    rec.get("clips.events").violations += bad_count.height
    bad_n = counted.filter(pl.col("found") != pl.col("n_events"))
    for row in bad_n.head(rec.max_examples).iter_rows(named=True):
        rec.violation("clips.events", f"clip {row['clip_id']}: n_events = {row['n_events']} but events.parquet has {row['found']}", 0)
    rec.get("clips.events").violations += bad_n.height

    dup = _duplicates(events, ["clip_id", "label"])
    for row in dup.head(rec.max_examples).iter_rows(named=True):
        rec.violation("events.labels", f"clip {row['clip_id']}: label {row['label']!r} occurs {row['len']} times", 0)
    rec.get("events.labels").violations += dup.height

    timed = events.with_row_index("_row").join(_clip_lengths(t), on="clip_id", how="left")
    rules = [
        (pl.col("onset_sample") < 0, "onset_sample {onset_sample} < 0"),
        (pl.col("onset_sample") >= pl.col("offset_sample"), "onset_sample {onset_sample} >= offset_sample {offset_sample}"),
        (pl.col("offset_sample") > pl.col("clip_samples"), "offset_sample {offset_sample} > clip length {clip_samples} samples"),
        ((pl.col("onset_s") - pl.col("onset_sample") / sr).abs() > TIME_TOLERANCE_S, "onset_s {onset_s} != onset_sample/sample_rate = {onset_sample}/" + str(sr)),
        ((pl.col("offset_s") - pl.col("offset_sample") / sr).abs() > TIME_TOLERANCE_S, "offset_s {offset_s} != offset_sample/sample_rate = {offset_sample}/" + str(sr)),
    ]
    for condition, template in rules:
        bad = timed.filter(condition.fill_null(False))
        for row in bad.head(rec.max_examples).iter_rows(named=True):
            rec.violation(
                "events.times",
                f"events.parquet row {row['_row']} (clip {row['clip_id']}, event {row['event_index']}, {row['label']}): " + template.format(**row),
                0,
            )
        rec.get("events.times").violations += bad.height

    pairs = _event_pairs(t)
    overlapping = (
        pairs.filter(pl.col("common") > 0).group_by("clip").len("n_overlapping").select(pl.col("clip").cast(pl.String).alias("clip_id"), "n_overlapping")
    )
    pattern = clips.select("clip_id", "pattern").join(overlapping, on="clip_id", how="left").with_columns(pl.col("n_overlapping").fill_null(0))
    bad_pattern = pattern.filter(~pl.col("pattern").is_in(list(PATTERNS)))
    seq_overlapping = pattern.filter((pl.col("pattern") == "sequential") & (pl.col("n_overlapping") > 0))
    ovl_none = pattern.filter((pl.col("pattern") == "overlap") & (pl.col("n_overlapping") == 0))
    for row in bad_pattern.head(rec.max_examples).iter_rows(named=True):
        rec.violation("clips.pattern", f"clip {row['clip_id']}: pattern {row['pattern']!r} (expected sequential or overlap)", 0)
    for row in seq_overlapping.head(rec.max_examples).iter_rows(named=True):
        first = _pair_rows(t, pairs.filter((pl.col("clip").cast(pl.String) == row["clip_id"]) & (pl.col("common") > 0))).row(0, named=True)
        rec.violation("clips.pattern", f"clip {row['clip_id']}: sequential but {first['label']} and {first['label_b']} overlap by {first['common'] / sr:.3f} s", 0)
    for row in ovl_none.head(rec.max_examples).iter_rows(named=True):
        rec.violation("clips.pattern", f"clip {row['clip_id']}: pattern overlap but no two events overlap", 0)
    rec.get("clips.pattern").violations += bad_pattern.height + seq_overlapping.height + ovl_none.height

    slack = 2 * margin_s * sr
    close = pairs.filter(pl.col("common").cast(pl.Float64).abs() <= slack)
    for row in _pair_rows(t, close).head(rec.max_examples).iter_rows(named=True):
        relation = f"overlap by {row['common'] / sr:.3f} s" if row["common"] > 0 else f"are {-row['common'] / sr:.3f} s apart"
        rec.violation(
            "margin.event_gaps",
            f"clip {row['clip_id']}: {row['label']} [{row['on'] / sr:.3f}-{row['off'] / sr:.3f} s] and {row['label_b']} "
            f"[{row['on_b'] / sr:.3f}-{row['off_b'] / sr:.3f} s] {relation} (need more than {2 * margin_s:g} s either way)",
            0,
        )
    rec.get("margin.event_gaps").violations += close.height
