"""Write WARC files: records with every mandatory header, digests, one compressed unit per record.

    from warchive.warc.writer import WarcWriter
    with WarcWriter("crawl/", prefix="MYCRAWL", warcinfo={"operator": "Jane"},
                    on_record=lambda w: print(w.filename, w.offset, w.length)) as out:
        resp, req = out.write_exchange("https://example.com/", request_bytes, response_bytes)
        out.write_revisit("https://example.com/b", head_bytes, payload_digest=resp.payload_digest,
                          refers_to=resp.record_id, refers_to_uri=resp.target_uri,
                          refers_to_date=resp.date)

Two layers: ``RecordBuilder`` makes a ``WarcRecord`` (head fields and block,
digests computed, nothing written), ``WarcWriter`` encodes records into
files and reports where each one went (``Written``: file name, offset and
length as warcio reports them, plus the heads an index line needs).

A record is encoded whole in memory and handed to the kernel in one
``writev`` call, so a killed process leaves the file valid up to its last
complete record; ``warchive recover`` (warchive.warc.check.recover) cuts a
torn tail off an ``.open`` file. Files are named
``PREFIX-TIMESTAMP17-SERIAL-HOST.warc.gz``, written as ``NAME.open``, and
renamed after an fsync of the file (and of the directory after the rename).

Encodings (docs/format.md, "Writing WARC files"):

  gzip   one member per record, deflate by ISA-L (igzip), FEXTRA with
         Wget's ``sl`` subfield: ``'s' 'l' 8 0 CLEN(le32) ULEN(le32)``,
         CLEN the whole member's size, ULEN the record's size (with
         threads=1, large request/response members hold the WARC head in a
         stored deflate block, then the block deflated by a worker thread)
  zstd   one Zstandard frame per record (IIPC "Zstandard Compression for
         WARC Files 1.0"), an optional dictionary first in a skippable
         frame (magic 0x184D2A5D), itself zstd-compressed
  none   the records as they are, each followed by CRLF CRLF

This module must not import the index layer (the capture layer turns a
``Written`` into an index line with warchive.index.cdx.written_record_line).
"""

from __future__ import annotations

import datetime as _dt
import os
import socket
import struct
import threading
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from isal import igzip_lib, isal_zlib

from .. import __version__
from ..durable import fsync_dir
from ..errors import ArchiveError, WriteError
from .digest import ALGORITHMS, dechunk, digest_of, digest_one, new_hasher, label
from .headers import Headers, http_head, parse_head

Body = Union[bytes, bytearray, memoryview, BinaryIO]
DateLike = Union[None, str, _dt.datetime]

WARC_1_0 = "1.0"
WARC_1_1 = "1.1"
COMPRESSIONS = ("gzip", "zstd", "none")
EXTENSIONS = {"gzip": ".warc.gz", "zstd": ".warc.zst", "none": ".warc"}
DEFAULT_MAX_SIZE = 1_000_000_000
# ISA-L level 2: 1.12x the size of warcio's zlib -9 members on the Wget corpus, 2-3x faster than
# level 3 (1.10x); level 1 is no faster and larger (bench/results/writer-compare-*.txt)
DEFAULT_GZIP_LEVEL = 2
DEFAULT_ZSTD_LEVEL = 3
HTTP_RESPONSE = "application/http; msgtype=response"
HTTP_REQUEST = "application/http; msgtype=request"
WARC_FIELDS = "application/warc-fields"
PROFILES = {
    "identical-payload-digest": "http://netpreserve.org/warc/{v}/revisit/identical-payload-digest",
    "server-not-modified": "http://netpreserve.org/warc/{v}/revisit/server-not-modified",
}
CRLF2 = b"\r\n\r\n"
WRITEBACK_EVERY = 32 << 20   # with fsync on close: start the kernel's writeback every 32 MiB written
_SL_MAX = 0xFFFFFFFF


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


def new_record_id() -> str:
    """<urn:uuid:...> of a random (version 4) UUID."""
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40
    b[8] = (b[8] & 0x3F) | 0x80
    h = b.hex()
    return f"<urn:uuid:{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}>"


