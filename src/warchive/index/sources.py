"""Where index lines come from: sorted CDX/CDXJ files, index segments, ZipNum clusters, collections.

Every source answers ``range(start, stop)``: its lines (bytes, without the
line feed) that are bytewise >= start and < stop (stop None: to the end), in
sorted order. ``open_source(path)`` picks the kind by looking at the file;
``MergedSource`` merges several sources as one (as pywb merges the indexes of
a collection). Sources never parse lines: that is the query engine's job.
"""

from __future__ import annotations

import heapq
import mmap
import os
from typing import Iterable, Iterator, List, Optional, Protocol, Sequence

from ..errors import IndexFormatError


class Source(Protocol):
    def range(self, start: bytes, stop: Optional[bytes]) -> Iterator[bytes]: ...

    def close(self) -> None: ...


class CDXFile:
    """A sorted plain-text CDX or CDXJ file, searched in place (mmap, binary search on line starts).

    Header lines (` CDX ...`) and blank lines are never returned."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._f = open(path, "rb")  # noqa: SIM115 - closed by close()
        size = os.fstat(self._f.fileno()).st_size
        self._mm: Optional[mmap.mmap] = mmap.mmap(self._f.fileno(), 0, access=mmap.ACCESS_READ) if size else None
        self._size = size

    def close(self) -> None:
        if self._mm is not None:
            self._mm.close()
            self._mm = None
        self._f.close()

    def __enter__(self) -> "CDXFile":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _line_start(self, pos: int) -> int:
        """Start of the line that holds byte pos."""
        assert self._mm is not None
        nl = self._mm.rfind(b"\n", 0, pos)
        return nl + 1

    def _first_at_least(self, key: bytes) -> int:
        """Offset of the first line >= key (the file size if there is none)."""
        mm = self._mm
        if mm is None:
            return 0
        lo, hi = 0, self._size  # lo is a line start; the answer is in [lo, hi]
        while lo < hi:
            s = self._line_start((lo + hi) // 2)  # >= lo, since lo starts a line
            e = mm.find(b"\n", s)
            if e < 0:
                e = self._size
            if mm[s:e] < key:
                lo = e + 1
            else:
                hi = s
        return min(lo, self._size)

    def range(self, start: bytes, stop: Optional[bytes]) -> Iterator[bytes]:
        mm = self._mm
        if mm is None:
            return
        pos = self._first_at_least(start)
        size = self._size
        while pos < size:
            end = mm.find(b"\n", pos)
            if end < 0:
                end = size
            line = mm[pos:end]
            pos = end + 1
            if stop is not None and line >= stop:
                return
            if not line or line.startswith(b" CDX "):
                continue
            yield line


class MergedSource:
    """Several sources as one: their ranges merged in order (duplicates kept, as pywb keeps them)."""

    def __init__(self, sources: Sequence[Source]) -> None:
        self.sources = list(sources)

    def range(self, start: bytes, stop: Optional[bytes]) -> Iterator[bytes]:
        its = [s.range(start, stop) for s in self.sources]
        if len(its) == 1:
            return its[0]
        return heapq.merge(*its)

    def close(self) -> None:
        for s in self.sources:
            s.close()


SEGMENT_EXT = ".seg"


def is_segment(path: str) -> bool:
    """Is this a warchive index segment (by its name: NAME.seg)?"""
    return path.endswith(SEGMENT_EXT)


def source_kind(path: str) -> str:
    """"zipnum", "segment" or "plain"."""
    if path.endswith((".idx", ".summary")):
        return "zipnum"
    if is_segment(path):
        return "segment"
    return "plain"


def open_source(path: str) -> Source:
    """A source for a path: ZipNum summary (.idx/.summary), index segment, or sorted CDX(J) file."""
    kind = source_kind(path)
    if kind == "zipnum":
        from .zipnum import ZipNumIndex

        return ZipNumIndex(path)
    if kind == "segment":
        from .segment import Segment

        return Segment(path)
    with open(path, "rb") as f:
        magic = f.read(2)
    if magic == b"\x1f\x8b":
        raise IndexFormatError(path, None, "a gzip file is not a searchable index: sort it into a plain "
                                           "CDXJ file, a ZipNum cluster or an index segment")
    return CDXFile(path)


def open_sources(paths: Iterable[str]) -> Source:
    srcs: List[Source] = [open_source(p) for p in paths]
    return srcs[0] if len(srcs) == 1 else MergedSource(srcs)
