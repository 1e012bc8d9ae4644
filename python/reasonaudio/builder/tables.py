"""The tables, the BEIR export and the manifest of a rendered plan (contract §4)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import polars as pl

from reasonaudio._core import __version__
from reasonaudio.atoms import recordings_used, write_attribution
from reasonaudio.builder.plan import BuildPlan
from reasonaudio.contract import (
    BEIR_CORPUS,
    BEIR_FILES,
    BEIR_QRELS,
    BEIR_QRELS_HEADER,
    BEIR_QUERIES,
    FORMAT_VERSION,
    FORMAT_VERSION_ONE_EXEMPLAR,
    PATTERNS,
    TASKS,
)
from reasonaudio.relevance import positive_labels

def write_benchmark(plan: BuildPlan, root: Path, peaks: np.ndarray, gains: np.ndarray) -> dict:
    """Writes the tables, the BEIR export, the attribution and the manifest of a rendered plan into
    `root` (`peaks`/`gains`: the limiter's statistics per clip); returns the manifest."""
    tables = benchmark_tables(plan, np.asarray(peaks, np.float64), np.asarray(gains, np.float64))
    for name, frame in tables.items():
        frame.write_parquet(root / f"{name}.parquet", compression="zstd", statistics=False)
    write_beir(root, plan, tables["qrels"])
    write_attribution(root, plan.library, plan.final["ev_atom"])
    manifest = benchmark_manifest(plan, root, tables)
    write_json(root / "manifest.json", manifest)
    return manifest


def write_json(path: Path, obj) -> None:
    path.write_text(json.dumps(obj, indent=2, sort_keys=False) + "\n")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def benchmark_tables(plan: BuildPlan, peaks: np.ndarray, gains: np.ndarray) -> dict[str, pl.DataFrame]:
    """The contract's tables (§4) of a plan, in the order they are written."""
    config, cols, clip_ids, rel_paths = plan.config, plan.final, plan.clip_ids, plan.rel_paths
    specs, query_ids, rel, positives, negatives = plan.specs, plan.query_ids, plan.relevant, plan.positives, plan.negatives
    library = plan.library
    sr = config.sample_rate
    ptr = cols["clip_event_ptr"].astype(np.int64)
    n_events = np.diff(ptr)
    atoms_df = library.to_frame()
    atom_ids = atoms_df["atom_id"].to_list()
    labels = atoms_df["label"].to_list()

    ev_clip = cols["ev_clip"].astype(np.int64)
    event_index = np.arange(len(ev_clip)) - ptr[ev_clip]
    onset = cols["ev_onset"].astype(np.int64)
    offset = onset + cols["ev_length"].astype(np.int64)
    atom = cols["ev_atom"].astype(np.int64)
    clip_id_s = pl.Series("clip_id", clip_ids)
    events = pl.DataFrame(
        {
            "clip_id": clip_id_s.gather(ev_clip),
            "event_index": event_index.astype(np.int32),
            "atom_id": pl.Series(atom_ids).gather(atom),
            "label": pl.Series(labels).gather(atom),
            "onset_sample": onset,
            "offset_sample": offset,
            "onset_s": onset / sr,
            "offset_s": offset / sr,
            "gain_db": cols["ev_gain_db"].astype(np.float64).round(2),
            "mode": pl.Series(["native", "loop", "trim"]).gather(cols["ev_mode"].astype(np.int64)),
        }
    )
    clip_len = cols["clip_length"].astype(np.int64)
    clips = pl.DataFrame(
        {
            "clip_id": clip_ids,
            "path": rel_paths,
            "pattern": [PATTERNS[int(x)] for x in cols["clip_overlap"]],
            "duration_s": clip_len / sr,
            "n_events": n_events.astype(np.int32),
            "n_samples": clip_len,
            "peak_before_limiter": peaks.round(6),
            "limiter_gain": gains.round(6),
        }
    )
    queries = pl.DataFrame(
        {
            "query_id": query_ids,
            "task": [s.task for s in specs],
            "text": [s.text for s in specs],
            "logic": [json.dumps(s.logic) for s in specs],
            "shape": [s.shape for s in specs],
            "n_relevant": [len(r) for r in rel],
        },
        schema={"query_id": pl.String, "task": pl.String, "text": pl.String, "logic": pl.String, "shape": pl.String, "n_relevant": pl.Int64},
    )
    qrels = pl.DataFrame(
        {
            "query_id": [qid for qid, r in zip(query_ids, rel) for _ in range(len(r))],
            "clip_id": [clip_ids[int(c)] for r in rel for c in r],
            "relevance": np.ones(sum(len(r) for r in rel), np.int32),
        },
        schema={"query_id": pl.String, "clip_id": pl.String, "relevance": pl.Int32},
    )
    mc = pl.DataFrame(
        {
            "query_id": query_ids,
            "positive_clip_id": [clip_ids[i] for i in positives],
            "negative_clip_id": [clip_ids[i] for i in negatives],
            "task": [s.task for s in specs],
        },
        schema={"query_id": pl.String, "positive_clip_id": pl.String, "negative_clip_id": pl.String, "task": pl.String},
    )
    return {"atoms": atoms_df, "clips": clips, "events": events, "queries": queries, "qrels": qrels, "mc": mc}


def write_beir(root: Path, plan: BuildPlan, qrels: pl.DataFrame) -> None:
    """The BEIR/MTEB retrieval layout of the benchmark (a corpus row names its audio file)."""
    clip_ids, rel_paths, query_ids, specs = plan.clip_ids, plan.rel_paths, plan.query_ids, plan.specs
    (root / BEIR_QRELS).parent.mkdir(parents=True)
    with open(root / BEIR_CORPUS, "w") as fh:
        for cid, path in zip(clip_ids, rel_paths):
            fh.write(json.dumps({"_id": cid, "title": "", "text": "", "audio": path}) + "\n")
    with open(root / BEIR_QUERIES, "w") as fh:
        for qid, s in zip(query_ids, specs):
            fh.write(json.dumps({"_id": qid, "text": s.text, "task": s.task}) + "\n")
    with open(root / BEIR_QRELS, "w") as fh:
        fh.write(BEIR_QRELS_HEADER + "\n")
        for qid, cid in zip(qrels["query_id"].to_list(), qrels["clip_id"].to_list()):
            fh.write(f"{qid}\t{cid}\t1\n")



def benchmark_manifest(plan: BuildPlan, root: Path, tables: dict[str, pl.DataFrame]) -> dict:
    """manifest.json of the written tables: parameters, derived counts, content hashes."""
    config, params, library, specs = plan.config, plan.params, plan.library, plan.specs
    rel, planned, hard_counts, thresholds = plan.relevant, plan.planned, plan.hard_counts, list(plan.thresholds)
    sr = config.sample_rate
    atoms_df, clips, events, qrels, mc = tables["atoms"], tables["clips"], tables["events"], tables["qrels"], tables["mc"]
    n = len(clips)
    n_events = np.diff(plan.final["clip_event_ptr"].astype(np.int64))
    clip_len = plan.final["clip_length"].astype(np.int64)
    atom = plan.final["ev_atom"].astype(np.int64)
    durations = clip_len / sr
    hist, edges = np.histogram(durations, bins=np.arange(0, config.max_clip_s + 2.5, 2.5))
    label_use: dict[str, int] = {}
    for s in specs:
        for lab in positive_labels(s.logic) + [c["not"] for c in s.logic["all"] if "not" in c]:
            label_use[lab] = label_use.get(lab, 0) + 1
    counts = {
        "atoms": len(atoms_df),
        "clips": n,
        "clips_by_pattern": {p: int((clips["pattern"] == p).sum()) for p in PATTERNS},
        "events": len(events),
        "queries": len(specs),
        "queries_by_task": {t: sum(1 for s in specs if s.task == t) for t in TASKS},
        "queries_by_shape": dict(sorted({s.shape: sum(1 for x in specs if x.shape == s.shape) for s in specs}.items())),
        "qrels": len(qrels),
        "mc_pairs": len(mc),
        "planned_hard_negatives": planned,
        "relevant_per_query": _summary(np.array([len(r) for r in rel], float)) if specs else None,
        "hard_negatives_per_query": _summary(np.array(hard_counts, float)) if specs else None,
        "clip_duration_s": {**_summary(durations), "histogram": {"edges": edges.tolist(), "counts": hist.tolist()}},
        "events_per_clip": {int(k): int(v) for k, v in zip(*np.unique(n_events, return_counts=True))},
        "event_modes": {m: int((events["mode"] == m).sum()) for m in ("native", "loop", "trim")},
        "label_use_in_queries": {
            "labels_used": len(label_use),
            "max": max(label_use.values(), default=0),
            "mean": round(float(np.mean(list(label_use.values()))), 3) if label_use else 0.0,
            "per_label": dict(sorted(label_use.items())),
        },
    }
    hashes = {f"{name}.parquet": sha256_file(root / f"{name}.parquet") for name in tables}
    hashes["atoms_audio"] = hashlib.sha256(np.ascontiguousarray(plan.atom_audio, dtype="<f4").tobytes()).hexdigest()
    for rel_name in BEIR_FILES:
        hashes[rel_name] = sha256_file(root / rel_name)
    # A library with one exemplar per label and no split/attribution is a v1 benchmark: it keeps its
    # v1 manifest byte for byte (a v1 benchmark is a valid v2 one).
    v2 = bool(library.splits or library.attributions) or library.n_labels != len(library)
    extra = {"recordings": recordings_used(library, atom)} if v2 else {}
    return {
        "format_version": FORMAT_VERSION if v2 else FORMAT_VERSION_ONE_EXEMPLAR,
        "tool_version": __version__,
        "seed": config.seed,
        "sample_rate": sr,
        "params": {
            "build": {k: v for k, v in config.recorded().items() if not (k == "exemplar_split" and not v2)},
            "plan": params,
            "duration_thresholds_s": thresholds,
            "margin_s": params["margin_s"],
            "background": None,
            "audio_format": config.audio_format,
        },
        "counts": counts,
        "hashes": hashes,
        "hash_scheme": "sha256 of file bytes; atoms_audio = sha256 of the atom bank as little-endian float32",
        **extra,
    }


def _summary(x: np.ndarray) -> dict:
    if len(x) == 0:
        return {}
    return {
        "min": round(float(x.min()), 4),
        "p50": round(float(np.median(x)), 4),
        "mean": round(float(x.mean()), 4),
        "max": round(float(x.max()), 4),
    }
