"""validate: the hand-checked fixture passes; each planted violation is caught by the right check."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
import soundfile as sf
from hypothesis import given
from hypothesis import strategies as st

from reasonaudio.cli import main
from reasonaudio.errors import UserError
from reasonaudio.validate.selection import AudioSelection
from reasonaudio.validate import (
    Constraint,
    EventIndex,
    LogicError,
    parse_logic,
    task_shape_problem,
    validate_benchmark,
)


def failed(path: Path, **kwargs) -> dict[str, list[str]]:
    report = validate_benchmark(path, **kwargs)
    return {c.name: c.examples for c in report.checks if c.violations}


def test_fixture_passes_every_check(pristine: Path) -> None:
    report = validate_benchmark(pristine)
    assert report.ok, report.format_text()
    assert not report.fatal
    assert all(c.skipped is None for c in report.checks), [c.name for c in report.checks if c.skipped]
    # relevance recomputed from §2 agrees with the hand-derived qrels of the fixture
    assert "15 relevant pair(s) recomputed" in " ".join(report.check("relevance.qrels").notes)


def test_recomputed_relevance_matches_hand_labels(bf, pristine: Path) -> None:
    events = pl.read_parquet(pristine / "events.parquet")
    clip_ids = sorted(bf.CLIPS)
    index = EventIndex(events, clip_ids, bf.SAMPLE_RATE)
    for qid, _task, _text, logic in bf.QUERIES:
        relevant = index.relevant(parse_logic(json.dumps(logic)))
        assert [clip_ids[i] for i in np.flatnonzero(relevant)] == bf.QRELS[qid], qid


# ---------------------------------------------------------------------------- fatal: files, columns


def test_missing_file_is_fatal(bench: Path) -> None:
    (bench / "mc.parquet").unlink()
    report = validate_benchmark(bench)
    assert report.fatal and any("mc.parquet" in f for f in report.fatal)
    assert "mc.parquet: file not found" in report.check("layout.files").examples[0]
    assert report.check("mc.pairs").skipped
    assert report.check("relevance.qrels").passed  # what can still run, runs


def test_missing_column_is_fatal_and_named(bf, bench: Path) -> None:
    bf.rewrite_table(bench, "events", lambda f: f.drop("onset_s"))
    report = validate_benchmark(bench)
    assert report.fatal
    (example,) = report.check("layout.columns").examples
    assert "events.parquet" in example and "'onset_s'" in example and "missing column" in example


def test_wrong_column_type_is_fatal(bf, bench: Path) -> None:
    bf.rewrite_table(bench, "events", lambda f: f.with_columns(pl.col("onset_sample").cast(pl.Float64)))
    report = validate_benchmark(bench)
    (example,) = report.check("layout.columns").examples
    assert "onset_sample" in example and "Float64" in example and "expected int" in example


def test_unreadable_parquet_is_fatal(bench: Path) -> None:
    (bench / "queries.parquet").write_bytes(b"not parquet")
    report = validate_benchmark(bench)
    assert "queries.parquet: not a readable parquet file" in report.check("layout.files").examples[0]
    assert report.check("queries.logic").skipped


# ------------------------------------------------------------------------------- layout / manifest


def test_hash_mismatch(bench: Path) -> None:
    manifest = json.loads((bench / "manifest.json").read_text())
    manifest["hashes"]["qrels.parquet"] = "0" * 64
    manifest["hashes"]["atoms"] = "blake9:abc"  # unknown scheme: noted, not a failure
    (bench / "manifest.json").write_text(json.dumps(manifest))
    fails = failed(bench)
    assert set(fails) == {"layout.hashes"}
    assert "qrels.parquet" in fails["layout.hashes"][0]
    notes = validate_benchmark(bench).check("layout.hashes").notes
    assert any("atoms" in n and "unknown scheme" in n for n in notes)


def test_count_and_manifest_key_mismatch(bench: Path) -> None:
    manifest = json.loads((bench / "manifest.json").read_text())
    manifest["counts"]["clips"] = 12
    manifest["counts"]["by_pattern"] = {"sequential": 6, "overlap": 5}  # true: 6 and 5
    manifest["counts"]["tasks"] = {"mix": 3}  # true: 2
    manifest["counts"]["mystery"] = 1
    manifest["counts"]["events_per_clip"] = {"2": 11}  # true: 3 clips with 2 events, 8 with 3
    del manifest["seed"]
    (bench / "manifest.json").write_text(json.dumps(manifest))
    fails = failed(bench)
    assert set(fails) == {"layout.counts", "layout.manifest"}
    assert "counts.clips = 12" in fails["layout.counts"][0] and "11 rows" in fails["layout.counts"][0]
    assert "counts.tasks.mix = 3 but queries.parquet has 2 mix queries" in fails["layout.counts"][1]
    assert "events_per_clip" in fails["layout.counts"][2] and "{2: 3, 3: 8}" in fails["layout.counts"][2]
    assert len(fails["layout.counts"]) == 3
    assert "mystery" in validate_benchmark(bench).check("layout.counts").notes[0]
    assert "seed" in fails["layout.manifest"][0]


def test_event_pointing_at_wrong_atom(bf, bench: Path) -> None:
    bf.rewrite_table(bench, "events", lambda f: f.with_columns(
        pl.when(pl.col("label") == "bell").then(pl.lit("atom000")).otherwise(pl.col("atom_id")).alias("atom_id")
    ))
    fails = failed(bench)
    assert set(fails) == {"layout.references"}
    assert "label 'bell' but atom atom000 is 'dog_bark'" in fails["layout.references"][0]


# --------------------------------------------------------------------------------------- §1 events


def test_onset_seconds_disagree_with_samples(bf, bench: Path) -> None:
    bf.rewrite_table(bench, "events", lambda f: f.with_columns(
        pl.when(pl.col("event_index") == 1).then(pl.col("onset_s") + 1e-6).otherwise(pl.col("onset_s")).alias("onset_s")
    ))
    fails = failed(bench)
    assert set(fails) == {"events.times"}
    assert "onset_s" in fails["events.times"][0] and "onset_sample/sample_rate" in fails["events.times"][0]


def test_duplicate_label_in_clip_and_event_count(bf, pristine: Path, tmp_path: Path) -> None:
    s = bf.spec()
    s["clips"]["clip0005"][1].append(("dog_bark", 5.0, 6.0, 0.0))
    bench = bf.write_benchmark(tmp_path / "b", **s)
    fails = failed(bench)
    assert "events.labels" in fails
    assert "clip clip0005: label 'dog_bark' occurs 2 times" in fails["events.labels"][0]


def test_pattern_mismatch(bf, bench: Path) -> None:
    bf.rewrite_table(bench, "clips", lambda f: f.with_columns(
        pl.when(pl.col("clip_id") == "clip0002").then(pl.lit("sequential")).otherwise(pl.col("pattern")).alias("pattern")
    ))
    fails = failed(bench)
    assert set(fails) == {"clips.pattern"}
    assert "clip clip0002: sequential but rain and thunder overlap by 1.500 s" in fails["clips.pattern"][0]


# -------------------------------------------------------------------------------------- §2 queries


def test_task_shape_violation(bf, bench: Path) -> None:
    bf.rewrite_table(bench, "queries", lambda f: f.with_columns(
        pl.when(pl.col("query_id") == "q0000").then(pl.lit("order")).otherwise(pl.col("task")).alias("task")
    ))
    fails = failed(bench)
    assert set(fails) == {"queries.task_shape"}
    assert "query q0000 (order): order needs a `before`" in fails["queries.task_shape"][0]


def test_unparsable_logic(bf, bench: Path) -> None:
    bf.rewrite_table(bench, "queries", lambda f: f.with_columns(
        pl.when(pl.col("query_id") == "q0001").then(pl.lit('{"all": [{"after": ["a", "b"]}]}')).otherwise(pl.col("logic")).alias("logic")
    ))
    fails = failed(bench)
    assert "queries.logic" in fails
    assert "query q0001" in fails["queries.logic"][0] and "unknown constraint 'after'" in fails["queries.logic"][0]


@pytest.mark.parametrize(
    "logic, message",
    [
        ("{", "not valid JSON"),
        ('{"all": []}', "empty conjunction"),
        ('{"all": [{"before": ["a"]}]}', "expects [A, B]"),
        ('{"all": [{"duration": {"label": "a"}}]}', "needs min_s or max_s"),
        ('{"all": [{"duration": {"label": "a", "min_s": 3, "max_s": 1}}]}', "min_s 3.0 > max_s 1.0"),
        ('{"all": [{"has": "a", "not": "b"}]}', "exactly one key"),
    ],
)
def test_parse_logic_rejects(logic: str, message: str) -> None:
    with pytest.raises(LogicError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_logic(logic)


def test_task_shapes() -> None:
    has, not_, before = Constraint("has", ("a",)), Constraint("not", ("b",)), Constraint("before", ("a", "b"))
    dur = Constraint("duration", ("a",), 1.0, None)
    assert task_shape_problem("negation", [has, not_]) is None
    assert task_shape_problem("negation", [has, has]) is not None
    assert task_shape_problem("order", [before, Constraint("before", ("b", "c"))]) is None
    assert task_shape_problem("duration", [dur, dur]) is not None
    assert task_shape_problem("mix", [before, not_]) is None
    assert task_shape_problem("mix", [before]) is not None
    assert task_shape_problem("mix", [has, has, has]) is not None
    assert task_shape_problem("riddle", [has]) is not None


# ----------------------------------------------------------------------------------- §2 relevance


def test_extra_qrel(bf, bench: Path) -> None:
    bf.rewrite_table(bench, "qrels", lambda f: pl.concat([f, pl.DataFrame({"query_id": ["q0000"], "clip_id": ["clip0001"], "relevance": [1]}, schema=f.schema)]))
    fails = failed(bench)
    assert set(fails) == {"relevance.qrels"}
    assert "extra in qrels.parquet" in fails["relevance.qrels"][0] and "(q0000, clip0001)" in fails["relevance.qrels"][0]


def test_missing_qrel(bf, bench: Path) -> None:
    bf.rewrite_table(bench, "qrels", lambda f: f.filter(~((pl.col("query_id") == "q0002") & (pl.col("clip_id") == "clip0010"))))
    fails = failed(bench)
    assert set(fails) == {"relevance.qrels"}
    assert "missing from qrels.parquet: (q0002, clip0010)" in fails["relevance.qrels"][0]


# ------------------------------------------------------------------------------------ §3.1 margin


def test_touching_events_break_the_margin(bf, tmp_path: Path) -> None:
    s = bf.spec()
    s["clips"]["clip0005"] = ("sequential", [("dog_bark", 0.5, 1.5, 0.0), ("bell", 1.5, 2.5, 0.0)])
    bench = bf.write_benchmark(tmp_path / "b", **s)
    fails = failed(bench)
    assert set(fails) == {"margin.event_gaps"}  # no query compares dog_bark and bell in time
    assert "clip clip0005: dog_bark [0.500-1.500 s] and bell [1.500-2.500 s] are 0.000 s apart" in fails["margin.event_gaps"][0]


def test_touching_events_that_decide_an_order_query(bf, tmp_path: Path) -> None:
    s = bf.spec()
    # a 0.4 s gap: more than m, less than 2m (each side can move by m towards the other)
    s["clips"]["clip0000"] = ("sequential", [("dog_bark", 0.5, 1.5, 0.0), ("siren", 1.9, 3.5, 0.0), ("bell", 5.5, 6.5, 0.0)])
    bench = bf.write_benchmark(tmp_path / "b", **s)
    fails = failed(bench)
    assert set(fails) == {"margin.event_gaps", "margin.relevance"}
    example = fails["margin.relevance"][0]
    assert "query q0001 (order), clip clip0000: relevance 1 can flip" in example and "= 0.400 s" in example
    assert failed(bench, margin_s=0.19) == {}


def test_duration_threshold_within_two_margins(bf, tmp_path: Path) -> None:
    s = bf.spec()
    s["queries"][3] = ("q0003", "duration", "rain for at least 4.8 s", {"all": [{"duration": {"label": "rain", "min_s": 4.8}}]})
    bench = bf.write_benchmark(tmp_path / "b", **s)
    fails = failed(bench)
    assert set(fails) == {"margin.relevance"}
    example = fails["margin.relevance"][0]
    assert "query q0003 (duration), clip clip0007" in example and "rain lasts 5.000 s" in example
    # a smaller margin makes the same benchmark valid again
    assert failed(bench, margin_s=0.05) == {}


@pytest.mark.parametrize("gap_s, stable", [(0.5, True), (0.499, False), (-0.501, True), (-0.5, False)])
def test_before_boundary_is_two_margins(gap_s: float, stable: bool) -> None:
    sr = 1000
    a_off = 2000
    b_on = a_off + int(round(gap_s * sr))
    events = pl.DataFrame(
        {
            "clip_id": ["c", "c"],
            "label": ["a", "b"],
            "onset_sample": [1000, b_on],
            "offset_sample": [a_off, b_on + 1500],
        }
    )
    index = EventIndex(events, ["c"], sr)
    truth = index.evaluate([Constraint("before", ("a", "b"))], slack=2 * 0.25 * sr)
    assert (truth.robust[0] == truth.possible[0]) == stable


def test_margin_bounds_are_sound_under_random_perturbations() -> None:
    """Wherever the bounds agree, no perturbation of every onset/offset by <= m changes relevance."""
    rng = np.random.default_rng(7)
    sr, m = 100, 0.25
    n_clips, labels = 300, ["a", "b", "c"]
    rows = []
    for clip in range(n_clips):
        for label in labels[: rng.integers(2, 4)]:
            on = int(rng.integers(0, 600))
            rows.append((f"c{clip:03d}", label, on, on + int(rng.integers(20, 400))))
    events = pl.DataFrame(rows, schema=["clip_id", "label", "onset_sample", "offset_sample"], orient="row")
    clip_ids = [f"c{i:03d}" for i in range(n_clips)]
    queries = [
        [Constraint("before", ("a", "b"))],
        [Constraint("overlap", ("a", "c"))],
        [Constraint("duration", ("b",), 1.5, None)],
        [Constraint("duration", ("a",), None, 2.0), Constraint("not", ("c",))],
    ]
    base = EventIndex(events, clip_ids, sr)
    bounds = [base.evaluate(q, slack=2 * m * sr) for q in queries]
    for _ in range(20):
        jitter = lambda: rng.integers(-int(m * sr), int(m * sr) + 1, events.height)  # noqa: E731
        moved = events.with_columns(pl.col("onset_sample") + jitter(), pl.col("offset_sample") + jitter())
        index = EventIndex(moved, clip_ids, sr)
        for q, b in zip(queries, bounds):
            now = index.relevant(q)
            stable = b.robust == b.possible
            assert np.array_equal(now[stable], b.nominal[stable])
            assert not np.any(now & ~b.possible) and not np.any(~now & b.robust)


# --------------------------------------------------------------------------------- §3.2 and §3.3


def test_query_without_hard_negative(bf, tmp_path: Path) -> None:
    s = bf.spec()
    s["queries"][3] = ("q0003", "duration", "rain for at least half a second", {"all": [{"duration": {"label": "rain", "min_s": 0.5}}]})
    s["qrels"]["q0003"] = ["clip0002", "clip0003", "clip0004", "clip0007", "clip0009", "clip0010"]
    bench = bf.write_benchmark(tmp_path / "b", **s)
    fails = failed(bench)
    assert set(fails) == {"queries.hard_negatives", "mc.pairs"}  # its mc negative is now relevant too
    assert "query q0003 (duration): no hard negative" in fails["queries.hard_negatives"][0]
    assert "all 6 clip(s) containing rain are relevant" in fails["queries.hard_negatives"][0]


def test_query_without_positive(bf, tmp_path: Path) -> None:
    s = bf.spec()
    s["queries"][1] = ("q0001", "order", "a whistle, then a bell", {"all": [{"before": ["whistle", "bell"]}]})
    s["qrels"].pop("q0001")
    s["mc"].pop("q0001")
    bench = bf.write_benchmark(tmp_path / "b", **s)
    fails = failed(bench)
    assert set(fails) == {"queries.positives", "queries.hard_negatives", "mc.pairs"}
    assert "query q0001 (order): no relevant clip" in fails["queries.positives"][0]
    assert "mc.parquet: no pair for query q0001" in fails["mc.pairs"][0]


def test_mc_negative_that_is_relevant(bf, bench: Path) -> None:
    bf.rewrite_table(bench, "mc", lambda f: f.with_columns(
        pl.when(pl.col("query_id") == "q0000").then(pl.lit("clip0005")).otherwise(pl.col("negative_clip_id")).alias("negative_clip_id")
    ))
    fails = failed(bench)
    assert set(fails) == {"mc.pairs"}
    assert "(query q0000): negative clip0005 is relevant" in fails["mc.pairs"][0]


def test_mc_negative_that_is_not_hard(bf, bench: Path) -> None:
    bf.rewrite_table(bench, "mc", lambda f: f.with_columns(
        pl.when(pl.col("query_id") == "q0000").then(pl.lit("clip0002")).otherwise(pl.col("negative_clip_id")).alias("negative_clip_id")
    ))
    fails = failed(bench)
    assert set(fails) == {"mc.pairs"}
    assert "negative clip0002 is not a hard negative" in fails["mc.pairs"][0]


# ------------------------------------------------------------------------------------------ audio


def _edit_audio(bench: Path, clip: str, edit, subtype: str = "PCM_16") -> None:
    path = bench / "audio" / f"{clip}.wav"
    x, sr = sf.read(path, dtype="float64")
    sf.write(path, edit(x), sr, subtype=subtype)


def test_clipping_sample(bf, bench: Path) -> None:
    def clip(x):
        x[int(3.0 * bf.SAMPLE_RATE)] = 1.5
        return x

    _edit_audio(bench, "clip0002", clip, subtype="FLOAT")
    fails = failed(bench)
    assert set(fails) == {"audio.range"}
    assert "clip clip0002 (audio/clip0002.wav): 1 sample(s) outside [-1, 1] (FLOAT), first at 3.000 s = 1.5000" in fails["audio.range"][0]


def test_nan_sample(bench: Path) -> None:
    def poison(x):
        x[100] = np.nan
        return x

    _edit_audio(bench, "clip0004", poison, subtype="FLOAT")
    fails = failed(bench)
    assert set(fails) == {"audio.range"}
    assert "clip0004" in fails["audio.range"][0] and "non-finite" in fails["audio.range"][0]


def test_noise_outside_events(bf, bench: Path) -> None:
    def noisy(x):
        x[int(7.0 * bf.SAMPLE_RATE) : int(7.9 * bf.SAMPLE_RATE)] += 0.01
        return x

    _edit_audio(bench, "clip0005", noisy)
    fails = failed(bench)
    assert set(fails) == {"audio.background"}
    assert "clip clip0005" in fails["audio.background"][0] and "first at 7.000 s" in fails["audio.background"][0]
    # a background recorded in the manifest switches the silence check off
    manifest = json.loads((bench / "manifest.json").read_text())
    manifest["params"]["background"] = {"kind": "pink_noise", "level_db": -40}
    (bench / "manifest.json").write_text(json.dumps(manifest))
    assert failed(bench) == {}


def test_wrong_audio_length(bench: Path) -> None:
    _edit_audio(bench, "clip0003", lambda x: x[:-100])
    fails = failed(bench)
    assert set(fails) == {"audio.readable"}
    assert "clip clip0003 (audio/clip0003.wav): 63900 samples, expected 64000" in fails["audio.readable"][0]


def test_stereo_and_missing_audio(bench: Path) -> None:
    _edit_audio(bench, "clip0001", lambda x: np.stack([x, x], axis=1))
    (bench / "audio" / "clip0006.wav").unlink()
    fails = failed(bench)
    assert set(fails) == {"audio.readable"}
    text = " ".join(fails["audio.readable"])
    assert "clip0001" in text and "2 channels" in text
    assert "clip clip0006 (audio/clip0006.wav): not readable" in text


def test_inaudible_event(bf, tmp_path: Path) -> None:
    s = bf.spec()
    s["clips"]["clip0001"][1][2] = ("whistle", 5.5, 7.0, -80.0)
    bench = bf.write_benchmark(tmp_path / "b", **s)
    fails = failed(bench)
    assert set(fails) == {"audio.audible"}
    assert "clip clip0001" in fails["audio.audible"][0] and "whistle [5.500-7.000 s]" in fails["audio.audible"][0]


def test_no_audio_and_max_audio_files(bench: Path) -> None:
    _edit_audio(bench, "clip0010", lambda x: x[:-100])
    report = validate_benchmark(bench, check_audio=False)
    assert report.ok and report.check("audio.readable").skipped == "--no-audio"
    assert validate_benchmark(bench, max_audio_files=10).ok  # clip0010 is the 11th by id
    assert not validate_benchmark(bench).ok



def test_audio_sample_reads_evenly_spaced_clips(bench: Path, capsys) -> None:
    from reasonaudio.io.audio_hashes import write_audio_hashes

    clips = pl.read_parquet(bench / "clips.parquet").sort("clip_id")
    ids = clips["clip_id"].to_list()
    assert len(ids) > 3
    write_audio_hashes(bench, clips["path"].to_list())
    _edit_audio(bench, ids[-1], lambda x: x[:-100])  # the last clip by id: no first-N check reads it
    assert validate_benchmark(bench, max_audio_files=len(ids) - 1).ok
    report = validate_benchmark(bench, audio_sample=3)
    assert "audio.hashes" in failed(bench, audio_sample=3)
    notes = report.check("audio.readable").notes
    assert f"checked 3 of {len(ids)} clips, evenly spaced by clip_id (the first and the last among them)" in notes
    assert "3 file(s) read" in notes and "3 file(s) hashed" in report.check("audio.hashes").notes
    assert validate_benchmark(bench, audio_sample=len(ids)).check("audio.readable").notes == [f"{len(ids)} file(s) read"]
    with pytest.raises(UserError, match="not both"):
        validate_benchmark(bench, max_audio_files=2, audio_sample=2)
    assert main(["validate", str(bench), "--audio-sample", "-1"]) == 2
    assert "--audio-sample must be >= 0, got -1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["validate", str(bench), "--audio-sample", "2", "--max-audio-files", "2"])


@given(st.integers(1, 10_000), st.integers(0, 200))
def test_audio_sample_positions(n: int, k: int) -> None:
    if k >= n:
        return
    pos = AudioSelection(sample=k).positions(n).tolist()
    assert len(pos) == k and pos == sorted(set(pos)) and all(0 <= p < n for p in pos)
    if k >= 2:
        assert pos[0] == 0 and pos[-1] == n - 1


# ------------------------------------------------------------------------------------------- beir


def test_bad_beir_header(bench: Path) -> None:
    path = bench / "beir" / "qrels" / "test.tsv"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(["qid\tdocid\tscore", *lines[1:]]) + "\n")
    fails = failed(bench)
    assert set(fails) == {"beir.qrels"}
    assert "header is 'qid\\tdocid\\tscore'" in fails["beir.qrels"][0]


def test_beir_rows_disagree(bench: Path) -> None:
    corpus = bench / "beir" / "corpus.jsonl"
    rows = [json.loads(l) for l in corpus.read_text().splitlines()]
    rows[3].pop("audio")
    corpus.write_text("".join(json.dumps(r) + "\n" for r in rows[:-1]))
    tsv = bench / "beir" / "qrels" / "test.tsv"
    tsv.write_text(tsv.read_text() + "q0000\tclip0001\t1\n")
    fails = failed(bench)
    assert set(fails) == {"beir.corpus", "beir.qrels"}
    text = " ".join(fails["beir.corpus"])
    assert "_id clip0003): no field names its audio file audio/clip0003.wav" in text
    assert "corpus.jsonl lacks 1 clip(s): clip0010" in text
    assert "test.tsv has (q0000, clip0001) not in qrels.parquet" in fails["beir.qrels"][0]


def test_beir_qrels_faults_each_named(bench: Path) -> None:
    """Every kind of disagreement between test.tsv and qrels.parquet, counted and named by line."""
    tsv = bench / "beir" / "qrels" / "test.tsv"
    header, first, second, third, *rest = tsv.read_text().splitlines()
    q1, c1, _ = first.split("\t")
    q3, c3, _ = third.split("\t")
    lines = [header, first, first, f"{q3}\t{c3}\t7", "q9\tc9\tone", "just two\tfields", "", *rest, "qX\tcX\t1"]
    tsv.write_text("\n".join(lines) + "\n")
    report = validate_benchmark(bench)
    check = {c.name: c for c in report.checks}["beir.qrels"]
    text = " | ".join(check.examples)
    # two malformed lines, one pair listed twice, one lacking (the second row), one extra, one wrong score
    assert check.violations == 6, text
    assert "test.tsv line 5: expected query-id<TAB>corpus-id<TAB>integer score, got 'q9\\tc9\\tone'" in text
    assert f"test.tsv line 3: pair ({q1!r}, {c1!r}) listed twice" in text
    report = validate_benchmark(bench, max_examples=20)
    text = " | ".join({c.name: c for c in report.checks}["beir.qrels"].examples)
    assert f"test.tsv lacks ({second.split(chr(9))[0]}, {second.split(chr(9))[1]}) from qrels.parquet" in text
    assert "test.tsv has (qX, cX) not in qrels.parquet" in text
    assert f"test.tsv scores ({q3}, {c3}) 7, qrels.parquet 1" in text
    assert "test.tsv line 6: expected" in text


def test_beir_qrels_fast_path_agrees(bench: Path) -> None:
    """A test.tsv that the CSV reader parses but that differs from the parquet in a way only the line
    reading names (a signed score, a swapped pair of rows) is still reported line by line; CRLF
    line ends are no fault."""
    tsv = bench / "beir" / "qrels" / "test.tsv"
    header, first, second, *rest = tsv.read_text().splitlines()
    q, c, _ = first.split("\t")
    tsv.write_text("\r\n".join([header, first, second, *rest]) + "\r\n")
    assert "beir.qrels" not in failed(bench)
    tsv.write_text("\n".join([header, f"{q}\t{c}\t+1", second, *rest]) + "\n")
    assert failed(bench)["beir.qrels"][0].startswith("test.tsv line 2: expected query-id<TAB>corpus-id<TAB>integer score")
    tsv.write_text("\n".join([header, second, first, *rest]) + "\n")
    assert "beir.qrels" not in failed(bench)  # the same pairs in another order


# -------------------------------------------------------------------------------------------- CLI


def test_cli_exit_codes_and_json(bf, pristine: Path, bench: Path, tmp_path: Path, capsys) -> None:
    assert main(["validate", str(pristine)]) == 0
    out = capsys.readouterr().out
    assert "✓ relevance.qrels" in out and out.strip().endswith(")") and "OK" in out

    bf.rewrite_table(bench, "qrels", lambda f: f.head(f.height - 1))
    report_path = tmp_path / "out" / "report.json"
    assert main(["validate", str(bench), "--no-audio", "--json", str(report_path)]) == 1
    out = capsys.readouterr().out
    assert "✗ relevance.qrels" in out and "missing from qrels.parquet" in out
    payload = json.loads(report_path.read_text())
    assert payload["ok"] is False
    assert {c["name"]: c["passed"] for c in payload["checks"]}["relevance.qrels"] is False

    (bench / "events.parquet").unlink()
    assert main(["validate", str(bench)]) == 2
    err = capsys.readouterr().err
    assert "events.parquet: file not found" in err


def test_cli_rejects_non_directory(tmp_path: Path, capsys) -> None:
    assert main(["validate", str(tmp_path / "nope")]) == 2
    assert "not a directory" in capsys.readouterr().err
    with pytest.raises(UserError, match="margin"):
        validate_benchmark(tmp_path, margin_s=-1)