def _bytes_of(body: Body) -> Any:
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
        block = _bytes_of(message)
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
            msg = _bytes_of(http_message)
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
        block = _bytes_of(body)
        links = [("WARC-Concurrent-To", concurrent_to or ""), ("WARC-Refers-To", refers_to or "")]
        # the payload of a non-HTTP block is the block: labelled so that indexes need not hash it again
        return self._record(rtype, uri, block, content_type, date=date, record_id=record_id, links=links,
                            extra=extra, payload_digest=digest_one(self.digest, block))


# --------------------------------------------------------------------------- encodings

def _gzip_member(data: Any, level: int) -> List[bytes]:
    """One gzip member with Wget's `sl` subfield, as pieces (header, deflate data, trailer)."""
    deflated = igzip_lib.compress(data, level, igzip_lib.COMP_DEFLATE)
    trailer = struct.pack("<II", isal_zlib.crc32(data) & 0xFFFFFFFF, len(data) & 0xFFFFFFFF)
    clen = 24 + len(deflated) + 8
    if clen > _SL_MAX or len(data) > _SL_MAX:
        header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"        # too big for `sl`: a plain member
    else:
        #          magic    CM  FLG=FEXTRA MTIME=0        XFL OS=unknown  XLEN=12   'sl' LEN=8
        header = b"\x1f\x8b\x08\x04\x00\x00\x00\x00\x00\xff" + b"\x0c\x00" + b"sl\x08\x00" + \
            struct.pack("<II", clen, len(data))
    return [header, deflated, trailer]


class _Posted:
    """A block being deflated (with CRLF CRLF after it) by the writer's C worker while the caller
    computes the record's digests; ``result()`` once, or ``discard()`` when it is not used."""

    __slots__ = ("worker", "block", "done")

    def __init__(self, worker: Any, block: Any) -> None:
        self.worker = worker
        self.block = block
        self.done = False
        worker.post(block, CRLF2)

    def result(self) -> bytes:
        self.done = True
        return self.worker.result()

    def discard(self) -> None:
        if not self.done:
            self.done = True
            try:
                self.worker.result()
            except ArchiveError:
                pass


def _split_member(head: bytes, block: Any, deflated: bytes) -> Optional[List[bytes]]:
    """A gzip member whose deflate stream is the head in one stored (uncompressed) block followed
    by ``deflated``, the separately compressed final stream of block + CRLF CRLF: one valid deflate
    stream, since a stored block ends on a byte boundary and the next block starts on one. None
    when it cannot be made so."""
    if len(head) > 65535:
        return None
    stored = b"\x00" + struct.pack("<HH", len(head), len(head) ^ 0xFFFF) + head
    ulen = len(head) + len(block) + 4
    clen = 24 + len(stored) + len(deflated) + 8
    if clen > _SL_MAX or ulen > _SL_MAX:
        return None
    crc = isal_zlib.crc32(CRLF2, isal_zlib.crc32(block, isal_zlib.crc32(head))) & 0xFFFFFFFF
    header = b"\x1f\x8b\x08\x04\x00\x00\x00\x00\x00\xff\x0c\x00sl\x08\x00" + struct.pack("<II", clen, ulen)
    return [header + stored, deflated, struct.pack("<II", crc, ulen)]


