"""Embeddings computed elsewhere: `precomputed:QUERIES,CLIPS`.

Each side is one file:
- `.npy`: float [n, d], rows in the order of the benchmark's queries.parquet / clips.parquet;
- `.npz`: arrays `ids` (strings) and `embeddings` (float [n, d]);
- `.parquet`: an id column (`query_id` or `clip_id`; `id` also accepted) and an `embedding` column
  of equal-length float lists (or fixed-size arrays).
- a directory: an embedding store (`reasonaudio embed`, `reasonaudio.io.embedding_store`), read
  memory-mapped: rows in the benchmark's order are used in place, never loaded whole.
Id-keyed files may hold extra rows (a superset of the benchmark); every benchmark id must be there.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from reasonaudio.errors import UserError
from reasonaudio.io.columns import StrColumn
from reasonaudio.io.embedding_store import is_store, open_store
from reasonaudio.retrieval.base import ClipSet, EmbeddingModel, ModelOptions, QuerySet
from reasonaudio.retrieval.registry import ModelMeta


def _load(path: Path, id_column: str) -> tuple[Sequence[str] | None, np.ndarray]:
    """(ids or None for positional .npy, float32 matrix)."""
    if is_store(path):
        return open_store(path)
    if not path.is_file():
        raise UserError(f"{path}: file not found")
    suffix = path.suffix.lower()
    try:
        if suffix == ".npy":
            matrix = np.load(path, allow_pickle=False, mmap_mode="r")  # paged in as used
            ids = None
        elif suffix == ".npz":
            with np.load(path, allow_pickle=False) as data:
                missing = [k for k in ("ids", "embeddings") if k not in data]
                if missing:
                    raise UserError(f"{path}: missing array(s) {', '.join(missing)}; found {', '.join(data.files)}")
                ids = [str(x) for x in data["ids"].tolist()]
                matrix = data["embeddings"]
        elif suffix == ".parquet":
            frame = pl.read_parquet(path)
            key = id_column if id_column in frame.columns else "id" if "id" in frame.columns else None
            if key is None or "embedding" not in frame.columns:
                raise UserError(
                    f"{path}: expected columns {id_column!r} (or 'id') and 'embedding'; found {', '.join(frame.columns)}"
                )
            ids = frame[key].cast(pl.Utf8).to_list()
            lengths = frame["embedding"].list.len().unique().to_list() if frame.schema["embedding"] == pl.List else None
            if lengths is not None and len(lengths) > 1:
                raise UserError(f"{path}: 'embedding' rows have different lengths {sorted(lengths)}")
            matrix = np.asarray(frame["embedding"].to_list(), dtype=np.float32)
        else:
            raise UserError(f"{path}: unsupported embedding file type {suffix!r}; use .npy, .npz or .parquet")
    except UserError:
        raise
    except (ValueError, OSError, pl.exceptions.PolarsError) as err:
        raise UserError(f"{path}: cannot read embeddings ({err})") from None
    matrix = np.asarray(matrix)
    if matrix.ndim != 2 or not np.issubdtype(matrix.dtype, np.number):
        raise UserError(f"{path}: expected a numeric matrix [n, d], got shape {matrix.shape} of {matrix.dtype}")
    if ids is not None:
        if len(ids) != matrix.shape[0]:
            raise UserError(f"{path}: {len(ids)} ids but {matrix.shape[0]} embedding rows")
        if len(set(ids)) != len(ids):
            dup = next(i for i in ids if ids.count(i) > 1)
            raise UserError(f"{path}: id {dup!r} appears more than once")
    return ids, matrix.astype(np.float32, copy=False)


def _select(path: Path, ids: Sequence[str] | None, matrix: np.ndarray, wanted: Sequence[str], what: str) -> np.ndarray:
    if ids is None:
        if matrix.shape[0] != len(wanted):
            raise UserError(
                f"{path}: {matrix.shape[0]} rows but the benchmark has {len(wanted)} {what}s "
                f"(a .npy file must follow the {what}s table order; use .npz/.parquet with ids otherwise)"
            )
        return matrix
    if ids == wanted:
        return matrix  # in order already: a memory-mapped store stays mapped
    wanted = StrColumn(wanted)
    rows = StrColumn(ids).positions(wanted.series)
    absent = np.flatnonzero(rows < 0)
    if len(absent):
        shown = ", ".join(repr(m) for m in wanted.gather(absent[:5]).to_list())
        raise UserError(f"{path}: no embedding for {len(absent)} {what}_id(s), e.g. {shown}")
    return matrix[rows]


class PrecomputedModel(EmbeddingModel):
    def __init__(self, query_file: Path, clip_file: Path) -> None:
        self.query_file, self.clip_file = query_file, clip_file
        self.queries = _load(query_file, "query_id")
        self.clips = _load(clip_file, "clip_id")
        dq, dc = self.queries[1].shape[1], self.clips[1].shape[1]
        if dq != dc:
            raise UserError(f"precomputed: query embeddings ({self.query_file}) have dimension {dq}, "
                            f"clip embeddings ({self.clip_file}) have {dc}")

    def encode_queries(self, queries: QuerySet) -> np.ndarray:
        return _select(self.query_file, *self.queries, queries.ids, "query")

    def encode_clips(self, clips: ClipSet) -> np.ndarray:
        return _select(self.clip_file, *self.clips, clips.ids, "clip")

    def encode_text(self, texts: list[str]) -> np.ndarray:
        raise UserError("precomputed embeddings are looked up by query_id, not computed from text")

    def encode_audio(self, paths: list[Path]) -> np.ndarray:
        raise UserError("precomputed embeddings are looked up by clip_id, not computed from audio")


def from_spec(argument: str | None, options: ModelOptions) -> PrecomputedModel:
    parts = (argument or "").split(",")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise UserError("--model precomputed:QUERIES,CLIPS needs two files separated by a comma, "
                        "e.g. precomputed:queries.npy,clips.npy")
    return PrecomputedModel(Path(parts[0].strip()), Path(parts[1].strip()))


MODELS = (
    ModelMeta("precomputed", "model", "precomputed:QUERIES,CLIPS", "baseline", from_spec, vram="CPU", extra="",
              note="embeddings made elsewhere (.npy / .npz / .parquet, or a `reasonaudio embed` store)"),
)
