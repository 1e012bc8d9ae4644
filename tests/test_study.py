"""`reasonaudio study`: the study's rows by Hub id, its table beside the published figures, resumable.

Runs offline against a Hugging Face cache the test fills: a tiny Qwen2.5-Omni thinker stands in for
LCO-Embedding-Omni-7B at the registry's pinned commit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("huggingface_hub")

from reasonaudio.cli import main  # noqa: E402
from reasonaudio.evaluation.study import ROWS, published  # noqa: E402

LCO = "LCO-Embedding/LCO-Embedding-Omni-7B"
LCO_COMMIT = "3d38f58aae1253a4443b1270b0767f1e533936cf"


@pytest.fixture()
def hfcache():
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("reasonaudio_test_support.hfcache", Path(__file__).parent / "support" / "hfcache.py")
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rows_and_published_figures_are_declared() -> None:
    names = [r.name for r in ROWS]
    assert len(names) == len(set(names))
    assert {"structured", "oracle-bm25", "detect", "random"} <= {r.name for r in ROWS if r.reference}
    figures = published()
    assert "Zhang et al., 2026" in figures["source"]
    assert figures["rows"]["omniembed-7b"]["acc@1"]["Avg"] == 20.1
    assert set(figures["rows"]) <= set(names)


def test_study_end_to_end_with_resume(hfcache, evalfixture, omni_tiny, tmp_path, monkeypatch, capsys) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    cache = tmp_path / "hf"
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    hfcache.put(cache, LCO, omni_tiny.save_tiny_qwen_omni_thinker(tmp_path / "omni"), commit=LCO_COMMIT, ref=None)
    bench = evalfixture.write_fixture(tmp_path / "bench", with_beir=False)
    out = tmp_path / "study"
    common = ["--out", str(out), "--models", "lco-omni-7b,omniembed-7b,random,structured", "--bootstrap", "0",
              "--device", "cpu", "--quiet"]

    # the dry run lists ids, revisions, memory and cache state, and runs nothing
    assert main(["study", str(bench), *common, "--dry-run"]) == 0
    listed = capsys.readouterr().out
    assert f"{LCO}  revision {LCO_COMMIT}" in listed and "  cached" in listed and "not cached" in listed
    assert "GPU memory: ~17 GB" in listed and not out.exists()

    # interrupted while `structured` runs: the finished row stays, nothing of the interrupted one is kept
    import reasonaudio.evaluation.run as run_module

    real = run_module.evaluate

    def interrupt_on_structured(benchmark, model, **kw):
        if model.spec == "structured":
            raise KeyboardInterrupt
        return real(benchmark, model, **kw)

    monkeypatch.setattr(run_module, "evaluate", interrupt_on_structured)
    assert main(["study", str(bench), *common]) == 130
    assert (out / "runs" / "lco-omni-7b" / "results.json").is_file()
    assert not (out / "runs" / "structured").exists()
    kept = (out / "runs" / "lco-omni-7b" / "results.json").stat().st_mtime_ns

    monkeypatch.setattr(run_module, "evaluate", real)
    capsys.readouterr()
    assert main(["study", str(bench), *common]) == 0
    printed = capsys.readouterr().out
    assert "lco-omni-7b: kept (finished earlier)" in printed and "study: structured: structured" in printed
    assert (out / "runs" / "lco-omni-7b" / "results.json").stat().st_mtime_ns == kept
    table = json.loads((out / "study.json").read_text())
    rows = {r["name"]: r for r in table["rows"]}
    assert rows["structured"]["status"] == "measured" and rows["structured"]["measured"]["acc@1"]["Avg"] > 0
    assert rows["lco-omni-7b"]["weights"][0]["commit"] == LCO_COMMIT
    # OmniEmbed is not in the cache: its row fails in one line naming the command that fetches it
    assert rows["omniembed-7b"]["status"].startswith("failed: Tevatron/OmniEmbed-v0.1@fa8be315")
    assert "reasonaudio models --download" in rows["omniembed-7b"]["status"]
    md = (out / "study.md").read_text()
    assert "| negation Acc@1 | negation nDCG@10 |" in md and "| Avg Acc@1 | Avg nDCG@10 |" in md
    assert "– (20.1)" in md  # the study's figure beside a row we could not measure
    assert "## Two-option test" in md and (out / "study.png").stat().st_size > 0
