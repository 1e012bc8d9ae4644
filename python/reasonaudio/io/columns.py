"""Read-only sequences over a string column, for corpora of millions of clips.

A million clip ids held as Python `str` objects cost about 70 bytes each, a `Path` per clip about
300, and a dict from id to position about 100 more; the same ids in an arrow column cost about 12.
`StrColumn` and `PathColumn` keep the column and make a Python object only for the item asked for,
so code written against `list[str]` / `list[Path]` (indexing, slicing, iterating, `len`) reads them
unchanged. Positions of ids are looked up in bulk by binary search of the sorted column, never a dict.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import overload

import numpy as np
import polars as pl

# items made per step when iterating: enough to amortise the conversion, small beside the column
_CHUNK = 65_536


class StrColumn(Sequence[str]):
    """A `Sequence[str]` over a polars String series (no nulls)."""

    __slots__ = ("series", "_index")

    def __init__(self, values: pl.Series | Sequence[str]):
        series = values.series if isinstance(values, StrColumn) else values
        if not isinstance(series, pl.Series):
            series = pl.Series(list(series), dtype=pl.String)
        self.series = series.cast(pl.String).rechunk()
        self._index: tuple[pl.Series, np.ndarray] | None = None

    def __len__(self) -> int:
        return self.series.len()

    @overload
    def __getitem__(self, i: int) -> str: ...

    @overload
    def __getitem__(self, i: slice) -> list[str]: ...

    def __getitem__(self, i):
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step == 1:
                return self.series.slice(start, max(stop - start, 0)).to_list()
            return self.series.gather(np.arange(start, stop, step)).to_list()
        n = len(self)
        i = int(i)
        if not -n <= i < n:
            raise IndexError("column index out of range")
        return self.series[i % n]

    def __iter__(self) -> Iterator[str]:
        for start in range(0, len(self), _CHUNK):
            yield from self.series.slice(start, _CHUNK).to_list()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StrColumn):
            return len(self) == len(other) and bool(self.series.equals(other.series))
        if isinstance(other, (list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        head = ", ".join(repr(x) for x in self[:3])
        return f"StrColumn([{head}{', …' if len(self) > 3 else ''}], {len(self)} items)"

    def gather(self, rows: np.ndarray) -> pl.Series:
        """The items at `rows` (int positions), as a String series."""
        return self.series.gather(np.asarray(rows, dtype=np.int64).ravel())

    def _sorted(self) -> tuple[pl.Series, np.ndarray]:
        """(the items sorted, each one's position in this column), ordered by item then position."""
        if self._index is None:
            frame = pl.DataFrame({"id": self.series, "at": np.arange(len(self), dtype=np.int64)}).sort(["id", "at"])
            self._index = (frame["id"], frame["at"].to_numpy())
        return self._index

    def positions(self, values: pl.Series | Sequence[str]) -> np.ndarray:
        """int64 position in this column of each of `values` (the last where an item is given twice,
        as `{item: i for i, item in enumerate(column)}` has it), -1 where absent. A binary search of
        the sorted column: no hash table of the column's items is built."""
        values = values.series if isinstance(values, StrColumn) else values
        series = values.cast(pl.String) if isinstance(values, pl.Series) else pl.Series(list(values), dtype=pl.String)
        items, at = self._sorted()
        if len(items) == 0 or len(series) == 0:
            return np.full(len(series), -1, dtype=np.int64)
        # the last of equal items sorts last: one to the left of where a value would go after them
        found = items.search_sorted(series, side="right")
        i = np.asarray(found.to_numpy(), dtype=np.int64) - 1
        np.maximum(i, 0, out=i)
        same = (items.gather(i) == series).fill_null(False).to_numpy()
        return np.where(same, at[i], -1)


class PathColumn(Sequence[Path]):
    """A `Sequence[Path]`: `root / item` for each item of a column of relative paths."""

    __slots__ = ("root", "names")

    def __init__(self, root: Path, names: pl.Series | Sequence[str]):
        self.root = Path(root)
        self.names = names if isinstance(names, StrColumn) else StrColumn(names)

    def __len__(self) -> int:
        return len(self.names)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self.root / p for p in self.names[i]]
        return self.root / self.names[i]

    def __iter__(self) -> Iterator[Path]:
        root = self.root
        return (root / p for p in self.names)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PathColumn):
            return self.root == other.root and self.names == other.names
        if isinstance(other, (list, tuple)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PathColumn({str(self.root)!r}, {len(self)} paths)"


def as_column(values: StrColumn | pl.Series | Sequence[str]) -> StrColumn:
    """`values` itself when it is a StrColumn (its sorted index, once made, is kept), else a new one."""
    return values if isinstance(values, StrColumn) else StrColumn(values)
