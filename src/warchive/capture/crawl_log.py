"""The crawl log: one line per URI the crawler finished with, in Heritrix's crawl.log format.

A line has 12 space-separated fields (docs/format.md, "Crawl log", is the specification)::

    2024-01-01T12:00:00.168Z   200       1288 http://a.test/x LLE http://a.test/ text/html #005 20240101120000123+45 sha1:2SAW...OQEE - 3t,politeness:crawl-delay:1.000s:1.002s

    1  log time          ISO 8601 UTC with milliseconds and Z
    2  fetch status      right-aligned in 5 columns (negative codes: docs/format.md)
    3  size              bytes of the body as received (after the HTTP head), right-aligned in 10; "-" if none
    4  URI
    5  hop path          discovery path from the seed (L, E, R, X, P...), "-" for a seed
    6  via               the URI it was found on, "-" for a seed
    7  MIME type         without parameters, lower case; "no-type" when there is none (as Heritrix)
    8  thread            "#" and 3 digits
    9  fetch time        17-digit begin timestamp "+" duration in ms; "-" when nothing was fetched
    10 digest            "sha1:" + base32 of the payload digest, "-" if none
    11 source tag        the seed this URI descends from (when tagged), "-" if none
    12 annotations       comma-separated, "-" if none

The writer appends one whole line per ``write`` call to a file opened for append (line-buffered),
so concurrent writers in one process never mix lines and a killed process leaves at most a torn
last line, which ``parse_line`` rejects and ``read_log`` skips. This module formats and parses;
it must not decide statuses or annotations: the crawler does.
"""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import IO, Iterable, Iterator, List, Optional, Union

__all__ = ["CrawlLogEntry", "CrawlLog", "format_line", "parse_line", "read_log", "log_timestamp",
           "fetch_timestamp", "CrawlLogError", "sha1_label", "NO_TYPE"]

from ..errors import CrawlLogError
from ..warc.digest import digest_one


@dataclass
class CrawlLogEntry:
    status: int
    uri: str
    size: Optional[int] = None              # None writes "-"
    hop_path: str = ""                       # "" writes "-" (a seed)
    via: Optional[str] = None
    mime: Optional[str] = None
    thread: int = 0
    fetch_begin: Optional[float] = None     # epoch seconds; None writes "-"
    duration_ms: Optional[int] = None
    digest: Optional[str] = None            # "sha1:BASE32"
    source: Optional[str] = None
    annotations: List[str] = field(default_factory=list)
    logged: Optional[float] = None          # epoch seconds; None = now when written
    extra: Optional[str] = None             # a 13th field (Heritrix's optional JSON), kept as is

    @classmethod
    def from_fetch(cls, result, *, hop_path: str = "", via: Optional[str] = None, thread: int = 0,
                   digest: Optional[str] = "auto", source: Optional[str] = None,
                   annotations: Iterable[str] = ()) -> "CrawlLogEntry":
        """The entry of a ``warchive.capture.fetch.FetchResult``: status, body size, MIME, fetch
        begin and duration, the ``sha1:`` digest of the transfer-decoded body, as the writer's
        WARC-Payload-Digest (``digest="auto"``; or pass the writer's),
        and ``lenTrunc``/``timeTrunc``/``disconnectTrunc`` and ``err=...`` annotations after the caller's own."""
        ann = list(annotations)
        if result.truncated == "length":
            ann.append("lenTrunc")
        elif result.truncated == "time":
            ann.append("timeTrunc")
        elif result.truncated == "disconnect":
            ann.append("disconnectTrunc")
        if result.status < 0 and result.error:
            ann.append("err=" + _ERR_WORDS.get(result.status, "fetch"))
        if digest == "auto":
            digest = sha1_label(result.transfer_decoded()) if result.status > 0 else None
        got_head = result.status > 0
        return cls(status=result.status, uri=result.url, size=len(result.body) if got_head else None,
                   hop_path=hop_path, via=via, mime=result.mime if got_head and result.content_type else None,
                   thread=thread, fetch_begin=result.started if result.request else None,
                   duration_ms=int(result.duration * 1000) if result.request else None, digest=digest,
                   source=source, annotations=ann)

    @classmethod
    def from_dns(cls, facts, *, via: Optional[str] = None, hop_path: str = "P", thread: int = 0,
                 source: Optional[str] = None) -> "CrawlLogEntry":
        """The ``dns:`` line of a ``warchive.capture.resolve.DnsFacts`` (status 1, MIME ``text/dns``,
        size and digest of the record block), as Heritrix logs the DNS prerequisite of a host."""
        block = facts.record_block()
        return cls(status=1, uri=facts.uri, size=len(block), hop_path=hop_path, via=via, mime="text/dns",
                   thread=thread, fetch_begin=facts.started, duration_ms=int(facts.duration * 1000),
                   digest=sha1_label(block), source=source)

    @property
    def fetch_field(self) -> str:
        if self.fetch_begin is None:
            return "-"
        ts = fetch_timestamp(self.fetch_begin)
        return ts if self.duration_ms is None else f"{ts}+{self.duration_ms}"


NO_TYPE = "no-type"
_ERR_WORDS = {-2: "connect-failed", -3: "connection-lost", -4: "timeout", -5: "runtime", -6: "dns",
              -7: "unsupported-uri", -404: "empty-response"}


def sha1_label(payload: bytes) -> str:
    """``sha1:`` + the base32 SHA-1 of ``payload``: the digest as crawl.log and WARC headers write it."""
    return digest_one("sha1", payload)


def log_timestamp(t: float) -> str:
    """2024-01-01T12:00:00.123Z (milliseconds, truncated as a Java clock reads them)."""
    ms = int(t * 1000 + 1e-3)   # the float of a whole millisecond may sit just below it
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + f".{ms % 1000:03d}Z"


