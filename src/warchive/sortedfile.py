"""Sorted text files searched in place: the reader of every sorted-lines file warchive keeps.

CDX/CDXJ indexes, record indexes (.rix) and session sidecars are files of
lines sorted bytewise; ``SortedFile`` finds the lines of a key range by
binary search over an mmap of the file, without reading it whole
(``MappedFile``: the mapping, for readers of unsorted line files). A file cut
short while mapped would kill the process with SIGBUS at the first page read
past its new end: the size is checked (fstat, through the map) before a search
and every 64 KiB of lines read, and a shorter file is a FileError naming the
offset. Given ``max_line``, a search looks no further than that for the ends
of a line, and a longer line is a LineTooLongError: a line of 100 MB is
neither copied nor paged in whole. A file found out of order is an
UnsortedInputError naming it, where a binary search would answer nothing or
the wrong lines: the lines a search reads anyway are compared with each other
(a probe that sorts outside the lines bracketing it, a line of a range below
the one before it), and SAMPLES lines at even places once, at the first
search; the file is never read whole to check it, so a line or two out of
place where no search looks can pass. This module must not parse the lines it
returns and imports nothing from the package but its errors.
"""

from __future__ import annotations

import mmap
import os
from typing import Dict, Iterator, Optional, TypeVar

from .errors import FileError, LineTooLongError, UnsortedInputError

_M = TypeVar("_M", bound="MappedFile")
CHECK_EVERY = 64 << 10   # bytes of lines read between two checks of the file's size
SAMPLE_REACH = 64 << 10   # how far a sample looks for its line's ends
SAMPLES = 16   # lines at even places compared once, at the first search: a file sorted in parts is found


