"""The arrays of an .npz file as memory maps of it: a process that needs a slice of a large array
(a shard of a ten-million-clip plan) reads that slice's pages, not the whole file.

`np.load` reads an .npz member whole. `np.savez` stores its members uncompressed, each an .npy
file whose data follows its header, so such a member is mapped where its data lies in the zip. A
deflated member (`np.savez_compressed`) cannot be mapped and is read whole."""

from __future__ import annotations

import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from reasonaudio.io.spill import release

_LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # a zip member's local file header (30 bytes)
_CHUNK = 1 << 24


class NpzMember:
    """Where one stored member's array data lies in the file, and what it holds."""

    def __init__(self, path: Path, name: str, offset: int, shape: tuple[int, ...], dtype: np.dtype, fortran: bool):
        self.path, self.name, self.offset = path, name, offset
        self.shape, self.dtype, self.fortran = shape, dtype, fortran

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize

    def array(self) -> np.ndarray:
        """The array, mapped copy-on-write: writing to it never changes the file."""
        if self.nbytes == 0:
            return np.empty(self.shape, self.dtype, order="F" if self.fortran else "C")
        return np.memmap(self.path, self.dtype, "c", self.offset, self.shape, "F" if self.fortran else "C")

    def chunks(self, size: int = _CHUNK) -> Iterator[bytes]:
        """The array's bytes in file order, read from the file: a digest of them touches no mapped
        page (mapped pages that were read count in the process's resident memory)."""
        with open(self.path, "rb") as fh:
            yield from _read_span(fh, self.offset, self.nbytes, self.name, size)


def read_npy_header(fh, what: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, Fortran order, dtype) of the .npy file at `fh`'s position, left at its data;
    ValueError names `what` for a format other than 1.0 and 2.0."""
    version = np.lib.format.read_magic(fh)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(fh)
    if version == (2, 0):
        return np.lib.format.read_array_header_2_0(fh)
    raise ValueError(f"{what}: .npy format {version} is not read here")


def _read_span(fh, start: int, size: int, name: str, chunk: int = _CHUNK) -> Iterator[bytes]:
    """`size` bytes of `fh` from `start`, `chunk` bytes at a time."""
    fh.seek(start)
    left = size
    while left:
        block = fh.read(min(chunk, left))
        if not block:
            raise ValueError(f"member {name!r} ends early")
        left -= len(block)
        yield block


def _check_crc(fh, start: int, size: int, expected: int, name: str) -> None:
    crc = 0
    for block in _read_span(fh, start, size, name):
        crc = zlib.crc32(block, crc)
    if crc != expected:
        raise zipfile.BadZipFile(f"bad CRC-32 for member {name!r}")


def open_npz(path: str | Path, *, verify: set[str] | None = None) -> dict[str, NpzMember | np.ndarray]:
    """Each array of the .npz at `path` by name (without `.npy`): an `NpzMember` for a stored
    member, the array itself for a deflated one (read whole, its CRC checked by zipfile). Stored
    members named in `verify` (all of them when it is None) have their CRC-32 checked by reading
    the file a chunk at a time; the others are for the caller to check (e.g. against a digest of
    `NpzMember.chunks`). Raises ValueError, OSError or zipfile.BadZipFile for a file that is not a
    well-formed .npz of plain arrays."""
    path = Path(path)
    out: dict[str, NpzMember | np.ndarray] = {}
    with zipfile.ZipFile(path) as zf, open(path, "rb") as fh:
        for info in zf.infolist():
            name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            if info.compress_type != zipfile.ZIP_STORED:
                with zf.open(info) as member:
                    out[name] = np.lib.format.read_array(member, allow_pickle=False)
                continue
            fh.seek(info.header_offset)
            header = fh.read(_LOCAL_HEADER.size)
            if len(header) != _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
                raise zipfile.BadZipFile(f"member {name!r}: no local file header")
            *_, name_len, extra_len = _LOCAL_HEADER.unpack(header)
            start = info.header_offset + _LOCAL_HEADER.size + name_len + extra_len
            fh.seek(start)
            shape, fortran, dtype = read_npy_header(fh, f"member {name!r}")
            if dtype.hasobject:
                raise ValueError(f"member {name!r} holds Python objects")
            member = NpzMember(path, name, fh.tell(), tuple(shape), dtype, fortran)
            if member.offset - start + member.nbytes != info.file_size:
                raise ValueError(f"member {name!r}: {info.file_size} bytes, its header says {member.offset - start + member.nbytes}")
            if verify is None or name in verify:
                _check_crc(fh, start, info.file_size, info.CRC, name)
            out[name] = member
    return out


def array_of(item: NpzMember | np.ndarray) -> np.ndarray:
    return item.array() if isinstance(item, NpzMember) else item


def write_npz(fh, arrays: dict[str, np.ndarray], chunk: int = _CHUNK) -> None:
    """What `np.savez(fh, **arrays)` writes (stored members, each an .npy of format 1.0), each
    array's data written `chunk` bytes at a time and the pages of a memory-mapped one given back
    after each: `np.savez` reads a mapped array whole, and its pages stay resident."""
    with zipfile.ZipFile(fh, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for key, value in arrays.items():
            value = np.ascontiguousarray(value)
            data = value.reshape(-1).view(np.uint8)
            # always zip64, as np.savez (numpy gh-10776)
            with zf.open(key + ".npy", "w", force_zip64=True) as member:
                np.lib.format.write_array_header_1_0(member, np.lib.format.header_data_from_array_1_0(value))
                for lo in range(0, len(data), chunk):
                    member.write(data[lo : lo + chunk])
                    release(value)
