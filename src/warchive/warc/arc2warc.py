"""ARC records as WARC records, the records ``warcio recompress`` writes for an ARC file.

warcio 1.8.1 converts each ARC record on its own, in order, and adds no
record of its own (no warcinfo of the conversion):

  filedesc:// header  -> warcinfo   WARC-Type, WARC-Record-ID, WARC-Filename (the name
                                    after filedesc://), WARC-IP-Address, WARC-Date,
                                    Content-Type (the ARC line's), Content-Length,
                                    WARC-Block-Digest; the block is what follows the
                                    version and field-spec lines
  any other record    -> response   WARC-Type, WARC-Record-ID, WARC-Target-URI (<...>
                                    removed, spaces as %20), WARC-IP-Address, WARC-Date,
                                    Content-Type: application/http;msgtype=response,
                                    Content-Length, WARC-Payload-Digest, WARC-Block-Digest;
                                    the block is the ARC record's content

in that order, a ``WARC/1.0`` head, the ARC date (YYYYMMDDhhmmss, shorter
ones padded as warcio pads them) as WARC-Date, a random urn:uuid record id,
sha1 base32 digests. This module writes those heads byte for byte. Two
things differ on purpose, both because the WARC file is the source of
truth: the block is the ARC record's content as stored, where warcio
writes the HTTP head again from its parsed fields (line ends, spacing and
non-ASCII bytes of a head that was not written the canonical way change,
and with them Content-Length and WARC-Block-Digest); and the payload digest
of a chunked body is taken over the de-chunked entity body (WARC 1.1
6.3.2), where warcio digests the chunked bytes (webrecorder/warcio#74).

This module reads nothing: the reader presents ARC records with their
WARC fields (warchive.warc.reader; its HTTP heads need not be parsed), the
caller hands over the block.
"""

from __future__ import annotations

from typing import Any, List, Tuple

from .builder import WARC_1_0, RecordBuilder, WarcRecord, split_http
from .digest import digest_one
from .reader import HTTP_SCHEMES, Record

DIGEST = "sha1"   # what warcio writes


def warc_record(rec: Record, block: Any) -> WarcRecord:
    """The WARC record warcio writes for the ARC record ``rec`` whose block is ``block``."""
    fields: List[Tuple[str, str]] = []
    for name, value in rec.headers.fields:
        if name == "WARC-Target-URI":
            value = rec.target_uri or value
        elif name == "Content-Length":
            value = str(len(block))
        fields.append((name, value))
    if rec.type != "warcinfo":
        fields.append(("WARC-Payload-Digest", _payload_digest(rec, block)))
    fields.append(("WARC-Block-Digest", digest_one(DIGEST, block)))
    return WarcRecord(rec.type or "response", fields, block, WARC_1_0)


def _payload_digest(rec: Record, block: Any) -> str:
    """After the HTTP head of an http(s) response (de-chunked); of the whole block otherwise."""
    if not block or not (rec.target_uri or "").startswith(HTTP_SCHEMES):
        return digest_one(DIGEST, block)
    n, http = split_http(block)
    return RecordBuilder(WARC_1_0, DIGEST).payload_digest_of(block, n, http)
