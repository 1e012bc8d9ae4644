"""Relevance engine throughput: Rust core vs a plain Python reference vs vectorised polars.

    python benches/bench_relevance.py            # 10k x 1k comparison, then Rust at 100k x 10k, 1M x 10k
    python benches/bench_relevance.py --quick    # 10k x 1k comparison only

The synthetic corpus is shaped like the default benchmark: 200 labels, 2-8 events per clip (a
label at most once per clip), 60 % sequential and 40 % overlapping clips at 16 kHz, and queries of
the five task shapes whose labels come from a random clip (so most queries have positives).
Goals (2 cores): 10k x 1k <= 20 ms and >= 1000x the plain Python reference; 1M x 10k <= 10 s.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from typing import Any

import numpy as np
import polars as pl

from reasonaudio.contract.reference import holds

from reasonaudio import _core

SAMPLE_RATE = 16_000
N_LABELS = 200


def synthetic_events(n_clips: int, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    per_clip = rng.integers(2, 9, n_clips)
    # Eight distinct labels per clip (redraw rows with repeats), of which the first k are used.
    labels = rng.integers(0, N_LABELS, (n_clips, 8))
    while True:
        s = np.sort(labels, axis=1)
        dup = (s[:, 1:] == s[:, :-1]).any(axis=1)
        if not dup.any():
            break
        labels[dup] = rng.integers(0, N_LABELS, (int(dup.sum()), 8))
    keep = np.arange(8)[None, :] < per_clip[:, None]
    clip = np.repeat(np.arange(n_clips, dtype=np.uint32), per_clip)
    label = labels[keep].astype(np.uint32)
    n = clip.shape[0]
    length = rng.integers(SAMPLE_RATE // 2, 4 * SAMPLE_RATE, n)
    gap = rng.integers(SAMPLE_RATE // 2, 3 * SAMPLE_RATE // 2, n)
    sequential = (rng.random(n_clips) < 0.6)[clip]
    # Sequential: each event starts after the previous one ends plus a gap (cumsum within clip).
    step = length + gap
    ends = np.cumsum(step)
    first = np.concatenate([[0], np.cumsum(per_clip)[:-1]])
    base = np.repeat(ends[first] - step[first], per_clip)
    seq_onset = ends - step - base
    overlap_onset = rng.integers(0, 4 * SAMPLE_RATE, n)
    onset = np.where(sequential, seq_onset, overlap_onset).astype(np.int64)
    return {"clip": clip, "label": label, "onset": onset, "offset": onset + length.astype(np.int64)}


def synthetic_queries(ev: dict[str, np.ndarray], n_clips: int, n_queries: int, seed: int = 1) -> list[str]:
    rng = np.random.default_rng(seed)
    starts = np.searchsorted(ev["clip"], np.arange(n_clips + 1))
    out = []
    for i in range(n_queries):
        c = int(rng.integers(0, n_clips))
        lo, hi = int(starts[c]), int(starts[c + 1])
        order = lo + np.argsort(ev["onset"][lo:hi])
        picks = rng.choice(order, size=2, replace=False)
        a_i, b_i = sorted(picks, key=lambda k: ev["onset"][k])
        a, b = f"l{ev['label'][a_i]}", f"l{ev['label'][b_i]}"
        other = f"l{int(rng.integers(0, N_LABELS))}"
        dur = float(ev["offset"][a_i] - ev["onset"][a_i]) / SAMPLE_RATE
        task = i % 5
        if task == 0:
            logic: list[dict[str, Any]] = [{"has": a}, {"not": other}]
        elif task == 1:
            logic = [{"before": [a, b]}]
        elif task == 2:
            logic = [{"overlap": [a, b]}]
        elif task == 3:
            bound = {"min_s": round(dur - 0.5, 3)} if rng.random() < 0.5 else {"max_s": round(dur + 0.5, 3)}
            logic = [{"duration": {"label": a, **bound}}]
        else:
            logic = [{"before": [a, b]}, {"not": other}]
        out.append(json.dumps({"all": logic}))
    return out


def rust_engine(ev: dict[str, np.ndarray], n_clips: int, logic: list[str], threads: int = 0) -> tuple[np.ndarray, np.ndarray]:
    labels = [f"l{i}" for i in range(N_LABELS)]
    table = _core.EventLabels(clip=ev["clip"], label=ev["label"], onset=ev["onset"], offset=ev["offset"], n_clips=n_clips,
                              rate=float(SAMPLE_RATE), labels=labels)
    return _core.annotate_csr(table, logic, None, threads)


reference_holds = holds  # the contract's reference reading (reasonaudio.contract.reference)


def python_reference(ev: dict[str, np.ndarray], n_clips: int, logic: list[str]) -> list[tuple[int, int]]:
    clips: list[list[dict[str, Any]]] = [[] for _ in range(n_clips)]
    for c, l, on, off in zip(ev["clip"].tolist(), ev["label"].tolist(), ev["onset"].tolist(), ev["offset"].tolist()):
        clips[c].append({"label": f"l{l}", "onset": on, "offset": off})
    pairs = []
    for q, text in enumerate(logic):
        parsed = json.loads(text)
        pairs.extend((q, c) for c in range(n_clips) if reference_holds(clips[c], parsed, SAMPLE_RATE))
    return pairs


def polars_vectorised(ev: dict[str, np.ndarray], n_clips: int, logic: list[str]) -> pl.DataFrame:
    """Joins instead of loops: satisfied (query, constraint, clip) triples per constraint kind,
    then a clip is relevant when it satisfies all positive constraints and no `not`."""
    events = pl.DataFrame(
        {"clip": ev["clip"], "label": pl.Series([f"l{i}" for i in ev["label"]]), "on": ev["onset"], "off": ev["offset"]}
    ).with_columns(dur=(pl.col("off") - pl.col("on")) / SAMPLE_RATE)
    rows = []
    for q, text in enumerate(logic):
        for k, constraint in enumerate(json.loads(text)["all"]):
            ((kind, arg),) = constraint.items()
            row = {"q": q, "k": k, "kind": kind, "a": None, "b": None, "lo": None, "hi": None}
            if kind in ("has", "not"):
                row["a"] = arg
            elif kind in ("before", "overlap"):
                row["a"], row["b"] = arg
            else:
                row["a"], row["lo"], row["hi"] = arg["label"], arg.get("min_s"), arg.get("max_s")
            rows.append(row)
    cons = pl.DataFrame(rows, schema={"q": pl.Int64, "k": pl.Int64, "kind": pl.String, "a": pl.String, "b": pl.String, "lo": pl.Float64, "hi": pl.Float64})
    of = lambda kind: cons.filter(pl.col("kind") == kind)  # noqa: E731
    x = events.rename({"label": "a"})
    y = events.select("clip", pl.col("label").alias("b"), pl.col("on").alias("y_on"), pl.col("off").alias("y_off"))
    has = of("has").join(x, on="a")
    pairs = lambda kind: of(kind).join(x, on="a").join(y, on=["clip", "b"])  # noqa: E731
    before = pairs("before").filter(pl.col("off") <= pl.col("y_on"))
    overlap = pairs("overlap").filter(pl.min_horizontal("off", "y_off") - pl.max_horizontal("on", "y_on") > 0)
    duration = of("duration").join(x, on="a").filter(
        (pl.col("lo").is_null() | (pl.col("dur") >= pl.col("lo"))) & (pl.col("hi").is_null() | (pl.col("dur") <= pl.col("hi")))
    )
    satisfied = pl.concat([t.select("q", "k", "clip") for t in (has, before, overlap, duration)]).unique()
    n_positive = cons.filter(pl.col("kind") != "not").group_by("q").agg(n=pl.len())
    candidates = (
        satisfied.group_by("q", "clip").agg(n=pl.len()).join(n_positive, on=["q", "n"]).select("q", "clip")
    )
    no_positive = cons.select("q").unique().join(n_positive, on="q", how="anti")
    if no_positive.height:
        all_clips = pl.DataFrame({"clip": np.arange(n_clips, dtype=np.uint32)})
        candidates = pl.concat([candidates, no_positive.join(all_clips, how="cross")])
    violations = of("not").join(x, on="a").select("q", "clip").unique()
    return candidates.join(violations, on=["q", "clip"], how="anti").sort("q", "clip")


def best_of(fn, repeat: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    return best, result


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def compare(n_clips: int, n_queries: int, reference_queries: int) -> None:
    ev = synthetic_events(n_clips)
    logic = synthetic_queries(ev, n_clips, n_queries)
    rust_engine(ev, n_clips, logic)  # warm the thread pool
    t_rust, (indptr, clips) = best_of(lambda: rust_engine(ev, n_clips, logic), 20)
    t_rust1, _ = best_of(lambda: rust_engine(ev, n_clips, logic, threads=1), 10)
    rust_pairs = np.stack([np.repeat(np.arange(n_queries), np.diff(indptr).astype(np.int64)), clips.astype(np.int64)], 1)

    events_frame = pl.DataFrame({"clip_id": ev["clip"], "label": [f"l{i}" for i in ev["label"]], "onset_sample": ev["onset"], "offset_sample": ev["offset"]})
    queries_frame = pl.DataFrame({"query_id": [f"q{i}" for i in range(n_queries)], "logic": logic})
    from reasonaudio.relevance import annotate

    t_api, qrels = best_of(lambda: annotate(events_frame, queries_frame, sample_rate=SAMPLE_RATE), 3)
    assert qrels.height == len(rust_pairs)

    t_polars, vec = best_of(lambda: polars_vectorised(ev, n_clips, logic), 3)
    assert np.array_equal(vec.select("q", "clip").to_numpy().astype(np.int64), rust_pairs), "polars disagrees with Rust"

    sub = logic[:reference_queries]
    t_ref_sub, ref = best_of(lambda: python_reference(ev, n_clips, sub), 1)
    n_sub = int(indptr[reference_queries])
    assert ref == [tuple(p) for p in rust_pairs[:n_sub].tolist()], "Python reference disagrees with Rust"
    t_ref = t_ref_sub * n_queries / reference_queries

    print(f"== {n_clips:,} clips x {n_queries:,} queries ({len(ev['clip']):,} events, {len(rust_pairs):,} relevant pairs)")
    print(f"  rust engine (all cores)          {t_rust * 1e3:9.2f} ms   (best of 20)")
    print(f"  rust engine (1 thread)           {t_rust1 * 1e3:9.2f} ms")
    print(f"  reasonaudio.relevance (polars io) {t_api * 1e3:9.2f} ms   (encode ids + engine + qrels frame)")
    print(f"  polars vectorised joins          {t_polars * 1e3:9.2f} ms   ({t_polars / t_rust:,.0f}x rust)")
    print(
        f"  plain Python reference           {t_ref * 1e3:9.0f} ms   ({t_ref / t_rust:,.0f}x rust; timed on "
        f"{reference_queries} queries = {t_ref_sub:.2f} s, extrapolated x{n_queries / reference_queries:.0f})"
    )
    print("  all three agree on every pair (Python reference on its subset)")


def rust_only(n_clips: int, n_queries: int) -> None:
    t0 = time.perf_counter()
    ev = synthetic_events(n_clips)
    logic = synthetic_queries(ev, n_clips, n_queries)
    t_gen = time.perf_counter() - t0
    rss_before = peak_rss_mib()
    t_rust, (indptr, clips) = best_of(lambda: rust_engine(ev, n_clips, logic), 3)
    rss_after = peak_rss_mib()
    n_events = len(ev["clip"])
    input_mib = sum(a.nbytes for a in ev.values()) / 2**20
    print(
        f"== rust engine, {n_clips:,} clips x {n_queries:,} queries ({n_events:,} events, {input_mib:.0f} MiB input): "
        f"{t_rust:.3f} s (best of 3), {int(indptr[-1]):,} pairs ({clips.nbytes / 2**20:.0f} MiB CSR), "
        f"peak RSS {rss_after:.0f} MiB (before engine {rss_before:.0f} MiB; corpus generated in {t_gen:.1f} s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the 10k x 1k comparison")
    parser.add_argument("--rust-only", nargs=2, type=int, metavar=("CLIPS", "QUERIES"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rust_only:
        rust_only(*args.rust_only)
        return
    compare(10_000, 1_000, reference_queries=20)
    if not args.quick:
        # Separate processes so each peak RSS belongs to one scale.
        for n_clips, n_queries in ((100_000, 10_000), (1_000_000, 10_000)):
            subprocess.run([sys.executable, __file__, "--rust-only", str(n_clips), str(n_queries)], check=True)


if __name__ == "__main__":
    main()
