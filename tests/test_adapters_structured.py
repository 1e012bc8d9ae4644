"""Structured retrieval: template text -> logic -> Rust engine on the true events is perfect."""

from __future__ import annotations

import dataclasses

import polars as pl
import pytest

from reasonaudio.builder import BuildConfig, build
from reasonaudio.io.benchmark import load_benchmark
from reasonaudio.evaluation.run import evaluate
from reasonaudio.retrieval import load_model


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    out = tmp_path_factory.mktemp("s") / "bench"
    build(out, BuildConfig(clips=150, queries_per_task=4, seed=3), progress=False)
    return load_benchmark(out)


def test_structured_adapter_is_perfect_on_template_queries(bench) -> None:
    model = load_model("structured")
    result = evaluate(bench, model, n_boot=0, progress=False)
    assert model.unparsed == []
    assert (result.per_query["acc@1"] == 1.0).all()
    assert result.per_query["ndcg@10"].min() == pytest.approx(1.0)


def test_unreadable_text_scores_nothing(bench) -> None:
    odd = bench.queries.with_columns(
        pl.when(pl.col("query_id") == bench.queries["query_id"][0]).then(pl.lit("something else entirely")).otherwise(pl.col("text")).alias("text")
    )
    bench = dataclasses.replace(bench, queries=odd)
    model = load_model("structured")
    result = evaluate(bench, model, n_boot=0, progress=False)
    assert model.unparsed == [bench.queries["query_id"][0]]
    first = result.per_query.filter(pl.col("query_id") == bench.queries["query_id"][0])
    assert first["acc@1"][0] == 0.0
