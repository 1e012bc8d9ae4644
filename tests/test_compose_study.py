"""`--scoring study` against `--scoring robust`: each difference found in the study's code
(steven-lunar/audio-compositionality-gap) as a hand-made answer scored under both modes, plus the
project's own parser fixes. Expected study decisions are worked out from its scripts by hand."""

from __future__ import annotations

import pytest

from reasonaudio.compose import study
from reasonaudio.compose.score import _sample_records, _study_records, signal_detection

pytest.importorskip("whisper_normalizer")

MANIFEST_ENV = {"params": {"cue": "environment", "task": "math"},
                "cue_values": [{"value": "rain_light", "phrase": "light rain"},
                               {"value": "ocean_waves", "phrase": "ocean waves"},
                               {"value": "crickets", "phrase": "crickets chirping"}]}
MANIFEST_GENDER = {"params": {"cue": "gender", "task": "math"},
                   "cue_values": [{"value": "female", "phrase": "female"}, {"value": "male", "phrase": "male"}]}


def row(task="math", cue="environment", target=1, texts=("alpha bravo charlie delta echo", "foxtrot golf hotel india juliet"),
        answers=(["12"], ["7"]), values=("rain_light", "ocean_waves")):
    segs = [{"text": t, "answers": list(a), "cue_value": v, "snr_db": 10.0 if cue == "environment" else None}
            for t, a, v in zip(texts, answers, values)]
    return {"id": "s0", "cue": cue, "task": task, "target_segment": target, "target_value": values[target - 1],
            "target_phrase": values[target - 1], "snr_db": 10.0 if cue == "environment" else None, "segments": segs}


def decide(scoring, layer, output, r=None, manifest=MANIFEST_ENV, prompts="project", judge=None):
    """{(parser, segment): record} for one output."""
    r = r or row()
    fn = _study_records if scoring == "study" else _sample_records
    return {(x.parser, x.segment): x for x in fn(manifest, r, layer, output, judge, prompts)}


def correct(scoring, layer, output, parser, seg=1, **kw):
    return decide(scoring, layer, output, **kw)[(parser, seg)].correct


# --- tags -----------------------------------------------------------------------------------------

def test_tag_case_study_accepts_robust_strict_refuses():
    assert correct("study", "compositional", "<ANS>12</ANS>", "strict") is True
    assert correct("robust", "compositional", "<ANS>12</ANS>", "strict") is False
    assert correct("robust", "compositional", "<ANS>12</ANS>", "lenient") is True


def test_unclosed_two_answer_tags():
    out = "<ans_1>12<ans_2>7"
    # grader.py's strict rule needs the closing tag; the evaluators' extractor does not
    assert [correct("study", "atomic", out, "strict", k) for k in (1, 2)] == [False, False]
    assert [correct("study", "atomic", out, "lenient", k) for k in (1, 2)] == [True, True]
    assert [correct("robust", "atomic", out, "strict", k) for k in (1, 2)] == [False, False]
    assert [correct("robust", "atomic", out, "lenient", k) for k in (1, 2)] == [True, True]


def test_study_strict_tag_needs_exactly_one_pair_and_content():
    assert study.strict_extract("<asr></asr>", "asr") is None
    assert study.strict_extract("<ans>1</ans><ans>2</ans>", "ans") is None
    assert study.strict_extract("</ans>1<ans>", "ans") is None
    assert study.strict_extract("x <Ans> 7 </ANS> y", "ans") == "7"


# --- math -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("answer, study_ok, robust_ok", [
    ("12", True, True), (" 12 ", True, True), ("12.0", False, True), ("twelve", False, True),
    ("12.", False, True), ("-12", False, False)])
def test_math_exact_string_vs_number(answer, study_ok, robust_ok):
    out = f"<ans>{answer}</ans>"
    assert correct("study", "compositional", out, "strict") is study_ok
    assert correct("robust", "compositional", out, "strict") is robust_ok


