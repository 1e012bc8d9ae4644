"""Sound-event-detection metrics of an event index against true events, through sed_scores_eval.

- event-based F1 with a collar (DCASE: 200 ms on onsets, max(200 ms, 20 % of the event) on offsets)
  and segment-based F1 (1 s segments) of the *post-processed events* (what the ranker uses): the
  events are handed to the library as piecewise-constant scores, 1 inside an event and 0 outside,
  evaluated at threshold 0.5, so the library's decisions are exactly our events;
- PSDS (DCASE 2021 scenario 1: DTC = GTC = 0.7, alpha_ST = 1, max eFPR 100/h) of the median-filtered
  frame probabilities, threshold-free.
Per label and overall (micro over events/segments, macro over labels that occur in the truth).
The library takes only labels with true events, so detections of other labels are counted apart.
"""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl

from reasonaudio.errors import UserError, require

COLLAR_S = 0.2
OFFSET_COLLAR_RATE = 0.2
SEGMENT_S = 1.0


def _lib():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dcase_util's pkg_resources deprecation notice
        sed_scores_eval = require("sed_scores_eval", "detect", "SED metrics")
        statistics = require("sed_scores_eval.base_modules.statistics", "detect", "SED metrics")
        create_score_dataframe = require("sed_scores_eval.base_modules.scores", "detect", "SED metrics").create_score_dataframe
    curves = statistics.onset_offset_curves
    if not getattr(curves, "_writable_inputs", False):
        # pandas >= 3 (copy-on-write) hands out read-only arrays, which the library's Cython
        # memoryviews refuse; give it private writable copies.
        def writable_curves(*args, **kwargs):
            args = [np.array(a, dtype=np.float64) if isinstance(a, np.ndarray) else a for a in args]
            return curves(*args, **kwargs)

        writable_curves._writable_inputs = True
        statistics.onset_offset_curves = writable_curves
    return sed_scores_eval, create_score_dataframe


def _ground_truth(truth: pl.DataFrame, clip_ids: list[str], classes: set[str]) -> dict[str, list]:
    gt: dict[str, list] = {cid: [] for cid in clip_ids}
    wanted = set(clip_ids)
    for cid, on, off, lab in truth.select("clip_id", "onset_s", "offset_s", "label").iter_rows():
        if cid in wanted and lab in classes:
            gt[cid].append((float(on), float(off), lab))
    return gt


def _event_scores(index, table: pl.DataFrame, classes: list[str], create) -> dict:
    col = {lab: i for i, lab in enumerate(classes)}
    by_clip: dict[str, list] = {}
    for cid, on, off, lab in table.select("clip_id", "onset_s", "offset_s", "label").iter_rows():
        if lab in col:
            by_clip.setdefault(cid, []).append((on, off, col[lab]))
    out = {}
    for cid, dur in zip(index.clip_ids, index.durations_s):
        evs = by_clip.get(cid, [])
        times = np.unique(np.clip(np.array([0.0, dur] + [t for e in evs for t in e[:2]]), 0.0, dur))
        if len(times) < 2:
            times = np.array([0.0, max(dur, 1e-3)])
        mids = (times[:-1] + times[1:]) / 2
        s = np.zeros((len(mids), len(classes)))
        for on, off, c in evs:
            s[(mids >= on) & (mids < off), c] = 1.0
        out[cid] = create(s, times, classes)
    return out


def _frame_scores(index, classes: list[str], label_pos: list[int], create) -> dict:
    fs = index.frame_s
    out = {}
    for cid, dur in zip(index.clip_ids, index.durations_s):
        p = index.scores[cid][:, label_pos].astype(np.float64)
        j = len(p)
        times = np.concatenate([[0.0], (np.arange(1, j) - 0.5) * fs, [max(dur, (j - 1.5) * fs + 1e-3)]])
        times = np.maximum.accumulate(times)
        keep = np.r_[True, np.diff(times) > 0]
        if not keep.all():  # a final frame past the clip's end: fold it away
            times, p = times[keep], p[keep[1:]][: int(keep.sum()) - 1]
        out[cid] = create(p, times, classes)
    return out


def _summ(f, p, r, stats, classes, truth_classes) -> dict:
    per = {c: {"f1": round(float(f[c]), 4), "precision": round(float(p[c]), 4), "recall": round(float(r[c]), 4),
               "n_ref": int(stats[c]["n_ref"]), "n_sys": int(stats[c]["tps"] + stats[c]["fps"])} for c in classes}
    return {
        "micro_f1": round(float(f["micro_average"]), 4),
        "micro_precision": round(float(p["micro_average"]), 4),
        "micro_recall": round(float(r["micro_average"]), 4),
        # over the labels that occur in the truth (a label only ever detected falsely has no F1)
        "macro_f1": round(float(np.mean([float(f[c]) for c in truth_classes])), 4),
        "per_label": per,
    }


def sed_metrics(index, truth: pl.DataFrame, *, psds: bool = True) -> dict:
    """Metrics dict (see the module doc) of `index` (its events at the model's threshold, and its
    smoothed frame scores when it kept them) against the true `truth` events of the same clips."""
    sse, create = _lib()
    clip_set = set(index.clip_ids)
    truth = truth.filter(pl.col("clip_id").is_in(list(clip_set)))
    truth_classes = sorted(set(truth["label"].to_list()))
    if not truth_classes:
        raise UserError("no true events for the detected clips: SED metrics need a benchmark with events.parquet")
    table = index.table()
    # sed_scores_eval refuses a class without true events, so detections of labels absent from
    # the truth are left out of the F1s and counted on their own (detected_events_of_absent_labels)
    classes = truth_classes
    absent = sorted(set(table["label"].to_list()) - set(truth_classes))
    gt = _ground_truth(truth, index.clip_ids, set(classes))
    durations = {cid: float(d) for cid, d in zip(index.clip_ids, index.durations_s)}
    ev_scores = _event_scores(index, table.filter(~pl.col("label").is_in(absent)), classes, create)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f, p, r, stats = sse.collar_based.fscore(
            ev_scores, gt, 0.5, onset_collar=COLLAR_S, offset_collar=COLLAR_S, offset_collar_rate=OFFSET_COLLAR_RATE
        )
        event_based = _summ(f, p, r, stats, classes, truth_classes)
        f, p, r, stats = sse.segment_based.fscore(ev_scores, gt, durations, 0.5, segment_length=SEGMENT_S)
        segment_based = _summ(f, p, r, stats, classes, truth_classes)
        psds_value = None
        if psds and index.scores is not None:
            pos = {lab: i for i, lab in enumerate(index.labels)}
            frame = _frame_scores(index, truth_classes, [pos[c] for c in truth_classes], create)
            psds_value, *_ = sse.intersection_based.psds(
                frame, gt, durations, dtc_threshold=0.7, gtc_threshold=0.7, cttc_threshold=None,
                alpha_ct=0.0, alpha_st=1.0, max_efpr=100.0,
            )
    return {
        "library": "sed_scores_eval",
        "clips": len(index.clip_ids),
        "true_events": truth.height,
        "detected_events": table.height,
        "detected_events_of_absent_labels": int(table.filter(pl.col("label").is_in(absent)).height),
        "event_based": {"onset_collar_s": COLLAR_S, "offset_collar_rate": OFFSET_COLLAR_RATE, **event_based},
        "segment_based": {"segment_s": SEGMENT_S, **segment_based},
        "psds1": None if psds_value is None else round(float(psds_value), 4),
    }
