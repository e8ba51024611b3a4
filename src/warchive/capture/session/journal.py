"""The journal writer: ``SessionDB`` appends one entry a line, each with one ``write()``.

Entries are written as soon as a fact is known, by the crawler, the WARC writer's caller
and dedup; entries for several URLs interleave. A SIGKILL cannot corrupt the journal:
an entry is complete only with its line feed, and a writer opening a journal cuts a
torn last line off before it appends (docs/format.md, "Session journals"). This module
must not read entries back: ``reader`` does.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Tuple, Union

import msgspec

from ...errors import SessionFormatError
from .lock import acquire, lock_path, release
from .schema import FORMAT_VERSION, SOFTWARE, VERSION_KEY, PathLike, SessionWarning, check_version_line, now

DEFAULT_FSYNC: Union[str, int] = 1000   # fdatasync every 1000 entries, and at close


def _enc_hook(obj: Any) -> Any:
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    raise TypeError(f"a session entry cannot hold {type(obj).__name__} values")


_encode = msgspec.json.Encoder(enc_hook=_enc_hook).encode


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
        self._owns_lock = acquire(self.path, force)
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
        return lock_path(self.path)

    def _unlock(self) -> None:
        if self._owns_lock:
            self._owns_lock = False
            release(self.path)

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
                check_version_line(self.path, head[:nl])
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

    def fetching(self, url: str, *, t: Optional[str] = None, **extra: Any) -> int:
        """The request for `url` is about to be sent: written before it goes out, so that a journal
        cut short by a kill names every fetch that was in flight (a ``fetching`` entry with no
        ``fetch``, ``failed`` or ``skipped`` entry after it). It is no outcome: the URL stays
        "pending" until one follows."""
        return self._entry("fetching", url, t, (), extra)

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
