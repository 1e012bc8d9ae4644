"""`reasonaudio study BENCH --out DIR`: the ReasonAudio study's models on a benchmark, its table in one command."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from reasonaudio.commands.bounds import int_in


def add_parser(subparsers) -> None:
    from reasonaudio.evaluation.study import ROWS

    parser = subparsers.add_parser(
        "study",
        description="Run `eval` for each of the study's models (fetched by their pinned Hub ids into the Hugging "
        "Face cache) and the reference rows, one results directory each under OUT/runs/, then write the "
        "study's table (Acc@1 and nDCG@10 per task and Avg; two-option per task) with its published "
        "figures beside ours: OUT/study.md, OUT/study.json, OUT/study.png. Resumable: a model whose "
        "results are complete is kept, an interrupted one is run again. Rows: " + ", ".join(r.name for r in ROWS),
    )
    parser.add_argument("bench", help="benchmark directory (or hf://datasets/ORG/NAME[@REV])")
    parser.add_argument("--out", required=True, type=Path, help="study directory (runs/, study.md, study.json, study.png)")
    parser.add_argument("--models", help="only these rows, comma-separated (default: all)")
    parser.add_argument("--paradigm", choices=("two-stage", "CLIP", "MLLM", "detect", "baseline"),
                        help="only the rows of this paradigm")
    parser.add_argument("--device", default=None, help="torch device (default: cuda if available)")
    parser.add_argument("--batch-size", type=int_in(1, 65_536), default=8, help="encoding batch size (default 8)")
    parser.add_argument("--bootstrap", type=int_in(0, 20_000), default=1000, help="bootstrap resamples (default 1000)")
    parser.add_argument("--offline", action="store_true", help="Hub ids from the Hugging Face cache only")
    parser.add_argument("--detect", default="procedural", metavar="LIB_OR_MODEL",
                        help="the detect-then-reason row's library or model file (default procedural)")
    parser.add_argument("--stepaudio-code", metavar="DIR", help="a Step-Audio2 repository checkout (Step-Audio rows)")
    parser.add_argument("--wav2clip", metavar="FILE", help="Wav2CLIP.pt (the Wav2CLIP row)")
    parser.add_argument("--dry-run", action="store_true",
                        help="list each row: Hub id, revision, download size, GPU memory, cached or not; run nothing")
    parser.set_defaults(func=run)


def _rows(args):
    from reasonaudio.errors import UserError
    from reasonaudio.evaluation.study import ROWS

    rows = [r for r in ROWS if args.paradigm is None or r.paradigm == args.paradigm]
    if args.models:
        wanted = [m.strip() for m in args.models.split(",") if m.strip()]
        unknown = [m for m in wanted if m not in {r.name for r in ROWS}]
        if unknown:
            raise UserError(f"--models: unknown row(s) {', '.join(unknown)}; expected {', '.join(r.name for r in ROWS)}")
        rows = [r for r in rows if r.name in wanted]
    if not rows:
        raise UserError("--models / --paradigm select no row")
    return rows


def _weights(spec: str) -> list[tuple[str, object]]:
    """The Hub repositories a spec loads (empty for models that load none)."""
    from reasonaudio.commands.models import download_targets
    from reasonaudio.errors import UserError

    try:
        return download_targets(spec)
    except UserError:
        return []


def _vram(spec: str) -> str:
    from reasonaudio.retrieval.registry import find, lookup
    from reasonaudio.retrieval.spec import split_part, split_two_stage

    meta, argument = lookup(spec)
    if not meta.parts:
        return meta.vram
    parts = [find(kind, split_part(text)[0]) for kind, text in zip(meta.parts, split_two_stage(argument) or ())]
    return " + ".join(p.vram for p in parts if p is not None)


def dry_run(rows, values, offline: bool) -> int:
    from reasonaudio.errors import UserError
    from reasonaudio.evaluation.study import fill
    from reasonaudio.io.hub_cache import cached, human_bytes, is_offline, listing, weight_patterns

    for row in rows:
        spec = fill(row, values)
        if not row.spec:
            print(f"{row.name}: left out (no loadable implementation; see `reasonaudio models --paradigm CLIP`)")
            continue
        if spec is None:
            print(f"{row.name}: needs {row.needs}")
            continue
        print(f"{row.name}: {spec}\n    GPU memory: {_vram(spec)}")
        for label, (ref, files) in _weights(spec):
            hit = cached(ref, allow=files)
            size = None
            if hit is not None:
                size = hit.bytes
            elif not is_offline(offline):
                try:
                    size = sum(f.file_size or 0 for f in listing(ref, allow=files, ignore=weight_patterns()))
                except UserError:
                    size = None
            state = "cached" if hit else "not cached"
            print(f"    {ref.repo_id}  revision {ref.revision}  {human_bytes(size)}  {state}  ({label})")
    return 0


def run(args: argparse.Namespace) -> int:
    from reasonaudio.commands import eval as eval_command
    from reasonaudio.errors import UserError
    from reasonaudio.evaluation.study import as_json, figure, fill, markdown, measured, published
    from reasonaudio.io.outputs import write_atomic

    rows = _rows(args)
    values = {"detect": args.detect, "stepaudio_code": args.stepaudio_code, "wav2clip": args.wav2clip}
    if args.dry_run:
        return dry_run(rows, values, args.offline)
    runs = args.out / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    entries = []
    for row in rows:
        spec = fill(row, values)
        entry: dict = {"row": row, "spec": spec}
        entries.append(entry)
        if not row.spec:
            entry["status"] = "left out (no loadable implementation)"
            continue
        if spec is None:
            entry["status"] = f"needs {row.needs}"
            continue
        out = runs / row.name
        results = out / "results.json"
        done = results.is_file() and json.loads(results.read_text()).get("model") == spec
        if not done:  # an interrupted run left no results.json (its temporary is removed when claimed again)
            print(f"study: {row.name}: {spec}", flush=True)
            namespace = argparse.Namespace(
                bench=args.bench, model=spec, out=out, force=out.exists(), batch_size=args.batch_size, search_batch=256,
                bootstrap=args.bootstrap, seed=0, device=args.device, offline=args.offline, no_figures=True, index="auto",
                quiet=args.quiet)
            try:
                eval_command.run(namespace)
            except UserError as err:
                entry["status"] = f"failed: {err}"
                continue
        else:
            print(f"study: {row.name}: kept (finished earlier)", flush=True)
        data = json.loads(results.read_text())
        entry.update(status="measured", measured=measured(data), weights=data.get("settings", {}).get("weights", []))
    figures = published()
    write_atomic(args.out / "study.md", markdown(entries, figures))
    write_atomic(args.out / "study.json", json.dumps(as_json(entries, figures), indent=2) + "\n")
    figure(entries, figures, args.out / "study.png")
    failed = [e["row"].name for e in entries if e["status"].startswith("failed")]
    print(f"-> {args.out / 'study.md'}" + (f" ({len(failed)} failed: {', '.join(failed)})" if failed else ""))
    return 0
