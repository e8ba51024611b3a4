"""Loading captures: a capture's HTTP status, headers and payload, with revisits resolved.

``load_capture(cdx)`` opens the record an index line names and, when it is a
revisit, finds the record that holds the payload. How (docs/api.md,
"Loading captures", says the same for users; pywb 2.10's
``warcserver/resource/resolvingloader.py:ResolvingLoader`` and
``responseloader.py:WARCPathLoader.load_resource`` are the reference):

* not a revisit: headers and payload from the record itself;
* a revisit whose HTTP status is 3xx (304 included): the revisit alone, with
  ``Content-Length: 0`` (pywb: a browser ignores a redirect's body);
* a revisit of the empty payload (digest ``sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ``,
  with or without the label) that has HTTP headers: the revisit alone;
* otherwise the original, found by the lookups of ``originals`` (``orig.*``
  fields, ``WARC-Refers-To-Target-URI``, the same-URL digest join,
  ``WARC-Refers-To`` and the digest in a record index; first found wins);
* headers: the revisit's own HTTP head if it has one, else (an empty revisit)
  the original's; payload: the original's;
* a blank filename (``-``): the line has no record of its own, so headers and
  payload both come from the original;
* a record segmented over several WARC files (``WARC-Segment-Number``): the
  payload continues in its ``continuation`` records, found by the record index
  or in the records that follow it.

A missing original raises ``OriginalNotFound`` (a ``CaptureNotFound``) naming
everything that was looked for; ``load_closest(url, timestamp, index)`` then
serves the next-closest capture, as pywb's replay falls back.

Beside it in ``warchive.replay``: ``archives`` (the WARC files, and one record
opened safely), ``originals`` (a revisit's original), ``segments`` (a record's
continuations), ``streams`` (the payload as served), ``redirects`` (pywb's
self-redirect rule); record indexes (``*.rix`` in a collection's
``indexes/``) are ``warchive.index.rix``'s. The names a user needs are all
importable from here.

This module never opens a file outside the archive directories it is given
(absolute names and ``..`` are refused) and never writes WARC files.
"""

from __future__ import annotations

import functools
import glob
import os
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import ArchiveError, CaptureLineError, CaptureNotFound, CaptureUnavailable, ReadError, RecordFormatError
from ..index.capture import Capture
from ..index.query import DEFAULT_LIMIT, Index, QueryError, closest_first, parse_line
from ..index.rix import RECORD_INDEX_EXT, RecordIndex, unbracket
from ..warc.digest import Digest
from ..warc.headers import Headers
from .archives import ArchiveFileNotFound, Archives, Member, OpenRecord, RecordInfo, UnsafeFilename, check_filename
from .originals import OriginalNotFound, Originals
from .redirects import SelfRedirect, SelfRedirects, check_self_redirect
from .segments import SegmentNotFound, continuations
from .streams import Chain, payload_stream

PathLike = Union[str, os.PathLike[str]]

# What names a capture: a Capture as Index.query returns it, a CDXJ or CDX line (bytes or str),
# or a mapping of its fields; the loader turns the last two into a Capture (capture_fields).
CaptureLine = Union[Capture, bytes, str, Mapping[str, Any]]

# What a loader looks captures up in (to find originals, and for load_closest):
#   an Index              used as it is, and left open for its owner to close;
#   a path, or several    of collections, segments, ZipNum summaries or sorted CDX(J) files:
#                         an Index is opened on them and closed with the loader;
#   None                  no index: only revisits with orig.* fields (resolveRevisits) resolve.
IndexArg = Union[Index, PathLike, Sequence[PathLike], None]


# --------------------------------------------------------------------------- what a load returns

