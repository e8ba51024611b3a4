"""A record read by ``warchive.warc.open``, made ready to be written again, unchanged.

``copy_of(record)`` returns a ``WarcRecord`` (warchive.warc.builder) whose
WARC head is the head's bytes as they were read (no field reordered,
re-spaced or re-encoded) and whose block is the record's block byte for
byte: ``WarcWriter.write_record`` encodes it as one unit of its own file,
followed by the CRLF CRLF every record ends with. Before it is copied, the
block's digests are judged as ``warchive check`` judges them
(warchive.warc.verify): a digest that does not match raises ``WriteError``
naming the source file and offset, unless the caller passes
``check_digests=False``; a known producer defect (DEFECTS) is copied as it
is, since it damages nothing. A response, request or revisit of an http(s)
URI whose block is not an HTTP message raises too (``http=False`` lets it
through), as a new one would.

ARC records are not copied: their WARC form is warcio's reading of them, not
bytes of the file (``warchive arc2warc`` converts whole files). This module
reads one record and writes nothing.
"""

from __future__ import annotations

from typing import List, Optional

from ..errors import ArchiveError, WriteError
from .builder import WarcRecord, is_http_uri, looks_http, not_http_error
from .records import Record
from .verify import PROBLEM, verify_digests

MESSAGE_RECORDS = ("response", "request", "revisit")


def _raw_head(rec: Record) -> bytes:
    """The WARC head of ``rec`` as it is in the file, from its version line to the blank line."""
    unit = rec._unit
    start = rec.member_pos if unit.gz else rec.offset - unit.base
    return unit.read(start, rec._block - start)


def copy_of(rec: Record, check_digests: bool = True, http: Optional[bool] = None) -> WarcRecord:
    """``rec`` (not read yet, the iterator still on it) as a WarcRecord to write unchanged."""
    where, at = rec.source, rec.offset
    if rec.format != "warc":
        raise WriteError(where, at, "an ARC record cannot be copied unchanged into a WARC file",
                         "convert the file first: warchive arc2warc")
    if rec.content_length is None:
        raise WriteError(where, at, "the record has no Content-Length", "it cannot be copied as it is")
    it = rec._it
    if it is not None and not getattr(it, "parse_http", True) and rec.type in MESSAGE_RECORDS:
        raise ArchiveError("write_record needs the HTTP heads: open the file with parse_http=True")
    uri = rec.headers.get("WARC-Target-URI")
    rtype = rec.type or ""
    if rtype in MESSAGE_RECORDS and http is not False and is_http_uri(uri) and rec.content_length:
        first = b""    # the block's first line, as the reader parsed it
        if rec.http is not None:
            first = " ".join(filter(None, (rec.http.protocol, rec.http.statusline))).encode("utf-8", "replace")
        if not looks_http(rtype, first):
            raise not_http_error(rtype, uri or "", first, where, at)
    try:
        head = _raw_head(rec)
        pieces: List[bytes] = []
        if check_digests:
            problems = [n.message for n in verify_digests(rec, pieces.append) if n.level == PROBLEM]
            if problems:
                raise WriteError(where, at, "; ".join(problems),
                                 "the record is damaged; write_record(record, check_digests=False) copies it anyway")
        else:
            pieces.append(rec.block().read())
    except ValueError as e:    # its payload was read already, or the iterator moved on
        raise ArchiveError(f"record {rec.record_id} at byte {at} cannot be copied: {e} "
                           "(copy a record before reading its payload)") from e
    block = b"".join(pieces)
    if len(block) != rec.content_length:
        raise WriteError(where, at, f"the record holds {len(block)} of its {rec.content_length} content bytes",
                         "it cannot be copied as it is")
    proto = rec.headers.protocol
    version = proto[5:] if proto.upper().startswith("WARC/") else proto
    http_length = rec._payload - rec._block if rec.http is not None else 0
    return WarcRecord(rtype, list(rec.headers.fields), block, version, rec.http, http_length, head)
