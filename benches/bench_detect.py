"""Detect-then-reason on a benchmark: detection speed, retrieval beside true events, SED metrics,
and which perception errors cost which task.

    python benches/bench_detect.py BENCH [--model procedural|MODEL.pt] [--out runs/detect_bench.json]

    python benches/bench_detect.py probe LIB [--model MODEL.pt] [--out probe.json]

The probe asks what a front end buys on *unheard recordings*, before any training: every
recording of a library with a train/test split is embedded (log-mel mean and deviation; the
pretrained aiSFX CNN's embeddings, max over time as aiSFX pools them; a trained tagger's frame
embeddings, averaged) and each test recording is named by the nearest label prototype (cosine to
the mean of its train recordings, features standardised on the train recordings).

Detection time is measured on BENCH and extrapolated linearly in audio hours to the default corpus
(10k clips, about 40 h). Retrieval figures come from `reasonaudio.evaluation.run` with the same scores the
`detect:` adapter produces, beside `structured` (the same logic on the true events) and the
engine's 0/1 verdict at the model's threshold alone (what the graded score adds).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import polars as pl

from reasonaudio.io.benchmark import load_benchmark
from reasonaudio.detect.errors import attribute
from reasonaudio.detect.infer import detect
from reasonaudio.detect.metrics import sed_metrics
from reasonaudio.detect.model import Detector
from reasonaudio.detect.rank import engine_votes, parse_queries, score_matrix
from reasonaudio.detect.train import detector_for
from reasonaudio.evaluation.run import evaluate
from reasonaudio.io.outputs import write_atomic
from reasonaudio.retrieval.base import ScoringModel, load_model

DEFAULT_CORPUS_H = 40.0


class Fixed(ScoringModel):
    def __init__(self, scores: np.ndarray, spec: str):
        self.scores, self.spec = scores, spec

    def score(self, queries, clips):
        return self.scores


def probe(argv: list[str]) -> int:
    import torch

    from reasonaudio.atoms import AtomLibrary
    from reasonaudio.detect.features import FeatureConfig, LogMel

    ap = argparse.ArgumentParser(prog="bench_detect.py probe")
    ap.add_argument("library", type=Path)
    ap.add_argument("--model", type=Path, default=None)
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--no-aisfx", action="store_true", help="leave out the aiSFX CNN (its CPU cost)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    lib = AtomLibrary.load(args.library, sample_rate=16000)
    if not lib.splits:
        raise SystemExit(f"{args.library}: the probe needs a library with a train/test split")
    train = [i for i, s in enumerate(lib.splits) if s == "train"]
    test = [i for i, s in enumerate(lib.splits) if s == "test" and lib.labels[i] in {lib.labels[j] for j in train}]
    mel = LogMel(FeatureConfig())
    reps = {}

    def logmel(x):
        m = mel(torch.from_numpy(x[None]))[0].numpy()
        return np.concatenate([m.mean(axis=1), m.std(axis=1)])

    reps["log-mel mean+std (128-d)"] = logmel
    try:
        if args.no_aisfx:
            raise RuntimeError("--no-aisfx")
        from reasonaudio.detect.pretrained import AisfxFrontEnd

        front = AisfxFrontEnd(FeatureConfig())
        reps["aiSFX CNN, max over time (512-d)"] = lambda x: front.embed(torch.from_numpy(x[None]))[0].max(dim=1).values.numpy()
    except Exception as err:  # noqa: BLE001 - the probe reports what it could not run
        print(f"aiSFX skipped: {err}", file=sys.stderr)
    if args.model is not None:
        det = Detector.load(args.model)
        net = det.net()
        from reasonaudio.detect.model import make_front_end

        fe = make_front_end(det.net_config, det.features)

        def tagger(x):
            with torch.inference_mode():
                return net.features(fe(torch.from_numpy(x[None])))[0].mean(dim=1).numpy()

        reps[f"trained tagger embeddings ({args.model.name})"] = tagger
    out = {"library": str(args.library), "train_recordings": len(train), "test_recordings": len(test),
           "labels": len(set(lib.labels)), "chance_acc": round(1 / len(set(lib.labels[j] for j in train)), 4), "results": {}}
    for name, fn in reps.items():
        t0 = time.perf_counter()
        with torch.inference_mode():
            vec = np.stack([np.asarray(fn(lib.audio(i)), np.float64) for i in range(len(lib))])
        mu, sd = vec[train].mean(axis=0), vec[train].std(axis=0) + 1e-6
        z = (vec - mu) / sd
        z /= np.linalg.norm(z, axis=1, keepdims=True) + 1e-12
        names = sorted({lib.labels[j] for j in train})
        protos = np.stack([z[[j for j in train if lib.labels[j] == n]].mean(axis=0) for n in names])
        protos /= np.linalg.norm(protos, axis=1, keepdims=True) + 1e-12
        sims = z[test] @ protos.T
        order = np.argsort(-sims, axis=1)
        truth = np.array([names.index(lib.labels[i]) for i in test])
        acc1 = float(np.mean(order[:, 0] == truth))
        acc5 = float(np.mean([t in o[:5] for t, o in zip(truth, order)]))
        out["results"][name] = {"acc@1": round(acc1, 4), "acc@5": round(acc5, 4), "seconds": round(time.perf_counter() - t0, 1)}
        print(f"{name}: test recordings named by nearest train prototype: Acc@1 {100 * acc1:.1f}%, Acc@5 {100 * acc5:.1f}% "
              f"({len(test)} recordings, chance {100 * out['chance_acc']:.1f}%; {out['results'][name]['seconds']} s)")
    if args.out:
        write_atomic(args.out, json.dumps(out, indent=2) + "\n")
    return 0


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "probe":
        return probe(sys.argv[2:])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench", type=Path)
    ap.add_argument("--model", default="procedural", help="model file or atom library (cached training)")
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--no-psds", action="store_true")
    args = ap.parse_args()

    bench = load_benchmark(args.bench)
    detector = detector_for(args.model, log=lambda m: print(m, file=sys.stderr))[0]
    clip_ids = bench.clips["clip_id"].to_list()
    paths = bench.audio_paths()

    t0 = time.perf_counter()
    index = detect(detector, paths, clip_ids, keep_scores=True, progress=False)
    t_detect = time.perf_counter() - t0
    audio_h = float(index.durations_s.sum()) / 3600
    t0 = time.perf_counter()
    logics, bad = parse_queries(bench.queries["text"].to_list(), detector.labels, detector.phrases)
    scores = score_matrix(index, logics)
    t_rank = time.perf_counter() - t0
    # 0/1 verdict at the model's threshold alone, through the same engine
    from reasonaudio.detect.infer import EventIndex

    single = EventIndex(**{**index.__dict__, "thresholds": (index.thresholds[index.operating],),
                           "events": [index.events[index.operating]], "operating": 0, "scores": None})
    known = [i for i, lg in enumerate(logics) if lg is not None]
    verdict = np.zeros_like(scores)
    verdict[known] = engine_votes(single, [logics[i] for i in known]).astype(np.float32)

    runs = {}
    for spec, model in (
        ("detect (graded)", Fixed(scores, "detect")),
        ("detect (0/1 engine verdict at threshold 0.5)", Fixed(verdict, "detect-binary")),
        ("structured (true events)", load_model("structured")),
    ):
        res = evaluate(bench, model, n_boot=0, progress=False)
        runs[spec] = res

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        sed = sed_metrics(index, bench.events, psds=not args.no_psds)
        t_sed = time.perf_counter() - t0

    # perception errors behind every Acc@1 miss and every lost two-option pair
    res = runs["detect (graded)"]
    qid_pos = {q: i for i, q in enumerate(bench.queries["query_id"].to_list())}
    tasks = bench.queries["task"].to_list()
    top1 = res.rankings.filter(pl.col("rank") == 1)
    acc_cases = [(tasks[qid_pos[q]], logics[qid_pos[q]], c, True)
                 for q, c, rel in top1.select("query_id", "clip_id", "relevant").iter_rows() if not rel and logics[qid_pos[q]]]
    # ... and why the best-ranked relevant clip of each missed query was not on top
    clip_pos = {c: i for i, c in enumerate(clip_ids)}
    relevant = bench.qrels.group_by("query_id").agg(pl.col("clip_id"))
    rel_of = dict(zip(relevant["query_id"].to_list(), relevant["clip_id"].to_list()))
    best_rel_cases = []
    for q, rel in top1.select("query_id", "relevant").iter_rows():
        if rel or not logics[qid_pos[q]] or q not in rel_of:
            continue
        row = qid_pos[q]
        best = max(rel_of[q], key=lambda c: scores[row, clip_pos[c]])
        best_rel_cases.append((tasks[row], logics[row], best, False))
    pair_cases = []
    for row in res.two_option_pairs.iter_rows(named=True):
        if row["positive_score"] > row["negative_score"]:
            continue
        lg = logics[qid_pos[row["query_id"]]]
        if lg:
            pair_cases.append((row["task"], lg, row["negative_clip_id"], True))
            pair_cases.append((row["task"], lg, row["positive_clip_id"], False))
    detected = index.table()
    errors = {
        "acc@1_misses_top_clip": attribute(bench.events, detected, clip_ids, acc_cases),
        "acc@1_misses_best_relevant_clip": attribute(bench.events, detected, clip_ids, best_rel_cases),
        "two_option_losses": attribute(bench.events, detected, clip_ids, pair_cases),
    }

    def task_row(r):
        acc = r.summary["acc@1"]
        two = r.two_option.get("accuracy", {})
        return {t: {"acc@1": round(100 * acc[t]["mean"], 1), "two_option": round(100 * two[t]["mean"], 1) if t in two else None}
                for t in acc}

    report = {
        "benchmark": str(args.bench),
        "clips": len(clip_ids),
        "queries": len(logics),
        "unparsed_queries": len(bad),
        "audio_hours": round(audio_h, 2),
        "detect_seconds": round(t_detect, 1),
        "detect_x_realtime": round(audio_h * 3600 / t_detect, 1),
        "default_corpus_detect_minutes_extrapolated": round(t_detect * DEFAULT_CORPUS_H / audio_h / 60, 1),
        "rank_seconds": round(t_rank, 2),
        "sed_metrics_seconds": round(t_sed, 1),
        "model": {"library": detector.library.given, "training": detector.training.to_dict()},
        "retrieval": {name: task_row(r) for name, r in runs.items()},
        "sed": {k: ({kk: vv for kk, vv in v.items() if kk != "per_label"} if isinstance(v, dict) else v) for k, v in sed.items()},
        "sed_per_label_event_f1_worst": sorted(
            ((lab, v["f1"], v["n_ref"]) for lab, v in sed["event_based"]["per_label"].items() if v["n_ref"]), key=lambda x: x[1]
        )[:15],
        "perception_errors": errors,
    }
    text = json.dumps(report, indent=2)
    if args.out:
        write_atomic(args.out, text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
