"""Detect-then-reason without training: post-processing, engine-voted ranking, SED metrics.

Every expectation here is worked out by hand from the inputs written in the test.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

pytest.importorskip("torch")
pytest.importorskip("scipy")

from reasonaudio.detect.infer import EventIndex  # noqa: E402
from reasonaudio.detect.model import PostConfig  # noqa: E402
from reasonaudio.detect.postprocess import events_of_clip, segments, smooth  # noqa: E402
from reasonaudio.detect.rank import engine_votes, parse_queries, score_matrix  # noqa: E402

FS = 0.04  # output frame, seconds


def test_median_filter_removes_a_one_frame_blip_and_keeps_a_run():
    p = np.zeros((40, 2), np.float32)
    p[10, 0] = 1.0  # one-frame blip
    p[20:30, 1] = 0.9
    sm = smooth(p, 5)
    assert sm[:, 0].max() == 0.0
    assert np.all(sm[21:29, 1] > 0.8) and sm[:18, 1].max() == 0.0


def test_segments_fill_gaps_drop_short_runs_and_map_frames_to_times():
    p = np.zeros((100, 2), np.float32)
    p[10:20, 0] = 0.9
    p[25:40, 0] = 0.8  # 5 frames (0.2 s) after the first run: one event with a quiet stretch
    p[60:62, 1] = 0.9  # 2 frames = 0.08 s: shorter than min_event_s
    post = PostConfig(median_frames=1, threshold=0.5, fill_gap_s=0.5, min_event_s=0.2)
    assert segments(p, 0.5, FS, post) == [(0, 10, 40)]
    presence, per_t = events_of_clip(p, FS, 4.0, post, [0.5, 0.85])
    assert presence[0] == pytest.approx(0.9) and presence[1] == pytest.approx(0.9)
    (label, on, off, conf), = per_t[0]
    assert label == 0 and on == pytest.approx(9.5 * FS) and off == pytest.approx(39.5 * FS)
    assert conf == pytest.approx(p[10:40, 0].mean())
    assert [e[:1] for e in per_t[1]] == [(0,)] and per_t[1][0][2] == pytest.approx(19.5 * FS)  # only the 0.9 run


def _index(events_by_threshold, presence, labels=("dog_bark", "siren", "rain"), n_clips=3):
    frames = [
        pl.DataFrame(evs, schema={"clip": pl.Int64, "label": pl.Int64, "onset_s": pl.Float64, "offset_s": pl.Float64,
                                  "confidence": pl.Float64, "gain_db": pl.Float64}, orient="row")
        for evs in events_by_threshold
    ]
    return EventIndex(
        clip_ids=[f"c{i}" for i in range(n_clips)], durations_s=np.full(n_clips, 10.0), sample_rates=np.full(n_clips, 16000),
        labels=list(labels), atom_ids=[f"atom_{i}" for i in range(len(labels))], thresholds=(0.3, 0.5, 0.7),
        presence=np.asarray(presence, np.float32), events=frames, operating=1,
    )


def test_ranking_counts_engine_verdicts_then_breaks_ties_softly():
    # clip 0: dog then siren, both sure. clip 1: dog then siren, siren only at low thresholds.
    # clip 2: siren then dog (order broken).
    sure = [(0, 0, 1.0, 2.0, 0.95, 0.0), (0, 1, 3.0, 5.0, 0.95, 0.0), (2, 1, 1.0, 2.0, 0.9, 0.0), (2, 0, 3.0, 4.0, 0.9, 0.0)]
    faint = [(1, 0, 1.0, 2.0, 0.9, 0.0), (1, 1, 3.0, 5.0, 0.45, 0.0)]
    index = _index([sure + faint, sure + faint[:1], sure + faint[:1]],
                   [[0.95, 0.95, 0.0], [0.9, 0.45, 0.0], [0.9, 0.9, 0.0]])
    before = {"all": [{"before": ["dog_bark", "siren"]}]}
    no_siren = {"all": [{"has": "dog_bark"}, {"not": "siren"}]}
    votes = engine_votes(index, [before, no_siren])
    assert votes[0].tolist() == [3, 1, 0]  # the engine's verdict at each of the three thresholds
    assert votes[1].tolist() == [0, 2, 0]
    s = score_matrix(index, [before, no_siren, None])
    assert s[0, 0] > s[0, 1] > s[0, 2] > 0
    assert s[1, 1] > s[1, 0] and s[1, 1] > s[1, 2]
    assert np.all(s[2] == 0)  # an unparsed query scores 0 everywhere
    # soft part: the order-broken clip still beats one without the sounds at all
    index2 = _index([sure, sure, sure], [[0.95, 0.95, 0.0], [0.0, 0.0, 0.0], [0.9, 0.9, 0.0]])
    s2 = score_matrix(index2, [before])
    assert s2[0, 2] > s2[0, 1]


def test_overlap_soft_truth_uses_frame_coactivation_when_detect_kept_it():
    from reasonaudio.detect.rank import overlap_pairs

    # no event at any threshold in clips 1 and 2 (a masked sound); clip 1's two labels rise
    # together somewhere (co-activation 0.4), clip 2's never at once (0.05)
    index = _index([[], [], []], [[0.2, 0.9, 0.0], [0.45, 0.9, 0.0], [0.45, 0.9, 0.0]])
    logic = {"all": [{"overlap": ["siren", "dog_bark"]}]}
    assert overlap_pairs([logic, None, {"all": [{"has": "rain"}]}], index.labels) == [(0, 1)]
    plain = score_matrix(index, [logic])
    assert plain[0, 1] == plain[0, 2]  # without the co-activation: no way to tell them apart
    index.coactive = {(0, 1): np.array([0.1, 0.4, 0.05], np.float32)}
    s = score_matrix(index, [logic])
    assert s[0, 1] > s[0, 0] > s[0, 2]


def test_detect_keeps_the_coactivation_of_the_pairs_it_is_asked_for(tmp_path):
    import soundfile as sf

    from reasonaudio.detect.infer import detect
    from reasonaudio.detect.train import TrainConfig, train

    d = train("procedural", TrainConfig(steps=2, batch=2, labels=4, channels=8, valid_clips=2, checks=1), progress=False)
    paths = []
    for k in range(2):
        paths.append(tmp_path / f"c{k}.wav")
        sf.write(paths[-1], np.random.default_rng(k).standard_normal(16000 * 2).astype(np.float32) * 0.05, 16000)
    index = detect(d, paths, ["c0", "c1"], progress=False, keep_scores=True, pairs=[(2, 0), (0, 2), (1, 3)])
    assert sorted(index.coactive) == [(0, 2), (1, 3)]
    for i, cid in enumerate(["c0", "c1"]):
        sm = index.scores[cid].astype(np.float32)  # the same smoothed probabilities, kept at float16
        assert index.coactive[(0, 2)][i] == pytest.approx(float(np.max(np.minimum(sm[:, 0], sm[:, 2]))), abs=2e-3)
    assert detect(d, paths, ["c0", "c1"], progress=False).coactive is None


def test_queries_are_parsed_with_the_model_vocabulary():
    logics, bad = parse_queries(["A dog barking without a siren", "something else entirely"],
                                ["dog_bark", "siren"], ["a dog barking", "a siren"])
    assert logics[0] == {"all": [{"has": "dog_bark"}, {"not": "siren"}]}
    assert logics[1] is None and bad == [1]


def test_event_table_has_the_contract_columns_plus_confidence():
    index = _index([[], [(0, 2, 0.5, 1.25, 0.8, -3.0), (0, 0, 2.0, 3.0, 0.7, 0.0), (2, 1, 0.0, 1.0, 0.6, -1.0)], []],
                   np.zeros((3, 3)))
    t = index.table()
    from reasonaudio.io.benchmark import TABLE_COLUMNS

    assert t.columns[: len(TABLE_COLUMNS["events"])] == list(TABLE_COLUMNS["events"]) and t.columns[-1] == "confidence"
    assert t["event_index"].to_list() == [0, 1, 0]
    assert t["onset_sample"].to_list() == [8000, 32000, 0]
    assert t["label"].to_list() == ["rain", "dog_bark", "siren"]


def test_sed_metrics_match_a_hand_computed_case():
    pytest.importorskip("sed_scores_eval")
    from reasonaudio.detect.metrics import sed_metrics

    # truth: c0 dog 1-3 s, siren 5-7 s; c1 rain 2-4 s.
    truth = pl.DataFrame({"clip_id": ["c0", "c0", "c1"], "label": ["dog_bark", "siren", "rain"],
                          "onset_s": [1.0, 5.0, 2.0], "offset_s": [3.0, 7.0, 4.0]})
    # detected: dog 1.1-2.9 (hit within the 200 ms collar), siren 5.5-7.0 (onset 500 ms late: miss
    # and false alarm), rain in c1 0.0-1.0 (false alarm; the true rain is missed), nothing in c2.
    det = [(0, 0, 1.1, 2.9, 0.9, 0.0), (0, 1, 5.5, 7.0, 0.8, 0.0), (1, 2, 0.0, 1.0, 0.7, 0.0)]
    index = _index([det, det, det], np.zeros((3, 3)), n_clips=2)
    index.durations_s = np.array([10.0, 10.0])
    m = sed_metrics(index, truth, psds=False)
    ev = m["event_based"]
    assert ev["micro_precision"] == pytest.approx(1 / 3, abs=1e-4) and ev["micro_recall"] == pytest.approx(1 / 3, abs=1e-4)
    assert ev["per_label"]["dog_bark"]["f1"] == 1.0 and ev["per_label"]["siren"]["f1"] == 0.0
    seg = m["segment_based"]
    # 1 s segments. truth-active (clip, label, segment): dog 1,2; siren 5,6; rain 2,3 = 6.
    # detected-active: dog 1,2; siren 5,6; rain 0 = 5. matches: 4.
    assert seg["micro_precision"] == pytest.approx(4 / 5, abs=1e-4) and seg["micro_recall"] == pytest.approx(4 / 6, abs=1e-4)


def test_perception_errors_are_attributed_to_the_constraint_they_break():
    from reasonaudio.detect.errors import attribute

    ev = lambda rows: pl.DataFrame(rows, schema={"clip_id": pl.String, "label": pl.String, "onset_s": pl.Float64, "offset_s": pl.Float64}, orient="row")
    truth = ev([("c0", "a", 0.0, 2.0), ("c0", "b", 1.0, 3.0), ("c1", "a", 0.0, 1.0), ("c2", "a", 0.0, 1.0), ("c2", "b", 2.0, 3.0)])
    detected = ev([("c0", "a", 0.0, 2.0), ("c1", "a", 0.0, 1.0), ("c1", "c", 2.0, 3.0), ("c2", "a", 0.0, 2.5), ("c2", "b", 2.0, 3.0)])
    overlap = {"all": [{"overlap": ["a", "b"]}]}
    cases = [
        ("overlap", overlap, "c0", False),  # b masked in the overlap: missed, so the overlap is lost
        ("negation", {"all": [{"has": "a"}, {"not": "c"}]}, "c1", False),  # c heard where there is none
        ("overlap", overlap, "c2", True),  # a's offset detected late: an overlap that is not there
        ("overlap", overlap, "c1", False),  # truth and detection agree: nothing to blame
    ]
    out = attribute(truth, detected, ["c0", "c1", "c2"], cases)
    assert out["overlap"] == {"missed sound (in overlap)": 1, "overlap misjudged": 1, "no single constraint (ranking)": 1}
    assert out["negation"] == {"false alarm (negated sound)": 1}


def test_overlap_soft_truth_weighs_the_louder_sound_beside_the_coactivation():
    from reasonaudio.detect.rank import soft_truth

    # clip 0: one sound clearly there (0.98), the masked one barely rising with it (co 0.03);
    # clip 1: neither sound, low co-activation noise of both (0.09). The masked pair ranks first.
    presence = np.array([[0.98, 0.04], [0.12, 0.10]], np.float32)
    nan = np.full((2, 2), np.nan)
    logic = {"all": [{"overlap": ["siren", "dog_bark"]}]}
    co = {(0, 1): np.array([0.03, 0.09], np.float32)}
    value = soft_truth(logic, presence, nan, nan, {"siren": 0, "dog_bark": 1}, co)
    assert value[0] > value[1]
    np.testing.assert_allclose(value, np.sqrt(co[(0, 1)] * presence.max(axis=1)), rtol=1e-6)
