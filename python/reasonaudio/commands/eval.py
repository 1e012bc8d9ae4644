"""`reasonaudio eval BENCH --model SPEC --out RESULTS`: measure a retrieval model on a benchmark."""

from __future__ import annotations

import argparse
from pathlib import Path

from reasonaudio.commands.bounds import SEED, int_in


class _ModelHelpFormatter(argparse.HelpFormatter):
    """Writes `--model`'s help from the model registry, only when help is printed: building the parser for
    any other command then never imports the adapter modules."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.dest == "model":
            from reasonaudio.retrieval.registry import model_help

            return model_help()
        return super()._get_help_string(action)


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "eval",
        description="Rank every clip for every query, compute Acc@1 / nDCG@10 / Recall@k / MRR per task "
        "with bootstrap intervals, run the two-option test, and write results.json, report.md, "
        "per-query rankings and figures. BENCH is a benchmark directory or a BEIR-style folder "
        "(corpus.jsonl, queries.jsonl, qrels/test.tsv).",
        formatter_class=_ModelHelpFormatter,
    )
    parser.add_argument("bench", help="benchmark directory (or BEIR folder, or hf://datasets/ORG/NAME[@REV])")
    parser.add_argument("--model", required=True, help="model spec, NAME[:ARG]")
    parser.add_argument("--out", required=True, type=Path, help="results directory (written atomically; never inside BENCH)")
    parser.add_argument("--force", action="store_true", help="replace an earlier results directory at --out")
    parser.add_argument("--batch-size", type=int_in(1, 65_536), default=32, help="encoding batch size, 1..65,536 (default 32)")
    parser.add_argument("--search-batch", type=int_in(1, 1_000_000), default=256, help="queries per ranking batch, 1..1,000,000 (default 256)")
    parser.add_argument("--bootstrap", type=int_in(0, 20_000), default=1000, help="bootstrap resamples for 95%% intervals, 0..20,000 (each holds an index per query; 0: none)")
    parser.add_argument("--seed", type=SEED, default=0, help="seed for bootstrap, random baseline and t-SNE, 0..2^32-1")
    parser.add_argument("--device", default=None, help="torch device for neural adapters: cpu, cuda, cuda:N or mps (default: cuda if available)")
    parser.add_argument("--index", choices=("exact", "faiss", "auto", "ivf", "hnsw"), default="exact",
                        help="how embeddings are ranked: exact (the canonical kernel over every pair), faiss (FAISS "
                        "candidates re-scored and certified: the same results, faster on large corpora; GPU when FAISS "
                        "reports one or with --device cuda), auto (faiss on a GPU from 50,000 clips, else exact; default exact), "
                        "ivf or hnsw (approximate FAISS indexes, faster on large corpora but may miss clips: results.json "
                        "records the index and its recall of the exact top 100; never chosen by auto)")
    parser.add_argument("--offline", action="store_true",
                        help="Hub ids (models, hf://datasets/...) from the Hugging Face cache only, as HF_HUB_OFFLINE=1")
    parser.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from reasonaudio.errors import UserError
    from reasonaudio.evaluation.run import evaluate
    from reasonaudio.io.hub_cache import dataset_path, parse_dataset
    from reasonaudio.io.outputs import output_directory
    from reasonaudio.evaluation.results import RESULTS_KIND, write_results_into
    from reasonaudio.retrieval import load_any_benchmark
    from reasonaudio.retrieval.base import ModelOptions, load_model
    from reasonaudio.retrieval.registry import text_only_refusal

    refusal = text_only_refusal(args.model)  # before a 10-s model load that could only end in "cannot embed audio"
    if refusal:
        raise UserError(refusal)
    if args.batch_size < 1 or args.search_batch < 1:
        raise UserError("--batch-size and --search-batch must be at least 1")
    if args.bootstrap < 0:
        raise UserError("--bootstrap must be >= 0")
    offline = getattr(args, "offline", False)
    bench = dataset_path(args.bench, offline=offline)
    # --out is claimed (checked and locked) before the model loads, so a bad --out fails at once
    with output_directory(args.out, RESULTS_KIND, inputs=[bench], force=args.force) as tmp:
        benchmark = load_any_benchmark(bench)
        options = ModelOptions(batch_size=args.batch_size, seed=args.seed, device=args.device, progress=not args.quiet,
                               offline=offline)
        model = load_model(args.model, options)
        result = evaluate(
            benchmark, model, batch_size=args.search_batch, n_boot=args.bootstrap, seed=args.seed, progress=not args.quiet,
            index=args.index, device=args.device,
            keep_vectors=not args.no_figures,  # only the t-SNE figure reads them: a normalised copy of every clip
        )
        # which weights produced these figures: repo id, resolved commit, local path, bytes (results.json)
        result.settings["weights"] = options.loaded
        if parse_dataset(args.bench) is not None:
            result.settings["dataset"] = {"uri": args.bench, "commit": bench.name, "path": str(bench)}
        write_results_into(result, tmp, figures=not args.no_figures, seed=args.seed)
    out = args.out
    acc = result.summary["acc@1"]["Avg"]["mean"]
    ndcg = result.summary["ndcg@10"]["Avg"]["mean"]
    two = result.two_option.get("accuracy", {}).get("Avg", {}).get("mean")
    extra = f", two-option {100 * two:.1f}%" if two is not None else ""
    print(f"{args.model}: Avg Acc@1 {100 * acc:.1f}%, nDCG@10 {100 * ndcg:.1f}%{extra} -> {out / 'report.md'}")
    return 0
