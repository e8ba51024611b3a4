"""Index segments: the immutable, mmap'd, compressed files a collection's index is made of.

``write_segment(lines, path)`` writes sorted index lines (CDXJ, CDX-11 or any
other bytes without LF) as a segment, through a temporary file renamed into
place once it is complete and on disk; ``Segment(path)`` opens one and
answers ``range(start, stop)`` (start <= line < stop, bytewise) and
``lookup(key)`` (every line of one SURT key). Every line comes back byte for
byte. The bytes are specified in docs/format.md ("Index segments"); the
work is done by the kernels ``warchive._ext.index_build`` and
``warchive._ext.index_lookup``. This module must not parse or encode lines
itself.
"""

from __future__ import annotations

import heapq
import os
import sys
from typing import Any, BinaryIO, Dict, Iterable, List, Optional, Sequence, Union

from .._ext.index_build import (
    DEFAULT_BLOCK_BYTES,
    DEFAULT_COMPRESSION,
    DEFAULT_RESTART_INTERVAL,
    HAVE_ZSTD,
    SegmentWriter,
)
from .._ext.index_lookup import DEFAULT_CACHE_BYTES, RangeIter, Segment
from ..boundedlines import read_lines
from ..durable import AtomicOutput

__all__ = [
    "DEFAULT_BLOCK_BYTES",
    "DEFAULT_CACHE_BYTES",
    "DEFAULT_COMPRESSION",
    "DEFAULT_RESTART_INTERVAL",
    "HAVE_ZSTD",
    "RangeIter",
    "Segment",
    "SegmentWriter",
    "build_segment",
    "write_segment",
]

PathArg = Union[str, os.PathLike[str]]
SUFFIX = ".seg"


def write_segment(
    lines: Iterable[bytes],
    path: PathArg,
    *,
    block_lines: int = 0,
    block_bytes: int = DEFAULT_BLOCK_BYTES,
    restart_interval: int = DEFAULT_RESTART_INTERVAL,
    compression: Optional[str] = None,
    level: Optional[int] = None,
    source: Optional[str] = None,
) -> Dict[str, int]:
    """Write ``lines`` (sorted bytewise; one trailing LF each is dropped) as the segment ``path``.

    A block closes after ``block_lines`` lines or once its lines reach ``block_bytes``
    bytes (0 turns either limit off); a restart point every ``restart_interval``
    lines; ``compression`` "zstd" (default when built with libzstd), "deflate" or
    "none", at ``level``. Unsorted input raises ``UnsortedInputError`` naming the
    first line out of order (``source`` names the input in the message), and
    nothing is left at ``path``. Returns counts: lines, blocks, bytes, structured
    and raw lines.
    """
    with AtomicOutput(os.fspath(path)) as out:
        writer = SegmentWriter(
            out.write,
            block_lines=block_lines,
            block_bytes=block_bytes,
            restart_interval=restart_interval,
            compression=compression,
            level=level,
            source=source,
        )
        writer.extend(lines)
        return writer.finish()


def build_segment(inputs: Sequence[PathArg], output: PathArg, **options: Any) -> Dict[str, int]:
    """Write the sorted CDX(J) files ``inputs`` ("-" for stdin) as one segment: one file
    is streamed, several are merged (each must be sorted). ``options`` are those of
    ``write_segment``. An input line longer than ``boundedlines.MAX_LINE`` is a
    ``LineTooLongError`` naming the file and line, met before the line is read whole.
    The function a `warchive build` command calls."""
    files: List[BinaryIO] = []
    try:
        for p in inputs:
            if os.fspath(p) == "-":
                files.append(sys.stdin.buffer)
            else:
                files.append(open(p, "rb", buffering=1 << 20))
        # lines without their LF: merged with it, "a\tb" would sort before "a"
        if len(files) == 1:
            lines: Iterable[bytes] = read_lines(files[0], os.fspath(inputs[0]))
            options.setdefault("source", os.fspath(inputs[0]))
        else:
            lines = heapq.merge(*[read_lines(f, os.fspath(p)) for f, p in zip(files, inputs)])
            options.setdefault("source", "merged input")
        return write_segment(lines, output, **options)
    finally:
        for f in files:
            if f is not sys.stdin.buffer:
                f.close()
