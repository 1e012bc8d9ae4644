"""validate's compact paths for million-clip tables agree with the plain definitions they replace:
tables read with categorical ids, duplicates screened by a hash, event pairs a block at a time, the
events grouped by label without a join of the whole table, relevant pairs as integers, test.tsv
streamed beside qrels.parquet; and the faults they meet are still named by row, clip and line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reasonaudio.contract import TABLE_SCHEMAS
from reasonaudio.contract.reference import EventIndex
from reasonaudio.validate import validate_benchmark
from reasonaudio.validate.events import _event_pairs
from reasonaudio.validate.layout import _duplicates
from reasonaudio.validate.relevance import _within
from reasonaudio.validate.tables import _collect_coded, _coded_scan, _column_problems


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
    parts = list(_event_pairs(code, index, on, off, block=7))  # a block in parts of at most 7 pairs
    assert all(0 < a.size <= 7 for a, _, _ in parts)
    assert [(int(a), int(b), int(c)) for ra, rb, rc in parts for a, b, c in zip(ra, rb, rc)] == got
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


# ------------------------------------------------------------------------------ the coded read


_IDS = st.sampled_from(["a", "b", "clip_000001", "q0001", "", "x" * 30, "é"])


@st.composite
def _events_frames(draw) -> pl.DataFrame:
    n = draw(st.integers(0, 30))
    ids = st.lists(st.one_of(_IDS, st.none()), min_size=n, max_size=n)
    numbers = st.lists(st.one_of(st.integers(-5, 10**9), st.none()), min_size=n, max_size=n)
    frame = pl.DataFrame({
        "clip_id": draw(ids), "event_index": draw(numbers), "label": draw(ids),
        "onset_sample": draw(numbers), "offset_sample": draw(numbers),
        "onset_s": pl.Series(draw(numbers), dtype=pl.Float64), "offset_s": pl.Series(draw(numbers), dtype=pl.Float64),
        "gain_db": pl.Series(draw(numbers), dtype=pl.Float64), "mode": draw(ids), "unused": draw(numbers),
    }, schema_overrides={"clip_id": pl.String, "label": pl.String, "mode": pl.String, "event_index": pl.Int32, "onset_sample": pl.Int64, "offset_sample": pl.Int64, "unused": pl.Int64})
    # atom ids as strings or as integers (compared as their decimal strings)
    atoms = draw(st.lists(st.one_of(st.integers(0, 99), st.none()), min_size=n, max_size=n))
    atom_id = pl.Series("atom_id", atoms, dtype=pl.Int64) if draw(st.booleans()) else pl.Series("atom_id", [None if a is None else f"atom_{a}" for a in atoms], dtype=pl.String)
    frame = frame.with_columns(atom_id)
    if draw(st.booleans()):
        frame = frame.with_columns(pl.col("label").cast(pl.Categorical))
    columns = draw(st.permutations(frame.columns))
    return frame.select(columns)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(frame=_events_frames())
def test_coded_read_is_the_plain_read(frame: pl.DataFrame, tmp_path: Path) -> None:
    """The coded read keeps the required and used columns of the file, in its order, and its values
    read back as strings are those of the plain read: nulls, integer ids and categoricals included."""
    path = tmp_path / "events.parquet"
    frame.write_parquet(path)
    coded = _collect_coded(_coded_scan(path, "events"))
    assert coded is not None
    plain = pl.read_parquet(path)
    assert coded.columns == [c for c in plain.columns if c != "unused"]
    assert all(isinstance(coded.schema[c], pl.Categorical) for c in ("clip_id", "atom_id", "label", "mode"))
    as_strings = [pl.col(c).cast(pl.String) for c in ("clip_id", "atom_id", "label", "mode")]
    assert coded.with_columns(as_strings).equals(plain.select(coded.columns).with_columns(as_strings))
    # the checks of the columns name the same problems in either read
    assert _column_problems(coded, TABLE_SCHEMAS["events"]) == _column_problems(plain, TABLE_SCHEMAS["events"])


def test_coded_read_leaves_faults_to_the_plain_read(tmp_path: Path) -> None:
    """A missing column, a wrong type or a file that is no parquet: the plain read names them."""
    events = pl.DataFrame({c: [1] for c in TABLE_SCHEMAS["events"]}).with_columns(pl.lit("c").alias("clip_id"), pl.lit("l").alias("label"))
    path = tmp_path / "events.parquet"
    events.drop("onset_s").write_parquet(path)
    assert _collect_coded(_coded_scan(path, "events")) is None
    events.with_columns(pl.col("label").cast(pl.Float64, strict=False)).write_parquet(path)
    assert _collect_coded(_coded_scan(path, "events")) is None
    path.write_bytes(b"not parquet")
    assert _collect_coded(_coded_scan(path, "events")) is None
    events.write_parquet(path)
    assert _collect_coded(_coded_scan(path, "events")).height == 1


@st.composite
def _indexed_events(draw) -> tuple[pl.DataFrame, list[str]]:
    """Events over clips a0..a5 and clips the list lacks, the list with repeated ids, labels as
    strings or categoricals."""
    n = draw(st.integers(0, 40))
    clip = st.sampled_from(["a0", "a1", "a2", "a3", "a4", "a5", "ghost"])
    events = pl.DataFrame({
        "clip_id": draw(st.lists(clip, min_size=n, max_size=n)),
        "label": draw(st.lists(st.sampled_from(["dog", "bell", "rain", "x" * 20]), min_size=n, max_size=n)),
        "onset_sample": draw(st.lists(st.integers(0, 10**6), min_size=n, max_size=n)),
        "offset_sample": draw(st.lists(st.integers(0, 10**6), min_size=n, max_size=n)),
    }, schema={"clip_id": pl.String, "label": pl.String, "onset_sample": pl.Int64, "offset_sample": pl.Int32})
    if draw(st.booleans()):
        events = events.with_columns(pl.col("clip_id", "label").cast(pl.Categorical))
    ids = draw(st.lists(st.sampled_from(["a0", "a1", "a2", "a3", "a4", "a5"]), max_size=8))
    return events, ids


@settings(max_examples=80, deadline=None)
@given(case=_indexed_events(), as_series=st.booleans())
def test_event_index_agrees_with_a_join_and_partition(case: tuple[pl.DataFrame, list[str]], as_series: bool) -> None:
    """Each label's (clip position, on, off) rows, in the events' order, an event at every position
    of its clip's id (a repeated id places it twice), events of unlisted clips left out."""
    events, ids = case
    index = EventIndex(events, pl.Series(ids, dtype=pl.String) if as_series else ids, 16000)
    rows = events.with_columns(pl.col("clip_id", "label").cast(pl.String)).with_row_index("_e").iter_rows(named=True)
    expected: dict[str, list[tuple[int, int, int, int]]] = {}
    for row in rows:
        for position, clip_id in enumerate(ids):
            if clip_id == row["clip_id"]:
                expected.setdefault(row["label"], []).append((row["_e"], position, row["onset_sample"], row["offset_sample"]))
    assert set(index.by_label) == set(expected)
    for label, found in expected.items():
        # in the events' order; an event placed twice: its positions ascending
        want = [(c, on, off) for _, c, on, off in sorted(found)]
        assert index.events(label).rows() == want, label
        assert index.events(label).schema == pl.Schema({"clip": pl.Int64, "on": pl.Int64, "off": pl.Int64})
    assert index.events("absent").height == 0


