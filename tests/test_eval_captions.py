"""`reasonaudio eval` writes a two-stage run's captions as captions.parquet, loadable as captions=FILE."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from reasonaudio.cli import main
from reasonaudio.errors import UserError
from reasonaudio.retrieval import ClipSet, load_model

COMMON = ["--bootstrap", "0", "--quiet", "--no-figures"]


@pytest.fixture(scope="module")
def bench(evalfixture, tmp_path_factory) -> Path:
    return evalfixture.write_fixture(tmp_path_factory.mktemp("bench") / "bench", with_beir=False)


def test_two_stage_run_writes_its_captions(evalfixture, bench: Path, tmp_path: Path) -> None:
    out = tmp_path / "oracle-bm25"
    assert main(["eval", str(bench), "--model", "two-stage:oracle+bm25", "--out", str(out), *COMMON]) == 0
    captions = pl.read_parquet(out / "captions.parquet")
    assert captions.schema == {"clip_id": pl.Utf8, "caption": pl.Utf8}
    by_clip = dict(zip(captions["clip_id"].to_list(), captions["caption"].to_list()))
    assert list(by_clip) == list(evalfixture.CLIPS)
    assert by_clip["clip_000"] == "a dog barking, then a rising siren"
    assert by_clip["clip_002"] == "rain falling while thunder rumbling"

    replay = tmp_path / "replay"
    spec = f"two-stage:captions={out / 'captions.parquet'}+bm25"
    assert main(["eval", str(bench), "--model", spec, "--out", str(replay), *COMMON]) == 0
    assert pl.read_parquet(replay / "rankings.parquet").equals(pl.read_parquet(out / "rankings.parquet"))


def test_other_models_write_no_captions(bench: Path, tmp_path: Path) -> None:
    assert main(["eval", str(bench), "--model", "oracle", "--out", str(tmp_path / "o"), *COMMON]) == 0
    assert not (tmp_path / "o" / "captions.parquet").exists()


def test_captions_parquet_without_the_columns_is_a_user_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.parquet"
    pl.DataFrame({"id": ["clip_000"], "caption": ["a dog"]}).write_parquet(bad)
    with pytest.raises(UserError, match="expected columns 'clip_id' and 'caption'"):
        load_model(f"two-stage:captions={bad}+bm25")
    (tmp_path / "junk.parquet").write_text("not parquet")
    with pytest.raises(UserError, match="cannot read parquet"):
        load_model(f"two-stage:captions={tmp_path / 'junk.parquet'}+bm25")
    text = tmp_path / "text.parquet"
    pl.DataFrame({"clip_id": ["clip_000"], "text": ["a dog"]}).write_parquet(text)
    model = load_model(f"two-stage:captions={text}+bm25")
    assert model.captioner.caption(ClipSet(["clip_000"], [Path("unused.wav")])) == ["a dog"]
