"""robots.txt for a crawler: one cache entry per authority, the fetch outcomes, and when to ask again.

``RobotsCache`` adds what a crawler needs around the parser (``robots``): one entry
per authority, the outcome of fetching ``/robots.txt`` (found, unavailable,
unreachable), redirects followed up to five hops, a lifetime of at most 24 hours,
and an injectable clock. The cache never opens a socket: the crawler hands it a
fetch callable ``fetch(url) -> (status, headers, body, final_url)`` (or an
``async`` one), so the fetcher of ``warchive.capture.fetch`` plugs in unchanged and
the robots.txt exchange is archived like any other.

Where the RFC leaves a choice, this module chooses (docs/api.md, "robots"):

* 4xx except 429 -> "unavailable": everything allowed (RFC 9309 2.3.1.3).
  429 is treated like 5xx, "unreachable": everything disallowed, retried
  soon. Google documents the same; Heritrix 3 allows everything after any
  non-2xx response, which the RFC forbids for 5xx.
* More than five redirects -> unavailable (2.3.1.2 allows it).
* An unreachable robots.txt keeps a previous good copy in force (2.4 allows it
  past 24 h) for up to ``stale_limit`` (30 days); without one, everything is
  disallowed until a retry succeeds.

This module must not fetch, write WARCs or decide scope.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Dict, Generator, List, Optional, Tuple, Type
from urllib.parse import urljoin

from ..errors import ArchiveError
from .robots import (GOOGLE, MAX_BYTES, MODES, POLICIES, RFC, Decision, Headers, RobotsTxt, header_value,
                     product_token, request_path, robots_url)

__all__ = ["RobotsCache", "RobotsEntry", "FOUND", "UNAVAILABLE", "UNREACHABLE", "MAX_REDIRECTS", "MAX_AGE",
           "FetchResult", "Fetch", "AsyncFetch"]

MAX_REDIRECTS = 5               # 2.3.1.2: follow at least five consecutive redirects
MAX_AGE = 24 * 3600.0           # 2.4: a cached copy should not be used for more than 24 hours
RETRY_UNREACHABLE = 600.0       # how soon an unreachable robots.txt is asked for again
STALE_LIMIT = 30 * 86400.0      # 2.3.1.4: "a reasonably long period of time (for example, 30 days)"

FOUND = "found"                 # 2xx: the rules apply
UNAVAILABLE = "unavailable"     # 4xx (not 429), too many redirects: everything allowed
UNREACHABLE = "unreachable"     # 5xx, 429, network error: everything disallowed

#: What a fetch callable returns: HTTP status (0 when nothing came back), response headers,
#: body (at least the first MAX_BYTES; the rest may be cut), and the URL finally fetched.
FetchResult = Tuple[int, Headers, bytes, str]
Fetch = Callable[[str], FetchResult]
AsyncFetch = Callable[[str], Awaitable[FetchResult]]


@dataclass
class RobotsEntry:
    """What is known about one authority's robots.txt.

    ``status`` is FOUND, UNAVAILABLE or UNREACHABLE; ``robots`` the rules in force (for
    UNREACHABLE: a previous FOUND copy if ``stale``, else disallow-all). ``http_status`` is
    the last response's status (0 for a network error), ``chain`` the URLs fetched (redirects
    included), ``error`` what went wrong. Times are of the cache's clock.
    """

    robots_url: str
    status: str
    robots: RobotsTxt
    fetched_at: float
    expires_at: float
    http_status: int = 0
    chain: List[str] = field(default_factory=list)
    error: str = ""
    stale: bool = False            # an older FOUND copy kept in force while unreachable
    found_at: Optional[float] = None  # when the rules in force were fetched (FOUND)


_NET_ERRORS: Tuple[Type[BaseException], ...] = (OSError, asyncio.TimeoutError, ArchiveError, EOFError)


class RobotsCache:
    """robots.txt per authority for one crawler, fetched through a callable the crawler supplies.

    Synchronous use: ``cache.decide(url, fetch)`` / ``cache.allowed(url, fetch)``, where
    ``fetch(url) -> (status, headers, body, final_url)``. Asynchronous: ``await
    cache.adecide(url, afetch)`` with ``afetch`` a coroutine function of the same shape;
    concurrent calls for one authority share one fetch. A fetch callable reports a network
    failure by raising ``OSError`` (or ``asyncio.TimeoutError``, ``ArchiveError``) or returning
    status 0. It may follow redirects itself (``final_url`` then differs) or return the 3xx, in
    which case the cache follows ``Location`` up to ``max_redirects`` hops.

    ``clock`` (default ``time.time``) is injectable: tests move time instead of sleeping.
    With ``policy="ignore"`` nothing is fetched and everything is allowed. ``mode`` is the
    reading of the files (``robots.MODES``): ``"google"`` (the default) matches each URL as it
    will be requested (``robots.request_path``: %-encoded as the fetcher sends it), ``"rfc"``
    normalises both sides as RFC 9309 says.
    """

    def __init__(self, agent: str, *, policy: str = "obey", max_age: float = MAX_AGE,
                 retry_unreachable: float = RETRY_UNREACHABLE, stale_limit: float = STALE_LIMIT,
                 max_redirects: int = MAX_REDIRECTS, max_bytes: int = MAX_BYTES,
                 clock: Callable[[], float] = time.time, mode: str = GOOGLE) -> None:
        if mode not in MODES:
            raise ValueError(f"robots.txt mode {mode!r}: one of {', '.join(MODES)}")
        if policy not in POLICIES:
            raise ValueError(f"robots policy {policy!r}: one of {', '.join(POLICIES)}")
        if max_age > MAX_AGE:
            raise ValueError(f"max_age {max_age} s: RFC 9309 2.4 says at most {MAX_AGE:.0f} s")
        self.agent = agent
        self.token = product_token(agent)
        self.policy = policy
        self.mode = mode
        self.max_age = max_age
        self.retry_unreachable = retry_unreachable
        self.stale_limit = stale_limit
        self.max_redirects = max_redirects
        self.max_bytes = max_bytes
        self.clock = clock
        self._entries: Dict[str, RobotsEntry] = {}
        self._pending: Dict[str, "asyncio.Future[RobotsEntry]"] = {}
        self.fetches = 0   # robots.txt requests made (redirect hops count one each)

    # -- lookups that never fetch

    def entry(self, url: str) -> Optional[RobotsEntry]:
        """The cached entry for ``url``'s authority, even if expired; None if never fetched."""
        return self._entries.get(robots_url(url))

    def needs_fetch(self, url: str) -> Optional[str]:
        """The robots.txt URL to fetch before ``url`` can be decided, or None if the cache is fresh."""
        if self.policy == "ignore":
            return None
        r = robots_url(url)
        e = self._entries.get(r)
        if e is None or self.clock() >= e.expires_at:
            return r
        return None

    def cached_decision(self, url: str) -> Optional[Decision]:
        """The decision from the cache, or None when robots.txt must be fetched first."""
        if self.policy == "ignore":
            return Decision(True, None, "robots policy ignore")
        e = self._entries.get(robots_url(url))
        if e is None or self.clock() >= e.expires_at:
            return None
        return self._decide(e, url)

    def crawl_delay(self, url: str) -> Optional[float]:
        """The ``Crawl-delay`` in force for ``url``'s host and this agent (None when unknown or absent)."""
        if self.policy == "ignore":
            return None
        e = self._entries.get(robots_url(url))
        return e.robots.crawl_delay(self.agent) if e is not None else None

    def _decide(self, e: RobotsEntry, url: str) -> Decision:
        d = e.robots.decide(url if self.mode == RFC else request_path(url), self.agent)
        if e.status == UNREACHABLE and not e.stale:
            return Decision(False, None, f"robots.txt unreachable ({e.error or e.http_status}): everything disallowed")
        if e.status == UNAVAILABLE:
            return Decision(True, None, f"robots.txt unavailable ({e.error or e.http_status}): everything allowed")
        return d

    # -- the fetch protocol (sans I/O): a generator that yields URLs and receives results

    def _resolve(self, rurl: str) -> Generator[str, Optional[FetchResult], RobotsEntry]:
        chain: List[str] = []
        url = rurl
        hops = 0
        while True:
            chain.append(url)
            self.fetches += 1
            result = yield url
            now = self.clock()
            if result is None:
                return self._unreachable(rurl, now, 0, chain, "network error")
            status, headers, body, final = result
            if final and final != url:
                chain.append(final)
            if status <= 0:
                return self._unreachable(rurl, now, 0, chain, "no response")
            if 300 <= status < 400 and status != 304:
                loc = header_value(headers, "location")
                if not loc:
                    return self._unreachable(rurl, now, status, chain, f"{status} without Location")
                if hops >= self.max_redirects:
                    return self._store(RobotsEntry(rurl, UNAVAILABLE, RobotsTxt.allow_all(self.mode), now,
                                                   now + self.max_age, status, chain,
                                                   f"more than {self.max_redirects} redirects"))
                hops += 1
                url = urljoin(final or url, loc.strip())
                continue
            if 200 <= status < 300:
                rt = RobotsTxt.parse(body, max_bytes=self.max_bytes, mode=self.mode)
                return self._store(RobotsEntry(rurl, FOUND, rt, now, now + self.max_age, status, chain,
                                               found_at=now))
            if 400 <= status < 500 and status != 429:
                return self._store(RobotsEntry(rurl, UNAVAILABLE, RobotsTxt.allow_all(self.mode), now,
                                               now + self.max_age, status, chain, f"HTTP {status}"))
            return self._unreachable(rurl, now, status, chain, f"HTTP {status}")

    def _unreachable(self, rurl: str, now: float, status: int, chain: List[str], why: str) -> RobotsEntry:
        old = self._entries.get(rurl)
        expires = now + self.retry_unreachable
        if old is not None and old.found_at is not None:
            if now - old.found_at <= self.stale_limit:
                return self._store(RobotsEntry(rurl, UNREACHABLE, old.robots, now, expires, status, chain, why,
                                               stale=True, found_at=old.found_at))
        return self._store(RobotsEntry(rurl, UNREACHABLE, RobotsTxt.disallow_all(self.mode), now, expires, status, chain,
                                       why))

    def _store(self, e: RobotsEntry) -> RobotsEntry:
        self._entries[e.robots_url] = e
        return e

    def update(self, url: str, result: Optional[FetchResult]) -> RobotsEntry:
        """Record the outcome of fetching ``url``'s robots.txt when the crawler fetched it itself.

        ``result`` None means a network error. A 3xx result ends here as UNREACHABLE: use
        ``fetch_entry`` to have redirects followed.
        """
        gen = self._resolve(robots_url(url))
        next(gen)
        try:
            gen.send(result)
        except StopIteration as stop:
            return stop.value
        gen.close()
        now = self.clock()
        return self._unreachable(robots_url(url), now, result[0] if result else 0, [robots_url(url)],
                                 "redirect not followed")

    def fetch_entry(self, url: str, fetch: Fetch) -> RobotsEntry:
        """The entry for ``url``'s authority, fetching robots.txt through ``fetch`` if needed."""
        rurl = robots_url(url)
        e = self._entries.get(rurl)
        if e is not None and self.clock() < e.expires_at:
            return e
        gen = self._resolve(rurl)
        target = next(gen)
        while True:
            try:
                res: Optional[FetchResult] = fetch(target)
            except _NET_ERRORS:
                res = None
            try:
                target = gen.send(res)
            except StopIteration as stop:
                return stop.value

    async def afetch_entry(self, url: str, fetch: AsyncFetch) -> RobotsEntry:
        """``fetch_entry`` with an async fetch; concurrent calls for one authority share one fetch."""
        rurl = robots_url(url)
        e = self._entries.get(rurl)
        if e is not None and self.clock() < e.expires_at:
            return e
        pending = self._pending.get(rurl)
        if pending is not None:
            return await asyncio.shield(pending)
        fut: "asyncio.Future[RobotsEntry]" = asyncio.get_running_loop().create_future()
        self._pending[rurl] = fut
        try:
            gen = self._resolve(rurl)
            target = next(gen)
            while True:
                try:
                    res: Optional[FetchResult] = await fetch(target)
                except _NET_ERRORS:
                    res = None
                try:
                    target = gen.send(res)
                except StopIteration as stop:
                    fut.set_result(stop.value)
                    return stop.value
        except BaseException as exc:
            if not fut.done():
                fut.set_exception(exc)
                fut.exception()  # retrieved: no "never retrieved" warning when nobody waits
            raise
        finally:
            del self._pending[rurl]

    def decide(self, url: str, fetch: Fetch) -> Decision:
        """May ``url`` be fetched? Fetches robots.txt first when the cache has no fresh entry."""
        if self.policy == "ignore":
            return Decision(True, None, "robots policy ignore")
        return self._decide(self.fetch_entry(url, fetch), url)

    async def adecide(self, url: str, fetch: AsyncFetch) -> Decision:
        if self.policy == "ignore":
            return Decision(True, None, "robots policy ignore")
        return self._decide(await self.afetch_entry(url, fetch), url)

    def allowed(self, url: str, fetch: Fetch) -> bool:
        return self.decide(url, fetch).allowed

    def expire(self) -> int:
        """Drop entries past their lifetime that cannot serve as stale copies; returns how many."""
        now = self.clock()
        drop = [k for k, e in self._entries.items()
                if now >= e.expires_at and (e.found_at is None or now - e.found_at > self.stale_limit)]
        for k in drop:
            del self._entries[k]
        return len(drop)

    def __len__(self) -> int:
        return len(self._entries)
