"""Iterate the records of WARC and ARC files: plain, gzip (member per record, or one member for
the whole file) and Zstandard (.warc.zst); from paths, open files or streams.

Offsets and lengths are warcio's: for gzip the start of the member and its compressed size; for
plain files the record's first byte and its length without the blank lines that follow. Heads
are parsed as warcio parses them (warchive.warc.headers, warchive.warc.arc). A record's payload
is a lazy stream: records that a type filter drops, and payloads nobody reads, are never inflated
when the gzip members carry Wget's `sl` lengths (unless ``verify=True``; never on a stream).

Reading is lenient by default, as warcio's: framing faults warcio reads past (a Content-Length a
few bytes off, missing or extra blank lines, bytes between records that are no record, records
not gzip-compressed in a gzip file, ARC lengths that lie) are recovered as warcio recovers them,
or where warcio gives up by looking for the next record (warchive.warc.framing), and each is
reported once as a Defect (warchive.warc.defects); ``strict=True`` raises the first instead. Where warcio parses the next record (after a record and its
blank lines, at the start of a gzip member) a line of text that it takes for
an ARC head is read as that ARC record (a text record, whose one defect
covers what follows it up to the next record). A file that ends inside a
record (or inside its gzip member) is a defect too, as warcio reads it: a
record cut in its content is read up to the end of the file (its length runs
there); one cut in its head, or before any of an HTTP record's content, is
not read. Damage no reader can read past (a bad CRC, invalid deflate data,
bytes at the start that are no archive) raises a CorruptRecordError child
naming the file and byte offset; everything before it has been yielded
intact.
This module does not build index lines (warchive.index.cdx does).
"""

from __future__ import annotations

import zlib
from typing import Generator, Iterable, Iterator, Optional

from .._ext.gzip_members import FORMAT_GZIP, FORMAT_ZSTD, Reader
from ..errors import CorruptRecordError, RecordFormatError, TruncatedError
from .arc import ARC_HEAD_MAX, parse_arc, text_note
from .defects import (BLANK_LINES, CONTENT_LENGTH, EMPTY_MEMBER, GARBAGE, PLAIN_RECORD, SEPARATOR, SPLIT_RECORD,
                      TRUNCATED, Defects, OnDefect)
from .framing import (ARC_SEPARATOR, GZIP_MAGIC, LINE_MAX, LOOKBACK, SCAN, WARC_SEPARATOR, cut_first_line,
                      find_record, first_line, is_blank, next_record_line, record_line, skip_blank, text_head)
from .headers import Head, Headers, http_head, parse_head, warc_protocol
from .records import OFFSET_MAX, PayloadStream, Record, Unit
from .source import WINDOW, Source, open_reader

HEAD_FIRST = 1024           # first guess of a head size (most WARC heads, most HTTP heads fit)
HEAD_MAX = 16 << 20         # a head longer than this is not a head
HTTP_RECORDS = ("response", "request", "revisit")
HTTP_SCHEMES = ("http:", "https:")

__all__ = ["ArchiveIterator", "PayloadStream", "Record", "open"]


def _show(b: bytes, n: int = 40) -> str:
    return repr(b[:n]) + ("..." if len(b) > n else "")


def _begins_record(data: bytes) -> bool:
    """Does data begin (after blank lines) with a record's first line, its length in digits?"""
    def read(p: int, n: int) -> bytes:
        return data[p : p + n]
    k = skip_blank(read, 0)
    return k is not None and record_line(first_line(read, k), True) is not None