class _Encoder:
    """Turns an uncompressed record into the pieces that are written (one unit per record)."""

    def __init__(self, compression: str, level: Optional[int], zstd_dict: Optional[bytes]) -> None:
        if compression not in COMPRESSIONS:
            raise ArchiveError(f"unknown compression {compression!r} (one of {', '.join(COMPRESSIONS)})")
        self.compression = compression
        self._zc: Any = None
        self.preamble = b""
        if compression == "gzip":
            self.level = DEFAULT_GZIP_LEVEL if level is None else level
            if not 0 <= self.level <= 3:
                raise ArchiveError(f"ISA-L compression levels are 0 to 3, not {self.level}")
        elif compression == "zstd":
            import zstandard

            self.level = DEFAULT_ZSTD_LEVEL if level is None else level
            params: Dict[str, Any] = {"level": self.level, "write_checksum": True, "write_content_size": True}
            if zstd_dict is not None:
                params["dict_data"] = zstandard.ZstdCompressionDict(zstd_dict)
                packed = zstandard.ZstdCompressor(level=19).compress(zstd_dict)
                self.preamble = struct.pack("<II", 0x184D2A5D, len(packed)) + packed
            self._zc = zstandard.ZstdCompressor(**params)
        else:
            self.level = 0
        if zstd_dict is not None and compression != "zstd":
            raise ArchiveError("a dictionary is only used with zstd compression")

    @property
    def extension(self) -> str:
        return EXTENSIONS[self.compression]

    def encode(self, record: bytes) -> Tuple[List[Any], int]:
        """(pieces, length): length is what warcio reports (member/frame size; record without CRLFCRLF)."""
        if self.compression == "gzip":
            pieces = _gzip_member(record, self.level)
            return pieces, sum(len(p) for p in pieces)
        if self.compression == "zstd":
            frame = self._zc.compress(record)
            return [frame], len(frame)
        return [record], len(record) - 4


# --------------------------------------------------------------------------- files

@dataclass
class Written:
    """Where a record went: ``filename`` (final base name), ``offset``, ``length`` as warcio reports
    them, and the record's heads (``headers`` WARC fields, ``http`` HTTP head or None)."""

    filename: str
    path: str                       # final path of the file (it is NAME.open until closed)
    offset: int
    length: int
    type: str
    headers: Headers
    http: Optional[Headers]
    uncompressed_length: int

    _it = None                      # quacks like warchive.warc.Record for the index formatter

    @property
    def record_id(self) -> Optional[str]:
        return self.headers.get("WARC-Record-ID")

    @property
    def date(self) -> Optional[str]:
        return self.headers.get("WARC-Date")

    @property
    def payload_digest(self) -> Optional[str]:
        return self.headers.get("WARC-Payload-Digest")

    @property
    def block_digest(self) -> Optional[str]:
        return self.headers.get("WARC-Block-Digest")

    @property
    def target_uri(self) -> Optional[str]:
        """WARC-Target-URI as warcio presents it (as warchive.warc.Record.target_uri)."""
        uri = self.headers.get("WARC-Target-URI")
        if uri is not None:
            if uri.startswith("<") and uri.endswith(">"):
                uri = uri[1:-1]
            uri = uri.replace(" ", "%20")
        return uri


def _write_all(fd: int, pieces: List[Any], path: str, offset: int) -> int:
    """Write pieces with one writev (more only if the kernel takes part of them); bytes written."""
    total = 0
    for p in pieces:
        total += len(p)
    done = 0
    try:
        done = os.writev(fd, pieces)
        if done == total:
            return total
        views = [memoryview(p).cast("B") for p in pieces]
        n = done
        while True:
            while views and n >= len(views[0]):
                n -= len(views[0])
                views.pop(0)
            if views and n:
                views[0] = views[0][n:]
            if done >= total:
                return total
            n = os.writev(fd, views)
            done += n
    except OSError as e:
        raise WriteError(path, offset + done, f"write failed: {e.strerror or e}",
                         "the file is valid up to the last complete record; warchive recover it") from e


