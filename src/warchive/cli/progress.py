"""The live display of a crawl on a terminal: what `warchive crawl` shows while it runs.

Two lines, refreshed at most once a second and erased at the end: queued, fetched,
failed, skipped, in flight, rate and bytes written; hosts and the deepest queues.
It is the CLI's side of the crawler (``Crawler(progress=Progress(sys.stderr))``);
it reads a crawler and writes to a stream, and must not change either.
"""

from __future__ import annotations

import ipaddress
import sys
import time
from typing import TextIO

from ..capture.crawler import Crawler

__all__ = ["Progress", "host_of_queue"]


def _human(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"


def _is_ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def host_of_queue(key: str) -> str:
    """A host queue's name as a user reads a host: its SURT authority (``com,example)``,
    ``1,0,0,127:8080)``, ``::1:8080)``, politeness.host_key) back in URL order (``example.com``,
    ``127.0.0.1:8080``, ``[::1]:8080``); www stays dropped, as the queue drops it."""
    k = key[:-1] if key.endswith(")") else key
    if "," not in k and k.count(":") >= 2:   # IPv6 (no commas): a port follows its last colon if it has one
        addr, _, port = k.rpartition(":")
        return f"[{addr}]:{port}" if port.isdigit() and _is_ipv6(addr) else f"[{k}]"
    host, sep, port = k.partition(":")
    return ".".join(reversed(host.split(","))) + (sep + port if sep else "")


class Progress:
    """A live one-screen display on a terminal: refreshed at most once a second, erased at the end."""

    def __init__(self, stream: TextIO = sys.stderr, interval: float = 1.0) -> None:
        self.stream = stream
        self.interval = interval
        self._last = 0.0
        self._lines = 0

    def __call__(self, c: Crawler) -> None:
        now = time.monotonic()
        if now - self._last < self.interval:
            return
        self._last = now
        s = c.stats
        took = max(1e-9, time.time() - s.started)
        depths = c.frontier.depths(3)
        hosts = "  ".join(f"{host_of_queue(h)} {d}" for h, d in depths) or "-"
        text = [f"queued {len(c.frontier):>8}  fetched {s.fetched:>8}  failed {s.failed:>6}  "
                f"skipped {s.skipped:>6}  in flight {c.frontier.inflight:>3}  {s.fetched / took:6.1f}/s  "
                f"{_human(s.bytes):>9} written",
                f"hosts {c.frontier.host_count():>6}  deepest queues: {hosts}"]
        self.clear()
        self.stream.write("\n".join(line[:200] for line in text) + "\n")
        self.stream.flush()
        self._lines = len(text)

    def clear(self) -> None:
        if self._lines:
            self.stream.write(f"\x1b[{self._lines}F\x1b[J")
            self._lines = 0
