"""Whether a record starts at a byte of an archive file, told by reading from a record before it.

`warchive extract` reads only the record at the offset it is given, and the reader
takes any line where a record should begin for one: a ``WARC/1.0`` line, an ARC line,
or (as warcio does) a line of text read as an ARC record. Inside a record of a plain
file, a header line of five words (``format: WARC File Format 1.0``, a CSS rule),
the tail of an ARC line or the part of a line after its first byte reads as such a
record. ``where_records_start`` settles it the only way the bytes allow: it finds
the nearest earlier place where a record may begin (an *anchor*: a line that
begins a record, warchive.warc.framing's ``record_line``, a gzip member's or zstd
frame's magic bytes, or the start of the file) and reads records from there, as a
reader of the whole file would, until one starts at or after the offset. An anchor
that is none (magic bytes inside compressed data) fails to read; the one before it
is tried.

A gzip member or zstd frame at the offset starts a record: the caller does not ask.
A WARC or ARC file stored whole inside another record's payload (an archived
``.warc``) holds record heads at line starts that no reading can tell from the
file's own; reading from the anchor takes them for records, as reading the whole
file would not.

This module reads bytes and records; it prints nothing.
"""

from __future__ import annotations

import io
from typing import Callable, Iterator, NamedTuple, Optional, Union

from ..errors import ArchiveError, TruncatedError
from .framing import GZIP_MAGIC, record_line
from .reader import open as open_archive
from .source import RandomAccess
from .zst import ZSTD_MAGIC

FIRST_WINDOW = 1 << 16
TRIES = 8   # anchors tried before reading from the start of the file

# Bytes before the offset: up to ``n`` of them, ending at it (fewer at the start of the file).
Before = Callable[[int], bytes]


class Starts(NamedTuple):
    """What reading from an anchor found around ``offset``: whether a record starts there
    (``here``), the record before it that covers it (``inside``, its offset) and the first
    record after it (``next``, its offset); None where there is none or it is unknown."""
    here: bool
    inside: Optional[int]
    next: Optional[int]


def anchors(before: Before, offset: int, limit: Optional[int] = None) -> Iterator[int]:
    """Offsets before ``offset`` where a record may begin, the nearest first, ending with 0
    when the search reaches the start of the file; ``limit``: search no more than that many
    bytes before ``offset`` (None: the whole file before it)."""
    window = FIRST_WINDOW
    done = offset   # candidates at or past this one were given
    while True:
        if limit is not None:
            window = min(window, limit)
        data = before(window + 1)   # one byte more: is the first line at a line start?
        base = offset - len(data)
        found = [p for p in _candidates(data) if base + p < done]
        for p in sorted(found, reverse=True):
            done = base + p
            yield done
        if base <= 0:
            if done > 0:
                yield 0
            return
        if limit is not None and window >= limit:
            return
        window *= 4


def _candidates(data: bytes) -> Iterator[int]:
    """Positions in data (not 0: what precedes it is unknown) of line starts that begin a record
    and of gzip or zstd magic bytes."""
    end = len(data)
    while end > 0:
        p = data.rfind(b"\n", 0, end - 1) + 1
        if p == 0:
            break
        if record_line(data[p:end], digits_length=True) is not None:
            yield p
        end = p
    for magic in (GZIP_MAGIC, ZSTD_MAGIC):
        p = data.find(magic, 1)
        while p > 0:
            yield p
            p = data.find(magic, p + 1)


def where_records_start(source: Union[str, bytes, RandomAccess], offset: int, before: Before,
                        limit: Optional[int] = None, base: int = 0) -> Optional[Starts]:
    """Read the records of ``source`` (a path, a random-access file, or bytes: the window of a
    stream that holds the bytes ``before`` gives and some after the offset) from the nearest
    anchor before ``offset`` that reads up to the first record at or past ``offset``; None when
    no anchor does (the bytes are damaged). ``base``: the file offset of the window's first byte;
    running out of a window inside a record before ``offset`` means ``offset`` is inside it."""
    for i, start in enumerate(anchors(before, offset, limit)):
        if i >= TRIES and start != 0:
            continue
        starts = _read_from(source, offset, start, base)
        if starts is not None:
            return starts
    return None


def _read_from(source: Union[str, bytes, RandomAccess], offset: int, start: int, base: int) -> Optional[Starts]:
    last: Optional[int] = None
    src: Union[str, io.BytesIO, RandomAccess]
    if isinstance(source, bytes):   # (bytes as a source would be a file name) read from the anchor on
        src, base, at_start = io.BytesIO(source[start - base:]), start, 0
    else:
        src, at_start = source, start
    try:
        with open_archive(src, offset=at_start, on_defect=lambda d: None, parse_http=False) as records:
            for rec in records:
                at = rec.offset + base
                if at >= offset:
                    return Starts(at == offset, None if at == offset else last, None if at == offset else at)
                last = at
    except TruncatedError:
        if isinstance(source, bytes) and last is not None:
            return Starts(False, last, None)
        return None
    except ArchiveError:
        return None
    return Starts(False, last, None) if last is not None else None
