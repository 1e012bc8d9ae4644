"""validate's compact paths for million-clip tables agree with the plain definitions they replace:
duplicates screened by a hash, event pairs a block at a time, relevant pairs as integers, test.tsv
streamed beside qrels.parquet; and the faults they meet are still named by row, clip and line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from reasonaudio.validate import validate_benchmark
from reasonaudio.validate.events import _event_pairs
from reasonaudio.validate.layout import _duplicates
from reasonaudio.validate.relevance import _within


def failed(path: Path, **kwargs) -> dict[str, list[str]]:
    report = validate_benchmark(path, check_audio=False, **kwargs)
    return {c.name: c.examples for c in report.checks if c.violations}


# ------------------------------------------------------------------------- the compact primitives


@pytest.mark.parametrize("seed", range(4))
def test_duplicates_agree_with_a_plain_group_by(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 5000
    words = np.array(["a", "b", "ab", "ba", "", "x" * 40, "q0001", "clip_000001"])
    frame = pl.DataFrame({
        "s": pl.Series(words[rng.integers(0, len(words), n)]).set(pl.Series(rng.random(n) < 0.05), None),
        "t": words[rng.integers(0, len(words), n)],
        "i": rng.integers(0, 60, n),
    })
    for columns in (["s"], ["s", "t"], ["t", "s"], ["s", "i"], ["i"], ["s", "t", "i"]):
        plain = frame.group_by(columns).len().filter(pl.col("len") > 1).sort(columns)
        assert _duplicates(frame, columns).equals(plain), columns
    # two columns holding the same values do not cancel out in the key
    same = pl.DataFrame({"a": ["x", "y", "z"], "b": ["x", "y", "z"]})
    assert _duplicates(same, ["a", "b"]).height == 0
    assert _duplicates(frame.head(0), ["s", "t"]).height == 0


def _pairs_by_join(code: np.ndarray, index: np.ndarray, on: np.ndarray, off: np.ndarray) -> set[tuple[int, int, int]]:
    ev = pl.DataFrame({"clip": code, "event_index": index, "on": on, "off": off}).with_row_index("_row")
    pairs = ev.join(ev, on="clip", suffix="_b").filter(pl.col("event_index") < pl.col("event_index_b"))
    common = pl.min_horizontal("off", "off_b") - pl.max_horizontal("on", "on_b")
    return set(pairs.select(pl.col("_row").cast(pl.Int64), pl.col("_row_b").cast(pl.Int64), common).iter_rows())


@pytest.mark.parametrize("seed", range(4))
def test_event_pairs_agree_with_a_self_join(seed: int) -> None:
    """Unsorted events, clips of 1 to 40 events, repeated event indices (no pair) and a clip
    with every event at the same index."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 41, 60)
    code = rng.permutation(np.repeat(np.arange(sizes.size), sizes))
    index = rng.integers(0, 30, code.size)
    index[code == 0] = 7
    on = rng.integers(0, 10_000, code.size)
    off = on + rng.integers(1, 3_000, code.size)
    blocks = list(_event_pairs(code, index, on, off))
    got = [(int(a), int(b), int(c)) for ra, rb, rc in blocks for a, b, c in zip(ra, rb, rc)]
    assert len(got) == len(set(got))
    assert set(got) == _pairs_by_join(code, index, on, off)
    assert len(blocks) <= int(sizes.max())  # block d pairs events d places apart in their clip
    assert list(_event_pairs(*(np.zeros(0, np.int64),) * 4)) == []


def test_within_agrees_with_isin() -> None:
    rng = np.random.default_rng(1)
    values = rng.integers(-3, 50, 3000)
    for among in (np.sort(rng.integers(0, 40, 500)), rng.integers(0, 40, 500), np.zeros(0, np.int64), np.array([7])):
        assert np.array_equal(_within(values, among, block=64), np.isin(values, among))


# --------------------------------------------------------------- faults the compact paths still name


def test_a_clip_listed_twice_is_counted_once_per_row(bf, bench: Path) -> None:
    """A repeated clips.parquet row is a layout.ids fault; its events count for both rows and its
    relevant pairs are one pair each, as with the ids compared as strings."""
    bf.rewrite_table(bench, "clips", lambda f: pl.concat([f, f.filter(pl.col("clip_id") == "clip0002")]))
    fails = failed(bench)
    assert set(fails) == {"layout.ids", "beir.corpus"}  # corpus.jsonl repeats the clip's _id
    assert fails["layout.ids"] == ["clips.parquet: clip_id=clip0002 occurs 2 times", "clips.parquet: path=audio/clip0002.wav occurs 2 times"]


