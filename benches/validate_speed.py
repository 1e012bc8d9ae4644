"""How long `validate_benchmark` takes at the paper's scale (10k clips, 1k queries, 200 atoms).

Writes a synthetic benchmark with random events (it need not be valid: every check still runs over
every row) and times the metadata checks and, separately, the audio checks on a subset of files.
Baseline in the same run: reading the same audio files with soundfile and nothing else.

    python benches/validate_speed.py [--clips 10000] [--queries 1000] [--audio-files 1000]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl
import soundfile as sf

from reasonaudio.validate import validate_benchmark


def write_synthetic(root: Path, n_clips: int, n_queries: int, n_audio: int, sr: int = 16000, clip_s: float = 10.0) -> None:
    rng = np.random.default_rng(0)
    labels = [f"label{i:03d}" for i in range(200)]
    pl.DataFrame(
        {"atom_id": labels, "label": labels, "phrase": labels, "duration_s": [1.0] * 200, "source": ["x"] * 200, "license": ["CC0"] * 200}
    ).write_parquet(root / "atoms.parquet")
    n_events = rng.integers(2, 9, n_clips)
    clip_ids = [f"clip{i:05d}" for i in range(n_clips)]
    ev = {k: [] for k in ("clip_id", "event_index", "atom_id", "label", "onset_sample", "offset_sample")}
    for cid, k in zip(clip_ids, n_events):
        chosen = rng.choice(200, k, replace=False)
        on = np.sort(rng.integers(0, int((clip_s - 2) * sr), k))
        off = on + rng.integers(sr // 2, 2 * sr, k)
        for i in range(k):
            ev["clip_id"].append(cid)
            ev["event_index"].append(i)
            ev["atom_id"].append(labels[chosen[i]])
            ev["label"].append(labels[chosen[i]])
            ev["onset_sample"].append(int(on[i]))
            ev["offset_sample"].append(int(off[i]))
    events = pl.DataFrame(ev).with_columns(
        (pl.col("onset_sample") / sr).alias("onset_s"), (pl.col("offset_sample") / sr).alias("offset_s"), pl.lit(0.0).alias("gain_db")
    )
    events.write_parquet(root / "events.parquet")
    pl.DataFrame(
        {
            "clip_id": clip_ids,
            "path": [f"audio/{c}.wav" for c in clip_ids],
            "pattern": ["sequential"] * n_clips,
            "duration_s": [clip_s] * n_clips,
            "n_events": n_events,
        }
    ).write_parquet(root / "clips.parquet")
    tasks = ["negation", "order", "overlap", "duration", "mix"]
    q_rows = []
    for i in range(n_queries):
        a, b, c = rng.choice(labels, 3, replace=False)
        logic = [
            {"all": [{"has": a}, {"not": b}]},
            {"all": [{"before": [a, b]}]},
            {"all": [{"overlap": [a, b]}]},
            {"all": [{"duration": {"label": a, "min_s": 1.0}}]},
            {"all": [{"before": [a, b]}, {"not": c}]},
        ][i % 5]
        q_rows.append((f"q{i:04d}", tasks[i % 5], f"query {i}", json.dumps(logic)))
    pl.DataFrame(q_rows, schema=["query_id", "task", "text", "logic"], orient="row").write_parquet(root / "queries.parquet")
    pl.DataFrame({"query_id": ["q0000"], "clip_id": ["clip00000"], "relevance": [1]}).write_parquet(root / "qrels.parquet")
    pl.DataFrame({"query_id": ["q0000"], "positive_clip_id": ["clip00000"], "negative_clip_id": ["clip00001"]}).write_parquet(root / "mc.parquet")
    (root / "manifest.json").write_text(json.dumps({"format_version": "1", "tool_version": "bench", "seed": 0, "sample_rate": sr, "params": {}, "counts": {}, "hashes": {}}))
    (root / "audio").mkdir()
    (root / "beir" / "qrels").mkdir(parents=True)
    (root / "beir" / "corpus.jsonl").write_text("")
    (root / "beir" / "queries.jsonl").write_text("")
    (root / "beir" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n")
    noise = (rng.standard_normal(int(clip_s * sr)) * 0.05).astype(np.float32)
    for cid in clip_ids[:n_audio]:
        sf.write(root / "audio" / f"{cid}.wav", noise, sr, subtype="PCM_16")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--clips", type=int, default=10000)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--audio-files", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        write_synthetic(root, args.clips, args.queries, args.audio_files)
        print(f"wrote synthetic benchmark: {time.perf_counter() - t0:.1f} s")

        t0 = time.perf_counter()
        report = validate_benchmark(root, check_audio=False)
        meta_s = time.perf_counter() - t0
        print(f"metadata checks ({args.clips} clips x {args.queries} queries, no audio): {meta_s:.2f} s")
        print("  relevance:", report.check("relevance.qrels").notes)

        paths = sorted((root / "audio").glob("*.wav"))
        t0 = time.perf_counter()
        for p in paths:
            sf.read(p, dtype="float32")
        read_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        validate_benchmark(root, check_audio=True, max_audio_files=len(paths))
        full_s = time.perf_counter() - t0
        audio_s = full_s - meta_s
        per_file_ms = 1000 * audio_s / max(1, len(paths))
        print(f"baseline: soundfile read only, {len(paths)} files of 10 s @ 16 kHz: {read_s:.2f} s ({1000 * read_s / max(1, len(paths)):.2f} ms/file)")
        print(f"audio checks: {audio_s:.2f} s for {len(paths)} files ({per_file_ms:.2f} ms/file) -> "
              f"~{per_file_ms * args.clips / 1000:.0f} s for {args.clips} files")


if __name__ == "__main__":
    main()