class WarcFile:
    """One output file being written: ``NAME.open`` until ``close()`` renames it ``NAME``."""

    def __init__(self, directory: str, name: str, preamble: bytes = b"") -> None:
        self.directory = directory
        self.name = name
        self.path = os.path.join(directory, name)
        self.open_path = self.path + ".open"
        if os.path.exists(self.path):
            raise WriteError(self.path, None, "the file exists already", "choose another prefix or directory")
        try:
            self.fd = os.open(self.open_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                              0o644)
        except OSError as e:
            raise WriteError(self.open_path, None, f"cannot create: {e.strerror or e}",
                             "remove the stale .open file (warchive recover) or choose another prefix") from e
        self.size = 0
        self.records = 0
        self.broken = False
        self.writeback = False  # set by the writer when it fsyncs on close
        self._clean = 0
        if preamble:
            self.size += _write_all(self.fd, [preamble], self.open_path, 0)

    def write(self, pieces: List[Any]) -> int:
        """Append one encoded record; its offset. A failed write is cut off again, so the file
        stays whole; if even that fails, the file is left as NAME.open when closed."""
        off = self.size
        try:
            self.size += _write_all(self.fd, pieces, self.open_path, off)
            if self.writeback and self.size - self._clean >= WRITEBACK_EVERY:
                self._start_writeback()
        except WriteError:
            try:
                os.ftruncate(self.fd, off)
                os.lseek(self.fd, off, os.SEEK_SET)
            except OSError:
                self.broken = True
            raise
        self.records += 1
        return off

    def _start_writeback(self) -> None:
        """Have the kernel start writing what was written so far (POSIX_FADV_DONTNEED starts the
        writeback of dirty pages without waiting, as sync_file_range would), so the fsync at
        close waits for the tail only; the file's pages then leave the page cache."""
        try:
            os.posix_fadvise(self.fd, self._clean, self.size - self._clean, os.POSIX_FADV_DONTNEED)
        except (AttributeError, OSError):
            self.writeback = False
        self._clean = self.size

    def close(self, fsync: bool = True) -> str:
        """fsync, rename NAME.open to NAME, fsync the directory; the final path."""
        if self.fd < 0:
            return self.path
        try:
            if fsync:
                os.fsync(self.fd)
        finally:
            os.close(self.fd)
            self.fd = -1
        if self.broken:  # a torn record could not be cut off: never make it look complete
            return self.open_path
        os.rename(self.open_path, self.path)
        if fsync:
            fsync_dir(self.directory, strict=False)
        return self.path


# --------------------------------------------------------------------------- hybrid mode

# Media whose bytes are compressed already (deflating them again wins nothing)
MEDIA_PREFIXES = ("image/", "audio/", "video/", "font/woff")
MEDIA_TYPES = frozenset({
    "application/zip", "application/gzip", "application/x-gzip", "application/x-bzip2", "application/x-xz",
    "application/zstd", "application/x-7z-compressed", "application/x-rar-compressed", "application/vnd.rar",
    "application/pdf", "application/ogg", "application/x-shockwave-flash", "application/java-archive",
    "application/epub+zip", "application/vnd.android.package-archive", "application/octet-stream+gzip",
    "application/font-woff", "application/font-woff2",
})
NOT_MEDIA = frozenset({"image/svg+xml", "image/bmp", "image/x-ms-bmp", "image/tiff", "image/x-icon",
                       "image/vnd.microsoft.icon", "audio/wav", "audio/x-wav", "audio/wave",
                       "image/x-portable-pixmap"})
COMPRESSED_ENCODINGS = frozenset({"gzip", "x-gzip", "br", "deflate", "zstd", "compress"})


@dataclass
class HybridPolicy:
    """Which records go to the separate uncompressed ``.warc`` file in hybrid mode: response and
    resource records of already-compressed media (by Content-Type, or a compressing
    Content-Encoding) whose payload has at least ``min_size`` bytes."""

    min_size: int = 64 * 1024
    media_prefixes: Tuple[str, ...] = MEDIA_PREFIXES
    media_types: frozenset = field(default_factory=lambda: MEDIA_TYPES)
    not_media: frozenset = field(default_factory=lambda: NOT_MEDIA)
    content_encodings: frozenset = field(default_factory=lambda: COMPRESSED_ENCODINGS)

    def is_media(self, record: WarcRecord) -> bool:
        if record.type not in ("response", "resource"):
            return False
        if len(record.block) - record.http_length < self.min_size:
            return False
        if record.http is not None:
            ctype = record.http.get("Content-Type")
            enc = (record.http.get("Content-Encoding") or "").strip().lower()
            if enc in self.content_encodings:
                return True
        else:
            ctype = record.get("Content-Type")
        mime = (ctype or "").split(";", 1)[0].strip().lower()
        if not mime or mime in self.not_media:
            return False
        return mime in self.media_types or mime.startswith(self.media_prefixes)


# --------------------------------------------------------------------------- the writer

