"""The frontier's per-host queues: every queued URL as a compact ``bytes`` record.

A host (``HostQueue``) keeps one buffer per priority level (0 first), appended to at
the tail and read from a moving start (compacted now and then), plus a deque for
records put back at the head (retries, resumed leases), and the host's politeness
state (next allowed time, last delay and its reason, tokens, backoff). The ``via``
URLs of queued URLs are interned (``Vias``) so that the outlinks of one page share
one string. This module keeps queues; it must not schedule: ``frontier`` does.
"""

from __future__ import annotations

import struct
from collections import deque
from typing import Deque, Dict, Iterator, List, Optional, Tuple, Union

IDLE, WAITING, READY, BUSY = 0, 1, 2, 3


# A queued URL is one record in its host's buffer for its priority level:
#   priority u8 | attempts u8 | hop-path length u8 | URL length u32 | via id i32 (-1: none) | hop path | URL (UTF-8)
# A via is interned by ``Vias`` (id, reference count), so the outlinks of one page share it.
_HEAD = struct.Struct("<BBBIi")
_COMPACT = 1 << 16


def pack_url(priority: int, attempts: int, hops: str, url: str, via_id: int = -1) -> bytes:
    """One queued URL as a record (the layout above)."""
    h = hops.encode("ascii")
    u = url.encode("utf-8", "surrogateescape")
    if len(h) > 255:
        raise ValueError(f"hop path of {len(h)} hops: at most 255")
    return _HEAD.pack(priority, attempts, len(h), len(u), via_id) + h + u


def unpack_url(rec: Union[bytes, bytearray], pos: int = 0) -> Tuple[int, int, str, str, int, int]:
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


class HostQueue:
    """The queued URLs of one host, by priority level, and its politeness state (``state``: IDLE,
    WAITING, READY or BUSY, as the frontier's heaps see it)."""

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
        rec = pack_url(priority, attempts, hops, url, via_id)
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
            prio, att, hops, url, vid, _ = unpack_url(lv.front.popleft())
        else:
            prio, att, hops, url, vid, lv.pos = unpack_url(lv.buf, lv.pos)
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
                prio, att, hops, url, vid, _ = unpack_url(rec)
                yield prio, att, hops, url, vid
            pos = lv.pos
            while pos < len(lv.buf):
                prio, att, hops, url, vid, pos = unpack_url(lv.buf, pos)
                yield prio, att, hops, url, vid


class Vias:
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
