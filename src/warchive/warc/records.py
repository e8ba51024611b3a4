"""A record as the reader yields it: its heads, its place in the file, and its bytes as a lazy
stream that only the iterator's current record may read.

``Record`` (ARC records are presented as WARC ones, as warcio does) reads its bytes through
a ``Unit``: one gzip member or zstd frame (positions in its inflated data), or a plain
file from the record on. Where a record ends is the iterator's business
(warchive.warc.reader); this module only asks it (``RecordOwner``).
"""

from __future__ import annotations

import io
from typing import Any, Callable, List, Optional, Protocol, Tuple

from ..errors import ArchiveError
from .content import content_stream
from .headers import Headers
from .record import HeaderFields
from .source import ByteReader

OFFSET_MAX = 1 << 62
"""Past the end of any file: a record's content end is capped here (``Record._content_end``), so
that an absurd Content-Length (34 digits, say) is read as any Content-Length past the end of the
file is (a truncated record), not as an offset the kernels cannot take (a C int64)."""


class Unit:
    """Bytes of one gzip member (or zstd frame), or of a plain file from ``base`` on: positions start at 0.

    A record whose content runs on into the next gzip member(s) makes its unit span them:
    when a read comes short of ``limit`` at a member's end, ``extend`` (the iterator's) may
    begin the next member, whose data then continues at position ``seg``. Of the members left,
    the last ``HISTORY`` bytes are kept (``hist``), so that a head read again from its start
    still finds them; reads further back fail."""

    __slots__ = ("reader", "gz", "base", "seg", "hist", "limit", "extend")

    HISTORY = 1 << 16

    def __init__(self, reader: ByteReader, gz: bool, base: int) -> None:
        self.reader = reader
        self.gz = gz
        self.base = base          # file offset of position 0
        self.seg = 0              # position where the current member's data begins
        self.hist = b""           # the data just before seg
        self.limit: Optional[int] = None   # reads up to here may extend the unit
        self.extend: Optional[Callable[["Unit", int], bool]] = None

    def read(self, pos: int, n: int) -> bytes:
        if not self.gz:
            return self.reader.read_at(self.base + pos, n)
        if pos < self.seg:
            h0 = self.seg - len(self.hist)
            if pos < h0:
                raise ValueError("a record spanning gzip members was read again from too far back")
            data = self.hist[pos - h0 : pos - h0 + n]
            return data + self.read(self.seg, n - len(data)) if len(data) < n else data
        data = self.reader.member_read(pos - self.seg, n)
        while len(data) < n and self.limit is not None and pos + len(data) < self.limit and self.extend is not None:
            end = self.seg + self.reader.member_produced   # a short read: the member is at its end
            if pos + len(data) < end:
                break
            tail = self._tail(pos, data, end)   # before extend leaves the member
            if not self.extend(self, end):
                break
            self.hist = tail
            self.seg = end
            data += self.reader.member_read(pos + len(data) - end, n - len(data))
        return data

    def _tail(self, pos: int, data: bytes, end: int) -> bytes:
        """The last HISTORY bytes of the unit before end, the end of the current member (data,
        read at pos, ends there if it is not empty), as far back as they can still be had: a
        member that is not streaming yet keeps all of its data."""
        h0 = self.seg - len(self.hist)
        start = max(end - self.HISTORY, h0)
        if data and start >= pos:
            return data[start - pos:]
        upto = pos if data else end   # [start, upto) is read again: from hist, then from the member
        before = self.hist[start - h0 : upto - h0] if start < self.seg else b""
        if upto > self.seg:
            try:
                at = max(start, self.seg)
                before += self.reader.member_read(at - self.seg, upto - at)
            except (ArchiveError, ValueError):   # a streaming member cannot go back
                return data[-self.HISTORY:]
        whole = before + data
        return whole[-self.HISTORY:] if len(whole) == end - start else data[-self.HISTORY:]


class RecordOwner(Protocol):
    """What a record asks of the iterator it came from."""

    path: Optional[str]
    _gen: int

    def _finish(self, rec: "Record") -> None: ...

    def _short_content(self, rec: "Record", got: int) -> None: ...


