"""Limits on what one client can hold of `warchive serve`: uvicorn's HTTP protocols, guarded.

uvicorn parses requests with httptools when it is installed and with h11 otherwise; neither
bounds everything a hostile client can send. httptools has no limit on a request head at all
(a 128 MB header is read whole), and neither closes a connection whose head or body arrives a
byte at a time, or a socket that never sends anything. ``guarded_protocol`` wraps either
parser's protocol class with these limits (``ServerLimits``), the same whichever is used:

- the head (request line and fields) is at most ``max_head`` bytes and ``max_fields`` lines of
  fields, else 431 and the connection is closed (counted on the bytes as they arrive, before
  either parser keeps them);
- a head must be complete ``head_timeout`` seconds after the connection opened or the last
  response was sent (so a silent socket, or one sending a byte a second, is closed; 408);
- a request body must arrive at ``body_min_rate`` bytes a second after a grace of
  ``body_timeout`` seconds, else the connection is closed (408);
- a client address holds at most ``max_per_client`` connections at once; one more is answered
  503 and closed.

It must not change what a well-behaved request gets: the limits act only on connections that
exceed them, and the app (warchive.replay.app) sees requests as uvicorn gives them.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from typing import Any, Optional, Type

from uvicorn.protocols.http.h11_impl import H11Protocol

from ..errors import ArchiveError

try:   # (uvicorn[standard] brings httptools; without it uvicorn parses with h11)
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
except ImportError:   # pragma: no cover
    HttpToolsProtocol = None  # type: ignore[assignment,misc]

WATCH_EVERY = 1.0   # seconds between a connection's checks of its deadlines


@dataclass(frozen=True)
class ServerLimits:
    """What one connection and one client address may hold (see the module docstring)."""

    max_head: int = 64 << 10
    max_fields: int = 100
    head_timeout: float = 20.0
    body_timeout: float = 20.0
    body_min_rate: float = 1024.0
    max_per_client: int = 256


def _reply(status: bytes, text: str) -> bytes:
    body = text.encode("ascii")
    return (b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: "
            + str(len(body)).encode("ascii") + b"\r\nconnection: close\r\n\r\n" + body)


HEAD_TOO_LARGE = _reply(b"431 Request Header Fields Too Large", "request head too large\n")
TIMED_OUT = _reply(b"408 Request Timeout", "request not received in time\n")
TOO_MANY = _reply(b"503 Service Unavailable", "too many connections from this address\n")


class _Guard:
    """The limits, mixed in before uvicorn's protocol class (whose attributes ``transport``,
    ``cycle`` and ``loop`` this reads; each of uvicorn's protocols starts a new ``cycle`` when a
    request's head is complete and calls ``on_response_complete`` when its answer is sent)."""

    limits: ServerLimits = ServerLimits()
    per_client: Counter = Counter()   # replaced by guarded_protocol: one count per server

    def connection_made(self, transport: asyncio.Transport) -> None:
        peer = transport.get_extra_info("peername")
        self._addr: Optional[str] = str(peer[0]) if isinstance(peer, (tuple, list)) and peer else None
        self._watch: Optional[asyncio.TimerHandle] = None
        if self._addr is not None and self.per_client[self._addr] >= self.limits.max_per_client:
            self._addr = None
            transport.write(TOO_MANY)
            transport.close()
            return
        if self._addr is not None:
            self.per_client[self._addr] += 1
        super().connection_made(transport)  # type: ignore[misc]
        self._head_wait(None)
        self._watch = self.loop.call_later(WATCH_EVERY, self._check)  # type: ignore[attr-defined]

    def connection_lost(self, exc: Optional[Exception]) -> None:
        if self._watch is not None:
            self._watch.cancel()
            self._watch = None
        if self._addr is not None:
            self.per_client[self._addr] -= 1
            if self.per_client[self._addr] <= 0:
                del self.per_client[self._addr]
            self._addr = None
        if getattr(self, "transport", None) is not None:   # (not when refused in connection_made)
            super().connection_lost(exc)  # type: ignore[misc]

    def _head_wait(self, cycle: Any) -> None:
        """From now on a head is awaited: the one after ``cycle`` (None: the first)."""
        self._after = cycle
        self._head_bytes = 0
        self._lines = 0   # (the request line and one a field)
        self._got = 0
        self._deadline = self.loop.time() + self.limits.head_timeout  # type: ignore[attr-defined]
        self._in_body = False

    def _awaiting_head(self) -> bool:
        cycle = self.cycle  # type: ignore[attr-defined]
        return cycle is self._after and (cycle is None or cycle.response_complete)

    def data_received(self, data: bytes) -> None:
        self._got += len(data)
        if self._awaiting_head():   # count the head's bytes and lines before a parser keeps them
            end = data.find(b"\r\n\r\n")
            if end < 0:
                end = data.find(b"\n\n")
            part = data if end < 0 else data[:end]
            self._head_bytes += len(part)
            self._lines += part.count(b"\n")
            if self._head_bytes > self.limits.max_head or self._lines > self.limits.max_fields:
                self._refuse(HEAD_TOO_LARGE)
                return
        elif self._in_body:
            self._deadline += len(data) / self.limits.body_min_rate
        super().data_received(data)  # type: ignore[misc]

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        if not self.transport.is_closing():  # type: ignore[attr-defined]
            self._head_wait(self.cycle)  # type: ignore[attr-defined]

    def _refuse(self, reply: bytes) -> None:
        transport = self.transport  # type: ignore[attr-defined]
        if not transport.is_closing():
            transport.write(reply)
            transport.close()

    def _check(self) -> None:
        """Every WATCH_EVERY seconds: close a connection whose head or body is overdue."""
        self._watch = None
        transport = self.transport  # type: ignore[attr-defined]
        if transport.is_closing():
            return
        now = self.loop.time()  # type: ignore[attr-defined]
        cycle = self.cycle  # type: ignore[attr-defined]
        if self._awaiting_head():
            if now > self._deadline:
                if self._got:
                    transport.write(TIMED_OUT)
                transport.close()
                return
        elif cycle is not None and not cycle.response_complete and cycle.more_body:
            if not self._in_body:   # the head is in, its body is awaited from now on
                self._in_body = True
                self._deadline = now + self.limits.body_timeout
            elif now > self._deadline:
                self._refuse(TIMED_OUT)
                return
        self._watch = self.loop.call_later(WATCH_EVERY, self._check)  # type: ignore[attr-defined]


def guarded_protocol(base: Type[asyncio.Protocol], limits: ServerLimits) -> Type[asyncio.Protocol]:
    """uvicorn's protocol class ``base`` (``uvicorn.protocols.http.httptools_impl.HttpToolsProtocol``
    or ``h11_impl.H11Protocol``) with ``limits``, for ``uvicorn.Config(http=...)``."""
    name = "Guarded" + base.__name__
    return type(name, (_Guard, base), {"limits": limits, "per_client": Counter()})


def parser_protocol(name: str) -> Type[asyncio.Protocol]:
    """uvicorn's protocol class of the parser named: httptools, h11 or auto (httptools when it
    is installed, as uvicorn chooses)."""
    if name in ("auto", "httptools") and HttpToolsProtocol is not None:
        return HttpToolsProtocol
    if name == "httptools":
        raise ArchiveError("--http httptools: httptools is not installed (pip install httptools)")
    return H11Protocol
