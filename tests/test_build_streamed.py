"""Tables written block by block: the same bytes whatever the block size, the whole-frame writer's
bytes for a table of up to STREAM_ROWS rows, and past it the same rows in row groups of
ROW_GROUP_ROWS (so a table's memory is bounded by a constant number of rows)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from reasonaudio.builder import BuildConfig, build
from reasonaudio.builder import tables as tables_mod

CONFIG = dict(clips=240, queries_per_task=4, seed=11)


def digests(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ".reasonaudio-output"
    }


@pytest.fixture(scope="module")
def whole(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The build with the default constants: every table of this size is one block, one frame."""
    return Path(build(tmp_path_factory.mktemp("whole") / "b", BuildConfig(**CONFIG), progress=False))


def test_many_small_blocks_give_the_bytes_of_one(whole: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tables_mod, "BLOCK_ROWS", 37)
    out = Path(build(tmp_path / "b", BuildConfig(**CONFIG), progress=False))
    assert digests(out) == digests(whole)


def test_streamed_tables_hold_the_same_rows_whatever_the_blocks(
    whole: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tables_mod, "STREAM_ROWS", 20)
    monkeypatch.setattr(tables_mod, "ROW_GROUP_ROWS", 16)
    runs = []
    for block in (29, 500):
        monkeypatch.setattr(tables_mod, "BLOCK_ROWS", block)
        runs.append(Path(build(tmp_path / f"b{block}", BuildConfig(**CONFIG), progress=False)))
    streamed_digests, whole_digests = digests(runs[0]), digests(whole)
    assert streamed_digests == digests(runs[1])
    streamed = [name for name in ("clips", "events", "qrels") if pl.read_parquet(whole / f"{name}.parquet").height > 20]
    assert set(streamed) == {"clips", "events", "qrels"}
    for name in ("atoms", "clips", "events", "queries", "qrels", "mc"):
        assert pl.read_parquet(runs[0] / f"{name}.parquet").equals(pl.read_parquet(whole / f"{name}.parquet")), name
    for name in streamed:
        meta = pq.ParquetFile(runs[0] / f"{name}.parquet").metadata
        sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
        assert sizes[:-1] == [16] * (len(sizes) - 1) and 0 < sizes[-1] <= 16, (name, sizes)
    # the BEIR export, the attribution and audio do not depend on how the tables were written
    same = {k for k in whole_digests if not k.endswith(".parquet") and k != "manifest.json"}
    assert {k: streamed_digests[k] for k in same} == {k: whole_digests[k] for k in same}
