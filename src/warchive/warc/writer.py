"""Write WARC files: a series of files of one encoding, rolled over by size, each opened by a
warcinfo; or one file of the caller's choice; or a binary file object.

    from warchive.warc.writer import WarcWriter
    with WarcWriter("single.warc.gz") as out:          # one file (its suffix says the compression)
        out.write_resource("https://example.com/notes.txt", "some text", "text/plain; charset=utf-8")
    with WarcWriter("crawl/", prefix="MYCRAWL", warcinfo={"operator": "Jane"},
                    on_record=lambda w: print(w.filename, w.offset, w.length)) as out:
        req, resp = out.write_exchange("https://example.com/", request_bytes, response_bytes)
        out.write_revisit("https://example.com/b", head_bytes, payload_digest=resp.payload_digest,
                          refers_to=resp.record_id, refers_to_uri=resp.target_uri,
                          refers_to_date=resp.date)

``WarcWriter`` builds records (warchive.warc.builder: ``RecordBuilder``
makes a ``WarcRecord``, digests computed, nothing written), encodes each as
one unit (warchive.warc.encode: gzip member with Wget's ``sl``, zstd frame,
or none), appends it to the current file (warchive.warc.warcfile:
``WarcFile``, ``NAME.open`` renamed when closed) and reports where it went
(``Written``: file name, offset and length as warcio reports them, plus the
heads an index line needs). This module decides which file. Into a
directory, files are named ``PREFIX-TIMESTAMP17-SERIAL-HOST.warc.gz``, a new
one is started before a record would take the current one past
``max_size``, and in hybrid mode already-compressed media go to a parallel
uncompressed series. Into one file (a path ending in ``.warc``,
``.warc.gz`` or ``.warc.zst``, or ``WarcWriter.to_file``), the file is
written as ``PATH.open`` and renamed ``PATH`` when closed. Into a file
object (warchive.warc.streamfile), records are appended to it and nothing is
renamed. ``write_record`` copies a record read by ``warchive.warc.open``
unchanged (warchive.warc.copying).

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
from typing import Any, BinaryIO, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .. import __version__
from .._ext.gzip_write import DeflateWorker
from ..errors import ArchiveError, WriteError
from .builder import WARC_1_1, WARC_FIELDS, Body, DateLike, RecordBuilder, WarcRecord, bytes_of, warc_date
from .copying import copy_of
from .digest import label
from .encode import EXTENSIONS, Encoder, Posted, encode_record, split_member
from .headers import Headers
from .record import new_record_id
from .records import Record
from .streamfile import StreamFile, name_of
from .warcfile import WarcFile, Written

DEFAULT_MAX_SIZE = 1_000_000_000
DEFAULT_PREFIX = "WARCHIVE"
# the name of a WARC file says its compression
SUFFIXES = (("gzip", ".warc.gz"), ("zstd", ".warc.zst"), ("none", ".warc"))
Target = Union[str, "os.PathLike[str]", BinaryIO]
Output = Union[WarcFile, StreamFile]


def compression_of(path: str) -> Optional[str]:
    """The compression a file name's suffix says (.warc.gz, .warc.zst, .warc), or None."""
    low = path.lower()
    for compression, suffix in SUFFIXES:
        if low.endswith(suffix):
            return compression
    return None


def target_kind(target: Any) -> str:
    """"stream", "file" or "directory": what ``WarcWriter(target)`` writes to (docs/api.md).

    A file object (it has ``write``) is a stream. A path ending in .warc, .warc.gz or .warc.zst
    is one file, unless it is an existing directory: that is ambiguous (WriteError). Any other
    path is a directory (made if missing), unless something else exists there (WriteError)."""
    if not isinstance(target, (str, bytes, os.PathLike)):
        if callable(getattr(target, "write", None)):
            return "stream"
        raise ArchiveError(f"a WarcWriter writes to a directory, a file path or a binary file object, "
                           f"not {type(target).__name__}")
    path = os.fsdecode(os.fspath(target))
    if os.path.isdir(path):
        if compression_of(path) is not None:
            raise WriteError(path, None, "is a directory, but its name is a WARC file's",
                             "WarcWriter.to_directory(path) writes into it, WarcWriter.to_file(path) "
                             "writes one file (remove the directory first)")
        return "directory"
    if compression_of(path) is not None:
        return "file"
    if os.path.lexists(path):
        raise WriteError(path, None, "exists and is not a directory",
                         "a WARC file's name ends in .warc, .warc.gz or .warc.zst; "
                         "WarcWriter.to_file(path) writes to any other name")
    return "directory"


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
        self.file: Optional[Output] = None


