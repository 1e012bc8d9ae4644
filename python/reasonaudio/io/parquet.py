"""Benchmark tables as parquet files whose bytes follow from their content, not from the version of
the library that wrote them (docs/benchmark.md, "Table bytes and the manifest's hashes").

The manifest's `hashes` are sha256 of the table files (contract §4). polars from 1.39 on encodes a
frame into the same pages and the same Arrow schema; what differs between its versions is the
footer's `created_by`, which polars 2 fills with its version and build (`Polars (python) version
2.1.0 (build 7f90…)`). `write_table` writes with `TABLE_WRITE_OPTIONS` and then keeps only the
writer's name there (`Polars`, as polars 1.x wrote it).

Everything here needs only polars and the standard library. A table written block by block (by
polars or another parquet writer) gets the same treatment: write it with `TABLE_WRITE_OPTIONS`,
close it, then `pin_writer_name(path)`.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import polars as pl

#: How every benchmark table is written: zstd pages and no min/max statistics (the tables are read
#: whole, so statistics would only add bytes whose encoding is one more thing a writer can change).
TABLE_WRITE_OPTIONS: dict = {"compression": "zstd", "statistics": False}

_MAGIC = b"PAR1"


def write_table(frame: pl.DataFrame, path: str | os.PathLike[str], *, metadata: dict[str, str] | None = None) -> None:
    """Writes `frame` to the parquet file `path` with `TABLE_WRITE_OPTIONS` (`metadata`: footer
    key-value pairs), its footer naming the writer without its version."""
    extra = {"metadata": metadata} if metadata else {}
    frame.write_parquet(path, **TABLE_WRITE_OPTIONS, **extra)
    pin_writer_name(path)


def pin_writer_name(path: str | os.PathLike[str]) -> None:
    """Rewrites, in place, the `created_by` of a closed parquet file to the writer's name alone (its
    first word: `Polars`, `parquet-cpp-arrow`, …). The pages and every offset the footer holds stay
    where they are: only the footer, which ends the file, changes length."""
    with open(path, "r+b") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size < 12:
            raise ValueError(f"{os.fspath(path)}: {size} bytes is too short for a parquet file")
        fh.seek(size - 8)
        tail = fh.read(8)
        if tail[4:] != _MAGIC:
            raise ValueError(f"{os.fspath(path)}: not a parquet file with a plain footer (ends in {tail[4:]!r})")
        length = int.from_bytes(tail[:4], "little")
        start = size - 8 - length
        if start < 4:
            raise ValueError(f"{os.fspath(path)}: footer length {length} exceeds the file")
        fh.seek(start)
        footer = fh.read(length)
        pinned = with_writer_name(footer)
        if pinned != footer:
            fh.seek(start)
            fh.write(pinned + len(pinned).to_bytes(4, "little") + _MAGIC)
            fh.truncate()


def row_group_rows(data: bytes) -> list[int]:
    """The number of rows of each row group of the whole parquet file `data`, read off its footer."""
    if len(data) < 12 or data[-4:] != _MAGIC:
        raise ValueError("not a parquet file with a plain footer")
    length = int.from_bytes(data[-8:-4], "little")
    if length > len(data) - 12:
        raise ValueError(f"footer length {length} exceeds the file")
    return _CompactReader(data[len(data) - 8 - length : -8]).row_group_rows()


def with_writer_name(footer: bytes) -> bytes:
    """The Thrift-compact FileMetaData `footer` with its `created_by` (field 6) cut to the writer's
    first word; every other byte as it was. A footer without `created_by` is returned unchanged."""
    reader = _CompactReader(footer)
    span = reader.string_field_span(_CREATED_BY)
    if span is None:
        return footer
    value_start, value_end, length_start = span
    created_by = footer[value_start:value_end].decode("utf-8", "replace")
    match = re.match(r"[^\s(]+", created_by)
    name = (match.group(0) if match else created_by).encode()
    return footer[:length_start] + _varint(len(name)) + name + footer[value_end:]


_CREATED_BY = 6  # parquet.thrift: FileMetaData.created_by
_ROW_GROUPS = 4  # parquet.thrift: FileMetaData.row_groups
_NUM_ROWS = 3  # parquet.thrift: RowGroup.num_rows

# Thrift compact protocol type codes
_BOOL_TRUE, _BOOL_FALSE, _BYTE, _I16, _I32, _I64, _DOUBLE, _BINARY, _LIST, _SET, _MAP, _STRUCT = range(1, 13)


class _CompactReader:
    """Just enough of the Thrift compact protocol to walk a struct and skip what it does not need."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def _byte(self) -> int:
        if self.pos >= len(self.data):
            raise ValueError("parquet footer ends inside a Thrift value")
        b = self.data[self.pos]
        self.pos += 1
        return b

    def _varint(self) -> int:
        shift = value = 0
        while True:
            b = self._byte()
            value |= (b & 0x7F) << shift
            if not b & 0x80:
                return value
            shift += 7

    def _skip(self, kind: int, in_container: bool) -> None:
        if kind in (_BOOL_TRUE, _BOOL_FALSE):
            # a struct field carries a bool in its type code; a list element takes one byte
            self.pos += 1 if in_container else 0
        elif kind == _BYTE:
            self.pos += 1
        elif kind in (_I16, _I32, _I64):
            self._varint()
        elif kind == _DOUBLE:
            self.pos += 8
        elif kind == _BINARY:
            length = self._varint()  # read before `pos` is: `pos += _varint()` would lose the prefix
            self.pos += length
        elif kind in (_LIST, _SET):
            head = self._byte()
            count = head >> 4 if head >> 4 != 15 else self._varint()
            for _ in range(count):
                self._skip(head & 0x0F, True)
        elif kind == _MAP:
            count = self._varint()
            if count:
                types = self._byte()
                for _ in range(count):
                    self._skip(types >> 4, True)
                    self._skip(types & 0x0F, True)
        elif kind == _STRUCT:
            self._struct(None)
        else:
            raise ValueError(f"parquet footer: unknown Thrift type {kind} at byte {self.pos}")
        if self.pos > len(self.data):
            raise ValueError("parquet footer ends inside a Thrift value")

    def _struct(self, want: int | None) -> tuple[int, int, int] | None:
        """Walks one struct to its end; for field `want` (a string), returns where its value starts
        and ends and where its length prefix starts."""
        found = None
        last = 0
        while True:
            head = self._byte()
            if head == 0:
                return found
            kind, delta = head & 0x0F, head >> 4
            if delta:
                field = last + delta
            else:
                raw = self._varint()
                field = (raw >> 1) ^ -(raw & 1)  # zigzag i16
            last = field
            if want is not None and field == want and kind == _BINARY:
                length_start = self.pos
                length = self._varint()
                found = (self.pos, self.pos + length, length_start)
                self.pos += length
                if self.pos > len(self.data):
                    raise ValueError("parquet footer ends inside a Thrift value")
            else:
                self._skip(kind, False)

    def _field(self, last: int) -> tuple[int, int] | None:
        """(field id, type) of the next field of a struct, or None at its end."""
        head = self._byte()
        if head == 0:
            return None
        kind, delta = head & 0x0F, head >> 4
        if delta:
            return last + delta, kind
        raw = self._varint()
        return (raw >> 1) ^ -(raw & 1), kind  # zigzag i16

    def _struct_integer(self, want: int) -> int | None:
        """Walks one struct to its end and returns its integer field `want`, if any."""
        value = None
        last = 0
        while (head := self._field(last)) is not None:
            last, kind = head
            if last == want and kind in (_I16, _I32, _I64):
                raw = self._varint()
                value = (raw >> 1) ^ -(raw & 1)  # zigzag
            else:
                self._skip(kind, False)
        return value

    def row_group_rows(self) -> list[int]:
        """num_rows (RowGroup field 3) of each entry of FileMetaData.row_groups (field 4)."""
        self.pos = 0
        rows: list[int] = []
        last = 0
        while (head := self._field(last)) is not None:
            last, kind = head
            if last == _ROW_GROUPS and kind == _LIST:
                head_byte = self._byte()
                count = head_byte >> 4 if head_byte >> 4 != 15 else self._varint()
                for _ in range(count):
                    value = self._struct_integer(_NUM_ROWS)
                    if value is None:
                        raise ValueError("parquet footer: a row group without num_rows")
                    rows.append(value)
            else:
                self._skip(kind, False)
        return rows

    def string_field_span(self, field: int) -> tuple[int, int, int] | None:
        """(value start, value end, length-prefix start) of the top-level string `field`, or None."""
        self.pos = 0
        span = self._struct(field)
        if self.pos != len(self.data):
            raise ValueError(f"parquet footer: {len(self.data) - self.pos} bytes after the FileMetaData struct")
        return span


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        if n < 0x80:
            out.append(n)
            return bytes(out)
        out.append((n & 0x7F) | 0x80)
        n >>= 7