@dataclass(eq=False, repr=False)
class LoadedCapture:
    """A capture as a client gets it: ``status`` (int or None), ``status_line`` (``"200 OK"``),
    ``headers`` (the HTTP head, warchive.warc.Headers, as archived), ``payload`` (a binary
    stream), ``warc_headers`` (the WARC head of the capture's own record), ``records``
    (RecordInfo of every record used), ``resolved_by`` (how the payload was found), ``cdx``
    (the Capture loaded: a read-only mapping of its fields) and, from ``load_closest``,
    ``skipped`` (captures tried first and why they failed). Close it (or use ``with``) to
    release the files."""
    cdx: Capture
    headers: Headers
    warc_headers: Headers
    payload: BinaryIO
    records: List[RecordInfo]
    resolved_by: str
    synthetic_headers: bool        # the record had no HTTP head: pywb's default head
    transfer_decoded: bool         # the payload was de-chunked
    content_decoded: bool          # the payload's Content-Encoding was undone
    closers: List[Callable[[], None]] = field(default_factory=list)   # called once, by close()
    skipped: List[Tuple[Capture, str]] = field(default_factory=list)

    @property
    def status_line(self) -> str:
        return self.headers.statusline

    @property
    def status(self) -> Optional[int]:
        code = self.headers.status
        # (ASCII digits, not too many for int(): an archived status line is any text)
        return int(code) if code.isascii() and code.isdigit() and len(code) <= 18 and int(code) > 0 else None

    def read(self) -> bytes:
        """The whole payload (what is left of it)."""
        return self.payload.read()

    def close(self) -> None:
        closers, self.closers = self.closers, []
        for c in closers:
            c()

    def __enter__(self) -> "LoadedCapture":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<LoadedCapture {self.cdx.get('url')!r} {self.cdx.get('timestamp')} {self.status_line!r} "
                f"by {self.resolved_by}>")


# --------------------------------------------------------------------------- capture fields

def capture_fields(cdx: CaptureLine) -> Capture:
    """The capture ``cdx`` names, as a Capture: a Capture (as ``Index.query`` returns it) as it
    is, its fields read; a CDXJ or CDX line (bytes or str) read at once as pywb reads it (R14);
    a mapping of fields as the Capture of those fields. An unreadable line raises
    CaptureLineError, an unreadable Capture its QueryError."""
    if isinstance(cdx, Capture):
        cdx.fields
        return cdx
    if isinstance(cdx, Mapping):
        return Capture.from_fields(cdx)
    line = cdx.encode("utf-8") if isinstance(cdx, str) else bytes(cdx)
    line = line.strip(b"\r\n")
    if not line.strip():
        raise CaptureLineError("an empty index line names no capture")
    try:
        return parse_line(line)
    except QueryError as e:
        raise CaptureLineError(f"not an index line: {e.message}") from None


def _length(v: Any) -> Optional[int]:
    """An index line's record length, when it is one: only a hint (read in one piece), so
    anything else is no length rather than an error."""
    try:
        n = int(v)
    except (TypeError, ValueError):
        return None
    return n if n > 0 else None


def _byte_offset(v: Any, what: Optional[Capture]) -> int:
    """An offset field's value as a byte offset (``what``: the capture it names, for errors)."""
    url, ts = (what.get("url"), what.get("timestamp")) if what is not None else (None, None)
    try:
        n = int(v)
    except (TypeError, ValueError):
        raise CaptureLineError(f"capture {url!r} {ts}: offset {v!r} is not a byte offset") from None
    if n < 0:
        raise CaptureLineError(f"capture {url!r} {ts}: negative offset {n}")
    return n


# --------------------------------------------------------------------------- the loader

@dataclass
class _Resolution:
    head: Optional[OpenRecord]    # the capture's own record (None: blank filename)
    payload: OpenRecord           # the record holding the payload
    how: str
    zero_length: bool = False     # 3xx revisit: Content-Length 0