def test_math_negative_answers_keep_their_sign():
    r = row(answers=(["-545"], ["304"]))
    assert correct("robust", "compositional", "<ans>-545</ans>", "strict", r=r) is True
    assert correct("robust", "compositional", "<ans>545</ans>", "strict", r=r) is False
    assert correct("robust", "compositional", "It is -545.", "lenient", r=r) is True


def test_study_lenient_math_is_the_evaluators_extraction():
    # extract_math_answer: the last number inside the tag, else after 'is', else the last number
    assert study.math_answer("<ans>7 + 5 = 12</ans>", "ans") == "12"
    assert study.math_answer("The answer is 12, not 7", "ans") == "12"
    assert study.math_answer("so 12 then 7", "ans") == "7"
    assert study.math_answer("no idea", "ans") == "PARSING_ERROR"
    # extract_dual_math_answers: '-?\d+\.?\d*' keeps a trailing point, so '12.' is not '12'
    assert study.dual_math_answer("<ans_1>12.</ans_1>", "ans_1", "ans_2") == "12."
    assert correct("study", "atomic", "<ans_1>12.</ans_1><ans_2>7</ans_2>", "lenient", 1) is False


# --- factual answers --------------------------------------------------------------------------------

@pytest.mark.parametrize("alias, answer, study_ok, robust_ok", [
    ("guest's", "guests", False, True),         # Whisper: "guest's" -> "guest is"
    ("Mr. Smith", "Mister Smith", True, False),  # Whisper standardises titles
    ("The Beatles", "Beatles", True, True),
    ("Pacific Ocean", "the Pacific ocean.", True, True),
])
def test_facts_whisper_normaliser(alias, answer, study_ok, robust_ok):
    r = row(task="facts", answers=([alias], ["Paris"]))
    out = f"<ans>{answer}</ans>"
    assert correct("study", "compositional", out, "strict", r=r) is study_ok
    assert correct("robust", "compositional", out, "strict", r=r) is robust_ok


def test_facts_study_needs_equality_robust_lenient_finds_alias_in_text():
    r = row(task="facts", answers=(["Pacific Ocean"], ["Paris"]))
    out = "<ans>It is the Pacific Ocean</ans>"
    assert correct("study", "compositional", out, "strict", r=r) is False
    assert correct("study", "compositional", out, "lenient", r=r) is False
    assert correct("robust", "compositional", out, "lenient", r=r) is True


def test_facts_atomic_lenient_compares_with_the_stored_normalised_aliases():
    r = row(task="facts", answers=(["Pacific Ocean"], ["Paris"]))
    # evaluate_dual_trivia: only <ans_1>/<ans_2> (no <ans1>), closing tag optional
    assert correct("study", "atomic", "<ans_1>Pacific ocean<ans_2>Paris", "lenient", 1, r=r) is True
    assert correct("study", "atomic", "<ans_1>Pacific ocean<ans_2>Paris", "lenient", 2, r=r) is True
    assert correct("study", "atomic", "<ans1>Pacific ocean</ans1>", "lenient", 1, r=r) is False


# --- selection ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("content, study_choice, robust_choice", [
    ("2", 2, 2), ("2.", 2, None), ("segment 2", 2, None), ("second", 2, None), ("The second segment", 2, None),
    ("second one", None, None), ("1 or 2", None, None)])
def test_selection_ordinals_inside_the_tag(content, study_choice, robust_choice):
    r = row(target=2)
    out = f"<segment>{content}</segment>"
    assert decide("study", "selection", out, r=r)[("strict", 2)].chosen == study_choice
    assert decide("robust", "selection", out, r=r)[("strict", 2)].chosen == robust_choice


def test_selection_study_lenient_chain():
    assert study.lenient_choice("<ans>x</ans> I think it is segment 1, no, segment 2", "ans") == 2
    assert study.lenient_choice("The first one.", "ans") == 1
    assert study.lenient_choice("answer: 2", "ans") == 2
    assert study.lenient_choice("<ans>1</ans><ans>2</ans>", "ans") == 2  # several pairs: the last parseable
    assert study.lenient_choice("none", "ans") is None


