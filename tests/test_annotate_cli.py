"""`reasonaudio annotate` on a benchmark's events.parquet and on strong-label TSVs."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from reasonaudio.relevance import read_events, read_queries, zero_length
from reasonaudio.cli import main
from reasonaudio.errors import UserError

QUERIES = [
    {"query_id": "order", "task": "order", "logic": {"all": [{"before": ["dog_bark", "siren"]}]}},
    {"query_id": "negation", "task": "negation", "logic": {"all": [{"not": "siren"}]}},
    {"query_id": "long", "task": "duration", "logic": {"all": [{"duration": {"label": "siren", "min_s": 2.0}}]}},
]


@pytest.fixture()
def bench_dir(tmp_path: Path) -> Path:
    root = tmp_path / "bench"
    root.mkdir()
    (root / "manifest.json").write_text(json.dumps({"sample_rate": 16000}))
    pl.DataFrame({"clip_id": ["c0", "c1", "c2"]}).write_parquet(root / "clips.parquet")
    pl.DataFrame(
        {
            "clip_id": ["c0", "c0", "c1", "c1"],
            "event_index": [0, 1, 0, 1],
            "label": ["dog_bark", "siren", "siren", "dog_bark"],
            "onset_sample": [0, 16000, 0, 48000],
            "offset_sample": [16000, 48000, 16000, 64000],
        }
    ).write_parquet(root / "events.parquet")
    pl.DataFrame(
        {"query_id": [q["query_id"] for q in QUERIES], "task": [q["task"] for q in QUERIES],
         "logic": [json.dumps(q["logic"]) for q in QUERIES]}
    ).write_parquet(root / "queries.parquet")
    return root


def test_cli_on_benchmark_events(bench_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = bench_dir / "qrels.parquet"
    code = main(["annotate", "--events", str(bench_dir / "events.parquet"), "--queries",
                 str(bench_dir / "queries.parquet"), "--out", str(out), "--threads", "1"])
    assert code == 0
    qrels = pl.read_parquet(out)
    # c0: dog_bark [0,1) s touches siren [1,3) s -> before holds; c2 has no events -> `not siren`.
    assert qrels.rows() == [("order", "c0", 1), ("negation", "c2", 1), ("long", "c0", 1)]
    printed = capsys.readouterr().out
    assert "3 queries x 3 clips" in printed and "3 relevant pairs" in printed
    assert [p.name for p in bench_dir.iterdir() if p.name.startswith(".")] == []  # no temp left


def test_cli_strong_tsv_to_beir_tsv(tmp_path: Path) -> None:
    events = tmp_path / "desed.tsv"
    events.write_text(
        "filename\tonset\toffset\tevent_label\n"
        "a.wav\t0.0\t1.0\tdog_bark\n"
        "a.wav\t1.0\t3.5\tsiren\n"
        "\n"
        "b.wav\t0.5\t2.0\tsiren\n"
        "b.wav\t1.5\t2.5\tdog_bark\n"
    )
    queries = tmp_path / "queries.jsonl"
    queries.write_text("\n".join(json.dumps(q) for q in QUERIES) + "\n")
    out = tmp_path / "qrels" / "test.tsv"
    assert main(["annotate", "--events", str(events), "--queries", str(queries), "--out", str(out)]) == 0
    assert out.read_text().splitlines() == [
        "query-id\tcorpus-id\tscore",
        "order\ta.wav\t1",
        "long\ta.wav\t1",
    ]


def test_audioset_strong_layout(tmp_path: Path) -> None:
    path = tmp_path / "audioset_train_strong.tsv"
    path.write_text(
        "segment_id\tstart_time_seconds\tend_time_seconds\tlabel\n"
        "YxYz_30000\t0.000\t1.234\t/m/0bt9lr\n"
        "YxYz_30000\t1.000\t1.234\t/m/0bt9lr\n"
    )
    frame = read_events(path)
    assert frame.columns == ["clip_id", "label", "onset_s", "offset_s"]
    assert frame["offset_s"].to_list() == [1.234, 1.234]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("filename\tonset\tlabel\na.wav\t0\tdog\n", "expected header columns"),
        ("filename\tonset\toffset\tevent_label\na.wav\t0\t1\tdog\na.wav\tabc\t1\tdog\n", r"line 3: onset must be a number of seconds, got 'abc'"),
        ("filename\tonset\toffset\tevent_label\na.wav\t0\t1\tdog\n\na.wav\t2\t1.5\tdog\n", r"line 4: offset \(1.5\) is before onset \(2\)"),
        ("filename\tonset\toffset\tevent_label\na.wav\t\t\tdog\n", "line 2: onset is empty"),
    ],
)
def test_strong_tsv_errors(tmp_path: Path, body: str, message: str) -> None:
    path = tmp_path / "bad.tsv"
    path.write_text(body)
    with pytest.raises(UserError, match=message) as info:
        read_events(path)
    assert str(path) in str(info.value)


def test_cli_reports_bad_logic_without_traceback(bench_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    queries = tmp_path / "q.csv"
    pl.DataFrame({"query_id": ["q12"], "logic": ['{"all": [{"overlap": ["a", "b", "c"]}]}']}).write_csv(queries)
    out = tmp_path / "qrels.parquet"
    code = main(["annotate", "--events", str(bench_dir), "--queries", str(queries), "--out", str(out)])
    assert code == 2
    err = capsys.readouterr().err
    assert 'query q12, constraint 0 {"overlap":["a","b","c"]}: expected a list of two labels, got a list of 3' in err
    assert not out.exists()


def test_read_queries_errors(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"query_id": "a", "logic": {"all": [{"has": "x"}]}}\n{"query_id": "b"}\n')
    with pytest.raises(UserError, match="line 2: expected an object with query_id and logic"):
        read_queries(path)
    path.write_text('{"query_id": "a", "logic": {"all": [{"has": "x"}]}}\n')
    assert read_queries(path)["logic"].to_list() == ['{"all": [{"has": "x"}]}']


def test_strong_tsv_files_without_events_stay_in_the_corpus(tmp_path: Path) -> None:
    """DESED lists a file without events as a row with empty onset, offset and label."""
    tsv = tmp_path / "strong.tsv"
    tsv.write_text(
        "filename\tonset\toffset\tevent_label\n"
        "a.wav\t0.5\t2.0\tDog\na.wav\t3.0\t4.5\tSpeech\nb.wav\t\t\t\nc.wav\t1.0\t6.0\tVacuum_cleaner\n"
    )
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        json.dumps({"query_id": "dog_no_vacuum", "logic": json.dumps({"all": [{"has": "Dog"}, {"not": "Vacuum_cleaner"}]})})
        + "\n"
        + json.dumps({"query_id": "no_dog", "logic": json.dumps({"all": [{"not": "Dog"}]})})
        + "\n"
    )
    out = tmp_path / "qrels.tsv"
    assert main(["annotate", "--events", str(tsv), "--queries", str(queries), "--out", str(out)]) == 0
    rows = out.read_text().splitlines()
    assert rows == ["query-id\tcorpus-id\tscore", "dog_no_vacuum\ta.wav\t1", "no_dog\tb.wav\t1", "no_dog\tc.wav\t1"]
    assert read_events(tsv).height == 3


def test_strong_tsv_point_annotations_are_events_lasting_zero_time(tmp_path: Path) -> None:
    tsv = tmp_path / "strong.tsv"
    tsv.write_text("filename\tonset\toffset\tevent_label\na.wav\t0.5\t2.0\tDog\na.wav\t2.0\t2.0\tBell\n")
    events = read_events(tsv)
    assert events.rows() == [("a.wav", "Dog", 0.5, 2.0), ("a.wav", "Bell", 2.0, 2.0)]
    assert zero_length(events).tolist() == [False, True]
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps({"query_id": q, "logic": json.dumps({"all": [c]})}) + "\n" for q, c in [
        ("bell", {"has": "Bell"}), ("dog_then_bell", {"before": ["Dog", "Bell"]}), ("overlap", {"overlap": ["Dog", "Bell"]}),
    ]))
    out = tmp_path / "qrels.tsv"
    assert main(["annotate", "--events", str(tsv), "--queries", str(queries), "--out", str(out)]) == 0
    assert out.read_text().splitlines()[1:] == ["bell\ta.wav\t1", "dog_then_bell\ta.wav\t1"]
    assert main(["annotate", "--events", str(tsv), "--queries", str(queries), "--out", str(out), "--force",
                 "--drop-zero-length"]) == 0
    assert out.read_text().splitlines()[1:] == []


def test_strong_tsv_row_with_only_some_fields_empty_is_an_error(tmp_path: Path) -> None:
    tsv = tmp_path / "strong.tsv"
    tsv.write_text("filename\tonset\toffset\tevent_label\na.wav\t0.5\t\tDog\n")
    with pytest.raises(UserError, match="line 2: offset is empty"):
        read_events(tsv)
