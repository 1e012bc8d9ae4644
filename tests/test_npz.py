"""The arrays of an .npz as memory maps of the file (`reasonaudio.io.npz`): equal to what np.load
reads, whatever the dtypes, shapes and member sizes, and damage is found, never mapped silently."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from reasonaudio.io.npz import NpzMember, array_of, open_npz

DTYPES = st.sampled_from([np.uint8, np.int32, np.uint32, np.int64, np.uint64, np.float32, np.float64, np.bool_, "<U3"])
ARRAYS = st.dictionaries(
    st.from_regex(r"[a-z][a-z_]{0,11}", fullmatch=True),
    DTYPES.flatmap(lambda dt: hnp.arrays(dt, hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=6))),
    min_size=1,
    max_size=5,
)


@settings(max_examples=60, deadline=None)
@given(ARRAYS, st.booleans(), st.booleans())
def test_mapped_arrays_equal_what_np_load_reads(tmp_path_factory, arrays, compressed, fortran) -> None:
    path = tmp_path_factory.mktemp("npz") / "a.npz"
    if fortran:
        arrays = {k: np.asfortranarray(v) for k, v in arrays.items()}
    (np.savez_compressed if compressed else np.savez)(path, **arrays)
    found = open_npz(path)
    with np.load(path, allow_pickle=False) as z:
        assert sorted(found) == sorted(z.files)
        for name in z.files:
            item = found[name]
            assert isinstance(item, NpzMember) != compressed
            got, want = array_of(item), z[name]
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)
            if isinstance(item, NpzMember):
                assert b"".join(item.chunks(size=7)) == np.ascontiguousarray(want).tobytes(order="F" if item.fortran else "C")


def test_a_mapped_array_is_copy_on_write(tmp_path: Path) -> None:
    path = tmp_path / "a.npz"
    np.savez(path, x=np.arange(10, dtype=np.int64))
    before = path.read_bytes()
    x = array_of(open_npz(path)["x"])
    x[3] = -1
    assert path.read_bytes() == before and int(array_of(open_npz(path)["x"])[3]) == 3


def _flip_data_byte(path: Path, member: str) -> None:
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo(member)
    data = bytearray(path.read_bytes())
    data[info.header_offset + 30 + len(info.filename) + 200] ^= 0xFF  # past the .npy header
    path.write_bytes(bytes(data))


def test_damage_is_found(tmp_path: Path) -> None:
    path = tmp_path / "a.npz"
    np.savez(path, x=np.arange(1000, dtype=np.int64), y=np.arange(1000, dtype=np.int64))
    _flip_data_byte(path, "x.npy")
    with pytest.raises(zipfile.BadZipFile, match="CRC"):
        open_npz(path)
    # unverified members are the caller's to check (the plan's columns, against its fingerprint)
    assert isinstance(open_npz(path, verify={"y"})["x"], NpzMember)
    good = tmp_path / "b.npz"
    np.savez(good, x=np.arange(1000, dtype=np.int64))
    good.write_bytes(good.read_bytes()[:500])
    with pytest.raises((zipfile.BadZipFile, ValueError, OSError)):
        open_npz(good)
    objects = tmp_path / "o.npz"
    np.savez(objects, x=np.array([{"a": 1}], dtype=object))
    with pytest.raises(ValueError, match="Python objects"):
        open_npz(objects)
