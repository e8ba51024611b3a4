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
* otherwise the original, tried in this order, first found wins:
  1. the ``orig.*`` fields of a line joined by ``resolveRevisits`` (R29);
  2. ``WARC-Refers-To-Target-URI`` at ``WARC-Refers-To-Date`` (or the capture's
     own time): the closest non-revisit of that exact URL with the same digest
     (any capture when the revisit has no digest), as pywb looks it up;
  3. the same-URL digest join: the revisit's own URL, non-revisits, same digest;
  4. ``WARC-Refers-To`` (a record id, as Wget writes it) in a record index;
  5. the digest alone in a record index (URL-agnostic, any URL).
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

Record indexes (``*.rix`` in a collection's ``indexes/``) are read through
``warchive.index.rix``, which writes them too.

This module never opens a file outside the archive directories it is given
(absolute names and ``..`` are refused) and never writes WARC files.
"""

from __future__ import annotations

import functools
import glob
import os
import re
from dataclasses import dataclass
from typing import Any, BinaryIO, Callable, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union
from urllib.parse import urlsplit

from ..index.rix import RECORD_INDEX_EXT, RecordIndex, date_timestamp, unbracket
from ..errors import ArchiveError, CaptureNotFound, RecordFormatError, UrlError
from ..timestamps import timestamp_to_datetime
from ..warc.digest import Digest
from ..warc.headers import Headers
from ..warc.reader import ArchiveIterator, Record
from ..warc.reader import open as _open_warc
from .streams import Chain, payload_stream

PathLike = Union[str, "os.PathLike[str]"]

MAX_CANDIDATES = 100        # originals tried per lookup, closest first
MAX_CHAIN = 4               # revisit -> revisit -> ... followed through record ids
SEGMENT_SCAN_RECORDS = 16   # without a record index: records looked at per file for continuations
SEGMENT_SCAN_FILES = 4      # ... and files after the first segment's


# --------------------------------------------------------------------------- errors

class OriginalNotFound(CaptureNotFound):
    """A revisit's original (the record holding its payload) was not found. ``looked`` lists
    each place looked at and what came of it."""

    def __init__(self, what: str, looked: Sequence[str]) -> None:
        self.what = what
        self.looked = list(looked)
        tried = "; ".join(f"({i}) {s}" for i, s in enumerate(self.looked, 1)) or "nothing to look up"
        super().__init__(f"{what}: its original was not found. Looked for: {tried}. "
                         "load_closest(url, timestamp, index) serves the next-closest capture instead")


class ArchiveFileNotFound(CaptureNotFound):
    """The WARC file a capture names is in none of the archive directories."""


class SegmentNotFound(CaptureNotFound):
    """A continuation record of a segmented record is missing."""


class SelfRedirect(CaptureNotFound):
    """A 3xx capture whose Location is the URL asked for (replaying it would loop; pywb skips it)."""


class UnsafeFilename(ArchiveError, ValueError):
    """A capture's filename is absolute or climbs out of the archive directories (``..``)."""


class CaptureLineError(ArchiveError, ValueError):
    """An index line or capture dict that cannot name a record (no offset, bad number...)."""


# --------------------------------------------------------------------------- what a load returns

@dataclass
class RecordInfo:
    """One record a load used: ``role`` is "headers", "payload" or "segment"."""
    role: str
    filename: str
    path: str
    offset: int
    type: Optional[str]
    record_id: Optional[str]
    target_uri: Optional[str]
    date: Optional[str]


class LoadedCapture:
    """A capture as a client gets it: ``status`` (int or None), ``status_line`` (``"200 OK"``),
    ``headers`` (the HTTP head, warchive.warc.Headers, as archived), ``payload`` (a binary
    stream), ``warc_headers`` (the WARC head of the capture's own record), ``records``
    (RecordInfo of every record used), ``resolved_by`` (how the payload was found), ``cdx``
    (the capture's fields) and, from ``load_closest``, ``skipped`` (captures tried first and
    why they failed). Close it (or use ``with``) to release the files."""

    def __init__(self, cdx: Dict[str, Any], headers: Headers, warc_headers: Headers, payload: BinaryIO,
                 records: List[RecordInfo], resolved_by: str, synthetic_headers: bool,
                 transfer_decoded: bool, content_decoded: bool, closers: List[Callable[[], None]]) -> None:
        self.cdx = cdx
        self.headers = headers
        self.warc_headers = warc_headers
        self.payload = payload
        self.records = records
        self.resolved_by = resolved_by
        self.synthetic_headers = synthetic_headers   # the record had no HTTP head: pywb's default head
        self.transfer_decoded = transfer_decoded     # the payload was de-chunked
        self.content_decoded = content_decoded       # the payload's Content-Encoding was undone
        self.skipped: List[Tuple[Dict[str, Any], str]] = []
        self._closers = closers

    @property
    def status_line(self) -> str:
        return self.headers.statusline

    @property
    def status(self) -> Optional[int]:
        code = self.headers.status
        return int(code) if code.isdigit() and int(code) > 0 else None

    def read(self) -> bytes:
        """The whole payload (what is left of it)."""
        return self.payload.read()

    def close(self) -> None:
        closers, self._closers = self._closers, []
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

def capture_fields(cdx: Union[bytes, str, Mapping[str, Any]]) -> Dict[str, Any]:
    """The fields of a CDXJ or CDX line (bytes or str, as pywb reads it: R14) or a dict as
    ``Index.query`` returns it."""
    if isinstance(cdx, Mapping):
        return dict(cdx)
    from ..index.query import QueryError, parse_line

    line = cdx.encode("utf-8") if isinstance(cdx, str) else bytes(cdx)
    line = line.strip(b"\r\n")
    if not line.strip():
        raise CaptureLineError("an empty index line names no capture")
    try:
        return dict(parse_line(line).fields)
    except QueryError as e:
        raise CaptureLineError(f"not an index line: {e.message}") from None


def _int_field(f: Mapping[str, Any], name: str) -> int:
    v = f.get(name)
    try:
        n = int(v)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise CaptureLineError(f"capture {f.get('url')!r} {f.get('timestamp')}: {name} {v!r} is not a "
                               "byte offset") from None
    if n < 0:
        raise CaptureLineError(f"capture {f.get('url')!r} {f.get('timestamp')}: negative {name} {n}")
    return n


def _seconds(ts: str) -> int:
    import calendar

    return calendar.timegm(timestamp_to_datetime(ts).utctimetuple())


# --------------------------------------------------------------------------- archive files

def check_filename(filename: str) -> str:
    """A capture's filename, refused (UnsafeFilename) unless it is a relative path that stays
    inside the directory it is joined to."""
    if not filename or "\0" in filename:
        raise UnsafeFilename(f"filename {filename!r} names no file")
    if "://" in filename:
        raise UnsafeFilename(f"filename {filename!r} is a URL; only files of the archive directories are read")
    if filename.startswith(("/", "\\")) or os.path.isabs(filename) or re.match(r"^[A-Za-z]:", filename):
        raise UnsafeFilename(f"filename {filename!r} is absolute; index lines name files relative to the "
                             "collection's archive directory")
    if ".." in re.split(r"[/\\]", filename):
        raise UnsafeFilename(f"filename {filename!r} climbs out of the archive directory ('..')")
    return filename


class _Archives:
    """Where the files of captures are: directories tried in order (pywb's archive paths)."""

    def __init__(self, dirs: Sequence[PathLike]) -> None:
        self.dirs = [os.path.abspath(os.fspath(d)) for d in dirs]

    def path(self, filename: str) -> str:
        check_filename(filename)
        if not self.dirs:
            raise ArchiveFileNotFound(f"{filename}: no archive directory to look in (give archive_paths, "
                                      "or open the index on a collection)")
        for d in self.dirs:
            p = os.path.normpath(os.path.join(d, filename))
            if not p.startswith(d.rstrip(os.sep) + os.sep):
                raise UnsafeFilename(f"filename {filename!r} leaves the archive directory {d}")
            if os.path.isfile(p):
                return p
        raise ArchiveFileNotFound(f"{filename}: not in the archive directories {', '.join(self.dirs)}")


class _Opened:
    """A record and the iterator it lives in (its payload is readable until close())."""

    __slots__ = ("it", "rec", "path", "filename")

    it: Optional[ArchiveIterator]

    def __init__(self, it: ArchiveIterator, rec: Record, path: str, filename: str) -> None:
        self.it = it
        self.rec = rec
        self.path = path
        self.filename = filename

    def info(self, role: str) -> RecordInfo:
        r = self.rec
        return RecordInfo(role, self.filename, self.path, r.offset, r.type, r.record_id, r.target_uri, r.date)

    def close(self) -> None:
        if self.it is not None:
            it, self.it = self.it, None
            it.close()


def _open_at(path: str, filename: str, offset: int) -> _Opened:
    it = _open_warc(path, offset=offset)
    try:
        rec = next(iter(it), None)
        if rec is None:
            raise RecordFormatError(path, offset, "no record starts here",
                                    "the index does not match the file: index it again")
        if rec.offset != offset:
            raise RecordFormatError(path, offset, f"the record found starts at byte {rec.offset}",
                                    "the index does not match the file: index it again")
    except BaseException:
        it.close()
        raise
    return _Opened(it, rec, path, filename)


# --------------------------------------------------------------------------- the loader

@dataclass
class _Resolution:
    head: Optional[_Opened]       # the capture's own record (None: blank filename)
    payload: _Opened              # the record holding the payload
    how: str
    zero_length: bool = False     # 3xx revisit: Content-Length 0


class CaptureLoader:
    """Loads captures of one index: ``load(cdx)``, ``load_closest(url, timestamp)``.

    ``index``: an ``Index``, or the path(s) of collections / index files to open one on
    (None: no second lookups, so only revisits with ``orig.*`` fields resolve).
    ``archive_paths``: directories holding the WARC files, tried in order (default: the
    ``archive/`` directory of each collection of the index). ``record_index``: record index
    file(s) (default: every ``*.rix`` in the index directories of the collections)."""

    def __init__(self, index: Any = None, archive_paths: Optional[Sequence[PathLike]] = None,
                 record_index: Optional[Union[PathLike, Sequence[PathLike]]] = None) -> None:
        from ..index.query import Index

        self._own_index = False
        index_dirs: List[str] = []
        if index is not None and not isinstance(index, Index):
            given = [index] if isinstance(index, (str, os.PathLike)) else list(index)
            index = Index(*[str(os.fspath(p)) for p in given])
            self._own_index = True
        self.index = index
        if index is not None:
            index_dirs = _index_dirs(index)
        if archive_paths is None:
            dirs = []
            for d in index_dirs:
                root = os.path.dirname(d) if os.path.basename(d) == "indexes" else d
                a = os.path.join(root, "archive")
                if os.path.isdir(a) and a not in dirs:
                    dirs.append(a)
            archive_paths = dirs
        self.archives = _Archives(archive_paths)
        if record_index is None:
            rix = sorted({p for d in index_dirs for p in glob.glob(os.path.join(glob.escape(d), "*" + RECORD_INDEX_EXT))})
        elif isinstance(record_index, (str, os.PathLike)):
            rix = [os.fspath(record_index)]
        else:
            rix = [os.fspath(p) for p in record_index]
        self.record_indexes = [RecordIndex(p) for p in rix]

    def close(self) -> None:
        for r in self.record_indexes:
            r.close()
        if self._own_index and self.index is not None:
            self.index.close()

    def __enter__(self) -> "CaptureLoader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the public doors
    def load(self, cdx: Union[bytes, str, Mapping[str, Any]], *, dechunk: bool = True, decompress: bool = False,
             request_url: Optional[str] = None) -> LoadedCapture:
        """The capture an index line (or dict) names, resolved. With ``request_url``, a 3xx
        capture whose Location is that URL raises SelfRedirect (as pywb's replay checks)."""
        f = capture_fields(cdx)
        opened: List[_Opened] = []
        try:
            res = self._resolve(f, opened)
            cap = self._build(f, res, opened, dechunk, decompress)
        except BaseException:
            for o in opened:
                o.close()
            raise
        if request_url is not None:
            try:
                check_self_redirect(request_url, f, cap)
            except SelfRedirect:
                cap.close()
                raise
        return cap

    def load_closest(self, url: str, timestamp: str, *, fuzzy: bool = True, dechunk: bool = True,
                     decompress: bool = False) -> LoadedCapture:
        """The capture of ``url`` closest to ``timestamp`` that loads, as pywb's replay picks it:
        the captures of an exact query (and its fuzzy fallback) in closest order, each tried
        until one loads; self-redirects are skipped. ``.skipped`` says what was passed over."""
        if self.index is None:
            raise CaptureNotFound(f"{url}: no index to look it up in")
        params: Dict[str, Any] = {"closest": timestamp, "matchType": "exact"}
        if not fuzzy:
            params["allowFuzzy"] = "false"
        caps = self.index.query(url, **params)
        if not caps:
            raise CaptureNotFound(f"{url}: no capture in the index")
        skipped: List[Tuple[Dict[str, Any], str]] = []
        sr_key: List[Optional[str]] = [None]
        for c in caps:
            try:
                cap = self.load(c, dechunk=dechunk, decompress=decompress)
            except ArchiveError as e:
                skipped.append((c, str(e)))
                continue
            try:
                check_self_redirect(url, c, cap, sr_key)
            except SelfRedirect as e:
                cap.close()
                skipped.append((c, str(e)))
                continue
            cap.skipped = skipped
            return cap
        why = "; ".join(f"{c.get('timestamp')} {c.get('filename')}:{c.get('offset')}: {msg}"
                        for c, msg in skipped[:5])
        more = f" (and {len(skipped) - 5} more)" if len(skipped) > 5 else ""
        raise CaptureNotFound(f"{url}: none of its {len(caps)} captures near {timestamp} could be loaded: "
                              f"{why}{more}")

    # -- resolution
    def _open(self, filename: str, offset: Any, opened: List[_Opened], what: Mapping[str, Any]) -> _Opened:
        off = _int_field({"url": what.get("url"), "timestamp": what.get("timestamp"), "offset": offset}, "offset")
        path = self.archives.path(filename)
        o = _open_at(path, filename, off)
        opened.append(o)
        return o

    def _resolve(self, f: Dict[str, Any], opened: List[_Opened]) -> _Resolution:
        filename = f.get("filename")
        if not filename or filename == "-":
            # no record of its own (an old-style revisit line): everything from the original,
            # as pywb's ResolvingLoader.__call__ means to (its WARCPathLoader crashes here)
            orig, how = self._find_original(f, None, opened, 0)
            return _Resolution(None, orig, "blank-filename, " + how)
        head = self._open(str(filename), f.get("offset"), opened, f)
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
            orig, how = self._find_original(f, head, opened, 0)
        except OriginalNotFound:
            if empty:   # an empty revisit of the empty payload with nobody to take headers from
                return _Resolution(head, head, "empty-payload digest")
            raise
        return _Resolution(head, orig, how)

    def _find_original(self, f: Mapping[str, Any], head: Optional[_Opened], opened: List[_Opened],
                       depth: int) -> Tuple[_Opened, str]:
        looked: List[str] = []
        rec = head.rec if head is not None else None
        digest = Digest.find(f.get("digest"))
        if digest is None and rec is not None:
            digest = Digest.find(rec.headers.get("WARC-Payload-Digest"))
        ts = str(f.get("timestamp") or "") or (date_timestamp(rec.date) if rec is not None else None) or ""
        own_url = f.get("url") or (rec.target_uri if rec is not None else None)
        what = f"revisit of {own_url} at {ts}" + (f" ({head.filename}:{rec.offset})" if head and rec else "")

        # 1. orig.* (resolveRevisits joined it in the result)
        of = f.get("orig.filename")
        if of and of != "-":
            try:
                return self._open(str(of), f.get("orig.offset"), opened, f), "orig.* fields"
            except ArchiveError as e:
                looked.append(f"orig.filename {of} at {f.get('orig.offset')}: {e}")

        # 2 and 3: lookups on the index
        ref_uri = unbracket(rec.headers.get("WARC-Refers-To-Target-URI")) if rec is not None else None
        ref_ts = date_timestamp(rec.headers.get("WARC-Refers-To-Date")) if rec is not None else None
        lookups: List[Tuple[str, str, Optional[Digest], str]] = []
        if ref_uri:
            lookups.append((ref_uri, ref_ts or ts, digest, "WARC-Refers-To-Target-URI"))
        if own_url and digest and not (ref_uri == own_url):
            lookups.append((str(own_url), ref_ts or ts, digest, "same-URL digest join"))
        for url, when, dg, how in lookups:
            if self.index is None:
                looked.append(f"{how}: url={url} (no index to look it up in)")
                continue
            found = self._from_index(url, when, dg, how, opened, looked)
            if found is not None:
                return found, how

        # 4. WARC-Refers-To (a record id) in the record indexes
        ref_id = unbracket(rec.headers.get("WARC-Refers-To")) if rec is not None else None
        if ref_id:
            found = self._from_record_id(ref_id, digest, opened, looked, depth)
            if found is not None:
                return found, "WARC-Refers-To record id"

        # 5. the digest alone (URL-agnostic) in the record indexes
        if digest:
            found = self._from_digest_index(digest, ts, opened, looked)
            if found is not None:
                return found, "digest in the record index"
        elif not lookups and not ref_id:
            looked.append("the revisit has no digest, no WARC-Refers-To-Target-URI and no WARC-Refers-To")
        raise OriginalNotFound(what, looked)

    def _from_index(self, url: str, when: str, digest: Optional[Digest], how: str, opened: List[_Opened],
                    looked: List[str]) -> Optional[_Opened]:
        params: Dict[str, Any] = {"matchType": "exact", "allowFuzzy": "false", "limit": str(MAX_CANDIDATES),
                                  "filter": ["!=mime:warc/revisit", "!=filename:-"]}
        if when:
            params["closest"] = when
        if digest:
            params["filter"].append(_digest_filter(digest))
        try:
            cands = self.index.query(url, **params)
        except ArchiveError as e:
            looked.append(f"{how}: url={url}: {e}")
            return None
        if digest:
            cands = [c for c in cands if Digest.find(c.get("digest")) == digest]
        what = f"{how}: url={url} closest to {when or '-'}, not a revisit, digest {digest or 'any'}"
        if not cands:
            looked.append(f"{what}: no such capture in the index")
            return None
        errors = []
        for c in cands:
            try:
                o = self._open(str(c.get("filename")), c.get("offset"), opened, c)
            except ArchiveError as e:
                errors.append(str(e))
                continue
            if o.rec.type == "revisit":
                errors.append(f"{o.filename}:{o.rec.offset} is a revisit record (stale index?)")
                continue
            return o
        looked.append(f"{what}: {len(cands)} found, none loaded ({errors[0]})")
        return None

    def _from_record_id(self, ref_id: str, digest: Optional[Digest], opened: List[_Opened], looked: List[str],
                        depth: int) -> Optional[_Opened]:
        what = f"WARC-Refers-To <{ref_id}> in the record index"
        if not self.record_indexes:
            looked.append(f"{what}: the collection has none (write one with write_record_index)")
            return None
        entries = [e for r in self.record_indexes for e in r.by_id(ref_id)]
        if not entries:
            looked.append(f"{what}: no such record in {', '.join(r.path for r in self.record_indexes)}")
            return None
        errors = []
        for e in entries:
            if digest and e.digest and Digest.find(e.digest) != digest:
                errors.append(f"{e.filename}:{e.offset} has digest {e.digest}, not {digest}")
                continue
            try:
                o = self._open(e.filename, e.offset, opened, {"url": e.url, "timestamp": e.timestamp})
            except ArchiveError as err:
                errors.append(str(err))
                continue
            if o.rec.type == "revisit":
                if depth >= MAX_CHAIN:
                    errors.append(f"revisits refer to revisits more than {MAX_CHAIN} deep")
                    continue
                try:
                    inner, _ = self._find_original(_fields_of(o.rec), o, opened, depth + 1)
                except OriginalNotFound as err:
                    errors.append(f"it is a revisit whose own original was not found ({'; '.join(err.looked)})")
                    continue
                return inner
            return o
        looked.append(f"{what}: found, not loaded ({errors[0]})")
        return None

    def _from_digest_index(self, digest: Digest, ts: str, opened: List[_Opened], looked: List[str]) -> Optional[_Opened]:
        what = f"digest {digest} in the record index (any URL)"
        if not self.record_indexes:
            looked.append(f"{what}: the collection has none")
            return None
        entries = [e for r in self.record_indexes for e in r.by_digest(digest)]
        if not entries:
            looked.append(f"{what}: not there")
            return None
        if ts:
            target = _seconds(ts)
            entries.sort(key=lambda e: abs(_seconds(e.timestamp) - target) if e.timestamp else 1 << 62)
        errors = []
        for e in entries[:MAX_CANDIDATES]:
            try:
                return self._open(e.filename, e.offset, opened, {"url": e.url, "timestamp": e.timestamp})
            except ArchiveError as err:
                errors.append(str(err))
        looked.append(f"{what}: {len(entries)} found, none loaded ({errors[0]})")
        return None

    # -- segments (a record continued in other records, maybe other files)
    def _segments(self, payload: _Opened, opened: List[_Opened]) -> List[Tuple[str, int]]:
        rec = payload.rec
        num = (rec.headers.get("WARC-Segment-Number") or "").strip()
        if num != "1":
            return []
        origin = unbracket(rec.record_id) or ""
        found: Dict[int, Tuple[str, int, bool]] = {}
        for r in self.record_indexes:
            for e in r.segments(origin):
                if e.segment is not None and e.segment >= 2:
                    found.setdefault(e.segment, (e.filename, e.offset, e.total_length is not None))
        if not found:
            self._scan_segments(payload, origin, found)
        n = 2
        out = []
        while n in found:
            fname, off, last = found[n]
            out.append((fname, off))
            if last:
                return out
            n += 1
        raise SegmentNotFound(f"record <{origin}> ({payload.filename}:{rec.offset}) is segmented and its segment "
                              f"{n} was not found (looked in the record index and the "
                              f"{SEGMENT_SCAN_RECORDS} records after it in up to {SEGMENT_SCAN_FILES} files)")

    def _scan_segments(self, payload: _Opened, origin: str, found: Dict[int, Tuple[str, int, bool]]) -> None:
        from ..index.cdx import ARCHIVE_EXTENSIONS

        d = os.path.dirname(payload.path)
        prefix = payload.filename[: len(payload.filename) - len(os.path.basename(payload.filename))]
        names = sorted(n for n in os.listdir(d) if n.endswith(ARCHIVE_EXTENSIONS))
        here = os.path.basename(payload.path)
        files: List[Tuple[str, str, Optional[int]]] = [(payload.path, payload.filename, payload.rec.offset)]
        if here in names:
            files += [(os.path.join(d, n), prefix + n, None) for n in names[names.index(here) + 1:]]
        for path, fname, start in files[: SEGMENT_SCAN_FILES + 1]:
            with _open_warc(path, parse_http=False, offset=start) as it:
                for i, r in enumerate(it):
                    if start is not None and i == 0:
                        continue
                    if i > SEGMENT_SCAN_RECORDS:
                        break
                    if r.type == "continuation" and unbracket(r.headers.get("WARC-Segment-Origin-ID")) == origin:
                        num = (r.headers.get("WARC-Segment-Number") or "").strip()
                        if num.isdigit():
                            last = r.headers.get("WARC-Segment-Total-Length") is not None
                            found.setdefault(int(num), (fname, r.offset, last))
                            if last:
                                return

    def _open_segment(self, fname: str, offset: int, origin: str, opened: List[_Opened]) -> _Opened:
        o = self._open(fname, offset, opened, {})
        if o.rec.type != "continuation" or unbracket(o.rec.headers.get("WARC-Segment-Origin-ID")) != origin:
            raise RecordFormatError(o.path, offset, f"not a continuation of <{origin}>",
                                    "the record index does not match the file: write it again")
        return o

    # -- the answer
    def _build(self, f: Dict[str, Any], res: _Resolution, opened: List[_Opened], dechunk: bool,
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
        origin = unbracket(payload.rec.record_id) or ""
        segments = [self._open_segment(fn, off, origin, opened) for fn, off in self._segments(payload, opened)]
        records += [s.info("segment") for s in segments]
        raw: Any = payload.rec.payload
        if segments:
            raw = Chain(raw, [functools.partial(_payload_of, s) for s in segments])
        body = payload_stream(raw, payload.rec.http, dechunk=dechunk, decompress=decompress)
        warc_headers = (head or payload).rec.headers
        keep = list(opened)

        def closer() -> None:
            for o in keep:
                o.close()

        return LoadedCapture(dict(f), headers, warc_headers, body.stream, records, res.how, synthetic,
                             body.transfer_decoded, body.content_decoded, [closer])


def _digest_filter(d: Digest) -> str:
    """A CDX API filter keeping the lines whose digest may be ``d``: labelled or not, in base32
    (padded or not) or hex, any case. The index spells digests as its writer did; the
    candidates are then compared as Digest values."""
    return "~digest:(?i)(?:[a-z0-9-]+:)?(?:" + d.base32.rstrip("=") + "=*|" + d.hex + ")$"


def _payload_of(o: _Opened) -> Any:
    return o.rec.payload


def _fields_of(rec: Record) -> Dict[str, Any]:
    return {"url": rec.target_uri, "timestamp": date_timestamp(rec.date) or "",
            "digest": rec.headers.get("WARC-Payload-Digest") or "-"}


def _index_dirs(index: Any) -> List[str]:
    """The directories of an Index's files (collections' indexes/ dirs among them)."""
    out: List[str] = []
    for s in getattr(getattr(index, "engine", None), "sources", []):
        p = getattr(s.source, "path", None)
        if p:
            d = os.path.dirname(os.path.abspath(os.fspath(p)))
            if d not in out:
                out.append(d)
    return out


# --------------------------------------------------------------------------- self-redirects

def check_self_redirect(request_url: str, cdx: Mapping[str, Any], cap: LoadedCapture,
                        sr_key: Optional[List[Optional[str]]] = None) -> None:
    """Raise SelfRedirect when a capture redirects to the URL asked for, by pywb's rule
    (``responseloader.py:BaseLoader.raise_on_self_redirect``): only when the index line's status
    is not 2xx/4xx/5xx and the served status is 3xx other than 304; the Location (made
    absolute with the capture's host when it starts with ``/``) and the request URL are
    compared lower-cased, without scheme and trailing ``/``, or the Location's SURT with the
    capture's key (the first self-redirect's key thereafter, ``sr_key``)."""
    status = str(cdx.get("status") or "")
    if status.startswith(("2", "4", "5")):
        return
    code = cap.headers.status
    if not code.startswith("3") or code == "304":
        return
    location = cap.headers.get("Location")
    if not location:
        return
    loc = location.lower()
    if loc.startswith("/"):
        loc = urlsplit(str(cdx.get("url") or "")).netloc + loc
    loc = loc.split("://", 1)[-1].rstrip("/")
    req = request_url.lower().split("://", 1)[-1].rstrip("/")
    key = (sr_key[0] if sr_key and sr_key[0] else None) or str(cdx.get("urlkey") or "")
    same = req == loc
    if not same:
        from ..surt import surt

        try:
            same = surt(loc) == key
        except UrlError:
            same = False
    if same:
        if sr_key is not None:
            sr_key[0] = key
        raise SelfRedirect(f"{cdx.get('url')} at {cdx.get('timestamp')} redirects to itself ({location})")


# --------------------------------------------------------------------------- module-level doors

def load_capture(cdx: Union[bytes, str, Mapping[str, Any]], *, index: Any = None,
                 archive_paths: Optional[Sequence[PathLike]] = None,
                 record_index: Optional[Union[PathLike, Sequence[PathLike]]] = None,
                 dechunk: bool = True, decompress: bool = False,
                 request_url: Optional[str] = None) -> LoadedCapture:
    """The capture ``cdx`` names (a CDXJ/CDX line, or a dict as ``Index.query`` returns), with
    its revisit resolved. See ``CaptureLoader`` for ``index``, ``archive_paths`` and
    ``record_index``; loading many captures, keep one ``CaptureLoader``."""
    loader = CaptureLoader(index, archive_paths, record_index)
    try:
        return loader.load(cdx, dechunk=dechunk, decompress=decompress, request_url=request_url)
    finally:
        loader.close()


def load_closest(url: str, timestamp: str, index: Any, *, archive_paths: Optional[Sequence[PathLike]] = None,
                 record_index: Optional[Union[PathLike, Sequence[PathLike]]] = None, fuzzy: bool = True,
                 dechunk: bool = True, decompress: bool = False) -> LoadedCapture:
    """The capture of ``url`` closest to ``timestamp`` that loads (pywb's replay fallback)."""
    loader = CaptureLoader(index, archive_paths, record_index)
    try:
        return loader.load_closest(url, timestamp, fuzzy=fuzzy, dechunk=dechunk, decompress=decompress)
    finally:
        loader.close()


__all__ = ["ArchiveFileNotFound", "CaptureLineError", "CaptureLoader", "LoadedCapture",
           "OriginalNotFound", "RecordInfo", "SegmentNotFound", "SelfRedirect", "UnsafeFilename",
           "capture_fields", "check_filename", "check_self_redirect", "load_capture",
           "load_closest"]
