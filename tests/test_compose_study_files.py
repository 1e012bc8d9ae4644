"""Files of the study mode: --prompts study, samples.jsonl, export --to study, import-study (round trip
and the study's prediction files), and the report's change against the target segment per SNR."""

from __future__ import annotations

import json
import random
import shutil

import pytest

from compose_fakes import ToneLibrary, ToneSource
from reasonaudio.cli import main
from reasonaudio.compose.build import ComposeConfig, build_set, read_dataset
from reasonaudio.compose.convert import _target_index, import_study
from reasonaudio.compose.score import score_dataset
from reasonaudio.compose.study import study_label
from reasonaudio.errors import UserError

pytest.importorskip("whisper_normalizer")
SR = 16000
N = 24  # three backgrounds, two SNRs: every pair at every SNR


def _outputs(rows):
    """Answers in the study's tags: right everywhere, upper-case compositional tags, CoT without tags."""
    out = []
    for r in rows:
        s1, s2 = r["segments"]
        gold = r["segments"][r["target_segment"] - 1]["answers"][0]
        lab = [study_label("environment", s["cue_value"]) for s in (s1, s2)]
        out += [
            {"id": r["id"], "layer": "recognition", "output": f"<event_1>{lab[0]}</event_1><event_2>{lab[1]}</event_2>"},
            {"id": r["id"], "layer": "selection", "output": f"<ans>{r['target_segment']}</ans>"},
            {"id": r["id"], "layer": "atomic",
             "output": f"<ans_1>{s1['answers'][0]}</ans_1><ans_2>{s2['answers'][0]}</ans_2>"},
            {"id": r["id"], "layer": "compositional", "output": f"<ANS>{gold}</ANS>"},
            {"id": r["id"], "layer": "compositional_cot",
             "output": f"The answer is {gold}, from segment {r['target_segment']}."},
        ]
    return out


