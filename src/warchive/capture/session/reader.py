"""The session database: an append-only journal of what happened to every URL of a crawl session.

The crawler, the WARC writer's caller and dedup append one *entry* (one JSON
object on one line) as soon as they know a fact; entries for several URLs
interleave. A reader merges them into one ``UrlRecord`` per original URL (the
URL the crawler set out to fetch), whose redirect chain, WARC records,
failures and skip decisions are found by any URL of the chain.

The file (docs/format.md, "Session journals", is the full specification)::

    {"warchive-session":1,"created":"2026-11-29T22:50:01.123456Z","software":"warchive 0.1.0"}
    {"kind":"session","t":"...","software":"warchive 0.1.0","config":{...},"seeds":["https://a.example/"]}
    {"kind":"fetch","url":"https://a.example/","t":"...","status":301,"location":"https://a.example/en/"}
    {"kind":"record","url":"https://a.example/","t":"...","type":"response","warc":"WA-....warc.gz","offset":0,"length":612}
    {"kind":"fetch","url":"https://a.example/","hop":"https://a.example/en/","t":"...","status":200,...}
    {"kind":"failed","url":"https://b.example/x","t":"...","reason":"timeout after 30 s"}
    {"kind":"skipped","url":"https://c.example/y.png","t":"...","reason":"duplicate","digest":"sha1:...",...}

Rules a reader keeps: the first line is the version line; an entry is complete
only with its line feed (a torn last line is ignored, and a writer opening the
journal cuts it off before it appends); fields and kinds a reader does not know
are kept (``Session.fields(i)`` / ``UrlRecord.fields()`` return every field;
the line itself is never rewritten); a line that is not a JSON object anywhere
but at the end is damage: ``SessionFormatError`` (file, byte offset), or a
``SessionWarning`` and the line skipped with ``skip_errors=True``.

A sidecar index ``JOURNAL.idx`` (sorted ``key<TAB>offsets`` lines, sorted by the
``line_sort`` kernel and searched in place like a CDX file) answers a lookup in
O(log N) without reading the journal; it is derived data, rebuilt when stale,
and a journal that grew past it has its tail scanned.

This module writes and reads journals; it must not fetch, write WARCs or
decide dedup: those call it.
"""

from __future__ import annotations

import gc
import json
import mmap
import os
import re
import socket
import time
import warnings
import zlib
from array import array
from bisect import bisect_left
from itertools import accumulate
from typing import (Any, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Set, Tuple, Type,
                    TypeVar, Union)

import msgspec

from ... import __version__
from ...durable import AtomicOutput
from ...sortedfile import SortedFile
from ...errors import SessionFormatError, SessionLockedError, UnsupportedFormatError

PathLike = Union[str, "os.PathLike[str]"]

FORMAT_VERSION = 1                 # the "warchive-session" number of the version line
VERSION_KEY = "warchive-session"
SOFTWARE = f"warchive {__version__}"
DEFAULT_FSYNC: Union[str, int] = 1000   # fdatasync every 1000 entries, and at close
INDEX_SUFFIX = ".idx"
INDEX_MAGIC = b" warchive-session-index "
INDEX_VERSION = 1
TAIL_LIMIT = 8 << 20               # a journal grown by more than this past its sidecar: rebuild it
_CHECK_BYTES = 256                 # the journal bytes before the sidecar's end that it checksums

__all__ = ["SessionDB", "Session", "SessionIndex", "UrlRecord", "Hop", "Entry", "SessionWarning",
           "read_session", "build_index", "lookup", "FORMAT_VERSION", "DEFAULT_FSYNC", "KINDS", "DUPLICATE"]

#: The `reason` of dedup's "write nothing" decisions (``SessionDB.skipped``).
DUPLICATE = "duplicate"

#: The entry kinds this version writes and understands (others are kept as they are).
KINDS = ("session", "fetch", "record", "failed", "skipped", "saved", "converted", "outlinks")


class SessionWarning(UserWarning):
    """Something in a session journal was repaired or skipped (torn tail cut, damaged line skipped,
    a live session opened with force)."""


class Entry(msgspec.Struct, gc=False, omit_defaults=True):
    """The fields of an entry that this version knows (every one optional); the journal line
    holds the rest, see ``Session.fields``. ``kind`` is "" when the line has none."""

    kind: str = ""
    url: Optional[str] = None
    hop: Optional[str] = None
    t: Optional[str] = None
    # fetch
    status: Optional[int] = None
    location: Optional[str] = None
    content_type: Optional[str] = None
    size: Optional[int] = None
    etag: Optional[str] = None
    last_modified: Optional[str] = None
    duration: Optional[float] = None
    digest: Optional[str] = None
    headers: Optional[Dict[str, Any]] = None
    # record
    type: Optional[str] = None
    warc: Optional[str] = None
    offset: Optional[int] = None
    length: Optional[int] = None
    id: Optional[str] = None
    # saved, converted, outlinks
    path: Optional[str] = None
    conversion: Optional[str] = None
    links: Optional[List[Any]] = None
    # failed, skipped
    reason: Optional[str] = None
    attempt: Optional[int] = None
    original_uri: Optional[str] = None
    original_date: Optional[str] = None
    original_record_id: Optional[str] = None
    # session
    software: Optional[str] = None
    config: Optional[Dict[str, Any]] = None
    seeds: Optional[List[Any]] = None


_decode_entry = msgspec.json.Decoder(Entry).decode
_decode_any = msgspec.json.Decoder().decode


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"a session entry cannot hold {type(obj).__name__} values")


_encode = msgspec.json.Encoder(enc_hook=_enc_hook).encode


def now() -> str:
    """The current time as entries carry it: ISO 8601 UTC with microseconds."""
    t = time.time()
    s = int(t)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + f".{int((t - s) * 1e6):06d}Z"


class Head(msgspec.Struct, gc=False):
    """What loading a journal decodes of each entry: enough to group entries by original URL
    and to find a record by any URL of its chain. The rest is decoded when a record is made."""

    kind: str = ""
    url: Optional[str] = None
    hop: Optional[str] = None
    location: Optional[str] = None


