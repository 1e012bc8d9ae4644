"""Reasoning over detected events: query text -> logic (template grammar) -> graded ranking.

Setting: grammar-parsed queries over a closed vocabulary (the detector's labels and phrases).

Score of clip c for query q, with K engine thresholds (`EventIndex.thresholds`):

    score = (votes + 0.999 * soft) / (K + 1)

- votes: at how many of the K thresholds the Rust relevance engine (`relevance.engine_csr`, the
  contract's exact semantics) finds that the query's logic holds on the events detected at that
  threshold. A clip whose verdict survives every threshold is robust to the detector's calibration.
- soft in [0, 1): a fuzzy truth value of the same logic from the confidences, the product over the
  constraints of
    has L: p_L;   not L: 1 - p_L   (p_L = the label's highest median-filtered frame probability)
    before A,B: p_A p_B s(on_B - off_A);
    overlap A,B: sqrt(co * max(p_A, p_B)), co = max_t min(p_A(t), p_B(t)) the frame-wise
                 co-activation of the smoothed probabilities (`EventIndex.coactive`);
                 else p_A p_B s(min(off) - max(on))
    duration L in [lo, hi]: p_L s(dur - lo) s(hi - dur)
  with s(x) = sigmoid(x / 0.25 s) (the benchmark's timing margin) on each label's main event (the
  longest-times-most-confident event at the lowest threshold; a missing one gives s = 0.5).
The co-activation of an overlap does not need both sounds to have crossed a threshold: a
sound masked by the other often stays under 0.3 for most of its extent but rises where the two
sound together. Measured on a development benchmark (`benches/bench_detect_overlap.py`, seed 7):
overlap Acc@1 32.5 -> 52.5 % with it alone, 52.5 % with the thresholds 0.1 and 0.2 as well.
The louder sound's presence joins the co-activation (geometric mean) because a masked sound is
missed next to a sound that is clearly there: of the plain model's 70 missed overlap queries on a
development build (seed 7, 200 per task) the relevant clip had no vote in most, one sound near
1 and the other near 0, and the clip ranked above it held neither sound, only low co-activation
noise; with the louder presence, overlap Acc@1 65.0 -> 74.5 % there, the other tasks unchanged
(docs/results/detect.md).
Votes order the clips first (more thresholds agreeing is stronger evidence); the soft value breaks
ties inside each vote level, so ties are rare and a near miss (a negated sound heard faintly, an
order broken by a few hundred ms) ranks above a clear miss.
"""

from __future__ import annotations

import json

import numpy as np

from reasonaudio.relevance import EventArrays, engine_csr
from reasonaudio.errors import UserError

TAU_S = 0.25
UNPARSED = None


def parse_queries(texts: list[str], labels: list[str], phrases: list[str]) -> tuple[list[dict | None], list[int]]:
    """Logic per text (None where the grammar cannot read it) and the unreadable positions."""
    from reasonaudio.queries import QueryParser

    parser = QueryParser(labels, phrases)
    logics: list[dict | None] = []
    unparsed: list[int] = []
    for i, text in enumerate(texts):
        try:
            logics.append(parser.parse(text))
        except UserError:
            logics.append(UNPARSED)
            unparsed.append(i)
    return logics, unparsed


