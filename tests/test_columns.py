"""StrColumn / PathColumn read as the lists they stand for, and map ids to positions as a dict does."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonaudio.io.columns import PathColumn, StrColumn

# few distinct short ids: repeats and misses are common
ids = st.lists(st.text(alphabet="ab\u00e9\u4e2d0", max_size=3), max_size=40)


@settings(max_examples=300, deadline=None)
@given(items=ids, probes=ids)
def test_positions_equal_the_dict_they_replace(items: list[str], probes: list[str]) -> None:
    column = StrColumn(pl.Series(items, dtype=pl.String))
    at = {item: i for i, item in enumerate(items)}
    expected = [at.get(p, -1) for p in probes]
    assert column.positions(probes).tolist() == expected
    assert column.positions(pl.Series(probes, dtype=pl.String)).dtype == np.int64


@settings(max_examples=300, deadline=None)
@given(items=ids, start=st.integers(-45, 45), stop=st.integers(-45, 45), step=st.sampled_from([None, 1, 2, 3, -1, -2]))
def test_reads_as_the_list(items: list[str], start: int, stop: int, step: int | None) -> None:
    column = StrColumn(items)
    assert len(column) == len(items)
    assert list(column) == items
    assert column == items and column == tuple(items) and column == StrColumn(items)
    assert column[start:stop:step] == items[start:stop:step]
    assert column[:] == items
    for i in range(-len(items), len(items)):
        assert column[i] == items[i]
    for i in (len(items), -len(items) - 1):
        with pytest.raises(IndexError):
            column[i]
    if items:
        assert column.index(items[-1]) == items.index(items[-1])
        assert column.gather(np.arange(len(items))[::-1]).to_list() == items[::-1]
    assert column != items + ["z"]


def test_iterates_past_one_chunk() -> None:
    items = [f"clip_{i:06d}" for i in range(70_000)]
    column = StrColumn(items)
    assert list(column) == items
    assert column == items


@settings(max_examples=100, deadline=None)
@given(names=st.lists(st.sampled_from(["audio/a.wav", "audio/b.wav", "c.flac"]), max_size=10), start=st.integers(-12, 12))
def test_paths_read_as_the_list(names: list[str], start: int) -> None:
    root = Path("/bench")
    expected = [root / n for n in names]
    paths = PathColumn(root, pl.Series(names, dtype=pl.String))
    assert len(paths) == len(expected)
    assert list(paths) == expected and paths == expected
    assert paths[start:] == expected[start:]
    if expected:
        assert paths[start % len(expected)] == expected[start % len(expected)]
        assert isinstance(paths[0], Path)
