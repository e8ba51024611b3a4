"""Journal bytes split into entries: each entry's line, decoded head (kind and URLs) and byte offset.

Rules a reader keeps (docs/format.md, "Session journals"): the first line is the
version line; an entry is complete only with its line feed (a torn last line is
ignored); a blank line is no entry; a line that is not a JSON object anywhere but
at the end is damage: ``SessionFormatError`` (file, byte offset), or a
``SessionWarning`` and the line skipped with ``skip_errors=True``. A line that is
not UTF-8 is no JSON object either (RFC 8259): it is damage too, found here, though
msgspec's decoder of heads skips the fields it does not read without looking at
their bytes. This module must not group entries into records: ``record`` and
``reader`` do.
"""

from __future__ import annotations

import codecs
import gc
from array import array
from contextlib import contextmanager
from itertools import accumulate
from typing import Any, Dict, Iterator, List, Optional

import msgspec

from .schema import Head, check_version_line, damaged, decode_head, decode_head_strict


@contextmanager
def gc_paused() -> Iterator[None]:
    """No garbage collections while millions of new objects come (there are no cycles among them)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class Parsed:
    """Journal bytes split into entries: the version line, each entry's line (without its line
    feed), decoded head and byte offset, and how many bytes of torn tail were ignored."""

    __slots__ = ("info", "lines", "heads", "_positions", "_pos0", "torn", "end")

    def __init__(self, info: Optional[Dict[str, Any]], lines: List[bytes], heads: List[Head],
                 positions: "Optional[array[int]]", torn: int, end: int, pos0: int = 0) -> None:
        self.info = info
        self.lines = lines
        self.heads = heads
        self._positions = positions
        self._pos0 = pos0
        self.torn = torn
        self.end = end  # the offset after the last complete line

    @property
    def positions(self) -> "array[int]":
        """The byte offset of each entry (computed when first asked for: every line was kept)."""
        if self._positions is None:
            p = array("q", accumulate(map((1).__add__, map(len, self.lines)), initial=self._pos0))
            p.pop()
            self._positions = p
        return self._positions


def parse_journal(path: str, data: bytes, start: int = 0, *, skip_errors: bool = False,
                  version: bool = True) -> Parsed:
    """Split journal bytes into entries, from byte `start` (where a line begins; offsets are
    counted from the start of `data`). With `version`, the first line is the version line."""
    lines = data[start:].split(b"\n") if start else data.split(b"\n")
    torn = len(lines.pop())  # the bytes after the last line feed: a torn write, or nothing
    end = len(data) - torn
    info: Optional[Dict[str, Any]] = None
    pos0 = start
    if version:
        if not lines:
            return Parsed(None, [], [], array("q"), torn, end)
        info = check_version_line(path, lines[0])
        pos0 = start + len(lines[0]) + 1
        del lines[0]
    if not _utf8(data, pos0, end):
        return _parse_slow(path, info, lines, pos0, torn, end, skip_errors)
    with gc_paused():
        try:
            heads = list(map(decode_head_strict, lines))
        except (msgspec.DecodeError, msgspec.ValidationError):
            return _parse_slow(path, info, lines, pos0, torn, end, skip_errors)
    return Parsed(info, lines, heads, None, torn, end, pos0)


UTF8_CHUNK = 1 << 20


def _utf8(data: bytes, start: int, end: int) -> bool:
    """Are data[start:end] UTF-8? Checked a MiB at a time (no copy of the whole journal)."""
    dec = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(data)
    try:
        for p in range(start, end, UTF8_CHUNK):
            dec.decode(view[p:min(p + UTF8_CHUNK, end)])
        dec.decode(b"", True)
    except UnicodeDecodeError:
        return False
    return True


def _parse_slow(path: str, info: Optional[Dict[str, Any]], body: List[bytes], pos: int, torn: int, end: int,
                skip_errors: bool) -> Parsed:
    """Line by line: blank lines are no entries, damaged ones raise (or are skipped)."""
    lines: List[bytes] = []
    heads: List[Head] = []
    positions = array("q")
    for line in body:
        try:
            line.decode("utf-8")
            h = decode_head(line)
        except (UnicodeDecodeError, msgspec.DecodeError, msgspec.ValidationError) as x:
            if line.strip():  # a blank line is no entry (and no damage)
                damaged(path, pos, line, str(x), skip_errors)
            pos += len(line) + 1
            continue
        lines.append(line)
        heads.append(h)
        positions.append(pos)
        pos += len(line) + 1
    return Parsed(info, lines, heads, positions, torn, end)