def _sig(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", invalid="ignore"):
        out = 1.0 / (1.0 + np.exp(-x / TAU_S))
    return np.where(np.isnan(out), 0.5, out)


def engine_votes(index, logics: list[dict]) -> np.ndarray:
    """uint8 [Q, M]: number of thresholds at which the engine finds each logic holding."""
    n_clips = len(index.clip_ids)
    votes = np.zeros((len(logics), n_clips), np.uint8)
    if not logics:
        return votes
    payload = [json.dumps(lg) for lg in logics]
    for ev in index.events:
        events = EventArrays(
            clip=ev["clip"].to_numpy().astype(np.uint32),
            label=ev["label"].to_numpy().astype(np.uint32),
            onset=np.rint(ev["onset_s"].to_numpy() * 1e6).astype(np.int64),
            offset=np.rint(ev["offset_s"].to_numpy() * 1e6).astype(np.int64),
            rate=1e6,
            clip_ids=list(index.clip_ids),
            labels=list(index.labels),
        )
        indptr, clips = engine_csr(events, payload)
        rows = np.repeat(np.arange(len(logics)), np.diff(indptr.astype(np.int64)))
        votes[rows, clips.astype(np.int64)] += 1
    return votes


def main_events(index) -> tuple[np.ndarray, np.ndarray]:
    """onset_s, offset_s [M, C] of each label's main event at the lowest threshold (NaN: none)."""
    m, c = index.presence.shape
    on = np.full((m, c), np.nan)
    off = np.full((m, c), np.nan)
    ev = index.events[0]
    if ev.height:
        clip = ev["clip"].to_numpy()
        label = ev["label"].to_numpy()
        weight = (ev["offset_s"].to_numpy() - ev["onset_s"].to_numpy()) * ev["confidence"].to_numpy()
        order = np.lexsort((weight, label, clip))  # ascending, so the last write is the heaviest
        on[clip[order], label[order]] = ev["onset_s"].to_numpy()[order]
        off[clip[order], label[order]] = ev["offset_s"].to_numpy()[order]
    return on, off


def overlap_pairs(logics: list[dict | None], labels: list[str]) -> list[tuple[int, int]]:
    """Label pairs of the queries' overlap constraints (the co-activations `detect` keeps)."""
    index = {lab: i for i, lab in enumerate(labels)}
    return sorted({tuple(sorted(index[x] for x in con["overlap"])) for lg in logics if lg for con in lg["all"] if "overlap" in con})


def soft_truth(logic: dict, presence: np.ndarray, on: np.ndarray, off: np.ndarray, label_index: dict[str, int],
               coactive: dict | None = None) -> np.ndarray:
    """Fuzzy truth of `logic` per clip (module doc)."""
    p = presence.astype(np.float64)
    value = np.ones(p.shape[0])
    for con in logic["all"]:
        if "has" in con:
            value *= p[:, label_index[con["has"]]]
        elif "not" in con:
            value *= 1.0 - p[:, label_index[con["not"]]]
        elif "before" in con or "overlap" in con:
            a, b = (label_index[x] for x in con.get("before") or con["overlap"])
            if "overlap" in con and coactive is not None and (min(a, b), max(a, b)) in coactive:
                co = coactive[(min(a, b), max(a, b))].astype(np.float64)
                value *= np.sqrt(co * np.maximum(p[:, a], p[:, b]))
                continue
            if "before" in con:
                gap = on[:, b] - off[:, a]
            else:
                gap = np.minimum(off[:, a], off[:, b]) - np.maximum(on[:, a], on[:, b])
            value *= p[:, a] * p[:, b] * _sig(gap)
        elif "duration" in con:
            d = con["duration"]
            lab = label_index[d["label"]]
            dur = off[:, lab] - on[:, lab]
            factor = p[:, lab]
            if d.get("min_s") is not None:
                factor = factor * _sig(dur - d["min_s"])
            if d.get("max_s") is not None:
                factor = factor * _sig(d["max_s"] - dur)
            value *= factor
        else:
            raise UserError(f"unsupported constraint {json.dumps(con)}")
    return value


def score_matrix(index, logics: list[dict | None]) -> np.ndarray:
    """float32 [Q, M] graded scores (see the module doc); an unparsed query scores 0 everywhere."""
    label_index = {lab: i for i, lab in enumerate(index.labels)}
    known = [i for i, lg in enumerate(logics) if lg is not None]
    scores = np.zeros((len(logics), len(index.clip_ids)), np.float32)
    if not known:
        return scores
    votes = engine_votes(index, [logics[i] for i in known])
    on, off = main_events(index)
    k = len(index.thresholds)
    for row, q in enumerate(known):
        soft = soft_truth(logics[q], index.presence, on, off, label_index, getattr(index, "coactive", None))
        scores[q] = ((votes[row] + 0.999 * np.clip(soft, 0.0, 1.0)) / (k + 1)).astype(np.float32)
    return scores
