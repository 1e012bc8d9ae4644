"""Streaming annotation: a parquet dataset of many event files read in clip-aligned batches gives
exactly the qrels of the in-memory engine, holding one batch at a time."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from reasonaudio.relevance import read_events, read_queries, relevance_csr, stream_relevance_csr
from reasonaudio.builder import BuildConfig, build
from reasonaudio.cli import main
from reasonaudio.errors import UserError


@pytest.fixture(scope="module")
def bench(shardfixture, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("bench") / "b"
    build(out, BuildConfig(**shardfixture.SMALL), progress=False)
    return out


@pytest.fixture(scope="module")
def dataset(bench: Path, tmp_path_factory) -> Path:
    """The benchmark's events split into 7 parquet files of uneven size (clips never split), with
    the manifest's sample rate as a column as the only rate information."""
    events = pl.read_parquet(bench / "events.parquet").with_columns(pl.lit(16000).alias("sample_rate"))
    clips = events["clip_id"].unique(maintain_order=True).to_list()
    cuts = [0, 3, 40, 41, 150, 151, 260, len(clips)]
    root = tmp_path_factory.mktemp("dataset")
    for k in range(len(cuts) - 1):
        part = events.filter(pl.col("clip_id").is_in(clips[cuts[k] : cuts[k + 1]]))
        part.write_parquet(root / f"part-{k:03d}.parquet")
    return root


def _same(a, b) -> bool:
    return (
        np.array_equal(a.indptr, b.indptr)
        and np.array_equal(a.clip_indices, b.clip_indices)
        and a.clip_ids == b.clip_ids
        and a.query_ids == b.query_ids
    )


def test_stream_equals_in_memory(bench: Path, dataset: Path) -> None:
    queries = read_queries(bench)
    corpus = pl.read_parquet(bench / "clips.parquet")["clip_id"].to_list()
    ref = relevance_csr(read_events(bench), queries, clip_ids=corpus)
    max_per_clip = int(pl.read_parquet(bench / "clips.parquet")["n_events"].max())
    for batch in (1, 5, 64, 1000, 10**7):
        csr, stats = stream_relevance_csr(dataset, queries, clip_ids=corpus, batch_events=batch)
        assert _same(csr, ref), batch
        assert stats.events == read_events(bench).height
        # bounded: one batch plus the events of the clip carried over its boundary
        assert stats.max_batch_events <= batch + max_per_clip
        assert stats.batches >= min(len(corpus), stats.events // max(batch, 1)) // 2
    # without a clip list: the clips with events, in order of first appearance
    csr, _ = stream_relevance_csr(dataset, queries, batch_events=33)
    assert _same(csr, relevance_csr(read_events(bench), queries))


def test_clips_without_events_count_for_not_queries(bench: Path, dataset: Path) -> None:
    queries = pl.DataFrame({"query_id": ["n", "h"], "logic": ['{"all": [{"not": "dog_bark"}]}', '{"all": [{"has": "dog_bark"}]}']})
    corpus = pl.read_parquet(bench / "clips.parquet")["clip_id"].to_list() + ["silent_1", "silent_2"]
    csr, _ = stream_relevance_csr(dataset, queries, clip_ids=corpus, batch_events=100)
    ref = relevance_csr(read_events(bench), queries, clip_ids=corpus)
    assert _same(csr, ref)
    assert {"silent_1", "silent_2"} <= {corpus[i] for i in csr.clips_of(0)}


def test_zero_length_events_stream_as_in_memory(bench: Path, tmp_path: Path) -> None:
    """Every third event shrunk to a point (onset = offset): kept, or dropped on request with its
    clip still in the corpus, the stream gives the in-memory result and counts them."""
    events = read_events(bench).with_row_index("i").with_columns(
        pl.when(pl.col("i") % 3 == 0).then(pl.col("onset_sample")).otherwise(pl.col("offset_sample")).alias("offset_sample")
    ).drop("i")
    events = events.with_columns((pl.col("offset_sample") / 16000).alias("offset_s"))
    path = tmp_path / "events.parquet"
    events.write_parquet(path)
    queries = read_queries(bench)
    corpus = pl.read_parquet(bench / "clips.parquet")["clip_id"].to_list()
    points = (events["onset_sample"] == events["offset_sample"]).to_numpy()
    for drop in (False, True):
        kept = events.filter(pl.Series(~points)) if drop else events
        ref = relevance_csr(kept, queries, clip_ids=corpus)
        csr, stats = stream_relevance_csr(path, queries, clip_ids=corpus, batch_events=50, drop_zero_length=drop)
        assert _same(csr, ref) and stats.zero_length == int(points.sum()) > 0
        assert stats.events == kept.height


def test_stream_refusals(bench: Path, tmp_path: Path) -> None:
    events = pl.read_parquet(bench / "events.parquet")
    queries = read_queries(bench)
    # a clip's events split across the stream cannot be streamed: said plainly, not miscounted
    first = events["clip_id"][0]
    (tmp_path / "a").mkdir()
    events.write_parquet(tmp_path / "a" / "p0.parquet")
    events.filter(pl.col("clip_id") == first).write_parquet(tmp_path / "a" / "p1.parquet")
    with pytest.raises(UserError, match=f"events of clip '{first}' are not contiguous"):
        stream_relevance_csr(tmp_path / "a", queries, sample_rate=16000, batch_events=100)
    with pytest.raises(UserError, match="not in the given clip list"):
        stream_relevance_csr(bench, queries, clip_ids=["clip_000000"], batch_events=10)
    with pytest.raises(UserError, match="no .parquet files"):
        (tmp_path / "empty").mkdir()
        stream_relevance_csr(tmp_path / "empty", queries)
    with pytest.raises(UserError, match="missing column"):
        (tmp_path / "b").mkdir()
        pl.DataFrame({"x": [1]}).write_parquet(tmp_path / "b" / "p.parquet")
        stream_relevance_csr(tmp_path / "b", queries)


def test_cli_streams_a_dataset_directory(bench: Path, dataset: Path, tmp_path: Path, capsys) -> None:
    plain, streamed = tmp_path / "plain.parquet", tmp_path / "streamed.parquet"
    assert main(["annotate", "--events", str(bench), "--queries", str(bench), "--out", str(plain)]) == 0
    capsys.readouterr()
    args = ["annotate", "--events", str(dataset), "--queries", str(bench), "--clips", str(bench / "clips.parquet"), "--out", str(streamed)]
    assert main([*args, "--batch-events", "200"]) == 0
    out = capsys.readouterr().out
    assert "streamed 1" in out and "batches" in out
    assert pl.read_parquet(streamed).equals(pl.read_parquet(plain))
    assert main([*args, "--batch-events", "0", "--force"]) == 2
    assert "--batch-events must be >= 1" in capsys.readouterr().err
