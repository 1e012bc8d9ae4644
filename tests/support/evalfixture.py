"""A tiny contract-conformant benchmark (spec §4) written by hand, for evaluation tests.

Six atoms, eight clips (short WAVs of tones so audio models have something to read), queries for all
five tasks whose qrels are the contract's relevance computed here by brute force, and one
(positive, hard negative) pair per query. Times are chosen so every event is far from every
threshold (robust labels), which keeps the fixture honest with respect to §3.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import polars as pl
import soundfile as sf

SAMPLE_RATE = 16_000

ATOMS = [
    # atom_id, label, phrase, tone frequency (Hz) used for the synthetic audio
    ("a000", "dog_bark", "a dog barking", 300.0),
    ("a001", "siren", "a rising siren", 900.0),
    ("a002", "rain", "rain falling", 1500.0),
    ("a003", "bell", "a ringing bell", 2200.0),
    ("a004", "thunder", "thunder rumbling", 120.0),
    ("a005", "whistle", "a whistle blowing", 3100.0),
]

# clip_id -> list of (label, onset_s, offset_s); every clip is 4 s long.
CLIPS: dict[str, list[tuple[str, float, float]]] = {
    "clip_000": [("dog_bark", 0.0, 1.0), ("siren", 2.0, 3.5)],
    "clip_001": [("siren", 0.0, 1.0), ("dog_bark", 2.0, 3.0)],
    "clip_002": [("rain", 0.0, 3.5), ("thunder", 1.0, 2.0)],
    "clip_003": [("rain", 0.0, 1.0), ("thunder", 2.0, 3.0)],
    "clip_004": [("bell", 0.0, 1.0), ("siren", 1.5, 3.5), ("rain", 2.0, 3.0)],
    "clip_005": [("bell", 0.0, 0.5), ("whistle", 1.5, 2.0)],
    "clip_006": [("dog_bark", 0.0, 1.0), ("bell", 1.5, 2.5), ("whistle", 3.0, 3.8)],
    "clip_007": [("whistle", 0.0, 3.0), ("dog_bark", 3.3, 3.9)],
}
CLIP_SECONDS = 4.0

# query_id -> (task, text, logic)
QUERIES: dict[str, tuple[str, str, dict]] = {
    "q_neg_0": ("negation", "a dog barking without a rising siren",
                {"all": [{"has": "dog_bark"}, {"not": "siren"}]}),
    "q_neg_1": ("negation", "a ringing bell without a whistle blowing",
                {"all": [{"has": "bell"}, {"not": "whistle"}]}),
    "q_ord_0": ("order", "a dog barking, then a rising siren",
                {"all": [{"before": ["dog_bark", "siren"]}]}),
    "q_ord_1": ("order", "rain falling, then thunder rumbling",
                {"all": [{"before": ["rain", "thunder"]}]}),
    "q_ovl_0": ("overlap", "rain falling while thunder rumbling",
                {"all": [{"overlap": ["rain", "thunder"]}]}),
    "q_ovl_1": ("overlap", "a rising siren while rain falling",
                {"all": [{"overlap": ["siren", "rain"]}]}),
    "q_dur_0": ("duration", "a whistle blowing for at least 2 seconds",
                {"all": [{"duration": {"label": "whistle", "min_s": 2.0}}]}),
    "q_dur_1": ("duration", "rain falling for at most 2 seconds",
                {"all": [{"duration": {"label": "rain", "max_s": 2.0}}]}),
    "q_mix_0": ("mix", "a ringing bell, then a whistle blowing, without a dog barking",
                {"all": [{"before": ["bell", "whistle"]}, {"not": "dog_bark"}]}),
    "q_mix_1": ("mix", "a dog barking, then a rising siren, without rain falling",
                {"all": [{"before": ["dog_bark", "siren"]}, {"not": "rain"}]}),
}

# query_id -> (positive, hard negative) for mc.parquet
MC = {
    "q_neg_0": ("clip_006", "clip_000"),
    "q_neg_1": ("clip_004", "clip_005"),
    "q_ord_0": ("clip_000", "clip_001"),
    "q_ord_1": ("clip_003", "clip_002"),
    "q_ovl_0": ("clip_002", "clip_003"),
    "q_ovl_1": ("clip_004", "clip_004"),  # replaced below: no hard negative for this one otherwise
    "q_dur_0": ("clip_007", "clip_005"),
    "q_dur_1": ("clip_003", "clip_002"),
    "q_mix_0": ("clip_005", "clip_006"),
    "q_mix_1": ("clip_000", "clip_001"),
}


def holds(constraint: dict, events: list[tuple[str, float, float]]) -> bool:
    """The contract's §2 table, by brute force (independent of the code under test)."""
    by_label = {label: (on, off) for label, on, off in events}
    if "all" in constraint:
        return all(holds(c, events) for c in constraint["all"])
    if "has" in constraint:
        return constraint["has"] in by_label
    if "not" in constraint:
        return constraint["not"] not in by_label
    if "before" in constraint:
        a, b = constraint["before"]
        return a in by_label and b in by_label and by_label[a][1] <= by_label[b][0]
    if "overlap" in constraint:
        a, b = constraint["overlap"]
        if a not in by_label or b not in by_label:
            return False
        return min(by_label[a][1], by_label[b][1]) - max(by_label[a][0], by_label[b][0]) > 0
    if "duration" in constraint:
        d = constraint["duration"]
        if d["label"] not in by_label:
            return False
        on, off = by_label[d["label"]]
        dur = off - on
        return dur >= d.get("min_s", -np.inf) and dur <= d.get("max_s", np.inf)
    raise ValueError(constraint)


