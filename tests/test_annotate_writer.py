"""qrels written from a RelevanceCSR a block at a time: the bytes of the whole-frame writer."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from reasonaudio.cli import main
from reasonaudio.errors import UserError
from reasonaudio.io.parquet import row_group_rows
from reasonaudio.relevance import RelevanceCSR, prepare_events, read_events, read_queries, relevance_csr, write_qrels
from reasonaudio.relevance import engine
from reasonaudio.relevance.files import _parquet_row_groups


def _csr(n_queries: int, n_clips: int, density: float, seed: int, series: bool = False) -> RelevanceCSR:
    rng = np.random.default_rng(seed)
    relevant = [np.flatnonzero(rng.random(n_clips) < density * (q % 3)).astype(np.uint32) for q in range(n_queries)]
    indptr = np.concatenate([[0], np.cumsum([len(r) for r in relevant])]).astype(np.uint64)
    ids = [f"clip_{i:07d}" if i % 5 else f"c{i}" for i in range(n_clips)]  # short ids are stored inline, long ones not
    return RelevanceCSR(
        indptr=indptr,
        clip_indices=np.concatenate(relevant) if relevant else np.zeros(0, np.uint32),
        query_ids=[f"query_{q:04d}" for q in range(n_queries)],
        clip_ids=pl.Series("clip_id", ids) if series else ids,
    )


def _written(qrels, path: Path, **kw) -> bytes:
    write_qrels(qrels, path, **kw)
    return path.read_bytes()


@pytest.mark.parametrize("suffix", [".parquet", ".tsv"])
def test_cli_qrels_bytes_are_the_whole_frame_writers(bench: Path, tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"cli{suffix}"
    assert main(["annotate", "--events", str(bench), "--queries", str(bench / "queries.parquet"), "--out", str(out), "-q"]) == 0
    clips = pl.read_parquet(bench / "clips.parquet")["clip_id"].to_list()
    frame = relevance_csr(read_events(bench), read_queries(bench), clip_ids=clips).to_frame()
    assert frame.height > 0
    assert out.read_bytes() == _written(frame, tmp_path / f"whole{suffix}")


@pytest.mark.parametrize("series", [False, True])
def test_blocks_span_several_row_groups(tmp_path: Path, series: bool) -> None:
    csr = _csr(16, 120_000, 0.25, seed=1, series=series)
    assert len(_parquet_row_groups(csr.n_pairs)) >= 3  # several blocks
    whole = csr.to_frame()
    assert pl.concat([csr.pairs_frame(lo, min(lo + 999, csr.n_pairs)) for lo in range(0, csr.n_pairs, 999)]).equals(whole)
    assert _written(csr, tmp_path / "blocks.parquet") == _written(whole, tmp_path / "whole.parquet")
    tsv = _written(whole, tmp_path / "whole.tsv")
    for block_rows in (40_961, 1 << 17, csr.n_pairs, csr.n_pairs + 1):
        assert _written(csr, tmp_path / "blocks.tsv", block_rows=block_rows) == tsv, block_rows


@pytest.mark.parametrize("shape", [(0, 5), (3, 5), (4, 0), (2, 40)])
def test_small_and_empty_qrels(tmp_path: Path, shape: tuple[int, int]) -> None:
    n_queries, n_clips = shape
    csr = _csr(n_queries, n_clips, 0.0 if n_clips == 5 else 0.4, seed=2)
    whole = csr.to_frame()
    for suffix in (".parquet", ".tsv"):
        for block_rows in (1, 2, 3):
            assert _written(csr, tmp_path / f"b{suffix}", block_rows=block_rows) == _written(whole, tmp_path / f"w{suffix}")


def test_row_groups_read_off_the_footer() -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    for n in (0, 1, 170_000, 400_001):
        buffer = io.BytesIO()
        pl.DataFrame({"x": np.arange(n)}).write_parquet(buffer)
        meta = pq.ParquetFile(io.BytesIO(buffer.getvalue())).metadata
        assert row_group_rows(buffer.getvalue()) == [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
        assert _parquet_row_groups(n) == row_group_rows(buffer.getvalue())


def test_clip_ids_as_a_series() -> None:
    events = pl.DataFrame({"clip_id": ["b", "a"], "label": ["x", "y"], "onset_s": [0.0, 1.0], "offset_s": [1.0, 2.0]})
    ids = pl.Series("whatever", ["a", "b", "c"])
    encoded = prepare_events(events, clip_ids=ids)
    assert isinstance(encoded.clip_ids, pl.Series) and encoded.clip_ids.to_list() == ["a", "b", "c"]
    assert encoded.clip.tolist() == [1, 0]
    assert prepare_events(events, clip_ids=["a", "b", "c"]).clip_ids == ["a", "b", "c"]  # a list stays a list
    for given in (["a", "b", "a", "b"], pl.Series(["a", "b", "a", "b"])):
        with pytest.raises(UserError, match=r"^clip_id: id 'a' is listed twice$"):
            prepare_events(events, clip_ids=given)
    for given in (["b"], pl.Series(["b"])):
        with pytest.raises(UserError, match=r"^events row 1: clip_id 'a' is not in the given clip list$"):
            prepare_events(events, clip_ids=given)


@pytest.mark.parametrize("step", [1, 3, 1 << 20])
def test_checks_step_through_rows_alike(monkeypatch: pytest.MonkeyPatch, step: int) -> None:
    monkeypatch.setattr(engine, "_CHECK_ROWS", step)
    n = 10
    frame = pl.DataFrame({
        "clip_id": [f"c{i}" for i in range(n)], "label": ["x"] * n,
        "onset_sample": [0] * n, "offset_sample": [100 * (i + 1) for i in range(n)],
        "onset_s": [0.0] * n, "offset_s": [(i + 1) / 100 for i in range(n)],
    })
    assert prepare_events(frame).rate == 10_000.0
    unusable = frame.with_columns(pl.when(pl.int_range(n) < 4).then(float("nan")).otherwise(pl.col("offset_s")).alias("offset_s"))
    with pytest.raises(UserError, match=r"^events row 0: offset_sample 100 / offset_s nan disagrees with the sample rate 10000 Hz"):
        prepare_events(unusable)  # the rate comes from the rows with a positive offset_s
    wrong_rate = frame.with_columns(pl.when(pl.int_range(n) == 7).then(9.0).otherwise(pl.col("offset_s")).alias("offset_s"))
    with pytest.raises(UserError, match=r"^events row 7: offset_sample 800 / offset_s 9.0 disagrees with the sample rate 10000 Hz"):
        prepare_events(wrong_rate)
    with pytest.raises(UserError, match=r"^events row 7: offset_sample 800 / offset_s 9.0 is not the sample rate 10000"):
        prepare_events(wrong_rate, sample_rate=10_000)
    backwards = frame.with_columns(pl.when(pl.int_range(n) >= 6).then(5000).otherwise(pl.col("onset_sample")).alias("onset_sample"))
    with pytest.raises(UserError, match=r"^events row 6: offset_sample \(700\) is before onset_sample \(5000\)"):
        prepare_events(backwards)
