"""`reasonaudio embed BENCH --model SPEC --out DIR`: encode a benchmark into embedding stores."""

from __future__ import annotations

import argparse
from pathlib import Path

from reasonaudio.commands.bounds import SEED, int_in


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "embed",
        description="Encode every query and clip of BENCH with an embedding model, batch by batch, into two "
        "memory-mapped stores, DIR/queries and DIR/clips (embeddings.npy + ids.parquet + state.json). Memory "
        "holds one batch; an interrupted run resumes at its last written batch when run again. Evaluate with "
        "`reasonaudio eval BENCH --model precomputed:DIR/queries,DIR/clips`.",
    )
    parser.add_argument("bench", type=Path, help="benchmark directory (or BEIR folder)")
    parser.add_argument("--model", required=True, help="embedding model spec, NAME[:ARG] (see `reasonaudio models`)")
    parser.add_argument("--out", required=True, type=Path, help="directory of the two stores (created; resumed when it holds them)")
    parser.add_argument("--rows", type=int_in(1, 1_000_000), default=4096, help="rows encoded and written per step, 1..1,000,000 (default 4096)")
    parser.add_argument("--batch-size", type=int_in(1, 65_536), default=32, help="the model's encoding batch size (default 32)")
    parser.add_argument("--seed", type=SEED, default=0, help="seed for seeded models, 0..2^32-1")
    parser.add_argument("--device", default=None, help="torch device for neural adapters: cpu, cuda, cuda:N or mps")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import polars as pl
    from reasonaudio.console import progress_bar as tqdm

    from reasonaudio.errors import UserError
    from reasonaudio.io.columns import StrColumn
    from reasonaudio.io.embedding_store import write_store
    from reasonaudio.io.outputs import check_not_an_input
    from reasonaudio.retrieval import load_any_benchmark
    from reasonaudio.retrieval.base import ClipSet, EmbeddingModel, ModelOptions, QuerySet, load_model

    check_not_an_input(args.out, [args.bench])
    benchmark = load_any_benchmark(args.bench)
    options = ModelOptions(batch_size=args.batch_size, seed=args.seed, device=args.device, progress=False)
    model = load_model(args.model, options)
    if not isinstance(model, EmbeddingModel):
        raise UserError(f"{args.model}: scores (query, clip) pairs directly; only embedding models can be stored")
    model.prepare(benchmark)
    query_ids = benchmark.queries["query_id"].cast(pl.Utf8).to_list()
    texts = benchmark.queries["text"].to_list()
    # columns, not a Python object per clip: each batch makes only its own ids and paths
    clip_ids = StrColumn(benchmark.clips["clip_id"])
    paths = benchmark.clip_paths()
    sides = (
        ("queries", query_ids, lambda a, b: model.encode_queries(QuerySet(query_ids[a:b], texts[a:b]))),
        ("clips", clip_ids, lambda a, b: model.encode_clips(ClipSet(clip_ids[a:b], paths[a:b]))),
    )
    for name, ids, encode in sides:
        with tqdm(total=len(ids), desc=f"embed {name}", unit="row", disable=args.quiet) as bar:
            def advance(done: int, bar=bar) -> None:
                bar.update(done - bar.n)

            write_store(args.out / name, ids, encode, source=args.model, batch_rows=args.rows, progress=advance)
    print(f"{args.model}: {len(query_ids)} queries, {len(clip_ids)} clips -> "
          f"--model precomputed:{args.out / 'queries'},{args.out / 'clips'}")
    return 0
