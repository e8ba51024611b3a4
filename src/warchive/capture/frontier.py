"""The frontier: which URL to fetch next, and when, so that every host is treated politely.

One queue per host (its SURT authority, ``com,example)``: ``politeness.host_key``);
each queue has priority levels (0 first; ``host_queue``). A host whose politeness
delay has not expired waits in a d-ary heap (``warchive.heap``) keyed by its next
allowed time; a host that may be fetched now waits in a second d-ary heap keyed by
the priority of its best URL, then that time; revisits scheduled for later wait in a
third. At most ``max_per_host`` fetches per host run at once (one by default). The
delay after each fetch is the rules' of ``politeness.Politeness``; every lease
carries the ``LedgerEntry`` of its decision.

Persistence (``checkpoint``; docs/format.md, "Frontier checkpoint"): with a
directory, every change is appended to ``frontier.<gen>.log`` (A: queued, T: leased,
F: finished) with one ``write`` per call, so a SIGKILL loses nothing the process had
returned from; a snapshot ``frontier.snap`` of every queued URL is published now and
then and starts a new log generation. ``Frontier.open(dir)`` loads the snapshot,
replays its log, and puts leased-but-unfinished URLs back at the head of their
queues; the session database, not the frontier, says which URLs were finished (a URL
whose "F" line was lost is queued again: the crawler skips it there).

The clocks are injectable: tests move time instead of sleeping. This module must not
fetch, decide scope or robots, or remember which URLs were seen.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from ..errors import ArchiveError
from ..heap import DaryHeap
from .checkpoint import SNAPSHOT, CheckpointLog, a_line, f_line, restore, t_line
from .host_queue import BUSY, IDLE, READY, WAITING, HostQueue, Vias, pack_url, unpack_url
from .politeness import LedgerEntry, Politeness, host_key

__all__ = ["Frontier", "Lease"]

PathLike = Union[str, os.PathLike[str]]


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
        self._hosts: Dict[str, HostQueue] = {}
        self._waiting: DaryHeap[Tuple[float, int, int, HostQueue]] = DaryHeap(arity)
        self._ready: DaryHeap[Tuple[int, float, int, int, HostQueue]] = DaryHeap(arity)
        self._sched: DaryHeap[Tuple[float, int, bytes, Optional[str], str]] = DaryHeap(arity)
        self._seq = 0
        self._vias = Vias()
        self._queued = 0
        self._inflight = 0
        self._out: Dict[int, Lease] = {}   # leases not yet done (a checkpoint writes them as queued)
        self._event: Optional[asyncio.Event] = None
        self.dir = os.fspath(directory) if directory is not None else None
        self.checkpoint_every = checkpoint_every
        self._log: Optional[CheckpointLog] = None
        if self.dir is not None:
            os.makedirs(self.dir, exist_ok=True)
            if os.path.exists(os.path.join(self.dir, SNAPSHOT)):
                raise ArchiveError(f"{self.dir}: holds a frontier checkpoint; resume it with Frontier.open()")
            self._log = CheckpointLog(self.dir)

    # -- adding

    def _host(self, key: str) -> HostQueue:
        h = self._hosts.get(key)
        if h is None:
            h = self._hosts[key] = HostQueue(key, self.pol.burst)
        return h

    def _enqueue(self, host: HostQueue, priority: int, attempts: int, hops: str, url: str, via: Optional[str],
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
        if self._log is not None:
            self._log.add(a_line(priority, attempts, hops, None if due is None else due - self.clock(), url, via,
                              front))
        if due is not None and due > self.clock():
            self._seq += 1
            self._sched.push((due, self._seq, pack_url(priority, attempts, hops, url), via, key))
            self._queued += 1
        else:
            self._enqueue(self._host(key), priority, attempts, hops, url, via, front)
        self._wake()
        return True

    # -- scheduling

    def _ready_time(self, host: HostQueue) -> float:
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

    def _schedule(self, host: HostQueue) -> None:
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

    def _push_ready(self, host: HostQueue) -> None:
        host.gen += 1
        host.state = READY
        self._seq += 1
        self._ready.push((host.best(), host.next_time, self._seq, host.gen, host))

    def _promote(self, now: float) -> None:
        while self._sched and self._sched.peek()[0] <= now:
            _, _, rec, via, key = self._sched.pop()
            self._queued -= 1
            prio, att, hops, url, _, _ = unpack_url(rec)
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

    def _lease(self, host: HostQueue, now: float) -> Lease:
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
        if self._log is not None:
            self._log.add(t_line(url))
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
        if crawl_delay is not None:
            host.crawl_delay = crawl_delay
        delay, reason = p.delay(dur, host.crawl_delay)
        if status in (429, 503):
            wait, why = p.throttle(retry_after, self.wallclock(), host.backoff_n)
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
        if self._log is not None:
            self._log.add(f_line(lease.url))
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
        if self._log is not None:
            self._log.add(f_line(lease.url))
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

    def urls(self) -> Iterator[str]:
        """Every URL the frontier holds: leased, queued, and scheduled for a revisit (what a resumed
        crawl puts into its seen set, so that finding one again does not queue it twice)."""
        for lease in list(self._out.values()):
            yield lease.url
        for host in self._hosts.values():
            for _, _, _, url, _ in host.records():
                yield url
        for _, _, rec, _, _ in self._sched:
            yield unpack_url(rec)[3]

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

    def _flush_log(self) -> None:
        log = self._log
        if log is None or not log.flush():
            return
        # a snapshot costs one line per queued URL: take one only when the log is at least that long
        if log.ops >= max(self.checkpoint_every, self._queued):
            self.checkpoint()

    def sync(self) -> None:
        """Make every change so far durable against a power cut (fsync the log)."""
        self._flush_log()
        if self._log is not None:
            self._log.sync()

    def _entries(self) -> Iterator[str]:
        """Every URL to be fetched, as A lines: the leased ones first (as ``a``, at the head of their
        queues), then every host's queue, then the revisits scheduled for later."""
        for lease in list(self._out.values()):
            yield a_line(lease.priority, lease.attempts, lease.hops, None, lease.url, lease.via, True)
        for host in self._hosts.values():
            for p, a, hops, url, vid in host.records():
                yield a_line(p, a, hops, None, url, self._vias.get(vid))
        for due, _, rec, via, _ in self._sched:
            p, a, hops, url, _, _ = unpack_url(rec)
            yield a_line(p, a, hops, due - self.clock(), url, via)   # relative: clocks differ across runs

    def checkpoint(self) -> None:
        """Write a snapshot of every queued or leased URL and start a new log generation."""
        if self._log is None:
            return
        self._flush_log()
        hosts = {h.key: {"crawl_delay": h.crawl_delay, "last_delay": h.last_delay, "backoff": h.backoff_n}
                 for h in self._hosts.values() if h.crawl_delay is not None or h.backoff_n or h.last_delay}
        self._log.snapshot(self.wallclock(), hosts, self._entries())

    def close(self) -> None:
        self.sync()
        if self._log is not None:
            self._log.close()

    @classmethod
    def open(cls, directory: PathLike, politeness: Optional[Politeness] = None, **kw: Any) -> "Frontier":
        """A frontier persisted in ``directory``: restored from its snapshot and log if they exist."""
        f = cls(politeness, **kw)
        f.dir = os.fspath(directory)
        os.makedirs(f.dir, exist_ok=True)
        saved = restore(f.dir)
        f._log = CheckpointLog(f.dir, saved.gen)
        now = f.clock()
        for key, st in saved.hosts.items():
            h = f._host(key)
            h.crawl_delay = st.get("crawl_delay")
            h.backoff_n = int(st.get("backoff", 0))
            h.last_delay = float(st.get("last_delay", 0.0))
            h.next_time = now + h.last_delay   # the last fetch may have ended just before the kill
            h.last_reason = "resume"
        taken = saved.leased
        for url, e in list(taken.items()) + list(saved.queued.items()):
            f._add(url, e.priority, e.hops, e.via, None if e.due is None else now + e.due, e.attempts,
                   e.front or url in taken)
        f._log.discard()
        f.checkpoint()
        return f
