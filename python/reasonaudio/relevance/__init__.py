"""Relevance (contract §2): the one entry point to the Rust engine (`engine`), the readers of events
and queries and the qrels writer (`files`), and streaming over event sets larger than memory
(`stream`). Semantics are the contract's; the work is the core's `annotate_csr`."""

from reasonaudio.relevance.engine import (
    EventArrays,
    RelevanceCSR,
    annotate,
    as_int64,
    engine_csr,
    plan_events,
    plan_relevance,
    range_relevance,
    positive_labels,
    prepare_events,
    relevance_csr,
    zero_length,
)
from reasonaudio.relevance.files import read_events, read_queries, read_strong_labels, write_qrels
from reasonaudio.relevance.stream import StreamStats, stream_relevance_csr

__all__ = [
    "EventArrays",
    "RelevanceCSR",
    "StreamStats",
    "annotate",
    "as_int64",
    "engine_csr",
    "plan_events",
    "plan_relevance",
    "range_relevance",
    "positive_labels",
    "prepare_events",
    "read_events",
    "read_queries",
    "read_strong_labels",
    "relevance_csr",
    "stream_relevance_csr",
    "write_qrels",
    "zero_length",
]
