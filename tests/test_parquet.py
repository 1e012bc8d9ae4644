"""Benchmark tables are written so that their bytes, and with them the manifest's hashes, follow from
their content and not from the polars version installed (`reasonaudio.io.parquet`)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import polars as pl
import pytest

from reasonaudio.io.parquet import TABLE_WRITE_OPTIONS, pin_writer_name, with_writer_name, write_table

# sha256 of tests/support/parquet_sample.py's table as write_table writes it: the same under every
# polars from 1.39 to 2.1 (benches/bench_parquet_writers.py compares installed versions)
SAMPLE_SHA256 = "298e313ef818b00fa09ec2dfcef16213729dcf30d510e135817222ab3c574e49"


def _footer(path: Path) -> bytes:
    data = path.read_bytes()
    length = int.from_bytes(data[-8:-4], "little")
    return data[-8 - length : -8]


def test_a_table_has_the_recorded_bytes(tmp_path: Path, parquet_sample) -> None:
    path = tmp_path / "sample.parquet"
    write_table(parquet_sample.sample_frame(), path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert digest == SAMPLE_SHA256, (
        f"polars {pl.__version__} writes the sample table as {digest}, not {SAMPLE_SHA256}: benchmark tables and the "
        "manifest's hashes would differ from those of other installs. Compare the files (benches/bench_parquet_writers.py) "
        "and pin what changed in reasonaudio/io/parquet.py, or raise the polars floor and record the new bytes as a "
        "deliberate change (CHANGELOG)."
    )


def test_the_footer_names_the_writer_without_its_version(tmp_path: Path, parquet_sample) -> None:
    frame = parquet_sample.sample_frame()
    native, pinned = tmp_path / "native.parquet", tmp_path / "pinned.parquet"
    frame.write_parquet(native, **TABLE_WRITE_OPTIONS)
    write_table(frame, pinned)
    assert b"Polars" in _footer(pinned) and b"version" not in _footer(pinned)
    # only the footer differs: the pages, and every offset into them, are untouched
    body = native.read_bytes()[: -8 - len(_footer(native))]
    assert pinned.read_bytes().startswith(body)
    assert pl.read_parquet(pinned).equals(frame)
    # pinning a pinned file changes nothing
    before = pinned.read_bytes()
    pin_writer_name(pinned)
    assert pinned.read_bytes() == before


def test_footer_metadata_survives(tmp_path: Path, parquet_sample) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "marked.parquet"
    write_table(parquet_sample.sample_frame(), path, metadata={"reasonaudio.kind": "events"})
    meta = pq.ParquetFile(path).metadata
    assert meta.created_by == "Polars"
    assert meta.metadata[b"reasonaudio.kind"] == b"events"
    assert pq.read_table(path).num_rows == 64


def test_another_writer_keeps_its_own_name(tmp_path: Path, parquet_sample) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    path = tmp_path / "arrow.parquet"
    table = parquet_sample.sample_frame().to_arrow()
    pq.write_table(table, path, compression="zstd", write_statistics=False)
    assert pq.ParquetFile(path).metadata.created_by.startswith("parquet-cpp-arrow version ")
    pin_writer_name(path)
    assert pq.ParquetFile(path).metadata.created_by == "parquet-cpp-arrow"
    assert pq.read_table(path).equals(table)


def test_a_footer_without_created_by_is_left_alone() -> None:
    # FileMetaData{1: version=1, 3: num_rows=0} in the compact protocol, then its stop byte
    footer = bytes([0x15, 0x02, 0x26, 0x00, 0x00])
    assert with_writer_name(footer) == footer


@pytest.mark.parametrize("content, problem", [
    (b"not parquet at all", "not a parquet file"),
    (b"PAR1" + b"\x00" * 4 + (999).to_bytes(4, "little") + b"PAR1", "exceeds the file"),
    (b"PAR1" + bytes([0x15, 0x02, 0x18, 0x40]) + (4).to_bytes(4, "little") + b"PAR1", "ends inside a Thrift value"),
])
def test_what_is_not_a_parquet_footer_is_refused(tmp_path: Path, content: bytes, problem: str) -> None:
    path = tmp_path / "bad.parquet"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=problem):
        pin_writer_name(path)
    assert path.read_bytes() == content