def fetch_timestamp(t: float) -> str:
    """20240101120000123: 17 digits, milliseconds included."""
    ms = int(t * 1000 + 1e-3)   # the float of a whole millisecond may sit just below it
    return time.strftime("%Y%m%d%H%M%S", time.gmtime(ms // 1000)) + f"{ms % 1000:03d}"


def _dash(v: Optional[str]) -> str:
    if not v:
        return "-"
    if " " in v or "\n" in v or "\r" in v or "\t" in v:   # a field must not split the line
        return v.replace(" ", "%20").replace("\n", "%0A").replace("\r", "%0D").replace("\t", "%09")
    return v


def _mime(m: Optional[str]) -> str:
    m = (m or "").split(";", 1)[0].strip().lower()
    return _dash(m) if m else NO_TYPE


def format_line(e: CrawlLogEntry) -> str:
    """The line for ``e``, with its line feed."""
    logged = e.logged if e.logged is not None else time.time()
    size = "-" if e.size is None else str(e.size)
    ann = ",".join(a.replace(",", "%2C").replace(" ", "%20") for a in e.annotations) or "-"
    line = (f"{log_timestamp(logged)} {e.status:>5} {size:>10} {_dash(e.uri)} {_dash(e.hop_path)} "
            f"{_dash(e.via)} {_mime(e.mime)} #{e.thread:03d} {e.fetch_field} {_dash(e.digest)} "
            f"{_dash(e.source)} {ann}")
    if e.extra:
        line += " " + e.extra.replace("\n", " ")
    return line + "\n"


_SPACES = re.compile(" +")
_LOGTIME = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{3})Z$")
_FETCHTIME = re.compile(r"^(\d{17})(?:\+(-?\d+))?$")


def _epoch_ms(y, mo, d, h, mi, s, ms) -> float:
    dt = datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), tzinfo=timezone.utc)
    return (int(dt.timestamp()) * 1000 + int(ms)) / 1000


def parse_line(line: str) -> CrawlLogEntry:
    """A ``CrawlLogEntry`` from one line (with or without its line feed); ``CrawlLogError`` when
    it is not a whole crawl.log line."""
    text = line.rstrip("\r\n")
    # Fields are separated by runs of ASCII spaces only: a URI may hold other Unicode white space.
    fields = _SPACES.split(text.strip(" "), 12)
    if len(fields) < 12:
        raise CrawlLogError(f"{len(fields)} fields, a crawl.log line has 12", line)
    m = _LOGTIME.match(fields[0])
    if not m:
        raise CrawlLogError("the first field is not a log time (2024-01-01T12:00:00.123Z)", line)
    logged = _epoch_ms(*m.groups())
    try:
        status = int(fields[1])
        size = None if fields[2] == "-" else int(fields[2])
    except ValueError:
        raise CrawlLogError("status or size is not a number", line) from None
    thread_f = fields[7]
    if not thread_f.startswith("#") or not thread_f[1:].isdigit():
        raise CrawlLogError("the thread field is not #NNN", line)
    begin = duration = None
    if fields[8] != "-":
        fm = _FETCHTIME.match(fields[8])
        if not fm:
            raise CrawlLogError("the fetch time is not 17 digits [+ms]", line)
        d = fm.group(1)
        begin = _epoch_ms(d[0:4], d[4:6], d[6:8], d[8:10], d[10:12], d[12:14], d[14:17])
        duration = int(fm.group(2)) if fm.group(2) is not None else None

    def opt(v: str) -> Optional[str]:
        return None if v == "-" else v

    return CrawlLogEntry(
        status=status, uri=fields[3], size=size, hop_path="" if fields[4] == "-" else fields[4],
        via=opt(fields[5]), mime=None if fields[6] == NO_TYPE else opt(fields[6]), thread=int(thread_f[1:]), fetch_begin=begin,
        duration_ms=duration, digest=opt(fields[9]), source=opt(fields[10]),
        annotations=[] if fields[11] == "-" else fields[11].split(","), logged=logged,
        extra=fields[12] if len(fields) > 12 else None)


def read_log(source: Union[str, os.PathLike[str], IO[str]], skip_errors: bool = False) -> Iterator[CrawlLogEntry]:
    """Entries of a crawl.log. A last line without its line feed (a torn write) is ignored; a bad
    line elsewhere raises ``CrawlLogError`` (or is skipped with ``skip_errors``)."""
    fh: IO[str]
    if isinstance(source, (str, os.PathLike)):
        fh = open(source, encoding="utf-8", errors="surrogateescape", newline="\n")
    else:
        fh = source
    try:
        for lineno, line in enumerate(fh, 1):
            if not line.endswith("\n"):
                return
            if not line.strip():
                continue
            try:
                yield parse_line(line)
            except CrawlLogError as e:
                if not skip_errors:
                    e.lineno = lineno
                    raise CrawlLogError(e.problem, e.line, lineno) from None
    finally:
        if fh is not source:
            fh.close()


class CrawlLog:
    """Appends lines to a crawl.log: ``write(entry)`` formats and writes one line in one call.
    Safe to share between threads and asyncio tasks of one process."""

    def __init__(self, path: Union[str, os.PathLike[str]]) -> None:
        self.path = os.fspath(path)
        self._fh = open(self.path, "a", encoding="utf-8", errors="surrogateescape", buffering=1, newline="\n")
        self._lock = threading.Lock()

    def write(self, entry: CrawlLogEntry) -> str:
        line = format_line(entry)
        with self._lock:
            self._fh.write(line)
        return line

    def flush(self) -> None:
        self._fh.flush()

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()

    def __enter__(self) -> "CrawlLog":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