def test_selection_under_the_study_prompts_uses_the_ans_tag():
    r = row(target=2)
    assert decide("study", "selection", "<ans>2</ans>", r=r, prompts="study")[("strict", 2)].correct is True
    assert decide("robust", "selection", "<ans>2</ans>", r=r, prompts="study")[("strict", 2)].correct is True
    assert decide("robust", "selection", "<ans>2</ans>", r=r)[("strict", 2)].correct is False


# --- position bias -----------------------------------------------------------------------------------

def test_position_bias_invalid_answers_count_in_the_study():
    tf = [True] * 4 + [False] * 4
    chose = [1, 1, None, None, 1, 2, 2, None]
    s, r = study.signal_detection(tf, chose), signal_detection(tf, chose)
    # study: N1 = N2 = 4; hits 2, false alarms 1 -> H = 2.5/5, F = 1.5/5
    assert s["hit_rate"] == pytest.approx(0.5) and s["false_alarm_rate"] == pytest.approx(0.3)
    assert s["p_choose_first"] == pytest.approx(3 / 8) and s["n_valid"] == 5
    assert s["balanced_accuracy"] == pytest.approx((2 / 4 + 2 / 4) / 2)
    z = study.NormalDist().inv_cdf
    assert s["d_prime"] == pytest.approx(z(0.5) - z(0.3))
    assert s["criterion_c"] == pytest.approx(-0.5 * (z(0.5) + z(0.3)))
    # robust: invalid answers dropped -> N1 = 2, N2 = 3; H = 2.5/3, F = 1.5/4
    assert r["hit_rate"] == pytest.approx(2.5 / 3) and r["false_alarm_rate"] == pytest.approx(1.5 / 4)
    assert r["p_choose_first"] == pytest.approx(3 / 5)


# --- transcription -----------------------------------------------------------------------------------

def test_asr_both_recognised_class_and_threshold():
    r = row(task="asr", target=1)
    both = "<asr>alpha bravo charlie delta echo foxtrot golf hotel india juliet</asr>"
    assert decide("study", "compositional", both, r=r)[("strict", 1)].error_class == "both"
    assert decide("robust", "compositional", both, r=r)[("strict", 1)].error_class == "neither"
    # 3 of 5 words wrong: WER 0.6 is under the study's 0.8 but over the project's 0.5
    part = "<asr>alpha bravo xray yankee zulu</asr>"
    assert decide("study", "compositional", part, r=r)[("strict", 1)].error_class == "correct"
    assert decide("robust", "compositional", part, r=r)[("strict", 1)].error_class == "neither"


def test_asr_missing_tag_is_all_deletions_study_lenient_falls_back_to_text():
    r = row(task="asr", target=1)
    d = decide("study", "compositional", "alpha bravo charlie delta echo", r=r)
    assert (d[("strict", 1)].errors, d[("strict", 1)].ref_words) == (5, 5)
    assert (d[("lenient", 1)].errors, d[("lenient", 1)].ref_words) == (0, 5)


def test_asr_whisper_vs_project_normaliser():
    assert study.word_errors("Mr. Smith is here.", "mister smith is here") == (0, 4)
    r = row(task="asr", texts=("Mr. Smith is here", "golf hotel"), target=1)
    assert decide("robust", "compositional", "<asr>mister smith is here</asr>", r=r)[("strict", 1)].errors == 1


# --- recognition -------------------------------------------------------------------------------------

def test_recognition_study_labels_brackets_and_unclosed_environment_tags():
    out = "<event_1>[Rain]</event_1><event_2>sea_waves"
    d = decide("study", "recognition", out, prompts="study")
    assert d[("strict", 1)].correct and not d[("strict", 2)].correct
    assert d[("lenient", 1)].correct and d[("lenient", 2)].correct      # dual_atomic_grader
    r = decide("robust", "recognition", out, prompts="study")
    assert not r[("strict", 1)].correct                                    # '[Rain]' is an aside to the normaliser
    assert r[("lenient", 2)].correct


