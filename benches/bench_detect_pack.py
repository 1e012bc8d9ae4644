"""The Debian pack's figure, end to end, on a split of the pack's recordings chosen by a seed.

    python benches/bench_detect_pack.py --dir DIR [--split-seed 5] [--recipe recordings] [--clips 2000]
        [--queries-per-task 100]

Every setting of the `recordings` recipe was chosen on recordings of one split (split seed 0: its
test recordings and the validation recordings of its training split). Another `--split-seed` draws
other test recordings, never heard by the detector this bench trains, so the recipe can be measured
once on it. Each stage runs the CLI and is skipped when its output exists (a run that stops resumes):

    DIR/pack            atoms pack debian --split-fraction 0.3 --seed SPLIT_SEED
    DIR/{RECIPE}.pt     detect train DIR/pack --recipe RECIPE (taggers and aiSFX head cached by their inputs)
    DIR/bench           build --atoms DIR/pack --exemplar-split test
    DIR/eval/{NAME}     eval DIR/bench --model random | detect:DIR/{RECIPE}.pt

and prints Acc@1 per task, Avg with its 95 % interval and two-option accuracy per model, the
overlap of the test split with split seed 0's test and validation recordings, and the CPU seconds
of each stage (DIR/stages.json). The whole run takes over an hour of CPU.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

from reasonaudio.io.outputs import write_atomic

TASKS = ("negation", "order", "overlap", "duration", "mix")
SPLIT_FRACTION = 0.3
VALID_SEED = 0  # every tagger of one ensemble holds out the same validation recordings


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Stages:
    """Runs each stage's command once, recording its wall and CPU seconds in DIR/stages.json."""

    def __init__(self, root: Path):
        self.path = root / "stages.json"
        self.done = json.loads(self.path.read_text()) if self.path.exists() else {}

    def run(self, name: str, output: Path, argv: list[str]) -> Path:
        if output.exists():
            print(f"[{name}] kept {output} (from an earlier run; remove it to run the stage again)", flush=True)
            return output
        print(f"[{name}] reasonaudio {' '.join(argv)}", flush=True)
        wall, cpu = time.perf_counter(), cpu_seconds()
        done = subprocess.run([sys.executable, "-m", "reasonaudio", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if done.returncode != 0 or not output.exists():
            raise SystemExit(f"[{name}] failed (exit {done.returncode}):\n{done.stderr[-4000:]}")
        self.done[name] = {"wall_s": round(time.perf_counter() - wall, 1), "cpu_s": round(cpu_seconds() - cpu, 1), "argv": argv}
        write_atomic(self.path, json.dumps(self.done, indent=1) + "\n")
        return output


def test_recordings(pack: Path) -> set[str]:
    from reasonaudio.atoms import AtomLibrary
    from reasonaudio.atoms.exemplars import select_split

    return set(select_split(AtomLibrary.open(pack), "test").sources)


def earlier_choices(root: Path, stages: Stages) -> set[str]:
    """Split seed 0's test recordings and the validation recordings of its training split: the
    recordings every setting of the recordings recipe was chosen on (docs/results/detect.md)."""
    from reasonaudio.atoms import AtomLibrary
    from reasonaudio.detect.train import TrainConfig, open_library, split_validation

    pack0 = stages.run("pack_split0", root / "pack_split0", ["atoms", "pack", "debian", "--out", str(root / "pack_split0"),
                                                             "--split-fraction", str(SPLIT_FRACTION), "--seed", "0"])
    train = open_library(str(pack0), AtomLibrary.open(pack0).sample_rate)
    _, held_out, _ = split_validation(train, str(pack0), TrainConfig().valid_fraction, VALID_SEED)
    return test_recordings(pack0) | set(held_out.sources if held_out is not None else [])


def summary(results: Path) -> dict:
    r = json.loads((results / "results.json").read_text())
    acc, two = r["summary"]["acc@1"], r["two_option"]["accuracy"]["Avg"]
    return {"acc@1": {t: acc[t]["mean"] for t in (*TASKS, "Avg")}, "acc@1_ci": acc["Avg"]["ci"], "two_option": two["mean"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", type=Path, required=True)
    ap.add_argument("--split-seed", type=int, default=5, help="seed of the pack's test split (0: the one every choice was made on)")
    ap.add_argument("--recipe", default="recordings", help="the detect train recipe (default recordings)")
    ap.add_argument("--clips", type=int, default=2000)
    ap.add_argument("--queries-per-task", type=int, default=100)
    args = ap.parse_args()
    root = args.dir
    root.mkdir(parents=True, exist_ok=True)
    stages = Stages(root)

    pack = stages.run("pack", root / "pack", ["atoms", "pack", "debian", "--out", str(root / "pack"),
                                              "--split-fraction", str(SPLIT_FRACTION), "--seed", str(args.split_seed)])
    name = Path(args.recipe).stem
    model = stages.run(f"train_{name}", root / f"{name}.pt",
                       ["detect", "train", str(pack), "--recipe", args.recipe, "--out", str(root / f"{name}.pt"), "--quiet"])
    models = {name: model}
    bench = stages.run("build", root / "bench", ["build", "--atoms", str(pack), "--out", str(root / "bench"), "--clips", str(args.clips),
                                                  "--queries-per-task", str(args.queries_per_task), "--exemplar-split", "test", "--quiet"])
    rows = {}
    for name, spec in [("random", "random"), *((n, f"detect:{m}") for n, m in models.items())]:
        out = root / "eval" / name.replace("+", "_")
        rows[name] = summary(stages.run(f"eval_{name}", out, ["eval", str(bench), "--model", spec, "--out", str(out)]))

    tested = test_recordings(pack)
    seen = earlier_choices(root, stages) if args.split_seed != 0 else tested
    print(f"\nsplit seed {args.split_seed}: {len(tested)} test recordings, {len(tested & seen)} of them among the "
          f"{len(seen)} recordings earlier choices were made on (split seed 0's test and validation)")
    print(f"{'model':28s} " + " / ".join(TASKS) + " | Avg Acc@1 [95 %] | two-option")
    for name, r in rows.items():
        a = r["acc@1"]
        print(f"{name:28s} " + " / ".join(f"{100 * a[t]:.1f}" for t in TASKS)
              + f" | {100 * a['Avg']:.1f} [{100 * r['acc@1_ci'][0]:.1f}, {100 * r['acc@1_ci'][1]:.1f}] | {100 * r['two_option']:.1f}")
    print("\nCPU seconds per stage (this run or an earlier one):")
    for name, s in stages.done.items():
        print(f"  {name:22s} {s['cpu_s']:9.1f} s CPU  {s['wall_s']:9.1f} s wall")
    write_atomic(root / "summary.json", json.dumps({"split_seed": args.split_seed, "test_recordings": len(tested),
                                                    "seen_before": len(tested & seen), "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
