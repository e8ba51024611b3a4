"""The lines of a WACZ's indexes read as streams, within limits across all of its index entries.

A WACZ's indexes are entries under ``indexes/``: plain ``*.cdx``/``*.cdxj`` (stored or
deflated), and ``*.cdx.gz`` files of gzip members, found through an ``*.idx`` summary
(warchive.wacz.indexes) or alone. Everything here takes an entry's content a piece of at most
``PIECE`` bytes at a time (``ZipDirectory.chunks``; each gzip member inflated as far as one
piece), so no entry, and no gzip member, is ever held whole; and ``IndexBudget`` counts every
piece of every index entry of one WACZ as it is read, so that all of them together inflate to at
most ``MAX_INDEX_BYTES`` bytes and ``MAX_INDEX_LINES`` lines, no line is longer than
``MAX_LINE`` (warchive.boundedlines', the longest line any index file may hold), and there are
at most ``MAX_INDEX_ENTRIES`` of them. Past any of these, ``IndexTooLarge`` names the file and
the entry.

The limits are for WACZ files as their writers make them. ArchiveWeb.page writes one CDXJ line
per resource (key, timestamp, and a JSON block with the url, two SHA-256 digests, mime, status,
offset, length and filename: 300 to 500 bytes for URLs of common length), as a plain
``index.cdx`` under 2,048 lines and above that as ``index.cdx.gz`` of 1,024-line gzip members
with its ``index.idx``; py-wacz writes the same compressed form. A WACZ of a million resources
has a 300-500 MB index: 4 GiB holds about ten million such lines, and 16 Mi lines leave room
for shorter ones (256 bytes each at 4 GiB). A zip bomb (any number of entries, or of gzip
members, each under the 256 MiB an entry may declare) is refused after 4 GiB of inflating, a
few seconds, or at once from the sizes its entries declare; a bomb of short lines after 16 Mi
of them.

This module reads lines: what they mean (keys, records) is its callers'. It must not hold more
of an entry than a piece and one line.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, List, Optional

from isal import isal_zlib

from ..boundedlines import MAX_LINE
from ..errors import IndexFormatError, IndexTooLarge
from .zipread import PIECE, RAW_PIECE, InflateError, ZipDirectory

INDEXES = "indexes/"
MAX_INDEX_BYTES = 4 << 30      # the inflated bytes of all the index entries of one WACZ
MAX_INDEX_LINES = 16 << 20     # their lines
MAX_INDEX_ENTRIES = 64         # entries under indexes/ (each index is a source of its own: writers make one or two)
FORMAT = "cdxj-gzip-1.0"       # the format an index.idx names in its !meta line

# A line held whole inside one piece is no longer than the piece: only lines across pieces are measured.
assert PIECE <= MAX_LINE


@dataclass(frozen=True)
class IndexPart:
    """One index of a WACZ: ``name`` is the entry it is known by (the summary of a compressed
    index), ``data`` the entry holding its lines, in gzip members when ``gzip``."""

    name: str
    data: str
    gzip: bool

    @property
    def summarized(self) -> bool:
        """A compressed index, whose summary says where its blocks are."""
        return self.name != self.data


class IndexBudget:
    """What the index entries of the WACZ at ``path`` have inflated to so far, across all of
    them: ``watch`` passes one entry's pieces on once they are counted."""

    def __init__(self, path: str, max_bytes: int = MAX_INDEX_BYTES, max_lines: int = MAX_INDEX_LINES,
                 max_line: int = MAX_LINE) -> None:
        self.path = path
        self.max_bytes, self.max_lines, self.max_line = max_bytes, max_lines, max_line
        self.bytes = 0
        self.lines = 0

    def watch(self, name: str, pieces: Iterable[bytes]) -> Iterator[bytes]:
        """The pieces of entry ``name`` (each at most ``PIECE`` bytes), each counted before it is
        given; IndexTooLarge as soon as a limit is passed."""
        run = 0   # bytes of the line being read, after the last LF
        for piece in pieces:
            self.bytes += len(piece)
            if self.bytes > self.max_bytes:
                raise self._refused(name, f"the index entries inflate to more than {self.max_bytes} bytes "
                                    "together")
            first = piece.find(b"\n")
            if first < 0:
                run += len(piece)
            else:
                if run + first > self.max_line:
                    raise self._long(name)
                self.lines += piece.count(b"\n")
                run = len(piece) - piece.rfind(b"\n") - 1
            if run > self.max_line:
                raise self._long(name)
            if self.lines > self.max_lines:
                raise self._refused(name, f"the index entries hold more than {self.max_lines} lines together")
            yield piece
        if run:
            self.lines += 1
            if self.lines > self.max_lines:
                raise self._refused(name, f"the index entries hold more than {self.max_lines} lines together")

    def declared(self, zd: ZipDirectory) -> None:
        """Refuse at once index entries whose declared sizes pass the limit together: an entry
        must hold what it declares, so they would. (What gzip members inflate to is known only
        once they are inflated.)"""
        names = sorted(n for n in zd.entries if n.startswith(INDEXES))
        if len(names) > MAX_INDEX_ENTRIES:
            raise self._refused(names[MAX_INDEX_ENTRIES], f"more than {MAX_INDEX_ENTRIES} entries under {INDEXES}")
        total = 0
        for name in names:
            if name.endswith(".gz"):
                continue
            total += zd.entries[name].size
            if total > self.max_bytes:
                raise self._refused(name, f"the index entries declare more than {self.max_bytes} bytes together")

    def _long(self, name: str) -> IndexTooLarge:
        return self._refused(name, f"a line is longer than {self.max_line} bytes")

    def _refused(self, name: str, problem: str) -> IndexTooLarge:
        return IndexTooLarge(self.path, None, f"entry {name!r}: {problem}",
                             f"at most {self.max_bytes} bytes and {self.max_lines} lines of index are read of "
                             "one WACZ: a zip bomb, or split the collection into several WACZ files")


