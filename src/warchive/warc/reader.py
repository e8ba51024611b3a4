"""Iterate the records of WARC and ARC files: plain, gzip (member per record, or
one member for the whole file) and Zstandard (.warc.zst).

Offsets and lengths are warcio's: for gzip the start of the member and its
compressed size; for plain files the record's first byte and its length
without the blank lines that follow. Heads are parsed as warcio parses them
(warchive.warc.headers). A record's payload is a lazy stream: records that a
type filter drops, and payloads nobody reads, are never inflated when the
gzip members carry Wget's `sl` lengths (unless ``verify=True``).

Bad input raises a CorruptRecordError child naming the file and byte offset;
everything before it has been yielded intact. This module does not build index
lines (warchive.index.cdx does).
"""

from __future__ import annotations

import io
import os
from typing import Any, BinaryIO, Iterable, Iterator, List, Optional, Union

from .._ext.gzip_members import FORMAT_GZIP, FORMAT_ZSTD, Reader
from ..errors import RecordFormatError, TruncatedError
from ..timestamps import timestamp_to_iso_date
from .headers import Head, Headers, decode_line, http_head, parse_head, warc_protocol
from .record import HeaderFields, new_record_id
from .zst import ZstFrames

Source = Union[str, bytes, os.PathLike[str], BinaryIO]

HEAD_FIRST = 1024           # first guess of a head size (most WARC heads, most HTTP heads fit)
HEAD_MAX = 16 << 20         # a head longer than this is not a head
HTTP_RECORDS = ("response", "request", "revisit")
HTTP_SCHEMES = ("http:", "https:")
_WS = b" \t\r\n\x0b\x0c"


def _warn(message: str, *args: object) -> None:
    """A warning of the reader, to the logger "warchive.warc"."""
    import logging   # here, not at the top: 7.0 ms of `warchive index`'s start-up (measured), for a rare message

    logging.getLogger("warchive.warc").warning(message, *args)


class _Unit:
    """Bytes of one gzip member (or zstd frame), or of a plain file from a record on: positions start at 0."""

    __slots__ = ("reader", "gz", "base")

    def __init__(self, reader: Reader, gz: bool, base: int) -> None:
        self.reader = reader
        self.gz = gz
        self.base = base          # file offset of position 0

    def read(self, pos: int, n: int) -> bytes:
        if not self.gz:
            return self.reader.read_at(self.base + pos, n)
        return self.reader.member_read(pos, n)


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
                 "_finished")

    format: str
    type: Optional[str]
    headers: Headers
    http: Optional[Headers]
    offset: int
    content_length: Optional[int]
    member_pos: int
    _it: Optional["ArchiveIterator"]
    _unit: "_Unit"
    _block: int
    _payload: int
    _content_end: Optional[int]
    _gen: int

    def __init__(self) -> None:
        self._length: Optional[int] = None
        self._stream: Optional[_PayloadStream] = None
        self._finished = False

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
    def payload(self) -> "_PayloadStream":
        """The block after the HTTP head (the whole block for non-HTTP records), not de-chunked.

        A stream can be read once, and only while the iterator is on this record."""
        if self._stream is None:
            self._stream = _PayloadStream(self, self._payload)
        return self._stream

    def block(self) -> "_PayloadStream":
        """The whole record block (HTTP head included), once, while on this record."""
        if self._stream is not None:
            raise ValueError("the record's content is already being read")
        self._stream = _PayloadStream(self, self._block)
        return self._stream

    def __repr__(self) -> str:
        return f"<Record {self.type} {self.target_uri!r} at {self.offset}>"


class _PayloadStream(io.RawIOBase):
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
        return (end - self._pos) if end is not None else 1 << 62

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
        data = rec._unit.read(self._pos, n)
        if len(data) < n and rec._content_end is not None:
            rec._it._short_content(rec, self._pos + len(data))
        self._pos += len(data)
        return data

    def readinto(self, b: Any) -> int:
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)


