"""Host names to addresses for the fetcher, and the facts of each lookup (what a ``dns:`` record says).

A resolver is anything with ``async resolve(host, port) -> [address, ...]`` that raises
``OSError`` when the name does not resolve (``Resolver``): the operating system's
(``SystemResolver``, the default) or a fixed table (``StaticResolver``: tests, benchmarks
and loopback crawls, so that nothing leaves the machine). ``DnsFacts`` is one lookup, made
once per host, as the crawler archives it (Heritrix's ``dns:`` record). This module
resolves; it must not connect.
"""

from __future__ import annotations

import asyncio
import socket
import time
from dataclasses import dataclass
from typing import Dict, List, Mapping, Optional, Protocol, Sequence, Tuple

__all__ = ["DnsFacts", "Resolver", "StaticResolver", "SystemResolver"]


class Resolver(Protocol):
    """Maps a host name to its IP addresses (strings), first preferred; raises ``OSError`` when it
    does not resolve."""

    async def resolve(self, host: str, port: int) -> List[str]: ...


class SystemResolver:
    """The operating system's resolver (``getaddrinfo``), IPv4 and IPv6."""

    async def resolve(self, host: str, port: int) -> List[str]:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        out: List[str] = []
        for info in infos:
            addr = str(info[4][0])
            if addr not in out:
                out.append(addr)
        if not out:
            raise OSError(f"{host}: no address")
        return out


class StaticResolver:
    """A fixed table for tests and benchmarks: ``{"a.test": "127.0.0.1", "*.site.test": "127.0.0.1"}``
    (``*.`` matches any subdomain and the domain itself). Names not in it go to ``fallback`` (a
    resolver) or fail with ``OSError``; nothing leaves the machine unless ``fallback`` says so."""

    def __init__(self, table: Mapping[str, str | Sequence[str]], fallback: Optional[Resolver] = None) -> None:
        self._exact: Dict[str, List[str]] = {}
        self._suffix: List[Tuple[str, List[str]]] = []
        for name, addrs in table.items():
            addrs_l = [addrs] if isinstance(addrs, str) else list(addrs)
            name = name.lower().rstrip(".")
            if name.startswith("*."):
                self._suffix.append((name[1:], addrs_l))
            else:
                self._exact[name] = addrs_l
        self._fallback = fallback

    async def resolve(self, host: str, port: int) -> List[str]:
        h = host.lower().rstrip(".")
        if h in self._exact:
            return list(self._exact[h])
        for suffix, addrs in self._suffix:
            if h.endswith(suffix) or h == suffix[1:]:
                return list(addrs)
        if self._fallback is not None:
            return await self._fallback.resolve(host, port)
        raise OSError(f"{host}: not in the static resolver's table")


@dataclass
class DnsFacts:
    """What one lookup found: the facts of a Heritrix-style ``dns:`` record, made once per host."""

    host: str
    addresses: List[str]
    started: float         # epoch seconds when the lookup began
    duration: float        # seconds
    ttl: Optional[int] = None   # unknown through getaddrinfo

    @property
    def uri(self) -> str:
        return "dns:" + self.host

    def record_block(self) -> bytes:
        """The ``dns:`` record's block as Heritrix writes it (Content-Type ``text/dns``): the lookup's
        14-digit time, then one zone-file line per address (TTL 0 when unknown)."""
        ts = time.strftime("%Y%m%d%H%M%S", time.gmtime(self.started))
        lines = [ts]
        for a in self.addresses:
            kind = "AAAA" if ":" in a else "A"
            lines.append(f"{self.host}.\t{self.ttl or 0}\tIN\t{kind}\t{a}")
        return ("\n".join(lines) + "\n").encode("ascii")
