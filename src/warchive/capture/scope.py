"""Crawl scope: is a discovered URL one the crawl should fetch, and why (or why not).

Every rule works on one canonical form, the SURT key of ``warchive.surt.surt`` (the
same key the seen set and the capture index use), so "in scope", "already seen"
and "already archived" can never disagree about which URL is meant. Rules, in the
order they are applied (the last that speaks decides, as Heritrix's DecideRules):

1. reject everything;
2. accept a URL under a SURT prefix (each seed is one, by default: the seed's key up
   to the last ``/`` of its path, as Heritrix's ``SurtPrefixedDecideRule``), a listed
   host, a listed domain (and its subdomains), or matching an ``include`` regex;
3. accept a transcluded resource: a hop path ending in ``E`` (embed) with at most
   ``max_trans_hops`` non-``L`` hops at its end (an image of an in-scope page, one
   hop off-scope by default), as Heritrix's ``TransclusionDecideRule``;
4. reject a URL matching an ``exclude`` regex;
5. reject a URL more than ``max_hops`` hops from a seed;
6. accept seeds and prerequisites (hop path ending in ``P``: robots.txt, DNS).

Regexes match the URL as given and its SURT key (either matching is a match).
This module must not fetch, queue or remember URLs.
"""

from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, NamedTuple, Optional, Pattern, Set, Union
from urllib.parse import urlsplit

from ..errors import UrlError
from ..surt import surt

__all__ = ["Scope", "ScopeDecision", "seed_prefix", "surt_key"]

ACCEPT_SEED = "seed"
ACCEPT_PREFIX = "surt-prefix"
ACCEPT_HOST = "host"
ACCEPT_DOMAIN = "domain"
ACCEPT_INCLUDE = "include"
ACCEPT_TRANSCLUSION = "transclusion"
ACCEPT_PREREQUISITE = "prerequisite"
REJECT_DEFAULT = "out-of-scope"
REJECT_EXCLUDE = "exclude"
REJECT_HOPS = "too-many-hops"
REJECT_INVALID = "invalid-url"


class ScopeDecision(NamedTuple):
    """``accepted``; ``reason`` (one of the names above); ``detail`` (the rule that decided, for logs)."""

    accepted: bool
    reason: str
    detail: str = ""

    def __str__(self) -> str:
        return f"{self.reason}:{self.detail}" if self.detail else self.reason


def surt_key(url: str) -> str:
    """The canonical form (``warchive.surt.surt``); raises ``UrlError`` for a URL without one."""
    return surt(url)


def seed_prefix(url: str) -> str:
    """The SURT prefix a seed implies: its key up to the last ``/`` of its path.

    ``http://www.example.com/a/b.html`` -> ``com,example)/a/``; ``http://example.com`` -> ``com,example)/``.
    """
    u = urlsplit(url)
    path = u.path or "/"
    cut = path[:path.rfind("/") + 1]
    base = f"{u.scheme}://{u.netloc}{cut}"
    key = surt(base)
    if cut.endswith("/") and not key.endswith("/"):
        key += "/"   # surt drops a trailing slash; the prefix must keep it ("/a/" is not "/ab")
    return key


def _host_key(host: str) -> str:
    return surt(f"http://{host}/")[:-1]   # "com,example)" (the ")" closes the host)


