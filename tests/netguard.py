"""A connect guard for tests of the crawler's address checks: while ``watch(...)`` is active, every
socket connect made in this process is recorded, and one to an address the test does not serve on
is refused before it happens.

A Python audit hook (``socket.connect``) sees every connect Python code makes, asyncio's
included, before the system call. The hook raises ``PermissionError`` (an ``OSError``: the fetcher
reports a failed connect) for any address not given to ``watch``, so a test that runs against a
crawler without the guard sees the attempt in ``Watch.attempts`` and fails on it, and still never
sends a packet to 10.x or 169.254.x. Audit hooks cannot be removed: outside ``watch`` it does
nothing.
"""

from __future__ import annotations

import errno
import sys
from contextlib import contextmanager
from typing import Any, Iterator, List, Optional, Set, Tuple


class Watch:
    """The connects of one ``watch``: ``attempts`` holds each address as given to ``connect``."""

    def __init__(self, allowed: Set[Tuple[str, int]]) -> None:
        self.allowed = allowed
        self.attempts: List[Tuple[Any, ...]] = []

    def elsewhere(self) -> List[Tuple[Any, ...]]:
        """The attempts to anything but the test's own servers (the guard stopped each one)."""
        return [a for a in self.attempts if (a[0], a[1]) not in self.allowed]


_WATCH: Optional[Watch] = None


def _audit(event: str, args: Tuple[Any, ...]) -> None:
    w = _WATCH
    if w is None or event != "socket.connect" or not isinstance(args[1], tuple):
        return
    addr = args[1]
    w.attempts.append(addr)
    if (addr[0], addr[1]) not in w.allowed:
        raise PermissionError(errno.EACCES, f"netguard: a test may not connect to {addr}")


sys.addaudithook(_audit)


@contextmanager
def watch(*servers: Tuple[str, int]) -> Iterator[Watch]:
    """Record every connect; let through only those to ``servers`` ((address, port) as ``connect``
    gets it: ``("127.0.0.1", port)``, ``("::ffff:127.0.0.1", port)``)."""
    global _WATCH
    w = Watch(set(servers))
    _WATCH = w
    try:
        yield w
    finally:
        _WATCH = None
