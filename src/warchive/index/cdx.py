"""CDXJ and CDX-11 lines for the records of WARC/ARC files, byte-identical to cdxj-indexer 1.5.0.

A line is ``<SURT key> <14-digit timestamp> <JSON>`` (CDXJ) or the eleven
fields ``N b a m s k r M S V g`` (CDX-11). The fields, the record selection
(response, revisit, resource, metadata; no application/warc-fields) and the
POST/PUT key suffix (``-p``) follow cdxj-indexer; docs/format.md lists where
we deliberately differ. With ``IndexOptions.surt_options`` the keys are
``surt(url, **surt_options)`` instead (on both paths below: the kernel takes
the options as bits).

Two paths produce the same lines: the kernel ext/cdx_lines (common records,
GIL released, no Python per record) and the reference here (every record the
kernel leaves to it, whole files for -p, ARC and .warc.zst). This module
reads files, and stored files named ``store://STORE/NAME`` (warchive.store.urls), whose
lines are those of the plain file: the kernels read them by position, as files; it does not
sort or merge (warchive.index.sort does).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import sys
import tempfile
from dataclasses import dataclass, replace
from json.encoder import encode_basestring_ascii as _json_str
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Mapping, Optional, Sequence, Tuple, Union

from .._ext import cdx_lines
from .._ext.surt import DEFAULT_FLAGS as DEFAULT_SURT_FLAGS, surt_flags
from ..errors import ArchiveError, RecordFormatError
from ..store.urls import SCHEME as STORE_SCHEME, Stores, is_store_url, open_url, split
from ..surt import surt_or_url
from ..timestamps import iso_date_to_timestamp
from ..warc.content import content_stream
from ..warc.defects import SHARED_MEMBER, Defect
from ..warc.digest import label
from ..warc.headers import Headers
from ..warc.reader import ArchiveIterator, Record
from ..warc.reader import open as open_archive
from ..warc.record import LocatedRecord, WrittenRecord
from ..warc.source import RandomAccess
from . import postbody

Write = Callable[[bytes], object]

DEFAULT_RECORDS = ("response", "revisit", "resource", "metadata")
READ_WINDOW = 1 << 20   # bytes the kernel reads at a time (LineIndexer's default)
FLUSH_AT = 1 << 18   # bytes of lines per kernel call (each call takes the GIL back: -j N workers wait for it)
CDX11_HEADER = b" CDX N b a m s k r M S V g\n"
ARCHIVE_EXTENSIONS = (".arc", ".arc.gz", ".warc", ".warc.gz", ".warc.zst")
_RE_SPACE = re.compile(r"[;\s]")



def _to_stderr(msg: str) -> None:
    print(msg, file=sys.stderr)


@dataclass(eq=False, slots=True)
class IndexOptions:
    """What to index and how (the options of `warchive index`).

    records: None for cdxj-indexer's default, "all", or a list of record types;
    strict: fail on the first defect that a lenient read recovers from (warchive.warc.defects);
    report: where messages about defects and skipped records go (standard error by default);
    surt_options: the keyword arguments of warchive.surt.surt() that make the keys
    (None or empty: cdxj-indexer's keys)."""

    cdx11: bool = False
    records: Union[None, str, Sequence[str]] = None
    post_append: bool = False
    verify: bool = False
    skip_errors: bool = False
    dir_root: Optional[str] = None
    report: Callable[[str], object] = _to_stderr
    strict: bool = False
    surt_options: Optional[Mapping[str, bool]] = None

    def copy(self, **changes: Any) -> "IndexOptions":
        return replace(self, **changes)


@dataclass(slots=True)
class FileStats:
    """Counts of one file (or range, or run): records read, lines written, records left to the
    Python reference, damaged records skipped, defects recovered from; and where a range's
    records end."""

    records: int = 0
    lines: int = 0
    slow: int = 0
    errors: int = 0
    end: int = 0   # index_file: the offset after the last record read
    defects: int = 0


# --------------------------------------------------------------------------- fields of one record

def warcio_target_uri(rec: LocatedRecord) -> Optional[str]:
    """WARC-Target-URI as cdxj-indexer reads it.

    warcio normalises the first value (<...> removed, spaces as %20) and writes it
    into the *last* field of that name, then reads the first: with one field
    that is the normalised value, with several the first as it was."""
    values = rec.headers.get_all("WARC-Target-URI")
    if not values:
        return None
    if len(values) > 1:
        return values[0]
    return rec.target_uri


def wanted(rec: LocatedRecord, records: Union[None, str, Sequence[str]]) -> bool:
    if records == "all":
        return True
    if records is None or list(records) == list(DEFAULT_RECORDS):
        if rec.type not in DEFAULT_RECORDS:
            return False
        return not (rec.type in ("resource", "metadata")
                    and rec.headers.get("Content-Type") == "application/warc-fields")
    return rec.type in records


SHARED_PROBLEM = "this gzip member holds several records, so they have no offsets of their own"
SHARED_ACTION = "they are not indexed; warchive recompress gives each record its own member"


def shared_member_error(path: Optional[str], offset: int) -> RecordFormatError:
    """Records that share a gzip member cannot be indexed: no offset reaches one of them alone."""
    return RecordFormatError(path, offset, SHARED_PROBLEM,
                             "recompress the file with one member per record (warcio recompress)")


def skip_shared_member(it: ArchiveIterator, offset: int) -> int:
    """Report the records of the gzip member at offset as not indexed (a defect: strict mode
    raises it) and leave the member; return where the next one starts."""
    it.report(offset, SHARED_MEMBER, SHARED_PROBLEM, SHARED_ACTION)
    return it.next_member()


def line_of(rec: Record, filename: str, opts: IndexOptions) -> Optional[bytes]:
    """The record's line (b'' when it is not indexed), or None when it shares its gzip member
    with other records. Its payload is read (for a missing digest) before its end is sought."""
    if not wanted(rec, opts.records):
        return b"" if rec.length is not None else None
    try:
        return record_line(rec, filename, opts.cdx11, opts.surt_options)
    except RecordFormatError as e:
        if e.problem == SHARED_PROBLEM:   # (not a defect that --strict raised while its end was sought)
            return None
        raise


def payload_digest(rec: LocatedRecord) -> str:
    h = hashlib.sha1()
    stream = rec.payload
    while True:
        # 64 KiB: pieces below malloc's mmap threshold use the same memory again; 1 MiB ones were
        # mapped and unmapped each time, a page fault per 4 KiB (Wget's logs are megabytes)
        b = stream.read(1 << 16)
        if not b:
            break
        h.update(b)
    return label("sha1", h.digest())


def record_fields(rec: LocatedRecord, filename: str) -> dict:
    """The JSON fields of the record's CDXJ line, in cdxj-indexer's order."""
    index: dict = {}
    url = warcio_target_uri(rec)
    if url is not None:
        index["url"] = url
    if rec.type == "revisit":
        mime: Optional[str] = "warc/revisit"
    elif rec.type in ("response", "request"):
        mime = rec.http.get("content-type") if rec.http else None
    else:
        mime = rec.headers.get("Content-Type")
    if mime:
        mime = _mime_split(mime)
    if mime is not None:
        index["mime"] = mime
    if rec.type in ("response", "revisit") and rec.http:
        index["status"] = rec.http.status
    digest = rec.headers.get("WARC-Payload-Digest")
    if digest is None and rec.type not in ("warcinfo", "revisit"):
        digest = payload_digest(rec)
    if digest is not None:
        index["digest"] = digest
    length = rec.length
    if length is None:
        raise shared_member_error(rec.source, rec.offset)
    index["length"] = str(length)
    index["offset"] = str(rec.offset)
    index["filename"] = filename
    return index


def _mime_split(mime: str) -> str:
    """The MIME type before the first ';' or white space, as cdxj-indexer cuts it."""
    return _RE_SPACE.split(mime, 1)[0].strip()


def record_timestamp(rec: LocatedRecord) -> str:
    date = rec.headers.get("WARC-Date")
    where = rec.source
    if date is None:
        raise RecordFormatError(where, rec.offset, "record has no WARC-Date", "--skip-errors skips it")
    try:
        return iso_date_to_timestamp(date)
    except ValueError:
        raise RecordFormatError(where, rec.offset, f"invalid WARC-Date {date!r}", "--skip-errors skips it") from None


_CDX11_FIELDS = ("url", "mime", "status", "digest", "redirect", "meta", "length", "offset", "filename")


def format_line(urlkey: str, ts: str, index: dict, cdx11: bool) -> bytes:
    if not cdx11:
        return (urlkey + " " + ts + " " + json_dumps(index) + "\n").encode("utf-8")
    vals = [urlkey, ts]
    for f in _CDX11_FIELDS:
        v = index.get(f, "-")
        if f == "digest" and v != "-":
            v = v.split(":")[-1]
        vals.append(v)
    return (" ".join(vals) + "\n").encode("utf-8", "surrogateescape")


def url_key(url: Optional[str], surt_options: Optional[Mapping[str, bool]] = None) -> str:
    """The key of a record's URL: its SURT key (with surt_options), or the URL itself when it has
    none, as cdxj-indexer's get_url_key."""
    if surt_options:
        return surt_or_url(url, **surt_options)
    return surt_or_url(url)


def record_line(rec: LocatedRecord, filename: str, cdx11: bool,
                surt_options: Optional[Mapping[str, bool]] = None) -> bytes:
    """The line of one record (the caller decided it is indexed)."""
    index = record_fields(rec, filename)
    ts = record_timestamp(rec)
    return format_line(url_key(warcio_target_uri(rec), surt_options), ts, index, cdx11)


# --------------------------------------------------------------------------- one file

def json_dumps(index: dict) -> str:
    """json.dumps(index) (default separators, ASCII), through its string encoder alone when keys
    and values are all strings, as they are in index lines."""
    if not all(type(k) is str and type(v) is str for k, v in index.items()):
        return json.dumps(index)
    return "{" + ", ".join(_json_str(k) + ": " + _json_str(v) for k, v in index.items()) + "}"


def _json_filename(filename: str) -> bytes:
    return _json_str(filename)[1:-1].encode("utf-8")


def _stream(path: str) -> Union[str, BinaryIO]:
    """What the reader reads for an input name: standard input for '-', else the path."""
    return sys.stdin.buffer if path == "-" else path


Input = Union[str, RandomAccess]   # a path, '-', or an open stored file (store://STORE/NAME)


def reporter(opts: IndexOptions, stats: FileStats) -> Callable[[Defect], None]:
    """The reader's on_defect for an indexing run: one warning line per defect, counted."""
    def on_defect(d: Defect) -> None:
        stats.defects += 1
        opts.report(f"warchive: warning: {d}")
    return on_defect


class _Reference:
    """Indexes single records (those the kernel leaves) with the Python reader."""

    def __init__(self, src: Input, filename: str, opts: IndexOptions, stats: FileStats, name: str) -> None:
        self.filename = filename
        self.opts = opts
        self.it = ArchiveIterator(src, verify=opts.verify, strict=opts.strict, on_defect=reporter(opts, stats),
                                  name=name)

    def index_at(self, off: int) -> Tuple[bytes, int]:
        """Lines for the record at off (b'' when it is not indexed) and the next record's offset.
        off is where the record before it ended (or 0): bytes there that are no record are a
        defect, skipped to the next record."""
        it = self.it
        it.seek(off, resync=off != 0)
        rec = next(iter(it), None)
        if rec is None:
            return b"", it.position
        line = line_of(rec, self.filename, self.opts)
        if line is None:
            return b"", skip_shared_member(it, rec.offset)
        return line, it.position


def _skip_error(e: ArchiveError, it: ArchiveIterator, off: int, opts: IndexOptions, stats: FileStats) -> int:
    """--skip-errors: report e, return the offset of the next plausible record (or the end)."""
    stats.errors += 1
    opts.report(f"warchive: skipped: {e}")
    bad = getattr(e, "offset", None)
    return it.find_record(max(off, bad if isinstance(bad, int) else off))


def index_file(path: str, write: Write, opts: IndexOptions, filename: Optional[str] = None,
               start: int = 0, stop: Optional[int] = None, read_window: int = READ_WINDOW) -> FileStats:
    """Write the lines of the records of one file that start in [start, stop). ``path``: a path,
    '-', or ``store://STORE/NAME`` (a stored file; StoreError if there is none). `read_window`:
    the bytes the kernel reads at a time (a caller indexing a few kilobytes here and there
    passes less: the buffer is allocated and faulted in for each call)."""
    filename = filename if filename is not None else os.path.basename(path)
    if is_store_url(path):
        with open_url(path) as f:
            return _index_source(f, path, write, opts, filename, start, stop, read_window)
    return _index_source(path, path, write, opts, filename, start, stop, read_window)


def _index_source(src: Input, path: str, write: Write, opts: IndexOptions, filename: str, start: int,
                  stop: Optional[int], read_window: int = READ_WINDOW) -> FileStats:
    """index_file of ``src`` (a path, '-', or a random-access stored file), called ``path``."""
    stats = FileStats()
    magic = b""
    if isinstance(src, str):
        kernel_ok = not opts.post_append and src != "-" and os.path.isfile(src)
        if kernel_ok:  # the kernel reads gzip and plain WARC; zstd, ARC and the rest go to the reference
            with open(src, "rb") as f:
                magic = f.read(2)
    else:
        kernel_ok = not opts.post_append
        magic = src.pread(2, 0)
    kernel_ok = kernel_ok and (magic == b"\x1f\x8b" or magic[:1] in (b"W", b"w"))
    if not kernel_ok:
        _index_python(src, write, opts, filename, stats, path)
        return stats
    fname = filename.encode("utf-8", "surrogateescape") if opts.cdx11 else _json_filename(filename)
    records = opts.records
    if records is not None and records != "all" and list(records) == list(DEFAULT_RECORDS):
        records = None  # as cdxj-indexer (and wanted()): the default list given explicitly is the default
    flags = surt_flags(**opts.surt_options) if opts.surt_options else DEFAULT_SURT_FLAGS
    ix = cdx_lines.LineIndexer(src, fname, cdx11=opts.cdx11, records=records, verify=opts.verify,
                               start=start, stop=-1 if stop is None else stop, surt_flags=flags, window=read_window)
    ref: Optional[_Reference] = None
    while True:
        rc, chunk = ix.run(FLUSH_AT)
        if chunk:
            write(chunk)
        if rc == cdx_lines.EOF:
            break
        if rc == cdx_lines.SLOW:
            off = ix.pos
            if stop is not None and off >= stop:
                break
            if ref is None:
                ref = _Reference(src, filename, opts, stats, path)
            try:
                line, nxt = ref.index_at(off)
            except ArchiveError as e:
                if not opts.skip_errors:
                    raise
                nxt = _skip_error(e, ref.it, off, opts, stats)
                line = b""
            else:
                stats.records += 1
            if line:
                write(line)
                stats.lines += line.count(b"\n")
            if nxt <= off:  # never loop on one record
                raise RecordFormatError(path, off, "indexer made no progress", "please report this file")
            ix.pos = nxt
    n_records, n_lines, n_slow, _ = ix.stats
    stats.end = ix.pos
    stats.records += n_records
    stats.lines += n_lines
    stats.slow += n_slow
    return stats


def _index_python(src: Input, write: Write, opts: IndexOptions, filename: str, stats: FileStats,
                  path: Optional[str] = None) -> None:
    """Whole file through the reference (zst, -p, ARC-only files, streams: '-', FIFOs); ``path``:
    what messages call it (default: src, a path)."""
    if path is None:
        path = src if isinstance(src, str) else getattr(src, "name", None)
    with open_archive(_stream(src) if isinstance(src, str) else src, verify=opts.verify, strict=opts.strict,
                      on_defect=reporter(opts, stats), name=path) as it:
        source: Iterable = _paired_lines(it, filename, opts) if opts.post_append else _plain_lines(it, filename, opts)
        while True:
            try:
                line = next(source)  # type: ignore[call-overload]
            except StopIteration:
                break
            except ArchiveError as e:
                if not opts.skip_errors:
                    raise
                off = getattr(e, "offset", None) or 0
                it.seek(_skip_error(e, it, off, opts, stats), resync=True)
                source = _paired_lines(it, filename, opts) if opts.post_append else _plain_lines(it, filename, opts)
                continue
            if line:
                write(line)
                stats.lines += 1
            stats.records += 1


def _plain_lines(it: ArchiveIterator, filename: str, opts: IndexOptions) -> Iterator[bytes]:
    for rec in it:
        line = line_of(rec, filename, opts)
        if line is None:  # left out even when its records are not indexed, as in _Reference.index_at
            skip_shared_member(it, rec.offset)
            continue
        yield line


# --------------------------------------------------------------------------- -p: request bodies in keys

class _Pending:
    """What the line of a record needs once the record itself is gone."""

    __slots__ = ("type", "uri", "rid", "concurrent", "method", "http", "body", "index", "ts", "urlkey",
                 "extra", "want")

    type: Optional[str]
    uri: Optional[str]
    rid: Optional[str]
    concurrent: Optional[str]
    method: Optional[str]
    http: Optional[Headers]
    body: Optional[BinaryIO]
    index: dict
    ts: str
    urlkey: Optional[str]
    extra: dict
    want: bool


def _pending(rec: Record, filename: str, opts: IndexOptions) -> _Pending:
    p = _Pending()
    p.type = rec.type
    p.uri = warcio_target_uri(rec)
    p.rid = rec.headers.get("WARC-Record-ID")
    p.concurrent = rec.headers.get("WARC-Concurrent-To")
    p.http = rec.http
    p.method = rec.http.protocol if rec.http is not None else None
    p.body = None
    p.extra = {}
    p.urlkey = None
    p.want = wanted(rec, opts.records)
    if rec.type == "request" and rec.http is not None and rec.http.protocol.upper() in ("POST", "PUT"):
        spool: Any = tempfile.SpooledTemporaryFile(64 * 1024)
        stream = content_stream(rec)
        while True:
            b = stream.read(1 << 16)
            if not b:
                break
            spool.write(b)
        spool.seek(0)
        p.body = spool
    if p.want:
        p.index = record_fields(rec, filename)
        p.ts = record_timestamp(rec)
    elif rec.length is None:  # finish it (errors surface here, in order)
        raise shared_member_error(rec.source, rec.offset)
    return p


def _join(a: _Pending, b: _Pending, opts: IndexOptions) -> None:
    """Give a POST/PUT pair the key with the request body appended."""
    req, resp = (a, b) if a.type == "request" else (b, a)
    if req.http is None:
        return
    method = req.http.protocol
    if method.upper() not in ("POST", "PUT"):
        return
    url = req.uri or ""
    body = req.body
    if body is not None:
        body.seek(0)
    query, suffix = postbody.method_query(method, req.http.get("Content-Type"), req.http.get("Content-Length"),
                                          body if body is not None else _EMPTY(), url)  # type: ignore[arg-type]
    key = url_key(url + suffix, opts.surt_options)
    resp.urlkey = req.urlkey = key
    resp.extra = {"requestBody": query, "method": method.upper()}


class _EMPTY(io.RawIOBase):
    def readable(self) -> bool:
        return True

    def read(self, n: Optional[int] = -1) -> bytes:
        return b""


def _emit(p: _Pending, opts: IndexOptions) -> bytes:
    if not p.want:
        return b""
    index = dict(p.index)
    index.update(p.extra)
    key = p.urlkey if p.urlkey is not None else url_key(p.uri, opts.surt_options)
    return format_line(key, p.ts, index, opts.cdx11)


def _paired_lines(it, filename: str, opts: IndexOptions) -> Iterator[bytes]:
    """cdxj-indexer's pairing: a record pairs with the one before it (request and
    response, same URI, concurrent); a pair's lines come out together."""
    prev: Optional[_Pending] = None
    for rec in it:
        try:
            cur = _pending(rec, filename, opts)
        except RecordFormatError:
            if rec.length is not None:
                raise
            skip_shared_member(it, rec.offset)   # records sharing a gzip member: left out, as without -p
            continue
        if prev is None:
            prev = cur
            continue
        if _is_pair(prev, cur):
            _join(prev, cur, opts)
            yield _emit(prev, opts)
            yield _emit(cur, opts)
            prev = None
        else:
            yield _emit(prev, opts)
            prev = cur
    if prev is not None:
        yield _emit(prev, opts)


def _is_pair(a: _Pending, b: _Pending) -> bool:
    return a.uri == b.uri and b.concurrent == a.rid and {a.type, b.type} == {"request", "response"}


# --------------------------------------------------------------------------- many files

def iter_inputs(inputs: Iterable[str]) -> Iterator[str]:
    """Files as given, and the archives under directories (os.walk order, as cdxj-indexer); a
    whole store (``store://STORE``) gives ``store://STORE/NAME`` of each stored name, in order."""
    for inp in inputs:
        if is_store_url(inp):
            root, name = split(inp)
            if name is not None:
                yield inp
            else:
                yield from (STORE_SCHEME + os.path.join(root, n) for n in Stores().store(root).names())
            continue
        if not os.path.isdir(inp):
            yield inp
            continue
        for root, _dirs, files in os.walk(inp):
            for name in files:
                if name.endswith(ARCHIVE_EXTENSIONS):
                    yield os.path.join(root, name)


def display_name(path: str, dir_root: Optional[str]) -> str:
    if not dir_root or is_store_url(path):   # a stored file: its stored name
        return os.path.basename(path)
    rel = os.path.relpath(path, dir_root)
    return rel.replace(os.sep, "/") if os.sep != "/" else rel


# --------------------------------------------------------------------------- records as they are written

def written_record_line(written: WrittenRecord, cdx11: bool = False, records: Union[None, str, Sequence[str]] = None,
                        filename: Optional[str] = None) -> Optional[bytes]:
    """The index line of a record the writer just wrote, or None
    when ``records`` (cdxj-indexer's default selection) leaves it out.

    Equal to the line `warchive index` makes of the closed file: the writer
    reports the offset and length warcio reports and the heads as written
    (tests/unit/test_writer.py shows it)."""
    if not wanted(written, records):
        return None
    return record_line(written, filename if filename is not None else written.filename, cdx11)
