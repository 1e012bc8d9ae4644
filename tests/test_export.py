"""`reasonaudio export --to hf`: a folder `datasets.load_dataset` reads offline, that round-trips
through `reasonaudio eval` with identical counts and metrics."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from reasonaudio.errors import UserError
from reasonaudio.io.export import export_hf
from reasonaudio.io.hub import readme_configs

TESTS = Path(__file__).parent


@pytest.fixture(scope="module")
def bench(evalfixture, tmp_path_factory) -> Path:
    return evalfixture.write_fixture(tmp_path_factory.mktemp("bench") / "bench")


@pytest.fixture(scope="module")
def exported(bench: Path, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("hf") / "bench_hf"
    # a small shard size so the corpus is sharded as a large one would be
    export_hf(bench, out, shard_bytes=40_000)
    return out


def _digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}


def test_layout_card_and_determinism(bench: Path, exported: Path, tmp_path: Path):
    shards = sorted(p.name for p in (exported / "corpus").iterdir())
    assert len(shards) > 1 and shards[0] == f"test-00000-of-{len(shards):05d}.parquet"
    configs = readme_configs(exported)
    for name in ("corpus", "queries", "qrels", "default", "negation-corpus", "negation-queries", "negation-qrels",
                 "negation-mc-top_ranked", "mix-mc-corpus"):
        assert name in configs, name
    # sub-task corpus configs reuse the corpus shards: the audio is stored once
    assert configs["negation-corpus"]["test"] == configs["corpus"]["test"]
    card = (exported / "README.md").read_text()
    assert "license: cc0-1.0" in card and "## Tasks" in card and '"n_clips": 8' in card
    assert json.loads((exported / "reasonaudio.json").read_text())["seed"] == 0
    # same benchmark, same bytes
    again = tmp_path / "again"
    export_hf(bench, again, shard_bytes=40_000)
    assert _digest(again) == _digest(exported)


def test_export_cli_and_atomic_failure(evalfixture, bench: Path, tmp_path: Path):
    out = tmp_path / "cli_hf"
    proc = subprocess.run([sys.executable, "-m", "reasonaudio", "export", str(bench), "--to", "hf", "--out", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "8 clips in 1 shard(s), 10 queries" in proc.stdout
    # a missing audio file: one-line error, no output folder, no temp folder left behind
    broken = tmp_path / "broken"
    evalfixture.write_fixture(broken)
    (broken / "audio" / "clip_003.wav").unlink()
    target = tmp_path / "broken_hf"
    proc = subprocess.run([sys.executable, "-m", "reasonaudio", "export", str(broken), "--out", str(target)],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "clip_003.wav" in proc.stderr and proc.stderr.count("\n") == 1
    assert not target.exists() and not any(p.name.startswith(".broken_hf") for p in tmp_path.iterdir())
    with pytest.raises(UserError, match="inside the benchmark"):
        export_hf(bench, bench / "hf")


LOAD_SCRIPT = r"""
import json, sys
import numpy as np, soundfile as sf
from datasets import load_dataset
root, bench = sys.argv[1], sys.argv[2]
out = {}
corpus = load_dataset(root, "corpus", split="test")
queries = load_dataset(root, "queries", split="test")
qrels = load_dataset(root, "qrels", split="test")
ranked = load_dataset(root, "negation-mc-top_ranked", split="test")
out["features"] = {k: type(v).__name__ for k, v in corpus.features.items()}
out["rows"] = [len(corpus), len(queries), len(qrels), len(ranked)]
out["ids"] = list(corpus["id"])
out["query_columns"] = queries.column_names
out["qrels_columns"] = qrels.column_names
out["ranked"] = ranked[0]
worst = 0.0
for row in corpus:
    a = row["audio"]
    got = np.asarray(a["array"], dtype=np.float32).reshape(-1)
    want, sr = sf.read(f"{bench}/audio/{row['id']}.wav", dtype="float32")
    assert a["sampling_rate"] == sr
    worst = max(worst, float(np.max(np.abs(got - want))))
out["max_abs_diff"] = worst
# what datasets itself writes (push_to_hub's parquet: its features metadata, Audio as a struct)
rewritten = sys.argv[3]
for name, ds in (("corpus", corpus), ("queries", queries), ("qrels", qrels)):
    ds.to_parquet(f"{rewritten}/{name}/test-00000-of-00001.parquet")
