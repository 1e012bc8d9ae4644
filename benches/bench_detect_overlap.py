"""Cheap ranking levers for the overlap task, measured on a development benchmark.

    python benches/bench_detect_overlap.py DEV_BENCH --model MODEL.pt [--out levers.json]

Run on a benchmark other than the one reported (e.g. `reasonaudio build --out dev --seed 7
--clips 2000 --queries-per-task 40`): the lever is chosen here, then confirmed elsewhere. Detects
once (keeping the median-filtered frame scores), then ranks the same detections several ways:

- `votes 0.3/0.5/0.7`: the ranking before this lever (votes at 0.3/0.5/0.7, then the soft truth value);
- `coactive soft`: the soft factor of `overlap A,B` is the highest frame-wise co-activation
  max_t min(p_A(t), p_B(t)) instead of p_A p_B s(gap of the main events);
- `soft only (overlap)`: overlap queries ranked by the soft value alone (votes ignored);
- `coactive soft only (overlap)`: both;
- `+ thresholds 0.1, 0.2`: the engine also votes at two low thresholds (a masked sound's
  probability rarely reaches 0.3);
- `… coactive soft`: both;
- `… + louder sound (shipped)`: the overlap factor is sqrt(co-activation x the louder sound's
  presence), the ranking of `detect.rank` now.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from reasonaudio.detect.infer import EventIndex, detect
from reasonaudio.detect.model import Detector
from reasonaudio.detect.rank import engine_votes, main_events, overlap_pairs, parse_queries, soft_truth
from reasonaudio.evaluation.run import evaluate
from reasonaudio.io.benchmark import load_benchmark

from _detect_common import Fixed, events_at_thresholds  # benches/ is the script's folder, first on sys.path


def soft_truth_coactive_alone(logic, presence, on, off, label_index, coactive):
    """`detect.rank.soft_truth` with an overlap's factor the co-activation alone, without the louder
    sound's presence: the ranking this bench compares the shipped one against."""
    if coactive is None:
        return soft_truth(logic, presence, on, off, label_index, None)
    crowded = {}
    for con in logic["all"]:
        if "overlap" in con:
            a, b = sorted(label_index[x] for x in con["overlap"])
            if (a, b) in coactive:
                crowded[(a, b)] = coactive[(a, b)]
    plain = {"all": [c for c in logic["all"] if not ("overlap" in c and tuple(sorted(label_index[x] for x in c["overlap"])) in crowded)]}
    value = soft_truth(plain, presence, on, off, label_index, None) if plain["all"] else np.ones(presence.shape[0])
    for co in crowded.values():
        value = value * co.astype(np.float64)
    return value


def scores(index: EventIndex, logics, coactive: bool, soft_only_overlap: bool, louder: bool = False) -> np.ndarray:
    label_index = {lab: i for i, lab in enumerate(index.labels)}
    known = [i for i, lg in enumerate(logics) if lg is not None]
    out = np.zeros((len(logics), len(index.clip_ids)), np.float32)
    votes = engine_votes(index, [logics[i] for i in known])
    on, off = main_events(index)
    k = len(index.thresholds)
    for row, q in enumerate(known):
        logic = logics[q]
        co = index.coactive if coactive else None
        soft = (soft_truth(logic, index.presence, on, off, label_index, co) if louder
                else soft_truth_coactive_alone(logic, index.presence, on, off, label_index, co))
        is_overlap = any("overlap" in c for c in logic["all"])
        v = np.zeros_like(soft) if (soft_only_overlap and is_overlap) else votes[row]
        out[q] = ((v + 0.999 * np.clip(soft, 0.0, 1.0)) / (k + 1)).astype(np.float32)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench", type=Path)
    ap.add_argument("--model", required=True)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    bench = load_benchmark(args.bench)
    d = Detector.load(args.model)
    t0 = time.perf_counter()
    logics, _ = parse_queries(bench.queries["text"].to_list(), d.labels, d.phrases)
    index = detect(d, bench.audio_paths(), bench.clips["clip_id"].to_list(), keep_scores=True, progress=False,
                   pairs=overlap_pairs(logics, d.labels))
    print(f"detection {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    index = events_at_thresholds(index, d.post, (0.3, 0.5, 0.7))
    low = events_at_thresholds(index, d.post, (0.1, 0.2, 0.3, 0.5, 0.7))
    rows = {}
    for name, idx, co, so, loud in [("votes 0.3/0.5/0.7", index, False, False, False), ("coactive soft", index, True, False, False),
                                    ("soft only (overlap)", index, False, True, False),
                                    ("coactive soft only (overlap)", index, True, True, False),
                                    ("+ thresholds 0.1, 0.2", low, False, False, False),
                                    ("+ thresholds 0.1, 0.2, coactive soft", low, True, False, False),
                                    ("+ thresholds 0.1, 0.2, coactive soft + louder sound (shipped)", low, True, False, True)]:
        r = evaluate(bench, Fixed(scores(idx, logics, co, so, loud)), n_boot=0, progress=False)
        acc = {t: round(100 * v["mean"], 1) for t, v in r.summary["acc@1"].items()}
        two = {t: round(100 * v["mean"], 1) for t, v in r.two_option["accuracy"].items()}
        rows[name] = {"acc@1": acc, "two_option": two}
        print(f"{name:62s} Acc@1 {' '.join(f'{t} {v}' for t, v in acc.items())} | two-option Avg {two.get('Avg')}")
    if args.out:
        from reasonaudio.io.outputs import json_kind, write_output

        fmt = "reasonaudio-detect-overlap-levers"
        write_output(args.out, json_kind("overlap levers", fmt), json.dumps({"format": fmt, "bench": str(args.bench),
                     "model": str(args.model), "rows": rows}, indent=2), inputs=[args.bench, args.model], force=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