class CaptureLoader:
    """Loads captures of one index: ``load(cdx)``, ``load_closest(url, timestamp)``.

    ``index``: what captures are looked up in (``IndexArg``: an ``Index``, the path(s) of
    collections / index files to open one on, or None for no second lookups, so that only
    revisits with ``orig.*`` fields resolve). ``archive_paths``: directories holding the WARC
    files, tried in order (default: the ``archive/`` directory of each collection of the
    index). ``record_index``: record index file(s) (default: every ``*.rix`` in the index
    directories of the collections). ``members``: WARCs stored in a WACZ (Archives')."""

    def __init__(self, index: IndexArg = None, archive_paths: Optional[Sequence[PathLike]] = None,
                 record_index: Union[PathLike, Sequence[PathLike], None] = None,
                 members: Optional[Mapping[str, Member]] = None) -> None:
        self._own_index = index is not None and not isinstance(index, Index)
        self.index = _open_index(index)
        index_dirs = _index_dirs(self.index) if self.index is not None else []
        self.archives = Archives(archive_paths if archive_paths is not None else _archive_dirs(index_dirs), members)
        self.record_indexes = [RecordIndex(p) for p in _record_index_paths(record_index, index_dirs)]

    def close(self) -> None:
        self.archives.close()
        for r in self.record_indexes:
            r.close()
        if self._own_index and self.index is not None:
            self.index.close()

    def __enter__(self) -> "CaptureLoader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the public doors
    def load(self, cdx: CaptureLine, *, dechunk: bool = True, decompress: bool = False,
             request_url: Optional[str] = None) -> LoadedCapture:
        """The capture an index line (or dict) names, resolved. With ``request_url``, a 3xx
        capture whose Location is that URL raises SelfRedirect (as pywb's replay checks)."""
        f = capture_fields(cdx)
        opened = _Opened()   # every record this load opens: closed here if it fails
        try:
            res = self._resolve(f, opened)
            cap = self._build(f, res, opened, dechunk, decompress)
        except BaseException:
            opened.close()
            raise
        if request_url is not None:
            try:
                check_self_redirect(request_url, f, cap)
            except SelfRedirect:
                cap.close()
                raise
        return cap

    def load_closest(self, url: str, timestamp: str, *, fuzzy: bool = True, dechunk: bool = True,
                     decompress: bool = False, captures: Optional[Sequence[Capture]] = None) -> LoadedCapture:
        """The capture of ``url`` closest to ``timestamp`` that loads, as pywb's replay picks it:
        the captures of an exact query (and its fuzzy fallback) in closest order, each tried
        until one loads; self-redirects are skipped. ``.skipped`` says what was passed over.
        ``captures``: the answer to the exact query of ``url`` (index order) when the caller has
        it already (a server that also shows the URL's timeline): not asked again."""
        if self.index is None:
            raise CaptureNotFound(f"{url}: no index to look it up in")
        if captures and len(captures) < DEFAULT_LIMIT:
            caps = closest_first(captures, timestamp)
        else:
            params: Dict[str, Any] = {"closest": timestamp, "matchType": "exact"}
            if not fuzzy:
                params["allowFuzzy"] = "false"
            caps = self.index.query(url, **params)
        if not caps:
            raise CaptureNotFound(f"{url}: no capture in the index")
        skipped: List[Tuple[Capture, str]] = []
        redirects = SelfRedirects(url)
        unreadable = False     # a read failed (I/O error): the capture may load later
        for c in caps:
            try:
                cap = self.load(c, dechunk=dechunk, decompress=decompress)
            except ArchiveError as e:
                skipped.append((c, str(e)))
                unreadable = unreadable or isinstance(e, ReadError)
                continue
            try:
                redirects.check(c, cap)
            except SelfRedirect as e:
                cap.close()
                skipped.append((c, str(e)))
                continue
            cap.skipped = skipped
            return cap
        why = "; ".join(f"{c.get('timestamp')} {c.get('filename')}:{c.get('offset')}: {msg}"
                        for c, msg in skipped[:5])
        more = f" (and {len(skipped) - 5} more)" if len(skipped) > 5 else ""
        raise (CaptureUnavailable if unreadable else CaptureNotFound)(
            f"{url}: none of its {len(caps)} captures near {timestamp} could be loaded: {why}{more}")

    # -- resolution
    def _open(self, opened: "_Opened", filename: str, offset: Any, what: Optional[Capture]) -> OpenRecord:
        """The record at ``offset`` of ``filename`` (``what``: the capture it is, which names it in
        errors and whose length, where there, is read as its length), closed with the other
        records of its load (``opened``)."""
        off = _byte_offset(offset, what)
        o = self.archives.open(filename, off, _length(what.get("length")) if what is not None else None)
        opened.append(o.close)
        return o

    def _resolve(self, f: Capture, opened: "_Opened") -> _Resolution:
        filename = f.get("filename")
        if not filename or filename == "-":
            # no record of its own (an old-style revisit line): everything from the original,
            # as pywb's ResolvingLoader.__call__ means to (its WARCPathLoader crashes here)
            orig, how = self._originals(opened).find(f, None)
            return _Resolution(None, orig, "blank-filename, " + how)
        head = self._open(opened, str(filename), f.get("offset"), f)
        rec = head.rec
        if rec.type != "revisit":
            return _Resolution(head, head, "self")
        http = rec.http
        if http and http.status.startswith("3"):
            return _Resolution(head, head, "3xx revisit", zero_length=True)
        digest = Digest.find(f.get("digest")) or Digest.find(rec.headers.get("WARC-Payload-Digest"))
        empty = digest is not None and digest.is_empty
        if empty and http:
            return _Resolution(head, head, "empty-payload digest")
        try:
            orig, how = self._originals(opened).find(f, head)
        except OriginalNotFound:
            if empty:   # an empty revisit of the empty payload with nobody to take headers from
                return _Resolution(head, head, "empty-payload digest")
            raise
        return _Resolution(head, orig, how)

    def _originals(self, opened: "_Opened") -> Originals:
        return Originals(self.index, self.record_indexes, functools.partial(self._open, opened))

    def _open_segment(self, fname: str, offset: int, origin: str, opened: "_Opened") -> OpenRecord:
        o = self._open(opened, fname, offset, None)
        if o.rec.type != "continuation" or unbracket(o.rec.headers.get("WARC-Segment-Origin-ID")) != origin:
            raise RecordFormatError(o.path, offset, f"not a continuation of <{origin}>",
                                    "the record index does not match the file: write it again")
        return o

    # -- the answer
    def _build(self, f: Capture, res: _Resolution, opened: "_Opened", dechunk: bool,
               decompress: bool) -> LoadedCapture:
        payload = res.payload
        head = res.head
        http = head.rec.http if head is not None and head.rec.http else payload.rec.http
        synthetic = False
        if http:
            headers = Headers(http.protocol, http.statusline, list(http.fields), http.total_len)
        else:
            # no HTTP head anywhere (resource, metadata, dns: ...): pywb's replay makes one
            fields: List[Tuple[str, str]] = []
            ctype = payload.rec.headers.get("Content-Type")
            if ctype:
                fields.append(("Content-Type", ctype))
            if payload.rec.content_length is not None:
                fields.append(("Content-Length", str(payload.rec.content_length)))
            headers = Headers("HTTP/1.0", "200 OK", fields)
            synthetic = True
        if res.zero_length:
            headers.replace("Content-Length", "0")
        if head is None or head is payload:
            records = [payload.info("headers+payload" if head is not None else "payload")]
        else:
            records = [head.info("headers"), payload.info("payload")]
            head.close()   # its head is parsed; only the payload's stream stays open
        more = continuations(payload, self.record_indexes)
        origin = (unbracket(payload.rec.record_id) or "") if more else ""
        segments = [self._open_segment(fn, off, origin, opened) for fn, off in more]
        records += [s.info("segment") for s in segments]
        raw: Any = payload.rec.payload
        if segments:
            raw = Chain(raw, [functools.partial(_payload_of, s) for s in segments])
        body = payload_stream(raw, payload.rec.http, dechunk=dechunk, decompress=decompress)
        warc_headers = (head or payload).rec.headers
        return LoadedCapture(f, headers, warc_headers, body.stream, records, res.how, synthetic,
                             body.transfer_decoded, body.content_decoded, [opened.handed_over().close])