class ArchiveIterator:
    """Records of one archive file.

    ArchiveIterator(source, types=None, verify=False, parse_http=True, offset=None)
      source   a path or a binary file object (offsets count from its start)
      offset   start at this record (default: the start, or a file object's position)
      types    record types to yield (e.g. {"response"}); others are skipped
               before their payload is touched
      verify   inflate every gzip member and check CRC-32/ISIZE even when
               Wget's `sl` lengths would allow skipping
    """

    def __init__(self, source: Source, types: Optional[Iterable[str]] = None, verify: bool = False,
                 parse_http: bool = True, offset: Optional[int] = None) -> None:
        self._reader = Reader(source, offset=offset, verify=verify)
        if self._reader.format == FORMAT_ZSTD:
            self._reader.close()
            self._reader = ZstFrames(source, offset=offset)  # type: ignore[assignment,arg-type]
        self.path = self._reader.path
        self.types = frozenset(types) if types is not None else None
        self.verify = verify
        self.parse_http = parse_http
        self._gen = 0
        # gzip members and zstd frames: one record per unit, offsets of units
        self.gzip = self._reader.format in (FORMAT_GZIP, FORMAT_ZSTD)
        self._pos = self._reader.start
        self._unit: Optional[_Unit] = None
        self._unit_pos = 0            # where the next record starts inside the current gzip member
        self._iter = self._records()

    def __iter__(self) -> Iterator[Record]:
        return self._iter

    def __next__(self) -> Record:
        return next(self._iter)

    def seek(self, offset: int) -> None:
        """Continue with the record (or gzip member) that starts at offset."""
        self._gen += 1
        self._pos = offset
        self._unit = None
        self._unit_pos = 0
        self._iter = self._records()

    @property
    def position(self) -> int:
        """Offset of the next record or gzip member (after the current record is finished)."""
        return self._pos

    def close(self) -> None:
        self._reader.close()

    def __enter__(self) -> "ArchiveIterator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ iteration
    def _records(self) -> Iterator[Record]:
        rec: Optional[Record] = None
        try:
            while True:
                rec = self._next_record()
                if rec is None:
                    return
                if self.types is not None and rec.type not in self.types:
                    self._finish(rec)
                    continue
                yield rec
                self._finish(rec)
        finally:
            self._gen += 1
            if rec is not None:
                rec._it = None

    def _next_record(self) -> Optional[Record]:
        self._gen += 1
        reader = self._reader
        while True:
            if self.gzip:
                if self._unit is None:
                    if not reader.member_begin(self._pos):
                        return None
                    self._pos = reader.member_offset  # zstd: past skippable frames
                    self._unit = _Unit(reader, True, self._pos)
                    self._unit_pos = 0
                unit, pos = self._unit, self._unit_pos
            else:
                unit, pos = _Unit(reader, False, self._pos), 0
            start = self._skip_blank(unit, pos)
            if start is None:  # nothing but blank lines up to the end of the member / file
                if not self.gzip:
                    return None
                if self._unit_pos == 0:
                    _warn("%s: gzip member at byte %d holds no record; skipped", self.path, self._pos)
                self._pos = reader.member_finish()
                self._unit = None
                continue
            return self._parse_record(unit, start)

    def _skip_blank(self, unit: _Unit, pos: int) -> Optional[int]:
        """Position of the first non-blank line at or after pos, None at the end of the unit."""
        first = unit.read(pos, 64)
        if not first:
            return None
        if first[0] not in _WS:  # the usual case: a record starts right here
            return pos
        while True:
            chunk = unit.read(pos, 4096)
            if not chunk:
                return None
            i = 0
            n = len(chunk)
            while i < n:
                nl = chunk.find(b"\n", i)
                if nl < 0 and n == 4096:
                    break  # the line continues past this chunk: read again from its start
                line = chunk[i : nl + 1] if nl >= 0 else chunk[i:]
                if decode_line(line).strip():
                    return pos + i
                i += len(line)
            if i == 0:
                # one line longer than the chunk: blank only if it is all whitespace
                if chunk.strip(_WS):
                    return pos
                i = len(chunk)
            pos += i
            if n < 4096:
                return None

    def _read_head(self, unit: _Unit, pos: int, limit: Optional[int], what: str) -> Head:
        """Parse the head at unit position pos, within [pos, limit) when limit is given."""
        n = HEAD_FIRST
        while True:
            want = n if limit is None else min(n, limit - pos)
            buf = unit.read(pos, want) if want > 0 else b""
            final = len(buf) < n  # the unit or the limit ends within the buffer
            head = parse_head(buf, 0, len(buf), final)
            if head is not None:
                return head
            if n >= HEAD_MAX:
                raise RecordFormatError(self.path, unit.base + (pos if not unit.gz else 0),
                                        f"{what} longer than {HEAD_MAX >> 20} MiB without an end",
                                        "--skip-errors skips this record")
            n *= 4

    def _parse_record(self, unit: _Unit, pos: int) -> Record:
        rec_off = unit.base + (pos if not unit.gz else 0)
        head = self._read_head(unit, pos, None, "record head")
        rec = Record()
        rec._it = self
        rec._gen = self._gen
        rec._unit = unit
        rec.offset = rec_off
        rec.member_pos = pos if unit.gz else 0
        rec.http = None
        proto = warc_protocol(head.status)
        if proto is not None:
            rec.format = "warc"
            rec.headers = Headers(proto[0], proto[1], head.fields, head.total_len)
            rec.type = rec.headers.get("WARC-Type")
            length_text = rec.headers.get("Content-Length")
            block = head.end
        else:
            block = self._parse_arc(rec, unit, pos, head)
            length_text = rec.headers.get("Content-Length")
        block += pos
        sub = rec.headers.total_len if rec.format == "arc" else 0
        if length_text is None:
            if not unit.gz:
                raise RecordFormatError(self.path, rec_off, "record has no Content-Length",
                                        "the end of the record cannot be found in a plain file")
            rec.content_length = None
            rec._content_end = None
        else:
            try:
                length = int(length_text) - sub
            except ValueError:
                length = -1
            if length < 0:
                raise RecordFormatError(self.path, rec_off, f"invalid Content-Length {length_text!r}",
                                        "--skip-errors skips this record")
            rec.content_length = length
            rec._content_end = block + length
        rec._block = block
        rec._payload = block
        if self.types is not None and rec.type not in self.types:
            return rec  # dropped by the caller: its block is never looked at
        if self.parse_http and rec.type in HTTP_RECORDS:
            uri = rec.target_uri
            if uri is not None and uri.startswith(HTTP_SCHEMES) and rec.content_length != 0:
                h = self._read_head(unit, block, rec._content_end, "HTTP head")
                if h.total_len == 0:
                    if rec.type != "revisit":
                        raise TruncatedError(self.path, rec_off, f"{rec.type} record has no content",
                                             "--skip-errors skips this record")
                else:
                    rec.http = http_head(h)
                    rec._payload = block + h.end
        return rec

    def _parse_arc(self, rec: Record, unit: _Unit, pos: int, head: Head) -> int:
        """An ARC record: its first line is `url ip date mime length`; return where its block starts."""
        buf = unit.read(pos, 64 * 1024)
        nl = buf.find(b"\n")
        first = buf[: nl + 1] if nl >= 0 else buf
        line = decode_line(first).rstrip()
        end = len(first)
        total = 0
        if line.startswith("filedesc://"):
            for _ in range(2):  # version line and field-spec line belong to the head
                nxt = buf.find(b"\n", end)
                raw = buf[end : nxt + 1] if nxt >= 0 else buf[end:]
                total += len(decode_line(raw))
                end += len(raw)
        parts = line.rsplit(" ", 4)
        if len(parts) != 5:
            raise RecordFormatError(self.path, unit.base + (pos if not unit.gz else 0),
                                    f"not a WARC or ARC record; first line {line[:80]!r}",
                                    "is this an archive file? --skip-errors skips it")
        uri, ip, date, mime, length = parts
        fields = []
        if uri.startswith("filedesc://"):
            rec.type = "warcinfo"
            fields = [("WARC-Type", "warcinfo"), ("WARC-Record-ID", new_record_id()),
                      ("WARC-Filename", uri[len("filedesc://"):])]
        else:
            rec.type = "response"
            mime = "application/http;msgtype=response"
            fields = [("WARC-Type", "response"), ("WARC-Record-ID", new_record_id()),
                      ("WARC-Target-URI", uri)]
        fields += [("WARC-IP-Address", ip), ("WARC-Date", timestamp_to_iso_date(date)),
                   ("Content-Type", mime), ("Content-Length", length)]
        rec.format = "arc"
        rec.headers = Headers("WARC/1.0", "", fields, total)
        return end

    # ------------------------------------------------------------------ record end
    def _short_content(self, rec: Record, got: int) -> None:
        raise TruncatedError(self.path, rec.offset,
                             f"record ends after {got - rec._block} of its {rec.content_length} content bytes",
                             "the file is cut short or Content-Length is wrong; --skip-errors skips it")

    def _finish(self, rec: Record) -> None:
        """Find where rec ends and where the next record starts."""
        if rec._finished or rec._it is None:
            return
        rec._finished = True
        unit = rec._unit
        if unit.gz:
            self._finish_member_record(rec, unit)
        else:
            self._finish_plain_record(rec, unit)

    def _finish_member_record(self, rec: Record, unit: _Unit) -> None:
        reader = self._reader
        end = rec._content_end
        sl = reader.member_sl
        if (rec.member_pos == 0 and end is not None and not self.verify and sl is not None
                and sl[1] == end + 4 and reader.seekable):  # a stream could not come back if `sl` is wrong
            member_end = reader.member_finish()
            if reader.member_trusted or (member_end - rec.offset == sl[0] and reader.member_produced == sl[1]):
                rec._length = member_end - rec.offset
                self._pos = member_end
                self._unit = None
                return
            # `sl` was wrong: the member was inflated; read it again to check its tail
            reader.member_begin(rec.offset)
        if end is None:
            self._pos = reader.member_finish()
            rec._length = self._pos - rec.offset
            self._unit = None
            return
        if end > 0 and len(unit.read(end - 1, 1)) < 1:
            self._short_content(rec, reader.member_produced)
        nxt = self._skip_blank(unit, end)
        if nxt is None:
            self._pos = reader.member_finish()
            rec._length = self._pos - rec.offset if rec.member_pos == 0 else None
            self._unit = None
        else:
            # another record follows inside the same member (whole-file gzip)
            self._unit_pos = nxt
            rec._length = None

    def _finish_plain_record(self, rec: Record, unit: _Unit) -> None:
        end = rec._content_end
        assert end is not None
        if end > 0 and len(unit.read(end - 1, 1)) < 1:
            size = self._reader.size
            self._short_content(rec, (size - unit.base) if size is not None else rec._block)
        chunk = unit.read(end, 4096)
        nl = chunk.find(b"\n")
        first = chunk[: nl + 1] if nl >= 0 else chunk
        if first and decode_line(first).strip():
            raise RecordFormatError(self.path, rec.offset,
                                    f"record is not followed by a blank line but by {first[:40]!r}",
                                    "its Content-Length is probably wrong; --skip-errors skips it")
        nxt = self._skip_blank(unit, end)
        rec._length = end
        self._pos = unit.base + (nxt if nxt is not None else self._end_of(unit, end))

    def _end_of(self, unit: _Unit, pos: int) -> int:
        while True:
            chunk = unit.read(pos, 1 << 16)
            pos += len(chunk)
            if len(chunk) < 1 << 16:
                return pos


def open(source: Source, types: Optional[Iterable[str]] = None, verify: bool = False,
         parse_http: bool = True, offset: Optional[int] = None) -> ArchiveIterator:  # noqa: A001
    """Iterate the records of a WARC/ARC file: plain, gzip or Zstandard (told by its first bytes)."""
    return ArchiveIterator(source, types=types, verify=verify, parse_http=parse_http, offset=offset)
