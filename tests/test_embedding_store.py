"""Embedding stores: written batch by batch, resumed after an interruption to the same bytes, read
memory-mapped by `precomputed:`, refused when incomplete or begun for something else."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from reasonaudio.cli import main
from reasonaudio.errors import UserError
from reasonaudio.evaluation.run import evaluate
from reasonaudio.io.benchmark import load_benchmark
from reasonaudio.io.embedding_store import open_store, write_store
from reasonaudio.retrieval import load_model
from reasonaudio.retrieval.adapters.precomputed import PrecomputedModel

IDS = [f"c{i:03d}" for i in range(103)]
DATA = np.random.default_rng(0).standard_normal((103, 6)).astype(np.float32)


def encode(a: int, b: int) -> np.ndarray:
    return DATA[a:b]


def test_store_round_trip_is_memory_mapped(tmp_path: Path) -> None:
    assert write_store(tmp_path / "s", IDS, encode, source="m", batch_rows=10) == 103
    ids, vectors = open_store(tmp_path / "s")
    assert ids == IDS
    assert isinstance(vectors, np.memmap) and not vectors.flags.writeable
    np.testing.assert_array_equal(vectors, DATA)


def test_a_store_cut_short_is_refused_with_both_sizes(tmp_path: Path) -> None:
    write_store(tmp_path / "s", IDS, encode, source="m", batch_rows=10)
    npy = tmp_path / "s" / "embeddings.npy"
    full = npy.stat().st_size
    with open(npy, "r+b") as fh:
        fh.truncate(full - 24)
    with pytest.raises(UserError, match=rf"embeddings.npy is cut short: {full - 24:,} bytes, .*\(103, 6\) float32.* needs {full:,}"):
        open_store(tmp_path / "s")


def test_an_interrupted_store_resumes_where_it_stopped(tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []

    def failing(a: int, b: int) -> np.ndarray:
        calls.append((a, b))
        if a >= 40:
            raise KeyboardInterrupt
        return encode(a, b)

    with pytest.raises(KeyboardInterrupt):
        write_store(tmp_path / "s", IDS, failing, source="m", batch_rows=20)
    with pytest.raises(UserError, match="incomplete embedding store \\(40 of 103 rows\\)"):
        open_store(tmp_path / "s")
    calls.clear()
    resumed = []
    assert write_store(tmp_path / "s", IDS, lambda a, b: (resumed.append(a), encode(a, b))[1], source="m", batch_rows=20) == 63
    assert resumed == [40, 60, 80, 100]  # only the rows not yet on disk
    write_store(tmp_path / "whole", IDS, encode, source="m", batch_rows=20)
    for name in ("embeddings.npy", "ids.parquet", "state.json"):
        assert (tmp_path / "s" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()
    assert write_store(tmp_path / "s", IDS, encode, source="m") == 0  # complete: nothing to do


def test_a_store_for_other_ids_or_another_model_is_refused(tmp_path: Path) -> None:
    write_store(tmp_path / "s", IDS, encode, source="m", batch_rows=50)
    with pytest.raises(UserError, match="other ids"):
        write_store(tmp_path / "s", IDS[:-1], encode, source="m")
    with pytest.raises(UserError, match="begun by 'm', not 'n'"):
        write_store(tmp_path / "s", IDS, encode, source="n")
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "x").write_text("x")
    with pytest.raises(UserError, match="not an embedding store"):
        write_store(tmp_path / "f", IDS, encode, source="m")
    with pytest.raises(UserError, match="dimension 3, the store 6"):
        write_store(tmp_path / "t", IDS, lambda a, b: DATA[a:b, : 6 if a == 0 else 3], source="m", batch_rows=50)
    with pytest.raises(UserError, match="NaN"):
        write_store(tmp_path / "u", IDS, lambda a, b: np.full((b - a, 2), np.nan, np.float32), source="m")


def test_embed_then_precomputed_equals_the_model(evalfixture, tmp_path: Path, capsys) -> None:
    bench = evalfixture.write_fixture(tmp_path / "bench")
    assert main(["embed", str(bench), "--model", "random:4", "--out", str(tmp_path / "emb"), "--rows", "3", "--quiet"]) == 0
    assert "precomputed:" in capsys.readouterr().out
    model = PrecomputedModel(tmp_path / "emb" / "queries", tmp_path / "emb" / "clips")
    assert isinstance(model.clips[1], np.memmap)
    b = load_benchmark(bench)
    direct = evaluate(b, load_model("random:4"), n_boot=0, progress=False)
    stored = evaluate(b, model, n_boot=0, progress=False)
    assert direct.per_query.equals(stored.per_query) and direct.rankings.equals(stored.rankings)
