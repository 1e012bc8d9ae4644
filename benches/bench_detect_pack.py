"""The Debian pack's bar, end to end, on a split of the pack's recordings chosen by a seed.

    python benches/bench_detect_pack.py --dir DIR [--split-seed 5] [--seeds 0 1] [--steps 2400]
        [--mixtures 4000] [--epochs 30] [--clips 2000] [--queries-per-task 100] [--no-aisfx]

Issue 21's bar: on `atoms pack debian --split-fraction 0.3`, a benchmark built from the `test`
recordings (`build --exemplar-split test`), Avg Acc@1 >= 55 % and two-option >= 80 %. Every
configuration of the detector was chosen on recordings of one split (split seed 0: its test
recordings and the validation recordings of its training split). Another `--split-seed` draws
other test recordings, never heard by the taggers this bench trains, so a configuration chosen
before can be measured once on it. Each stage runs the CLI and is skipped when its output exists
(a run that stops resumes):

    DIR/pack                  atoms pack debian --split-fraction 0.3 --seed SPLIT_SEED
    DIR/tagger{S}.pt          detect train DIR/pack --steps STEPS (TAGGER_RECIPE) --seed S --valid-seed 0
    DIR/tagger{S}_p.pt        detect prototypes … --mode both --include-valid
    DIR/ensemble.pt           detect ensemble of the seeds' files (two or more seeds)
    DIR/ensemble_aisfx.pt     detect aisfx DIR/ensemble.pt DIR/pack --include-valid (the trained head)
    DIR/tagger{S}_p_aisfx.pt  the same head on the first seed's tagger alone (--head-from, not built again)
    DIR/bench                 build --atoms DIR/pack --exemplar-split test
    DIR/eval/{NAME}           eval DIR/bench --model random | detect:…

and prints Acc@1 per task, Avg with its 95 % interval and two-option accuracy per model, the
overlap of the test split with split seed 0's test and validation recordings (the recordings
every earlier choice was made on), and the CPU seconds of each stage (DIR/stages.json).
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
#: The taggers behind the pack's figures since stop 31 (docs/detect.md): the half-time 2-D stem,
#: SpecAugment, dropout 0.3, 40 % overlapping training clips.
TAGGER_RECIPE = ("--spec-augment", "--dropout", "0.3", "--stem", "2d-halftime", "--overlap-fraction", "0.4")
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
    recordings every configuration in docs/detect.md was chosen on."""
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
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1], help="tagger seeds (two or more: an ensemble)")
    ap.add_argument("--steps", type=int, default=2400)
    ap.add_argument("--mixtures", type=int, default=4000, help="training mixtures of the aiSFX head")
    ap.add_argument("--epochs", type=int, default=30, help="epochs of the aiSFX head")
    ap.add_argument("--clips", type=int, default=2000)
    ap.add_argument("--queries-per-task", type=int, default=100)
    ap.add_argument("--no-aisfx", action="store_true", help="leave out the aiSFX head (it needs `pip install --no-deps aisfx`)")
    args = ap.parse_args()
    root = args.dir
    root.mkdir(parents=True, exist_ok=True)
    stages = Stages(root)

    pack = stages.run("pack", root / "pack", ["atoms", "pack", "debian", "--out", str(root / "pack"),
                                              "--split-fraction", str(SPLIT_FRACTION), "--seed", str(args.split_seed)])
    models: dict[str, Path] = {}
    for s in args.seeds:
        tagger = stages.run(f"train_seed{s}", root / f"tagger{s}.pt",
                            ["detect", "train", str(pack), "--steps", str(args.steps), *TAGGER_RECIPE, "--seed", str(s),
                             "--valid-seed", str(VALID_SEED), "--out", str(root / f"tagger{s}.pt"), "--quiet"])
        models[f"seed{s}+prototypes"] = stages.run(f"prototypes_seed{s}", root / f"tagger{s}_p.pt",
                                                   ["detect", "prototypes", str(tagger), str(pack), "--mode", "both", "--include-valid",
                                                    "--out", str(root / f"tagger{s}_p.pt")])
    last = models[f"seed{args.seeds[0]}+prototypes"]
    if len(args.seeds) > 1:
        last = models["ensemble"] = stages.run("ensemble", root / "ensemble.pt",
                                               ["detect", "ensemble", *map(str, models.values()), "--out", str(root / "ensemble.pt")])
    if not args.no_aisfx:
        first = f"seed{args.seeds[0]}"
        name = f"{'ensemble' if len(args.seeds) > 1 else first}+aisfx"
        head = models[name] = stages.run("aisfx_head", root / f"{last.stem}_aisfx.pt",
                                         ["detect", "aisfx", str(last), str(pack), "--include-valid", "--mixtures", str(args.mixtures),
                                          "--epochs", str(args.epochs), "--out", str(root / f"{last.stem}_aisfx.pt")])
        if len(args.seeds) > 1:  # the same head on the first tagger alone: copied, not built again
            single = root / f"tagger{args.seeds[0]}_p_aisfx.pt"
            models[f"{first}+aisfx"] = stages.run("aisfx_head_copy", single,
                                                  ["detect", "aisfx", str(models[f"{first}+prototypes"]), str(pack), "--include-valid",
                                                   "--head-from", str(head), "--out", str(single)])
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
