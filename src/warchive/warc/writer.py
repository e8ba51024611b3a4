"""Write WARC files: a series of files of one encoding, rolled over by size, each opened by a warcinfo.

    from warchive.warc.writer import WarcWriter
    with WarcWriter("crawl/", prefix="MYCRAWL", warcinfo={"operator": "Jane"},
                    on_record=lambda w: print(w.filename, w.offset, w.length)) as out:
        resp, req = out.write_exchange("https://example.com/", request_bytes, response_bytes)
        out.write_revisit("https://example.com/b", head_bytes, payload_digest=resp.payload_digest,
                          refers_to=resp.record_id, refers_to_uri=resp.target_uri,
                          refers_to_date=resp.date)

``WarcWriter`` builds records (warchive.warc.builder: ``RecordBuilder``
makes a ``WarcRecord``, digests computed, nothing written), encodes each as
one unit (warchive.warc.encode: gzip member with Wget's ``sl``, zstd frame,
or none), appends it to the current file (warchive.warc.warcfile:
``WarcFile``, ``NAME.open`` renamed when closed) and reports where it went
(``Written``: file name, offset and length as warcio reports them, plus the
heads an index line needs). This module decides which file: files are named
``PREFIX-TIMESTAMP17-SERIAL-HOST.warc.gz``, a new one is started before a
record would take the current one past ``max_size``, and in hybrid mode
already-compressed media go to a parallel uncompressed series.

The names of the API (docs/api.md) can all be imported from here.

This module must not import the index layer (the capture layer turns a
``Written`` into an index line with warchive.index.cdx.written_record_line).
"""

from __future__ import annotations

import datetime as _dt
import os
import socket
import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .. import __version__
from .._ext.gzip_write import DeflateWorker
from ..errors import ArchiveError
from .builder import WARC_1_1, WARC_FIELDS, Body, DateLike, RecordBuilder, WarcRecord, bytes_of, warc_date
from .digest import label
from .encode import Encoder, Posted, encode_record, split_member
from .headers import Headers
from .record import new_record_id
from .warcfile import WarcFile, Written

DEFAULT_MAX_SIZE = 1_000_000_000


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

    def __init__(self, encoder: Encoder, serial: int) -> None:
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

    def __init__(self, directory: Union[str, os.PathLike[str]], prefix: str = "WARCHIVE", *,
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
        self._main = _Stream(Encoder(compression, level, zstd_dict), serial)
        self._media = _Stream(Encoder("none", None, None), serial) if hybrid is not None else None
        self.fsync = fsync
        self.writeback = writeback
        self._worker: Optional[DeflateWorker] = None
        if threads is None:
            threads = 1 if (os.cpu_count() or 1) >= 2 else 0
        if threads > 0 and compression == "gzip":
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
    def _encode(stream: _Stream, rec: WarcRecord, tail: Optional[Posted] = None) -> Tuple[int, List[Any], int]:
        """(uncompressed length, pieces to write, reported length) of a record; ``tail`` is the
        Posted deflate of rec.block when the worker compressed it already."""
        if tail is not None:
            if stream.encoder.compression == "gzip" and stream.encoder.level == tail.worker.level:
                head = rec.head_bytes()
                pieces = split_member(head, rec.block, tail.result())
                if pieces is not None:
                    return len(head) + len(rec.block) + 4, pieces, len(pieces[0]) + len(pieces[1]) + 8
            tail.discard()
        data = rec.to_bytes()
        pieces, length = stream.encoder.encode(data)
        return len(data), pieces, length

    # -- writing
    def write(self, record: WarcRecord, _tail: Optional[Posted] = None) -> Written:
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

    def _prefetch(self, message: Any) -> Optional[Posted]:
        """Start deflating a block in the worker while this thread computes its digests."""
        w = self._worker
        if w is None or len(message) < self.THREAD_MIN or w.busy:
            return None
        if w.pid != os.getpid():    # a forked child has no worker thread
            self._worker = None
            return None
        return Posted(w, message)

    def write_response(self, uri: str, message: Body, **kw: Any) -> Written:
        return self._write_message(self.builder.response, uri, message, kw)

    def write_request(self, uri: str, message: Body, **kw: Any) -> Written:
        return self._write_message(self.builder.request, uri, message, kw)

    def _write_message(self, build: Callable[..., WarcRecord], uri: str, message: Body,
                       kw: Dict[str, Any]) -> Written:
        """A response or request record, its block deflated by the worker while it is built."""
        message = bytes_of(message)
        tail = self._prefetch(message)
        try:
            return self.write(build(uri, message, **kw), tail)
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
        response, request = bytes_of(response), bytes_of(request)
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



__all__ = ["HybridPolicy", "RecordBuilder", "WarcFile", "WarcRecord", "WarcWriter", "Written",
           "encode_record", "label", "new_record_id", "warc_date"]
