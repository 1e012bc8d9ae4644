"""Structured retrieval: the logic evaluator against the fixture's brute-force qrels, and the adapter."""

from __future__ import annotations

import json

import numpy as np
import pytest

import evalfixture
from reasonaudio.dataset import load_benchmark
from reasonaudio.evaluate import evaluate
from reasonaudio.retrieval import load_model
from reasonaudio.retrieval.adapters.structured import relevance_matrix


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    return load_benchmark(evalfixture.write_fixture(tmp_path_factory.mktemp("s") / "bench", with_beir=False))


def test_evaluator_matches_contract_relevance(bench) -> None:
    logics = [json.loads(x) for x in bench.queries["logic"].to_list()]
    clip_ids = bench.clips["clip_id"].to_list()
    relevant = relevance_matrix(logics, clip_ids, bench.events, bench.sample_rate)
    for i, qid in enumerate(bench.queries["query_id"].to_list()):
        assert {clip_ids[j] for j in np.flatnonzero(relevant[i])} == set(evalfixture.relevant_clips(qid))


def test_structured_adapter_is_perfect_on_template_queries(bench) -> None:
    try:
        from reasonaudio.queries import parse_query  # noqa: F401
    except ImportError:
        pytest.skip("reasonaudio.queries.parse_query not available")
    model = load_model("structured")
    result = evaluate(bench, model, n_boot=0, progress=False)
    parsed = result.per_query.filter(~result.per_query["query_id"].is_in(model.unparsed))
    # the fixture's wording may differ from the templates; every query the parser reads must be solved
    assert (parsed["acc@1"] == 1.0).all()
    assert (parsed["ndcg@10"] == 1.0).all()