class WarcWriter:
    """Writes records into ``PREFIX-TIMESTAMP17-SERIAL-HOST.warc.gz`` files in a directory, into
    one file, or into a binary file object: ``target`` says which (``target_kind``; or
    ``into="directory"`` / ``"file"``, as ``to_directory`` and ``to_file`` pass it).

    prefix       the file names' prefix (directory only; default WARCHIVE)
    compression  "gzip" (default; ISA-L, one member per record, `sl` field), "zstd", "none";
                 for one file, its suffix says it (a different compression is an error)
    version      "1.1" (default) or "1.0"
    digest       "sha1" (default), "sha256" or "blake3"
    max_size     roll over to a new file before a record would take the file past this many
                 bytes (a file holds at least one record besides its warcinfo); default 1 GB
                 (directory only)
    warcinfo     fields of the warcinfo record that opens each file (operator, robots,
                 http-header-user-agent, dedup, isPartOf, description, ...); software,
                 format, conformsTo, hostname and digest-algorithm are filled in; False: no
                 warcinfo record (write_warcinfo writes one where the caller wants it)
    on_record    called with a ``Written`` for every record, as soon as it is in the file
    hybrid       a HybridPolicy: media records go to a parallel uncompressed ``.warc`` series
                 (directory only)
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

    def __init__(self, target: Target, prefix: Optional[str] = None, *,
                 compression: Optional[str] = None, version: str = WARC_1_1, digest: str = "sha1",
                 max_size: Optional[int] = None, warcinfo: Union[None, bool, Mapping[str, Any]] = None,
                 host: Optional[str] = None, on_record: Optional[Callable[[Written], Any]] = None,
                 hybrid: Optional[HybridPolicy] = None, level: Optional[int] = None,
                 zstd_dict: Optional[bytes] = None, serial: int = 0, fsync: bool = True,
                 threads: Optional[int] = None, writeback: bool = True, into: Optional[str] = None) -> None:
        kind = into if into is not None else target_kind(target)
        if kind not in ("directory", "file", "stream"):
            raise ArchiveError(f"into is 'directory' or 'file', not {into!r}")
        self.kind = kind
        self._stream_obj: Optional[BinaryIO] = None
        self._path = ""                 # the one file's final path (file), or the directory
        if kind == "stream":
            self._stream_obj = target   # type: ignore[assignment]
            self.directory = ""
        else:
            if not isinstance(target, (str, bytes, os.PathLike)):
                raise ArchiveError(f"into={kind!r} needs a path, not {type(target).__name__}")
            path = os.fsdecode(os.fspath(target))
            if kind == "file":
                self._path = os.path.abspath(path)
                self.directory = os.path.dirname(self._path)
                said = compression_of(path)
                if said is not None and compression is not None and compression != said:
                    raise ArchiveError(f"{path}: the name says {said} compression ({EXTENSIONS[said]}), "
                                       f"not {compression}")
                compression = compression or said
            else:
                self.directory = path
                self._path = path
                os.makedirs(self.directory, exist_ok=True)
        if kind != "directory":
            for name, value in (("prefix", prefix), ("max_size", max_size), ("hybrid", hybrid)):
                if value is not None:
                    raise ArchiveError(f"{name} is for a directory of files; a writer into one file "
                                       f"or file object has none")
        prefix = DEFAULT_PREFIX if prefix is None else prefix
        if "-" in prefix or "/" in prefix or not prefix:
            raise ArchiveError(f"a file prefix must be non-empty, without '-' or '/': {prefix!r}")
        self.prefix = prefix
        self.host = (host or socket.gethostname() or "localhost").replace("-", "_").replace("/", "_")
        self.builder = RecordBuilder(version, digest)
        self.builder.path = self._path or name_of(target) or None
        self.max_size = DEFAULT_MAX_SIZE if max_size is None else max_size
        self.on_record = on_record
        self.hybrid = hybrid
        self.with_warcinfo = warcinfo is not False
        self.info: Dict[str, Any] = dict(warcinfo) if isinstance(warcinfo, Mapping) else {}
        self._main = _Stream(Encoder(compression or "gzip", level, zstd_dict), serial)
        self._media = _Stream(Encoder("none", None, None), serial) if hybrid is not None else None
        self.fsync = fsync
        self.writeback = writeback
        self._worker: Optional[DeflateWorker] = None
        if threads is None:
            threads = 1 if (os.cpu_count() or 1) >= 2 else 0
        if threads > 0 and compression == "gzip":
            self._worker = DeflateWorker(self._main.encoder.level, self.SPIN_US)
        self.closed_files: List[str] = []
        self._sizes: Dict[str, int] = {}     # final path -> bytes, of the files closed
        self._lock = threading.Lock()
        self._closed = False
        if kind != "directory":       # the one output exists from now on, its warcinfo first
            self._open(self._main)

    @classmethod
    def to_file(cls, path: Union[str, "os.PathLike[str]"], **kw: Any) -> "WarcWriter":
        """A writer into the one file ``path`` (written as PATH.open, renamed PATH on close), whatever
        its name; the compression is its suffix's (.warc.gz, .warc.zst, .warc), else ``compression``."""
        return cls(path, into="file", **kw)

    @classmethod
    def to_directory(cls, directory: Union[str, "os.PathLike[str]"], prefix: Optional[str] = None,
                     **kw: Any) -> "WarcWriter":
        """A writer into files named PREFIX-TIMESTAMP17-SERIAL-HOST.warc.gz in ``directory``, whatever its name."""
        return cls(directory, prefix, into="directory", **kw)

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

    def _open(self, stream: _Stream) -> Output:
        f: Output
        if self._stream_obj is not None:
            f = StreamFile(self._stream_obj, stream.encoder.preamble)
        elif self.kind == "file":
            f = WarcFile(self.directory, os.path.basename(self._path), stream.encoder.preamble)
        else:
            while True:
                name = self._next_name(stream)
                if not os.path.exists(os.path.join(self.directory, name)) and \
                        not os.path.exists(os.path.join(self.directory, name + ".open")):
                    break
            f = WarcFile(self.directory, name, stream.encoder.preamble)
        f.writeback = self.fsync and self.writeback
        stream.file = f
        if self.with_warcinfo:
            rec = self.builder.warcinfo(self.warcinfo_fields(), filename=f.name or None)
            self._put(stream, f, rec)
            f.records = 0  # the warcinfo does not count towards "holds a record"
        return f

    def _close_stream(self, stream: _Stream) -> None:
        if stream.file is not None:
            f, stream.file = stream.file, None
            path = f.close(self.fsync)
            self._sizes[path] = f.size
            self.closed_files.append(path)

    def _put(self, stream: _Stream, f: Output, rec: WarcRecord,
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
        if record.raw_head is None and record.version != self.builder.version:
            raise ArchiveError(f"a WARC/{record.version} record in a WARC/{self.builder.version} writer")
        with self._lock:
            if self._closed:
                raise ArchiveError("the writer is closed")
            stream = self._media if (self._media is not None and self.hybrid is not None
                                     and self.hybrid.is_media(record)) else self._main
            encoded = self._encode(stream, record, _tail)
            size = encoded[2] + (4 if stream.encoder.compression == "none" else 0)
            f = stream.file
            if f is not None and f.records > 0 and f.size + size > self.max_size and self.kind == "directory":
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

    def write_record(self, record: Union[Record, WarcRecord], *, check_digests: bool = True,
                     http: Optional[bool] = None) -> Written:
        """Copy a record read by ``warchive.warc.open`` (the iterator still on it, its payload not
        read): its WARC head and block unchanged, byte for byte, in a unit of its own. Its digests
        are checked first (a mismatch raises WriteError, unless ``check_digests=False``); a
        response, request or revisit of an http(s) URI must hold an HTTP message (unless
        ``http=False``). A ``WarcRecord`` (RecordBuilder's) is written as ``write`` writes it."""
        if isinstance(record, WarcRecord):
            return self.write(record)
        return self.write(copy_of(record, check_digests, http))

    def write_warcinfo(self, info: Mapping[str, Any], **kw: Any) -> Written:
        """A warcinfo record of the fields ``info`` (written as given: nothing is filled in), for a
        writer made with ``warcinfo=False``, or a second one describing what follows."""
        f = self._main.file
        return self.write(self.builder.warcinfo(info, filename=(f.name if f is not None else None) or None, **kw))

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
        """Write the response, then its request, each naming the other in WARC-Concurrent-To
        (same WARC-Date). Returns ``(request, response)``, the order of the arguments."""
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
            return self.write(req, req_tail), written
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
    def bytes_written(self) -> int:
        """Bytes written so far into every file (or into the file object), as they are on disk."""
        return sum(self.file_sizes.values())

    @property
    def file_sizes(self) -> Dict[str, int]:
        """{final path: bytes written} of every file so far, the open ones too (a file object
        without a name: "")."""
        sizes = dict(self._sizes)
        for s in (self._main, self._media):
            if s is not None and s.file is not None:
                sizes[s.file.path] = s.file.size
        return sizes

    @property
    def path(self) -> str:
        """The final path of the one file (into a file), of the file object ("" without a name),
        or the directory."""
        return self._path if self._stream_obj is None else name_of(self._stream_obj)

    @property
    def current_files(self) -> List[str]:
        """Paths (NAME.open) of the files being written."""
        return [s.file.open_path for s in (self._main, self._media) if s is not None and s.file is not None]

    def roll_over(self) -> None:
        """Close the current files now (the next record opens new ones); directory only."""
        if self.kind != "directory":
            raise ArchiveError("a writer into one file or file object does not roll over")
        with self._lock:
            self._close_stream(self._main)
            if self._media is not None:
                self._close_stream(self._media)

    def close(self) -> List[str]:
        """Close (fsync, rename) every open file; the paths of all files closed so far."""
        if not self._closed:
            with self._lock:
                self._close_stream(self._main)
                if self._media is not None:
                    self._close_stream(self._media)
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
