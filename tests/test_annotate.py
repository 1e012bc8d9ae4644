"""Relevance engine vs a literal Python reading of the contract's table (spec §2)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasonaudio import _core
from reasonaudio.contract.logic import parse_logic
from reasonaudio.contract.reference import EventIndex, holds
from reasonaudio.relevance import annotate, positive_labels, prepare_events, relevance_csr
from reasonaudio.errors import UserError

EVENT_LABELS = ["a", "b", "c"]
# "zzz" never occurs in events: has -> false, not -> true.
QUERY_LABELS = EVENT_LABELS + ["zzz"]


reference_holds = holds  # the contract's reference reading (reasonaudio.contract.reference)


@st.composite
def event_tables(draw: st.DrawFn) -> tuple[list[str], list[dict[str, Any]], float]:
    n_clips = draw(st.integers(1, 6))
    rate = draw(st.sampled_from([10.0, 3.0, 16000.0, 44100.0]))
    rows = []
    for c in range(n_clips):
        for _ in range(draw(st.integers(0, 6))):
            onset = draw(st.integers(0, 10))  # small range: touching, equal onsets, containment
            length = draw(st.integers(0, 6))  # includes zero-length events
            label = draw(st.sampled_from(EVENT_LABELS))  # repeats within a clip are allowed
            rows.append({"clip": f"clip{c}", "label": label, "onset": onset, "offset": onset + length})
    clip_ids = [f"clip{c}" for c in range(n_clips)]
    return clip_ids, rows, rate


@st.composite
def constraints(draw: st.DrawFn, rows: list[dict[str, Any]], rate: float) -> dict:
    kind = draw(st.sampled_from(["has", "not", "before", "overlap", "duration"]))
    label = st.sampled_from(QUERY_LABELS)
    if kind in ("has", "not"):
        return {kind: draw(label)}
    if kind in ("before", "overlap"):
        return {kind: [draw(label), draw(label)]}
    # Thresholds exactly at some event's duration, near it, or anywhere.
    lengths = [r["offset"] - r["onset"] for r in rows] or [0]
    threshold = st.one_of(
        st.sampled_from(lengths).map(lambda n: n / rate),
        st.integers(0, 7).map(lambda n: n / rate),
        st.floats(0, 7 / rate, allow_nan=False),
    )
    bounds = draw(st.sampled_from(["min", "max", "both"]))
    lo, hi = sorted([draw(threshold), draw(threshold)])
    arg: dict[str, Any] = {"label": draw(label)}
    if bounds in ("min", "both"):
        arg["min_s"] = lo
    if bounds in ("max", "both"):
        arg["max_s"] = hi if bounds == "both" else lo
    return {"duration": arg}


@st.composite
def cases(draw: st.DrawFn):
    clip_ids, rows, rate = draw(event_tables())
    n_queries = draw(st.integers(1, 8))
    logic = [{"all": draw(st.lists(constraints(rows, rate), min_size=1, max_size=3))} for _ in range(n_queries)]
    extra_clip = draw(st.booleans())  # a clip with no events at all
    return clip_ids + (["silent"] if extra_clip else []), rows, rate, logic


def _events_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "clip_id": [r["clip"] for r in rows],
            "label": [r["label"] for r in rows],
            "onset_sample": [r["onset"] for r in rows],
            "offset_sample": [r["offset"] for r in rows],
        },
        schema={"clip_id": pl.String, "label": pl.String, "onset_sample": pl.Int64, "offset_sample": pl.Int64},
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_matches_literal_reference(case) -> None:
    clip_ids, rows, rate, logic = case
    queries = pl.DataFrame({"query_id": [f"q{i}" for i in range(len(logic))], "logic": [json.dumps(l) for l in logic]})
    qrels = annotate(_events_frame(rows), queries, sample_rate=rate, clip_ids=clip_ids, threads=1)
    got = set(zip(qrels["query_id"], qrels["clip_id"]))
    expected = set()
    for qi, lg in enumerate(logic):
        for clip in clip_ids:
            if reference_holds([r for r in rows if r["clip"] == clip], lg, rate):
                expected.add((f"q{qi}", clip))
    assert got == expected
    assert (qrels["relevance"] == 1).all()
    # CSR rows are ascending in the clip list's order.
    csr = relevance_csr(_events_frame(rows), queries, sample_rate=rate, clip_ids=clip_ids)
    for q in range(len(logic)):
        assert np.all(np.diff(csr.clips_of(q).astype(np.int64)) > 0)
    # the validator's vectorised reading of §2 agrees with the literal one (zero-length events too)
    index = EventIndex(_events_frame(rows), clip_ids, rate)
    for qi, lg in enumerate(logic):
        vectorised = {(f"q{qi}", clip_ids[c]) for c in np.flatnonzero(index.relevant(parse_logic(json.dumps(lg))))}
        assert vectorised == {pair for pair in expected if pair[0] == f"q{qi}"}


def test_zero_length_events_follow_the_contract() -> None:
    """§2: an event lasting zero time is in E_L (has/not see it), before orders it by its onset and
    offset, it overlaps nothing, and its duration is 0; engine and reference agree on each."""
    events = pl.DataFrame(
        {
            "clip_id": ["pt", "pt", "pt", "inside", "inside", "touch", "touch"],
            "label": ["a", "b", "c", "a", "b", "a", "b"],
            "onset_sample": [5, 5, 9, 0, 4, 10, 10],
            "offset_sample": [5, 5, 12, 10, 4, 10, 20],
        }
    )
    clips = ["pt", "inside", "touch"]
    cases = {
        '{"all": [{"has": "a"}]}': ["pt", "inside", "touch"],
        '{"all": [{"not": "b"}]}': [],
        '{"all": [{"before": ["a", "b"]}]}': ["pt", "touch"],  # a point at t is before a point or event at t
        '{"all": [{"before": ["b", "a"]}]}': ["pt"],
        '{"all": [{"before": ["a", "c"]}]}': ["pt"],
        '{"all": [{"overlap": ["a", "b"]}]}': [],  # a point inside an event overlaps nothing
        '{"all": [{"overlap": ["b", "a"]}]}': [],
        '{"all": [{"duration": {"label": "b", "max_s": 0.0}}]}': ["pt", "inside"],
        '{"all": [{"duration": {"label": "b", "min_s": 0.05}}]}': ["touch"],
    }
    queries = pl.DataFrame({"query_id": list(cases), "logic": list(cases)})
    qrels = annotate(events, queries, sample_rate=100, clip_ids=clips, threads=1)
    index = EventIndex(events, clips, 100)
    for logic, want in cases.items():
        assert qrels.filter(pl.col("query_id") == logic)["clip_id"].to_list() == want, logic
        rows = [{"label": r["label"], "onset": r["onset_sample"], "offset": r["offset_sample"], "clip": r["clip_id"]}
                for r in events.iter_rows(named=True)]
        literal = [c for c in clips if reference_holds([r for r in rows if r["clip"] == c], json.loads(logic), 100)]
        assert literal == want, logic
        assert [clips[c] for c in np.flatnonzero(index.relevant(parse_logic(logic)))] == want, logic


def test_thread_count_does_not_change_output() -> None:
    rng = np.random.default_rng(7)
    n = 20_000
    events = pl.DataFrame(
        {
            "clip_id": rng.integers(0, 3000, n).astype(str),
            "label": rng.integers(0, 30, n).astype(str),
            "onset_sample": (onset := rng.integers(0, 100, n)),  # noqa: F841
            "offset_sample": onset + rng.integers(1, 40, n),
        }
    )
    logic = []
    for i in range(200):
        a, b = rng.integers(0, 30, 2).astype(str)
        logic.append(
            [
                {"all": [{"before": [a, b]}]},
                {"all": [{"overlap": [a, b]}, {"not": "7"}]},
                {"all": [{"has": a}, {"not": b}]},
                {"all": [{"duration": {"label": a, "min_s": 2.0}}]},
            ][i % 4]
        )
    one = relevance_csr(events, logic, sample_rate=10, threads=1)
    two = relevance_csr(events, logic, sample_rate=10, threads=2)
    assert one.n_pairs > 1000
    assert np.array_equal(one.indptr, two.indptr) and np.array_equal(one.clip_indices, two.clip_indices)


def test_seconds_are_quantised_to_microseconds() -> None:
    events = pl.DataFrame(
        {"clip_id": ["x", "x"], "label": ["rain", "thunder"], "onset_s": [0.0, 1.5], "offset_s": [1.5, 4.25]}
    )
    queries = pl.DataFrame(
        {
            "query_id": ["touch", "dur"],
            "logic": [
                '{"all": [{"before": ["rain", "thunder"]}]}',
                '{"all": [{"duration": {"label": "thunder", "min_s": 2.75, "max_s": 2.75}}]}',
            ],
        }
    )
    assert annotate(events, queries)["query_id"].to_list() == ["touch", "dur"]


def test_sample_rate_from_column_or_inferred_from_seconds() -> None:
    events = pl.DataFrame(
        {"clip_id": ["x"], "label": ["rain"], "onset_sample": [0], "offset_sample": [64000]}
    )
    q = pl.DataFrame({"query_id": ["q"], "logic": ['{"all": [{"duration": {"label": "rain", "min_s": 4.0}}]}']})
    assert annotate(events.with_columns(sample_rate=pl.lit(16000)), q).height == 1
    assert annotate(events.with_columns(onset_s=pl.lit(0.0), offset_s=pl.lit(4.0)), q).height == 1
    assert annotate(events, q, sample_rate=32000).height == 0
    with pytest.raises(UserError, match="need a sample rate"):
        annotate(events, q)


def test_positive_labels() -> None:
    logic = {
        "all": [
            {"has": "a"},
            {"not": "b"},
            {"before": ["c", "a"]},
            {"overlap": ["d", "c"]},
            {"duration": {"label": "e", "max_s": 1}},
        ]
    }
    assert positive_labels(logic) == ["a", "c", "d", "e"]
    assert positive_labels(json.dumps(logic)) == ["a", "c", "d", "e"]
    with pytest.raises(UserError, match="constraint 0"):
        positive_labels({"all": [{"before": "a"}]})


def test_hard_negative_query_via_derived_logic() -> None:
    """The generator's use: 'has every positive label' minus the query's own relevant clips."""
    events = pl.DataFrame(
        {
            "clip_id": ["p", "p", "n", "n", "o"],
            "label": ["a", "b", "b", "a", "a"],
            "onset_sample": [0, 10, 0, 10, 0],
            "offset_sample": [5, 15, 5, 15, 5],
        }
    )
    query = {"all": [{"before": ["a", "b"]}]}
    derived = {"all": [{"has": label} for label in positive_labels(query)]}
    csr = relevance_csr(events, [query, derived], sample_rate=10, query_ids=["q", "q_all_labels"])
    relevant = {csr.clip_ids[i] for i in csr.clips_of(0)}
    containing = {csr.clip_ids[i] for i in csr.clips_of(1)}
    assert relevant == {"p"} and containing - relevant == {"n"}


@pytest.mark.parametrize(
    ("logic", "message"),
    [
        ('{"all": [{"has": "a"}, {"before": ["a"]}]}', r'query q12, constraint 1 \{"before":\["a"\]\}: expected a list of two labels'),
        ('{"has": "a"}', 'query q12: expected exactly one top-level key "all"'),
        ('{"all": [{"duration": {"label": "a"}}]}', "duration needs min_s or max_s"),
        ('{"all": [{"duration": {"label": "a", "min_s": 2, "max_s": 1}}]}', "min_s \\(2\\) is greater than max_s \\(1\\)"),
        ('{"all": [{"duration": {"label": "a", "min_s": -0.5}}]}', "expected min_s >= 0"),
        ('{"all": [{"duration": {"label": "a", "min_s": NaN}}]}', "not valid JSON"),
        ('{"all": [{"duration": {"label": "a", "max_s": 1, "unit": "s"}}]}', 'unknown key "unit"'),
        ('{"all": [{"maybe": "a"}]}', 'unknown constraint "maybe"'),
        ('{"all": []}', '"all" is empty'),
    ],
)
def test_malformed_logic_messages(logic: str, message: str) -> None:
    events = pl.DataFrame({"clip_id": ["x"], "label": ["a"], "onset_sample": [0], "offset_sample": [1]})
    queries = pl.DataFrame({"query_id": ["q12"], "logic": [logic]})
    with pytest.raises(UserError, match=message):
        annotate(events, queries, sample_rate=10)


def test_bad_events_and_queries() -> None:
    q = pl.DataFrame({"query_id": ["q"], "logic": ['{"all": [{"has": "a"}]}']})
    backwards = pl.DataFrame({"clip_id": ["x", "y"], "label": ["a", "a"], "onset_sample": [0, 9], "offset_sample": [1, 3]})
    with pytest.raises(UserError, match=r"events row 1: offset_sample \(3\) is before onset_sample \(9\); expected offset_sample >= onset_sample"):
        annotate(backwards, q, sample_rate=10)
    events = backwards.slice(0, 1)
    with pytest.raises(UserError, match="'x' is not in the given clip list"):
        annotate(events, q, sample_rate=10, clip_ids=["y"])
    with pytest.raises(UserError, match="missing column"):
        annotate(events.drop("label"), q, sample_rate=10)
    with pytest.raises(UserError, match="appears more than once"):
        annotate(events, pl.concat([q, q]), sample_rate=10)
    # The binding itself reports event rows for callers who skip the Python layer.
    with pytest.raises(ValueError, match="event 0: clip index 5 is out of range"):
        table = _core.EventLabels(clip=np.array([5], np.uint32), label=np.array([0], np.uint32), onset=np.array([0], np.int64),
                                  offset=np.array([1], np.int64), n_clips=1, rate=10.0, labels=["a"])
        _core.annotate_csr(table, ['{"all": [{"has": "a"}]}'])


def test_empty_events_with_corpus_list() -> None:
    events = pl.DataFrame(schema={"clip_id": pl.String, "label": pl.String, "onset_sample": pl.Int64, "offset_sample": pl.Int64})
    q = pl.DataFrame({"query_id": ["n", "h"], "logic": ['{"all": [{"not": "a"}]}', '{"all": [{"has": "a"}]}']})
    qrels = annotate(events, q, sample_rate=10, clip_ids=["x", "y"])
    assert qrels.rows() == [("n", "x", 1), ("n", "y", 1)]
    assert prepare_events(events, sample_rate=10).clip_ids == []


def test_thresholds_are_parsed_exactly_at_the_boundary() -> None:
    """Found by the property test: JSON floats must round-trip exactly (serde_json's default parser
    may be one ulp off), or a duration exactly at its threshold flips."""
    events = pl.DataFrame(
        {"clip_id": ["clip0", "clip0"], "label": ["a", "a"], "onset_sample": [0, 0], "offset_sample": [4, 0]}
    )
    for rate in (44100.0, 16000.0, 22050.0, 48000.0, 11025.0):
        logic = {"all": [{"duration": {"label": "a", "min_s": 4 / rate, "max_s": 4 / rate}}]}
        queries = pl.DataFrame({"query_id": ["q0"], "logic": [json.dumps(logic)]})
        qrels = annotate(events, queries, sample_rate=rate, clip_ids=["clip0"])
        assert qrels.height == 1, rate
