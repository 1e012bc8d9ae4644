"""Is the detector's remaining error calibration (thresholds, boundaries) or missed sounds?

    python benches/bench_detect_calibration.py DEV_BENCH [--model procedural|MODEL.pt]

Run on a benchmark other than the one reported (e.g. `reasonaudio build --out dev --seed 7
--clips 2000 --queries-per-task 40`). Prints the onset/offset error of detected events that
overlap a true event of the same label, then the retrieval figures when the engine votes at 3, 5
or 9 thresholds and when every event is widened by 100 ms (events re-derived from the stored,
median-filtered frame scores).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import polars as pl

from reasonaudio.io.benchmark import load_benchmark
from reasonaudio.detect.infer import EventIndex, detect
from reasonaudio.detect.rank import parse_queries, score_matrix
from reasonaudio.detect.train import detector_for
from reasonaudio.evaluation.run import evaluate

from _detect_common import Fixed, events_at_thresholds  # benches/ is the script's folder, first on sys.path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench", type=Path)
    ap.add_argument("--model", default="procedural")
    args = ap.parse_args()
    bench = load_benchmark(args.bench)
    d = detector_for(args.model)[0]
    index = detect(d, bench.audio_paths(), bench.clips["clip_id"].to_list(), keep_scores=True, progress=False)
    logics, _ = parse_queries(bench.queries["text"].to_list(), d.labels, d.phrases)

    det = index.table().select("clip_id", "label", pl.col("onset_s").alias("d_on"), pl.col("offset_s").alias("d_off"))
    m = bench.events.select("clip_id", "label", "onset_s", "offset_s").join(det, on=["clip_id", "label"])
    m = m.filter((pl.col("d_on") < pl.col("offset_s")) & (pl.col("d_off") > pl.col("onset_s")))
    on_err, off_err = m["d_on"] - m["onset_s"], m["d_off"] - m["offset_s"]
    print(f"matched {m.height} of {bench.events.height} true events; onset error median {on_err.median():+.3f} s "
          f"(mean {on_err.mean():+.3f}), offset error median {off_err.median():+.3f} s (mean {off_err.mean():+.3f})")

    def report(name: str, idx: EventIndex) -> None:
        r = evaluate(bench, Fixed(score_matrix(idx, logics)), n_boot=0, progress=False)
        acc = " ".join(f"{t} {100 * v['mean']:.1f}" for t, v in r.summary["acc@1"].items())
        two = r.two_option["accuracy"]["Avg"]["mean"]
        print(f"{name:42s} Acc@1 {acc} | two-option Avg {100 * two:.1f}")

    report("as detected (0.3/0.5/0.7)", index)
    for ths in [(0.3, 0.5, 0.7), (0.2, 0.35, 0.5, 0.65, 0.8), tuple(np.round(np.arange(0.1, 1.0, 0.1), 1))]:
        for ext in (0.0, 0.1):
            report(f"{len(ths)} thresholds, widened {ext:.1f} s", events_at_thresholds(index, d.post, ths, ext, keep_scores=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
