"""A small table with the column kinds of the benchmark tables (repeated and unique strings, JSON
text, 64/32-bit integers and floats, booleans, nulls), the same wherever it is made: its file bytes
are what `tests/test_parquet.py` pins and `benches/bench_parquet_writers.py` compares between
polars versions. Needs only polars."""

from __future__ import annotations

import json


def sample_frame():
    import polars as pl

    n = 64
    labels = ["dog_bark", "rain", "door_knock", "siren"]
    return pl.DataFrame(
        {
            "clip_id": [f"clip_{i // 3:05d}" for i in range(n)],
            "label": [labels[(i * 7) % len(labels)] for i in range(n)],
            "text": [f"a {labels[i % 4].replace('_', ' ')} {'after' if i % 2 else 'before'} the {labels[(i + 1) % 4]}" for i in range(n)],
            "logic": [json.dumps({"op": "before", "a": labels[i % 4], "b": labels[(i + 1) % 4], "k": i}) for i in range(n)],
            "onset_sample": [i * 1601 + (i * i) % 97 for i in range(n)],
            "event_index": [i % 5 for i in range(n)],
            "onset_s": [i * 0.1000625 for i in range(n)],
            "gain_db": [-(i % 13) * 0.75 for i in range(n)],
            "relevant": [i % 3 == 0 for i in range(n)],
            "snr_db": [None if i % 4 == 0 else float(i % 20) for i in range(n)],
        },
        schema={"clip_id": pl.Utf8, "label": pl.Utf8, "text": pl.Utf8, "logic": pl.Utf8, "onset_sample": pl.Int64,
                "event_index": pl.Int32, "onset_s": pl.Float64, "gain_db": pl.Float32, "relevant": pl.Boolean,
                "snr_db": pl.Float32},
    )
