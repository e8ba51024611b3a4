"""The frontier: which URL to fetch next, and when, so that every host is treated politely.

One queue per host (its SURT authority, ``com,example)``, the key of
``warchive.surt``); each queue has priority levels (0 first). A host whose
politeness delay has not expired waits in a d-ary heap keyed by its next allowed
time; a host that may be fetched now waits in a second d-ary heap keyed by the
priority of its best URL, then that time. At most ``max_per_host`` fetches per host
run at once (one by default). The delay after a fetch is Heritrix's::

    delay = clamp(delay_factor * duration of the last fetch, min_delay, max_delay)
    delay = max(delay, min(robots Crawl-delay, crawl_delay_cap))
    429 / 503: delay = max(delay, Retry-After (seconds or HTTP-date) or exponential backoff)

and a token bucket per host (``rate`` tokens a second, ``burst`` at most) may push the
next fetch later still. Every lease carries a ``LedgerEntry``: the delay the rules asked
for, the time actually waited since the host's last fetch ended, and why (the
"politeness ledger" the crawl log writes).

Persistence (docs/format.md, "Frontier checkpoint"): with a directory, every change is
appended to ``frontier.<gen>.log`` (A: queued, T: leased, F: finished) with one
``write`` per call, so a SIGKILL loses nothing the process had returned from; a
snapshot ``frontier.snap`` of every queued URL is written now and then (temporary
file, fsync, atomic rename) and starts a new log generation. ``Frontier.open(dir)``
loads the snapshot, replays its log, and puts leased-but-unfinished URLs back at the
head of their queues; the session database, not the frontier, says which URLs were
finished (a URL whose "F" line was lost is queued again: the crawler skips it there).

URLs are kept as compact ``bytes`` records (priority, attempts, hop path, URL); the
``via`` of a batch of outlinks is one shared object. The clocks are injectable: tests
move time instead of sleeping. This module must not fetch, decide scope or robots,
or remember which URLs were seen.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import struct
import time
import zlib
from collections import deque
from dataclasses import asdict, dataclass
from typing import (Any, Callable, Deque, Dict, Generic, Iterable, Iterator, List, Optional, Tuple, TypeVar, Union)

from ..durable import fsync_dir
from ..errors import ArchiveError, CorruptRecordError, UrlError
from ..surt import surt

__all__ = ["Frontier", "Politeness", "Lease", "LedgerEntry", "DaryHeap", "FrontierFormatError", "host_key",
           "parse_retry_after"]

PathLike = Union[str, "os.PathLike[str]"]
SNAPSHOT = "frontier.snap"
FORMAT_VERSION = 1
T = TypeVar("T")


class FrontierFormatError(CorruptRecordError):
    """A frontier snapshot or log is damaged at ``offset`` of ``path``."""


# --------------------------------------------------------------------------------------------
# A d-ary min-heap


class DaryHeap(Generic[T]):
    """A min-heap with ``d`` children per node (shallower than binary: fewer moves per push).

    Items are compared as they are (use tuples with a unique sequence number before any
    item that does not compare).
    """

    __slots__ = ("d", "_a")

    def __init__(self, d: int = 4, items: Iterable[T] = ()) -> None:
        if d < 2:
            raise ValueError("a d-ary heap needs d >= 2")
        self.d = d
        self._a: List[T] = list(items)
        for i in range((len(self._a) - 2) // d, -1, -1):
            self._down(i)

    def __len__(self) -> int:
        return len(self._a)

    def __bool__(self) -> bool:
        return bool(self._a)

    def peek(self) -> T:
        return self._a[0]

    def push(self, item: T) -> None:
        a = self._a
        a.append(item)
        i = len(a) - 1
        d = self.d
        while i:
            p = (i - 1) // d
            if not item < a[p]:  # type: ignore[operator]
                break
            a[i] = a[p]
            i = p
        a[i] = item

    def pop(self) -> T:
        a = self._a
        last = a.pop()
        if not a:
            return last
        top = a[0]
        a[0] = last
        self._down(0)
        return top

    def _down(self, i: int) -> None:
        a = self._a
        n = len(a)
        d = self.d
        item = a[i]
        while True:
            c = d * i + 1
            if c >= n:
                break
            best = c
            end = min(c + d, n)
            for j in range(c + 1, end):
                if a[j] < a[best]:  # type: ignore[operator]
                    best = j
            if not a[best] < item:  # type: ignore[operator]
                break
            a[i] = a[best]
            i = best
        a[i] = item

    def __iter__(self) -> Iterator[T]:
        return iter(self._a)


# --------------------------------------------------------------------------------------------
# Politeness


@dataclass
class Politeness:
    """The politeness rules (Heritrix's defaults where Heritrix has one)."""

    delay_factor: float = 5.0          # delay = factor x duration of the last fetch ...
    min_delay: float = 3.0             # ... but at least this (seconds)
    max_delay: float = 30.0            # ... and at most this
    crawl_delay_cap: float = 300.0     # robots Crawl-delay honoured up to this (respectCrawlDelayUpToSeconds)
    rate: Optional[float] = None       # token bucket: fetches per second per host (None: no bucket)
    burst: float = 1.0                 # token bucket size
    max_per_host: int = 1              # fetches of one host at a time
    backoff: float = 60.0              # 429/503 without Retry-After: backoff x 2^(n-1) for the n-th in a row
    max_backoff: float = 3600.0
    max_retry_after: float = 86400.0   # a Retry-After longer than this is cut to it
    max_retries: int = 3               # a 429/503 URL is queued again this many times

    @classmethod
    def off(cls) -> "Politeness":
        """No delays at all (benchmarks against a loopback site)."""
        return cls(delay_factor=0.0, min_delay=0.0, max_delay=0.0, backoff=0.0, max_backoff=0.0,
                   max_per_host=1 << 30)


def parse_retry_after(value: Optional[str], now_wall: float) -> Optional[float]:
    """Seconds to wait from a Retry-After value (delay-seconds or an HTTP-date, RFC 9110 10.2.3); None if invalid."""
    if value is None:
        return None
    v = value.strip()
    if v.isdigit():
        return float(v)
    try:
        dt = email.utils.parsedate_to_datetime(v)
    except (TypeError, ValueError, IndexError):
        return None
    if dt is None or dt.tzinfo is None:
        return None
    return max(0.0, dt.timestamp() - now_wall)


def host_key(url: str) -> str:
    """The queue a URL belongs to: its SURT authority (``com,example)``, port kept, www dropped)."""
    k = surt(url)
    i = k.find(")")
    if i <= 0:
        raise UrlError(f"{url!r}: no host to queue it under")
    return k[:i + 1]


@dataclass
class LedgerEntry:
    """One scheduling decision: the delay the rules asked for, the delay actually waited, and why.

    ``reason``: "first" (first fetch of the host), "delay-factor", "min-delay", "max-delay",
    "crawl-delay", "crawl-delay-cap", "retry-after", "backoff", "token-bucket". ``waited`` is
    the time from the end of the host's previous fetch to this lease (None for the first);
    ``required`` what the rules asked for; ``not_before`` the earliest time they allowed.
    """

    host: str
    url: str
    required: float
    waited: Optional[float]
    reason: str
    not_before: float
    issued: float

    def as_dict(self) -> Dict[str, Any]:
        return asdict(self)

    def annotation(self) -> str:
        """A crawl-log annotation: ``politeness:<reason>:<required>s:<waited>s``."""
        w = "-" if self.waited is None else f"{self.waited:.3f}"
        return f"politeness:{self.reason}:{self.required:.3f}s:{w}s"


class Lease:
    """A URL handed out for fetching; give it back with ``Frontier.done``."""

    __slots__ = ("url", "host", "hops", "via", "priority", "attempts", "ledger", "issued")

    def __init__(self, url: str, host: str, hops: str, via: Optional[str], priority: int, attempts: int,
                 ledger: LedgerEntry, issued: float) -> None:
        self.url = url
        self.host = host
        self.hops = hops
        self.via = via
        self.priority = priority
        self.attempts = attempts
        self.ledger = ledger
        self.issued = issued

    def __repr__(self) -> str:
        return f"Lease({self.url!r}, hops={self.hops!r}, priority={self.priority}, attempts={self.attempts})"


# --------------------------------------------------------------------------------------------
# Per-host queues

IDLE, WAITING, READY, BUSY = 0, 1, 2, 3


# A queued URL is one record in its host's buffer for its priority level:
#   priority u8 | attempts u8 | hop-path length u8 | URL length u32 | via id i32 (-1: none) | hop path | URL (UTF-8)
# A via is interned per host (id, reference count), so the outlinks of one page share it.
_HEAD = struct.Struct("<BBBIi")
_COMPACT = 1 << 16


def _record(priority: int, attempts: int, hops: str, url: str, via_id: int = -1) -> bytes:
    h = hops.encode("ascii")
    u = url.encode("utf-8", "surrogateescape")
    if len(h) > 255:
        raise ValueError(f"hop path of {len(h)} hops: at most 255")
    return _HEAD.pack(priority, attempts, len(h), len(u), via_id) + h + u


def _unrecord(rec: Union[bytes, bytearray], pos: int = 0) -> Tuple[int, int, str, str, int, int]:
    """(priority, attempts, hops, url, via id, end of the record)."""
    prio, att, hl, ul, via = _HEAD.unpack_from(rec, pos)
    a = pos + _HEAD.size
    b = a + hl
    end = b + ul
    return prio, att, rec[a:b].decode("ascii"), rec[b:end].decode("utf-8", "surrogateescape"), via, end


class _Level:
    __slots__ = ("buf", "pos", "n", "front")

    def __init__(self) -> None:
        self.buf = bytearray()
        self.pos = 0
        self.n = 0
        self.front: Optional[Deque[bytes]] = None   # records put back at the head (retries, resumed leases)


class _Host:
    __slots__ = ("key", "levels", "inflight", "next_time", "last_end", "last_delay", "last_reason", "crawl_delay",
                 "tokens", "tokens_at", "backoff_n", "gen", "state", "size", "bucket_wait", "ready_at")

    def __init__(self, key: str, burst: float) -> None:
        self.key = key
        self.levels: Dict[int, _Level] = {}
        self.inflight = 0
        self.next_time = 0.0
        self.last_end: Optional[float] = None
        self.last_delay = 0.0
        self.last_reason = "first"
        self.crawl_delay: Optional[float] = None
        self.tokens = burst
        self.tokens_at = 0.0
        self.backoff_n = 0
        self.gen = 0
        self.state = IDLE
        self.size = 0
        self.bucket_wait = False
        self.ready_at = 0.0

    def push(self, priority: int, attempts: int, hops: str, url: str, via_id: int, front: bool) -> None:
        lv = self.levels.get(priority)
        if lv is None:
            lv = self.levels[priority] = _Level()
        rec = _record(priority, attempts, hops, url, via_id)
        if front:
            if lv.front is None:
                lv.front = deque()
            lv.front.appendleft(rec)
        else:
            lv.buf += rec
        lv.n += 1
        self.size += 1

    def best(self) -> int:
        return min(self.levels)

    def take(self) -> Tuple[int, int, str, str, int]:
        p = min(self.levels)
        lv = self.levels[p]
        if lv.front:
            prio, att, hops, url, vid, _ = _unrecord(lv.front.popleft())
        else:
            prio, att, hops, url, vid, lv.pos = _unrecord(lv.buf, lv.pos)
            if lv.pos > _COMPACT and 2 * lv.pos > len(lv.buf):
                del lv.buf[:lv.pos]
                lv.pos = 0
        lv.n -= 1
        if lv.n == 0:
            del self.levels[p]
        self.size -= 1
        return prio, att, hops, url, vid

    def records(self) -> Iterator[Tuple[int, int, str, str, int]]:
        """Every queued URL, in the order it would be taken (without taking it)."""
        for p in sorted(self.levels):
            lv = self.levels[p]
            for rec in lv.front or ():
                prio, att, hops, url, vid, _ = _unrecord(rec)
                yield prio, att, hops, url, vid
            pos = lv.pos
            while pos < len(lv.buf):
                prio, att, hops, url, vid, pos = _unrecord(lv.buf, pos)
                yield prio, att, hops, url, vid


class _Vias:
    """The ``via`` URLs of queued URLs, interned with reference counts (outlinks of a page share one)."""

    __slots__ = ("via_ids", "vias", "via_refs", "via_free")

    def __init__(self) -> None:
        self.via_ids: Dict[str, int] = {}
        self.vias: List[Optional[str]] = []
        self.via_refs: List[int] = []
        self.via_free: List[int] = []

    def get(self, i: int) -> Optional[str]:
        return self.vias[i] if i >= 0 else None

    def ref(self, via: Optional[str]) -> int:
        if via is None:
            return -1
        i = self.via_ids.get(via)
        if i is None:
            if self.via_free:
                i = self.via_free.pop()
                self.vias[i] = via
                self.via_refs[i] = 0
            else:
                i = len(self.vias)
                self.vias.append(via)
                self.via_refs.append(0)
            self.via_ids[via] = i
        self.via_refs[i] += 1
        return i

    def release(self, i: int) -> Optional[str]:
        if i < 0:
            return None
        via = self.vias[i]
        self.via_refs[i] -= 1
        if self.via_refs[i] == 0:
            assert via is not None
            del self.via_ids[via]
            self.vias[i] = None
            self.via_free.append(i)
        return via


# --------------------------------------------------------------------------------------------
# The log and snapshot lines


def _esc(s: str) -> str:
    if "\\" in s or "\t" in s or "\n" in s or "\r" in s:
        return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    return s


def _unesc(s: str) -> str:
    if "\\" not in s:
        return s
    out = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            out.append({"t": "\t", "n": "\n", "r": "\r"}.get(s[i + 1], s[i + 1]))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _a_line(priority: int, attempts: int, hops: str, due: Optional[float], url: str, via: Optional[str],
            front: bool = False) -> str:
    return (f"{'a' if front else 'A'}\t{priority}\t{attempts}\t{hops or '-'}\t"
            f"{'-' if due is None else repr(due)}\t{_esc(url)}\t{'-' if via is None else _esc(via)}\n")


class _Entry:
    __slots__ = ("priority", "attempts", "hops", "due", "via", "front")

    def __init__(self, priority: int, attempts: int, hops: str, due: Optional[float], via: Optional[str],
                 front: bool) -> None:
        self.priority, self.attempts, self.hops, self.due, self.via, self.front = \
            priority, attempts, hops, due, via, front


def _parse_a(fields: List[str], path: str, pos: int) -> Tuple[str, _Entry]:
    if len(fields) != 7:
        raise FrontierFormatError(path, pos, f"an A line has {len(fields)} fields, not 7")
    try:
        prio, att = int(fields[1]), int(fields[2])
        due = None if fields[4] == "-" else float(fields[4])
    except ValueError as e:
        raise FrontierFormatError(path, pos, f"bad number in an A line: {e}") from None
    hops = "" if fields[3] == "-" else fields[3]
    via = None if fields[6] == "-" else _unesc(fields[6])
    return _unesc(fields[5]), _Entry(prio, att, hops, due, via, fields[0] == "a")


# --------------------------------------------------------------------------------------------
# The frontier


class Frontier:
    """Per-host queues with Heritrix politeness; see the module docstring.

    ``clock`` (monotonic seconds) schedules; ``wallclock`` (Unix time) only turns a Retry-After
    HTTP-date into seconds. ``max_hops`` refuses URLs with a longer hop path. ``directory``
    makes the frontier persistent (use ``Frontier.open`` to resume one). ``ledger`` is called with
    every ``LedgerEntry`` as it is made.
    """

    def __init__(self, politeness: Optional[Politeness] = None, *, clock: Callable[[], float] = time.monotonic,
                 wallclock: Callable[[], float] = time.time, max_hops: Optional[int] = None,
                 directory: Optional[PathLike] = None, arity: int = 4, checkpoint_every: int = 1_000_000,
                 ledger: Optional[Callable[[LedgerEntry], None]] = None) -> None:
        self.pol = politeness or Politeness()
        self.clock = clock
        self.wallclock = wallclock
        self.max_hops = max_hops
        self.ledger = ledger
        self._hosts: Dict[str, _Host] = {}
        self._waiting: DaryHeap[Tuple[float, int, int, _Host]] = DaryHeap(arity)
        self._ready: DaryHeap[Tuple[int, float, int, int, _Host]] = DaryHeap(arity)
        self._sched: DaryHeap[Tuple[float, int, bytes, Optional[str], str]] = DaryHeap(arity)
        self._seq = 0
        self._vias = _Vias()
        self._queued = 0
        self._inflight = 0
        self._out: Dict[int, Lease] = {}   # leases not yet done (a checkpoint writes them as queued)
        self._event: Optional[asyncio.Event] = None
        self.dir = os.fspath(directory) if directory is not None else None
        self.checkpoint_every = checkpoint_every
        self._gen = 0
        self._log_fd: Optional[int] = None
        self._log_buf: List[str] = []
        self._log_ops = 0
        if self.dir is not None:
            os.makedirs(self.dir, exist_ok=True)
            if os.path.exists(os.path.join(self.dir, SNAPSHOT)):
                raise ArchiveError(f"{self.dir}: holds a frontier checkpoint; resume it with Frontier.open()")

    # -- adding

    def _host(self, key: str) -> _Host:
        h = self._hosts.get(key)
        if h is None:
            h = self._hosts[key] = _Host(key, self.pol.burst)
        return h

    def _enqueue(self, host: _Host, priority: int, attempts: int, hops: str, url: str, via: Optional[str],
                 front: bool = False) -> None:
        better = host.state == READY and bool(host.levels) and priority < host.best()
        host.push(priority, attempts, hops, url, self._vias.ref(via), front)
        self._queued += 1
        if host.state == IDLE or (host.state == BUSY and host.inflight < self.pol.max_per_host):
            self._schedule(host)
        elif better:
            # a better priority arrived: re-key the host in the ready heap (the old entry goes stale)
            self._push_ready(host)

    def add(self, url: str, *, priority: int = 0, hops: str = "", via: Optional[str] = None,
            due: Optional[float] = None, attempts: int = 0) -> bool:
        """Queue ``url`` (``due``: not before that clock time, for revisits). False if over ``max_hops``."""
        ok = self._add(url, priority, hops, via, due, attempts, False)
        self._flush_log()
        return ok

    def add_many(self, urls: Iterable[str], *, priority: int = 0, hops: str = "L", via: Optional[str] = None) -> int:
        """Queue a batch (the outlinks of one page: one ``via``, one hop path); returns how many were queued."""
        n = 0
        for url in urls:
            n += self._add(url, priority, hops, via, None, 0, False)
        self._flush_log()
        return n

    def _add(self, url: str, priority: int, hops: str, via: Optional[str], due: Optional[float], attempts: int,
             front: bool) -> bool:
        if self.max_hops is not None and len(hops) > self.max_hops:
            return False
        if not 0 <= priority < 256 or not 0 <= attempts < 256:
            raise ValueError("priority and attempts must be in 0..255")
        key = host_key(url)
        if len(hops) > 255:
            raise ValueError(f"hop path of {len(hops)} hops: at most 255")
        if self.dir is not None:
            self._log(_a_line(priority, attempts, hops, None if due is None else due - self.clock(), url, via,
                              front))
        if due is not None and due > self.clock():
            self._seq += 1
            self._sched.push((due, self._seq, _record(priority, attempts, hops, url), via, key))
            self._queued += 1
        else:
            self._enqueue(self._host(key), priority, attempts, hops, url, via, front)
        self._wake()
        return True

    # -- scheduling

    def _ready_time(self, host: _Host) -> float:
        t = host.next_time
        host.bucket_wait = False
        rate = self.pol.rate
        if rate:
            have = min(self.pol.burst, host.tokens + (t - host.tokens_at) * rate) if t > host.tokens_at \
                else host.tokens
            if have < 1.0:
                t = max(t, host.tokens_at) + (1.0 - host.tokens) / rate
                host.bucket_wait = True
        return t

    def _schedule(self, host: _Host) -> None:
        """Put a host with URLs into the waiting heap (or leave it busy/idle)."""
        if host.size == 0 or host.inflight >= self.pol.max_per_host:
            host.gen += 1   # any heap entry of the host is stale now
            host.state = BUSY if host.inflight else IDLE
            return
        host.gen += 1
        host.state = WAITING
        self._seq += 1
        host.ready_at = self._ready_time(host)
        self._waiting.push((host.ready_at, self._seq, host.gen, host))

    def _push_ready(self, host: _Host) -> None:
        host.gen += 1
        host.state = READY
        self._seq += 1
        self._ready.push((host.best(), host.next_time, self._seq, host.gen, host))

    def _promote(self, now: float) -> None:
        while self._sched and self._sched.peek()[0] <= now:
            _, _, rec, via, key = self._sched.pop()
            self._queued -= 1
            prio, att, hops, url, _, _ = _unrecord(rec)
            self._enqueue(self._host(key), prio, att, hops, url, via)
        w = self._waiting
        while w and w.peek()[0] <= now:
            _, _, gen, host = w.pop()
            if gen == host.gen and host.state == WAITING:
                self._push_ready(host)

    def next(self) -> Optional[Lease]:
        """The next URL whose host may be fetched now, or None (see ``next_time``)."""
        now = self.clock()
        self._promote(now)
        r = self._ready
        while r:
            _, _, _, gen, host = r.pop()
            if gen != host.gen or host.state != READY or host.size == 0:
                continue
            lease = self._lease(host, now)
            self._flush_log()
            return lease
        return None

    def _lease(self, host: _Host, now: float) -> Lease:
        priority, attempts, hops, url, vid = host.take()
        via = self._vias.release(vid)
        self._queued -= 1
        if self.pol.rate:
            if now > host.tokens_at:
                host.tokens = min(self.pol.burst, host.tokens + (now - host.tokens_at) * self.pol.rate)
                host.tokens_at = now
            host.tokens -= 1.0
        reason = "token-bucket" if host.bucket_wait else host.last_reason
        not_before = host.ready_at
        waited = None if host.last_end is None else now - host.last_end
        entry = LedgerEntry(host.key, url, host.last_delay, waited, reason, not_before, now)
        host.inflight += 1
        self._inflight += 1
        host.state = BUSY
        if host.inflight < self.pol.max_per_host and host.size:
            self._schedule(host)
        if self.dir is not None:
            self._log(f"T\t{_esc(url)}\n")
        if self.ledger is not None:
            self.ledger(entry)
        lease = Lease(url, host.key, hops, via, priority, attempts, entry, now)
        self._out[id(lease)] = lease
        return lease

    def next_time(self) -> Optional[float]:
        """When ``next()`` may next return a URL: now if one is ready; None if no host can become ready
        by waiting (nothing queued, or only hosts whose leases are out: ``done`` wakes them; see ``inflight``)."""
        now = self.clock()
        self._promote(now)
        if self._ready:
            return now
        times = []
        if self._waiting:
            times.append(self._waiting.peek()[0])
        if self._sched:
            times.append(self._sched.peek()[0])
        return min(times) if times else None

    def done(self, lease: Lease, *, status: int = 200, duration: Optional[float] = None,
             retry_after: Optional[str] = None, crawl_delay: Optional[float] = None,
             revisit_after: Optional[float] = None, retry: Optional[bool] = None) -> str:
        """A lease's fetch ended (``status`` 0 or negative for a network failure).

        Sets the host's next allowed time by the politeness rules, honours ``Retry-After`` on
        429/503, and queues the URL again when it is to be retried (429/503 up to
        ``max_retries``, or ``retry=True``) or revisited (``revisit_after`` seconds from now).
        Returns "done", "retry" or "revisit".
        """
        if self._out.pop(id(lease), None) is None:
            raise ValueError(f"{lease!r} is not out (done twice, or from another frontier)")
        host = self._hosts[lease.host]
        now = self.clock()
        dur = max(0.0, duration if duration is not None else now - lease.issued)
        p = self.pol
        delay, reason = p.delay_factor * dur, "delay-factor"
        if delay < p.min_delay:
            delay, reason = p.min_delay, "min-delay"
        if delay > p.max_delay:
            delay, reason = p.max_delay, "max-delay"
        if crawl_delay is not None:
            host.crawl_delay = crawl_delay
        cd = host.crawl_delay
        if cd is not None and cd > delay:
            delay, reason = (cd, "crawl-delay") if cd <= p.crawl_delay_cap else (p.crawl_delay_cap, "crawl-delay-cap")
        if status in (429, 503):
            wait = parse_retry_after(retry_after, self.wallclock())
            if wait is not None:
                wait, why = min(wait, p.max_retry_after), "retry-after"
            else:
                wait, why = min(p.max_backoff, p.backoff * 2 ** host.backoff_n), "backoff"
            host.backoff_n += 1
            if wait >= delay:
                delay, reason = wait, why
            if retry is None:
                retry = lease.attempts < p.max_retries
        else:
            host.backoff_n = 0
        host.last_end = now
        host.last_delay = delay
        host.last_reason = reason
        host.next_time = max(host.next_time, now + delay) if status in (429, 503) else now + delay
        host.inflight -= 1
        self._inflight -= 1
        if self.dir is not None:
            self._log(f"F\t{_esc(lease.url)}\n")
        outcome = "done"
        if retry:
            self._add(lease.url, lease.priority, lease.hops, lease.via, None, min(255, lease.attempts + 1), True)
            outcome = "retry"
        elif revisit_after is not None:
            self._add(lease.url, lease.priority, lease.hops, lease.via, now + revisit_after, 0, False)
            outcome = "revisit"
        self._schedule(host)
        self._flush_log()
        self._wake()
        return outcome

    def skip(self, lease: Lease) -> None:
        """Give back a lease that was never fetched (robots.txt forbids it, scope changed): the host's
        next allowed time stays what the last real fetch set."""
        if self._out.pop(id(lease), None) is None:
            raise ValueError(f"{lease!r} is not out (done twice, or from another frontier)")
        host = self._hosts[lease.host]
        host.inflight -= 1
        self._inflight -= 1
        if self.dir is not None:
            self._log(f"F\t{_esc(lease.url)}\n")
        self._schedule(host)
        self._flush_log()
        self._wake()

    def set_crawl_delay(self, url_or_host: str, seconds: Optional[float]) -> None:
        """The robots ``Crawl-delay`` of a host (by URL or SURT authority); applies from its next fetch."""
        key = url_or_host if url_or_host.endswith(")") else host_key(url_or_host)
        self._host(key).crawl_delay = seconds

    # -- async helper

    def _wake(self) -> None:
        if self._event is not None:
            self._event.set()

    async def get(self, sleep: Optional[Callable[[float], Any]] = None) -> Optional[Lease]:
        """Wait until a URL may be fetched and lease it; None when nothing is queued nor in flight.

        ``sleep`` (default ``asyncio.sleep``) is awaited with the seconds to the next ready time;
        ``add`` and ``done`` wake the wait early.
        """
        if self._event is None:
            self._event = asyncio.Event()
        while True:
            lease = self.next()
            if lease is not None:
                return lease
            t = self.next_time()
            if t is None and self._inflight == 0:
                return None
            self._event.clear()
            timeout = None if t is None else max(0.0, t - self.clock())
            if sleep is not None and timeout is not None:
                await sleep(timeout)
                continue
            try:
                await asyncio.wait_for(self._event.wait(), timeout)
            except asyncio.TimeoutError:
                pass

    # -- inspection

    def __len__(self) -> int:
        """URLs queued (revisits scheduled for later included), not counting those leased."""
        return self._queued

    @property
    def inflight(self) -> int:
        return self._inflight

    def host_count(self) -> int:
        return len(self._hosts)

    def depths(self, top: int = 10) -> List[Tuple[str, int]]:
        """The deepest host queues (for the progress display)."""
        return sorted(((h.key, h.size) for h in self._hosts.values() if h.size), key=lambda x: -x[1])[:top]

    def host_state(self, url_or_host: str) -> Dict[str, Any]:
        key = url_or_host if url_or_host.endswith(")") else host_key(url_or_host)
        h = self._hosts[key]
        return {"queued": h.size, "inflight": h.inflight, "next_time": h.next_time, "last_delay": h.last_delay,
                "last_reason": h.last_reason, "crawl_delay": h.crawl_delay, "backoff": h.backoff_n}

    # -- persistence

    def _log(self, line: str) -> None:
        self._log_buf.append(line)

    def _log_path(self, gen: int) -> str:
        assert self.dir is not None
        return os.path.join(self.dir, f"frontier.{gen}.log")

    def _flush_log(self) -> None:
        if not self._log_buf:
            return
        if self._log_fd is None:
            self._log_fd = os.open(self._log_path(self._gen), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        data = "".join(self._log_buf).encode("utf-8", "surrogateescape")
        self._log_ops += len(self._log_buf)
        self._log_buf = []
        view = memoryview(data)
        while view:
            n = os.write(self._log_fd, view)
            view = view[n:]
        # a snapshot costs one line per queued URL: take one only when the log is at least that long
        if self._log_ops >= max(self.checkpoint_every, self._queued):
            self.checkpoint()

    def sync(self) -> None:
        """Make every change so far durable against a power cut (fsync the log)."""
        self._flush_log()
        if self._log_fd is not None:
            os.fsync(self._log_fd)

    def _entries(self) -> Iterator[str]:
        """Every URL to be fetched, as A lines (leased URLs first, at the head of their queues)."""
        for host in self._hosts.values():
            for p, a, hops, url, vid in host.records():
                yield _a_line(p, a, hops, None, url, self._vias.get(vid))
        for due, _, rec, via, _ in self._sched:
            p, a, hops, url, _, _ = _unrecord(rec)
            yield _a_line(p, a, hops, due - self.clock(), url, via)   # relative: clocks differ across runs

    def checkpoint(self) -> None:
        """Write a snapshot of every queued or leased URL and start a new log generation."""
        if self.dir is None:
            return
        self._flush_log()
        gen = self._gen + 1
        hosts = {h.key: {"crawl_delay": h.crawl_delay, "last_delay": h.last_delay, "backoff": h.backoff_n}
                 for h in self._hosts.values() if h.crawl_delay is not None or h.backoff_n or h.last_delay}
        head = {"warchive-frontier": FORMAT_VERSION, "gen": gen, "created": self.wallclock(), "hosts": hosts}
        tmp = os.path.join(self.dir, SNAPSHOT + ".tmp")
        crc = 0
        n = 0
        with open(tmp, "wb") as f:
            f.write(json.dumps(head, sort_keys=True).encode() + b"\n")
            chunk: List[bytes] = []
            for lease in self._out.values():
                chunk.append(_a_line(lease.priority, lease.attempts, lease.hops, None, lease.url, lease.via,
                                     True).encode("utf-8", "surrogateescape"))
            for line in self._entries():
                chunk.append(line.encode("utf-8", "surrogateescape"))
                if len(chunk) >= 4096:
                    data = b"".join(chunk)
                    crc = zlib.crc32(data, crc)
                    n += len(chunk)
                    f.write(data)
                    chunk = []
            data = b"".join(chunk)
            crc = zlib.crc32(data, crc)
            n += len(chunk)
            f.write(data)
            f.write(f"E\t{n}\t{crc:08x}\n".encode())
            f.flush()
            os.fsync(f.fileno())
        open(self._log_path(gen), "ab").close()
        os.replace(tmp, os.path.join(self.dir, SNAPSHOT))
        fsync_dir(self.dir)
        if self._log_fd is not None:
            os.close(self._log_fd)
            self._log_fd = None
        old = self._gen
        self._gen = gen
        self._log_ops = 0
        if os.path.exists(self._log_path(old)):
            os.unlink(self._log_path(old))

    def close(self) -> None:
        self.sync()
        if self._log_fd is not None:
            os.close(self._log_fd)
            self._log_fd = None

    @classmethod
    def open(cls, directory: PathLike, politeness: Optional[Politeness] = None, **kw: Any) -> "Frontier":
        """A frontier persisted in ``directory``: restored from its snapshot and log if they exist."""
        f = cls(politeness, **kw)
        f.dir = os.fspath(directory)
        os.makedirs(f.dir, exist_ok=True)
        snap = os.path.join(f.dir, SNAPSHOT)
        entries: Dict[str, _Entry] = {}
        taken: Dict[str, _Entry] = {}
        hosts: Dict[str, Any] = {}
        gen = 0
        if os.path.exists(snap):
            gen, hosts = _read_snapshot(snap, entries)
        for name in os.listdir(f.dir):  # logs of other generations: a checkpoint was cut short, or stale
            if name.startswith("frontier.") and name.endswith(".log") and name != f"frontier.{gen}.log":
                os.unlink(os.path.join(f.dir, name))
        log = os.path.join(f.dir, f"frontier.{gen}.log")
        if os.path.exists(log):
            _replay_log(log, entries, taken)
        f._gen = gen
        now = f.clock()
        for key, st in hosts.items():
            h = f._host(key)
            h.crawl_delay = st.get("crawl_delay")
            h.backoff_n = int(st.get("backoff", 0))
            h.last_delay = float(st.get("last_delay", 0.0))
            h.next_time = now + h.last_delay   # the last fetch may have ended just before the kill
            h.last_reason = "resume"
        for url, e in list(taken.items()) + list(entries.items()):
            f._add(url, e.priority, e.hops, e.via, None if e.due is None else now + e.due, e.attempts,
                   e.front or url in taken)
        f._log_buf = []
        f.checkpoint()
        return f


def _read_snapshot(path: str, entries: Dict[str, _Entry]) -> Tuple[int, Dict[str, Any]]:
    with open(path, "rb") as fh:
        data = fh.read()
    nl = data.find(b"\n")
    try:
        head = json.loads(data[:nl])
        if head.get("warchive-frontier") != FORMAT_VERSION:
            raise FrontierFormatError(path, 0, f"frontier snapshot version {head.get('warchive-frontier')!r}",
                                      "upgrade warchive")
    except ValueError:
        raise FrontierFormatError(path, 0, "not a frontier snapshot (no JSON head line)") from None
    end = data.rfind(b"\nE\t", nl - 1 if nl > 0 else 0)
    if not data.endswith(b"\n") or end < 0:
        raise FrontierFormatError(path, len(data), "snapshot has no end line (it was cut short)",
                                  "delete it to resume from the log alone is not possible: restart the crawl's "
                                  "frontier from the session journal")
    body = data[nl + 1:end + 1]
    _, n_s, crc_s = data[end + 1:].decode().split("\t")
    if zlib.crc32(body) != int(crc_s, 16):
        raise FrontierFormatError(path, nl + 1, "snapshot entries fail their CRC")
    lines = body.decode("utf-8", "surrogateescape").split("\n")[:-1] if body else []
    if len(lines) != int(n_s):
        raise FrontierFormatError(path, nl + 1, f"snapshot holds {len(lines)} entries, its end line says {n_s}")
    pos = nl + 1
    for line in lines:
        url, e = _parse_a(line.split("\t"), path, pos)
        entries[url] = e
        pos += len(line.encode("utf-8", "surrogateescape")) + 1
    return int(head["gen"]), dict(head.get("hosts") or {})


def _replay_log(path: str, entries: Dict[str, _Entry], taken: Dict[str, _Entry]) -> None:
    with open(path, "rb") as fh:
        data = fh.read()
    end = data.rfind(b"\n") + 1   # a torn last line is ignored
    pos = 0
    for raw in data[:end].split(b"\n")[:-1]:
        fields = raw.decode("utf-8", "surrogateescape").split("\t")
        op = fields[0]
        if op in ("A", "a"):
            url, e = _parse_a(fields, path, pos)
            entries[url] = e
        elif op == "T" and len(fields) == 2:
            url = _unesc(fields[1])
            e2 = entries.pop(url, None)
            if e2 is not None:
                taken[url] = e2
        elif op == "F" and len(fields) == 2:
            url = _unesc(fields[1])
            if taken.pop(url, None) is None:   # leased when the snapshot was written
                entries.pop(url, None)
        else:
            raise FrontierFormatError(path, pos, f"unknown frontier log line {raw[:60]!r}")
        pos += len(raw) + 1