class _Opened(List[Callable[[], None]]):
    """The closers of the records one load opened (an ExitStack costs 3 us a load): ``close``
    calls each, last first, all of them even when one raises (the first error is raised)."""

    def close(self) -> None:
        error: Optional[BaseException] = None
        while self:
            try:
                self.pop()()
            except BaseException as e:
                error = error or e
        if error is not None:
            raise error

    def handed_over(self) -> "_Opened":
        """A new _Opened holding these closers (this one is left empty)."""
        out = _Opened(self)
        self.clear()
        return out


def _payload_of(o: OpenRecord) -> Any:
    return o.rec.payload


# --------------------------------------------------------------------------- what the loader is given

def _open_index(index: IndexArg) -> Optional[Index]:
    if index is None or isinstance(index, Index):
        return index
    given = [index] if isinstance(index, (str, os.PathLike)) else list(index)
    return Index(*[str(os.fspath(p)) for p in given])


def _index_dirs(index: Index) -> List[str]:
    """The directories of an Index's files (collections' indexes/ dirs among them)."""
    out: List[str] = []
    for s in index.engine.sources:
        p = getattr(s.source, "path", None)   # every kind of source keeps the path of its file
        if p:
            d = os.path.dirname(os.path.abspath(os.fspath(p)))
            if d not in out:
                out.append(d)
    return out


