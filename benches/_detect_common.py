"""What the detector benches share: a model that returns fixed scores (to evaluate a ranking computed
here), and events re-derived from an index's stored, median-filtered frame scores at other thresholds."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import polars as pl

from reasonaudio.detect.infer import EventIndex
from reasonaudio.detect.postprocess import events_of_clip
from reasonaudio.retrieval.base import ScoringModel

SCHEMA = {"clip": pl.Int64, "label": pl.Int64, "onset_s": pl.Float64, "offset_s": pl.Float64, "confidence": pl.Float64, "gain_db": pl.Float64}


class Fixed(ScoringModel):
    def __init__(self, scores):
        self.scores, self.spec = scores, "fixed"

    def score(self, queries, clips):
        return self.scores


def events_at_thresholds(index: EventIndex, post, thresholds, extend_s: float = 0.0, keep_scores: bool = True) -> EventIndex:
    """`index` with its events found again at `thresholds`, each widened by `extend_s` either way
    (within the clip); without `keep_scores` the copy drops the frame scores (memory)."""
    found = [[] for _ in thresholds]
    for i, cid in enumerate(index.clip_ids):
        p = index.scores[cid].astype(np.float32)  # already median-filtered
        _, per_t = events_of_clip(p, index.frame_s, index.durations_s[i], replace(post, median_frames=1), list(thresholds))
        for t, evs in enumerate(per_t):
            for lab, on, off, conf in evs:
                found[t].append((i, lab, max(0.0, on - extend_s), min(index.durations_s[i], off + extend_s), conf, 0.0))
    frames = [pl.DataFrame(e, schema=SCHEMA, orient="row") for e in found]
    kept = {} if keep_scores else {"scores": None}
    return EventIndex(**{**index.__dict__, "thresholds": tuple(thresholds), "events": frames, "operating": 0, **kept})
