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

A body is bytes (or any bytes-like object), a ``str`` (written as UTF-8), a
binary file object (read to its end) or an iterable of bytes (joined). The
block of a response, request or revisit for an ``http:``/``https:`` URI must
be an HTTP message (its status or request line first): anything else raises
``WriteError`` unless the caller says ``http=False`` (and gives the block's
``content_type``), since a body without its HTTP head cannot be replayed or
indexed as the capture of that URL.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass
from typing import Any, BinaryIO, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import ArchiveError, WriteError
from .digest import ALGORITHMS, dechunk, digest_of, digest_one, new_hasher
from .headers import Headers, http_head, parse_head
from .record import new_record_id

Body = Union[bytes, bytearray, memoryview, str, BinaryIO, Iterable[bytes]]
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


HTTP_SCHEMES = ("http:", "https:")
# the first line of an HTTP/1.x message, read as leniently as warcio reads one (odd reason
# phrases, lower case and non-numeric statuses are archived as received): a response's begins
# HTTP/digit, a request's is METHOD TARGET HTTP/digit...
_STATUS_LINE = re.compile(rb"HTTP/\d", re.IGNORECASE)
_REQUEST_LINE = re.compile(rb"[^ \t\r\n]+[ \t]+[^ \t\r\n]+[ \t]+HTTP/\d[^\r\n]*$", re.IGNORECASE)


def bytes_of(body: Body) -> Any:
    """The bytes of a body: bytes-like (kept as it is), str (encoded as UTF-8), a binary file
    (read to its end) or an iterable of bytes-like pieces (joined)."""
    if isinstance(body, (bytes, bytearray, memoryview)):
        return body
    if isinstance(body, str):
        return body.encode("utf-8")
    read = getattr(body, "read", None)
    if read is not None:
        data = read()
        if isinstance(data, str):
            raise ArchiveError(f"the body {body!r} is a text file: open it in binary mode ('rb')")
        return data
    try:
        pieces = iter(body)
    except TypeError:
        raise ArchiveError(f"a body is bytes, str, a binary file or an iterable of bytes, not "
                           f"{type(body).__name__}") from None
    out = bytearray()
    for p in pieces:
        if not isinstance(p, (bytes, bytearray, memoryview)):
            raise ArchiveError(f"an iterable body yields bytes, not {type(p).__name__}")
        out += p
    return bytes(out)


def is_http_uri(uri: Optional[str]) -> bool:
    return uri is not None and uri[:6].lower().startswith(HTTP_SCHEMES)


def looks_http(rtype: str, block: Any) -> bool:
    """True when ``block`` starts with an HTTP/1.x status line (response, revisit) or request
    line (request)."""
    line = bytes(memoryview(block)[:8192]).split(b"\n", 1)[0].rstrip(b"\r")
    pattern = _REQUEST_LINE if rtype == "request" else _STATUS_LINE
    return pattern.match(line) is not None


