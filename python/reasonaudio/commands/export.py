"""`reasonaudio export BENCH --to hf --out DIR|URI`: a benchmark as a Hugging Face dataset folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from reasonaudio.io.hub_cache import bench_argument

from reasonaudio.commands.bounds import float_in, utf8_path


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "export",
        description="Write BENCH as a folder that datasets.load_dataset(DIR, 'corpus'|'queries'|'qrels') reads "
        "offline: sharded parquet per config with the audio embedded as the Audio feature, one mteb sub-task "
        "per reasoning task, the two-option pairs as top_ranked, and a dataset card (README.md) ready for "
        "`huggingface-cli upload --repo-type dataset`.",
    )
    parser.add_argument("bench", type=bench_argument, help="benchmark directory (or hf://datasets/ORG/NAME[@REV])")
    parser.add_argument("--to", choices=["hf"], default="hf", help="export format (hf: Hugging Face dataset folder)")
    parser.add_argument("--out", required=True, type=utf8_path,
                        help="output folder (written atomically), or an fsspec URI (s3://bucket/name, gs://...): there each "
                        "corpus shard is uploaded as soon as it is written, so the local disk holds one shard at a time")
    parser.add_argument("--audio-from", default=None, type=utf8_path, metavar="LOCATION",
                        help="where the clip files are when they are not in BENCH (a benchmark merged with --audio-elsewhere): "
                        "a folder or fsspec URI under which clips.parquet's paths resolve (s3://bucket/big for "
                        "s3://bucket/big/audio/clip_0000001.wav); every file is checked against BENCH's audio.sha256")
    parser.add_argument("--force", action="store_true", help="replace an earlier export at --out")
    parser.add_argument("--name", default=None, help="dataset name in the card (default: the benchmark folder's name)")
    parser.add_argument("--license", default=None, help="license id for the card (default: the atoms' license, else 'other')")
    parser.add_argument("--shard-mb", type=float_in(0.01, 100_000), default=500.0, help="audio megabytes per corpus shard, 0.01..100,000 (default 500)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from reasonaudio.io.hub_cache import dataset_path
    from reasonaudio.errors import UserError
    from reasonaudio.io.export import export_hf

    from reasonaudio.io.storage import check_persistent, is_uri

    args.bench = dataset_path(args.bench)
    check_persistent(args.out)
    out = args.out if is_uri(args.out) else Path(args.out)

    if args.shard_mb <= 0:
        raise UserError("--shard-mb must be positive")
    summary = export_hf(
        args.bench, out, name=args.name, license_id=args.license, shard_bytes=int(args.shard_mb * 1024 * 1024), force=args.force,
        audio_from=args.audio_from,
    )
    print(
        f"{args.out}: {summary['clips']} clips in {summary['corpus_shards']} shard(s), {summary['queries']} queries, "
        f"{summary['qrels']} qrels, {summary['mc']} two-option pairs; {len(summary['configs'])} configs "
        f"(tasks: {', '.join(summary['tasks'])})"
    )
    return 0