@pytest.fixture(scope="module")
def env_set(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("study")
    build_set(tmp / "set", ComposeConfig(cue="environment", task="math", n=N, snrs=(0.0, 20.0), sample_rate=SR, seed=3),
          source=ToneSource(SR), library=ToneLibrary(SR))
    _, rows = read_dataset(tmp / "set")
    (tmp / "outputs.jsonl").write_text("".join(json.dumps(o) + "\n" for o in _outputs(rows)))
    return tmp


def test_study_prompts(env_set, tmp_path):
    assert main(["compose", "prompts", str(env_set / "set"), "--prompts", "study", "--out", str(tmp_path / "p.jsonl")]) == 0
    prompts = [json.loads(x) for x in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert len(prompts) == N * 5
    by_layer = {p["layer"]: p for p in prompts if p["id"] == "s00000"}
    assert by_layer["selection"]["tags"] == ["ans"]
    assert "Output ONLY its index (1 for the first segment, 2 for the second segment) inside <ans> and </ans> tags." \
        in by_layer["selection"]["prompt"]
    assert "[rain, crickets, wind]" in by_layer["recognition"]["prompt"]
    assert "<ans_1> and </ans_1>" in by_layer["atomic"]["prompt"]
    assert "Think through this step by step:" in by_layer["compositional_cot"]["prompt"]


def test_study_prompts_skip_cot_transcription():
    from reasonaudio.compose.prompts import make_prompts

    manifest = {"cue_values": [{"value": "female"}, {"value": "male"}]}
    row = {"id": "x", "cue": "gender", "task": "asr", "target_value": "male", "audio": "a.wav"}
    layers = [p["layer"] for p in make_prompts(manifest, row, style="study")]
    assert layers == ["recognition", "selection", "atomic", "compositional"]
    text = make_prompts(manifest, row, ("compositional",), style="study")[0]["prompt"]
    assert "Find the segment spoken by the male speaker." in text and "<asr> and </asr>" in text


def test_score_modes_and_samples(env_set, tmp_path):
    for mode in ("study", "robust"):
        assert main(["compose", "score", str(env_set / "set"), "--outputs", str(env_set / "outputs.jsonl"),
                     "--scoring", mode, "--prompts", "study", "--out", str(tmp_path / mode)]) == 0
    study = json.loads((tmp_path / "study" / "results.json").read_text())["datasets"][0]
    robust = json.loads((tmp_path / "robust" / "results.json").read_text())["datasets"][0]
    assert study["scoring"] == "study" and robust["scoring"] == "robust"
    acc = lambda res, layer, parser: res["layers"][layer][parser]["all"]["accuracy"]  # noqa: E731
    for layer in ("recognition", "selection", "atomic"):
        assert acc(study, layer, "strict") == acc(robust, layer, "strict") == 100.0
    assert acc(study, "compositional", "strict") == 100.0 and acc(robust, "compositional", "strict") == 0.0
    assert acc(study, "compositional_cot", "strict") == 0.0 and acc(study, "compositional_cot", "lenient") == 100.0
    assert acc(robust, "compositional_cot", "lenient") == 100.0
    rows = [json.loads(x) for x in (tmp_path / "study" / "samples.jsonl").read_text().splitlines()]
    assert len(rows) == N * (4 + 2 + 4 + 2 + 2)
    keys = {"id", "layer", "segment", "parser", "correct", "chosen", "word_errors", "ref_words", "error_class", "set"}
    assert all(set(r) == keys for r in rows)
    sel = [r for r in rows if r["layer"] == "selection"]
    assert all(r["segment"] is None and r["chosen"] in (1, 2) and r["correct"] for r in sel)
    assert {r["segment"] for r in rows if r["layer"] == "atomic"} == {1, 2}
    comp = [r for r in rows if r["layer"] == "compositional" and r["parser"] == "strict"]
    assert all(r["error_class"] == "correct" and r["chosen"] is None for r in comp)


def test_report_shows_change_vs_target_per_snr(env_set, tmp_path):
    out = list(_outputs(read_dataset(env_set / "set")[1]))
    for o in out:  # atomic: only segment 1 right -> target-only atomic accuracy differs from both-segment
        if o["layer"] == "atomic":
            o["output"] = o["output"].split("<ans_2>")[0] + "<ans_2>99999</ans_2>"
    path = tmp_path / "o.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in out))
    assert main(["compose", "score", str(env_set / "set"), "--outputs", str(path), "--scoring", "study",
                 "--prompts", "study", "--out", str(tmp_path / "r")]) == 0
    res = json.loads((tmp_path / "r" / "results.json").read_text())["datasets"][0]
    report = (tmp_path / "r" / "report.md").read_text()
    assert res["dataset"]["snrs"] == [0.0, 20.0]
    for g in ("snr=0", "snr=20", "all"):
        gap = res["gap"]["compositional"]["strict"][g]
        assert gap["change_vs_target_pp"] is not None
    strict_table = report.split("(strict parser)")[1].split("##")[0]
    line = next(x for x in strict_table.splitlines() if x.startswith("| environment 0 dB / math |"))
    cells = [c.strip() for c in line.split("|")]
    assert cells[8] == f"{res['gap']['compositional']['strict']['snr=0']['change_vs_target_pp']:.1f}" != "–"
    assert "| environment all SNRs / math |" in report


def test_export_import_round_trip(env_set, tmp_path):
    assert main(["compose", "export", str(env_set / "set"), "--to", "study", str(tmp_path / "study")]) == 0
    rows = [json.loads(x) for x in (tmp_path / "study" / "metadata.jsonl").read_text().splitlines()]
    first = rows[0]
    assert {"concat_id", "audio_path", "cue_type", "order", "target_index", "target_bg_category",
            "distractor_bg_category", "sequence"} <= set(first)
    assert first["cue_type"] == "bg_noise" and (tmp_path / "study" / first["audio_path"]).is_file()
    assert {"id", "gender", "emotion", "bg_category", "question", "expected_answer", "snr_db"} <= set(first["sequence"][0])
    assert first["target_index"] == first["reasonaudio"]["target_segment"] - 1
    assert main(["compose", "import-study", str(tmp_path / "study"), "--out", str(tmp_path / "back")]) == 0
    for name in ("metadata.jsonl", "manifest.json"):
        assert (tmp_path / "back" / name).read_bytes() == (env_set / "set" / name).read_bytes()
    _, back_rows = read_dataset(tmp_path / "back")
    for r in back_rows:
        assert (tmp_path / "back" / r["audio"]).read_bytes() == (env_set / "set" / r["audio"]).read_bytes()
    a = score_dataset(env_set / "set", env_set / "outputs.jsonl", scoring="study", prompts="study")
    b = score_dataset(tmp_path / "back", env_set / "outputs.jsonl", scoring="study", prompts="study")
    assert a["_samples"] == b["_samples"]


def test_import_study_layout_and_predictions(env_set, tmp_path):
    """A set in the study's own layout (no reasonaudio copies) and its per-task prediction files."""
    main(["compose", "export", str(env_set / "set"), "--to", "study", str(tmp_path / "x")])
    plain = tmp_path / "plain"
    shutil.copytree(tmp_path / "x" / "audios", plain / "audios")
    rows = [json.loads(x) for x in (tmp_path / "x" / "metadata.jsonl").read_text().splitlines()]
    (plain / "metadata.jsonl").write_text("".join(json.dumps({k: v for k, v in r.items() if k != "reasonaudio"}) + "\n"
                                                  for r in rows))
    outs = _outputs(read_dataset(env_set / "set")[1])
    pred = tmp_path / "qwen25_omni_env_math_concat_snr_10_env_math_select.jsonl"
    pred.write_text("".join(json.dumps({"concat_id": o["id"], "prediction_raw": o["output"],
                                        "llm_extracted_answers": ["0"], "llm_extraction_successful": [True]}) + "\n"
                            for o in outs if o["layer"] == "compositional"))
    seg = tmp_path / "qwen25_omni_env_math_concat_snr_10_env_seg_idx_select.jsonl"
    seg.write_text("".join(json.dumps({"concat_id": o["id"], "prediction_raw": o["output"], "flip_target": False}) + "\n"
                           for o in outs if o["layer"] == "selection"))
    assert main(["compose", "import-study", str(plain), "--out", str(tmp_path / "imp"),
                 "--predictions", str(pred), str(seg)]) == 0
    manifest, imported = read_dataset(tmp_path / "imp")
    original = read_dataset(env_set / "set")[1]
    assert manifest["origin"] == "study" and manifest["prompts"] == "study"
    assert [r["target_segment"] for r in imported] == [r["target_segment"] for r in original]
    assert [[s["cue_value"] for s in r["segments"]] for r in imported] == \
        [[study_label("environment", s["cue_value"]) for s in r["segments"]] for r in original]
    converted = [json.loads(x) for x in (tmp_path / "imp" / "study_outputs.jsonl").read_text().splitlines()]
    assert len(converted) == 2 * N and {c["layer"] for c in converted} == {"selection", "compositional"}
    res = score_dataset(tmp_path / "imp", tmp_path / "imp" / "study_outputs.jsonl", scoring="study")
    assert res["parsers"] == ["strict", "lenient", "judge"]
    assert res["layers"]["selection"]["strict"]["all"]["accuracy"] == 100.0
    assert res["layers"]["compositional"]["strict"]["all"]["accuracy"] == 100.0
    golds = [r["segments"][r["target_segment"] - 1]["answers"][0] for r in imported]
    assert res["layers"]["compositional"]["judge"]["all"]["accuracy"] == 100.0 * golds.count("0") / len(golds)


def test_import_errors(tmp_path):
    with pytest.raises(UserError, match="has no metadata.jsonl"):
        import_study(tmp_path, tmp_path / "o")
    (tmp_path / "metadata.jsonl").write_text(json.dumps({"concat_id": "a", "audio_path": "a.wav", "cue_type": "emotion",
                                                         "sequence": [{}, {}]}) + "\n")
    with pytest.raises(UserError, match="pass --cue gender or --cue emotion"):
        import_study(tmp_path, tmp_path / "o")
    (tmp_path / "metadata.jsonl").write_text(json.dumps({"concat_id": "a", "audio_path": "a.wav", "sequence": [{}]}) + "\n")
    with pytest.raises(UserError, match=r"metadata.jsonl:1: 'sequence' must list exactly two"):
        import_study(tmp_path, tmp_path / "o", cue="gender")


def test_environment_transcription_target_is_the_studys_draw():
    srow = {"concat_id": "bgnoise_math_000007", "target_index": 0, "sequence": [{"q": 1}, {"q": 2}]}
    drawn = srow["sequence"].index(random.Random("bgnoise_math_000007").choice(srow["sequence"]))
    assert _target_index(srow, "environment", "asr") == drawn
    assert _target_index(srow, "environment", "math") == 0
    assert _target_index(srow, "gender", "asr") == 0


def test_empty_tag_is_not_format_compliant(env_set):
    rows = read_dataset(env_set / "set")[1]
    outs = [{"id": r["id"], "layer": "compositional", "output": "<ans></ans>"} for r in rows]
    for mode in ("robust", "study"):
        res = score_dataset(env_set / "set", outs, scoring=mode)
        assert res["format_compliance"]["compositional"]["ans"] == 0.0
        assert res["layers"]["compositional"]["strict"]["all"]["accuracy"] == 0.0


def test_prediction_file_names():
    from pathlib import Path

    from reasonaudio.compose.convert import _layer_of

    assert _layer_of(Path("qwen25_omni_env_math_concat_snr_10_env_math_select_cot.jsonl"), "environment") == \
        "compositional_cot"
    assert _layer_of(Path("m_env_math_concat_snr_0_math_dual_base.llm_extracted.jsonl"), "environment") == "atomic"
    assert _layer_of(Path("m_emo3way_math_concat_gender_seg_idx_select.jsonl"), "gender") == "selection"
    assert _layer_of(Path("m_emo3way_math_concat_emo_dual_base.jsonl"), "emotion") == "recognition"
    with pytest.raises(UserError, match="cues emotion, this set's cue is gender"):
        _layer_of(Path("m_emo3way_math_concat_emo_dual_base.jsonl"), "gender")
    with pytest.raises(UserError, match="cannot tell the study task"):
        _layer_of(Path("predictions.jsonl"), "gender")
