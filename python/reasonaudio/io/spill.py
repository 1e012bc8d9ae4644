"""Arrays of a large corpus's plan held in temporary files and read back as memory maps.

Planning a corpus of more than `SPILL_CLIPS` clips writes its per-clip and per-event columns, and
every query's relevant clips, a block at a time to files of the temporary directory (`TMPDIR`,
which must be a disk, not a tmpfs), and reads them back as read-only memory maps. The process's own
memory then holds a block of clips, whatever the corpus size: the mapped pages belong to the page
cache, which the kernel writes back or drops as it needs, and `release` gives them back after each
pass. The files have no name (unlinked when made), so nothing is left behind, even by a process
that is killed.
"""

from __future__ import annotations

import mmap
import tempfile
from collections.abc import Iterable

import numpy as np

# Corpora of more clips than this plan to disk (4 blocks of the relevance engine); smaller ones in memory.
SPILL_CLIPS = 1 << 18
# Clips per block of every pass over a spilled plan.
SPILL_BLOCK = 1 << 16


class ArrayFile:
    """One array appended a block at a time to an unnamed temporary file, then mapped read-only."""

    def __init__(self, dtype: np.dtype | type | str):
        self.dtype = np.dtype(dtype)
        self._fh = tempfile.TemporaryFile(prefix="reasonaudio-plan-")
        self.n = 0

    def append(self, values: np.ndarray) -> None:
        block = np.ascontiguousarray(values, dtype=self.dtype)
        self._fh.write(memoryview(block).cast("B"))
        self.n += len(block)

    def array(self) -> np.ndarray:
        """The array written so far, as a read-only memory map (the file is closed: the map keeps it)."""
        self._fh.flush()
        if self.n == 0:
            self._fh.close()
            return np.zeros(0, dtype=self.dtype)
        mm = mmap.mmap(self._fh.fileno(), self.n * self.dtype.itemsize, prot=mmap.PROT_READ)
        self._fh.close()
        return np.frombuffer(mm, dtype=self.dtype)


def release(*arrays: object) -> None:
    """Gives back the resident pages of memory-mapped arrays (and of arrays in dicts or lists of
    them): they are read again from the file when next touched. Arrays in memory are left alone."""
    for item in arrays:
        if isinstance(item, dict):
            release(*item.values())
        elif isinstance(item, (list, tuple)):
            release(*item)
        elif isinstance(item, np.ndarray):
            base: object = item
            while isinstance(base, np.ndarray):
                base = base.base
            mm = base.obj if isinstance(base, memoryview) else base
            if isinstance(mm, mmap.mmap) and not mm.closed:
                mm.madvise(mmap.MADV_DONTNEED)


def spill_lists(lists: Iterable[np.ndarray], dtype: np.dtype | type | str = np.uint32) -> list[np.ndarray]:
    """Arrays given one at a time, written to one file and given back as views of its memory map
    (for each query's relevant clips: a list of arrays in memory would grow with the corpus)."""
    store = ArrayFile(dtype)
    ends = [0]
    for values in lists:
        store.append(values)
        ends.append(store.n)
    flat = store.array()
    return [flat[a:b] for a, b in zip(ends[:-1], ends[1:])]

