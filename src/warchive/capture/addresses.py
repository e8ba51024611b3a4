"""Which IP addresses capture may connect to: the guard against a crawled site steering it inward.

A page can point the crawler (and the recording proxy of browser capture) at any URL: the cloud
metadata service (169.254.169.254), the private network it runs in, its own loopback services.
``refusal(ip, allowed)`` judges one *resolved* address, the one about to be connected to: only
globally reachable unicast addresses pass, unless a network of ``allowed`` (the crawl's
``--allow-address``) holds the address. Judging the address actually connected to, after DNS and
for every connection, is what makes DNS rebinding and obfuscated spellings (``2130706433``,
``0x7f000001``, ``127.1``) harmless: whatever the name or spelling, the address is what counts.

An IPv6 address that carries an IPv4 one (v4-mapped ``::ffff:a.b.c.d``, 6to4 ``2002::/16``,
Teredo ``2001::/32``, NAT64 ``64:ff9b::/96``) is judged by the IPv4 address inside, because that
is where the packets go.

This module classifies; it must not resolve names, connect, or read settings.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Iterable, List, Optional, Sequence, Tuple, Union

__all__ = ["KINDS", "Network", "Refusal", "networks", "refusal"]

Network = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]
Address = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]

SHARED = ipaddress.IPv4Network("100.64.0.0/10")    # RFC 6598, carrier-grade NAT: never the public web
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")       # RFC 6052's well-known prefix: the last 32 bits

#: Each kind of refused address, as a ``Refusal`` names it and says it.
KINDS = {
    "unspecified": "unspecified (0.0.0.0 and :: reach this host)",
    "loopback": "loopback (this host)",
    "link-local": "link-local (169.254.0.0/16, fe80::/10: cloud metadata services live here)",
    "multicast": "multicast",
    "shared": "shared address space (100.64.0.0/10, carrier-grade NAT)",
    "site-local": "site-local (fec0::/10)",
    "private": "private (10/8, 172.16/12, 192.168/16, fc00::/7 and other special-purpose ranges)",
    "reserved": "reserved (240.0.0.0/4, the broadcast address, ::/8)",
    "non-global": "not globally reachable",
}


@dataclass(frozen=True)
class Refusal:
    """Why an address may not be connected to: ``kind`` is a key of ``KINDS``, ``inner`` the IPv4
    address judged when ``address`` carries one."""

    address: str
    kind: str
    inner: Optional[str] = None

    def __str__(self) -> str:
        held = f", which carries {self.inner}," if self.inner else ""
        return f"{self.address}{held} is {KINDS[self.kind]}"


def networks(cidrs: Iterable[str]) -> Tuple[Network, ...]:
    """The networks of ``--allow-address`` values (``10.0.0.0/8``, ``fd00::/8``, a bare address for
    one host). Raises ``ValueError`` naming the value that is not a network."""
    out: List[Network] = []
    for c in cidrs:
        try:
            out.append(ipaddress.ip_network(c.strip(), strict=False))
        except ValueError:
            raise ValueError(f"{c!r} is not an IP network (10.0.0.0/8, fd00::/8, 127.0.0.1)") from None
    return tuple(out)


def refusal(ip: str, allowed: Sequence[Network] = ()) -> Optional[Refusal]:
    """None when ``ip`` (a resolved address, as given to ``connect``) may be connected to; else why not.

    A string that is no IP address is refused (``kind`` ``non-global``): the caller passes what
    it resolved, never a name."""
    try:
        addr = ipaddress.ip_address(ip)
    except ValueError:
        return Refusal(ip, "non-global")
    if _admitted(addr, allowed):
        return None
    inner = _carried(addr)
    if not inner:
        kind = _kind(addr)
        return Refusal(ip, kind) if kind else None
    for v4 in inner:
        kind = None if _admitted(v4, allowed) else _kind(v4)
        if kind:
            return Refusal(ip, kind, str(v4))
    return None


def _admitted(addr: Address, allowed: Sequence[Network]) -> bool:
    return any(addr.version == n.version and addr in n for n in allowed)


def _carried(addr: Address) -> List[ipaddress.IPv4Address]:
    """The IPv4 addresses an IPv6 address carries (Teredo: the server's and the client's)."""
    if not isinstance(addr, ipaddress.IPv6Address):
        return []
    if addr.ipv4_mapped is not None:
        return [addr.ipv4_mapped]
    if addr.sixtofour is not None:
        return [addr.sixtofour]
    if addr.teredo is not None:
        return list(addr.teredo)
    if addr in NAT64:
        return [ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)]
    return []


def _kind(addr: Address) -> Optional[str]:
    """The class that keeps ``addr`` off limits, None for a globally reachable unicast address.
    The named classes come first so that the reason is the specific one (loopback is also private)."""
    if addr.is_unspecified:
        return "unspecified"
    if addr.is_loopback:
        return "loopback"
    if addr.is_link_local:
        return "link-local"
    if addr.is_multicast:
        return "multicast"
    if isinstance(addr, ipaddress.IPv4Address) and addr in SHARED:
        return "shared"
    if isinstance(addr, ipaddress.IPv6Address) and addr.is_site_local:
        return "site-local"
    if addr.is_reserved:
        return "reserved"
    if addr.is_private:
        return "private"
    if not addr.is_global:
        return "non-global"
    return None
