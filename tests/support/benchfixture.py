"""A tiny, hand-checked, contract-conformant benchmark directory (and ways to break it).

Eleven 8-second clips at 8 kHz built from six sine-tone "atoms", nine queries covering all five
tasks. Relevance (`QRELS`) and the two-option pairs (`MC`) were worked out by hand from the event
times below, not by any evaluator, so a validator that agrees with them is checked independently.
Every pair of events in a clip overlaps by >= 1 s or is >= 1 s apart, and every duration is >= 0.5 s
from every query threshold, so the default margin (0.25 s, 2m = 0.5 s) holds with room to spare.

Written with polars + soundfile + numpy only: nothing here depends on the generator or Rust engine.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import numpy as np
import polars as pl
import soundfile as sf

SAMPLE_RATE = 8000
CLIP_S = 8.0
AMPLITUDE = 0.3  # per event; two overlapping events stay well inside full scale
FADE_S = 0.005

# label -> (phrase, tone frequency in Hz)
ATOMS: dict[str, tuple[str, float]] = {
    "dog_bark": ("a dog barking", 440.0),
    "siren": ("a siren wailing", 660.0),
    "rain": ("rain falling", 300.0),
    "thunder": ("thunder rumbling", 150.0),
    "bell": ("a bell ringing", 880.0),
    "whistle": ("a whistle blowing", 1200.0),
}

# clip_id -> (pattern, [(label, onset_s, offset_s, gain_db)])
CLIPS: dict[str, tuple[str, list[tuple[str, float, float, float]]]] = {
    "clip0000": ("sequential", [("dog_bark", 0.5, 1.5, 0.0), ("siren", 2.5, 4.5, -3.0), ("bell", 5.5, 6.5, 0.0)]),
    "clip0001": ("sequential", [("siren", 0.5, 2.5, 0.0), ("dog_bark", 3.5, 4.5, 0.0), ("whistle", 5.5, 7.0, -6.0)]),
    "clip0002": ("overlap", [("rain", 0.5, 6.5, 0.0), ("thunder", 2.0, 3.5, 0.0)]),
    "clip0003": ("overlap", [("rain", 0.5, 2.0, 0.0), ("thunder", 1.0, 2.5, 0.0), ("bell", 4.0, 5.0, 0.0)]),
    "clip0004": ("sequential", [("rain", 0.5, 2.0, 0.0), ("thunder", 3.0, 4.5, 0.0), ("dog_bark", 6.0, 7.0, 0.0)]),
    "clip0005": ("sequential", [("dog_bark", 0.5, 1.5, 0.0), ("bell", 2.5, 3.5, 0.0)]),
    "clip0006": ("overlap", [("dog_bark", 0.5, 3.5, 0.0), ("siren", 1.5, 4.0, 0.0), ("whistle", 5.0, 6.0, 0.0)]),
    "clip0007": ("sequential", [("whistle", 0.5, 1.5, 0.0), ("rain", 2.5, 7.5, 0.0)]),
    "clip0008": ("sequential", [("bell", 0.5, 1.5, 0.0), ("siren", 3.0, 4.0, 0.0), ("dog_bark", 5.0, 6.0, 0.0)]),
    "clip0009": ("overlap", [("rain", 1.0, 3.5, 0.0), ("bell", 2.0, 3.0, 0.0), ("thunder", 4.5, 7.5, 0.0)]),
    "clip0010": ("overlap", [("whistle", 0.5, 1.5, 0.0), ("rain", 2.5, 5.5, 0.0), ("thunder", 3.5, 7.0, 0.0)]),
}

# (query_id, task, text, logic)
QUERIES: list[tuple[str, str, str, dict]] = [
    ("q0000", "negation", "a dog barking but no siren", {"all": [{"has": "dog_bark"}, {"not": "siren"}]}),
    ("q0001", "order", "a dog barking, then a siren wailing", {"all": [{"before": ["dog_bark", "siren"]}]}),
    ("q0002", "overlap", "rain falling while thunder rumbles", {"all": [{"overlap": ["rain", "thunder"]}]}),
    ("q0003", "duration", "rain falling for at least 4 seconds", {"all": [{"duration": {"label": "rain", "min_s": 4.0}}]}),
    (
        "q0004",
        "mix",
        "a whistle blowing, then rain falling, and no thunder",
        {"all": [{"before": ["whistle", "rain"]}, {"not": "thunder"}]},
    ),
    (
        "q0005",
        "negation",
        "a bell ringing with no siren and no thunder",
        {"all": [{"has": "bell"}, {"not": "siren"}, {"not": "thunder"}]},
    ),
    (
        "q0006",
        "order",
        "a bell, then a siren, then a dog barking",
        {"all": [{"before": ["bell", "siren"]}, {"before": ["siren", "dog_bark"]}]},
    ),
    ("q0007", "duration", "thunder rumbling for at most 2.25 seconds", {"all": [{"duration": {"label": "thunder", "max_s": 2.25}}]}),
    (
        "q0008",
        "mix",
        "a dog barking for at least 2 seconds while a siren wails",
        {"all": [{"overlap": ["dog_bark", "siren"]}, {"duration": {"label": "dog_bark", "min_s": 2.0}}]},
    ),
]

# Worked out by hand from CLIPS (see the module docstring).
QRELS: dict[str, list[str]] = {
    "q0000": ["clip0004", "clip0005"],
    "q0001": ["clip0000"],
    "q0002": ["clip0002", "clip0003", "clip0010"],
    "q0003": ["clip0002", "clip0007"],
    "q0004": ["clip0007"],
    "q0005": ["clip0005"],
    "q0006": ["clip0008"],
    "q0007": ["clip0002", "clip0003", "clip0004"],
    "q0008": ["clip0006"],
}
# query -> (positive, hard negative)
MC: dict[str, tuple[str, str]] = {
    "q0000": ("clip0004", "clip0000"),
    "q0001": ("clip0000", "clip0001"),
    "q0002": ("clip0002", "clip0004"),
    "q0003": ("clip0002", "clip0003"),
    "q0004": ("clip0007", "clip0010"),
    "q0005": ("clip0005", "clip0000"),
    "q0006": ("clip0008", "clip0000"),
    "q0007": ("clip0002", "clip0009"),
    "q0008": ("clip0006", "clip0000"),
}

METADATA_FILES = ("atoms.parquet", "clips.parquet", "events.parquet", "queries.parquet", "qrels.parquet", "mc.parquet")


def spec() -> dict:
    """A deep copy of the fixture's content, to edit before `write_benchmark(root, **spec)`."""
    return copy.deepcopy({"clips": CLIPS, "queries": QUERIES, "qrels": QRELS, "mc": MC})