def test_events_of_an_unknown_clip_are_paired_among_themselves(bf, bench: Path) -> None:
    """Events naming a clip that clips.parquet lacks: each named by layout.references, and two of
    them touching still break the margin between events of one clip."""
    ghost = pl.DataFrame({
        "clip_id": ["ghost", "ghost"], "event_index": [0, 1], "atom_id": ["dog_bark", "bell"], "label": ["dog_bark", "bell"],
        "onset_sample": [4000, 12000], "offset_sample": [12000, 20000], "onset_s": [0.5, 1.5], "offset_s": [1.5, 2.5], "gain_db": [0.0, 0.0],
    })
    bf.rewrite_table(bench, "events", lambda f: pl.concat([f, ghost.select(f.columns).cast(f.schema)]))
    fails = failed(bench)
    assert "events.parquet: clip_id ghost (event 0) is not in clips.parquet" in fails["layout.references"]
    assert "clip ghost: dog_bark [0.500-1.500 s] and bell [1.500-2.500 s] are 0.000 s apart (need more than 0.5 s either way)" in fails["margin.event_gaps"]


def test_repeated_event_index_pairs_no_events(bf, bench: Path) -> None:
    """Two events of a clip at the same event_index are a layout.ids fault and never a pair; the
    clip's other pairs are still checked."""
    def edit(f: pl.DataFrame) -> pl.DataFrame:
        row = f.with_row_index("_r").filter(pl.col("clip_id") == "clip0005").sort("event_index")["_r"][1]
        return f.with_columns(pl.when(pl.int_range(pl.len()) == row).then(0).otherwise(pl.col("event_index")).cast(f["event_index"].dtype).alias("event_index"))

    bf.rewrite_table(bench, "events", edit)
    fails = failed(bench, margin_s=5.0)
    assert "events.parquet: clip_id=clip0005, event_index=0 occurs 2 times" in fails["layout.ids"]
    pairs = [e for e in failed(bench, margin_s=5.0, max_examples=1000)["margin.event_gaps"] if e.startswith("clip clip0005:")]
    events = pl.read_parquet(bench / "events.parquet").filter(pl.col("clip_id") == "clip0005")
    n, zeros = events.height, int((events["event_index"] == 0).sum())
    assert len(pairs) == n * (n - 1) // 2 - zeros * (zeros - 1) // 2


def test_qrels_naming_an_unknown_clip_or_query(bf, bench: Path) -> None:
    extra = pl.DataFrame({"query_id": ["q0001", "q9999"], "clip_id": ["clip9999", "clip0000"], "relevance": [1, 1]})
    bf.rewrite_table(bench, "qrels", lambda f: pl.concat([f, extra.cast(f.schema)]))
    fails = failed(bench)
    rows = pl.read_parquet(bench / "qrels.parquet").height
    assert f"extra in qrels.parquet row {rows - 2}: (q0001, clip9999) is not relevant by §2" in fails["relevance.qrels"]
    assert not any("q9999" in e for e in fails["relevance.qrels"])  # an unknown query is layout.references'
    assert f"qrels.parquet row {rows - 1}: query_id q9999 is not in queries.parquet" in fails["layout.references"]


def test_a_pair_repeated_in_both_qrels_and_test_tsv(bf, bench: Path) -> None:
    """test.tsv equal row for row to a qrels.parquet that repeats a pair: the streamed comparison
    agrees, and the line reading names the repeat."""
    bf.rewrite_table(bench, "qrels", lambda f: pl.concat([f.head(2), f[1:2], f[2:]]))
    fails = failed(bench)
    assert "qrels.parquet: query_id=q0000, clip_id=clip0005 occurs 2 times" in fails["layout.ids"]
    assert fails["beir.qrels"] == ["test.tsv line 4: pair ('q0000', 'clip0005') listed twice"]


def test_mc_clip_listed_twice(bf, bench: Path) -> None:
    """An mc negative whose clip_id clips.parquet repeats is judged on the clip's last row, as the
    relevant one."""
    bf.rewrite_table(bench, "clips", lambda f: pl.concat([f, f.filter(pl.col("clip_id") == "clip0000")]))
    bf.rewrite_table(bench, "mc", lambda f: f.with_columns(pl.when(pl.col("query_id") == "q0001").then(pl.lit("clip0000")).otherwise(pl.col("negative_clip_id")).alias("negative_clip_id")))
    fails = failed(bench)
    assert fails["mc.pairs"] == ["mc.parquet row 1 (query q0001): negative clip0000 is relevant"]
