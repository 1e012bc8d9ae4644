"""Relevance over an events dataset too large for memory, read in clip-aligned batches."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import polars as pl

from reasonaudio.errors import UserError, require
from reasonaudio.relevance.engine import EventArrays, LogicLike, RelevanceCSR, _query_columns, _rate_from_frame, id_series, prepare_events, relevance_csr, zero_length


@dataclass(frozen=True)
class StreamStats:
    """What a streamed annotation read: batches, event rows, the largest batch held at once."""

    batches: int
    events: int
    max_batch_events: int
    clips_without_events: int = 0  # clips of the given clip list that no event names
    zero_length: int = 0  # event rows with onset = offset (kept, or dropped when asked)


def _event_files(source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[str]:
    """Parquet files of an events source: one file, a benchmark directory (its events.parquet), a
    directory of parquet files (a dataset, in sorted path order), or a list of files."""
    if isinstance(source, (list, tuple)):
        files = [str(Path(s)) for s in source]
    else:
        path = Path(source)
        if path.is_dir():
            # a clips.parquet beside the event files lists the corpus (as in a benchmark), it holds no events
            files = [str(path / "events.parquet")] if (path / "events.parquet").exists() else sorted(
                str(p) for p in path.rglob("*.parquet") if p.name != "clips.parquet"
            )
            if not files:
                raise UserError(f"{path}: no .parquet files in this directory")
        else:
            files = [str(path)]
    for f in files:
        if not Path(f).exists():
            raise UserError(f"{f}: no such file")
        if not f.endswith(".parquet"):
            raise UserError(f"{f}: streaming reads parquet events; convert strong-label tables first (or drop --batch-events)")
    return files


def _manifest_rate(files: list[str]) -> float | None:
    manifest = Path(files[0]).parent / "manifest.json"
    if len(files) == 1 and manifest.exists():
        try:
            rate = json.loads(manifest.read_text()).get("sample_rate")
        except (OSError, json.JSONDecodeError) as err:
            raise UserError(f"{manifest}: cannot read ({err})") from None
        return None if rate is None else float(rate)
    return None


def stream_relevance_csr(
    source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    queries: pl.DataFrame | Sequence[LogicLike],
    sample_rate: int | float | None = None,
    clip_ids: Sequence[str] | None = None,
    query_ids: Sequence[str] | None = None,
    threads: int = 0,
    batch_events: int = 1_000_000,
    drop_zero_length: bool = False,
) -> tuple[RelevanceCSR, StreamStats]:
    """`relevance_csr` over a parquet events source read in batches of about `batch_events` rows:
    the same result, with the events held in memory bounded by one batch (plus the events of one
    clip carried across a batch boundary). Clips are independent, so a batch ends on a clip
    boundary; each clip's events must be contiguous in the source (as events.parquet and most
    strong-label exports are), which is checked. Clip ids and relevant pairs, the output, stay in
    memory (`clip_ids` given as a polars Series stays one, in the result too). Events that last
    zero time are kept (contract §2), or left out with `drop_zero_length` (their clips stay in
    the corpus); either way StreamStats.zero_length counts them."""
    require("pyarrow", "arrow", "reading an events dataset in batches")
    import pyarrow as pa
    import pyarrow.dataset as pads

    if batch_events < 1:
        raise UserError(f"--batch-events must be >= 1, got {batch_events}")
    import pyarrow.parquet as pq

    files = _event_files(source)
    for file in files:  # footers only (cheap): a stray or truncated file is named before any work
        try:
            pq.read_metadata(file)
        except (pa.ArrowInvalid, OSError) as err:
            raise UserError(f"{file}: not a readable parquet file ({err}); every .parquet file of an events dataset is read") from None
    try:
        dataset = pads.dataset(files, format="parquet")
    except (pa.ArrowInvalid, OSError) as err:
        raise UserError(f"{files[0]}: cannot read as a parquet dataset ({err})") from None
    names = set(dataset.schema.names)
    what = files[0] if len(files) == 1 else f"{files[0]} (+{len(files) - 1} files)"
    if not {"clip_id", "label"} <= names:
        raise UserError(f"{what}: missing column(s) clip_id/label; found {', '.join(dataset.schema.names)}")
    if {"onset_sample", "offset_sample"} <= names:
        columns = ["clip_id", "label", "onset_sample", "offset_sample"] + [c for c in ("onset_s", "offset_s", "sample_rate") if c in names]
    elif {"onset_s", "offset_s"} <= names:
        columns = ["clip_id", "label", "onset_s", "offset_s"]
    else:
        raise UserError(f"{what}: need onset_sample/offset_sample or onset_s/offset_s columns; found {', '.join(dataset.schema.names)}")
    ids, logic = _query_columns(queries, query_ids)
    rate = sample_rate if sample_rate is not None else _manifest_rate(files)

    # clip ids live in polars columns (Arrow strings), not Python dicts: at a million clips the
    # difference is hundreds of megabytes
    corpus = None
    if clip_ids is not None:
        corpus = pl.DataFrame(id_series(clip_ids, "clip_id")).with_row_index("g")
    if corpus is not None and corpus["clip_id"].n_unique() != corpus.height:
        raise UserError("clip list: a clip id is listed twice")
    order = pl.Series("clip_id", [], dtype=pl.String)  # clips met so far, when no clip list is given
    seen = np.zeros(corpus.height, bool) if corpus is not None else None
    q_parts: list[np.ndarray] = []
    c_parts: list[np.ndarray] = []
    n_batches = n_events = max_held = n_zero = 0
    batch_rate: float | None = None
    row_base = 0

    def not_contiguous(clip: str):
        return UserError(
            f"{what}: the events of clip {clip!r} are not contiguous (it reappears near row {row_base}); "
            "streaming needs each clip's events together: sort by clip_id"
        )

    def run(frame: pl.DataFrame) -> None:
        nonlocal n_batches, n_events, max_held, batch_rate, row_base, order, n_zero
        local = frame["clip_id"].cast(pl.String).unique(maintain_order=True)
        local_clips = local.to_list()
        if corpus is None:
            again = order.is_in(local.implode()) if len(order) else pl.Series([], dtype=pl.Boolean)
            if again.any():
                raise not_contiguous(order.filter(again)[0])
            glob = np.arange(len(order), len(order) + len(local), dtype=np.int64)
            order = pl.concat([order, local.rename("clip_id")], rechunk=False)
        else:
            joined = pl.DataFrame({"clip_id": local}).join(corpus, on="clip_id", how="left", maintain_order="left")
            unknown = joined["g"].is_null()
            if unknown.any():
                c = joined["clip_id"].filter(unknown)[0]
                row = row_base + int((frame["clip_id"] == c).arg_true()[0])
                raise UserError(f"events row {row}: clip_id {c!r} is not in the given clip list")
            glob = joined["g"].cast(pl.Int64).to_numpy()
            if seen[glob].any():
                raise not_contiguous(local_clips[int(np.argmax(seen[glob]))])
            seen[glob] = True
        given = rate if rate is not None else None
        if given is None and "onset_sample" in frame.columns:
            r = _rate_from_frame(frame, None)
            if batch_rate is not None and r != batch_rate:
                raise UserError(f"{what}: sample rate {r} near row {row_base} differs from {batch_rate} before it")
            batch_rate = given = r
        try:
            zero = zero_length(frame)
            n_zero += int(zero.sum())
            events = frame.filter(pl.Series(~zero)) if drop_zero_length and zero.any() else frame
            encoded = prepare_events(events, given, local_clips)
        except UserError as err:
            raise UserError(f"{what}, batch from row {row_base}: {err}") from None
        csr = relevance_csr(encoded, list(logic), query_ids=ids, threads=threads)
        counts = csr.counts()
        q_parts.append(np.repeat(np.arange(len(ids), dtype=np.uint32), counts))
        c_parts.append(glob[csr.clip_indices.astype(np.int64)].astype(np.uint32))
        n_batches += 1
        n_events += len(encoded.clip)
        max_held = max(max_held, frame.height)
        row_base += frame.height

    carry: list[pa.RecordBatch] = []
    held = 0

    def pieces():
        # record batches cut so that the rows held never pass batch_events (plus one clip's tail)
        # no read-ahead: Arrow would otherwise decode several files ahead, and memory would grow
        # with the file size rather than with the batch
        scanner = dataset.scanner(columns=columns, batch_size=min(batch_events, 1 << 20), batch_readahead=0, fragment_readahead=0, use_threads=False)
        for batch in scanner.to_batches():
            start = 0
            while start < batch.num_rows:
                take = max(1, min(batch.num_rows - start, batch_events - held))
                yield batch.slice(start, take)
                start += take

    for piece in pieces():
        carry.append(piece)
        held += piece.num_rows
        if held < batch_events:
            continue
        frame = pl.from_arrow(pa.Table.from_batches(carry))
        last = frame["clip_id"][-1]
        # the trailing run of the last clip waits for the next batch: it may continue there
        same = (frame["clip_id"] == last).to_numpy()
        cut = len(same) - int(np.argmin(same[::-1])) if not same.all() else 0
        if cut == 0:  # one clip fills the whole batch: keep reading
            continue
        run(frame.slice(0, cut))
        tail = frame.slice(cut)
        carry = tail.to_arrow().to_batches() if tail.height else []
        held = tail.height
    if held:
        run(pl.from_arrow(pa.Table.from_batches(carry)))

    if corpus is not None:
        # clips without events: relevant to the queries an empty clip satisfies (not-only queries)
        empty = ~seen
        if empty.any():
            none = relevance_csr(
                EventArrays(np.zeros(0, np.uint32), np.zeros(0, np.uint32), np.zeros(0, np.int64), np.zeros(0, np.int64), 1.0, ["_"], []),
                list(logic), query_ids=ids, threads=1,
            )
            hit = np.flatnonzero(none.counts() > 0)
            missing = np.flatnonzero(empty)
            q_parts.append(np.repeat(hit.astype(np.uint32), len(missing)))
            c_parts.append(np.tile(missing.astype(np.uint32), len(hit)))
    q = np.concatenate(q_parts) if q_parts else np.zeros(0, np.uint32)
    c = np.concatenate(c_parts) if c_parts else np.zeros(0, np.uint32)
    sort = np.lexsort((c, q))
    indptr = np.concatenate([[0], np.cumsum(np.bincount(q, minlength=len(ids)))]).astype(np.uint64)
    clip_list: list[str] | pl.Series = order.to_list()
    if corpus is not None:  # as given: a Series stays one
        clip_list = corpus["clip_id"] if isinstance(clip_ids, pl.Series) else corpus["clip_id"].to_list()
    csr = RelevanceCSR(indptr=indptr, clip_indices=c[sort].astype(np.uint32), query_ids=ids, clip_ids=clip_list)
    return csr, StreamStats(n_batches, n_events, max_held, int((~seen).sum()) if seen is not None else 0, n_zero)
