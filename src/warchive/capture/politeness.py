"""Politeness: how long to leave a host alone after a fetch, and the ledger of every such decision.

The delay after a fetch is Heritrix's::

    delay = clamp(delay_factor * duration of the last fetch, min_delay, max_delay)
    delay = max(delay, min(robots Crawl-delay, crawl_delay_cap))
    429 / 503: delay = max(delay, Retry-After (seconds or HTTP-date) or exponential backoff)

and a token bucket per host (``rate`` tokens a second, ``burst`` at most) may push the
next fetch later still. A host is a URL's SURT authority (``host_key``). Every lease
carries a ``LedgerEntry``: the delay the rules asked for, the time actually waited
since the host's last fetch ended, and why (the "politeness ledger" the crawl log
writes). This module holds the rules and their records; the frontier applies them.
"""

from __future__ import annotations

import email.utils
from dataclasses import asdict, dataclass
from typing import Any, Dict, Optional, Tuple

from ..errors import UrlError
from ..surt import surt

__all__ = ["Politeness", "LedgerEntry", "host_key", "parse_retry_after"]


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

    def delay(self, duration: float, crawl_delay: Optional[float]) -> Tuple[float, str]:
        """The delay after a fetch that took `duration` seconds from a host whose robots.txt asks for
        `crawl_delay`, and why: "delay-factor", "min-delay", "max-delay", "crawl-delay" or
        "crawl-delay-cap" (a 429/503 may ask for more: ``throttle``)."""
        delay, reason = self.delay_factor * duration, "delay-factor"
        if delay < self.min_delay:
            delay, reason = self.min_delay, "min-delay"
        if delay > self.max_delay:
            delay, reason = self.max_delay, "max-delay"
        cd = crawl_delay
        if cd is not None and cd > delay:
            delay, reason = (cd, "crawl-delay") if cd <= self.crawl_delay_cap else (self.crawl_delay_cap,
                                                                                  "crawl-delay-cap")
        return delay, reason

    def throttle(self, retry_after: Optional[str], now_wall: float, backoff_n: int) -> Tuple[float, str]:
        """What a 429/503 asks to wait, and why: its Retry-After ("retry-after", cut to
        ``max_retry_after``), else the exponential backoff of the `backoff_n`-th in a row ("backoff")."""
        wait = parse_retry_after(retry_after, now_wall)
        if wait is not None:
            return min(wait, self.max_retry_after), "retry-after"
        return min(self.max_backoff, self.backoff * 2 ** backoff_n), "backoff"


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
    """The host whose politeness a URL falls under, and the frontier queue it waits in: its SURT
    authority (``com,example)``, port kept, www dropped)."""
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