_decode_head = msgspec.json.Decoder(Head).decode

S = TypeVar("S", bound=msgspec.Struct)


def lenient(line: bytes, type_: Type[S]) -> S:
    """`line` decoded as `type_` when some of its known fields have types this version does not
    expect (written by a newer version, or by hand): those fields are left out (the line keeps
    them). Raises msgspec.DecodeError / ValidationError when the line is not a JSON object."""
    d = _decode_any(line)
    if not isinstance(d, dict):
        raise msgspec.ValidationError(f"expected a JSON object, got {type(d).__name__}")
    fields = frozenset(type_.__struct_fields__)
    ok: Dict[str, Any] = {}
    for k, v in d.items():
        if k in fields:
            try:
                msgspec.convert({k: v}, type_)
            except msgspec.ValidationError:
                continue
            ok[k] = v
    return msgspec.convert(ok, type_)


def decode_entry(line: bytes) -> Entry:
    """One journal line (without its line feed) as an Entry; raises msgspec.DecodeError when
    it is not a JSON object."""
    try:
        return _decode_entry(line)
    except msgspec.ValidationError:
        return lenient(line, Entry)


# --- the pid lock ------------------------------------------------------------

def _proc_start(pid: int) -> Optional[str]:
    """The start time of process pid (Linux: /proc/PID/stat field 22), to tell a reused pid."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            s = f.read()
        return s[s.rfind(b")") + 2:].split()[19].decode()
    except (OSError, IndexError):
        return None


def _lock_info() -> Dict[str, Any]:
    pid = os.getpid()
    return {"pid": pid, "start": _proc_start(pid), "host": socket.gethostname()}


def read_lock(journal: PathLike) -> Optional[Dict[str, Any]]:
    """What the pid file next to a journal says ({"pid", "start", "host"}), or None."""
    try:
        with open(os.fspath(journal) + ".pid", "rb") as f:
            d = json.loads(f.read() or b"null")
    except (OSError, ValueError):
        return None
    return d if isinstance(d, dict) and isinstance(d.get("pid"), int) else None


def lock_is_live(info: Optional[Dict[str, Any]]) -> bool:
    """Is the process a pid file names still running? (A pid file of another host counts as live.)"""
    if not info:
        return False
    if info.get("host") not in (None, socket.gethostname()):
        return True
    pid = info["pid"]
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    start = info.get("start")
    if start is not None:
        cur = _proc_start(pid)
        if cur is not None and cur != start:
            return False  # the pid was reused by another process
    return True


def live_writer(journal: PathLike) -> Optional[int]:
    """The pid of the live process writing a journal, or None."""
    info = read_lock(journal)
    return int(info["pid"]) if info is not None and lock_is_live(info) else None


# --- writing -----------------------------------------------------------------

def _fsync_every(policy: Union[str, int, None]) -> int:
    if policy in (None, "none", 0):
        return 0
    if policy == "always":
        return 1
    if isinstance(policy, int) and not isinstance(policy, bool) and policy > 0:
        return policy
    raise ValueError(f"fsync must be 'none', 'always' or a number of entries, not {policy!r}")


class SessionDB:
    """The journal of a crawl session, opened for appending (created with its version line).

    Each method writes one entry with one ``write()`` (O_APPEND) and returns its byte offset
    in the journal. ``fsync``: "none" (the page cache only: a killed process loses nothing, a
    power cut may lose the last entries), "always" (fdatasync after every entry) or N (after
    every N entries); always at ``close()``. Default: every 1000 entries.

    A pid file (JOURNAL.pid) marks the session as being written: opening a journal that a live
    process writes raises ``SessionLockedError``; with ``force=True`` it warns
    (``SessionWarning``) and appends anyway (entries still never interleave within a line, and
    the torn-tail repair is left to the other writer). A pid file of a dead process is taken over.
    """

    def __init__(self, path: PathLike, *, fsync: Union[str, int, None] = DEFAULT_FSYNC,
                 force: bool = False, software: str = SOFTWARE) -> None:
        self.path = os.fspath(path)
        self.software = software
        self._every = _fsync_every(fsync)
        self._count = 0
        self._fd = -1
        self._owns_lock = self._lock(force)
        try:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
            self._prepare()
        except BaseException:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1
            self._unlock()
            raise

    # lock

    @property
    def lock_path(self) -> str:
        return self.path + ".pid"

    def _lock(self, force: bool) -> bool:
        mine = json.dumps(_lock_info()).encode() + b"\n"
        for _ in range(50):
            try:
                fd = os.open(self.lock_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
            except FileExistsError:
                pass
            else:
                try:
                    os.write(fd, mine)
                finally:
                    os.close(fd)
                return True
            info = read_lock(self.path)
            if info is None:
                # being written by its creator this very moment, or garbage left by a crash
                try:
                    age = time.time() - os.stat(self.lock_path).st_mtime
                except FileNotFoundError:
                    continue
                if age < 2.0:
                    time.sleep(0.05)
                    continue
            elif lock_is_live(info):
                if not force:
                    raise SessionLockedError(self.path, int(info["pid"]))
                warnings.warn(f"{self.path}: process {info['pid']} is writing this session too; "
                              "appending anyway (force)", SessionWarning, stacklevel=3)
                return False
            # stale: take it over (replace, then check that the file is ours: another
            # process may be taking it over at the same moment)
            tmp = f"{self.lock_path}.{os.getpid()}.tmp"
            with open(tmp, "wb") as f:
                f.write(mine)
            os.replace(tmp, self.lock_path)
            back = read_lock(self.path)
            if back is not None and back.get("pid") == os.getpid():
                return True
        raise SessionLockedError(self.path, -1)

    def _unlock(self) -> None:
        if not self._owns_lock:
            return
        self._owns_lock = False
        info = read_lock(self.path)
        if info is not None and info.get("pid") == os.getpid():
            try:
                os.unlink(self.lock_path)
            except FileNotFoundError:
                pass

    # open, repair, version line

    def _prepare(self) -> None:
        fd = self._fd
        size = os.fstat(fd).st_size
        if size:
            head = os.pread(fd, min(size, 1 << 16), 0)
            nl = head.find(b"\n")
            if nl < 0:
                if size > len(head) or not self._owns_lock:
                    raise SessionFormatError(self.path, 0, "no version line: this is not a warchive session "
                                                           "journal", "name a new file for the session")
                os.ftruncate(fd, 0)  # a journal killed while its version line was written
                size = 0
            else:
                _version_line(self.path, head[:nl])
                if self._owns_lock and os.pread(fd, 1, size - 1) != b"\n":
                    size = self._cut_torn_tail(size)
        if size == 0:
            self._write(_encode({VERSION_KEY: FORMAT_VERSION, "created": now(), "software": self.software})
                        + b"\n", count=False)

    def _cut_torn_tail(self, size: int) -> int:
        """Truncate the journal after its last line feed: the bytes after it are an entry whose
        write was cut short (it never happened), and the next entry must start a line."""
        pos = size
        while pos > 0:
            start = max(0, pos - (1 << 16))
            chunk = os.pread(self._fd, pos - start, start)
            i = chunk.rfind(b"\n")
            if i >= 0:
                end = start + i + 1
                os.ftruncate(self._fd, end)
                warnings.warn(f"{self.path}: cut a torn last line of {size - end} bytes at byte {end} "
                              "(an entry whose write was interrupted)", SessionWarning, stacklevel=4)
                return end
            pos = start
        raise AssertionError("unreachable: the version line ends with a line feed")

    # writing

    def _write(self, line: bytes, count: bool = True) -> int:
        fd = self._fd
        if fd < 0:
            raise ValueError(f"{self.path}: the session journal is closed")
        before = -1
        try:
            n = os.write(fd, line)
            if n != len(line):  # a short write (disk full, signal): finish the line or cut it off
                before = os.lseek(fd, 0, os.SEEK_CUR) - n
                view = memoryview(line)[n:]
                while view:
                    view = view[os.write(fd, view):]
        except BaseException:
            if self._owns_lock and before >= 0:
                try:
                    os.ftruncate(fd, before)
                except OSError:
                    pass
            raise
        pos = os.lseek(fd, 0, os.SEEK_CUR) - len(line)
        if count:
            self._count += 1
            if self._every and self._count % self._every == 0:
                os.fdatasync(fd)
        return pos

    def append(self, entry: Mapping[str, Any]) -> int:
        """Write one entry as it is (any kind, any fields: what round-trips unknown entries);
        returns its byte offset."""
        if not isinstance(entry, Mapping):
            raise TypeError("an entry is a mapping of field names to JSON values")
        if VERSION_KEY in entry:
            raise ValueError(f"{VERSION_KEY!r} is the version line's key, not an entry field")
        return self._write(_encode(entry) + b"\n")

    def _entry(self, kind: str, url: Optional[str], t: Optional[str], fields: Iterable[Tuple[str, Any]],
               extra: Mapping[str, Any]) -> int:
        d: Dict[str, Any] = {"kind": kind}
        if url is not None:
            d["url"] = url
        d["t"] = t if t is not None else now()
        for k, v in fields:
            if v is not None:
                d[k] = v
        for k, v in extra.items():
            if v is not None and k not in ("kind", "url"):
                d[k] = v
        return self._write(_encode(d) + b"\n")

    def start(self, *, config: Optional[Mapping[str, Any]] = None, seeds: Sequence[str] = (),
              software: Optional[str] = None, t: Optional[str] = None, **extra: Any) -> int:
        """The session's configuration, software and seed URLs (once per run; a resumed
        session writes another)."""
        return self._entry("session", None, t, [("software", software or self.software),
                                                ("config", dict(config) if config is not None else {}),
                                                ("seeds", list(seeds))], extra)

    def fetched(self, url: str, status: int, *, hop: Optional[str] = None, location: Optional[str] = None,
                content_type: Optional[str] = None, size: Optional[int] = None, etag: Optional[str] = None,
                last_modified: Optional[str] = None, duration: Optional[float] = None,
                digest: Optional[str] = None, headers: Optional[Mapping[str, str]] = None,
                t: Optional[str] = None, **extra: Any) -> int:
        """One HTTP exchange done for the original URL `url`: at `hop` when it is a later URL of its
        redirect chain (`location`: where a 3xx points). `content_type` as sent (with its charset),
        `size` of the payload, `duration` in seconds, `digest` the payload digest as the WARC
        says it, `headers` the extra request headers chosen (If-None-Match, cookies, ...)."""
        return self._entry("fetch", url, t, [
            ("hop", hop if hop != url else None), ("status", status), ("location", location),
            ("content_type", content_type), ("size", size), ("etag", etag), ("last_modified", last_modified),
            ("duration", duration), ("digest", digest), ("headers", dict(headers) if headers else None)], extra)

    def record(self, url: str, warc: str, offset: int, length: int, *, type: str = "response",
               record_id: Optional[str] = None, hop: Optional[str] = None, t: Optional[str] = None,
               **extra: Any) -> int:
        """A WARC record written for `url` (at `hop`): file name, offset and length as the writer
        reports them (warcio's: the gzip member for .gz), WARC-Type, WARC-Record-ID."""
        return self._entry("record", url, t, [("hop", hop if hop != url else None), ("type", type),
                                              ("warc", os.fspath(warc)), ("offset", offset),
                                              ("length", length), ("id", record_id)], extra)

    def failed(self, url: str, reason: str, *, hop: Optional[str] = None, attempt: Optional[int] = None,
               status: Optional[int] = None, t: Optional[str] = None, **extra: Any) -> int:
        """An attempt at `url` failed (connection refused, timeout, an HTTP status the crawler
        retries): `warchive session failed` lists it until a later attempt succeeds."""
        return self._entry("failed", url, t, [("hop", hop if hop != url else None), ("reason", reason),
                                              ("status", status), ("attempt", attempt)], extra)

    def skipped(self, url: str, reason: str, *, digest: Optional[str] = None,
                original_uri: Optional[str] = None, original_date: Optional[str] = None,
                original_record_id: Optional[str] = None, hop: Optional[str] = None,
                status: Optional[int] = None, t: Optional[str] = None, **extra: Any) -> int:
        """A deliberate decision to write nothing for `url`: dedup's "write nothing" (reason
        "duplicate", with the payload `digest` and the capture it duplicates: `original_uri`,
        `original_date` (WARC-Date form), `original_record_id`), or robots, scope, size limits."""
        return self._entry("skipped", url, t, [
            ("hop", hop if hop != url else None), ("reason", reason), ("status", status), ("digest", digest),
            ("original_uri", original_uri), ("original_date", original_date),
            ("original_record_id", original_record_id)], extra)

    def saved(self, url: str, path: PathLike, *, hop: Optional[str] = None, t: Optional[str] = None,
              **extra: Any) -> int:
        """The body of `url` was mirrored to the local file `path`."""
        return self._entry("saved", url, t, [("hop", hop if hop != url else None), ("path", os.fspath(path))],
                           extra)

    def converted(self, url: str, conversion: str, *, path: Optional[PathLike] = None,
                  t: Optional[str] = None, **extra: Any) -> int:
        """A conversion was applied to what `url` gave (e.g. "links" for link conversion, "backup")."""
        return self._entry("converted", url, t, [("conversion", conversion),
                                                 ("path", os.fspath(path) if path is not None else None)], extra)

    def outlinks(self, url: str, links: Sequence[str], *, hop: Optional[str] = None, t: Optional[str] = None,
                 **extra: Any) -> int:
        """The links found in what `url` gave (absolute URLs, in document order)."""
        return self._entry("outlinks", url, t, [("hop", hop if hop != url else None), ("links", list(links))],
                           extra)

    # life

    def sync(self) -> None:
        """Everything written so far on disk (fdatasync)."""
        if self._fd >= 0:
            os.fdatasync(self._fd)

    def close(self) -> None:
        if self._fd >= 0:
            try:
                os.fdatasync(self._fd)
            finally:
                os.close(self._fd)
                self._fd = -1
                self._unlock()

    @property
    def closed(self) -> bool:
        return self._fd < 0

    def __enter__(self) -> "SessionDB":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_fd", -1) >= 0:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = -1
            self._unlock()


# --- reading -----------------------------------------------------------------

def _version_line(path: str, line: bytes) -> Dict[str, Any]:
    try:
        d = _decode_any(line)
    except msgspec.DecodeError:
        d = None
    if not isinstance(d, dict) or not isinstance(d.get(VERSION_KEY), int):
        raise SessionFormatError(path, 0, f"not a warchive session journal (the first line must be the version "
                                          f'line {{"{VERSION_KEY}": {FORMAT_VERSION}, ...}})')
    if d[VERSION_KEY] > FORMAT_VERSION:
        raise UnsupportedFormatError(f"{path}: session journal format version {d[VERSION_KEY]} is newer than "
                                     f"this warchive reads ({FORMAT_VERSION}): upgrade warchive")
    if d[VERSION_KEY] < 1:
        raise SessionFormatError(path, 0, f"bad session journal version {d[VERSION_KEY]}")
    return d


def _damaged(path: str, pos: int, line: bytes, why: str, skip_errors: bool) -> None:
    err = SessionFormatError(path, pos, f"damaged entry ({why}): {line[:80]!r}",
                             "a line in the middle of the journal cannot be a torn write; read with "
                             "skip_errors=True / --skip-errors to skip it")
    if not skip_errors:
        raise err
    warnings.warn(str(err), SessionWarning, stacklevel=4)


class Parsed:
    """Journal bytes split into entries: the version line, each entry's line (without its line
    feed), decoded head and byte offset, and how many bytes of torn tail were ignored."""

    __slots__ = ("info", "lines", "heads", "_positions", "_pos0", "torn", "end")

    def __init__(self, info: Optional[Dict[str, Any]], lines: List[bytes], heads: List[Head],
                 positions: "Optional[array[int]]", torn: int, end: int, pos0: int = 0) -> None:
        self.info = info
        self.lines = lines
        self.heads = heads
        self._positions = positions
        self._pos0 = pos0
        self.torn = torn
        self.end = end  # the offset after the last complete line

    @property
    def positions(self) -> "array[int]":
        """The byte offset of each entry (computed when first asked for: every line was kept)."""
        if self._positions is None:
            p = array("q", accumulate(map((1).__add__, map(len, self.lines)), initial=self._pos0))
            p.pop()
            self._positions = p
        return self._positions


def parse_journal(path: str, data: bytes, start: int = 0, *, skip_errors: bool = False,
                  version: bool = True) -> Parsed:
    """Split journal bytes into entries, from byte `start` (where a line begins; offsets are
    counted from the start of `data`). With `version`, the first line is the version line."""
    lines = data[start:].split(b"\n") if start else data.split(b"\n")
    torn = len(lines.pop())  # the bytes after the last line feed: a torn write, or nothing
    end = len(data) - torn
    info: Optional[Dict[str, Any]] = None
    pos0 = start
    if version:
        if not lines:
            return Parsed(None, [], [], array("q"), torn, end)
        info = _version_line(path, lines[0])
        pos0 = start + len(lines[0]) + 1
        del lines[0]
    gc_was = gc.isenabled()
    gc.disable()  # millions of new objects, no cycles among them: no collections while they come
    try:
        try:
            heads = list(map(_decode_head, lines))
        except (msgspec.DecodeError, msgspec.ValidationError):
            return _parse_slow(path, info, lines, pos0, torn, end, skip_errors)
    finally:
        if gc_was:
            gc.enable()
    return Parsed(info, lines, heads, None, torn, end, pos0)


def _parse_slow(path: str, info: Optional[Dict[str, Any]], body: List[bytes], pos: int, torn: int, end: int,
                skip_errors: bool) -> Parsed:
    """Line by line: blank lines are no entries, damaged ones raise (or are skipped)."""
    lines: List[bytes] = []
    heads: List[Head] = []
    positions = array("q")
    for line in body:
        try:
            try:
                h = _decode_head(line)
            except msgspec.ValidationError:
                h = lenient(line, Head)
        except (msgspec.DecodeError, msgspec.ValidationError) as x:
            if line.strip():  # a blank line is no entry (and no damage)
                _damaged(path, pos, line, str(x), skip_errors)
            pos += len(line) + 1
            continue
        lines.append(line)
        heads.append(h)
        positions.append(pos)
        pos += len(line) + 1
    return Parsed(info, lines, heads, positions, torn, end)


class Hop:
    """One URL of a redirect chain: its last fetch (status, location, ...), the WARC records
    written for it, its failed attempts and skip decisions."""

    __slots__ = ("url", "fetch", "records", "failures", "skips")

    def __init__(self, url: str) -> None:
        self.url = url
        self.fetch: Optional[Entry] = None
        self.records: List[Entry] = []
        self.failures: List[Entry] = []
        self.skips: List[Entry] = []

    @property
    def status(self) -> Optional[int]:
        return self.fetch.status if self.fetch is not None else None

    @property
    def location(self) -> Optional[str]:
        return self.fetch.location if self.fetch is not None else None

    def __repr__(self) -> str:
        return f"Hop({self.url!r}, status={self.status})"


_OUTCOME = {"fetch": "fetched", "failed": "failed", "skipped": "skipped"}
_HOP_KINDS = frozenset(("fetch", "record", "failed", "skipped"))
_KNOWN = frozenset(KINDS)


class UrlRecord:
    """Everything the journal says about one original URL, merged from its entries in journal order.

    ``state`` is what its last attempt came to: "fetched", "failed", "skipped" or "pending"
    (no fetch, failure or skip yet). ``chain`` lists the URLs fetched for it, first to last."""

    def __init__(self, url: str, entries: Sequence[Entry], positions: Sequence[int],
                 lines: Optional[Sequence[bytes]] = None) -> None:
        self.url = url
        self.entries = entries if isinstance(entries, list) else list(entries)
        # byte offsets of the entries in the journal, and the entries as written
        self.positions = positions if isinstance(positions, list) else list(positions)
        self.lines = lines if lines is None or isinstance(lines, list) else list(lines)
        self._hops: Optional[Dict[str, Hop]] = None
        self._chain: List[Hop] = []
        last = None
        for e in reversed(self.entries):
            if e.kind in _OUTCOME:
                last = e
                break
        self.last: Optional[Entry] = last  # the entry of the last attempt's outcome

    def _of(self, kind: str) -> List[Entry]:
        return [e for e in self.entries if e.kind == kind]

    @property
    def fetches(self) -> List[Entry]:
        return self._of("fetch")

    @property
    def records(self) -> List[Entry]:
        """The WARC records written for it (every hop)."""
        return self._of("record")

    @property
    def failures(self) -> List[Entry]:
        return self._of("failed")

    @property
    def skips(self) -> List[Entry]:
        return self._of("skipped")

    @property
    def saved(self) -> List[Entry]:
        return self._of("saved")

    @property
    def conversions(self) -> List[Entry]:
        return self._of("converted")

    @property
    def outlinks(self) -> List[Any]:
        out: List[Any] = []
        for e in self.entries:
            if e.kind == "outlinks" and e.links:
                out.extend(e.links)
        return out

    @property
    def other(self) -> List[Entry]:
        """Entries of kinds this version does not know (kept as they are)."""
        return [e for e in self.entries if e.kind not in _KNOWN]

    @property
    def chain(self) -> List[Hop]:
        """The URLs fetched for it, in the order they first appear (the original first)."""
        self._hops_map()
        return self._chain

    def _hops_map(self) -> Dict[str, Hop]:
        if self._hops is None:
            hops: Dict[str, Hop] = {}
            url = self.url
            for e in self.entries:
                k = e.kind
                if k in _HOP_KINDS:
                    hu = e.hop or url
                    h = hops.get(hu)
                    if h is None:
                        h = hops[hu] = Hop(hu)
                        self._chain.append(h)
                    if k == "fetch":
                        h.fetch = e
                    elif k == "record":
                        h.records.append(e)
                    elif k == "failed":
                        h.failures.append(e)
                    else:
                        h.skips.append(e)
            self._hops = hops
        return self._hops

    @property
    def state(self) -> str:
        return _OUTCOME.get(self.last.kind, "pending") if self.last is not None else "pending"

    @property
    def final(self) -> Optional[Hop]:
        """The hop of the last attempt's outcome."""
        if self.last is None:
            return None
        return self._hops_map()[self.last.hop or self.url]

    @property
    def status(self) -> Optional[int]:
        """The HTTP status the last attempt ended with (None when it failed before one)."""
        return self.last.status if self.last is not None else None

    def hop(self, url: str) -> Optional[Hop]:
        return self._hops_map().get(url)

    def keys(self) -> Set[str]:
        """Every URL that finds this record: the original, each hop, each redirect target."""
        ks = {self.url}
        ks.update(self._hops_map())
        for e in self.fetches:
            if e.location:
                ks.add(e.location)
        return ks

    def fields(self) -> List[Dict[str, Any]]:
        """Every entry with all its fields, those this version does not know included."""
        if self.lines is None:
            return [msgspec.structs.asdict(e) for e in self.entries]
        return [_decode_any(line) for line in self.lines]

    def __repr__(self) -> str:
        return f"UrlRecord({self.url!r}, state={self.state!r}, chain={[h.url for h in self.chain]!r})"


class Session:
    """A whole journal read into memory: each entry's line, head (kind and URLs) and byte offset,
    in journal order; full entries (``Entry``) and one ``UrlRecord`` per original URL are
    decoded on demand."""

    def __init__(self, path: str, parsed: Parsed) -> None:
        self.path = path
        self.info = parsed.info or {}
        self.lines = parsed.lines
        self.heads = parsed.heads
        self._parsed = parsed
        self.torn = parsed.torn
        self.end = parsed.end
        self._groups: Optional[Dict[str, List[int]]] = None
        self._keys: Optional[Dict[str, List[str]]] = None

    @property
    def version(self) -> int:
        return int(self.info.get(VERSION_KEY, FORMAT_VERSION))

    def __len__(self) -> int:
        return len(self.heads)

    @property
    def positions(self) -> "array[int]":
        """The byte offset of each entry in the journal."""
        return self._parsed.positions

    # entries

    def entry(self, i: int) -> Entry:
        """Entry i, decoded."""
        return decode_entry(self.lines[i])

    @property
    def entries(self) -> List[Entry]:
        """Every entry, decoded (about a second per million)."""
        return list(map(decode_entry, self.lines))

    def decode_all(self, type_: Type[S]) -> List[S]:
        """Every entry decoded as `type_`, a msgspec Struct of the fields a caller needs (the
        fewer, the faster); fields of unexpected types are left out."""
        dec = msgspec.json.Decoder(type_).decode
        gc_was = gc.isenabled()
        gc.disable()
        try:
            try:
                return list(map(dec, self.lines))
            except msgspec.ValidationError:
                out: List[S] = []
                for line in self.lines:
                    try:
                        out.append(dec(line))
                    except msgspec.ValidationError:
                        out.append(lenient(line, type_))
                return out
        finally:
            if gc_was:
                gc.enable()

    def raw(self, pos: int) -> bytes:
        """The journal line at byte offset `pos`, without its line feed."""
        i = bisect_left(self.positions, pos)
        if i >= len(self.positions) or self.positions[i] != pos:
            raise KeyError(f"{self.path}: no entry at byte {pos}")
        return self.lines[i]

    def fields(self, i: int) -> Dict[str, Any]:
        """Entry i with every field it has (unknown ones included)."""
        return _decode_any(self.lines[i])

    def all_fields(self) -> Iterator[Dict[str, Any]]:
        for line in self.lines:
            yield _decode_any(line)

    @property
    def sessions(self) -> List[Entry]:
        """The "session" entries (configuration, software, seeds), one per run."""
        return [self.entry(i) for i, h in enumerate(self.heads) if h.kind == "session"]

    @property
    def seeds(self) -> List[str]:
        out: List[str] = []
        for e in self.sessions:
            out.extend(s for s in (e.seeds or ()) if s not in out)
        return out

    @property
    def config(self) -> Dict[str, Any]:
        """The configuration of the last run."""
        s = self.sessions
        return dict(s[-1].config or {}) if s else {}

    @property
    def software(self) -> Optional[str]:
        s = self.sessions
        return s[-1].software if s else self.info.get("software")

    @property
    def writer_pid(self) -> Optional[int]:
        """The live process writing this journal now, if any."""
        return live_writer(self.path)

    # records

    def groups(self) -> Dict[str, List[int]]:
        """Original URL -> indexes of its entries, in first-seen order."""
        if self._groups is None:
            g: Dict[str, List[int]] = {}
            get = g.get
            gc_was = gc.isenabled()
            gc.disable()
            try:
                for i, u in enumerate([h.url for h in self.heads]):
                    if u is None:
                        continue
                    lst = get(u)
                    if lst is None:
                        g[u] = [i]
                    else:
                        lst.append(i)
            finally:
                if gc_was:
                    gc.enable()
            self._groups = g
        return self._groups

    def urls(self) -> List[str]:
        return list(self.groups())

    def _record(self, url: str, idx: List[int]) -> UrlRecord:
        lines, pos = self.lines, self.positions
        mine = [lines[i] for i in idx]
        try:
            ents = list(map(_decode_entry, mine))
        except msgspec.ValidationError:
            ents = list(map(decode_entry, mine))
        return UrlRecord(url, ents, [pos[i] for i in idx], mine)

    def record(self, url: str) -> Optional[UrlRecord]:
        """The record whose original URL is `url` (None if there is none)."""
        idx = self.groups().get(url)
        return self._record(url, idx) if idx is not None else None

    def records(self) -> Iterator[UrlRecord]:
        for u, idx in self.groups().items():
            yield self._record(u, idx)

    def _key_map(self) -> Dict[str, List[str]]:
        """Hop and redirect-target URL -> original URLs whose chains hold it."""
        if self._keys is None:
            k: Dict[str, List[str]] = {}
            for h in self.heads:
                if h.url is None:
                    continue
                for other in (h.hop, h.location):
                    if other and other != h.url:
                        lst = k.setdefault(other, [])
                        if h.url not in lst:
                            lst.append(h.url)
            self._keys = k
        return self._keys

    def keys_of(self, url: str) -> Set[str]:
        """The URLs other than `url` that find the record of original URL `url`."""
        out: Set[str] = set()
        for i in self.groups().get(url, ()):
            h = self.heads[i]
            for other in (h.hop, h.location):
                if other and other != url:
                    out.add(other)
        return out

    def lookup_all(self, url: str) -> List[UrlRecord]:
        """The records found by `url`: its own first, then those whose chains hold it."""
        out = []
        own = self.record(url)
        if own is not None:
            out.append(own)
        for o in self._key_map().get(url, ()):
            if o != url:
                r = self.record(o)
                if r is not None:
                    out.append(r)
        return out

    def lookup(self, url: str) -> Optional[UrlRecord]:
        """The record `url` finds: the one of which it is the original URL, else the latest
        one whose redirect chain holds it."""
        return _pick(url, self.lookup_all(url))

    def failed(self) -> List[UrlRecord]:
        """Records whose last attempt failed: what --retry-failed takes."""
        return [r for r in self.records() if r.state == "failed"]

    def skipped(self) -> List[UrlRecord]:
        """Records with a skip decision (dedup "write nothing", robots, scope, ...)."""
        return [r for r in self.records() if r.skips]


def _pick(url: str, rs: List[UrlRecord]) -> Optional[UrlRecord]:
    if not rs:
        return None
    if rs[0].url == url:
        return rs[0]
    return max(rs, key=lambda r: r.positions[-1] if r.positions else -1)


def read_session(path: PathLike, *, skip_errors: bool = False) -> Session:
    """Read a whole journal. A torn last line is ignored; a damaged line elsewhere raises
    ``SessionFormatError`` (file, byte offset), or is skipped with a ``SessionWarning`` when
    `skip_errors`. A file of no complete line (killed while creating it) is an empty session."""
    p = os.fspath(path)
    with open(p, "rb") as f:
        data = f.read()
    return Session(p, parse_journal(p, data, skip_errors=skip_errors))


# --- the sidecar index ---------------------------------------------------------

_ESCAPE = re.compile(rb"[\x00-\x20%\x7f]")


def index_key(url: str) -> bytes:
    """A URL as a sidecar key: UTF-8, with %, controls and space %-escaped (so no key holds a
    tab or line feed, and every key sorts after the header line, which starts with a space)."""
    b = url.encode("utf-8", "surrogatepass")
    if not b:
        return b"%"  # no other URL gives a lone % (a % is always escaped as %25)
    if _ESCAPE.search(b) is None:
        return b
    return _ESCAPE.sub(lambda m: b"%%%02X" % m.group()[0], b)


def _journal_check(path: str, covered: int) -> int:
    """A checksum of the journal bytes just before `covered`: what tells a journal that grew
    (those bytes unchanged) from one rewritten."""
    with open(path, "rb") as f:
        f.seek(max(0, covered - _CHECK_BYTES))
        return zlib.crc32(f.read(min(covered, _CHECK_BYTES)))


def build_index(journal: PathLike, index: Optional[PathLike] = None, *, skip_errors: bool = False) -> str:
    """Write the sidecar index of a journal (default JOURNAL.idx), atomically; returns its path.

    Lines ``KEY<TAB>OFF,OFF,...``: for every record, one line under each of its keys (original
    URL, hops, redirect targets) listing the byte offsets of all its entries; sorted bytewise by
    the line_sort kernel after a header line that records what journal bytes it covers."""
    from ...index.sort import LineSorter

    jp = os.fspath(journal)
    ip = os.fspath(index) if index is not None else jp + INDEX_SUFFIX
    with open(jp, "rb") as f:
        data = f.read()
        st = os.fstat(f.fileno())  # after the read: a journal appended to meanwhile is "grown"
    s = Session(jp, parse_journal(jp, data, skip_errors=skip_errors))
    del data
    covered = s.end
    header: Dict[str, Any] = {"journal": os.path.basename(jp), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
                              "ino": st.st_ino, "dev": st.st_dev, "covered": covered,
                              "check": _journal_check(jp, covered), "entries": len(s)}
    sorter = LineSorter(mem_limit=64 << 20)
    pos = s.positions
    heads = s.heads
    buf: List[bytes] = []
    size = 0
    records = 0
    for url, idx in s.groups().items():
        records += 1
        offs = b"\t" + ",".join([str(pos[i]) for i in idx]).encode() + b"\n"
        buf.append(index_key(url) + offs)
        others: Optional[Set[str]] = None
        for i in idx:
            h = heads[i]
            if h.hop or h.location:
                if others is None:
                    others = set()
                others.update(o for o in (h.hop, h.location) if o and o != url)
        for k in others or ():
            buf.append(index_key(k) + offs)
        size += len(offs) + len(url)
        if size > 4 << 20:
            sorter.add(b"".join(buf))
            buf.clear()
            size = 0
    if buf:
        sorter.add(b"".join(buf))
    header["records"] = records
    with AtomicOutput(ip) as out:
        out.write(INDEX_MAGIC + str(INDEX_VERSION).encode() + b" " + json.dumps(header).encode() + b"\n")
        sorter.finish(out.write)
    return ip


def read_index_header(index: PathLike) -> Optional[Dict[str, Any]]:
    """The header of a sidecar index, or None when it is missing or not one of ours."""
    try:
        with open(index, "rb") as f:
            line = f.readline(1 << 16)
    except OSError:
        return None
    if not line.startswith(INDEX_MAGIC) or not line.endswith(b"\n"):
        return None
    ver, _, rest = line[len(INDEX_MAGIC):].partition(b" ")
    try:
        if int(ver) != INDEX_VERSION:
            return None
        d = json.loads(rest)
    except ValueError:
        return None
    return d if isinstance(d, dict) else None


def index_state(journal: PathLike, index: Optional[PathLike] = None) -> Tuple[str, Optional[Dict[str, Any]]]:
    """"fresh" (the sidecar covers the journal), "grown" (the journal has bytes past what it
    covers: they are scanned), or "stale" (missing, damaged, of another file, or the journal was
    rewritten or truncated: rebuild it)."""
    jp = os.fspath(journal)
    ip = os.fspath(index) if index is not None else jp + INDEX_SUFFIX
    h = read_index_header(ip)
    if h is None:
        return "stale", None
    st = os.stat(jp)
    try:
        covered = int(h["covered"])
        if (h["ino"], h["dev"]) != (st.st_ino, st.st_dev) or st.st_size < covered:
            return "stale", h
        if st.st_size == h["size"] and st.st_mtime_ns != h["mtime_ns"]:
            return "stale", h  # rewritten in place
        if _journal_check(jp, covered) != h["check"]:
            return "stale", h
    except (KeyError, TypeError, ValueError):
        return "stale", h
    return ("grown" if st.st_size > covered else "fresh"), h


class SessionIndex:
    """Lookups in a journal through its sidecar index, without reading the journal whole.

    ``rebuild``: "auto" (rebuild when stale, or when the journal grew by more than
    `tail_limit` bytes past the sidecar; a smaller tail is scanned), "always" or "never"
    (a stale sidecar is then not used: the whole journal is scanned as tail)."""

    def __init__(self, journal: PathLike, index: Optional[PathLike] = None, *, rebuild: str = "auto",
                 tail_limit: int = TAIL_LIMIT, skip_errors: bool = False) -> None:
        if rebuild not in ("auto", "always", "never"):
            raise ValueError(f"rebuild must be 'auto', 'always' or 'never', not {rebuild!r}")
        self.path = os.fspath(journal)
        self.index_path = os.fspath(index) if index is not None else self.path + INDEX_SUFFIX
        self.skip_errors = skip_errors
        self.rebuilt = False
        state, h = index_state(self.path, self.index_path)
        size = os.stat(self.path).st_size
        if rebuild == "always" or (rebuild == "auto" and (
                state == "stale" or (state == "grown" and h is not None and size - int(h["covered"]) > tail_limit))):
            try:
                build_index(self.path, self.index_path, skip_errors=skip_errors)
                self.rebuilt = True
                state, h = index_state(self.path, self.index_path)
            except OSError as e:  # a read-only place: scan instead
                warnings.warn(f"{self.index_path}: cannot write the sidecar index ({e}); scanning the journal",
                              SessionWarning, stacklevel=2)
                state, h = "stale", None
        self.state = state
        self._f = open(self.path, "rb")  # noqa: SIM115 - closed by close()
        self._size = os.fstat(self._f.fileno()).st_size
        self._mm: Optional[mmap.mmap] = (mmap.mmap(self._f.fileno(), 0, access=mmap.ACCESS_READ)
                                         if self._size else None)
        self._idx: Optional[SortedFile] = None
        covered = 0
        if state in ("fresh", "grown") and h is not None:
            self._idx = SortedFile(self.index_path)
            covered = int(h["covered"])
        self.covered = covered
        self._scan_tail(covered)

    def _scan_tail(self, covered: int) -> None:
        """The entries past what the sidecar covers, grouped by original URL, and their keys."""
        self._tail: Dict[str, Tuple[List[bytes], List[int]]] = {}
        self._tail_keys: Dict[str, Set[str]] = {}
        self.tail_entries = 0
        if self._mm is None or covered >= self._size:
            return
        data = self._mm[covered:self._size]
        parsed = parse_journal(self.path, data, skip_errors=self.skip_errors, version=(covered == 0))
        self.tail_entries = len(parsed.heads)
        for line, h, p in zip(parsed.lines, parsed.heads, parsed.positions):
            if h.url is None:
                continue
            lines, poss = self._tail.setdefault(h.url, ([], []))
            lines.append(line)
            poss.append(p + covered)
            for k in (h.hop, h.location):
                if k and k != h.url:
                    self._tail_keys.setdefault(k, set()).add(h.url)

    def raw(self, pos: int) -> bytes:
        if self._mm is None:
            raise ValueError(f"{self.path}: the session index is closed")
        end = self._mm.find(b"\n", pos)
        if end < 0:
            raise SessionFormatError(self.path, pos, "the sidecar index points past the journal's last entry",
                                     f"remove {self.index_path} to have it rebuilt")
        return self._mm[pos:end]

    def _entry(self, pos: int, line: Optional[bytes] = None) -> Optional[Entry]:
        if line is None:
            line = self.raw(pos)
        try:
            return decode_entry(line)
        except (msgspec.DecodeError, msgspec.ValidationError) as e:
            _damaged(self.path, pos, line, str(e), self.skip_errors)
            return None

    def _original(self, pos: int) -> Optional[str]:
        """The original URL of the entry at `pos` (None when it is damaged and skip_errors)."""
        line = self.raw(pos)
        try:
            try:
                return _decode_head(line).url
            except msgspec.ValidationError:
                return lenient(line, Head).url
        except (msgspec.DecodeError, msgspec.ValidationError) as e:
            _damaged(self.path, pos, line, str(e), self.skip_errors)
            return None

    def _indexed(self, key: str) -> Dict[str, List[int]]:
        """Original URL -> entry offsets, for the sidecar lines of `key`."""
        out: Dict[str, List[int]] = {}
        if self._idx is None:
            return out
        k = index_key(key)
        for line in self._idx.range(k + b"\t", k + b"\n"):
            _, _, offs = line.partition(b"\t")
            poss = [int(x) for x in offs.split(b",")]
            if not poss:
                continue
            orig = self._original(poss[0])
            if orig is not None and orig not in out:
                out[orig] = poss
        return out

    def lookup_all(self, url: str) -> List[UrlRecord]:
        """The records `url` finds: its own first, then those whose chains hold it."""
        found = self._indexed(url)
        originals = list(found)
        for o in sorted(self._tail_keys.get(url, ())):
            if o not in found:
                originals.append(o)
        if url in self._tail and url not in found:
            originals.insert(0, url)
        out = []
        for o in originals:
            poss = found.get(o)
            if poss is None:
                poss = self._indexed(o).get(o, [])
            lines = [self.raw(p) for p in poss]
            if o in self._tail:
                tlines, tposs = self._tail[o]
                lines = lines + tlines
                poss = poss + tposs
            ents, keep = [], []
            for i, (p, line) in enumerate(zip(poss, lines)):
                e = self._entry(p, line)
                if e is not None:
                    ents.append(e)
                    keep.append(i)
            out.append(UrlRecord(o, ents, [poss[i] for i in keep], [lines[i] for i in keep]))
        out.sort(key=lambda r: (r.url != url, r.positions[0] if r.positions else 0))
        return out

    def lookup(self, url: str) -> Optional[UrlRecord]:
        """As ``Session.lookup``: the record of which `url` is the original, else the latest whose
        chain holds it."""
        return _pick(url, self.lookup_all(url))

    def close(self) -> None:
        if self._idx is not None:
            self._idx.close()
            self._idx = None
        if self._mm is not None:
            self._mm.close()
            self._mm = None
        self._f.close()

    def __enter__(self) -> "SessionIndex":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def lookup(journal: PathLike, url: str, **kw: Any) -> Optional[UrlRecord]:
    """What happened to `url` (any URL of its redirect chain) in a journal, through its sidecar."""
    with SessionIndex(journal, **kw) as ix:
        return ix.lookup(url)
