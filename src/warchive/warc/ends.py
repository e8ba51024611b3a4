"""Where a record ends, for the record iterator (warchive.warc.reader.ArchiveIterator, which
inherits these): what follows a record's content (its separator, the rest of its gzip member,
bytes that are no record, the end of the file) is read as warcio reads it, and what is not as it
should be is reported once as a defect (warchive.warc.defects); the position of the next record
follows. A file that ends inside a record ends it there: the record runs to the end of the file
(a truncated defect), or, cut before any of it can be read, is none.

This module finds ends and next records in bytes the iterator's reader holds; it parses no heads
(warchive.warc.reader does) and opens no files.
"""

from __future__ import annotations

from typing import Optional

from .._ext.gzip_members import FORMAT_ZSTD
from ..errors import CorruptRecordError, TruncatedError
from .defects import CONTENT_LENGTH, SEPARATOR, TRUNCATED, Defects
from .framing import (ARC_SEPARATOR, GZIP_MAGIC, LOOKBACK, SCAN, WARC_SEPARATOR, find_record, first_line, is_blank,
                      next_record_line, record_line, skip_blank)
from .records import Record, Unit
from .source import ByteReader


def show(b: bytes, n: int = 40) -> str:
    """The first n bytes of b as a message quotes them."""
    return repr(b[:n]) + ("..." if len(b) > n else "")


def begins_record(data: bytes) -> bool:
    """Does data begin (after blank lines) with a record's first line, its length in digits?"""
    def read(p: int, n: int) -> bytes:
        return data[p : p + n]
    k = skip_blank(read, 0)
    return k is not None and record_line(first_line(read, k), True) is not None


class RecordEnds:
    """The iterator's part that finds where each record ends and the next begins (the state it
    reads and moves is the iterator's: warchive.warc.reader.ArchiveIterator)."""

    path: Optional[str]
    gzip: bool
    verify: bool
    _reader: ByteReader
    _sink: Defects
    _pos: int
    _unit: Optional[Unit]
    _unit_pos: int
    _at_start: bool

    @property
    def _unit_word(self) -> str:
        return "Zstandard frame" if self._reader.format == FORMAT_ZSTD else "gzip member"

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

    def _find_member(self, pos: int) -> Optional[int]:
        """The first gzip member at or after pos whose data begins with a record (after blank lines)."""
        reader = self._reader
        while True:
            chunk = reader.read_at(pos, SCAN + 2)
            i = chunk.find(GZIP_MAGIC)
            while 0 <= i < SCAN:
                cand = pos + i
                try:
                    if reader.member_begin(cand) and begins_record(reader.member_head(1024)):
                        return cand
                except CorruptRecordError:   # not a member after all
                    pass
                i = chunk.find(GZIP_MAGIC, i + 1)
            if len(chunk) <= SCAN:
                return None
            pos += SCAN

    def _cut_short(self, off: int, problem: str) -> None:
        """The file ends inside the record at off before any of it can be read (its first line,
        its head, its gzip member's header, or all of an HTTP record's content, where warcio
        reads no record either): a truncated defect, and the end of reading; an error where
        nothing has been read yet (the first record of a file, or the record at the offset given)."""
        if self._at_start:
            raise TruncatedError(self.path, off, problem, "nothing of the file before the cut can be read")
        self._sink.add(off, TRUNCATED, problem, "reading ends there, with nothing of the record read",
                       error=TruncatedError)
        self._pos = self._end_of(off)
        self._unit = None

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
            self._sink.add(rec.offset, TRUNCATED,
                           f"the file ends inside the record's {self._unit_word}, after its content",
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
                self._record_defect(rec, skind, f"{lead} is followed by {show(tail)} instead of {word}",
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
            problem = f"{cl} does not end the record: a line that is not blank follows ({show(line)})"
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
                            f"are no record ({show(line)})",
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
            self._record_defect(rec, skind, f"{lead} is followed by {show(read(at, nxt - at))} instead of {word}",
                                f"reading on at byte {nxt}" if k is not None else "the file ends")
            return nxt
        if starts:
            self._record_defect(rec, CONTENT_LENGTH,
                                f"{cl} does not end the record: a line that is not blank follows ({show(line)})",
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
                            f"{cl} does not end the record: it is followed by {show(read(at, 41))}",
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
