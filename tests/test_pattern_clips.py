"""The clips of a pattern read by position equal the index list they stand for, through any pops."""

import numpy as np
from hypothesis import given, settings, strategies as st

from reasonaudio.queries.generator import PatternClips


@settings(max_examples=200, deadline=None)
@given(
    flags=st.lists(st.integers(0, 1), max_size=300),
    flag=st.integers(0, 1),
    excluded=st.lists(st.integers(0, 299), max_size=40),
    block=st.sampled_from([1, 2, 7, 64, 1 << 16]),
    draws=st.lists(st.floats(0, 1, exclude_max=True), max_size=60),
)
def test_positions_and_pops_match_a_list(flags, flag, excluded, block, draws):
    arr = np.array(flags, dtype=np.uint8)
    ref = [i for i, f in enumerate(flags) if f == flag and i not in set(excluded)]
    clips = PatternClips(arr, flag, excluded, block=block)
    assert len(clips) == len(ref)
    assert list(clips) == ref
    if ref:
        assert clips[-1] == ref[-1]
    for u in draws:
        if not ref:
            break
        k = int(u * len(ref))
        assert clips.pop(k) == ref.pop(k)
        assert len(clips) == len(ref)
    assert list(clips) == ref
    assert clips[1:4] == ref[1:4]


def test_a_position_out_of_range_is_an_index_error():
    clips = PatternClips(np.array([0, 1, 1], dtype=np.uint8), 1)
    for k in (2, -3):
        try:
            clips[k]
        except IndexError:
            continue
        raise AssertionError(f"position {k} of two clips was read")