def _timestamp17(now: Optional[_dt.datetime] = None) -> str:
    now = now or _dt.datetime.now(_dt.timezone.utc)
    return now.strftime("%Y%m%d%H%M%S") + f"{now.microsecond // 1000:03d}"


class _Stream:
    """A sequence of files of one encoding (the main one, or the media one in hybrid mode)."""

    def __init__(self, encoder: _Encoder, serial: int) -> None:
        self.encoder = encoder
        self.serial = serial
        self.file: Optional[WarcFile] = None


class WarcWriter:
    """Writes records into ``PREFIX-TIMESTAMP17-SERIAL-HOST.warc.gz`` files in ``directory``.

    compression  "gzip" (default; ISA-L, one member per record, `sl` field), "zstd", "none"
    version      "1.1" (default) or "1.0"
    digest       "sha1" (default), "sha256" or "blake3"
    max_size     roll over to a new file before a record would take the file past this many
                 bytes (a file holds at least one record besides its warcinfo); default 1 GB
    warcinfo     fields of the warcinfo record that opens each file (operator, robots,
                 http-header-user-agent, dedup, isPartOf, description, ...); software,
                 format, conformsTo, hostname and digest-algorithm are filled in
    on_record    called with a ``Written`` for every record, as soon as it is in the file
    hybrid       a HybridPolicy: media records go to a parallel uncompressed ``.warc`` series
    level        compression level (ISA-L 0-3, default 2; zstd 1-22, default 3)
    zstd_dict    a zstd dictionary, stored at the start of each .warc.zst file
    serial       the first serial number (default 0)
    fsync        fsync each file (and its directory) when it is closed (default True; False
                 only where durability does not matter, e.g. tests on tmpfs)
    writeback    with fsync: start the kernel's writeback every 32 MiB (posix_fadvise
                 DONTNEED), so that close waits for the tail only (default True)
    threads      1: a C worker thread (kernel gzip_write) deflates each response/request block
                 of at least THREAD_MIN bytes while the caller's thread computes its digests
                 (gzip only). Default: 1 where the machine has two or more CPUs, else 0. The
                 member then holds the WARC head in a stored deflate block. The worker waits
                 SPIN_US for the next block (spinning, without the GIL) before it sleeps, so a
                 burst of records pays no thread wake-ups (50-100 us each on the VMs measured).

    Not thread-safe for building, but ``write`` holds a lock, so threads may share a writer.
    """

    THREAD_MIN = 512         # smaller blocks are compressed in the caller's thread (a hand-off costs more)
    SPIN_US = 200            # the worker waits this long for the next block before it sleeps

    def __init__(self, directory: Union[str, "os.PathLike[str]"], prefix: str = "WARCHIVE", *,
                 compression: str = "gzip", version: str = WARC_1_1, digest: str = "sha1",
                 max_size: int = DEFAULT_MAX_SIZE, warcinfo: Optional[Mapping[str, Any]] = None,
                 host: Optional[str] = None, on_record: Optional[Callable[[Written], Any]] = None,
                 hybrid: Optional[HybridPolicy] = None, level: Optional[int] = None,
                 zstd_dict: Optional[bytes] = None, serial: int = 0, fsync: bool = True,
                 threads: Optional[int] = None, writeback: bool = True) -> None:
        self.directory = os.fspath(directory)
        os.makedirs(self.directory, exist_ok=True)
        if "-" in prefix or "/" in prefix or not prefix:
            raise ArchiveError(f"a file prefix must be non-empty, without '-' or '/': {prefix!r}")
        self.prefix = prefix
        self.host = (host or socket.gethostname() or "localhost").replace("-", "_").replace("/", "_")
        self.builder = RecordBuilder(version, digest)
        self.max_size = max_size
        self.on_record = on_record
        self.hybrid = hybrid
        self.info: Dict[str, Any] = dict(warcinfo or {})
        self._main = _Stream(_Encoder(compression, level, zstd_dict), serial)
        self._media = _Stream(_Encoder("none", None, None), serial) if hybrid is not None else None
        self.fsync = fsync
        self.writeback = writeback
        self._worker: Optional[Any] = None
        if threads is None:
            threads = 1 if (os.cpu_count() or 1) >= 2 else 0
        if threads > 0 and compression == "gzip":
            from .._ext.gzip_write import DeflateWorker

            self._worker = DeflateWorker(self._main.encoder.level, self.SPIN_US)
        self.closed_files: List[str] = []
        self._lock = threading.Lock()
        self._closed = False

    # -- naming and files
    def _next_name(self, stream: _Stream) -> str:
        name = f"{self.prefix}-{_timestamp17()}-{stream.serial:05d}-{self.host}{stream.encoder.extension}"
        stream.serial += 1
        return name

    def warcinfo_fields(self) -> Dict[str, Any]:
        fields: Dict[str, Any] = {
            "software": f"warchive/{__version__}",
            "format": f"WARC File Format {self.builder.version}",
            "conformsTo": ("http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"
                           if self.builder.version == WARC_1_1 else
                           "http://bibnum.bnf.fr/WARC/WARC_ISO_28500_version1_latestdraft.pdf"),
            "hostname": socket.gethostname(),
            "digest-algorithm": self.builder.digest,
        }
        fields.update(self.info)
        return fields

    def _open(self, stream: _Stream) -> WarcFile:
        while True:
            name = self._next_name(stream)
            if not os.path.exists(os.path.join(self.directory, name)) and \
                    not os.path.exists(os.path.join(self.directory, name + ".open")):
                break
        f = WarcFile(self.directory, name, stream.encoder.preamble)
        f.writeback = self.fsync and self.writeback
        stream.file = f
        rec = self.builder.warcinfo(self.warcinfo_fields(), filename=name)
        self._put(stream, f, rec)
        f.records = 0  # the warcinfo does not count towards "holds a record"
        return f

    def _close_stream(self, stream: _Stream) -> None:
        if stream.file is not None:
            f, stream.file = stream.file, None
            self.closed_files.append(f.close(self.fsync))

    def _put(self, stream: _Stream, f: WarcFile, rec: WarcRecord,
             encoded: Optional[Tuple[int, List[Any], int]] = None) -> Written:
        ulen, pieces, length = encoded if encoded is not None else self._encode(stream, rec)
        off = f.write(pieces)
        w = Written(f.name, f.path, off, length, rec.type, Headers(f"WARC/{rec.version}", "", rec.fields),
                    rec.http, ulen)
        if self.on_record is not None:
            self.on_record(w)
        return w

    @staticmethod
    def _encode(stream: _Stream, rec: WarcRecord, tail: Optional[Any] = None) -> Tuple[int, List[Any], int]:
        """(uncompressed length, pieces to write, reported length) of a record; ``tail`` is the
        _Posted deflate of rec.block when the worker compressed it already."""
        if tail is not None:
            if stream.encoder.compression == "gzip" and stream.encoder.level == tail.worker.level:
                head = rec.head_bytes()
                pieces = _split_member(head, rec.block, tail.result())
                if pieces is not None:
                    return len(head) + len(rec.block) + 4, pieces, len(pieces[0]) + len(pieces[1]) + 8
            tail.discard()
        data = rec.to_bytes()
        pieces, length = stream.encoder.encode(data)
        return len(data), pieces, length

    # -- writing
    def write(self, record: WarcRecord, _tail: Optional[Any] = None) -> Written:
        """Write one record (built by ``self.builder``) in one write; where it went."""
        if record.version != self.builder.version:
            raise ArchiveError(f"a WARC/{record.version} record in a WARC/{self.builder.version} writer")
        with self._lock:
            if self._closed:
                raise ArchiveError("the writer is closed")
            stream = self._media if (self._media is not None and self.hybrid is not None
                                     and self.hybrid.is_media(record)) else self._main
            encoded = self._encode(stream, record, _tail)
            size = encoded[2] + (4 if stream.encoder.compression == "none" else 0)
            f = stream.file
            if f is not None and f.records > 0 and f.size + size > self.max_size:
                self._close_stream(stream)
                f = None
            if f is None:
                f = self._open(stream)
            return self._put(stream, f, record, encoded)

    def _prefetch(self, message: Any) -> Optional[_Posted]:
        """Start deflating a block in the worker while this thread computes its digests."""
        w = self._worker
        if w is None or len(message) < self.THREAD_MIN or w.busy:
            return None
        if w.pid != os.getpid():    # a forked child has no worker thread
            self._worker = None
            return None
        return _Posted(w, message)

    def write_response(self, uri: str, message: Body, **kw: Any) -> Written:
        message = _bytes_of(message)
        tail = self._prefetch(message)
        try:
            return self.write(self.builder.response(uri, message, **kw), tail)
        finally:
            if tail is not None:
                tail.discard()

    def write_request(self, uri: str, message: Body, **kw: Any) -> Written:
        message = _bytes_of(message)
        tail = self._prefetch(message)
        try:
            return self.write(self.builder.request(uri, message, **kw), tail)
        finally:
            if tail is not None:
                tail.discard()

    def write_exchange(self, uri: str, request: Body, response: Body, *, date: DateLike = None,
                       ip: Optional[str] = None, response_extra: Optional[Sequence[Tuple[str, str]]] = None,
                       request_extra: Optional[Sequence[Tuple[str, str]]] = None) -> Tuple[Written, Written]:
        """The response, then its request, each naming the other in WARC-Concurrent-To
        (same WARC-Date). Returns (response, request)."""
        when = warc_date(date, self.builder.version)
        resp_id, req_id = new_record_id(), new_record_id()
        response, request = _bytes_of(response), _bytes_of(request)
        tail = self._prefetch(response)
        try:
            resp = self.builder.response(uri, response, date=when, ip=ip, record_id=resp_id,
                                         concurrent_to=req_id, extra=response_extra)
            req = self.builder.request(uri, request, date=when, ip=ip, record_id=req_id, concurrent_to=resp_id,
                                       extra=request_extra)
            written = self.write(resp, tail)
        finally:
            if tail is not None:
                tail.discard()
        req_tail = self._prefetch(request)
        try:
            return written, self.write(req, req_tail)
        finally:
            if req_tail is not None:
                req_tail.discard()

    def write_revisit(self, uri: str, http_message: Optional[Body], **kw: Any) -> Written:
        return self.write(self.builder.revisit(uri, http_message, **kw))

    def write_metadata(self, uri: Optional[str], body: Body, content_type: str = WARC_FIELDS, **kw: Any) -> Written:
        return self.write(self.builder.metadata(uri, body, content_type, **kw))

    def write_resource(self, uri: str, body: Body, content_type: str, **kw: Any) -> Written:
        return self.write(self.builder.resource(uri, body, content_type, **kw))

    def write_conversion(self, uri: str, body: Body, content_type: str, **kw: Any) -> Written:
        return self.write(self.builder.conversion(uri, body, content_type, **kw))

    # -- state
    @property
    def current_files(self) -> List[str]:
        """Paths (NAME.open) of the files being written."""
        return [s.file.open_path for s in (self._main, self._media) if s is not None and s.file is not None]

    def roll_over(self) -> None:
        """Close the current files now (the next record opens new ones)."""
        with self._lock:
            self._close_stream(self._main)
            if self._media is not None:
                self._close_stream(self._media)

    def close(self) -> List[str]:
        """Close (fsync, rename) every open file; the paths of all files closed so far."""
        if not self._closed:
            self.roll_over()
            self._closed = True
            if self._worker is not None:
                self._worker.close()
                self._worker = None
        return list(self.closed_files)

    def __enter__(self) -> "WarcWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


# --------------------------------------------------------------------------- raw encoding for tools

def encode_record(data: bytes, compression: str = "gzip", level: Optional[int] = None) -> bytes:
    """One stored record (head + block + CRLFCRLF) encoded as a single gzip member / zstd frame /
    itself (for warchive recompress and tests)."""
    pieces, _ = _Encoder(compression, level, None).encode(data)
    return b"".join(pieces)


__all__ = ["HybridPolicy", "RecordBuilder", "WarcFile", "WarcRecord", "WarcWriter", "Written",
           "encode_record", "label", "new_record_id", "warc_date"]
