"""The benchmark contract (docs/contract.md, a copy of the project's shared/spec/benchmark.md) in
code: the one home of its facts. Task names, patterns, table schemas, manifest keys, the format
version and the bounds live here; `contract.logic` reads query logic (§2) and
`contract.reference` evaluates it, both written from the contract and independent of the Rust
engine. Everything else (build, validate, queries, annotate, tests, benches) imports from here."""

from __future__ import annotations

import re as _re

#: Version of the on-disk layout (§4): v2 allows several exemplars per label, a v1 benchmark is a
#: valid v2 one. A build from a library with one exemplar per label (and no split or attribution)
#: still writes "1", so that such benchmarks stay byte-identical to those built before v2.
FORMAT_VERSION = "2"
FORMAT_VERSION_ONE_EXEMPLAR = "1"
#: v3 (§5): a benchmark rendered in a scene (bed, room, pitch/tempo) says "3"; one without keeps 1/2.
FORMAT_VERSION_SCENE = "3"
FORMAT_VERSIONS = (FORMAT_VERSION_ONE_EXEMPLAR, FORMAT_VERSION, FORMAT_VERSION_SCENE)

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


# --- §5 acoustic scenes ------------------------------------------------------------------------
#: Columns a v3 benchmark adds to clips and events (null / 0 / 1 where a clip or event has none).
SCENE_TABLE_SCHEMAS: dict[str, dict[str, str]] = {
    "clips": {"background_id": "str", "background_snr_db": "num", "room_id": "str", "tail_s": "num"},
    "events": {"pitch_semitones": "num", "stretch": "num"},
    "backgrounds": {"background_id": "str", "label": "str", "source": "str", "license": "str", "attribution": "str", "duration_s": "num"},
    "rooms": {"room_id": "str", "source": "str", "rt60_s": "num", "tail_s": "num"},
}
#: Where a v3 benchmark keeps the bed sources and room responses it used (float32 WAV, at the
#: benchmark's rate, as the renderer used them), so the validator can re-read them.
BACKGROUNDS_DIR = "backgrounds"
ROOMS_DIR = "rooms"
#: The validator's tolerance on a recomputed event SNR (the renderer aims 0.01 dB above s).
SNR_TOLERANCE_DB = 0.1
#: Accepted --snr values (dB): below -20 an event drowns, above 60 the bed is below 16-bit noise.
SNR_RANGE_DB = (-20.0, 60.0)
#: Accepted simulated reverberation times (s).
RT60_RANGE_S = (0.05, 3.0)
#: The decay that defines tail_s (dB).
TAIL_DECAY_DB = 20.0


def label_words(label: str) -> frozenset[str]:
    """The words of a label after the importers' normalisation (case folded; '_', '-', '()' and
    spaces separate words): what §5's "equals, contains or is contained in" compares."""
    return frozenset(w for w in _re.split(r"[\s_\-()]+", label.casefold()) if w)


def labels_clash(bed: str, label: str) -> bool:
    """§5: a bed label may not equal, contain or be contained in a vocabulary label, word for word."""
    a, b = label_words(bed), label_words(label)
    return bool(a) and bool(b) and (a <= b or b <= a)