def test_recognition_gender_tags_must_be_closed_in_the_study():
    r = row(cue="gender", values=("female", "male"))
    out = "<gender_1>Female</gender_1><gender_2>male"
    d = decide("study", "recognition", out, r=r, manifest=MANIFEST_GENDER, prompts="study")
    assert d[("lenient", 1)].correct and not d[("lenient", 2)].correct


_ENV_SPELLINGS = [  # (output, strict decisions, lenient decisions) on a set labelled rain_light / crickets
    ("<event1>rain_light</event1><event2>crickets</event2>", (True, True), (True, True)),
    ("<event_1>rain_light</event_1><event_2>crickets</event_2>", (True, True), (True, True)),
    ("<EVENT1>Rain_Light</EVENT1><Event2>CRICKETS</Event2>", (True, True), (True, True)),
    ("<event1>rain_light</event_1><event2>crickets</event2><event2>x</event2>", (True, False), (True, True)),
    ("<Event_1>[rain_light]</Event_1><event2>crickets", (True, False), (True, True)),
    ("<event1>rain_light<event2>crickets", (False, False), (True, True)),
    ("<event 1>rain_light</event 1><event-2>crickets</event-2>", (False, False), (False, False)),
]


@pytest.mark.parametrize("out, strict, lenient", _ENV_SPELLINGS)
def test_recognition_tag_spellings_on_the_sets_own_labels(out, strict, lenient):
    """The study's recognition grade (dual_atomic_grader.py with extractor.py's `<event_?k>`, unclosed
    allowed) against the labels the prompts listed: the set's own (project prompts). The study has no
    strict recognition grader: strict is grader.py's tag rule (one opening and one closing tag, in
    order, non-empty) on the tag that grader reads, `<event_?k>`, so `<event1>...</event1>` is strict."""
    r = row(values=("rain_light", "crickets"))
    d = decide("study", "recognition", out, r=r, prompts="project")
    assert (d[("strict", 1)].correct, d[("strict", 2)].correct) == strict
    assert (d[("lenient", 1)].correct, d[("lenient", 2)].correct) == lenient


def test_recognition_under_the_study_prompts_matches_the_studys_label():
    """Under --prompts study the options are the study's labels, as in an export's bg_category
    (rain_light -> rain): naming the set's own label is wrong there, as in the study's code."""
    r = row(values=("rain_light", "crickets"))
    d = decide("study", "recognition", "<event1>rain_light</event1><event2>crickets</event2>", r=r, prompts="study")
    assert (d[("lenient", 1)].correct, d[("lenient", 2)].correct) == (False, True)
    d = decide("study", "recognition", "<event1>rain</event1><event2>crickets</event2>", r=r, prompts="study")
    assert (d[("lenient", 1)].correct, d[("lenient", 2)].correct) == (True, True)


def test_gender_and_emotion_tags_keep_their_underscore_in_the_study():
    """extract_dual_tagged_values reads only `<gender_k>` / `<emotion_k>` (closed), unlike `<event_?k>`."""
    r = row(cue="gender", values=("female", "male"))
    d = decide("study", "recognition", "<gender1>female</gender1><gender2>male</gender2>", r=r,
               manifest=MANIFEST_GENDER, prompts="study")
    assert not d[("lenient", 1)].correct and not d[("lenient", 2)].correct
    d = decide("study", "recognition", "<GENDER_1>Female</GENDER_1><gender_2>[male]</gender_2>", r=r,
               manifest=MANIFEST_GENDER, prompts="study")
    assert d[("lenient", 1)].correct and d[("lenient", 2)].correct


# --- this project's parser bugs (robust) -------------------------------------------------------------

def test_digits_in_tag_names_are_not_answers():
    r = row(answers=(["35"], ["39"]))
    d = decide("robust", "atomic", "<ans1>35</ans1><ans2>39</ans2>", r=r)
    assert d[("lenient", 1)].correct and d[("lenient", 2)].correct
    assert not d[("strict", 1)].correct  # strict still wants the tag as asked
    s = decide("study", "atomic", "<ans1>35</ans1><ans2>39</ans2>", r=r)
    assert s[("lenient", 1)].correct and s[("lenient", 2)].correct and not s[("strict", 1)].correct


