"""reasonaudio.evaluation.mteb: `mteb.evaluate` offline on an exported benchmark agrees with `reasonaudio eval`.

A tiny deterministic model is built here: audio -> log energies in 24 frequency bands, text ->
sum of hashed word vectors. mteb runs it through its own loader (the exported folder) and its own
decoding (datasets' Audio feature, torchcodec); the same model's vectors, computed from the WAV
files with soundfile, go to `reasonaudio eval` as `precomputed:` embeddings. Per task, mteb's
hit_rate_at_1 / ndcg_at_10 must equal reasonaudio's Acc@1 / nDCG@10 (mteb rounds to 5 decimals),
the two-option tasks' hit_rate_at_1 the two-option accuracy, and the rankings must agree.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import soundfile as sf


# offline, and datasets' cache out of $HOME: both are read when datasets is first imported
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
if "HF_DATASETS_CACHE" not in os.environ:
    _cache = tempfile.mkdtemp(prefix="reasonaudio-hf-cache-")
    os.environ["HF_DATASETS_CACHE"] = _cache
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)  # removed when the test run ends

mteb = pytest.importorskip("mteb", reason="needs the hf extra (mteb >= 2)")
pytest.importorskip("datasets", reason="needs the hf extra (datasets)")
pytest.importorskip("torchcodec", reason="mteb decodes the Audio column with datasets >= 4, which needs torchcodec")

DIM = 24


def audio_vector(samples, sr: int) -> np.ndarray:
    x = np.asarray(samples, dtype=np.float64)
    if x.ndim > 1:
        x = x.mean(axis=0)
    spec = np.abs(np.fft.rfft(x)) ** 2
    freqs = np.fft.rfftfreq(len(x), 1 / sr)
    edges = np.geomspace(50, sr / 2, DIM + 1)
    bands = np.array([spec[(freqs >= lo) & (freqs < hi)].sum() for lo, hi in zip(edges[:-1], edges[1:])])
    return np.log1p(bands * 1e-3).astype(np.float32)


def text_vector(text: str) -> np.ndarray:
    v = np.zeros(DIM)
    for word in text.lower().split():
        seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
        v += np.random.default_rng(seed).standard_normal(DIM)
    return v.astype(np.float32)


class TinyModel:
    """An mteb encoder (EncoderProtocol) for text queries and audio documents."""

    def __init__(self):
        from mteb.models.model_meta import ModelMeta

        self.mteb_model_meta = ModelMeta.create_empty(
            overwrites={"name": "reasonaudio-test/tiny-bands", "revision": "1", "modalities": ["text", "audio"]}
        )
        self.audio_seen = 0

    def encode(self, inputs, *, task_metadata, hf_split, hf_subset, prompt_type=None, **kwargs):
        out = []
        for batch in inputs:
            if "audio" in batch:
                for audio in batch["audio"]:
                    out.append(audio_vector(audio["array"], audio["sampling_rate"]))
                    self.audio_seen += 1
            else:
                out.extend(text_vector(t) for t in batch["text"])
        return np.stack(out)

    @staticmethod
    def _unit(x):
        import torch

        x = torch.as_tensor(np.asarray(x), dtype=torch.float32)
        return x / x.norm(dim=-1, keepdim=True)

    def similarity(self, a, b):
        return self._unit(a) @ self._unit(b).T

    def similarity_pairwise(self, a, b):
        return (self._unit(a) * self._unit(b)).sum(-1)


@pytest.fixture(scope="module")
def setup(evalfixture, tmp_path_factory):
    from reasonaudio.io.export import export_hf

    tmp = tmp_path_factory.mktemp("mteb")
    bench = evalfixture.write_fixture(tmp / "bench")
    exported = tmp / "bench_hf"
    export_hf(bench, exported, shard_bytes=60_000)
    queries = pl.read_parquet(bench / "queries.parquet")
    clips = pl.read_parquet(bench / "clips.parquet")
    qvec = np.stack([text_vector(t) for t in queries["text"]])
    cvec = []
    for path in clips["path"]:
        x, sr = sf.read(bench / path, dtype="float32")
        cvec.append(audio_vector(x, sr))
    np.savez(tmp / "q.npz", ids=np.array(queries["query_id"].to_list()), embeddings=qvec)
    np.savez(tmp / "c.npz", ids=np.array(clips["clip_id"].to_list()), embeddings=np.stack(cvec))
    run = tmp / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "reasonaudio", "eval", str(bench), "--model", f"precomputed:{tmp / 'q.npz'},{tmp / 'c.npz'}",
         "--out", str(run), "--quiet", "--no-figures", "--bootstrap", "0"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return {"tmp": tmp, "bench": bench, "exported": exported, "results": json.loads((run / "results.json").read_text()),
            "rankings": pl.read_parquet(run / "rankings.parquet")}


def _run_mteb(source: Path, predictions: Path):
    from reasonaudio.evaluation.mteb import tasks_for

    model = TinyModel()
    result = mteb.evaluate(model, tasks_for(source), cache=None, show_progress_bar=False, prediction_folder=predictions)
    scores = {}
    for task_result in result.task_results:
        for entry in task_result.scores["test"]:
            scores[(task_result.task_name.split("_")[0], entry["hf_subset"])] = entry
    return scores, model


@pytest.mark.parametrize("which", ["exported", "bench"])
def test_mteb_scores_equal_reasonaudio_eval(setup, which):
    source = setup[which]
    scores, model = _run_mteb(source, setup["tmp"] / f"pred_{which}")
    summary, two = setup["results"]["summary"], setup["results"]["two_option"]["accuracy"]
    tasks = [t for t in setup["results"]["task_order"]]
    assert tasks == ["negation", "order", "overlap", "duration", "mix"]
    assert model.audio_seen > 0  # mteb decoded the audio itself
    for task in tasks:
        s = scores[("ReasonAudioT2ARetrieval", task)]
        assert s["main_score"] == s["hit_rate_at_1"]
        assert s["hit_rate_at_1"] == round(summary["acc@1"][task]["mean"], 5), task
        assert s["ndcg_at_10"] == round(summary["ndcg@10"][task]["mean"], 5), task
        mc = scores[("ReasonAudioTwoOption", f"{task}-mc")]
        assert mc["hit_rate_at_1"] == round(two[task]["mean"], 5), task
    # not only the averages: every query's ranked list agrees with reasonaudio's rankings
    files = list((setup["tmp"] / f"pred_{which}").glob("ReasonAudioT2ARetrieval*"))
    assert len(files) == 1
    predictions = json.loads(files[0].read_text())
    ours = setup["rankings"]
    checked = 0
    for task in tasks:
        for qid, docs in predictions[task]["test"].items():
            theirs = [d for d, _ in sorted(docs.items(), key=lambda kv: -kv[1])]
            mine = ours.filter(pl.col("query_id") == qid).sort("rank")["clip_id"].to_list()
            assert theirs == mine, qid
            checked += 1
    assert checked == 10
