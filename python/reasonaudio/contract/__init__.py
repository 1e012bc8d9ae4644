"""The benchmark contract (docs/contract.md, a copy of the project's shared/spec/benchmark.md) in
code: the one home of its facts. Task names, patterns, table schemas, manifest keys, the format
version and the bounds live here; `contract.logic` reads query logic (§2) and
`contract.reference` evaluates it, both written from the contract and independent of the Rust
engine. Everything else (build, validate, queries, annotate, tests, benches) imports from here."""

from __future__ import annotations

#: Version of the on-disk layout (§4): v2 allows several exemplars per label, a v1 benchmark is a
#: valid v2 one. A build from a library with one exemplar per label (and no split or attribution)
#: still writes "1", so that such benchmarks stay byte-identical to those built before v2.
FORMAT_VERSION = "2"
FORMAT_VERSION_ONE_EXEMPLAR = "1"
FORMAT_VERSIONS = (FORMAT_VERSION_ONE_EXEMPLAR, FORMAT_VERSION)

#: §1: an atom may carry a split; a benchmark may be built from the `test` exemplars only.
ATOM_SPLITS: tuple[str, ...] = ("train", "test")

TASKS: tuple[str, ...] = ("negation", "order", "overlap", "duration", "mix")
PATTERNS: tuple[str, ...] = ("sequential", "overlap")
CONSTRAINT_KINDS: tuple[str, ...] = ("has", "not", "before", "overlap", "duration")
MANIFEST_KEYS: tuple[str, ...] = ("format_version", "tool_version", "seed", "sample_rate", "params", "counts", "hashes")

# Column kinds: "str" (String/Categorical), "int" (any integer), "num" (integer or float),
# "id" (string or integer; atom ids are not fixed to one type by the contract).
TABLE_SCHEMAS: dict[str, dict[str, str]] = {
    "atoms": {"atom_id": "id", "label": "str", "phrase": "str", "duration_s": "num", "source": "str", "license": "str"},
    "clips": {"clip_id": "str", "path": "str", "pattern": "str", "duration_s": "num", "n_events": "int"},
    "events": {
        "clip_id": "str",
        "event_index": "int",
        "atom_id": "id",
        "label": "str",
        "onset_sample": "int",
        "offset_sample": "int",
        "onset_s": "num",
        "offset_s": "num",
        "gain_db": "num",
    },
    "queries": {"query_id": "str", "task": "str", "text": "str", "logic": "str"},
    "qrels": {"query_id": "str", "clip_id": "str", "relevance": "int"},
    "mc": {"query_id": "str", "positive_clip_id": "str", "negative_clip_id": "str"},
}
#: The required columns of each table, in the contract's order.
TABLE_COLUMNS: dict[str, tuple[str, ...]] = {name: tuple(schema) for name, schema in TABLE_SCHEMAS.items()}

BEIR_CORPUS = "beir/corpus.jsonl"
BEIR_QUERIES = "beir/queries.jsonl"
BEIR_QRELS = "beir/qrels/test.tsv"
BEIR_FILES: tuple[str, ...] = (BEIR_CORPUS, BEIR_QUERIES, BEIR_QRELS)
BEIR_QRELS_HEADER = "query-id\tcorpus-id\tscore"

#: §3.1: moving any onset or offset by up to this many seconds never changes a relevance.
DEFAULT_MARGIN_S = 0.25
#: §3.6: outside every event the audio is silent, |x| <= this.
SILENCE_ABS = 1e-3
#: §3.6: inside every event the sound is audible: its loudest window of this length reaches this
#: RMS level (a window, so sparse sounds such as knocks and drips still count as audible).
AUDIBLE_DBFS = -50.0
AUDIBLE_WINDOW_S = 0.05
#: Sample rates the tool builds at (the planner, the bindings and compose accept the same range).
MIN_SAMPLE_RATE = 8_000
MAX_SAMPLE_RATE = 192_000