class ArchiveIterator:
    """Records of one archive file.

    ArchiveIterator(source, types=None, verify=False, parse_http=True, offset=None,
                    strict=False, on_defect=None)
      source     a path (a FIFO or /dev/stdin too) or a binary file object, seekable or
                 not (offsets count from the start of the file, or of what a stream gives)
      offset     start at this record (default: the start, or a file object's position)
      types      record types to yield (e.g. {"response"}); others are skipped
                 before their payload is touched
      verify     inflate every gzip member and check CRC-32/ISIZE even when
                 Wget's `sl` lengths would allow skipping
      strict     raise on the first defect instead of recovering from it
      on_defect  called with each Defect (default: a DefectWarning through warnings)
      name       what errors and defects call the source (default: its path, or a file
                 object's name)
      length     how long the record at offset is, when an index says (read in one piece)
    ``defects`` lists the defects found so far.
    """

    def __init__(self, source: Source, types: Optional[Iterable[str]] = None, verify: bool = False,
                 parse_http: bool = True, offset: Optional[int] = None, strict: bool = False,
                 on_defect: Optional[OnDefect] = None, name: Optional[str] = None, window: int = WINDOW,
                 length: Optional[int] = None) -> None:
        self._reader = open_reader(source, offset, verify, window, length)
        self._reader.cut_ok = True   # a member cut by the end of the file ends there: a truncated record
        self.path = name if name is not None else self._reader.path
        self.types = frozenset(types) if types is not None else None
        self.verify = verify
        self.parse_http = parse_http
        self.strict = strict
        self._sink = Defects(self.path, strict, on_defect)
        self._gen = 0
        # gzip members and zstd frames: one record per unit, offsets of units
        self.gzip = self._reader.format in (FORMAT_GZIP, FORMAT_ZSTD)
        self._pos = self._reader.start
        self._unit: Optional[Unit] = None
        self._unit_pos = 0            # where the next record starts inside the current gzip member
        self._at_start = True         # no record read yet: bytes that are none are an error here
        # where the next record is read, a line of text is a text record (framing.text_head): after a
        # record, or at an offset the caller gives (not at the start of a file: that is no archive)
        self._text_here = self._reader.start > 0
        self._iter = self._records()

    def __iter__(self) -> Iterator[Record]:
        return self._iter

    def __next__(self) -> Record:
        return next(self._iter)

    def seek(self, offset: int, resync: bool = False) -> None:
        """Continue with the record (or gzip member) that starts at offset. With resync, offset
        is where a record ended: bytes there that are no record are a defect and skipped
        (without it they are an error, as at the start of a file)."""
        self._gen += 1
        self._pos = offset
        self._unit = None
        self._unit_pos = 0
        self._at_start = not resync
        self._text_here = resync or offset > 0
        self._iter = self._records()

    @property
    def position(self) -> int:
        """Offset of the next record or gzip member (after the current record is finished)."""
        return self._pos

    @property
    def defects(self) -> list:
        """The defects found so far, in the order found (a list of Defect)."""
        return list(self._sink.items)

    def report(self, offset: int, kind: str, problem: str, action: str) -> None:
        """Add a defect found by a user of the records (the indexer: records it cannot index)."""
        self._sink.add(offset, kind, problem, action)

    def next_member(self) -> int:
        """Leave the gzip member the current record shares with others (records that have no
        offsets of their own); return the offset of the next member."""
        if self._unit is not None and self._unit.gz:
            self._pos = self._reader.member_finish()
            self._unit = None
            self._gen += 1
            self._iter = self._records()
        return self._pos

    def find_record(self, after: int) -> int:
        """The offset of the first place after ``after`` where a record seems to start (gzip: a
        member whose data begins with one), or of the end of the file when there is none (a
        stream looks only at what it still holds, and is read to its end then)."""
        start = max(after + 1, self._reader.floor)
        if self._reader.format == FORMAT_GZIP:
            found = self._find_member(start)
        elif self.gzip:   # zstd: frames are not searched for
            found = None
        else:   # from the next line start: the rest of a line (a URL's "ttp://...") begins no record
            if self._reader.read_at(start - 1, 1) not in (b"\n", b""):
                start += len(first_line(self._reader.read_at, start))
            found = find_record(self._reader.read_at, start)
        return found if found is not None else self._end_of(start)

    def close(self) -> None:
        # cut the cycles (the generator holds this iterator, the unit its _extend) refcounts cannot free
        self._iter.close()
        self._unit = None
        self._reader.close()

    def __enter__(self) -> "ArchiveIterator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ iteration
    def _records(self) -> Generator[Record, None, None]:
        rec: Optional[Record] = None
        try:
            while True:
                rec = self._next_record()
                if rec is None:
                    return
                if rec._skip or (self.types is not None and rec.type not in self.types):
                    self._finish(rec)
                    continue
                yield rec
                self._finish(rec)
        finally:
            self._gen += 1
            if rec is not None:
                rec._it = None
                rec._stream = None   # (it refers to rec: a cycle) no longer readable anyway

    def _next_record(self) -> Optional[Record]:
        self._gen += 1
        while True:
            if not self.gzip:
                got = self._next_plain()
                if got is not False:
                    return got
                continue
            if self._unit is None:
                began = self._begin_unit()
                if began is None or isinstance(began, Record):
                    return began
            unit, pos = self._unit, self._unit_pos
            assert unit is not None
            start = skip_blank(unit.read, pos)
            if start is None:   # nothing but blank lines up to the end of the member
                if pos == 0 and self._reader.member_cut:
                    self._cut_short(self._pos, f"the file ends inside a {self._unit_word} before any of its record")
                    return None
                if pos == 0:
                    self._sink.add(self._pos, EMPTY_MEMBER, "gzip member holds no record", "skipped")
                self._leave_member()
                continue
            if pos == 0:
                line = first_line(unit.read, start)
                # warcio parses a member's first line as the next record's (a text record too)
                kind = next_record_line(line) if start == 0 and self._text_here else record_line(line)
                if (kind is None and self._cut_line(line) or kind == "arc" and not line.endswith(b"\n")) \
                        and self._reader.member_cut and not unit.read(start + len(line), 1):
                    self._cut_short(self._pos, "the file ends inside the first line of a record")
                    return None
                if kind is None:
                    if self._at_start:
                        raise self._not_a_record(self._pos, line)
                    self._sink.add(self._pos, GARBAGE, f"gzip member holds no record: its data begins {_show(line)}",
                                   "skipped")
                    self._leave_member()
                    continue
                if start > 0:
                    self._sink.add(self._pos, BLANK_LINES, f"gzip member begins with {start} blank bytes",
                                   "its record is read after them")
                return self._parse_record(unit, start, kind == "text")
            return self._parse_record(unit, start)

    def _leave_member(self) -> None:
        self._pos = self._reader.member_finish()
        self._unit = None

    @property
    def _unit_word(self) -> str:
        return "Zstandard frame" if self._reader.format == FORMAT_ZSTD else "gzip member"

    def _cut_line(self, line: bytes) -> bool:
        """Is line, the last of the file, the first line of a record cut short? At the start of a
        file only a WARC version line's or an ARC file's filedesc:// line's beginning is one."""
        if not cut_first_line(line):
            return False
        if not self._at_start:
            return True
        text = line.lstrip()[:11].lower()
        return any(w.startswith(text) or text.startswith(w) for w in (b"warc/", b"filedesc://"))

    def _not_a_record(self, off: int, line: bytes) -> RecordFormatError:
        return RecordFormatError(self.path, off, f"not a WARC or ARC record; first line {line[:80]!r}",
                                 "is this an archive file? --skip-errors skips it")

    def _next_plain(self):   # -> Optional[Record], or False: go round again
        """The record at self._pos of a plain file (after blank lines); bytes there that are no
        record are skipped as a defect, or are an error at the start."""
        reader = self._reader
        at = self._pos
        start = skip_blank(reader.read_at, at)
        if start is None:
            if not reader.at_end(at):
                end = self._end_of(at)
                self._sink.add(at, BLANK_LINES, f"{end - at} blank bytes at the end of the file", "ignored")
                self._pos = end
            return None
        line = first_line(reader.read_at, start)
        kind = next_record_line(line) if self._text_here else record_line(line)
        if kind == "arc" and not line.endswith(b"\n") and reader.at_end(start + len(line)):
            self._cut_short(start, "the file ends inside the first line of a record")
            return None
        if kind is not None:
            if start > at:
                where = "before the first record" if at == 0 else "between records"
                self._sink.add(at, BLANK_LINES, f"{start - at} blank bytes {where}", "ignored")
            return self._parse_record(Unit(reader, False, at), start - at, kind == "text")
        if len(line) < LINE_MAX and self._cut_line(line) and reader.at_end(start + len(line)):
            self._cut_short(start, "the file ends inside the first line of a record")
            return None
        if self._at_start:
            raise self._not_a_record(start, line)
            return None
        nxt = find_record(reader.read_at, start)
        end = nxt if nxt is not None else self._end_of(start)
        self._sink.add(at, GARBAGE, f"{end - at} bytes that are no record (they begin {_show(line)})",
                       f"reading on at byte {nxt}" if nxt is not None else "skipped to the end of the file")
        if nxt is None:
            self._pos = end
            return None
        self._pos = nxt
        return False

    def _begin_unit(self):   # -> None (the end), True (a member began) or a Record (a plain record)
        """Begin the gzip member (zstd frame) at self._pos. Bytes before it that are no member:
        an uncompressed record is read as such (as warcio does); anything else is skipped up
        to the next member that holds a record."""
        reader = self._reader
        while True:
            pos = self._pos
            if reader.format == FORMAT_GZIP and not self._at_start:
                head = reader.read_at(pos, 3)
                if not head:
                    return None
                if head[:2] != GZIP_MAGIC[:2] and not GZIP_MAGIC.startswith(head):   # (else a gzip error)
                    got = self._gap_in_gzip(pos)
                    if got is True:
                        continue
                    return got
            try:
                if not reader.member_begin(pos):
                    return None
            except TruncatedError as e:   # the file ends inside the member's header
                self._cut_short(pos, e.problem)
                return None
            self._pos = reader.member_offset   # zstd: past skippable frames
            self._unit = Unit(reader, True, self._pos)
            self._unit_pos = 0
            return True

    def _gap_in_gzip(self, pos: int):   # -> True (self._pos is now a member), None (the end), or a Record
        reader = self._reader
        at = skip_blank(reader.read_at, pos)
        if at is None:
            end = self._end_of(pos)
            self._sink.add(pos, BLANK_LINES, f"{end - pos} blank bytes after the last gzip member", "ignored")
            self._pos = end
            return None
        if reader.read_at(at, 3) == GZIP_MAGIC:
            self._sink.add(pos, BLANK_LINES, f"{at - pos} blank bytes between gzip members", "ignored")
            self._pos = at
            return True
        line = first_line(reader.read_at, at)
        if at == pos and record_line(line) is None and text_head(line):   # where warcio parses the next record
            return self._parse_record(Unit(reader, False, pos), 0, True)
        if record_line(line) is not None:
            blank = f" after {at - pos} blank bytes" if at > pos else ""
            self._sink.add(at, PLAIN_RECORD, f"record is not gzip-compressed{blank}",
                           "read as an uncompressed record, as warcio reads it")
            return self._parse_record(Unit(reader, False, pos), at - pos)
        nxt = self._find_member(at)
        end = nxt if nxt is not None else self._end_of(at)
        self._sink.add(pos, GARBAGE, f"{end - pos} bytes between gzip members that are no gzip member "
                                     f"(they begin {_show(reader.read_at(at, 40))})",
                       f"reading on at byte {nxt}" if nxt is not None else "skipped to the end of the file")
        self._pos = end
        return True if nxt is not None else None

    def _find_member(self, pos: int) -> Optional[int]:
        """The first gzip member at or after pos whose data begins with a record (after blank lines)."""
        reader = self._reader
        while True:
            chunk = reader.read_at(pos, SCAN + 2)
            i = chunk.find(GZIP_MAGIC)
            while 0 <= i < SCAN:
                cand = pos + i
                try:
                    if reader.member_begin(cand) and _begins_record(reader.member_head(1024)):
                        return cand
                except CorruptRecordError:   # not a member after all
                    pass
                i = chunk.find(GZIP_MAGIC, i + 1)
            if len(chunk) <= SCAN:
                return None
            pos += SCAN

    def _extend(self, unit: Unit, end: int) -> bool:
        """A read of unit (a record's gzip member) stops at the member's end, at unit position
        end, short of the record's end: if the next member goes on with the record (its data
        does not begin with a record), begin it (a defect: the record is split across members)."""
        reader = self._reader
        if (not isinstance(reader, Reader) or reader.format != FORMAT_GZIP or end != unit.seg + reader.member_produced
                or not reader.member_done):
            return False
        nxt = reader.member_finish()
        data = self._peek_member(nxt)
        if data is None or not data.strip() or _begins_record(data):
            return False
        nl = data.find(b"\n")
        if nl >= 0 and text_head(data[: nl + 1]):   # warcio reads a text record there, not the rest of this one
            return False
        reader.member_begin(nxt)
        self._sink.add(unit.base, SPLIT_RECORD, f"record goes on in the next gzip member, at byte {nxt}",
                       "read across the members, its length covering them")
        return True

    def _peek_member(self, off: int) -> Optional[bytes]:
        """The first bytes of the data of the gzip member at off (inflated aside: the current
        member stays as it is), or None when no member is there."""
        raw = self._reader.read_at(off, 1 << 16)
        if raw[:3] != GZIP_MAGIC:
            return None
        try:
            return zlib.decompressobj(31).decompress(raw, 4096)
        except zlib.error:
            return None

    def _end_of(self, pos: int) -> int:
        """The offset where the file ends (a stream is read to its end)."""
        size = self._reader.size
        if size is not None:
            return max(size, pos)
        while True:
            chunk = self._reader.read_at(pos, 1 << 16)
            pos += len(chunk)
            if len(chunk) < 1 << 16:
                return pos

    # ------------------------------------------------------------------ heads
    def _read_head(self, unit: Unit, pos: int, limit: Optional[int], what: str) -> Head:
        """Parse the head at unit position pos, within [pos, limit) when limit is given."""
        n = HEAD_FIRST
        while True:
            want = n if limit is None else min(n, limit - pos)
            buf = unit.read(pos, want) if want > 0 else b""
            final = len(buf) < n  # the unit or the limit ends within the buffer
            head = parse_head(buf, 0, len(buf), final)
            if (head is not None and final and unit.gz and len(buf) < want and buf.strip()
                    and not buf[: head.end].endswith((b"\n\n", b"\n\r\n"))):
                # the member ends inside the head: the record may go on in the next member
                unit.limit, unit.extend = pos + HEAD_MAX, self._extend
                more = unit.read(pos, want)
                unit.limit = None
                if len(more) > len(buf):
                    continue
            if head is not None:
                return head
            if n >= HEAD_MAX:
                raise RecordFormatError(self.path, unit.base + (pos if not unit.gz else 0),
                                        f"{what} longer than {HEAD_MAX >> 20} MiB without an end",
                                        "--skip-errors skips this record")
            n *= 4

    def _parse_record(self, unit: Unit, pos: int, text: bool = False) -> Optional[Record]:
        """The record at unit position pos; text: the line there is a text record's (framing.text_head).
        None: the file ends before the record can be read (reported; reading ends)."""
        rec_off = unit.base + (pos if not unit.gz else 0)
        head = self._read_head(unit, pos, None, "record head") if not text else None
        rec = Record()
        rec._it = self
        rec._gen = self._gen
        rec._unit = unit
        rec.offset = rec_off
        rec.member_pos = pos if unit.gz else 0
        rec.http = None
        proto = warc_protocol(head.status) if head is not None else None
        if head is not None and proto is not None and self._cut_in_head(unit, pos, head):
            self._cut_short(rec_off, "the file ends inside the head of a record")
            return None
        if head is not None and proto is not None:
            rec.format = "warc"
            rec.headers = Headers(proto[0], proto[1], head.fields, head.total_len)
            rec.type = rec.headers.get("WARC-Type")
            length_text = rec.headers.get("Content-Length")
            block = pos + head.end
            length = self._warc_length(rec, unit, length_text)
        else:
            arc = parse_arc(unit.read(pos, ARC_HEAD_MAX))
            if arc is None:
                raise self._not_a_record(rec_off, unit.read(pos, 80))
            rec.format = "arc"
            rec.type = arc.type
            rec.headers = arc.headers
            rec._text = text
            block = pos + arc.end
            length = arc.length
            # a text record without content whose URL is http(s): warcio's HTTP head parser meets the end
            rec._skip = text and bool(length) and (rec.target_uri or "").startswith(HTTP_SCHEMES) \
                and not unit.read(block, 1)
            rec._note = arc.note if not text else text_note(arc, unit.read(pos, 80), rec._skip)
        first, self._at_start = self._at_start, False
        self._text_here = True
        rec.content_length = length
        rec._content_end = block + min(length, OFFSET_MAX) if length is not None else None
        rec._block = block
        rec._payload = block
        if unit.gz and pos == 0 and rec._content_end is not None and not text:   # it may run on into the next member
            unit.limit, unit.extend = rec._content_end, self._extend
        if rec._skip or (self.types is not None and rec.type not in self.types):
            return rec  # dropped by the caller: its block is never looked at
        if self.parse_http and rec.type in HTTP_RECORDS:
            uri = rec.target_uri
            if uri is not None and uri.startswith(HTTP_SCHEMES) and rec.content_length != 0:
                h = self._read_head(unit, block, rec._content_end, "HTTP head")
                if h.total_len == 0:
                    if rec.type != "revisit":
                        if not text and (not unit.gz or self._reader.member_cut):   # (warcio reads none)
                            self._at_start = first
                            self._cut_short(rec_off, f"the file ends after the head of a {rec.type} record, "
                                                     f"before any of its {length} content bytes")
                            return None
                        self._short_content(rec, block)   # its gzip member ends with its WARC head
                else:
                    rec.http = http_head(h)
                    rec._payload = block + h.end
        return rec

    def _warc_length(self, rec: Record, unit: Unit, text: Optional[str]) -> Optional[int]:
        """The content length of a WARC record as warcio reads it: an invalid Content-Length is 0."""
        if text is None:
            if not unit.gz:
                raise RecordFormatError(self.path, rec.offset, "record has no Content-Length",
                                        "the end of the record cannot be found in a plain file")
            rec._note = (CONTENT_LENGTH, "record has no Content-Length", "it ends with its gzip member")
            return None
        try:
            n = int(text)
        except ValueError:
            n = -1
        if n < 0:
            rec._note = (CONTENT_LENGTH, f"invalid Content-Length {text!r}", "read as 0 bytes, as warcio reads it")
            return 0
        return n

    def _cut_in_head(self, unit: Unit, pos: int, head: Head) -> bool:
        """Does the file end inside the WARC head at unit position pos (no blank line ends it)?
        A gzip member that ends so, whole, is no cut (the record ends with its member)."""
        if unit.read(pos + head.end, 1):
            return False
        raw = unit.read(pos, head.end)
        if is_blank(raw[raw.rfind(b"\n", 0, len(raw) - 1) + 1 :]) and raw.count(b"\n") > 1:
            return False   # its blank line ends it, the file (or member) right after it
        return not unit.gz or self._reader.member_cut

    def _cut_short(self, off: int, problem: str) -> None:
        """The file ends inside the record at off before any of it can be read (its first line,
        its head, its gzip member's header, or all of an HTTP record's content, where warcio
        reads no record either): a truncated defect, and the end of reading; an error where
        nothing has been read yet (the first record of a file, or the record at the offset given)."""
        if self._at_start:
            raise TruncatedError(self.path, off, problem, "nothing of the file before the cut can be read")
        self._sink.add(off, TRUNCATED, problem, "reading ends there, with nothing of the record read", error=TruncatedError)
        self._pos = self._end_of(off)
        self._unit = None

    # ------------------------------------------------------------------ record end
    def _short_content(self, rec: Record, got: int) -> None:
        """The content ends before Content-Length says (at unit position got): the file ends
        inside the record (a truncated defect: the record ends there, as warcio reads it), or a
        whole gzip member holds less than the record claims (a defect: it ends with its member)."""
        if rec._text or rec._cut:   # a text record: what there is of it is read, as warcio reads it
            return
        problem = f"record ends after {got - rec._block} of its {rec.content_length} content bytes"
        if not rec._unit.gz or self._reader.member_cut:
            self._sink.add(rec.offset, TRUNCATED, f"{problem}: the file ends there",
                           "the record is read up to the end of the file, as warcio reads it", error=TruncatedError)
            rec._cut = True
            rec._content_end = got
            return
        self._sink.add(rec.offset, CONTENT_LENGTH, f"{problem}: its gzip member ends there",
                       "the record ends with its member", error=TruncatedError)

    def _record_defect(self, rec: Record, kind: str, problem: str, action: str) -> None:
        """A defect of rec found where it ends (a text record has one only, its own)."""
        if not rec._text:
            self._sink.add(rec.offset, kind, problem, action)

    def _report_note(self, rec: Record) -> None:
        if rec._note is not None:
            kind, problem, action = rec._note
            self._sink.add(rec.offset, kind, problem, action)

    def _finish(self, rec: Record) -> None:
        """Find where rec ends and where the next record starts."""
        if rec._finished or rec._it is None:
            return
        rec._finished = True
        unit = rec._unit
        if rec._text:   # its one defect: what follows it is read as warcio reads it, not reported again
            self._report_note(rec)
        if unit.gz:
            self._finish_member_record(rec, unit)
        else:
            self._finish_plain_record(rec, unit)

    def _finish_member_record(self, rec: Record, unit: Unit) -> None:
        reader = self._reader
        end = rec._content_end
        if rec._cut:   # the file ended inside its content (reported): the member ends with the file
            self._member_done(rec)
            return
        sl = reader.member_sl
        if (rec.member_pos == 0 and end is not None and not self.verify and sl is not None
                and sl[1] == end + 4 and reader.seekable):  # a stream could not come back if `sl` is wrong
            member_end = reader.member_finish()
            if reader.member_trusted or (member_end - rec.offset == sl[0] and reader.member_produced == sl[1]):
                self._report_note(rec)
                rec._length = member_end - rec.offset
                self._pos = member_end
                self._unit = None
                return
            # `sl` was wrong: the member was inflated; read it again to check its tail
            reader.member_begin(rec.offset)
        if end is None or (end > 0 and len(unit.read(end - 1, 1)) < 1):
            if end is not None:
                self._short_content(rec, unit.seg + reader.member_produced)
            self._report_note(rec)
            self._member_done(rec)
            return
        sep = ARC_SEPARATOR if rec.format == "arc" else WARC_SEPARATOR
        tail = unit.read(end, 4096)
        if tail == sep or (reader.member_cut and sep.startswith(tail)):   # (a cut: _member_done says so)
            self._report_note(rec)
            self._member_done(rec)
            return
        nxt = self._member_tail(rec, unit, end, sep, tail)
        if nxt is None:
            self._member_done(rec)
        else:   # another record follows inside the same member (whole-file gzip)
            self._unit_pos = nxt
            rec._length = None

    def _member_done(self, rec: Record) -> None:
        self._pos = self._reader.member_finish()
        if self._reader.member_cut and not rec._cut and not rec._text:   # (its content whole, or unbounded)
            self._sink.add(rec.offset, TRUNCATED, f"the file ends inside the record's {self._unit_word}, after its content",
                           "the record is read as it is, its member's CRC-32 unchecked", error=TruncatedError)
            rec._cut = True
        rec._length = self._pos - rec.offset if rec.member_pos == 0 else None
        self._unit = None

    def _member_tail(self, rec: Record, unit: Unit, end: int, sep: bytes, tail: bytes) -> Optional[int]:
        """What follows a record's content inside its gzip member, when it is not just its
        separator: report it; return where another record begins in the member, if one does."""
        word = "CRLFCRLF" if sep == WARC_SEPARATOR else "LF"
        lead = rec._note[1] + ", and the record" if rec._note is not None else "record"
        skind = rec._note[0] if rec._note is not None else SEPARATOR   # one defect per record: the head's first
        field = "length" if rec.format == "arc" else "Content-Length"
        cl = rec._note[1] + " (read as 0)" if rec._note is not None else f"{field} {rec.headers.get('Content-Length')}"
        line = first_line(unit.read, end)
        if not line:
            self._record_defect(rec, skind, f"{lead} is not followed by {word}: its gzip member ends",
                                "read as if it were")
            return None
        j = end + len(line)
        k = skip_blank(unit.read, j)
        if is_blank(line):
            if k is None:
                self._record_defect(rec, skind, f"{lead} is followed by {_show(tail)} instead of {word}",
                                    "read as if it were")
                return None
            if record_line(first_line(unit.read, k)) is not None:
                if unit.read(end, k - end) != sep:
                    self._record_defect(rec, skind, f"{lead} is followed by {k - end} blank bytes, not {word}",
                                        "the next record of its gzip member read after them")
                else:
                    self._report_note(rec)
                return k
            junk = k
        else:
            problem = f"{cl} does not end the record: a line that is not blank follows ({_show(line)})"
            if k is None:
                self._record_defect(rec, CONTENT_LENGTH, problem,
                                    "the record ends with its gzip member, as warcio reads it")
                return None
            if record_line(first_line(unit.read, k)) is not None:
                self._record_defect(rec, CONTENT_LENGTH, problem,
                                    "the next record of its gzip member read after that line, as warcio reads it")
                return k
            junk = j
        found = find_record(unit.read, junk)
        self._record_defect(rec, CONTENT_LENGTH, f"{cl} does not end the record: it is followed by bytes that "
                            f"are no record ({_show(line)})",
                            "the next record of its gzip member read after them" if found is not None
                            else "the record ends with its gzip member")
        return found

    def _finish_plain_record(self, rec: Record, unit: Unit) -> None:
        end = rec._content_end
        assert end is not None
        start = rec.offset - unit.base
        if not rec._cut and end > 0 and len(unit.read(end - 1, 1)) < 1:
            eof = self._end_of(unit.base + rec._block) - unit.base
            if rec._text:   # warcio reads a text record's content up to the end of the file
                end = rec._content_end = eof
            else:
                self._short_content(rec, eof)
        if rec._cut:   # the file ends inside its content (reported): it runs to the end of the file
            end = rec._content_end = self._end_of(unit.base + rec._block) - unit.base
            rec._length = end - start
            self._pos = unit.base + end
            return
        rec._length = end - start
        sep = ARC_SEPARATOR if rec.format == "arc" else WARC_SEPARATOR
        at = unit.base + end
        tail = unit.read(end, len(sep))
        if tail == sep:
            self._report_note(rec)
            self._pos = at + len(sep)
        else:
            self._pos = self._plain_tail(rec, unit, end, sep)
        if rec._text:
            self._pos = self._after_text(unit.base + rec._block, self._pos)

    def _after_text(self, block: int, pos: int) -> int:
        """Where reading goes on after a plain text record (its content at block) whose separator
        ends at pos: the next record or the end (its one defect covers what is before it)."""
        read = self._reader.read_at
        k = skip_blank(read, pos)
        if k is None:
            return self._end_of(pos)
        if self._starts_record(k, self._raw(block, k)):
            return k
        found = self._find_member(k) if self.gzip else find_record(read, k)
        return found if found is not None else self._end_of(k)

    def _plain_tail(self, rec: Record, unit: Unit, end: int, sep: bytes) -> int:
        """What follows a plain record that is not followed by its separator: report it; return
        where the next record begins (warcio's next line when it is one, else a search)."""
        read = self._reader.read_at
        at = unit.base + end
        word = "CRLFCRLF" if sep == WARC_SEPARATOR else "LF"
        lead = rec._note[1] + ", and the record" if rec._note is not None else "record"
        skind = rec._note[0] if rec._note is not None else SEPARATOR   # one defect per record: the head's first
        field = "length" if rec.format == "arc" else "Content-Length"
        cl = rec._note[1] + " (read as 0)" if rec._note is not None else f"{field} {rec.headers.get('Content-Length')}"
        line = first_line(read, at)
        if not line:
            self._record_defect(rec, skind, f"{lead} is not followed by {word}: the file ends",
                                "read as if it were")
            return at
        # warcio reads the line after the content as the separator, whatever it is, then blank lines
        k = skip_blank(read, at + len(line))
        starts = k is None or self._starts_record(k, self._raw(unit.base + (rec._block if rec._text else end), k))
        nxt = k if k is not None else self._end_of(at)
        if starts and is_blank(line):
            self._record_defect(rec, skind, f"{lead} is followed by {_show(read(at, nxt - at))} instead of {word}",
                                f"reading on at byte {nxt}" if k is not None else "the file ends")
            return nxt
        if starts:
            self._record_defect(rec, CONTENT_LENGTH,
                                f"{cl} does not end the record: a line that is not blank follows ({_show(line)})",
                                f"{nxt - at} bytes skipped, reading on at byte {nxt} as warcio does" if k is not None
                                else f"{nxt - at} bytes skipped to the end of the file")
            return nxt
        # warcio gives up here. A Content-Length too long swallows the start of the next record:
        # look for it from a little before the record's end on
        base = max(unit.base + rec._block, at - LOOKBACK)
        found = self._find_member(base) if self.gzip else find_record(read, base)
        if (found is None or found > at) and not self.gzip and record_line(line, True) is not None:
            found = at   # it begins right where this one ends, though not at a line start
        if found == at and rec._note is None:   # the next record right after this one: no blank line between
            self._record_defect(rec, skind, f"record is not followed by {word}: the next record begins "
                                "right after it", f"reading on at byte {at}")
            return at
        self._record_defect(rec, CONTENT_LENGTH,
                            f"{cl} does not end the record: it is followed by {_show(read(at, 41))}",
                            f"the next record found at byte {found}" if found is not None
                            else "no record follows: skipped to the end of the file")
        return found if found is not None else self._end_of(at)

    def _starts_record(self, pos: int, text: bool = True) -> bool:
        """Does a record (a gzip member, in a gzip file) begin at pos, where warcio parses the
        next record (a text record too, unless not text)?"""
        read = self._reader.read_at
        if self.gzip and read(pos, 3) == GZIP_MAGIC:
            return True
        line = first_line(read, pos)
        return (next_record_line(line) if text else record_line(line)) is not None

    def _raw(self, start: int, pos: int) -> bool:
        """Do the bytes from start up to pos hold no gzip member header? (After a record not
        compressed warcio reads the members that follow as text; the reader reads members.)"""
        return not self.gzip or GZIP_MAGIC not in self._reader.read_at(start, pos - start)


def open(source: Source, types: Optional[Iterable[str]] = None, verify: bool = False,  # noqa: A001
         parse_http: bool = True, offset: Optional[int] = None, strict: bool = False,
         on_defect: Optional[OnDefect] = None, name: Optional[str] = None) -> ArchiveIterator:
    """Iterate the records of a WARC/ARC file: plain, gzip or Zstandard (told by its first bytes)."""
    return ArchiveIterator(source, types=types, verify=verify, parse_http=parse_http, offset=offset,
                           strict=strict, on_defect=on_defect, name=name)