class Scope:
    """Scope rules for one crawl; ``decide(url, hops)`` answers with a reason.

    ``hops`` is the Heritrix hop path from the seed ("" for a seed, "L" link, "E" embed,
    "R" redirect, "X" speculative, "P" prerequisite). ``max_hops`` counts every hop of the
    path (Heritrix's ``TooManyHopsDecideRule``); ``max_trans_hops`` the non-``L`` hops at
    its end that transclusion allows.
    """

    def __init__(self, seeds: Iterable[str] = (), *, surt_prefixes: Iterable[str] = (),
                 hosts: Iterable[str] = (), domains: Iterable[str] = (),
                 include: Iterable[Union[str, Pattern[str]]] = (), exclude: Iterable[Union[str, Pattern[str]]] = (),
                 max_hops: Optional[int] = 20, max_trans_hops: int = 1, seeds_as_prefixes: bool = True) -> None:
        self.prefixes: List[str] = []
        self.seeds: Set[str] = set()
        self.seeds_as_prefixes = seeds_as_prefixes
        self.hosts: Set[str] = {_host_key(h) for h in hosts}
        self.domains: List[str] = [_host_key(d) for d in domains]
        self.include: List[Pattern[str]] = [re.compile(p) if isinstance(p, str) else p for p in include]
        self.exclude: List[Pattern[str]] = [re.compile(p) if isinstance(p, str) else p for p in exclude]
        self.max_hops = max_hops
        self.max_trans_hops = max_trans_hops
        for p in surt_prefixes:
            self.add_prefix(p)
        for s in seeds:
            self.add_seed(s)

    def add_prefix(self, prefix: str) -> None:
        """A SURT prefix, either as a key (``com,example)/docs/``) or as a URL (its seed prefix)."""
        if "://" in prefix:
            prefix = seed_prefix(prefix)
        if prefix not in self.prefixes:
            self.prefixes.append(prefix)

    def add_seed(self, url: str) -> None:
        self.seeds.add(surt_key(url))
        if self.seeds_as_prefixes:
            self.add_prefix(seed_prefix(url))

    def _in_prefix(self, key: str) -> Optional[str]:
        for p in self.prefixes:
            if key.startswith(p) or (p.endswith("/") and key == p[:-1] and not p.endswith(")/")):
                return p
        return None

    def _accept(self, url: str, key: str) -> Optional[ScopeDecision]:
        p = self._in_prefix(key)
        if p is not None:
            return ScopeDecision(True, ACCEPT_PREFIX, p)
        host = key[:key.find(")") + 1] if ")" in key else ""
        if host and host in self.hosts:
            return ScopeDecision(True, ACCEPT_HOST, host)
        for d in self.domains:
            # "com,example)" covers "com,example)" and "com,example,www)" (and ports: "com,example:8080)")
            stem = d[:-1]
            if host == d or host.startswith(stem + ",") or host.startswith(stem + ":"):
                return ScopeDecision(True, ACCEPT_DOMAIN, d)
        for rx in self.include:
            if rx.search(url) or rx.search(key):
                return ScopeDecision(True, ACCEPT_INCLUDE, rx.pattern)
        return None

    def _transcluded(self, hops: str) -> bool:
        if not hops.endswith("E") or self.max_trans_hops <= 0:
            return False
        n = len(hops) - len(hops.rstrip("ERXP"))   # non-L hops at the end
        return 0 < n <= self.max_trans_hops

    def decide(self, url: str, hops: str = "") -> ScopeDecision:
        """Accept or reject ``url`` reached by the hop path ``hops``, with the reason."""
        try:
            u = urlsplit(url)
            if not u.scheme or not u.hostname:
                return ScopeDecision(False, REJECT_INVALID, "no scheme://host")
            key = surt_key(url)
        except (UrlError, ValueError) as e:
            return ScopeDecision(False, REJECT_INVALID, str(e))
        decision = self._accept(url, key) or ScopeDecision(False, REJECT_DEFAULT, "")
        if not decision.accepted and self._transcluded(hops):
            decision = ScopeDecision(True, ACCEPT_TRANSCLUSION, hops[-self.max_trans_hops:])
        for rx in self.exclude:
            if rx.search(url) or rx.search(key):
                decision = ScopeDecision(False, REJECT_EXCLUDE, rx.pattern)
                break
        if self.max_hops is not None and len(hops) > self.max_hops:
            decision = ScopeDecision(False, REJECT_HOPS, f"{len(hops)}>{self.max_hops}")
        if hops.endswith("P"):
            decision = ScopeDecision(True, ACCEPT_PREREQUISITE, "")
        elif key in self.seeds and not hops:
            decision = ScopeDecision(True, ACCEPT_SEED, "")
        return decision

    def accepts(self, url: str, hops: str = "") -> bool:
        return self.decide(url, hops).accepted

    def describe(self) -> Dict[str, Any]:
        """The rules as plain data (for warcinfo and the session's config entry)."""
        return {"surt_prefixes": list(self.prefixes), "hosts": sorted(self.hosts), "domains": list(self.domains),
                "include": [r.pattern for r in self.include], "exclude": [r.pattern for r in self.exclude],
                "max_hops": self.max_hops, "max_trans_hops": self.max_trans_hops}
