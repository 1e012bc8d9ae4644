"""Run the study's models on a benchmark and write its table layout with its published figures beside.

    python benches/paper_models.py BENCH --weights ROOT --out DIR [--device cuda] [--batch-size 8]
                                   [--path NAME=PATH ...] [--only NAME ...] [--baselines] [--dry-run]

ROOT holds one directory (or file) per model, named as below (the Hub repository names); `--path
NAME=PATH` points one elsewhere. A model whose weights are absent is listed as such and skipped, never
downloaded. Each run is `reasonaudio eval BENCH --model SPEC` into DIR/runs/NAME; the two-stage runs
that share a captioner caption once and reuse the first run's captions.parquet. DIR/paper_models.md
and .json hold Acc@1 per task and the average, two-option accuracy per task, and the study's figures.
`--baselines` adds oracle / structured / random rows (no weights needed) as reference points.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from reasonaudio.io.outputs import write_atomic

# weights, by name: what ROOT/<default> must contain
WEIGHTS = {
    "qwen2-audio": "Qwen2-Audio-7B-Instruct",
    "step-audio": "Step-Audio-2-mini",
    "step-audio-code": "Step-Audio2",  # the repository checkout (stepaudio2.py, utils.py)
    "bge-m3": "bge-m3",
    "qwen3-embedding": "Qwen3-Embedding-8B",
    "msclap": "CLAP_weights_2023.pth",
    "wav2clip": "Wav2CLIP.pt",
    "clip-vit-b32": "clip-vit-base-patch32",
    "lco-omni-3b": "LCO-Embedding-Omni-3B",
    "lco-omni-7b": "LCO-Embedding-Omni-7B",
    "e5-omni-7b": "e5-omni-7B",
    "qwen2.5-omni-7b": "Qwen2.5-Omni-7B",  # processor for e5-omni (its repository has none)
    "omniembed": "OmniEmbed-v0.1",
    "omni-thinker-7b": "Qwen2.5-Omni-7B-Thinker",  # OmniEmbed's LoRA base (Tevatron/Qwen2.5-Omni-7B-Thinker)
}

# The study's published figures (Zhang et al., 2026, percent): the best average Acc@1 is OmniEmbed-7B's
# 20.1; every two-stage pipeline stays under 4.2 and every CLIP-style model under 10; the two-option test
# peaks at 27.5 on negation and 50.8 on duration.
PUBLISHED_AVG = {"two-stage": "< 4.2", "CLIP-style": "< 10", "omniembed-7b": "20.1 (best)"}
PUBLISHED_TWO_OPTION = {"negation": 27.5, "duration": 50.8}


@dataclass(frozen=True)
class Run:
    name: str
    paradigm: str
    title: str
    spec: str  # with {name} placeholders for WEIGHTS entries
    needs: tuple[str, ...]  # WEIGHTS entries that must exist
    captioner: str = ""  # two-stage runs sharing this captioner reuse its captions


RUNS = (
    Run("qwen2audio-bge-m3", "two-stage", "Qwen2-Audio → BGE-M3", "two-stage:qwen2audio={qwen2-audio}+bge-m3={bge-m3}",
        ("qwen2-audio", "bge-m3"), "qwen2audio"),
    Run("qwen2audio-qwen3", "two-stage", "Qwen2-Audio → Qwen3-Embedding",
        "two-stage:qwen2audio={qwen2-audio}+qwen3-emb={qwen3-embedding}", ("qwen2-audio", "qwen3-embedding"), "qwen2audio"),
    Run("stepaudio-bge-m3", "two-stage", "Step-Audio → BGE-M3",
        "two-stage:stepaudio={step-audio},code={step-audio-code}+bge-m3={bge-m3}", ("step-audio", "step-audio-code", "bge-m3"),
        "stepaudio"),
    Run("stepaudio-qwen3", "two-stage", "Step-Audio → Qwen3-Embedding",
        "two-stage:stepaudio={step-audio},code={step-audio-code}+qwen3-emb={qwen3-embedding}",
        ("step-audio", "step-audio-code", "qwen3-embedding"), "stepaudio"),
    Run("msclap", "CLIP-style", "CLAP (Elizalde et al.)", "msclap:{msclap},version=2023", ("msclap",)),
    Run("audioclip", "CLIP-style", "AudioCLIP", "", ()),  # left out (README): no loadable implementation
    Run("wav2clip", "CLIP-style", "Wav2CLIP", "wav2clip:{wav2clip},clip={clip-vit-b32}", ("wav2clip", "clip-vit-b32")),
    Run("lco-omni-3b", "MLLM embedder", "LCO-Embedding-Omni-3B", "lco-omni:{lco-omni-3b}", ("lco-omni-3b",)),
    Run("lco-omni-7b", "MLLM embedder", "LCO-Embedding-Omni-7B", "lco-omni:{lco-omni-7b}", ("lco-omni-7b",)),
    Run("e5-omni-7b", "MLLM embedder", "e5-omni-7B", "e5-omni:{e5-omni-7b},processor={qwen2.5-omni-7b}",
        ("e5-omni-7b", "qwen2.5-omni-7b")),
    Run("omniembed-7b", "MLLM embedder", "OmniEmbed-7B", "omniembed:{omniembed},base={omni-thinker-7b},processor={qwen2.5-omni-7b}",
        ("omniembed", "omni-thinker-7b", "qwen2.5-omni-7b")),
)
BASELINES = (
    Run("oracle", "baseline", "oracle (qrels)", "oracle", ()),
    Run("structured", "baseline", "structured (true events)", "structured", ()),
    Run("random", "baseline", "random", "random:0", ()),
)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench", type=Path)
    parser.add_argument("--weights", type=Path, default=Path("weights"), help="directory holding the models (default ./weights)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--path", action="append", default=[], metavar="NAME=PATH", help=f"one of {', '.join(WEIGHTS)}")
    parser.add_argument("--only", action="append", default=[], metavar="RUN", help="run only these (repeatable)")
    parser.add_argument("--device", default=None)
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--baselines", action="store_true", help="add oracle / structured / random rows")
    parser.add_argument("--dry-run", action="store_true", help="print the plan (specs, missing weights) and stop")
    return parser.parse_args(argv)


def weight_paths(root: Path, overrides: list[str]) -> dict[str, Path]:
    paths = {name: root / default for name, default in WEIGHTS.items()}
    for item in overrides:
        name, sep, value = item.partition("=")
        if not sep or name not in WEIGHTS:
            raise SystemExit(f"--path {item!r}: expected NAME=PATH with NAME one of {', '.join(WEIGHTS)}")
        paths[name] = Path(value)
    return paths


def plan(runs, paths: dict[str, Path]) -> list[dict]:
    rows = []
    for run in runs:
        missing = [str(paths[n]) for n in run.needs if not paths[n].exists()]
        spec = run.spec
        for key, value in paths.items():  # not str.format: names such as qwen2.5-omni-7b hold dots
            spec = spec.replace("{" + key + "}", str(value))
        status = "left out (no loadable implementation; README)" if not run.spec else (
            "weights absent: " + ", ".join(missing) if missing else "ready")
        rows.append({"run": run, "spec": spec, "status": status})
    return rows


def summarize(results: Path) -> dict:
    data = json.loads((results / "results.json").read_text())
    tasks = list(data["task_order"])
    acc = data["summary"]["acc@1"]
    two = data["two_option"]["accuracy"]
    return {"tasks": tasks, "acc@1": {t: acc[t]["mean"] for t in tasks + ["Avg"]},
            "two_option": {t: two[t]["mean"] for t in tasks + ["Avg"] if t in two}}


def table(rows: list[dict]) -> str:
    tasks = next((r["measured"]["tasks"] for r in rows if r.get("measured")), ["order", "overlap", "duration", "negation", "mix"])
    pct = lambda v: "" if v is None else f"{100 * v:.1f}"  # noqa: E731
    lines = ["# The study's models on this benchmark", "",
             "Acc@1 (%) per task and averaged; `study` is the study's published average (Zhang et al., 2026).", "",
             "| paradigm | model | " + " | ".join(tasks) + " | Avg | study Avg | status |",
             "|---|---|" + "---|" * (len(tasks) + 3)]
    for r in rows:
        run, m = r["run"], r.get("measured")
        cells = [pct(m["acc@1"].get(t)) if m else "" for t in tasks + ["Avg"]]
        published = PUBLISHED_AVG.get(run.name, PUBLISHED_AVG.get(run.paradigm, ""))
        lines.append(f"| {run.paradigm} | {run.title} | " + " | ".join(cells) + f" | {published} | {r['status']} |")
    lines += ["", "Two-option accuracy (%) per task; the study's: "
              + ", ".join(f"{t} {v}" for t, v in PUBLISHED_TWO_OPTION.items()) + ".", "",
              "| model | " + " | ".join(tasks) + " | Avg |", "|---|" + "---|" * (len(tasks) + 1)]
    for r in rows:
        if r.get("measured"):
            two = r["measured"]["two_option"]
            lines.append(f"| {r['run'].title} | " + " | ".join(pct(two.get(t)) for t in tasks + ["Avg"]) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    from reasonaudio.cli import main as cli

    args = parse_args(argv)
    paths = weight_paths(args.weights, args.path)
    runs = RUNS + (BASELINES if args.baselines else ())
    if args.only:
        unknown = sorted(set(args.only) - {r.name for r in runs})
        if unknown:
            raise SystemExit(f"--only: unknown run(s) {', '.join(unknown)}; expected {', '.join(r.name for r in runs)}")
        runs = tuple(r for r in runs if r.name in args.only)
    rows = plan(runs, paths)
    for r in rows:
        print(f"{r['run'].name:20s} {r['status']}\n{'':20s} {r['spec']}")
    if args.dry_run:
        return 0
    captions: dict[str, Path] = {}
    for r in rows:
        run = r["run"]
        if r["status"] != "ready":
            continue
        spec = r["spec"]
        if run.captioner and run.captioner in captions:
            spec = f"two-stage:captions={captions[run.captioner]}+{spec.rpartition('+')[2]}"
        out = args.out / "runs" / run.name
        common = ["--out", str(out), "--batch-size", str(args.batch_size), "--bootstrap", str(args.bootstrap),
                  "--no-figures", "--quiet"] + (["--device", args.device] if args.device else [])
        code = cli(["eval", str(args.bench), "--model", spec, *common])
        if code != 0:
            r["status"] = f"failed (exit {code})"
            continue
        r["measured"] = summarize(out)
        r["status"] = "measured"
        if run.captioner and (out / "captions.parquet").is_file():
            captions.setdefault(run.captioner, out / "captions.parquet")
    write_atomic(args.out / "paper_models.md", table(rows))
    write_atomic(args.out / "paper_models.json", json.dumps(
        {"published": {"avg_acc@1": PUBLISHED_AVG, "two_option": PUBLISHED_TWO_OPTION},
         "runs": [{"name": r["run"].name, "paradigm": r["run"].paradigm, "model": r["run"].title, "spec": r["spec"],
                   "status": r["status"], "measured": r.get("measured")} for r in rows]}, indent=2) + "\n")
    print(f"-> {args.out / 'paper_models.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
