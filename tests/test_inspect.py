"""inspect: text views of clips and queries on the fixture, PNG figures, unknown ids."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reasonaudio.cli import main
from reasonaudio.errors import UserError
from reasonaudio.audit.inspect import _bar, describe, plot


@pytest.fixture(scope="module")
def bench(bf, tmp_path_factory) -> Path:
    return bf.write_benchmark(tmp_path_factory.mktemp("bench") / "fixture")


def test_clip_timeline_and_relevant_queries(bench: Path) -> None:
    text = describe(bench, "clip0003")
    lines = text.splitlines()
    assert lines[0] == "clip clip0003  overlap, 8 s, 3 events  (audio/clip0003.wav)"
    rain = next(l for l in lines if l.strip().startswith("rain "))
    assert "rain falling" in rain and "0.500" in rain and "2.000" in rain and "1.500" in rain and "+0.0dB" in rain
    # 8 s over 48 columns: rain covers columns 3..11
    assert rain.endswith("|" + "." * 3 + "=" * 9 + "." * 36 + "|")
    # events listed by onset, then the queries this clip is relevant to (q0002 overlap, q0007 duration)
    labels = [l.split()[0] for l in lines[2:5]]
    assert labels == ["rain", "thunder", "bell"]
    assert "relevant to 2 queries:" in text
    assert "q0002  [overlap] rain falling while thunder rumbles" in text and "q0007  [duration]" in text
    assert "q0003" in text and "hard negative" in text  # clip0003 is q0003's mc negative


def test_query_view(bench: Path) -> None:
    text = describe(bench, "q0000", n_examples=1)
    assert "query q0000  task negation" in text
    assert "logic: has dog_bark AND not siren" in text
    assert "relevant: 2 of 11 clips; hard negatives: 4" in text
    assert "two-option pair: positive clip0004, hard negative clip0000" in text
    assert "positives (first 1 of 2):" in text and "clip clip0004" in text
    assert "hard negatives (first 1 of 4):" in text and "clip clip0000" in text
    assert "clip0005" not in text  # second positive not shown with n_examples=1



def test_query_view_leads_with_the_two_option_pair(bf, bench: Path, tmp_path: Path) -> None:
    import polars as pl

    copy = Path(shutil.copytree(bench, tmp_path / "b"))
    bf.rewrite_table(copy, "mc", lambda f: f.with_columns(
        pl.when(pl.col("query_id") == "q0002").then(pl.lit("clip0010")).otherwise(pl.col("positive_clip_id")).alias("positive_clip_id"),
        pl.when(pl.col("query_id") == "q0002").then(pl.lit("clip0009")).otherwise(pl.col("negative_clip_id")).alias("negative_clip_id"),
    ))
    text = describe(copy, "q0002", n_examples=1)
    assert "two-option pair: positive clip0010, hard negative clip0009" in text
    assert "positives (first 1 of 3):\n  clip clip0010" in text
    assert "hard negatives (first 1 of 2):\n  clip clip0009" in text


def test_bar_never_vanishes() -> None:
    assert _bar(0.0, 0.01, 10.0, width=10) == "=" + "." * 9
    assert _bar(9.99, 10.0, 10.0, width=10) == "." * 9 + "="
    assert _bar(0.0, 10.0, 10.0, width=10) == "=" * 10


def test_unknown_id_lists_close_matches(bench: Path) -> None:
    with pytest.raises(UserError, match=r"no clip or query with id 'clip003'.*close matches: clip0003"):
        describe(bench, "clip003")
    with pytest.raises(UserError, match=r"clip ids look like clip0000, clip0001; query ids like q0000, q0001"):
        describe(bench, "zzz")


def test_png_for_clip_and_query(bench: Path, tmp_path: Path) -> None:
    clip_png = plot(bench, "clip0010", tmp_path / "figs" / "clip.png")
    query_png = plot(bench, "q0004", tmp_path / "query.png")
    for png in (clip_png, query_png):
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20_000
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["clip.png", "figs", "query.png"]  # no temp leftovers


def test_png_of_missing_audio_is_a_user_error(bench: Path, tmp_path: Path) -> None:
    copy = Path(shutil.copytree(bench, tmp_path / "b"))
    (copy / "audio" / "clip0001.wav").unlink()
    with pytest.raises(UserError, match="clip0001"):
        plot(copy, "clip0001", tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def test_cli(bench: Path, tmp_path: Path, capsys) -> None:
    out_png = tmp_path / "pair.png"
    assert main(["inspect", str(bench), "q0002", "--png", str(out_png)]) == 0
    out = capsys.readouterr().out
    assert "query q0002  task overlap" in out and f"wrote {out_png}" in out
    assert out_png.is_file()
    assert main(["inspect", str(bench), "q9999"]) == 2
    assert "no clip or query with id 'q9999'" in capsys.readouterr().err
    assert main(["inspect", str(tmp_path / "missing"), "q0000"]) == 2
