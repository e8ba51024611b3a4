"""The longest line an index file may hold, and readers that refuse a longer one before holding it.

Index lines (CDX, CDXJ) come from files anyone can hand to warchive: a
collection's ``indexes/``, the inputs of ``sort``, ``merge``, ``build`` and
``zipnum``. Wherever a line is used it is held whole, compared, parsed or
encoded, at several times its size: read whole, one line of 100 MB would cost
a query 650 MB and a build 1 GB. ``MAX_LINE`` bounds a line; a longer one is a
``LineTooLongError`` naming the file and where the line starts, raised
before more than about ``MAX_LINE`` bytes of it are held.

``LineGuard`` watches the bytes of a stream of lines as they are read in
pieces (sort, merge, zipnum); ``GuardedReader`` is a ``readinto`` through
one (what the merge kernel reads); ``read_lines`` reads lines one at a time
with a bounded readline (build). ``warchive.sortedfile.SortedFile`` bounds
its own searches. This module must not parse lines, and imports nothing from
the package but its errors and the kernel that counts line feeds.
"""

from __future__ import annotations

import mmap
from typing import Any, BinaryIO, Iterator, Optional, Protocol, Union

from ._ext.line_sort import count_lines
from .errors import LineTooLongError

# 1 MiB. The longest line an index writer makes from a capture holds its URL twice (the key and the
# url field), a POST body of at most 4096 bytes in the key (cdxj-indexer's cut, postbody.py's) and
# short fields. A URL a web server answers fits in its request head (8 KiB in nginx and Apache by
# default, 64 KiB in `warchive serve`), so such lines stay under 140 KiB: 1 MiB leaves seven times
# that, while a line at the limit costs a query about 10 MB. What it refuses is a capture of a URL
# over half a MiB (a browser sends up to 2 MiB; servers answer such a request 414).
MAX_LINE = 1 << 20

Buffer = Union[bytes, bytearray, mmap.mmap]


def _line_feeds(buf: Buffer, start: int, end: int) -> int:
    """The LFs in buf[start:end] (counted in C)."""
    if end <= start:
        return 0
    with memoryview(buf) as whole, whole[start:end] as part:
        n = count_lines(part, end - start)
    return n - (buf[end - 1] != 0x0A)   # count_lines counts a last line without LF


class LineGuard:
    """The bytes of one stream of lines, watched piece by piece as they are read: ``check`` raises
    LineTooLongError (naming ``path``, the line's number and its first byte in the stream) as soon
    as a line runs past ``limit`` bytes, so that the reader never holds more of it than ``limit``
    and the piece read. It costs one search back for an LF every ``limit`` bytes or so, and a
    count of the LFs of each piece."""

    def __init__(self, path: str, limit: int = MAX_LINE) -> None:
        self.path = path
        self.limit = limit
        self.offset = 0   # bytes of the stream watched
        self.lines = 0    # LFs among them
        self.run = 0      # bytes of the last line so far (after the last LF)

    def check(self, buf: Buffer, start: int, end: int) -> None:
        """Watch buf[start:end], the stream's next bytes."""
        pos, run, limit = start, self.run, self.limit
        while True:
            stop = pos + limit - run + 1   # the line begun `run` bytes before pos must end before stop
            if stop > end:
                lf = buf.rfind(b"\n", pos, end)
                run = end - lf - 1 if lf >= 0 else run + end - pos
                break
            lf = buf.rfind(b"\n", pos, stop)
            if lf < 0:
                raise LineTooLongError(self.path, self.offset + pos - start - run, limit,
                                       self.lines + _line_feeds(buf, start, pos) + 1)
            pos, run = lf + 1, 0   # (the lines before lf end before stop)
        self.run = run
        self.lines += _line_feeds(buf, start, end)
        self.offset += end - start


class _ReadInto(Protocol):
    def readinto(self, b: Any) -> Optional[int]: ...


class GuardedReader:
    """``readinto`` from ``f``, through a LineGuard: bytes reach the caller only once checked. They
    pass through a buffer of this reader's, as large as the largest read asked for."""

    def __init__(self, f: _ReadInto, path: str, limit: int = MAX_LINE) -> None:
        self.f = f
        self.name = path
        self.guard = LineGuard(path, limit)
        self._buf = bytearray()

    def readinto(self, b: memoryview) -> Optional[int]:
        n = len(b)
        if len(self._buf) < n:
            self._buf = bytearray(n)
        with memoryview(self._buf) as whole, whole[:n] as part:
            k = self.f.readinto(part)
        if not k:
            return k
        self.guard.check(self._buf, 0, k)
        with memoryview(self._buf) as whole, whole[:k] as got:
            b[:k] = got
        return k


def read_lines(f: BinaryIO, path: str, limit: int = MAX_LINE) -> Iterator[bytes]:
    """The lines of ``f`` without their LF (a last line without one is a line), each read by a
    readline of at most ``limit`` + 1 bytes: a longer line is a LineTooLongError naming ``path``,
    the line's number and its first byte."""
    readline = f.readline
    offset = 0
    n = 0
    while True:
        line = readline(limit + 1)
        if not line:
            return
        n += 1
        if line.endswith(b"\n"):
            yield line[:-1]
        elif len(line) > limit:
            raise LineTooLongError(path, offset, limit, n)
        else:
            yield line
        offset += len(line)