def test_present_masks_kept_are_bounded() -> None:
    labels = [f"l{i}" for i in range(EventIndex.PRESENT_KEPT + 5)]
    events = pl.DataFrame({"clip_id": ["c0", "c1"] * len(labels), "label": [l for l in labels for _ in range(2)],
                           "onset_sample": 0, "offset_sample": 1})
    index = EventIndex(events, ["c0", "c1", "c2"], 16000)
    for _ in range(2):
        for label in labels:
            assert index.present(label).tolist() == [True, True, False]
        assert len(index._present) == EventIndex.PRESENT_KEPT


def test_coded_tables_read_back_as_the_plain_ones(pristine: Path) -> None:
    """Every table read coded, as strings again, is the plain read's columns it keeps; the events'
    times in seconds, left out of the frame held, come back from `Tables.lazy`."""
    from reasonaudio.validate.checklist import _Recorder
    from reasonaudio.validate.tables import _read_tables

    coded, plain = _read_tables(pristine, _Recorder(10), coded=True), _read_tables(pristine, _Recorder(10))
    assert coded.fatal == plain.fatal == []
    assert not {"onset_s", "offset_s", "gain_db"} & set(coded["events"].columns)

    def as_strings(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.with_columns(pl.col(c).cast(pl.String) for c, dtype in frame.schema.items() if isinstance(dtype, pl.Categorical))

    for name in TABLE_SCHEMAS:
        assert as_strings(coded[name]).equals(plain[name].select(coded[name].columns)), name
    streamed = coded.lazy("events").collect()
    assert as_strings(streamed).equals(plain["events"].select(streamed.columns))
    assert plain.lazy("events").collect().equals(plain["events"])


def test_tables_stored_with_categoricals_pass(bf, bench: Path) -> None:
    """Ids, labels and other strings stored as categoricals are read as the strings they hold."""
    bf.rewrite_table(bench, "clips", lambda f: f.with_columns(pl.col("clip_id", "path", "pattern").cast(pl.Categorical)))
    bf.rewrite_table(bench, "events", lambda f: f.with_columns(pl.col("clip_id", "label").cast(pl.Categorical)))
    bf.rewrite_table(bench, "qrels", lambda f: f.with_columns(pl.col("query_id").cast(pl.Categorical)))
    assert failed(bench) == {}