def _render(events: list[tuple[str, float, float, float]]) -> np.ndarray:
    n = int(round(CLIP_S * SAMPLE_RATE))
    audio = np.zeros(n, dtype=np.float64)
    fade = int(FADE_S * SAMPLE_RATE)
    for label, on_s, off_s, gain_db in events:
        on, off = int(round(on_s * SAMPLE_RATE)), int(round(off_s * SAMPLE_RATE))
        t = np.arange(off - on) / SAMPLE_RATE
        tone = AMPLITUDE * 10 ** (gain_db / 20) * np.sin(2 * np.pi * ATOMS[label][1] * t)
        ramp = np.linspace(0.0, 1.0, fade)
        tone[:fade] *= ramp
        tone[-fade:] *= ramp[::-1]
        audio[on:off] += tone
    return audio


def write_benchmark(
    root: str | Path,
    clips: dict | None = None,
    queries: list | None = None,
    qrels: dict | None = None,
    mc: dict | None = None,
    audio_subtype: str = "PCM_16",
) -> Path:
    """Write the fixture (or an edited copy of its content) as a complete benchmark directory."""
    root = Path(root)
    clips = CLIPS if clips is None else clips
    queries = QUERIES if queries is None else queries
    qrels = QRELS if qrels is None else qrels
    mc = MC if mc is None else mc
    (root / "audio").mkdir(parents=True, exist_ok=True)

    labels = list(ATOMS)
    atom_ids = {label: f"atom{i:03d}" for i, label in enumerate(labels)}
    pl.DataFrame(
        {
            "atom_id": [atom_ids[l] for l in labels],
            "label": labels,
            "phrase": [ATOMS[l][0] for l in labels],
            "duration_s": [1.0] * len(labels),
            "source": [f"sine:{ATOMS[l][1]:g}Hz" for l in labels],
            "license": ["CC0-1.0"] * len(labels),
        }
    ).write_parquet(root / "atoms.parquet")

    clip_rows, event_rows = [], []
    for clip_id, (pattern, events) in clips.items():
        rel = f"audio/{clip_id}.wav"
        clip_rows.append({"clip_id": clip_id, "path": rel, "pattern": pattern, "duration_s": CLIP_S, "n_events": len(events)})
        for i, (label, on_s, off_s, gain_db) in enumerate(sorted(events, key=lambda e: e[1])):
            on, off = int(round(on_s * SAMPLE_RATE)), int(round(off_s * SAMPLE_RATE))
            event_rows.append(
                {
                    "clip_id": clip_id,
                    "event_index": i,
                    "atom_id": atom_ids[label],
                    "label": label,
                    "onset_sample": on,
                    "offset_sample": off,
                    "onset_s": on / SAMPLE_RATE,
                    "offset_s": off / SAMPLE_RATE,
                    "gain_db": gain_db,
                }
            )
        sf.write(root / rel, _render(events), SAMPLE_RATE, subtype=audio_subtype)
    pl.DataFrame(clip_rows).write_parquet(root / "clips.parquet")
    pl.DataFrame(event_rows).write_parquet(root / "events.parquet")
    pl.DataFrame(
        {
            "query_id": [q[0] for q in queries],
            "task": [q[1] for q in queries],
            "text": [q[2] for q in queries],
            "logic": [json.dumps(q[3]) for q in queries],
        }
    ).write_parquet(root / "queries.parquet")
    pairs = [(q, c) for q, cs in qrels.items() for c in cs]
    pl.DataFrame(
        {"query_id": [p[0] for p in pairs], "clip_id": [p[1] for p in pairs], "relevance": [1] * len(pairs)},
        schema={"query_id": pl.String, "clip_id": pl.String, "relevance": pl.Int32},
    ).write_parquet(root / "qrels.parquet")
    pl.DataFrame(
        {
            "query_id": list(mc),
            "positive_clip_id": [p for p, _ in mc.values()],
            "negative_clip_id": [n for _, n in mc.values()],
        },
        schema={"query_id": pl.String, "positive_clip_id": pl.String, "negative_clip_id": pl.String},
    ).write_parquet(root / "mc.parquet")
    write_beir(root)
    refresh_manifest(root)
    return root