def gunzip(path: str, name: str, raw: Iterable[bytes], piece: int = PIECE) -> Iterator[bytes]:
    """The inflated content of the gzip members back to back in ``raw`` (the pieces of entry
    ``name``), at most ``piece`` bytes at a time; IndexFormatError if it is not gzip or ends
    inside a member."""
    member: Optional[Any] = None   # ISA-L's inflate: 7 times zlib's on a bomb of lines
    for whole in raw:
        for at in range(0, len(whole), RAW_PIECE):   # (an input cut short copies less tail per piece given)
            chunk: bytes = whole[at:at + RAW_PIECE]
            while chunk:
                if member is None:
                    member = isal_zlib.decompressobj(31)
                try:
                    out = member.decompress(chunk, piece)
                except InflateError as e:
                    raise IndexFormatError(path, None, f"entry {name!r} is not gzip: {e}") from None
                if out:
                    yield out
                if member.eof:   # (what follows it is in unused_data, and in unconsumed_tail as well)
                    chunk, member = member.unused_data, None
                else:
                    chunk = member.unconsumed_tail
    if member is not None and not member.eof:
        raise IndexFormatError(path, None, f"entry {name!r} ends inside a gzip member")


def index_parts(zd: ZipDirectory, budget: IndexBudget) -> List[IndexPart]:
    """The indexes of the WACZ read by ``zd``: compressed ones by their summary, plain
    ``.cdx``/``.cdxj`` entries, and ``.cdx.gz`` entries no summary names (after
    ``budget.declared``)."""
    budget.declared(zd)
    names = sorted(n for n in zd.entries if n.startswith(INDEXES))
    parts = [IndexPart(n, summary_data(zd, n, budget), True) for n in names if n.endswith(".idx")]
    named = {p.data for p in parts}
    for n in names:
        if n.endswith((".cdx", ".cdxj")):
            parts.append(IndexPart(n, n, False))
        elif n.endswith(".cdx.gz") and n not in named:
            parts.append(IndexPart(n, n, True))
    return parts


def summary_data(zd: ZipDirectory, idx: str, budget: IndexBudget) -> str:
    """The entry the summary ``idx`` names in its ``!meta`` line (which must be stored: its
    blocks are read by range)."""
    for n, line in enumerate(entry_lines(zd, IndexPart(idx, idx, False), budget), 1):
        if line.startswith(b"!meta"):
            meta = summary_json(line.split(b" ", 2)[-1], zd.path, idx, n)
            if meta.get("format") != FORMAT:
                raise IndexFormatError(zd.path, None, f"{idx}: format {meta.get('format')!r}, not {FORMAT!r}")
            data = os.path.join(os.path.dirname(idx), str(meta.get("filename", "")))
            zd.stored(data)
            return data
    raise IndexFormatError(zd.path, None, f"{idx}: no '!meta' line naming the blocks file")


def entry_lines(zd: ZipDirectory, part: IndexPart, budget: IndexBudget) -> Iterator[bytes]:
    """The lines of index ``part`` without their LF, counted by ``budget``; empty lines and
    CDX header lines (`` CDX ...``) are left out."""
    pieces: Iterable[bytes] = zd.chunks(part.data)
    if part.gzip:
        pieces = gunzip(zd.path, part.data, pieces)
    carry = b""
    for piece in budget.watch(part.data, pieces):
        lines = piece.split(b"\n")
        if carry:
            lines[0] = carry + lines[0]
        carry = lines.pop()
        for line in lines:
            if line and not line.startswith(b" CDX"):
                yield line
    if carry and not carry.startswith(b" CDX"):
        yield carry


def summary_json(raw: bytes, path: str, name: str, n: int) -> dict:
    """The JSON object of line ``n`` of summary ``name``."""
    try:
        v = json.loads(raw)
    except ValueError:
        raise IndexFormatError(path, None, f"{name} line {n}: not JSON") from None
    if not isinstance(v, dict):
        raise IndexFormatError(path, None, f"{name} line {n}: not a JSON object")
    return v


__all__ = ["FORMAT", "INDEXES", "IndexBudget", "IndexPart", "IndexTooLarge", "MAX_INDEX_BYTES", "MAX_INDEX_ENTRIES",
           "MAX_INDEX_LINES", "entry_lines", "gunzip", "index_parts", "summary_data", "summary_json"]
