"""An on-disk store of embeddings, written batch by batch and read memory-mapped.

A store is a directory:

    embeddings.npy   float32 [rows, dim], a plain NumPy .npy file (np.load(..., mmap_mode="r"))
    ids.parquet      one column `id`: the row's query_id or clip_id, in row order
    state.json       {"rows", "dim", "done", "source", "ids_sha256"}: `done` rows are written

Writing never holds more than one batch: each batch is encoded, copied into the memory-mapped
`.npy`, flushed to disk, and only then is `done` advanced in `state.json` (replaced atomically),
so a store interrupted anywhere (Ctrl-C, a killed job, a full disk) resumes at its last flushed
batch, and never counts rows that are not on disk. Readers refuse a store whose `done` is short of
its rows. Reading maps the file: rows are paged in as they are used, never loaded whole.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import polars as pl

from reasonaudio.errors import UserError
from reasonaudio.io.columns import StrColumn
from reasonaudio.io.npz import read_npy_header
from reasonaudio.io.outputs import write_atomic

VECTORS, IDS, STATE = "embeddings.npy", "ids.parquet", "state.json"


def ids_digest(ids: Sequence[str]) -> str:
    h = hashlib.sha256()
    for i in ids:
        h.update(i.encode("utf-8") + b"\n")
    return h.hexdigest()


def is_store(path: Path) -> bool:
    return Path(path).is_dir() and (Path(path) / STATE).is_file()


def _state(root: Path) -> dict:
    try:
        state = json.loads((root / STATE).read_text(encoding="utf-8"))
        for key in ("rows", "dim", "done", "source", "ids_sha256"):
            state[key]  # noqa: B018 - presence check
        return state
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as err:
        raise UserError(f"{root / STATE}: not an embedding store's state ({err})") from None


def _write_state(root: Path, state: dict) -> None:
    write_atomic(root / STATE, (json.dumps(state, sort_keys=True) + "\n").encode())


def write_store(
    root: Path,
    ids: Sequence[str],
    encode: Callable[[int, int], np.ndarray],
    *,
    source: str,
    batch_rows: int = 4096,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Fill (or resume filling) the store at `root` with `encode(start, stop)` -> float32
    [stop - start, dim] for successive batches of `ids`. Returns the rows encoded by this call.

    A store begun for other ids or by another `source` is refused, never overwritten. `progress`
    is called with the rows done after each batch."""
    root = Path(root)
    n = len(ids)
    digest = ids_digest(ids)
    if batch_rows < 1:
        raise ValueError("batch_rows must be at least 1")
    if root.exists() and not is_store(root):
        if not root.is_dir() or any(root.iterdir()):
            raise UserError(f"{root}: exists and is not an embedding store (choose a new directory)")
    state = _state(root) if is_store(root) else None
    if state is not None:
        if state["ids_sha256"] != digest or state["rows"] != n:
            raise UserError(f"{root}: a store of {state['rows']} other ids; use a new directory for this benchmark")
        if state["source"] != source:
            raise UserError(f"{root}: a store begun by {state['source']!r}, not {source!r}; use a new directory")
    start = int(state["done"]) if state is not None else 0
    if progress is not None:
        progress(start)
    written = 0
    vectors = None
    try:
        while start < n:
            stop = min(n, start + batch_rows)
            block = np.asarray(encode(start, stop), dtype=np.float32)
            if block.ndim != 2 or block.shape[0] != stop - start:
                raise UserError(f"{source}: expected {stop - start} embeddings for rows {start}..{stop}, got shape {block.shape}")
            if not np.isfinite(block).all():
                raise UserError(f"{source}: rows {start}..{stop} contain NaN or infinite values")
            if state is None:
                # the shape is known once the first batch is: the file is created at its full size
                # (sparse until written) and the ids beside it, before any row counts as done
                root.mkdir(parents=True, exist_ok=True)
                np.lib.format.open_memmap(root / VECTORS, mode="w+", dtype=np.float32, shape=(n, block.shape[1]))
                _id_frame(ids).write_parquet(root / IDS)
                state = {"rows": n, "dim": int(block.shape[1]), "done": 0, "source": source, "ids_sha256": digest}
                _write_state(root, state)
            if block.shape[1] != state["dim"]:
                raise UserError(f"{source}: rows {start}..{stop} have dimension {block.shape[1]}, the store {state['dim']}")
            if vectors is None:
                vectors, offset, dtype = _open_rows(root / VECTORS)
            # written through the file, not a map: written rows then stay in the page cache, where a
            # map would keep every row written so far resident in this process
            vectors.seek(offset + start * state["dim"] * dtype.itemsize)
            vectors.write(np.ascontiguousarray(block, dtype=dtype).tobytes())
            vectors.flush()
            os.fsync(vectors.fileno())
            state["done"] = stop
            _write_state(root, state)
            written += stop - start
            start = stop
            if progress is not None:
                progress(start)
    finally:
        if vectors is not None:
            vectors.close()
    if state is None:  # an empty id list: an empty, complete store
        root.mkdir(parents=True, exist_ok=True)
        np.save(root / VECTORS, np.zeros((0, 0), np.float32))
        _id_frame(ids).write_parquet(root / IDS)
        _write_state(root, {"rows": 0, "dim": 0, "done": 0, "source": source, "ids_sha256": digest})
    return written


def _id_frame(ids: Sequence[str]) -> pl.DataFrame:
    return pl.DataFrame({"id": ids.series if isinstance(ids, StrColumn) else ids}, schema={"id": pl.Utf8})


def _open_rows(path: Path):
    """(the .npy file open for writing, the offset of its first row, its dtype)."""
    fh = open(path, "r+b")
    _, _, dtype = read_npy_header(fh, path.name)
    return fh, fh.tell(), np.dtype(dtype)


def _check_length(path: Path) -> None:
    """Refuses a .npy file shorter than its header says (a copy or download cut short), naming
    both sizes: mapping it would only say that the map is longer than the file."""
    with open(path, "rb") as fh:
        shape, _, dtype = read_npy_header(fh, path.name)
        need = fh.tell() + int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    have = path.stat().st_size
    if have < need:
        raise ValueError(f"{path.name} is cut short: {have:,} bytes, its header ({tuple(shape)} {np.dtype(dtype)}) needs {need:,}")


def open_store(root: Path) -> tuple[StrColumn, np.ndarray]:
    """(ids, read-only memory-mapped float32 [rows, dim]) of a complete store; the ids are a
    read-only sequence over the ids column (`reasonaudio.io.columns.StrColumn`)."""
    root = Path(root)
    state = _state(root)
    if state["done"] != state["rows"]:
        raise UserError(f"{root}: incomplete embedding store ({state['done']} of {state['rows']} rows); "
                        "run the same `reasonaudio embed` again to finish it")
    try:
        _check_length(root / VECTORS)
        vectors = np.load(root / VECTORS, mmap_mode="r")
        ids = StrColumn(pl.read_parquet(root / IDS)["id"])
    except (OSError, ValueError, pl.exceptions.PolarsError) as err:
        raise UserError(f"{root}: cannot read the embedding store ({err})") from None
    if vectors.dtype != np.float32 or vectors.ndim != 2 or vectors.shape[0] != state["rows"] or len(ids) != state["rows"]:
        raise UserError(f"{root}: {VECTORS} ({vectors.dtype} {vectors.shape}) or {IDS} ({len(ids)} ids) "
                        f"disagrees with {STATE} ({state['rows']} rows)")
    if ids_digest(ids) != state["ids_sha256"]:
        raise UserError(f"{root}: {IDS} does not match {STATE}")
    return ids, vectors