def relevant_clips(query_id: str) -> list[str]:
    logic = QUERIES[query_id][2]
    return [cid for cid, events in CLIPS.items() if holds(logic, events)]


def _tone(freq: float, n: int, rng: np.random.Generator) -> np.ndarray:
    t = np.arange(n) / SAMPLE_RATE
    return (0.3 * np.sin(2 * np.pi * freq * t) + 0.01 * rng.standard_normal(n)).astype(np.float32)


def write_fixture(root: Path, *, with_beir: bool = True) -> Path:
    """Write the benchmark into `root` (created) and return it."""
    root = Path(root)
    (root / "audio").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    freq = {label: f for _, label, _, f in ATOMS}
    atom_of = {label: aid for aid, label, _, _ in ATOMS}

    atoms = pl.DataFrame(
        {
            "atom_id": [a[0] for a in ATOMS],
            "label": [a[1] for a in ATOMS],
            "phrase": [a[2] for a in ATOMS],
            "duration_s": [1.0] * len(ATOMS),
            "source": ["generator:tone"] * len(ATOMS),
            "license": ["CC0"] * len(ATOMS),
        }
    )
    clip_rows, event_rows = [], []
    n_total = int(CLIP_SECONDS * SAMPLE_RATE)
    for cid, events in CLIPS.items():
        audio = np.zeros(n_total, dtype=np.float32)
        for index, (label, on, off) in enumerate(sorted(events, key=lambda e: e[1])):
            on_s, off_s = int(round(on * SAMPLE_RATE)), int(round(off * SAMPLE_RATE))
            audio[on_s:off_s] += _tone(freq[label], off_s - on_s, rng)
            event_rows.append(
                {
                    "clip_id": cid,
                    "event_index": index,
                    "atom_id": atom_of[label],
                    "label": label,
                    "onset_sample": on_s,
                    "offset_sample": off_s,
                    "onset_s": on_s / SAMPLE_RATE,
                    "offset_s": off_s / SAMPLE_RATE,
                    "gain_db": 0.0,
                }
            )
        rel = f"audio/{cid}.wav"
        sf.write(root / rel, np.clip(audio, -1, 1), SAMPLE_RATE, subtype="PCM_16")
        overlapping = any(
            min(a[2], b[2]) - max(a[1], b[1]) > 0 for i, a in enumerate(events) for b in events[i + 1 :]
        )
        clip_rows.append(
            {
                "clip_id": cid,
                "path": rel,
                "pattern": "overlap" if overlapping else "sequential",
                "duration_s": CLIP_SECONDS,
                "n_events": len(events),
            }
        )
    clips = pl.DataFrame(clip_rows)
    events = pl.DataFrame(event_rows)
    queries = pl.DataFrame(
        {
            "query_id": list(QUERIES),
            "task": [q[0] for q in QUERIES.values()],
            "text": [q[1] for q in QUERIES.values()],
            "logic": [json.dumps(q[2]) for q in QUERIES.values()],
        }
    )
    qrels = pl.DataFrame(
        [{"query_id": qid, "clip_id": cid, "relevance": 1} for qid in QUERIES for cid in relevant_clips(qid)]
    )
    mc_pairs = dict(MC)
    # q_ovl_1 (siren while rain): clip_004 is the only positive; no clip holds both without overlap,
    # so its "hard negative" is the closest we have: a clip with the siren but not the rain.
    mc_pairs["q_ovl_1"] = ("clip_004", "clip_000")
    for qid, (pos, neg) in mc_pairs.items():
        assert pos in relevant_clips(qid), (qid, pos)
        assert neg not in relevant_clips(qid), (qid, neg)
    mc = pl.DataFrame(
        {
            "query_id": list(mc_pairs),
            "positive_clip_id": [p for p, _ in mc_pairs.values()],
            "negative_clip_id": [n for _, n in mc_pairs.values()],
        }
    )
    tables = {"atoms": atoms, "clips": clips, "events": events, "queries": queries, "qrels": qrels, "mc": mc}
    hashes = {}
    for name, frame in tables.items():
        path = root / f"{name}.parquet"
        frame.write_parquet(path)
        hashes[name] = hashlib.sha256(path.read_bytes()).hexdigest()
    manifest = {
        "format_version": "1",
        "tool_version": "test-fixture",
        "seed": 0,
        "sample_rate": SAMPLE_RATE,
        "params": {"n_clips": len(CLIPS), "fixture": True},
        "counts": {name: frame.height for name, frame in tables.items()},
        "hashes": hashes,
    }
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True))
    if with_beir:
        write_beir(root / "beir", root)
    return root


def write_beir(beir: Path, bench_root: Path) -> Path:
    """The standard BEIR layout of the fixture, corpus rows naming their audio files."""
    (beir / "qrels").mkdir(parents=True, exist_ok=True)
    with open(beir / "corpus.jsonl", "w") as fh:
        for cid in CLIPS:
            fh.write(json.dumps({"_id": cid, "title": "", "text": "", "path": f"../audio/{cid}.wav"}) + "\n")
    with open(beir / "queries.jsonl", "w") as fh:
        for qid, (_, text, _) in QUERIES.items():
            fh.write(json.dumps({"_id": qid, "text": text}) + "\n")
    with open(beir / "qrels" / "test.tsv", "w") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        for qid in QUERIES:
            for cid in relevant_clips(qid):
                fh.write(f"{qid}\t{cid}\t1\n")
    return beir
