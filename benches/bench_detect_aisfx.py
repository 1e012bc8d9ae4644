"""What the pretrained aiSFX CNN buys at retrieval, beside a trained tagger, on unheard recordings.

    python benches/bench_detect_aisfx.py BENCH LIB [LIB2 …] --model MODEL.pt [--include-valid]
        [--head trained|prototypes] [--weights 0.3 0.5] [--tau 0.05] [--mixtures 4000] [--out x.json]

BENCH is built from recordings the tagger never heard (`--exemplar-split test`); LIB is the library
(or libraries) the tagger was trained on, whose training recordings give the aiSFX heads
(`detect.aisfx_heads.build`: the recordings held out for validation are left out unless
`--include-valid`, so a development build of them holds nothing any prototype came from).
Needs `pip install --no-deps aisfx`.

The probe (`bench_detect.py probe`) names whole, isolated recordings; here the question is the one
retrieval asks, inside mixtures, with one aiSFX pass per clip for every weight:

1. Retrieval. The heads' scores a (`AisfxHeads.scores`, on the tagger's frames: the trained head's
   per-label probabilities, or the softmax over labels of the cosine to the labels' prototypes)
   are mixed into the tagger's *median-filtered* probabilities p as the head mixes them
   (`AisfxHeads.mix`: (1 - w) p + w a, or (1 - w) p + w sqrt(p a)) and ranked as `detect:` ranks (same thresholds,
   votes and soft truth): the tagger alone, aiSFX alone (a), and each weight w. `detect aisfx`
   mixes the *raw* probabilities before the median filter, so `reasonaudio eval` of its model
   gives close but not identical figures (docs/detect.md has both). Acc@1 from
   `reasonaudio.evaluation.run.evaluate`, as `eval` reports it.
2. Naming the true events. Each event of BENCH's ground truth, cut at its true onset and offset
   inside its clip, is named by aiSFX (max over the segment's frames, nearest label prototype of
   the training recordings pooled the same way) and by the tagger (its mean probability over the
   segment), apart for sequential and overlapping clips.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl

from _detect_common import SCHEMA, Fixed
from reasonaudio.detect import torch_module, unit_rows
from reasonaudio.detect.infer import EventIndex, detect, read_mono
from reasonaudio.detect.model import Detector
from reasonaudio.detect.postprocess import events_of_clip
from reasonaudio.detect.rank import overlap_pairs, parse_queries, score_matrix
from reasonaudio.evaluation.run import evaluate
from reasonaudio.io.outputs import write_atomic
from reasonaudio.io.benchmark import load_benchmark

def rescored(index: EventIndex, post, transform) -> EventIndex:
    """`index` with presence, events and co-activations found again from transform(clip, frames)
    of its stored median-filtered frame scores."""
    n, c = len(index.clip_ids), len(index.labels)
    presence = np.zeros((n, c), np.float32)
    found = [[] for _ in index.thresholds]
    coactive = {pair: np.zeros(n, np.float32) for pair in (index.coactive or {})}
    flat = replace(post, median_frames=1)  # the stored scores are already smoothed
    for i, cid in enumerate(index.clip_ids):
        s = transform(cid, index.scores[cid].astype(np.float32))
        presence[i], per_t = events_of_clip(s, index.frame_s, float(index.durations_s[i]), flat, list(index.thresholds))
        for t, evs in enumerate(per_t):
            found[t].extend((i, lab, on, off, conf, 0.0) for lab, on, off, conf in evs)
        for a, b in coactive:
            coactive[(a, b)][i] = float(np.max(np.minimum(s[:, a], s[:, b]))) if len(s) else 0.0
    events = [pl.DataFrame(sorted(e, key=lambda r: (r[0], r[2], r[1])), schema=SCHEMA, orient="row") for e in found]
    return replace(index, presence=presence, events=events, coactive=coactive or None)


def main() -> int:
    from reasonaudio.detect.aisfx_heads import HEADS, AisfxHeads, HeadConfig, build, frame_times

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench", type=Path)
    ap.add_argument("library", nargs="+", help="the library (or libraries, in order) the model was trained on")
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--include-valid", action="store_true", help="also the recordings held out for validation (a final model)")
    ap.add_argument("--weights", type=float, nargs="+", default=[0.3, 0.5])
    ap.add_argument("--head", choices=HEADS, default=HEADS[0])
    ap.add_argument("--tau", type=float, default=0.05, help="--head prototypes")
    ap.add_argument("--mixtures", type=int, default=HeadConfig.mixtures, help="--head trained")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()

    bench = load_benchmark(args.bench)
    det = Detector.load(args.model)
    clip_ids = bench.clips["clip_id"].to_list()
    logics, _ = parse_queries(bench.queries["text"].to_list(), det.labels, det.phrases)
    t0 = time.perf_counter()
    index = detect(det, bench.audio_paths(), clip_ids, keep_scores=True, progress=False, pairs=overlap_pairs(logics, det.labels))
    t_tagger = time.perf_counter() - t0

    t0 = time.perf_counter()
    with_heads = build(det, list(args.library), head=args.head, tau=args.tau, include_valid=args.include_valid,
                       config=HeadConfig(mixtures=args.mixtures), progress=True)
    t_build = time.perf_counter() - t0
    heads = AisfxHeads(with_heads)
    known_mask = np.asarray(with_heads.aisfx["known"], bool)
    known = np.flatnonzero(known_mask)
    t0 = time.perf_counter()
    clip_emb = {cid: heads.embed(read_mono(p, det.features.sample_rate)[0]).astype(np.float16)
                for cid, p in zip(clip_ids, bench.audio_paths())}
    t_aisfx = time.perf_counter() - t0

    def aisfx_frames(cid: str, n_frames: int) -> np.ndarray:
        a = np.zeros((n_frames, len(det.labels)), np.float32)
        a[:, known] = heads.scores(clip_emb[cid].astype(np.float32), n_frames)
        return a

    variants = {"tagger alone": None, "aiSFX alone": lambda cid, s: aisfx_frames(cid, len(s))}
    for w in args.weights:
        weighted = copy.copy(heads)  # the same aiSFX network and head, another weight
        weighted.weight = w
        variants[f"tagger + aiSFX, w={w:g}"] = lambda cid, s, m=weighted: m.mix(s, aisfx_frames(cid, len(s)))
    retrieval = {}
    for name, transform in variants.items():
        idx = index if transform is None else rescored(index, det.post, transform)
        res = evaluate(bench, Fixed(score_matrix(idx, logics)), n_boot=0, progress=False)
        acc = res.summary["acc@1"]
        two = res.two_option.get("accuracy", {})
        retrieval[name] = {"acc@1": {t: round(100 * v["mean"], 1) for t, v in acc.items()},
                           "two_option": round(100 * two["Avg"]["mean"], 1) if "Avg" in two else None}

    # naming the true events inside their clips, by the recordings the heads were built from
    from reasonaudio.detect.train import trained_library

    label_index = {lab: i for i, lab in enumerate(det.labels)}
    lib = trained_library(det, list(args.library), include_valid=args.include_valid)
    train = [(lib.labels[i], heads.embed(lib.audio(i)).T) for i in range(len(lib))]
    rec = np.stack([e.max(axis=1) for _, e in train])
    rmu, rsd = rec.mean(axis=0), rec.std(axis=0) + 1e-6
    rec_protos = np.zeros((len(det.labels), rec.shape[1]), np.float32)
    for (lab, _), v in zip(train, rec):
        rec_protos[label_index[lab]] += unit_rows((v - rmu) / rsd)
    rec_protos = unit_rows(rec_protos)
    aisfx_frame_s = frame_times()[0]
    pattern = dict(zip(clip_ids, bench.clips["pattern"].to_list()))
    naming: dict[str, dict] = {}
    ev = bench.events.filter(pl.col("label").is_in(list(label_index)))
    for cid, lab, on, off in ev.select("clip_id", "label", "onset_s", "offset_s").iter_rows():
        e = clip_emb[cid].astype(np.float32).T
        a = min(int(on / aisfx_frame_s), e.shape[1] - 1)
        b = max(a + 1, int(np.ceil(off / aisfx_frame_s)))
        by_aisfx = int(np.argmax(np.where(known_mask, rec_protos @ unit_rows((e[:, a:b].max(axis=1) - rmu) / rsd), -2.0)))
        s = index.scores[cid].astype(np.float32)[int(on / index.frame_s) : int(off / index.frame_s) + 1]
        by_tagger = int(np.argmax(s.mean(axis=0))) if len(s) else -1
        row = naming.setdefault(pattern[cid], {"events": 0, "aiSFX": 0, "tagger": 0})
        row["events"] += 1
        row["aiSFX"] += by_aisfx == label_index[lab]
        row["tagger"] += by_tagger == label_index[lab]
    for row in naming.values():
        row["aiSFX"] = round(100 * row["aiSFX"] / row["events"], 1)
        row["tagger"] = round(100 * row["tagger"] / row["events"], 1)

    audio_s = float(index.durations_s.sum())
    report = {"benchmark": str(args.bench), "library": list(args.library), "model": str(args.model),
              "train_recordings": len(train), "head": args.head, "tau": args.tau, "include_valid": args.include_valid, "retrieval": retrieval, "naming_true_events_pct": naming,
              "seconds": {"heads_build": round(t_build, 1), "tagger_detect": round(t_tagger, 1), "aisfx_embed": round(t_aisfx, 1), "audio": round(audio_s, 1)},
              "aisfx_x_tagger": round(t_aisfx / t_tagger, 2)}
    tasks = [t for t in next(iter(retrieval.values()))["acc@1"]]
    print(f"{'Acc@1 %':<28}" + "".join(f"{t:>10}" for t in tasks) + f"{'two-option':>12}")
    for name, r in retrieval.items():
        print(f"{name:<28}" + "".join(f"{r['acc@1'][t]:>10.1f}" for t in tasks) + f"{r['two_option'] or 0:>12.1f}")
    for pat, row in naming.items():
        print(f"true events of {pat} clips named correctly: aiSFX {row['aiSFX']} %, tagger {row['tagger']} % ({row['events']} events)")
    print(f"aiSFX embedding {t_aisfx:.0f} s against the tagger's detection {t_tagger:.0f} s ({audio_s / 3600:.2f} h of audio, "
          f"{torch_module().get_num_threads()} torch threads)")
    text = json.dumps(report, indent=2)
    if args.out:
        write_atomic(args.out, text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