def test_segment_reference_is_not_the_answer():
    r = row(target=2, answers=(["3"], ["5"]))
    out = "The answer is 5, from segment 2."
    assert correct("robust", "compositional", out, "lenient", 2, r=r) is True
    assert correct("study", "compositional", out, "lenient", 2, r=r) is True


def test_judge_answers_are_graded_with_the_studys_rules():
    judge = lambda k, what, options: "12.0"  # noqa: E731
    assert decide("study", "compositional", "x", judge=judge)[("judge", 1)].correct is False
    assert decide("robust", "compositional", "x", judge=judge)[("judge", 1)].correct is True


def test_study_labels():
    assert [study.study_label("environment", v) for v in
            ("rain_light", "ocean_waves", "bird_trill", "wind_howl_low", "crickets", "strong_wind", "thunder")] == \
        ["rain", "sea_waves", "chirping_birds", "wind", "crickets", "wind", "thunder"]
    assert study.study_label("emotion", "fearful") == "fear" and study.study_label("emotion", "disgusted") == "disgust"


def test_format_compliance_rules():
    assert study.selection_compliant("<ans>1</ans> <ans>", "ans")          # grade_seg_idx counts pairs
    assert study.strict_extract("<ans>1</ans> <ans>", "ans") is None       # grader.py counts tags
    assert not study.selection_compliant("<ans> </ans>", "ans")


# --- replay of decisions made by the study's own code --------------------------------------------------

_ALL_VALUES = {"environment": ["rain", "sea_waves", "crickets", "chirping_birds", "wind"], "gender": ["female", "male"],
               "emotion": ["angry", "happy", "sad", "fear", "disgust"]}


def test_agrees_with_the_studys_code_on_fuzzed_answers():
    """tests/data/compose_study_reference.jsonl: 300 generated outputs of every layer, task and cue, each
    with the decisions the study's functions (grader.py, extractor.py, grade_seg_idx.py, asr_wer_eval.py,
    dual_atomic_grader.py, the evaluators' normalisers) made on it, run outside this repository.

    The study has no strict recognition grader; the file's strict recognition decisions apply grader.py
    to the literal tag `event_k`. Strict recognition here reads the tags the study's recognition grader
    accepts (`<event_?k>`, extractor.py), so a strict decision on an `<eventK>` spelling is not compared
    (the hand-made cases above cover it); every other decision is, and the skipped ones are counted."""
    import json
    import re
    from pathlib import Path

    path = Path(__file__).parent / "data" / "compose_study_reference.jsonl"
    n = skipped = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        c = json.loads(line)
        manifest = {"params": {"cue": c["cue"], "task": c["task"]}, "origin": "study",
                    "cue_values": [{"value": v, "phrase": v} for v in _ALL_VALUES[c["cue"]]]}
        segs = [{"text": t, "answers": a, "cue_value": v, "snr_db": None}
                for t, a, v in zip(c["texts"], c["answers"], c["values"])]
        r = {"id": "x", "cue": c["cue"], "task": c["task"], "target_segment": c["target"],
             "target_value": c["values"][c["target"] - 1], "target_phrase": c["values"][c["target"] - 1],
             "snr_db": None, "segments": segs}
        llm = c["llm"]
        judge = lambda k, what, opts: llm[(k or 1) - 1] if llm and (k or 1) - 1 < len(llm) else None  # noqa: E731
        recs = {(x.parser, x.segment): x for x in _study_records(manifest, r, c["layer"], c["output"], judge, "study")}
        for parser, seg, fields, value in c["expect"]:
            if (c["layer"], c["cue"], parser) == ("recognition", "environment", "strict") and \
                    re.search(rf"</?event{seg}>", c["output"], flags=re.IGNORECASE):
                skipped += 1
                continue
            got = [getattr(recs[(parser, seg)], f) for f in fields]
            assert got == value, (c["layer"], c["task"], c["cue"], parser, seg, c["output"])
            n += 1
    assert n > 800 and skipped == 3
