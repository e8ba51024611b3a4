"""A WACZ's index lines as a warchive index segment, sorted in bounded memory.

A WACZ's lines come in any order once their keys are made warchive's (warchive.wacz.keys), and
in any number up to warchive.wacz.indexlines' limits. ``write_sorted(lines, write)`` sorts them
with ``LineSorter`` (at most ``SORT_MEMORY`` held; sorted runs go to unlinked files in
``tmpdir``; identical lines once) and writes the segment through ``write`` (`warchive add`
publishes it into the collection). ``spooled(lines)`` writes the segment into a temporary
directory and opens it: the file is removed once open (the open segment keeps it readable), so
what `warchive serve` looks a WACZ's index up in costs disk while it is served, about the
compressed size of the index, and memory within the sort's limit, a block being written, and
the segment's cache, whatever the number of lines.

This module must not parse lines.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Callable, Iterable, List, Optional

from ..index.segment import Segment, SegmentWriter
from ..index.sort import LineSorter

SORT_MEMORY = 32 << 20   # the sort's buffer and merge buffers
BATCH = 1 << 20          # bytes of lines handed to the sort at once
CACHE_BYTES = 8 << 20    # inflated blocks a served WACZ's segment keeps

Write = Callable[[bytes], object]


def write_sorted(lines: Iterable[bytes], write: Write, tmpdir: Optional[str] = None,
                 source: Optional[str] = None) -> int:
    """Write ``lines`` (each without LF) sorted bytewise, identical ones once, as a segment
    through ``write``; the number of lines written. ``source`` names them in errors."""
    sorter = LineSorter(SORT_MEMORY, tmpdir)
    try:
        batch: List[bytes] = []
        size = 0
        for line in lines:
            batch.append(line)
            size += len(line) + 1
            if size >= BATCH:
                sorter.add(b"\n".join(batch) + b"\n")
                batch.clear()
                size = 0
        if batch:
            sorter.add(b"\n".join(batch) + b"\n")
            batch.clear()
    except BaseException:
        sorter.finish(_discard)   # (its runs are files: closed and gone only once finished)
        raise
    writer = SegmentWriter(write, source=source)
    feed = _Lines(writer)
    sorter.finish(feed.write)
    feed.close()
    return int(writer.finish()["lines"])


def spooled(lines: Iterable[bytes], tmpdir: Optional[str] = None, source: Optional[str] = None) -> Segment:
    """``lines`` sorted into a segment in a new temporary directory under ``tmpdir`` (the
    system's by default), opened; the directory is gone when this returns."""
    where = tempfile.mkdtemp(prefix="warchive-wacz-", dir=tmpdir)
    try:
        path = os.path.join(where, "index.seg")
        with open(path, "wb") as f:
            write_sorted(lines, f.write, where, source)
        return Segment(path, cache_bytes=CACHE_BYTES)
    finally:
        shutil.rmtree(where, ignore_errors=True)


class _Lines:
    """``write`` takes the sort's output in pieces that may end inside a line; the writer
    gets whole lines."""

    def __init__(self, writer: SegmentWriter) -> None:
        self.writer = writer
        self.carry = b""

    def write(self, chunk: bytes) -> None:
        last = chunk.rfind(b"\n")
        if last < 0:
            self.carry += bytes(chunk)
            return
        lines = bytes(chunk[:last]).split(b"\n")
        if self.carry:
            lines[0] = self.carry + lines[0]
        self.carry = bytes(chunk[last + 1:])
        self.writer.extend(lines)

    def close(self) -> None:
        if self.carry:
            self.writer.add(self.carry)
            self.carry = b""


def _discard(chunk: bytes) -> None:
    pass


__all__ = ["CACHE_BYTES", "SORT_MEMORY", "spooled", "write_sorted"]
