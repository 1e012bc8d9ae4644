"""benches/paper_models.py: the study's table layout, weights checked locally, published figures beside."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import evalfixture

ROOT = Path(__file__).resolve().parents[1]


def _bench_module():
    spec = importlib.util.spec_from_file_location("paper_models", ROOT / "benches" / "paper_models.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["paper_models"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_absent_weights_are_listed_and_baselines_measured(tmp_path: Path, capsys) -> None:
    paper = _bench_module()
    bench = evalfixture.write_fixture(tmp_path / "bench", with_beir=False)
    out = tmp_path / "out"
    assert paper.main([str(bench), "--weights", str(tmp_path / "no-weights"), "--out", str(out),
                       "--baselines", "--bootstrap", "0"]) == 0
    table = (out / "paper_models.md").read_text()
    for title in ("OmniEmbed-7B", "e5-omni-7B", "LCO-Embedding-Omni-3B", "Wav2CLIP", "AudioCLIP", "Step-Audio → BGE-M3"):
        assert title in table
    assert "weights absent: " + str(tmp_path / "no-weights" / "OmniEmbed-v0.1") in table
    assert "20.1 (best)" in table and "< 4.2" in table and "< 10" in table
    assert "negation 27.5, duration 50.8" in table
    data = json.loads((out / "paper_models.json").read_text())
    measured = {r["name"]: r["measured"] for r in data["runs"] if r["measured"]}
    assert set(measured) == {"oracle", "structured", "random"}
    assert measured["oracle"]["acc@1"]["Avg"] == 1.0
    assert "| baseline | oracle (qrels) | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 | 100.0 |  | measured |" in table
    assert (out / "runs" / "oracle" / "results.json").is_file()


def test_dry_run_prints_the_specs_with_local_paths(tmp_path: Path, capsys) -> None:
    paper = _bench_module()
    weights = tmp_path / "w"
    (weights / "LCO-Embedding-Omni-7B").mkdir(parents=True)
    assert paper.main([str(tmp_path), "--weights", str(weights), "--out", str(tmp_path / "o"), "--dry-run",
                       "--only", "lco-omni-7b", "--only", "e5-omni-7b"]) == 0
    printed = capsys.readouterr().out
    assert f"lco-omni:{weights / 'LCO-Embedding-Omni-7B'}" in printed
    assert "lco-omni-7b          ready" in printed
    assert f"e5-omni:{weights / 'e5-omni-7B'},processor={weights / 'Qwen2.5-Omni-7B'}" in printed
    assert not (tmp_path / "o").exists()


def test_two_stage_runs_sharing_a_captioner_caption_once(tmp_path: Path, monkeypatch) -> None:
    paper = _bench_module()
    runs = (paper.Run("first", "two-stage", "oracle → BM25", "two-stage:oracle+bm25", (), "oracle"),
            paper.Run("second", "two-stage", "oracle → BM25 again", "two-stage:oracle+bm25", (), "oracle"))
    monkeypatch.setattr(paper, "RUNS", runs)
    bench = evalfixture.write_fixture(tmp_path / "bench", with_beir=False)
    out = tmp_path / "out"
    assert paper.main([str(bench), "--out", str(out), "--bootstrap", "0"]) == 0
    first, second = (json.loads((out / "runs" / n / "results.json").read_text()) for n in ("first", "second"))
    assert first["model"].startswith("two-stage:oracle+")
    # the second run ranks the first run's captions.parquet instead of captioning again
    assert second["model"] == f"two-stage:captions={out / 'runs' / 'first' / 'captions.parquet'}+bm25"
    assert first["summary"] == second["summary"]
