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
intact. Where each record ends and the next begins is warchive.warc.ends's part of the
iterator. This module does not build index lines (warchive.index.cdx does).
"""

from __future__ import annotations

import zlib
from typing import Generator, Iterable, Iterator, Optional

from .._ext.gzip_members import FORMAT_GZIP, FORMAT_ZSTD, Reader
from ..errors import RecordFormatError, TruncatedError
from .arc import ARC_HEAD_MAX, parse_arc, text_note
from .defects import (BLANK_LINES, CONTENT_LENGTH, EMPTY_MEMBER, FILEDESC_FIELDS, GARBAGE, PLAIN_RECORD, SPLIT_RECORD,
                      Defects, OnDefect)
from .ends import RecordEnds, begins_record, show
from .framing import (GZIP_MAGIC, LINE_MAX, cut_first_line, find_record, first_line, is_blank, next_record_line,
                      record_line, skip_blank, text_head)
from .headers import Head, Headers, http_head, parse_head, warc_protocol
from .records import OFFSET_MAX, PayloadStream, Record, Unit
from .source import WINDOW, Source, open_reader

HEAD_FIRST = 1024           # first guess of a head size (most WARC heads, most HTTP heads fit)
HEAD_MAX = 16 << 20         # a head longer than this is not a head
HTTP_RECORDS = ("response", "request", "revisit")
HTTP_SCHEMES = ("http:", "https:")

__all__ = ["ArchiveIterator", "PayloadStream", "Record", "open"]


class ArchiveIterator(RecordEnds):
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
                    self._sink.add(self._pos, GARBAGE, f"gzip member holds no record: its data begins {show(line)}",
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
        self._sink.add(at, GARBAGE, f"{end - at} bytes that are no record (they begin {show(line)})",
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
                                     f"(they begin {show(reader.read_at(at, 40))})",
                       f"reading on at byte {nxt}" if nxt is not None else "skipped to the end of the file")
        self._pos = end
        return True if nxt is not None else None

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
        if data is None or not data.strip() or begins_record(data):
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
            if arc.bad_fields is not None and not text:   # (its length's defect, if any, when it ends)
                self._sink.add(rec_off, FILEDESC_FIELDS, arc.bad_fields, "read as the ARC file's version block, "
                               "as warcio reads it")
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



def open(source: Source, types: Optional[Iterable[str]] = None, verify: bool = False,  # noqa: A001
         parse_http: bool = True, offset: Optional[int] = None, strict: bool = False,
         on_defect: Optional[OnDefect] = None, name: Optional[str] = None) -> ArchiveIterator:
    """Iterate the records of a WARC/ARC file: plain, gzip or Zstandard (told by its first bytes)."""
    return ArchiveIterator(source, types=types, verify=verify, parse_http=parse_http, offset=offset,
                           strict=strict, on_defect=on_defect, name=name)