class Record(HeaderFields):
    """One WARC or ARC record (ARC records are presented as WARC ones, as warcio does).

    ``type``, ``headers`` (WARC head), ``http`` (HTTP head or None), ``offset``,
    ``length`` (reading it finishes the record), ``content_length`` (block
    bytes), ``payload`` (lazy stream of the block after the HTTP head); the
    header fields ``record_id``, ``date``, ``target_uri``, ``payload_digest``,
    ``block_digest`` (warchive.warc.record.HeaderFields).
    """

    __slots__ = ("format", "type", "headers", "http", "offset", "content_length", "member_pos",
                 "_it", "_unit", "_block", "_payload", "_content_end", "_length", "_stream", "_gen",
                 "_finished", "_note", "_skip", "_text", "_cut")

    format: str
    type: Optional[str]
    headers: Headers
    http: Optional[Headers]
    offset: int
    content_length: Optional[int]
    member_pos: int
    _it: Optional[RecordOwner]
    _unit: Unit
    _block: int
    _payload: int
    _content_end: Optional[int]
    _gen: int
    _note: Optional[Tuple[str, str, str]]   # a defect of the head, reported when the record's end is known
    _skip: bool   # bytes read as a record that is none, never yielded (a text record warcio reads none of)
    _text: bool   # a text record: an ARC record warcio makes of a line of text (warchive.warc.framing.text_head)
    _cut: bool    # the file ends inside its content (reported): it ends there, and nothing follows it

    def __init__(self) -> None:
        self._length: Optional[int] = None
        self._stream: Optional[PayloadStream] = None
        self._finished = False
        self._note = None
        self._skip = False
        self._text = False
        self._cut = False

    @property
    def source(self) -> Optional[str]:
        """The file being read, while the iterator is on this record (for error messages)."""
        return self._it.path if self._it is not None else None

    @property
    def length(self) -> Optional[int]:
        """Bytes from ``offset`` to the end of the record (None inside a multi-record gzip member)."""
        if not self._finished and self._it is not None:
            self._it._finish(self)
        return self._length

    @property
    def seekable(self) -> bool:
        """True when (offset, length) locate this record alone (not inside a shared gzip member)."""
        return self.member_pos == 0

    @property
    def payload(self) -> "PayloadStream":
        """The block after the HTTP head (the whole block for non-HTTP records), not de-chunked.

        A stream can be read once, and only while the iterator is on this record."""
        if self._stream is None:
            self._stream = PayloadStream(self, self._payload)
        return self._stream

    def content_stream(self, decode: bool = True) -> io.RawIOBase:
        """The payload as a browser saw it: de-chunked and, unless ``decode`` is false, decoded
        (gzip, deflate, br), as warcio's ``content_stream()``; read it instead of ``payload``
        (warchive.warc.content.content_stream)."""
        return content_stream(self, decode)

    def block(self) -> "PayloadStream":
        """The whole record block (HTTP head included), once, while on this record."""
        if self._stream is not None:
            raise ValueError("the record's content is already being read")
        self._stream = PayloadStream(self, self._block)
        return self._stream

    def __repr__(self) -> str:
        return f"<Record {self.type} {self.target_uri!r} at {self.offset}>"


class PayloadStream(io.RawIOBase):
    """Forward-only reader of a record's bytes [start, content_end) in its unit."""

    def __init__(self, rec: Record, start: int) -> None:
        super().__init__()
        self._rec = rec
        self._gen = rec._gen
        self._pos = start

    def readable(self) -> bool:
        return True

    def _remaining(self) -> int:
        end = self._rec._content_end
        return (end - self._pos) if end is not None else OFFSET_MAX

    def read(self, n: Optional[int] = -1) -> bytes:
        rec = self._rec
        if rec._it is None or rec._it._gen != self._gen:
            raise ValueError("the iterator has moved past this record; read its payload before going on")
        left = self._remaining()
        if n is None or n < 0:
            chunks: List[bytes] = []
            while True:
                b = self.read(1 << 20)
                if not b:
                    return b"".join(chunks)
                chunks.append(b)
        n = min(n, left)
        if n <= 0:
            return b""
        if rec._finished and rec._unit.gz and not rec._unit.reader.seekable:
            raise ValueError("a stream cannot go back: read a record's payload before its length")
        data = rec._unit.read(self._pos, n)
        self._pos += len(data)
        if len(data) < n and rec._content_end is not None:
            rec._it._short_content(rec, self._pos)   # raises, or (lenient, a gzip member) reports it
        return data

    def readinto(self, b: Any) -> int:
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)