def not_http_error(rtype: str, uri: str, block: Any, path: Optional[str] = None,
                   offset: Optional[int] = None) -> WriteError:
    """The error for a record of an http(s) URI whose block is not an HTTP message."""
    what = "request line (GET / HTTP/1.1)" if rtype == "request" else "status line (HTTP/1.1 200 OK)"
    start = bytes(memoryview(block)[:40])
    return WriteError(path, offset,
                      f"the block of a {rtype} record for {uri!r} is not an HTTP message: it starts "
                      f"{start!r}, not with a {what}",
                      "give the message as sent or received, head and body; write_resource for a "
                      "document without its HTTP head; or http=False with its content_type")


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
    raw_head: Optional[bytes] = None            # a copied record's WARC head as it was read

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
        if self.raw_head is not None:
            return self.raw_head
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
        self.path: Optional[str] = None     # named by the errors it raises (the writer's output)

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
                 record_id: Optional[str] = None, extra: Optional[Sequence[Tuple[str, str]]] = None,
                 http: Optional[bool] = None) -> WarcRecord:
        """A response record: ``message`` is the whole response as received (head and body, any
        Transfer-Encoding and Content-Encoding intact). For http(s) URIs the block is
        application/http and the payload digest is over the de-chunked body (a block that is
        not an HTTP message raises WriteError); ``http=False``, or a URI of another scheme,
        needs ``content_type`` and the payload is the whole block."""
        return self._exchange_record("response", uri, message, HTTP_RESPONSE, date, ip, concurrent_to,
                                     content_type, record_id, extra, http)

    def request(self, uri: str, message: Body, *, date: DateLike = None, ip: Optional[str] = None,
                concurrent_to: Optional[str] = None, content_type: Optional[str] = None,
                record_id: Optional[str] = None, extra: Optional[Sequence[Tuple[str, str]]] = None,
                http: Optional[bool] = None) -> WarcRecord:
        """A request record: ``message`` is the request as sent (head and body)."""
        return self._exchange_record("request", uri, message, HTTP_REQUEST, date, ip, concurrent_to,
                                     content_type, record_id, extra, http)

    def _is_http(self, rtype: str, uri: str, block: Any, http: Optional[bool], content_type: Optional[str],
                 http_type: str) -> bool:
        """Whether the block is written as an HTTP message: yes for http(s) URIs unless
        ``http=False``, and then it must be one (WriteError); ``http=True`` for any URI."""
        if http is False:
            return False
        if http is None and not is_http_uri(uri):
            return False
        if content_type not in (None, http_type):
            raise WriteError(self.path, None, f"a {rtype} record for {uri!r} with Content-Type "
                             f"{content_type!r} is not an HTTP message",
                             "pass http=False to write its block as that type")
        if not looks_http(rtype, block):
            raise not_http_error(rtype, uri, block, self.path)
        return True

    def _exchange_record(self, rtype: str, uri: str, message: Body, http_type: str, date: DateLike,
                         ip: Optional[str], concurrent_to: Optional[str], content_type: Optional[str],
                         record_id: Optional[str], extra: Optional[Sequence[Tuple[str, str]]],
                         http: Optional[bool] = None) -> WarcRecord:
        block = bytes_of(message)
        links = [("WARC-IP-Address", ip or ""), ("WARC-Concurrent-To", concurrent_to or "")]
        is_http = self._is_http(rtype, uri, block, http, content_type, http_type)
        if not is_http:
            if not content_type:
                raise ArchiveError(f"a {rtype} record for {uri!r} whose block is not an HTTP message "
                                   "needs a content_type")
            # under an http(s) URI readers take the first line for an HTTP head: no payload is claimed
            payload = None if is_http_uri(uri) else digest_one(self.digest, block)
            return self._record(rtype, uri, block, content_type, date=date, record_id=record_id, links=links,
                                extra=extra, payload_digest=payload)
        n, head = split_http(block)
        return self._record(rtype, uri, block, http_type, date=date, record_id=record_id, links=links,
                            extra=extra, payload_digest=self.payload_digest_of(block, n, head),
                            http=head, http_length=n)

    def revisit(self, uri: str, http_message: Optional[Body], *, payload_digest: Optional[str],
                refers_to: Optional[str] = None, refers_to_uri: Optional[str] = None,
                refers_to_date: Optional[str] = None, profile: str = "identical-payload-digest",
                date: DateLike = None, ip: Optional[str] = None, concurrent_to: Optional[str] = None,
                record_id: Optional[str] = None, extra: Optional[Sequence[Tuple[str, str]]] = None,
                http: Optional[bool] = None) -> WarcRecord:
        """A revisit record whose block is the HTTP head of ``http_message`` only (its body, if
        given, is dropped), as warcio and Heritrix write them; ``http_message`` None: an empty
        block. For an http(s) URI it must be an HTTP response (WriteError), unless ``http=False``:
        then it is the block, whole.

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
        n = 0
        head = None
        if http_message is not None:
            msg = bytes_of(http_message)
            if not len(msg):
                pass
            elif self._is_http("revisit", uri, msg, http, None, HTTP_RESPONSE):
                n, head = split_http(msg)
                block = bytes(memoryview(msg)[:n])
            else:
                block = msg
        links = [("WARC-IP-Address", ip or ""), ("WARC-Concurrent-To", concurrent_to or ""),
                 ("WARC-Refers-To", refers_to or ""), ("WARC-Refers-To-Target-URI", refers_to_uri or ""),
                 ("WARC-Refers-To-Date", refers_to_date or ""), ("WARC-Profile", profile_uri)]
        ctype = (HTTP_RESPONSE if head is not None else "application/octet-stream") if block else None
        return self._record("revisit", uri, block, ctype, date=date,
                            record_id=record_id, links=links, extra=extra, payload_digest=payload_digest,
                            http=head, http_length=n)

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

