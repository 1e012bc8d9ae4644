"""The Rust canonical ranking kernel gives exactly the scores and orders of the numpy definition
it replaced (kept below verbatim as the reference): same bits, same ties, same ranks."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasonaudio import _core
from reasonaudio.errors import UserError
from reasonaudio.retrieval import index as index_module
from reasonaudio.retrieval.index import EmbeddingRanker, l2_normalize, rank_embeddings

# ---- the numpy reference (retrieval/index.py before the Rust kernel) ----------------------------


def canonical_unit(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    squares = np.zeros(x.shape[0], dtype=np.float64)
    for j in range(x.shape[1]):
        squares += x[:, j] * x[:, j]
    norms = np.sqrt(squares)[:, None]
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def canonical_pair_scores(queries_t, clips_t, query_rows, clip_rows) -> np.ndarray:
    acc = np.zeros(len(clip_rows), dtype=np.float64)
    for j in range(clips_t.shape[0]):
        acc += queries_t[j].take(query_rows) * clips_t[j].take(clip_rows)
    return acc


def reference(q: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Complete canonical score matrix and rankings (score descending, then clip index)."""
    qt, ct = np.ascontiguousarray(canonical_unit(q).T), np.ascontiguousarray(canonical_unit(c).T)
    nq, n = q.shape[0], c.shape[0]
    scores = canonical_pair_scores(qt, ct, np.repeat(np.arange(nq), n), np.tile(np.arange(n), nq)).reshape(nq, n)
    ids = np.broadcast_to(np.arange(n), (nq, n))
    order = np.lexsort((ids, -scores), axis=-1)
    return scores, order


def bits(x: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(x, dtype=np.float64).view(np.int64)


# ---- inputs ------------------------------------------------------------------------------------


@st.composite
def embeddings(draw):
    nq = draw(st.integers(1, 12))
    n = draw(st.integers(1, 60))
    d = draw(st.integers(1, 40))
    coarse = draw(st.booleans())  # small integers: many exact ties
    elems = (
        st.integers(-2, 2).map(float)
        if coarse
        else st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False, width=32)
    )
    q = np.array(draw(st.lists(elems, min_size=nq * d, max_size=nq * d)), dtype=np.float32).reshape(nq, d)
    c = np.array(draw(st.lists(elems, min_size=n * d, max_size=n * d)), dtype=np.float32).reshape(n, d)
    # bitwise-duplicate clips and all-zero rows
    dup = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=5))
    for a, b in dup:
        c[a] = c[b]
    if draw(st.booleans()):
        c[draw(st.integers(0, n - 1))] = 0
    if draw(st.booleans()):
        q[draw(st.integers(0, nq - 1))] = 0
    return q, c


@settings(max_examples=150, deadline=None)
@given(embeddings(), st.integers(1, 70), st.integers(1, 5), st.sampled_from([1, 2, 5, 1 << 21]))
def test_rankings_scores_and_ranks_are_bit_identical_to_the_numpy_definition(qc, depth, batch, pairs) -> None:
    """`pairs`: how many relevant pairs are scored per call when the first relevant clips are
    located (a group of queries at a time); no group size may move a rank."""
    saved, index_module._PAIRS = index_module._PAIRS, pairs
    try:
        _check_against_numpy(qc, depth, batch)
    finally:
        index_module._PAIRS = saved


def _check_against_numpy(qc, depth: int, batch: int) -> None:
    q, c = qc
    ref_scores, ref_order = reference(q, c)
    ranker = EmbeddingRanker(q, c)
    k = min(depth, c.shape[0])
    parts = list(ranker.rank(depth=depth, batch_size=batch))
    ids = np.concatenate([p[2] for p in parts])
    scores = np.concatenate([p[1] for p in parts])
    np.testing.assert_array_equal(ids, ref_order[:, :k])
    np.testing.assert_array_equal(bits(scores), bits(np.take_along_axis(ref_scores, ref_order[:, :k], axis=1)))
    full = list(ranker.rank(batch_size=batch))
    np.testing.assert_array_equal(np.concatenate([p[2] for p in full]), ref_order)
    # pair scores, duplicates included
    rng = np.random.default_rng(0)
    qi, ci = rng.integers(0, q.shape[0], 30), rng.integers(0, c.shape[0], 30)
    np.testing.assert_array_equal(bits(ranker.pair_scores(qi, ci)), bits(ref_scores[qi, ci]))
    # the rank of the first relevant clip, counted in the ranking pass
    relevant = [np.unique(rng.integers(0, c.shape[0], rng.integers(0, 6))) for _ in range(q.shape[0])]
    located = np.concatenate([p[3] for p in ranker.rank(depth=depth, batch_size=batch, relevant=relevant)])
    for i, r in enumerate(relevant):
        expected = np.flatnonzero(np.isin(ref_order[i], r))[0] if len(r) else -1
        assert located[i] == expected
        if len(r):
            assert ranker.deep_rank(i, r) == expected
    # the float32 unit rows are the float64 ones rounded once
    np.testing.assert_array_equal(l2_normalize(c).view(np.int32), canonical_unit(c).astype(np.float32).view(np.int32))


def test_block_edges_and_threads_do_not_change_a_bit() -> None:
    """Sizes across the kernel's tiles (8 queries x 16 clips), groups (32 queries) and chunks
    (1024 clips), exact duplicates across chunks, and one thread against all."""
    rng = np.random.default_rng(3)
    base = rng.normal(size=(300, 37)).astype(np.float32)
    c = base[rng.integers(0, 300, 2100)]
    q = rng.normal(size=(70, 37)).astype(np.float32)
    q[5] = c[1500]  # a query equal to a clip: a score of exactly 1-ish, tied with its duplicates
    ref_scores, ref_order = reference(q, c)
    qn, cn = _core.unit_norms(q), _core.unit_norms(c)
    for threads in (1, 0):
        for k in (1, 100, 1024, 2100):
            s, ids, _ = _core.canonical_rank(_core.UnitRows(q, qn), _core.UnitRows(c, cn), k, threads=threads)
            np.testing.assert_array_equal(ids, ref_order[:, :k])
            np.testing.assert_array_equal(bits(s), bits(np.take_along_axis(ref_scores, ref_order[:, :k], axis=1)))


def test_rank_embeddings_batches_match_numpy_order() -> None:
    rng = np.random.default_rng(0)
    q, c = rng.standard_normal((37, 16)).astype(np.float32), rng.standard_normal((50, 16)).astype(np.float32)
    parts = list(rank_embeddings(q, c, batch_size=8))
    assert [p[0] for p in parts] == [0, 8, 16, 24, 32]
    np.testing.assert_array_equal(np.concatenate([p[2] for p in parts]), reference(q, c)[1])


def test_bad_vectors_are_one_clear_error() -> None:
    with pytest.raises(UserError, match="dimension 3 but clip vectors 4"):
        EmbeddingRanker(np.ones((2, 3), np.float32), np.ones((2, 4), np.float32))
    bad = np.ones((3, 4), np.float32)
    bad[2, 1] = np.nan
    with pytest.raises(UserError, match="clip vectors: row 2 contains NaN"):
        EmbeddingRanker(np.ones((2, 4), np.float32), bad)
    with pytest.raises(ValueError, match="outside"):
        EmbeddingRanker(np.ones((2, 4), np.float32), np.ones((3, 4), np.float32)).pair_scores(np.array([0]), np.array([3]))
