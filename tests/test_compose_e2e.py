"""A small set end to end: build -> prompts -> scripted command model -> score -> report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from compose_fakes import ToneLibrary, ToneSource
from reasonaudio.cli import main
from reasonaudio.compose.build import ComposeConfig, build_set
from reasonaudio.compose.runner import CommandModel, run
from reasonaudio.compose.score import score_dataset

SR = 16000
HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("e2e")
    build_set(tmp / "set", ComposeConfig(cue="environment", task="math", n=8, snrs=(0.0, 20.0), sample_rate=SR, seed=5),
          source=ToneSource(SR), library=ToneLibrary(SR))
    assert main(["compose", "prompts", str(tmp / "set"), "--out", str(tmp / "prompts.jsonl")]) == 0
    model = CommandModel(f"{sys.executable} {HERE / 'compose_fake_model.py'}")
    assert run(tmp / "set", model, tmp / "outputs.jsonl", prompts=tmp / "prompts.jsonl") == 40
    assert main(["compose", "score", str(tmp / "set"), "--outputs", str(tmp / "outputs.jsonl"),
                 "--out", str(tmp / "results")]) == 0
    return tmp, json.loads((tmp / "results" / "results.json").read_text())["datasets"][0]


def test_scores_match_the_scripted_behaviour(scored):
    _, res = scored
    L = res["layers"]
    for parser in ("strict", "lenient"):
        assert L["recognition"][parser]["all"]["accuracy"] == 100.0
        assert L["atomic"][parser]["all"]["accuracy"] == 50.0
        assert L["atomic"][parser]["target_only"]["accuracy"] == 50.0
        assert L["compositional_cot"][parser]["all"]["error_classes"]["distractor"] == 100.0
    assert L["selection"]["strict"]["all"]["accuracy"] == 0.0
    assert L["selection"]["lenient"]["all"]["accuracy"] == 50.0
    pos = L["selection"]["lenient"]["all"]["position"]
    assert pos["p_choose_first"] == 1.0 and pos["balanced_accuracy"] == 0.5 and pos["d_prime"] == pytest.approx(0)
    assert L["compositional"]["strict"]["all"]["accuracy"] == 0.0
    assert L["compositional"]["lenient"]["all"]["accuracy"] == 100.0
    assert res["gap"]["compositional"]["strict"]["all"]["change_pp"] == -50.0
    assert res["gap"]["compositional"]["lenient"]["all"]["change_pp"] == 50.0
    assert res["format_compliance"]["selection"]["segment"] == 0.0
    assert res["format_compliance"]["compositional"]["ans"] == 100.0
    assert res["parser_gap_pp"]["compositional"]["all"] == 100.0
    assert res["chance"]["recognition"] == pytest.approx(100 / 3)
    snrs = {json.loads(x)["snr_db"] for x in (scored[0] / "set" / "metadata.jsonl").read_text().splitlines()}
    assert set(L["selection"]["lenient"]) == {"all", "by_target_value"} | {f"snr={s:g}" for s in snrs}


def test_report_files(scored):
    tmp, _ = scored
    report = (tmp / "results" / "report.md").read_text()
    assert "| environment 0 dB / math |" in report and "Position bias" in report
    for name in ("recognition_selection.png", "atomic_compositional.png", "position_bias.png"):
        assert (tmp / "results" / name).stat().st_size > 1000


def test_score_rejects_bad_outputs(tmp_path, scored):
    tmp, _ = scored
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "nope", "layer": "selection", "output": "1"}\n')
    from reasonaudio.errors import UserError
    with pytest.raises(UserError, match=r"bad.jsonl:1: id 'nope' is not a sample"):
        score_dataset(tmp / "set", bad)
    bad.write_text('{"id": "s00000", "output": "1"}\n')
    with pytest.raises(UserError, match="missing field"):
        score_dataset(tmp / "set", bad)


def test_judge_parser_is_scored(scored):
    tmp, _ = scored
    # a judge that always extracts '1' for choices and nothing else
    res = score_dataset(tmp / "set", tmp / "outputs.jsonl",
                        judge=lambda output, what, options: "1" if options == ["1", "2"] else None)
    assert res["parsers"] == ["strict", "lenient", "judge"]
    assert res["layers"]["selection"]["judge"]["all"]["accuracy"] == 50.0
    assert res["layers"]["compositional"]["judge"]["all"]["accuracy"] == 0.0
