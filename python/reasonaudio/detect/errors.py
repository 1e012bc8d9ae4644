"""Which perception error costs which task: constraint-level attribution of retrieval mistakes.

For a (query, clip) pair the detector got wrong, each constraint of the query's logic is checked
alone by the relevance engine twice, on the true events and on the detected ones; the constraints
where the two verdicts differ are the perception errors behind the mistake, named by kind:

    wrongly accepted clip (truth: fails, detection: holds)
        has -> "false alarm (wanted sound)",  not -> "missed sound (negated)",
        before/overlap/duration -> "order / overlap / duration misjudged"
    wrongly rejected clip (truth: holds, detection: fails)
        has -> "missed sound (wanted)",  not -> "false alarm (negated sound)", and for the three
        timing kinds "missed sound (in order / overlap / duration)" when one of the constraint's
        sounds is not detected in the clip at all, else "... misjudged".
"""

from __future__ import annotations

import json
from collections import Counter

import polars as pl

from reasonaudio.relevance import relevance_csr

_ACCEPT = {"has": "false alarm (wanted sound)", "not": "missed sound (negated)"}
_REJECT = {"has": "missed sound (wanted)", "not": "false alarm (negated sound)"}
_TIMING = {"before": "order misjudged", "overlap": "overlap misjudged", "duration": "duration misjudged"}


def _kind(con: dict) -> str:
    return next(iter(con))


def _holding(events: pl.DataFrame, logics: list[str], clip_ids: list[str]) -> list[set[str]]:
    ev = events.select("clip_id", "label", "onset_s", "offset_s")
    csr = relevance_csr(ev, logics, clip_ids=clip_ids, query_ids=[f"c{i}" for i in range(len(logics))])
    return [set(csr.clip_ids[j] for j in csr.clips_of(i)) for i in range(len(logics))]


def _all_detected(con: dict, clip: str, detected_labels: set) -> bool:
    value = next(iter(con.values()))
    labels = value if isinstance(value, list) else [value["label"]]
    return all((clip, lab) in detected_labels for lab in labels)


def attribute(truth: pl.DataFrame, detected: pl.DataFrame, clip_ids: list[str], cases: list[tuple[str, dict, str, bool]]) -> dict:
    """cases: (task, logic, clip_id, wrongly_accepted). Returns {task: {error kind: count}} and the
    number of cases whose verdicts agree constraint by constraint (a conjunction-level effect)."""
    singles = sorted({json.dumps({"all": [con]}, sort_keys=True) for _, logic, _, _ in cases for con in logic["all"]})
    if not singles:
        return {}
    pos = {s: i for i, s in enumerate(singles)}
    true_sets = _holding(truth, singles, clip_ids)
    det_sets = _holding(detected, singles, clip_ids)
    detected_labels = {(c, lab) for c, lab in detected.select("clip_id", "label").iter_rows()}
    out: dict[str, Counter] = {}
    for task, logic, clip, accepted in cases:
        c = out.setdefault(task, Counter())
        found = False
        for con in logic["all"]:
            i = pos[json.dumps({"all": [con]}, sort_keys=True)]
            t, d = clip in true_sets[i], clip in det_sets[i]
            if t == d:
                continue
            if accepted and not t and d or not accepted and t and not d:
                kind = _kind(con)
                if kind in _TIMING and not accepted and not _all_detected(con, clip, detected_labels):
                    c[f"missed sound (in {kind})"] += 1
                else:
                    c[_TIMING.get(kind) or (_ACCEPT if accepted else _REJECT)[kind]] += 1
                found = True
        if not found:
            c["no single constraint (ranking)"] += 1
    return {task: dict(sorted(cnt.items(), key=lambda kv: -kv[1])) for task, cnt in out.items()}