def _archive_dirs(index_dirs: Sequence[str]) -> List[str]:
    """The archive/ directories of the collections whose index directories these are."""
    dirs: List[str] = []
    for d in index_dirs:
        root = os.path.dirname(d) if os.path.basename(d) == "indexes" else d
        a = os.path.join(root, "archive")
        if os.path.isdir(a) and a not in dirs:
            dirs.append(a)
    return dirs


def _record_index_paths(given: Union[PathLike, Sequence[PathLike], None], index_dirs: Sequence[str]) -> List[str]:
    if given is None:
        return sorted({p for d in index_dirs for p in glob.glob(os.path.join(glob.escape(d), "*" + RECORD_INDEX_EXT))})
    if isinstance(given, (str, os.PathLike)):
        return [os.fspath(given)]
    return [os.fspath(p) for p in given]


# --------------------------------------------------------------------------- module-level doors

def load_capture(cdx: CaptureLine, *, index: IndexArg = None, archive_paths: Optional[Sequence[PathLike]] = None,
                 record_index: Union[PathLike, Sequence[PathLike], None] = None, dechunk: bool = True,
                 decompress: bool = False, request_url: Optional[str] = None) -> LoadedCapture:
    """The capture ``cdx`` names (a CDXJ/CDX line, or a dict as ``Index.query`` returns), with
    its revisit resolved. See ``CaptureLoader`` for ``index``, ``archive_paths`` and
    ``record_index``; loading many captures, keep one ``CaptureLoader``."""
    with CaptureLoader(index, archive_paths, record_index) as loader:
        return loader.load(cdx, dechunk=dechunk, decompress=decompress, request_url=request_url)


def load_closest(url: str, timestamp: str, index: IndexArg, *, archive_paths: Optional[Sequence[PathLike]] = None,
                 record_index: Union[PathLike, Sequence[PathLike], None] = None, fuzzy: bool = True,
                 dechunk: bool = True, decompress: bool = False) -> LoadedCapture:
    """The capture of ``url`` closest to ``timestamp`` that loads (pywb's replay fallback)."""
    with CaptureLoader(index, archive_paths, record_index) as loader:
        return loader.load_closest(url, timestamp, fuzzy=fuzzy, dechunk=dechunk, decompress=decompress)


__all__ = ["ArchiveFileNotFound", "CaptureLine", "CaptureLineError", "CaptureLoader", "IndexArg", "LoadedCapture",
           "OriginalNotFound", "RecordInfo", "SegmentNotFound", "SelfRedirect", "SelfRedirects", "UnsafeFilename",
           "capture_fields",
           "check_filename", "check_self_redirect", "load_capture", "load_closest"]
