"""ARC v1 record heads, read as warcio reads them and presented as WARC heads (arc2warc).

An ARC record begins with one line ``URL IP-ADDRESS ARCHIVE-DATE CONTENT-TYPE LENGTH``
(split from the right, so the URL may hold spaces); LENGTH counts the bytes after that
line. The first record of a file, ``filedesc://NAME ...``, is followed by two more lines,
the version block (``1 0 ORIGIN`` and the field names), which warcio counts into the
head and subtracts from LENGTH: IA's ARC writers declare a LENGTH one byte shorter than
that block, which warcio reads as a record without content (so do we, and say so). A
``filedesc://`` line is that record whatever its fields hold (``filedesc:// - - - 76``, as
some writers left them), as warcio reads it; ``filedesc_problem`` says what is wrong
with them.

A line of text where warcio parses the next record that splits into five fields is such a
head to warcio too: a *text record*, whose one defect ``text_note`` says.

This module parses bytes already in memory; it never reads files.
"""

from __future__ import annotations

import ipaddress
from typing import List, Optional, Tuple

from ..timestamps import timestamp_to_iso_date
from .defects import ARC_VERSION_BLOCK, CONTENT_LENGTH, TEXT_RECORD
from .headers import Headers, decode_line
from .record import new_record_id

FILEDESC = "filedesc://"
ARC_HEAD_MAX = 64 * 1024   # the first line and the version block must lie within this


class ArcHead:
    """An ARC record's head: its WARC-like ``type`` and ``headers``, ``end`` (bytes of the head:
    the first line, and the version block of a filedesc record), ``declared`` (the LENGTH
    field as written) and ``length`` (the content bytes as warcio reads them: LENGTH less the
    version block, 0 when that is negative or LENGTH is no number), with ``note`` saying why
    when ``length`` is not what was written: (kind, problem, action) or None; ``fields``: the
    five fields of the first line as written; ``bad_fields``: what is wrong with a filedesc
    record's name, address and date (``filedesc_problem``), or None."""

    __slots__ = ("type", "headers", "end", "declared", "length", "note", "fields", "bad_fields")

    def __init__(self, rtype: str, headers: Headers, end: int, declared: str, length: int,
                 note: Optional[Tuple[str, str, str]], fields: Tuple[str, ...] = (),
                 bad_fields: Optional[str] = None) -> None:
        self.type = rtype
        self.fields = fields
        self.bad_fields = bad_fields
        self.headers = headers
        self.end = end
        self.declared = declared
        self.length = length
        self.note = note


def parse_arc(buf: bytes) -> Optional[ArcHead]:
    """The ARC head at the start of buf, or None when the first line has not five fields."""
    nl = buf.find(b"\n")
    first = buf[: nl + 1] if nl >= 0 else buf
    line = decode_line(first).rstrip()
    end = len(first)
    total = 0
    if line.startswith(FILEDESC):
        for _ in range(2):   # the version line and the field-spec line belong to the head
            nxt = buf.find(b"\n", end)
            raw = buf[end : nxt + 1] if nxt >= 0 else buf[end:]
            total += len(decode_line(raw))
            end += len(raw)
    parts = line.rsplit(" ", 4)
    if len(parts) != 5:
        return None
    written = tuple(parts)
    uri, ip, date, mime, declared = parts
    fields: List[Tuple[str, str]]
    if uri.startswith(FILEDESC):
        rtype = "warcinfo"
        fields = [("WARC-Type", "warcinfo"), ("WARC-Record-ID", new_record_id()),
                  ("WARC-Filename", uri[len(FILEDESC):])]
    else:
        rtype = "response"
        mime = "application/http;msgtype=response"
        fields = [("WARC-Type", "response"), ("WARC-Record-ID", new_record_id()), ("WARC-Target-URI", uri)]
    fields += [("WARC-IP-Address", ip), ("WARC-Date", timestamp_to_iso_date(date)),
               ("Content-Type", mime), ("Content-Length", declared)]
    length, note = _length(declared, total, rtype == "warcinfo")
    bad = filedesc_problem(uri, ip, date) if rtype == "warcinfo" else None
    return ArcHead(rtype, Headers("WARC/1.0", "", fields, total), end, declared, length, note, written, bad)


def filedesc_problem(uri: str, ip: str, date: str) -> Optional[str]:
    """What is wrong with a filedesc:// line's name, IP address and date (a date of at least 8
    digits, as on any ARC line), or None when nothing is."""
    bad = []
    if not uri[len(FILEDESC):]:
        bad.append("no file name")
    try:
        ipaddress.ip_address(ip)
    except ValueError:
        bad.append(f"no IP address ({ip!r})")
    if not (date.isascii() and date.isdigit() and len(date) >= 8):
        bad.append(f"no date ({date!r})")
    return "the filedesc:// line has " + ", ".join(bad) if bad else None


def _length(declared: str, total: int, filedesc: bool) -> Tuple[int, Optional[Tuple[str, str, str]]]:
    """warcio's rule: LENGTH less the version block; 0 when that fails or is negative."""
    try:
        n = int(declared)
    except ValueError:
        return 0, (CONTENT_LENGTH, f"invalid ARC length {declared!r}", "read as 0 bytes, as warcio reads it")
    if n - total >= 0:
        return n - total, None
    if filedesc and n >= 0:
        return 0, (ARC_VERSION_BLOCK,
                   f"the filedesc:// header declares {n} bytes, its version block alone is {total}",
                   "read as a version block without content, as warcio reads it")
    return 0, (CONTENT_LENGTH, f"invalid ARC length {declared!r}", "read as 0 bytes, as warcio reads it")


def text_note(arc: ArcHead, raw: bytes, missing: bool = False) -> Tuple[str, str, str]:
    """The one defect of a text record: the ARC head warcio makes of raw, a line of text that is
    no record head (warchive.warc.framing.text_head), read as arc; missing: its content is
    missing and its URL http(s), so that warcio reads no record."""
    uri, _, date, _, declared = arc.fields
    n = f"{arc.length} content bytes" if arc.note is None else f"length {declared!r} read as {arc.length}"
    line = raw[: raw.find(b"\n") + 1] if b"\n" in raw else raw
    shown = repr(line[:40]) + ("..." if len(line) > 40 else "")
    return (TEXT_RECORD, f"a line that is no record head where a record should begin ({shown})",
            f"read as the ARC record warcio makes of it: URL {uri!r}, date {date!r}, {n}"
            + ("; its content is missing, so warcio reads no record" if missing else ""))
