"""Where records begin: the tests the lenient reader applies to a line, and the search for the
next record after bytes that are none.

A WARC record begins with a version line (``WARC/1.0``, ``WARC/1.1``, ``WARC/0.17``,
``WARC/0.18``, any case, as warcio accepts them); an ARC record with ``URL IP DATE MIME
LENGTH``. To say that a line begins a record we ask of an ARC line a URL with a scheme and a
date of digits (``arc_line``, ``record_line``), and, when we look for one inside bytes that
are no record (``find_record``), a length of digits too. warcio asks less: where it parses
the next record (after a record and the blank lines that follow it) it takes any line of five
space-separated fields for an ARC head (``text_head``); the reader does the same there, and
only there (a *text record*, warchive.warc.defects.TEXT_RECORD), so that a search for the
next record after bytes warcio gives up on still finds a real one.

This module reads bytes only through the function it is given; it never opens files.
"""

from __future__ import annotations

import re
from typing import Callable, Optional

from .arc import FILEDESC
from .headers import decode_line, warc_protocol

WARC_SEPARATOR = b"\r\n\r\n"   # what follows a WARC record
ARC_SEPARATOR = b"\n"          # what follows an ARC record
GZIP_MAGIC = b"\x1f\x8b\x08"
LOOKBACK = 64 << 10            # how far before a wrong Content-Length's end the next record is looked for
SCAN = 1 << 16                 # bytes read at a time while looking
LINE_MAX = 64 << 10            # a first line longer than this begins no record

ReadAt = Callable[[int, int], bytes]

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_SCHEME_PART = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*")   # a scheme cut before its colon
# a line start where a record could begin: a WARC version line or a URL's scheme
_CANDIDATE = re.compile(rb"\n(?=[Ww][Aa][Rr][Cc]/|[A-Za-z][A-Za-z0-9+.\-]*:)")
_WS = b" \t\r\n\x0b\x0c"


def arc_line(text: str, digits_length: bool = False) -> bool:
    """Is this (decoded, stripped) line the first line of an ARC record: five fields, a URL
    with a scheme, a date of at least 8 digits (and, with digits_length, a length of digits)?
    A ``filedesc://`` line of five fields is one whatever its fields hold (an ARC file's
    version block; fields that are not what they should be are the reader's defect)."""
    parts = text.rsplit(" ", 4)
    if len(parts) != 5 or not _SCHEME.match(parts[0]):
        return False
    if parts[0].startswith(FILEDESC):
        return True
    date, length = parts[2], parts[4]
    if not (date.isascii() and date.isdigit() and len(date) >= 8):
        return False
    return not digits_length or (length.isascii() and length.isdigit())


def record_line(raw: bytes, digits_length: bool = False) -> Optional[str]:
    """"warc" or "arc" when the raw line begins a record, else None."""
    text = decode_line(raw).strip()
    if warc_protocol(text) is not None:
        return "warc"
    if arc_line(text, digits_length):
        return "arc"
    return None


def text_head(raw: bytes) -> bool:
    """Does warcio take this line (that ``record_line`` does not take) for the first line of an
    ARC record where it parses the next record: does it split from the right into five
    space-separated fields once decoded and right-stripped, whatever they hold? A line longer
    than LINE_MAX (not all of it in ``raw``) does not."""
    if not raw.endswith(b"\n") and len(raw) >= LINE_MAX:
        return False
    return len(decode_line(raw).rstrip().rsplit(" ", 4)) == 5


def next_record_line(raw: bytes) -> Optional[str]:
    """What begins at a line where warcio parses the next record: "warc", "arc", "text" (an ARC
    head to warcio alone: ``text_head``) or None."""
    kind = record_line(raw)
    if kind is None and text_head(raw):
        return "text"
    return kind


def cut_first_line(raw: bytes) -> bool:
    """Is raw (the last bytes of a file, without LF) the beginning of a record's first line cut
    short: of a WARC version line, or of an ARC line (a URL with a scheme)?"""
    if raw.endswith(b"\n") or not raw.strip():
        return False
    text = decode_line(raw).lstrip()
    return (b"WARC/".startswith(raw[:5].upper()) or raw[:5].upper() == b"WARC/" or bool(_SCHEME.match(text))
            or _SCHEME_PART.fullmatch(text) is not None)


def first_line(read_at: ReadAt, pos: int) -> bytes:
    """The line at pos, LF included (b'' at the end; at most LINE_MAX bytes)."""
    for n in (256, 4096, LINE_MAX):
        buf = read_at(pos, n)
        nl = buf.find(b"\n")
        if nl >= 0 or len(buf) < n:
            return buf[: nl + 1] if nl >= 0 else buf
    return buf


def is_blank(raw: bytes) -> bool:
    return not decode_line(raw).strip()


def skip_blank(read_at: ReadAt, pos: int) -> Optional[int]:
    """The position of the first line at or after pos that is not blank (blank: nothing but
    whitespace once decoded); None when nothing but blank lines follow."""
    first = read_at(pos, 64)
    if not first:
        return None
    if first[0] not in _WS:   # the usual case: a record starts right here
        return pos
    while True:
        chunk = read_at(pos, 4096)
        if not chunk:
            return None
        i, n = 0, len(chunk)
        while i < n:
            nl = chunk.find(b"\n", i)
            if nl < 0 and n == 4096:
                break   # the line goes on past the chunk: read again from its start
            line = chunk[i : nl + 1] if nl >= 0 else chunk[i:]
            if not is_blank(line):
                return pos + i
            i += len(line)
        if i == 0:   # one line longer than the chunk
            line = first_line(read_at, pos)
            if not is_blank(line):
                return pos
            i = len(line)
        pos += i
        if n < 4096:
            return None


def find_record(read_at: ReadAt, start: int, stop: Optional[int] = None) -> Optional[int]:
    """The first line start at or after start (before stop) that begins a record (a WARC
    version line, or an ARC first line with numbers for date and length); None if none."""
    pos = start
    if record_line(first_line(read_at, pos), True):
        return pos
    while stop is None or pos < stop:
        chunk = read_at(pos, SCAN + 16)   # 16 more: a match near the end sees what follows its LF
        if len(chunk) <= 1:
            return None
        for m in _CANDIDATE.finditer(chunk):
            if m.start() >= SCAN:
                break
            cand = pos + m.start() + 1
            if stop is not None and cand >= stop:
                return None
            if record_line(first_line(read_at, cand), True):
                return cand
        if len(chunk) <= SCAN:
            return None
        pos += SCAN
    return None
