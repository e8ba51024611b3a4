"""A binary file object the caller owns, written to as the writer writes a ``WarcFile``.

``WarcWriter(f)`` (warchive.warc.writer) appends each encoded record to
``f`` with one ``write`` per piece, from the position ``f`` is at (its
``tell()``, or 0 for a pipe or socket), and reports offsets from there on,
as warcio's writer does. Nothing is renamed: the caller opened the object
and closes it; closing the writer flushes it, and fsyncs it when it has a
descriptor and the writer was asked to fsync. A write that fails raises
``WriteError``; what reached the object stays there (it cannot be cut off).
This module does not name files, roll them over or build records.
"""

from __future__ import annotations

import io
import os
from typing import Any, BinaryIO, List

from ..errors import WriteError


def name_of(f: Any) -> str:
    """The path of a file object ("" when it has none: a BytesIO, a socket)."""
    name = getattr(f, "name", None)
    return os.fsdecode(name) if isinstance(name, (str, bytes)) else ""


class StreamFile:
    """``f`` presented as the one output file of a writer: ``name``, ``path``, ``size``,
    ``records``, ``write(pieces) -> offset``, ``close()`` (which leaves ``f`` open)."""

    writeback = False

    def __init__(self, f: BinaryIO, preamble: bytes = b"") -> None:
        if isinstance(f, io.TextIOBase):
            raise WriteError(name_of(f) or None, None, "the file object is a text file",
                             "open it in binary mode ('wb')")
        self.f = f
        self.path = name_of(f)
        self.name = os.path.basename(self.path)
        self.open_path = self.path
        try:
            self.start = f.tell()
        except (AttributeError, OSError, ValueError):
            self.start = 0
        self.size = 0           # bytes written by the writer
        self.records = 0
        self.broken = False
        if preamble:
            self._write([preamble])

    def _write(self, pieces: List[Any]) -> None:
        off = self.start + self.size
        for p in pieces:
            try:
                n = self.f.write(p)
            except (OSError, ValueError) as e:
                self.broken = True
                raise WriteError(self.path or None, off, f"write failed: {e}",
                                 "what was written before the failure stays in the file") from e
            n = len(p) if n is None else n
            if n != len(p):    # a raw (unbuffered) object that took part of it
                rest = memoryview(p).cast("B")[n:]
                while len(rest):
                    k = self.f.write(rest) or 0
                    if k <= 0:
                        raise WriteError(self.path or None, off, "the file object stopped taking bytes")
                    rest = rest[k:]
            self.size += len(p)
            off += len(p)

    def write(self, pieces: List[Any]) -> int:
        """Append one encoded record; its offset (from where the object was when the writer began)."""
        off = self.start + self.size
        self._write(pieces)
        self.records += 1
        return off

    def close(self, fsync: bool = True) -> str:
        """Flush (and fsync, if it has a descriptor) the object, which stays open; its path."""
        flush = getattr(self.f, "flush", None)
        if flush is not None and not getattr(self.f, "closed", False):
            flush()
            if fsync:
                try:
                    os.fsync(self.f.fileno())
                except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
                    pass
        return self.path