print(json.dumps(out))
"""


def test_load_dataset_reads_every_config_offline_with_audio(evalfixture, bench: Path, exported: Path, tmp_path: Path):
    pytest.importorskip("datasets", reason="needs the hf extra (datasets)")
    pytest.importorskip("torchcodec", reason="decoding Audio with datasets >= 4 needs torchcodec")
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf_home")}
    rewritten = tmp_path / "rewritten"
    proc = subprocess.run([sys.executable, "-c", LOAD_SCRIPT, str(exported), str(bench), str(rewritten)],
                          capture_output=True, text=True, env=env)
    if proc.returncode != 0 and ("libtorchcodec" in proc.stderr or "FFmpeg" in proc.stderr):
        pytest.skip(f"torchcodec cannot load the FFmpeg libraries (install Debian's ffmpeg): {proc.stderr.splitlines()[-1]}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["features"]["audio"] == "Audio"
    assert got["rows"] == [8, 10, 12, 2]
    assert got["ids"] == list(evalfixture.CLIPS)
    assert got["query_columns"] == ["id", "text", "task", "logic"]
    assert got["qrels_columns"] == ["query-id", "corpus-id", "score"]
    assert got["ranked"] == {"query-id": "q_neg_0", "corpus-ids": ["clip_000", "clip_006"]}
    assert got["max_abs_diff"] == 0.0  # the WAV bytes themselves are embedded
    # the folder datasets wrote evaluates exactly like the benchmark it came from
    spec = _embeddings(bench, tmp_path / "emb")
    per_query = {}
    for label, source in (("bench", bench), ("rewritten", rewritten)):
        out = tmp_path / f"run_{label}"
        proc = subprocess.run(
            [sys.executable, "-m", "reasonaudio", "eval", str(source), "--model", spec, "--out", str(out),
             "--quiet", "--no-figures", "--bootstrap", "0"],
            capture_output=True, text=True,
        )
        assert proc.returncode == 0, proc.stderr
        per_query[label] = pl.read_parquet(out / "per_query.parquet")
    assert per_query["bench"].height == 10 and per_query["bench"].equals(per_query["rewritten"])


def _embeddings(bench: Path, folder: Path) -> str:
    """Seeded embeddings keyed by id (so any loader's row order works)."""
    rng = np.random.default_rng(7)
    qids = pl.read_parquet(bench / "queries.parquet")["query_id"].to_list()
    cids = pl.read_parquet(bench / "clips.parquet")["clip_id"].to_list()
    folder.mkdir(parents=True, exist_ok=True)
    np.savez(folder / "q.npz", ids=np.array(qids), embeddings=rng.standard_normal((len(qids), 16)).astype(np.float32))
    np.savez(folder / "c.npz", ids=np.array(cids), embeddings=rng.standard_normal((len(cids), 16)).astype(np.float32))
    return f"precomputed:{folder / 'q.npz'},{folder / 'c.npz'}"


def test_round_trip_through_eval_gives_identical_metrics(evalfixture, bench: Path, exported: Path, tmp_path: Path):
    spec = _embeddings(bench, tmp_path / "emb")
    runs = {}
    for label, source in (("bench", bench), ("hf", exported)):
        out = tmp_path / f"run_{label}"
        proc = subprocess.run(
            [sys.executable, "-m", "reasonaudio", "eval", str(source), "--model", spec, "--out", str(out),
             "--quiet", "--no-figures", "--bootstrap", "200"],
            capture_output=True, text=True,
        )
        assert proc.returncode == 0, proc.stderr
        runs[label] = out
    from reasonaudio.io.hub import load_hub

    loaded = load_hub(exported)
    assert loaded.sample_rate == evalfixture.SAMPLE_RATE  # from the Audio feature
    assert loaded.manifest["params"]["subsets"] == []  # the top-level configs, tasks from the task column
    assert loaded.manifest["params"]["benchmark_manifest"]["seed"] == 0
    a = pl.read_parquet(runs["bench"] / "per_query.parquet")
    b = pl.read_parquet(runs["hf"] / "per_query.parquet")
    assert a.height == b.height == 10
    assert a.equals(b)
    for name in ("two_option.parquet", "rankings.parquet"):
        assert pl.read_parquet(runs["bench"] / name).equals(pl.read_parquet(runs["hf"] / name)), name
    ra, rb = (json.loads((runs[k] / "results.json").read_text()) for k in ("bench", "hf"))
    for key in ("summary", "two_option", "n_clips", "n_queries", "task_order"):
        assert ra[key] == rb[key], key
    assert (ra["n_clips"], ra["n_queries"]) == (8, 10)
