"""The manifest's corpus counts made a block at a time equal their whole-array definitions."""

from unittest.mock import patch

import numpy as np
from hypothesis import given, settings, strategies as st

from reasonaudio.atoms.exemplars import atoms_used
from reasonaudio.builder import tables
from reasonaudio.builder.tables import _events_per_clip


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=200), st.sampled_from([1, 2, 5, 1 << 20]))
def test_events_per_clip_counts_clips_by_their_number_of_events(per_clip, block):
    ptr = np.concatenate([[0], np.cumsum(per_clip)]).astype(np.uint64)
    expected = {int(k): int(v) for k, v in zip(*np.unique(np.array(per_clip, dtype=np.int64), return_counts=True))}
    with patch.object(tables, "COUNT_BLOCK", block):
        got = _events_per_clip(ptr)
    assert got == expected and list(got) == sorted(got)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 4), max_size=200), st.integers(0, 6), st.sampled_from([1, 2, 5, 1 << 20]))
def test_counts_by_block_are_a_bincount(values, minlength, block):
    column = np.array(values, dtype=np.uint8)
    with patch.object(tables, "COUNT_BLOCK", block):
        got = tables._counts(tables._blocks_of(column), minlength)
    assert got.tolist() == np.bincount(column, minlength=minlength).tolist()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 300), max_size=300), st.sampled_from([1, 3, 64, 1 << 22]))
def test_atoms_used_are_the_distinct_atoms_ascending(atoms, block):
    got = atoms_used(np.array(atoms, dtype=np.uint32), block=block)
    assert got == sorted(set(atoms))
    assert all(type(a) is int for a in got)
