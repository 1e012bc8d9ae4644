"""`reasonaudio merge`: assemble the shards of `build --shard K/N` into one benchmark directory."""

from __future__ import annotations

import argparse
import time

from reasonaudio.builder.config import MAX_THREADS
from reasonaudio.commands.bounds import int_in, utf8_path


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "merge",
        description=(
            "Assemble every shard of one sharded build (directories or fsspec URIs written by "
            "`reasonaudio build ... --shard K/N`) into a benchmark directory byte-identical to the "
            "single-process build with the same parameters."
        ),
    )
    p.add_argument("shards", nargs="+", metavar="SHARD", help="shard directories or URIs, all N of them, any order")
    p.add_argument("--out", required=True, type=utf8_path, help="output directory or URI (must be empty unless --force)")
    p.add_argument("--force", action="store_true", help="replace a non-empty output directory")
    p.add_argument("--threads", type=int_in(0, MAX_THREADS), default=0, help=f"threads for re-planning, 0..{MAX_THREADS} (0 = all cores)")
    p.add_argument("--from-plan", default=None, metavar="FILE", help="the shards' plan (build --save-plan): nothing is planned again")
    p.add_argument(
        "--audio-elsewhere", action="store_true",
        help=(
            "copy no audio (the shards' audio may already be deleted, e.g. after exporting each shard): write "
            "the tables, manifest and audio.sha256 (the same bytes as a merge with the audio) from each shard's "
            "render.parquet and audio.sha256, which must list exactly that shard's clips. OUT/audio is left "
            "empty: the clips are wherever the shards' audio was kept; put them in OUT/audio and "
            "`sha256sum -c audio.sha256` (or `validate`) checks them"
        ),
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from reasonaudio.builder.shard import merge
    from reasonaudio.io.storage import check_persistent

    check_persistent(args.out)
    start = time.perf_counter()
    out = merge(args.shards, args.out, force=args.force, progress=not args.quiet, threads=args.threads, from_plan=args.from_plan,
                copy_audio=not args.audio_elsewhere)
    c = out.manifest["counts"]
    print(f"merged {len(args.shards)} shards into {out}: {c['clips']} clips, {c['queries']} queries in {time.perf_counter() - start:.1f} s")
    if args.audio_elsewhere:
        print(f"no audio copied: {out}/audio is empty; the {c['clips']} clip files are wherever the shards' audio was kept "
              f"(audio.sha256 lists each one's sha256). Tables only: validate --no-audio, annotate, eval")
    return 0
