"""Does the detector hear sounds or recordings? Leave one source package out.

    python benches/bench_detect_cross_source.py PACK EXTRA --hold-out 0ad-data --dir DIR
    python benches/bench_detect_cross_source.py PACK EXTRA --hold-out 0ad-data --dir DIR --models A.pt B.pt [--out x.json]

PACK is `atoms pack debian --split-fraction 0.3`, EXTRA `atoms pack debian-extra`. The first call
writes DIR/train_extra (EXTRA without the held-out package's recordings) and DIR/bench (a
benchmark of only the held-out package's recordings of the pack's labels: a source no recording of
which was heard by a tagger trained on PACK, or on PACK and DIR/train_extra), then prints the
training commands to compare. The second evaluates each model and `random` on DIR/bench: Acc@1 per
task, Avg with its 95 % interval, two-option accuracy.

The pack's own held-out split mostly holds recordings of the same packages, often the same
authors and sessions, as its training split; this measures the other thing a user's recordings
are: another source. No reserved package (RESERVED_PACKAGES) is used.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

from reasonaudio.atoms import AtomLibrary
from reasonaudio.evaluation.run import evaluate
from reasonaudio.io.outputs import write_atomic
from reasonaudio.io.benchmark import load_benchmark
from reasonaudio.retrieval.base import load_model

TASKS = ("negation", "order", "overlap", "duration", "mix")


def prepare(pack: str, extra: str, package: str, root: Path, clips: int, queries: int) -> Path:
    train_extra, held, bench = root / "train_extra", root / "held_out_lib", root / "bench"
    if bench.is_dir():
        return bench
    lib = AtomLibrary.open(extra)
    vocabulary = set(AtomLibrary.open(pack).labels)
    from_package = [s.startswith(f"debian:{package}=") or s.startswith(f"debian:{package}:") for s in lib.sources]
    if not any(from_package):
        raise SystemExit(f"{extra}: no recording of package {package}")
    lib.subset([i for i, f in enumerate(from_package) if not f]).save(train_extra)
    keep = [i for i, f in enumerate(from_package) if f and lib.labels[i] in vocabulary]
    out = lib.subset(keep)
    replace(out, splits=["test"] * len(out)).save(held)
    done = subprocess.run([sys.executable, "-m", "reasonaudio", "build", "--atoms", str(held), "--out", str(bench), "--clips", str(clips),
                           "--queries-per-task", str(queries), "--exemplar-split", "test", "--quiet"], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    print(f"{bench}: {len(out)} recordings of {len(set(out.labels))} labels from {package} only; {clips} clips, {5 * queries} queries")
    print("train the taggers to compare, e.g.:")
    print(f"  reasonaudio detect train {pack} --steps 2400 --spec-augment --dropout 0.3 --out pack_only.pt")
    print(f"  reasonaudio detect train {pack} {train_extra} --steps 2400 --spec-augment --dropout 0.3 --out pack_extra.pt")
    return bench


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("pack")
    ap.add_argument("extra")
    ap.add_argument("--hold-out", default="0ad-data", help="the source package left out of training and tested on")
    ap.add_argument("--dir", type=Path, required=True)
    ap.add_argument("--clips", type=int, default=1000)
    ap.add_argument("--queries-per-task", type=int, default=40)
    ap.add_argument("--models", nargs="*", default=[], help="detector model files (detect: adapter)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    bench_dir = prepare(args.pack, args.extra, args.hold_out, args.dir, args.clips, args.queries_per_task)
    if not args.models:
        return 0
    bench = load_benchmark(bench_dir)
    rows = {}
    for spec in ["random", *(f"detect:{m}" for m in args.models)]:
        res = evaluate(bench, load_model(spec), progress=False)
        acc, two = res.summary["acc@1"], res.two_option["accuracy"]
        rows[spec] = {"acc@1": {t: acc[t]["mean"] for t in (*TASKS, "Avg")}, "acc@1_ci": acc["Avg"]["ci"], "two_option": two["Avg"]["mean"],
                      "two_option_ci": two["Avg"]["ci"]}
        per = " / ".join(f"{100 * acc[t]['mean']:.1f}" for t in TASKS)
        print(f"{spec:40s} {per} | Avg {100 * acc['Avg']['mean']:.1f} [{100 * acc['Avg']['ci'][0]:.1f}, {100 * acc['Avg']['ci'][1]:.1f}]"
              f" | two-option {100 * two['Avg']['mean']:.1f}")
    if args.out:
        write_atomic(args.out, json.dumps({"hold_out": args.hold_out, "bench": str(bench_dir), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
