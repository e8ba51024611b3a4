"""One WARC record read whole from the gzip member an index names: for a reader that knows where a
record is and how long (replay, from an index line), without an iterator.

``read_whole(path, offset, length)`` reads the member in one piece (the gzip kernel inflates it
whole when the index's length is right), and ``parse_whole(data, offset)`` parses the record the
way ``ArchiveIterator`` parses the first record of a member: the WARC head and, for response,
request and revisit records of http(s) URIs, the HTTP head, each by the same rules and in the same
windows (``HEAD_FIRST`` bytes, then four times more); the payload is the bytes after the heads
up to Content-Length. Only a record in which the iterator would find nothing unusual is taken: a
member that holds exactly one WARC record, no blank lines before it, a head ended by a blank
line, a plain Content-Length that ends the record at the member's last four bytes (CR LF CR LF),
no segment. Anything else is None, and the caller reads the record with ``ArchiveIterator``,
which says what is wrong with it (tests/unit/test_whole.py holds both to the same answers).

This module reads one member of one file and parses bytes; it keeps nothing open.
"""

from __future__ import annotations

import io
from typing import BinaryIO, Optional, Union

from .._ext.gzip_members import FORMAT_GZIP, Reader
from .content import content_stream
from .framing import WARC_SEPARATOR
from .headers import Head, Headers, http_head, parse_head, warc_protocol
from .record import HeaderFields
from .records import OFFSET_MAX

__all__ = ["WholeRecord", "parse_whole", "read_whole"]

# the reader's windows (warchive.warc.reader): a head is parsed in HEAD_FIRST bytes, then in
# four times as many, up to HEAD_MAX
HEAD_FIRST = 1024
HEAD_MAX = 16 << 20
HTTP_RECORDS = ("response", "request", "revisit")
HTTP_SCHEMES = ("http:", "https:")
WINDOW = 64 * 1024        # the kernel reader's first buffer (the member is read in one piece anyway)


class WholeRecord(HeaderFields):
    """A record parsed from its whole member: what ``warchive.warc.records.Record`` offers a
    reader of one record (``format``, ``type``, ``headers``, ``http``, ``offset``,
    ``content_length``, ``payload`` (a stream, the same one each time), ``block()``, and
    HeaderFields' ``record_id``, ``date``, ``target_uri``...), held in memory."""

    __slots__ = ("format", "type", "headers", "http", "offset", "content_length", "_data", "_block",
                 "_payload_at", "_end", "_stream")

    def __init__(self, headers: Headers, http: Optional[Headers], offset: int, content_length: int,
                 data: bytes, block: int, payload_at: int, end: int) -> None:
        self.format = "warc"
        self.headers = headers
        self.type = headers.get("WARC-Type")
        self.http = http
        self.offset = offset
        self.content_length = content_length
        self._data = data
        self._block = block
        self._payload_at = payload_at
        self._end = end
        self._stream: Optional[io.BytesIO] = None

    @property
    def payload(self) -> io.BytesIO:
        """The bytes after the heads (the HTTP head, when there is one), as a stream."""
        if self._stream is None:
            self._stream = io.BytesIO(memoryview(self._data)[self._payload_at:self._end])
        return self._stream

    def payload_bytes(self) -> memoryview:
        """The payload, without a stream."""
        return memoryview(self._data)[self._payload_at:self._end]

    def content_stream(self, decode: bool = True) -> io.RawIOBase:
        """The payload de-chunked and, unless ``decode`` is false, decoded (Record.content_stream)."""
        return content_stream(self, decode)

    def block(self) -> io.BytesIO:
        """The whole record block (HTTP head included)."""
        if self._stream is not None:
            raise ValueError("the record's content is already being read")
        self._stream = io.BytesIO(memoryview(self._data)[self._block:self._end])
        return self._stream

    def __repr__(self) -> str:
        return f"<WholeRecord {self.type} {self.target_uri!r} at {self.offset}>"


def read_whole(source: Union[str, BinaryIO], offset: int, length: int) -> Optional[WholeRecord]:
    """The record of the gzip member of ``length`` bytes at ``offset`` of the file ``source`` (a
    path, or a file open for reading by position, left open), when it is one plain record (see
    the module); None otherwise (the file is no gzip file, the member is not ``length`` bytes
    long or not inflated whole, the record is unusual). A file that cannot be opened or read
    raises as ``Reader`` raises."""
    r = Reader(source, offset=offset, window=WINDOW, length=length)
    try:
        if r.format != FORMAT_GZIP or not r.member_begin(offset):
            return None
        r.member_head(1)   # the first read: the member is inflated whole when `length` is right
        if not r.member_done or r.member_end != offset + length:
            return None
        data = r.member_head(r.member_produced)
    finally:
        r.close()
    return parse_whole(data, offset)


def _head(data: bytes, pos: int, limit: int) -> Optional[Head]:
    """The head at data[pos:limit) as the reader finds it (its windows), or None when it is not
    ended by a blank line where the reader would see it end."""
    n = HEAD_FIRST
    while True:
        want = min(n, limit - pos)
        end = pos + want
        final = want < n
        head = parse_head(data, pos, end, final)
        if head is not None:
            if not data[pos:head.end].endswith((b"\n\n", b"\n\r\n")):
                return None
            return head
        if n >= HEAD_MAX:
            return None
        n *= 4


def parse_whole(data: bytes, offset: int) -> Optional[WholeRecord]:
    """The record that ``data`` (one gzip member's inflated bytes, from ``offset`` in its file)
    holds, when it is one plain WARC record; else None (see the module)."""
    if not data.startswith(b"WARC/"):
        return None
    head = _head(data, 0, len(data))
    if head is None:
        return None
    proto = warc_protocol(head.status)
    if proto is None:
        return None
    headers = Headers(proto[0], proto[1], head.fields, head.total_len)
    text = headers.get("Content-Length")
    if text is None or headers.get("WARC-Segment-Number") is not None:
        return None
    try:
        n = int(text)
    except ValueError:
        return None
    block = head.end
    end = block + min(n, OFFSET_MAX)
    if n < 0 or end + len(WARC_SEPARATOR) != len(data) or data[end:] != WARC_SEPARATOR:
        return None
    rec = WholeRecord(headers, None, offset, n, data, block, block, end)
    if rec.type in HTTP_RECORDS and n != 0:
        uri = rec.target_uri
        if uri is not None and uri.startswith(HTTP_SCHEMES):
            h = _head(data, block, end)
            if h is None or h.total_len == 0:
                return None
            rec.http = http_head(h)
            rec._payload_at = h.end
    return rec