def write_beir(root: str | Path) -> None:
    """BEIR layout derived from the parquet tables (call again after editing them)."""
    root = Path(root)
    beir = root / "beir"
    (beir / "qrels").mkdir(parents=True, exist_ok=True)
    clips = pl.read_parquet(root / "clips.parquet")
    queries = pl.read_parquet(root / "queries.parquet")
    qrels = pl.read_parquet(root / "qrels.parquet")
    with open(beir / "corpus.jsonl", "w") as fh:
        for clip_id, path in clips.select("clip_id", "path").iter_rows():
            fh.write(json.dumps({"_id": clip_id, "title": "", "text": "", "audio": path}) + "\n")
    with open(beir / "queries.jsonl", "w") as fh:
        for qid, text in queries.select("query_id", "text").iter_rows():
            fh.write(json.dumps({"_id": qid, "text": text}) + "\n")
    with open(beir / "qrels" / "test.tsv", "w") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        for qid, cid, rel in qrels.select("query_id", "clip_id", "relevance").iter_rows():
            fh.write(f"{qid}\t{cid}\t{rel}\n")


def refresh_manifest(root: str | Path) -> None:
    """(Re)write manifest.json with counts and sha256 hashes of the metadata tables as they are now."""
    root = Path(root)
    counts = {}
    for name in METADATA_FILES:
        if (root / name).is_file():
            counts[name.removesuffix(".parquet")] = pl.read_parquet(root / name).height
    hashes = {name: hashlib.sha256((root / name).read_bytes()).hexdigest() for name in METADATA_FILES if (root / name).is_file()}
    manifest = {
        "format_version": "1",
        "tool_version": "fixture",
        "seed": 0,
        "sample_rate": SAMPLE_RATE,
        "params": {"clip_s": CLIP_S, "margin_s": 0.25, "background": None, "format": "wav16"},
        "counts": counts,
        "hashes": hashes,
    }
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2))


def rewrite_table(root: str | Path, name: str, edit) -> None:
    """Apply `edit(frame) -> frame` to one parquet table, then refresh beir/ and the manifest."""
    root = Path(root)
    path = root / f"{name}.parquet"
    edit(pl.read_parquet(path)).write_parquet(path)
    write_beir(root)
    refresh_manifest(root)
