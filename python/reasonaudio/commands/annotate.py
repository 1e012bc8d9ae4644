"""`reasonaudio annotate`: decide relevance (contract §2) for every query and clip, write qrels."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import polars as pl

from reasonaudio.errors import UserError


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser(
        "annotate",
        description=(
            "Evaluate every query's logic against every clip's events and write the relevant pairs. "
            "EVENTS is a benchmark's events.parquet (or its directory), or a strong-label table "
            "(.tsv DESED: filename, onset, offset, event_label; AudioSet-Strong: segment_id, "
            "start_time_seconds, end_time_seconds, label; times in seconds). An event whose onset equals "
            "its offset (a point annotation) is kept as an event of its label lasting 0 s: has/not see it, "
            "before orders it, it overlaps nothing (contract §2); a note counts them."
        ),
    )
    parser.add_argument("--events", required=True, type=Path,
                        help="events.parquet, benchmark directory, directory of parquet files (streamed), or strong-label .tsv/.csv")
    parser.add_argument("--queries", required=True, type=Path, help="queries .parquet, .jsonl or .csv (query_id, logic)")
    parser.add_argument("--out", required=True, type=Path, help="qrels .parquet, or .tsv in BEIR qrels layout")
    parser.add_argument(
        "--clips",
        type=Path,
        default=None,
        help="clips.parquet listing the whole corpus (clip_id), so clips without events count for "
        "not-only queries; by default the clips.parquet beside events.parquet, if any",
    )
    parser.add_argument("--sample-rate", type=int, default=None, help="sample rate for onset_sample/offset_sample")
    parser.add_argument("--threads", type=int, default=0, help="worker threads (0 = all cores)")
    parser.add_argument(
        "--batch-events",
        type=int,
        default=None,
        metavar="N",
        help="stream parquet events in batches of about N rows, memory bounded by the batch (each clip's "
        "events must be contiguous); the default for a directory of parquet files (a dataset) is 1000000",
    )
    parser.add_argument(
        "--drop-zero-length",
        action="store_true",
        help="drop events whose onset equals their offset (point annotations) instead of keeping them as "
        "events lasting 0 s; a file left without events stays in the corpus",
    )
    parser.add_argument("--force", action="store_true", help="replace an existing --out file")
    parser.set_defaults(func=run)


def _corpus_clip_ids(args: argparse.Namespace) -> tuple[list[str] | pl.Series | None, Path | None]:
    clips_path = args.clips
    if clips_path is None:
        events_dir = args.events if args.events.is_dir() else args.events.parent
        beside = events_dir / "clips.parquet"
        if args.events.suffix == ".parquet" or args.events.is_dir():
            clips_path = beside if beside.exists() else None
    if clips_path is None:
        if args.events.suffix in (".tsv", ".txt", ".csv"):
            from reasonaudio.relevance import read_strong_labels

            # every file the table names is in the corpus, also those listed without events
            return read_strong_labels(args.events)[1], args.events
        return None, None
    try:
        clips = pl.read_parquet(clips_path, columns=["clip_id"])
    except Exception as err:
        raise UserError(f"{clips_path}: cannot read clip_id ({err})") from None
    # one Arrow column: a million ids as Python strings would take ~70 MB more
    return clips["clip_id"].cast(pl.String), clips_path


def _where(message: str, events: Path, clips: Path | None) -> str:
    """An engine message with the file it is about: events rows (0-based, in the table's order) and
    the table's columns are in EVENTS (its events.parquet for a directory), clip ids in --clips."""
    table = events / "events.parquet" if events.is_dir() else events
    if message.startswith("events row "):
        row, _, rest = message.removeprefix("events row ").partition(": ")
        return f"{table}: row {row} (0-based): {rest}"
    if message.startswith("events: "):
        return f"{table}: {message.removeprefix('events: ')}"
    if message.startswith("clip_id:") and clips is not None:
        return f"{clips} (the corpus's clip list): {message}"
    return message


def _zero_length_note(n: int, events: Path, dropped: bool) -> str:
    if dropped:
        return f"note: dropped {n} event row(s) of {events} that last zero time (onset = offset; --drop-zero-length)"
    return (f"note: {n} event row(s) of {events} last zero time (onset = offset): kept as events lasting 0 s "
            "(has/not see them, before orders them, they overlap nothing); --drop-zero-length drops them")


def run(args: argparse.Namespace) -> int:
    from reasonaudio.relevance import prepare_events, read_events, read_queries, relevance_csr, write_qrels, zero_length

    from reasonaudio.io.outputs import check_file, check_not_an_input
    from reasonaudio.relevance.files import QRELS_PARQUET, QRELS_TSV

    if args.threads < 0:
        raise UserError("--threads must be >= 0")
    inputs = [p for p in (args.events, args.queries, args.clips) if p is not None]
    # up front, before the work (write_qrels claims it again, under its lock)
    check_not_an_input(args.out, inputs)
    if args.out.suffix not in (".parquet", ".tsv"):
        raise UserError(f"--out {args.out}: output must end in .parquet or .tsv")
    check_file(args.out, QRELS_PARQUET if args.out.suffix == ".parquet" else QRELS_TSV, args.force)
    started = time.perf_counter()
    dataset_dir = args.events.is_dir() and not (args.events / "events.parquet").exists()
    queries = read_queries(args.queries)
    clip_ids, clips_path = _corpus_clip_ids(args)
    if args.batch_events is not None or dataset_dir:
        from reasonaudio.relevance import stream_relevance_csr

        csr, stats = stream_relevance_csr(
            args.events, queries, sample_rate=args.sample_rate, clip_ids=clip_ids, threads=args.threads,
            batch_events=args.batch_events if args.batch_events is not None else 1_000_000,
            drop_zero_length=args.drop_zero_length,
        )
        n_events = stats.events
        n_zero = stats.zero_length
        without = stats.clips_without_events
        print(f"streamed {stats.events} events in {stats.batches} batches (at most {stats.max_batch_events} events held at once)")
    else:
        events = read_events(args.events, engine_columns=True)
        try:
            zero = zero_length(events)
        except UserError as err:
            raise UserError(_where(str(err), args.events, clips_path)) from None
        n_zero = int(zero.sum())
        if args.drop_zero_length and n_zero:
            if clip_ids is None:  # a clip left without events stays in the corpus
                clip_ids = events["clip_id"].cast(pl.String).unique(maintain_order=True)
            events = events.filter(pl.Series(~zero))
        n_events = events.height
        try:
            encoded = prepare_events(events, args.sample_rate, clip_ids)
            del events  # the engine reads the encoded arrays: the frame's strings would only take memory
            csr = relevance_csr(encoded, queries, threads=args.threads)
        except UserError as err:  # the engine knows rows, not files: name the file the row is in
            raise UserError(_where(str(err), args.events, clips_path)) from None
        # every event's clip is in the corpus (else prepare_events refused it): the rest have none
        without = len(encoded.clip_ids) - int(np.count_nonzero(np.bincount(encoded.clip, minlength=len(encoded.clip_ids))))
        del encoded
    if not len(csr.clip_ids):
        table = args.events / "events.parquet" if args.events.is_dir() and not dataset_dir else args.events
        raise UserError(f"{table}: no event rows; expected at least one event, or the corpus's clip list (--clips) "
                        "so that clips without events count for `not` queries")
    out = write_qrels(csr, args.out, inputs=inputs, force=args.force)
    counts = csr.counts()
    if n_zero:
        print(_zero_length_note(n_zero, args.events, args.drop_zero_length))
    if without:
        print(f"note: {without} clip(s) of the corpus have no event (listed without events, or only in --clips)")
    corpus = f" (corpus from {clips_path})" if clips_path is not None else ""
    print(
        f"{len(csr.query_ids)} queries x {len(csr.clip_ids)} clips{corpus}, {n_events} events: "
        f"{csr.n_pairs} relevant pairs; queries without a relevant clip: {int(np.sum(counts == 0))}; "
        f"median relevant per query: {int(np.median(counts)) if len(counts) else 0}"
    )
    print(f"wrote {out} in {time.perf_counter() - started:.2f} s")
    return 0