class MappedFile:
    """A file mapped read-only as it is when opened: ``_mm`` is None when it is empty or closed."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._f = open(path, "rb")  # noqa: SIM115 - closed by close()
        size = os.fstat(self._f.fileno()).st_size
        self._mm: Optional[mmap.mmap] = mmap.mmap(self._f.fileno(), 0, access=mmap.ACCESS_READ) if size else None
        self._size = size

    @property
    def mm(self) -> Optional[mmap.mmap]:
        """The mapping (None when the file is empty or closed)."""
        return self._mm

    @property
    def size(self) -> int:
        """The file's size when it was opened (what is mapped)."""
        return self._size

    def check_size(self, pos: int) -> None:
        """FileError (naming ``pos``) if the file is shorter now than the mapping: reading the
        mapping past the file's end would raise SIGBUS."""
        if self._mm is not None:
            now = self._mm.size()
            if now < self._size:
                raise FileError(self.path, pos, f"the file was cut short while open ({now} bytes now, "
                                f"{self._size} when opened)", "it changed under its reader: restore or rebuild it")

    def close(self) -> None:
        if self._mm is not None:
            self._mm.close()
            self._mm = None
        self._f.close()

    def __enter__(self: _M) -> _M:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SortedFile(MappedFile):
    """A file of lines sorted bytewise (CDX, CDXJ, record indexes, session sidecars), searched
    in place: mmap'd, binary search on line starts. ``range(start, stop)`` gives the lines
    (bytes, without LF) with start <= line < stop. CDX header lines (`` CDX ...``) and blank
    lines are never returned. A line longer than ``max_line`` bytes (None: no limit) met by a
    search is a LineTooLongError."""

    def __init__(self, path: str, max_line: Optional[int] = None) -> None:
        super().__init__(path)
        self.max_line = max_line
        # the bytes searched for the LF before or after a place: past them, the line is too long
        self._reach = (self._size if max_line is None else max_line) + 1
        self._disorder: Optional[UnsortedInputError] = None   # the samples' verdict, once taken
        self._samples_taken = False

    def _too_long(self, offset: int, inside: bool = False) -> LineTooLongError:
        return LineTooLongError(self.path, offset, self._reach - 1, inside=inside)

    def _check_samples(self, mm: mmap.mmap) -> None:
        """UnsortedInputError if the lines starting after SAMPLES even places (the first line,
        the last) are out of order: a search alone misses a file of two sorted halves. Taken
        once; a file found out of order is refused at every search."""
        if self._samples_taken:
            if self._disorder is not None:
                raise self._disorder
            return
        self._samples_taken = True
        previous = b""
        for s, line in sorted(self._samples().items()):
            if not line or line.startswith(b" CDX "):
                continue
            if line < previous:
                self._disorder = UnsortedInputError(self.path, None, line, previous, offset=s)
                raise self._disorder
            previous = line

    def _samples(self) -> Dict[int, bytes]:
        """{start: line} of the first line and of the lines after SAMPLES even places (the last
        one included). Read with pread, SAMPLE_REACH bytes at a time, not through the mapping: a
        page touched in the mapping stays in the resident set, with the pages read around it
        (about 2 MB a touch here). A line not within reach is passed over: a search reaching one
        too long says so."""
        size, fd = self._size, self._f.fileno()
        out: Dict[int, bytes] = {}
        head = os.pread(fd, SAMPLE_REACH, 0)
        if b"\n" in head or size <= SAMPLE_REACH:
            out[0] = head.split(b"\n", 1)[0]
        for k in range(1, SAMPLES + 1):
            at = max(size * k // SAMPLES - 1, 0) if k < SAMPLES else max(size - SAMPLE_REACH, 0)
            buf = os.pread(fd, 2 * SAMPLE_REACH, at)
            i = buf.rfind(b"\n", 0, len(buf) - 1) if k == SAMPLES else buf.find(b"\n")
            if i < 0 or at + i + 1 >= size:
                continue
            j = buf.find(b"\n", i + 1)
            if j < 0 and at + len(buf) < size:
                continue   # a line longer than the window: passed over
            out[at + i + 1] = buf[i + 1:j if j >= 0 else len(buf)]
        return out

    def _first_at_least(self, key: bytes) -> int:
        """Offset of the first line >= key (the file size if there is none)."""
        mm = self._mm
        if mm is None:
            return 0
        self.check_size(0)
        self._check_samples(mm)
        size, reach = self._size, self._reach
        lo, hi = 0, size  # lo is a line start; the answer is in [lo, hi]
        # the greatest line seen before lo and the least at or after hi: a probe between them
        # in place must sort between them (blank and header lines, never returned, aside)
        below: Optional[bytes] = None
        above: Optional[bytes] = None
        above_at = 0
        while lo < hi:
            mid = (lo + hi) // 2
            w = mid - reach
            s = mm.rfind(b"\n", w if w > 0 else 0, mid) + 1  # >= lo, since lo starts a line
            if s == 0 < w:   # no LF in the `reach` bytes before mid: they are all one line's
                raise self._too_long(w, inside=True)
            e = mm.find(b"\n", s, s + reach)
            if e < 0:
                if size - s >= reach:
                    raise self._too_long(s)
                e = size
            line = mm[s:e]
            counts = bool(line) and not line.startswith(b" CDX ")
            if counts:
                if below is not None and line < below:
                    raise UnsortedInputError(self.path, None, line, below, offset=s)
                if above is not None and above < line:
                    raise UnsortedInputError(self.path, None, above, line, offset=above_at)
            if line < key:
                lo = e + 1
                if counts:
                    below = line
            else:
                hi = s
                if counts:
                    above, above_at = line, s
        return min(lo, size)

    def range(self, start: bytes, stop: Optional[bytes]) -> Iterator[bytes]:
        mm = self._mm
        if mm is None:
            return
        pos = self._first_at_least(start)
        size, reach = self._size, self._reach
        checked = pos + CHECK_EVERY
        previous = b""
        while pos < size:
            if pos >= checked:
                self.check_size(pos)
                checked = pos + CHECK_EVERY
            end = mm.find(b"\n", pos, pos + reach)
            if end < 0:
                if size - pos >= reach:
                    raise self._too_long(pos)
                end = size
            line = mm[pos:end]
            if stop is not None and line >= stop:
                return
            if not line or line.startswith(b" CDX "):
                pos = end + 1
                continue
            if line < previous:
                raise UnsortedInputError(self.path, None, line, previous, offset=pos)
            previous = line
            pos = end + 1
            yield line
