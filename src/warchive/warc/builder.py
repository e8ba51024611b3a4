"""Build WARC records: every mandatory header, the digests, the block; nothing is written.

    from warchive.warc.builder import RecordBuilder
    rec = RecordBuilder("1.1", "sha1").response("https://example.com/", response_bytes)
    rec.get("WARC-Payload-Digest"), rec.to_bytes()

``RecordBuilder`` makes a ``WarcRecord`` (head fields in the order written,
the exact block, the parsed HTTP head); warchive.warc.writer encodes records
into files. The WARC-Block-Digest is over the block as stored, the
WARC-Payload-Digest of an HTTP record over its entity body with chunked
transfer coding removed; non-HTTP records carry a payload digest equal to the
block's (docs/format.md, "Writing WARC files"). This module opens no files (a
body given as a file object is read whole).
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any, BinaryIO, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import ArchiveError
from .digest import ALGORITHMS, dechunk, digest_of, digest_one, new_hasher
from .headers import Headers, http_head, parse_head
from .record import new_record_id

Body = Union[bytes, bytearray, memoryview, BinaryIO]
DateLike = Union[None, str, _dt.datetime]

WARC_1_0 = "1.0"
WARC_1_1 = "1.1"
HTTP_RESPONSE = "application/http; msgtype=response"
HTTP_REQUEST = "application/http; msgtype=request"
WARC_FIELDS = "application/warc-fields"
PROFILES = {
    "identical-payload-digest": "http://netpreserve.org/warc/{v}/revisit/identical-payload-digest",
    "server-not-modified": "http://netpreserve.org/warc/{v}/revisit/server-not-modified",
}
CRLF2 = b"\r\n\r\n"   # ends every record as stored


def _check_value(name: str, value: str) -> str:
    if not value.isprintable() and ("\r" in value or "\n" in value):
        raise ArchiveError(f"WARC header {name!r} has a line break in its value {value[:80]!r}")
    return value


def warc_date(when: DateLike, version: str) -> str:
    """WARC-Date: microseconds in WARC/1.1, seconds in WARC/1.0, always UTC with Z."""
    if isinstance(when, str):
        return when
    if when is None:
        when = _dt.datetime.now(_dt.timezone.utc)
    elif when.tzinfo is not None:
        when = when.astimezone(_dt.timezone.utc)
    if version == WARC_1_0:
        return when.strftime("%Y-%m-%dT%H:%M:%SZ")
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def bytes_of(body: Body) -> Any:
    """The bytes of a body given as bytes-like (kept as it is) or as a binary file (read whole)."""
    if isinstance(body, (bytes, bytearray, memoryview)):
        return body
    return body.read()


def split_http(message: Any) -> Tuple[int, Optional[Headers]]:
    """(length of the HTTP head, its parsed fields) of an HTTP message as received."""
    buf = bytes(message) if not isinstance(message, bytes) else message
    head = parse_head(buf, 0, len(buf), True)
    if head is None or head.end == 0:
        return 0, None
    return head.end, http_head(head)


# --------------------------------------------------------------------------- records

@dataclass
class WarcRecord:
    """A record ready to be written: its WARC head fields and its block (nothing computed later)."""

    type: str
    fields: List[Tuple[str, str]]
    block: Any                                  # bytes-like: the exact block
    version: str = WARC_1_1
    http: Optional[Headers] = None              # the block's HTTP head, parsed
    http_length: int = 0                        # bytes of the HTTP head in the block

    def get(self, name: str) -> Optional[str]:
        low = name.lower()
        for k, v in self.fields:
            if k.lower() == low:
                return v
        return None

    @property
    def record_id(self) -> str:
        return self.get("WARC-Record-ID") or ""

    def head_bytes(self) -> bytes:
        lines = [f"WARC/{self.version}\r\n"]
        lines.extend(f"{k}: {v}\r\n" for k, v in self.fields)
        lines.append("\r\n")
        return "".join(lines).encode("utf-8")

    def to_bytes(self) -> bytes:
        """The record as stored uncompressed: head, block, CRLF CRLF."""
        return b"".join((self.head_bytes(), self.block, CRLF2))


class RecordBuilder:
    """Builds records of one WARC version with one digest algorithm.

    Every builder fills WARC-Type, WARC-Record-ID, WARC-Date, Content-Type,
    Content-Length and the digests; ``extra`` fields (name, value pairs) go
    after WARC-Target-URI in the order given. ``date`` is a datetime (UTC
    if naive) or a WARC-Date string; the default is now.
    """

    def __init__(self, version: str = WARC_1_1, digest: str = "sha1") -> None:
        version = version[5:] if version.upper().startswith("WARC/") else version
        if version not in (WARC_1_0, WARC_1_1):
            raise ArchiveError(f"WARC version {version!r} cannot be written (1.0 or 1.1)")
        if digest not in ALGORITHMS:
            raise ArchiveError(f"unknown digest algorithm {digest!r} (one of {', '.join(ALGORITHMS)})")
        new_hasher(digest)  # fail now when blake3 is not installed
        self.version = version
        self.digest = digest

    # -- the common part
    def _record(self, rtype: str, uri: Optional[str], block: Any, content_type: Optional[str], *,
                date: DateLike, record_id: Optional[str], links: Sequence[Tuple[str, str]],
                extra: Optional[Sequence[Tuple[str, str]]], payload_digest: Optional[str],
                http: Optional[Headers] = None, http_length: int = 0) -> WarcRecord:
        fields: List[Tuple[str, str]] = [
            ("WARC-Type", rtype),
            ("WARC-Record-ID", record_id or new_record_id()),
            ("WARC-Date", warc_date(date, self.version)),
        ]
        if uri is not None:
            fields.append(("WARC-Target-URI", _check_value("WARC-Target-URI", uri)))
        for k, v in links:
            if v:
                fields.append((k, _check_value(k, v)))
        for k, v in extra or ():
            fields.append((_check_value("name", k), _check_value(k, str(v))))
        if content_type:
            fields.append(("Content-Type", _check_value("Content-Type", content_type)))
        fields.append(("WARC-Block-Digest", digest_one(self.digest, block)))
        if payload_digest:
            fields.append(("WARC-Payload-Digest", payload_digest))
        fields.append(("Content-Length", str(len(block))))
        return WarcRecord(rtype, fields, block, self.version, http, http_length)

    def payload_digest_of(self, message: Any, http_length: int, http: Optional[Headers]) -> str:
        """Digest of the transfer-decoded entity body of an HTTP message (chunk framing removed)."""
        te = None
        if http is not None and b"chunked" in bytes(memoryview(message)[:http_length]).lower():
            te = http.get("Transfer-Encoding")
        if te is not None and "chunked" in te.lower():
            pieces = dechunk(message, http_length)    # views into message: the body is not copied
            if pieces is not None:
                return digest_of(self.digest, pieces)
        return digest_one(self.digest, memoryview(message)[http_length:])

    # -- the record types
    def warcinfo(self, info: Mapping[str, Any], filename: Optional[str] = None, *,
                 date: DateLike = None, extra: Optional[Sequence[Tuple[str, str]]] = None) -> WarcRecord:
        """A warcinfo record whose block lists ``info`` as application/warc-fields (empty values left out)."""
        lines = []
        for k, v in info.items():
            if v is None or v == "":
                continue
            for one in (v if isinstance(v, (list, tuple)) else (v,)):
                lines.append(f"{k}: {_check_value(k, str(one))}\r\n")
        block = "".join(lines).encode("utf-8")
        links = [("WARC-Filename", filename)] if filename else []
        return self._record("warcinfo", None, block, WARC_FIELDS, date=date, record_id=None, links=links,
                            extra=extra, payload_digest=None)

    def response(self, uri: str, message: Body, *, date: DateLike = None, ip: Optional[str] = None,
                 concurrent_to: Optional[str] = None, content_type: Optional[str] = None,
                 record_id: Optional[str] = None,
                 extra: Optional[Sequence[Tuple[str, str]]] = None) -> WarcRecord:
        """A response record: ``message`` is the whole response as received (head and body, any
        Transfer-Encoding and Content-Encoding intact). For http(s) URIs the block is
        application/http and the payload digest is over the de-chunked body; other URIs need
        ``content_type`` and their payload is the whole block."""
        return self._exchange_record("response", uri, message, HTTP_RESPONSE, date, ip, concurrent_to,
                                     content_type, record_id, extra)

    def request(self, uri: str, message: Body, *, date: DateLike = None, ip: Optional[str] = None,
                concurrent_to: Optional[str] = None, content_type: Optional[str] = None,
                record_id: Optional[str] = None,
                extra: Optional[Sequence[Tuple[str, str]]] = None) -> WarcRecord:
        """A request record: ``message`` is the request as sent (head and body)."""
        return self._exchange_record("request", uri, message, HTTP_REQUEST, date, ip, concurrent_to,
                                     content_type, record_id, extra)

    def _exchange_record(self, rtype: str, uri: str, message: Body, http_type: str, date: DateLike,
                         ip: Optional[str], concurrent_to: Optional[str], content_type: Optional[str],
                         record_id: Optional[str], extra: Optional[Sequence[Tuple[str, str]]]) -> WarcRecord:
        block = bytes_of(message)
        links = [("WARC-IP-Address", ip or ""), ("WARC-Concurrent-To", concurrent_to or "")]
        is_http = uri.lower().startswith(("http:", "https:")) and content_type in (None, http_type)
        if not is_http:
            if not content_type:
                raise ArchiveError(f"a {rtype} record for {uri!r} (not http) needs a content_type")
            return self._record(rtype, uri, block, content_type, date=date, record_id=record_id, links=links,
                                extra=extra, payload_digest=digest_one(self.digest, block))
        n, http = split_http(block)
        return self._record(rtype, uri, block, http_type, date=date, record_id=record_id, links=links,
                            extra=extra, payload_digest=self.payload_digest_of(block, n, http),
                            http=http, http_length=n)

    def revisit(self, uri: str, http_message: Optional[Body], *, payload_digest: Optional[str],
                refers_to: Optional[str] = None, refers_to_uri: Optional[str] = None,
                refers_to_date: Optional[str] = None, profile: str = "identical-payload-digest",
                date: DateLike = None, ip: Optional[str] = None, concurrent_to: Optional[str] = None,
                record_id: Optional[str] = None,
                extra: Optional[Sequence[Tuple[str, str]]] = None) -> WarcRecord:
        """A revisit record whose block is the HTTP head of ``http_message`` only (its body, if
        given, is dropped), as warcio and Heritrix write them.

        ``payload_digest`` is the original's WARC-Payload-Digest (required for
        identical-payload-digest); ``refers_to`` its WARC-Record-ID,
        ``refers_to_uri`` its target URI and ``refers_to_date`` its WARC-Date.
        ``profile`` is "identical-payload-digest", "server-not-modified" or a URI."""
        if profile in PROFILES:
            profile_uri = PROFILES[profile].format(v=self.version)
        elif "://" in profile:
            profile_uri = profile
        else:
            raise ArchiveError(f"unknown revisit profile {profile!r} (one of {', '.join(PROFILES)})")
        if profile_uri.endswith("identical-payload-digest") and not payload_digest:
            raise ArchiveError("an identical-payload-digest revisit needs the original's payload digest")
        block: Any = b""
        http = None
        n = 0
        if http_message is not None:
            msg = bytes_of(http_message)
            n, http = split_http(msg)
            block = bytes(memoryview(msg)[:n])
        links = [("WARC-IP-Address", ip or ""), ("WARC-Concurrent-To", concurrent_to or ""),
                 ("WARC-Refers-To", refers_to or ""), ("WARC-Refers-To-Target-URI", refers_to_uri or ""),
                 ("WARC-Refers-To-Date", refers_to_date or ""), ("WARC-Profile", profile_uri)]
        return self._record("revisit", uri, block, HTTP_RESPONSE if block else None, date=date,
                            record_id=record_id, links=links, extra=extra, payload_digest=payload_digest,
                            http=http, http_length=n)

    def metadata(self, uri: Optional[str], body: Body, content_type: str = WARC_FIELDS, *,
                 refers_to: Optional[str] = None, concurrent_to: Optional[str] = None, date: DateLike = None,
                 record_id: Optional[str] = None,
                 extra: Optional[Sequence[Tuple[str, str]]] = None) -> WarcRecord:
        """A metadata record (default type application/warc-fields) about ``refers_to``/``uri``."""
        return self._plain("metadata", uri, body, content_type, refers_to, concurrent_to, date, record_id, extra)

    def resource(self, uri: str, body: Body, content_type: str, *, concurrent_to: Optional[str] = None,
                 date: DateLike = None, record_id: Optional[str] = None,
                 extra: Optional[Sequence[Tuple[str, str]]] = None) -> WarcRecord:
        """A resource record: ``body`` is the resource itself, without protocol framing."""
        return self._plain("resource", uri, body, content_type, None, concurrent_to, date, record_id, extra)

    def conversion(self, uri: str, body: Body, content_type: str, *, refers_to: Optional[str] = None,
                   date: DateLike = None, record_id: Optional[str] = None,
                   extra: Optional[Sequence[Tuple[str, str]]] = None) -> WarcRecord:
        """A conversion record: ``body`` is another format of the record ``refers_to``."""
        return self._plain("conversion", uri, body, content_type, refers_to, None, date, record_id, extra)

    def _plain(self, rtype: str, uri: Optional[str], body: Body, content_type: str, refers_to: Optional[str],
               concurrent_to: Optional[str], date: DateLike, record_id: Optional[str],
               extra: Optional[Sequence[Tuple[str, str]]]) -> WarcRecord:
        block = bytes_of(body)
        links = [("WARC-Concurrent-To", concurrent_to or ""), ("WARC-Refers-To", refers_to or "")]
        # the payload of a non-HTTP block is the block: labelled so that indexes need not hash it again
        return self._record(rtype, uri, block, content_type, date=date, record_id=record_id, links=links,
                            extra=extra, payload_digest=digest_one(self.digest, block))

