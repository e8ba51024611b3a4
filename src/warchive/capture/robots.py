"""robots.txt as RFC 9309 defines it: parsing, matching, the fetch outcomes, and a cache.

The parser and matcher are pure functions over bytes (``parse``, ``RobotsTxt``);
``RobotsCache`` adds what a crawler needs around them: one entry per authority,
the outcome of fetching ``/robots.txt`` (found, unavailable, unreachable),
redirects followed up to five hops, a lifetime of at most 24 hours, and an
injectable clock. The cache never opens a socket: the crawler hands it a fetch
callable ``fetch(url) -> (status, headers, body, final_url)`` (or an ``async``
one), so the fetcher of ``warchive.capture.fetch`` plugs in unchanged and the
robots.txt exchange is archived like any other.

Where the RFC leaves a choice, this module chooses (docs/api.md, "robots"):

* 4xx except 429 -> "unavailable": everything allowed (RFC 9309 2.3.1.3).
  429 is treated like 5xx, "unreachable": everything disallowed, retried
  soon. Google documents the same; Heritrix 3 allows everything after any
  non-2xx response, which the RFC forbids for 5xx.
* More than five redirects -> unavailable (2.3.1.2 allows it).
* An unreachable robots.txt keeps a previous good copy in force (2.4 allows it
  past 24 h) for up to ``stale_limit`` (30 days); without one, everything is
  disallowed until a retry succeeds.
* Only the first 500 KiB are parsed (2.5); a line cut by the limit is dropped.
* Percent-encoding: both the rule and the URL path are brought to one form
  before comparison: non-ASCII, controls and spaces are %-encoded, %XX of an
  unreserved character is decoded, other %XX keep their (upper-case) escape, and
  a literal ``*`` or ``$`` in the URL compares as ``%2A`` / ``%24`` (2.2.2,
  2.2.3). Literal reserved characters (``/ ? : =``...) are left as they are:
  a crawler cannot tell a delimiter from data, and Google's parser does the same.

This module must not fetch, write WARCs or decide scope.
"""

from __future__ import annotations

import asyncio
import re
import time
from dataclasses import dataclass, field
from typing import (Awaitable, Callable, Dict, Generator, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Type,
                    Tuple, Union)
from urllib.parse import urljoin, urlsplit

from ..errors import ArchiveError, UrlError

__all__ = ["RobotsTxt", "Rule", "Group", "Ruleset", "Decision", "RobotsCache", "RobotsEntry", "Directives", "parse",
           "is_allowed", "product_token", "normalize_path", "url_path", "robots_url", "meta_robots",
           "x_robots_tag", "page_directives", "FOUND", "UNAVAILABLE", "UNREACHABLE", "POLICIES",
           "MAX_BYTES", "MAX_REDIRECTS", "MAX_AGE"]

MAX_BYTES = 500 * 1024          # RFC 9309 2.5: the parsing limit must be at least 500 KiB
MAX_REDIRECTS = 5               # 2.3.1.2: follow at least five consecutive redirects
MAX_AGE = 24 * 3600.0           # 2.4: a cached copy should not be used for more than 24 hours
RETRY_UNREACHABLE = 600.0       # how soon an unreachable robots.txt is asked for again
STALE_LIMIT = 30 * 86400.0      # 2.3.1.4: "a reasonably long period of time (for example, 30 days)"

FOUND = "found"                 # 2xx: the rules apply
UNAVAILABLE = "unavailable"     # 4xx (not 429), too many redirects: everything allowed
UNREACHABLE = "unreachable"     # 5xx, 429, network error: everything disallowed

#: robots policies, as Heritrix names them: obey robots.txt and meta robots; robots.txt only; ignore both.
POLICIES = ("obey", "robotsTxtOnly", "ignore")

Headers = Union[Mapping[str, str], Sequence[Tuple[str, str]]]
#: What a fetch callable returns: HTTP status (0 when nothing came back), response headers,
#: body (at least the first MAX_BYTES; the rest may be cut), and the URL finally fetched.
FetchResult = Tuple[int, Headers, bytes, str]
Fetch = Callable[[str], FetchResult]
AsyncFetch = Callable[[str], Awaitable[FetchResult]]

# --------------------------------------------------------------------------------------------
# Percent-encoding normalisation (RFC 9309 2.2.2, 2.2.3)

_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_HEX = frozenset(b"0123456789abcdefABCDEF")
# Bytes that never need work: printable ASCII except % * $ (and space, which is < 0x21).
_PLAIN = re.compile(rb"[\x21-\x7e]*\Z")
_NEEDS_WORK = frozenset(b"%*$")


def normalize_path(path: Union[str, bytes], *, pattern: bool = False) -> str:
    """The form in which a URL path (``pattern=False``) or a rule path (``pattern=True``) is compared.

    Non-ASCII octets, controls and spaces are percent-encoded (upper-case hex); ``%XX`` of an
    unreserved character is decoded, any other ``%XX`` keeps its escape in upper case; a ``%``
    not followed by two hex digits becomes ``%25``. In a URL a literal ``*`` and ``$`` become
    ``%2A`` and ``%24``; in a rule they stay wildcards (``$`` only at the end, elsewhere it is
    the literal ``%24``).
    """
    b = path.encode("utf-8", "surrogateescape") if isinstance(path, str) else bytes(path)
    if _PLAIN.match(b) and not _NEEDS_WORK.intersection(b):
        return b.decode("ascii")
    out = bytearray()
    n = len(b)
    i = 0
    while i < n:
        c = b[i]
        if c == 0x25:  # %
            if i + 2 < n and b[i + 1] in _HEX and b[i + 2] in _HEX:
                v = int(b[i + 1:i + 3], 16)
                if v in _UNRESERVED:
                    out.append(v)
                else:
                    out += b"%%%02X" % v
                i += 3
                continue
            out += b"%25"
        elif c == 0x2A and not pattern:  # *
            out += b"%2A"
        elif c == 0x24 and not (pattern and i == n - 1):  # $ (a rule's final $ is the end anchor)
            out += b"%24"
        elif c <= 0x20 or c >= 0x7F:
            out += b"%%%02X" % c
        else:
            out.append(c)
        i += 1
    return out.decode("ascii")


def url_path(url: Union[str, bytes]) -> str:
    """The part of ``url`` that rules are matched against: path, params and query, no fragment.

    An absolute URL loses its scheme and authority; an empty path is ``/``. The result is not yet
    normalised (``normalize_path`` does that).
    """
    s = url.decode("utf-8", "surrogateescape") if isinstance(url, bytes) else url
    s = s.split("#", 1)[0]
    if not s.startswith("/"):
        i = s.find("://")
        if i >= 0:
            j = len(s)
            for sep in "/?":
                k = s.find(sep, i + 3)
                if 0 <= k < j:
                    j = k
            s = s[j:]
        if not s.startswith("/"):
            s = "/" + s
    return s


def robots_url(url: str) -> str:
    """``scheme://authority/robots.txt`` of ``url`` (RFC 9309 2.3), without user info, lower-cased host."""
    u = urlsplit(url)
    if not u.scheme or not u.hostname:
        raise UrlError(f"{url!r}: not an absolute URL with a host (robots.txt needs scheme://host/)")
    host = u.hostname
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    port = f":{u.port}" if u.port is not None else ""
    return f"{u.scheme.lower()}://{host}{port}/robots.txt"


_TOKEN = re.compile(r"[A-Za-z_-]*")


def product_token(agent: str) -> str:
    """The product token of a user-agent string ("ExampleBot/2.1 (+http://...)" -> "examplebot").

    RFC 9309 2.2.1: a product token holds only letters, "_" and "-"; matching is case-insensitive,
    so tokens are compared lower-cased. A user-agent line in a robots.txt is read the same way.
    """
    m = _TOKEN.match(agent.strip())
    return m.group(0).lower() if m else ""


# --------------------------------------------------------------------------------------------
# Rules and groups


class Rule:
    """One ``allow`` or ``disallow`` line: its pattern (normalised) and how to match it."""

    __slots__ = ("pattern", "allow", "length", "_pieces", "_anchored", "line")

    def __init__(self, pattern: str, allow: bool, line: int = 0) -> None:
        self.pattern = pattern
        self.allow = allow
        self.line = line
        # 2.2.2: "the most specific match is the match that has the most octets" of the rule.
        self.length = len(pattern)
        self._anchored = pattern.endswith("$")
        body = pattern[:-1] if self._anchored else pattern
        self._pieces: Optional[List[str]] = body.split("*") if "*" in body else None

    def matches(self, path: str) -> bool:
        """Does this rule match the normalised ``path``? Anchored at the path's first octet."""
        pieces = self._pieces
        if pieces is None:
            if self._anchored:
                return path == self.pattern[:-1]
            return path.startswith(self.pattern)
        first = pieces[0]
        if not path.startswith(first):
            return False
        pos = len(first)
        last = len(pieces) - 1
        for k in range(1, last):
            piece = pieces[k]
            j = path.find(piece, pos)
            if j < 0:
                return False
            pos = j + len(piece)
        tail = pieces[last]
        if self._anchored:  # the last piece must end the path, after what matched so far
            return path.endswith(tail) and len(path) - len(tail) >= pos
        return path.find(tail, pos) >= 0

    def __repr__(self) -> str:
        return f"Rule({'allow' if self.allow else 'disallow'}: {self.pattern!r})"


@dataclass
class Group:
    """A group (RFC 9309 2.1): its user-agent product tokens, rules in file order, Crawl-delay."""

    agents: List[str] = field(default_factory=list)
    rules: List[Rule] = field(default_factory=list)
    crawl_delay: Optional[float] = None


class Decision(NamedTuple):
    allowed: bool
    rule: Optional[Rule]   # the rule that decided, None when no rule matched
    reason: str


class Ruleset:
    """The rules that apply to one product token: the matching groups merged (RFC 9309 2.2.1)."""

    __slots__ = ("rules", "crawl_delay", "agent", "matched")

    def __init__(self, rules: Iterable[Rule], crawl_delay: Optional[float], agent: str, matched: str) -> None:
        # Longest first; at equal length allow first (2.2.2: allow wins a tie): the first match decides.
        self.rules = sorted(rules, key=lambda r: (-r.length, not r.allow))
        self.crawl_delay = crawl_delay
        self.agent = agent
        self.matched = matched   # "agent", "*" or "none": which groups were used

    def decide(self, url: Union[str, bytes]) -> Decision:
        path = normalize_path(url_path(url))
        if path == "/robots.txt":
            return Decision(True, None, "robots.txt is implicitly allowed")
        for rule in self.rules:
            if rule.matches(path):
                kind = "allow" if rule.allow else "disallow"
                return Decision(rule.allow, rule, f"{kind}: {rule.pattern} (line {rule.line})")
        return Decision(True, None, "no rule matched")

    def allowed(self, url: Union[str, bytes]) -> bool:
        return self.decide(url).allowed


_KEYS = {
    "user-agent": "user-agent", "useragent": "user-agent", "user agent": "user-agent",
    "allow": "allow",
    "disallow": "disallow", "dissallow": "disallow", "dissalow": "disallow", "disalow": "disallow",
    "diasllow": "disallow", "disallaw": "disallow",
    "crawl-delay": "crawl-delay", "crawldelay": "crawl-delay", "crawl delay": "crawl-delay",
    "sitemap": "sitemap", "site-map": "sitemap",
}
_LINES = re.compile(rb"\r\n|\r|\n")


class RobotsTxt:
    """A parsed robots.txt: its groups and the rules that apply to a given product token.

    ``RobotsTxt.parse(body)`` reads the bytes; ``allow_all()`` and ``disallow_all()`` stand for the
    outcomes of a failed fetch (RFC 9309 2.3.1.3, 2.3.1.4).
    """

    def __init__(self, groups: Sequence[Group] = (), *, sitemaps: Sequence[str] = (), truncated: bool = False,
                 disallow_everything: bool = False, size: int = 0) -> None:
        self.groups = list(groups)
        self.sitemaps = list(sitemaps)
        self.truncated = truncated
        self.disallow_everything = disallow_everything
        self.size = size
        self._sets: Dict[str, Ruleset] = {}

    @classmethod
    def allow_all(cls) -> "RobotsTxt":
        return cls()

    @classmethod
    def disallow_all(cls) -> "RobotsTxt":
        return cls(disallow_everything=True)

    @classmethod
    def parse(cls, data: Union[bytes, str], *, max_bytes: int = MAX_BYTES) -> "RobotsTxt":
        """Parse robots.txt bytes (UTF-8; other bytes are kept as %-escapes). Never raises on content."""
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        size = len(data)
        truncated = size > max_bytes
        if truncated:
            data = data[:max_bytes]
            cut = max(data.rfind(b"\n"), data.rfind(b"\r"))
            data = data[:cut + 1] if cut >= 0 else b""  # a line cut by the limit would change its meaning
        if data.startswith(b"\xef\xbb\xbf"):
            data = data[3:]
        groups: List[Group] = []
        sitemaps: List[str] = []
        current: Optional[Group] = None
        in_agents = False   # True while reading the user-agent lines that start a group
        for lineno, raw in enumerate(_LINES.split(data), 1):
            line = raw.split(b"#", 1)[0].strip()
            if not line:
                continue  # blank lines and comments never end a group (2.2, the grammar)
            key, value = _split_line(line)
            if key is None:
                continue  # 2.3.1.5: lines that cannot be parsed are skipped, the rest still count
            if key == "user-agent":
                if not in_agents:
                    current = Group()
                    groups.append(current)
                    in_agents = True
                star = value == "*" or (value.startswith("*") and value[1:2].isspace())
                token = "*" if star else product_token(value)
                if token and current is not None:
                    current.agents.append(token)
                continue
            if key in ("allow", "disallow"):
                in_agents = False
                if current is None:
                    continue  # 2.2.2: rules outside any group are ignored
                if not value:
                    continue  # an empty pattern matches nothing
                current.rules.append(Rule(normalize_path(value, pattern=True), key == "allow", lineno))
            elif key == "crawl-delay":
                # Not RFC 9309 (2.2.4: "other records"); it must not end the group's user-agent lines.
                if current is not None:
                    try:
                        d = float(value)
                    except ValueError:
                        continue
                    if d >= 0 and d == d and d != float("inf"):
                        current.crawl_delay = d if current.crawl_delay is None else max(current.crawl_delay, d)
            elif key == "sitemap":
                sitemaps.append(value)
        return cls(groups, sitemaps=sitemaps, truncated=truncated, size=size)

    def rules_for(self, agent: str) -> Ruleset:
        """The merged rules for ``agent`` (a product token or a full user-agent string), cached.

        Every group naming the token is merged (2.2.1); if none does, every ``*`` group is; if
        there is none either, no rules apply.
        """
        token = product_token(agent) if agent != "*" else "*"
        rs = self._sets.get(token)
        if rs is not None:
            return rs
        if self.disallow_everything:
            rs = Ruleset([Rule("/", False)], None, token, "unreachable")
        else:
            groups = [g for g in self.groups if token and token != "*" and token in g.agents]
            matched = "agent"
            if not groups:
                groups = [g for g in self.groups if "*" in g.agents]
                matched = "*" if groups else "none"
            rules = [r for g in groups for r in g.rules]
            delays = [g.crawl_delay for g in groups if g.crawl_delay is not None]
            rs = Ruleset(rules, max(delays) if delays else None, token, matched)
        self._sets[token] = rs
        return rs

    def decide(self, url: Union[str, bytes], agent: str) -> Decision:
        return self.rules_for(agent).decide(url)

    def allowed(self, url: Union[str, bytes], agent: str) -> bool:
        """Is ``url`` (absolute, or a path) allowed for ``agent``?"""
        return self.rules_for(agent).decide(url).allowed

    def crawl_delay(self, agent: str) -> Optional[float]:
        """The ``Crawl-delay`` of the groups that apply to ``agent`` (the largest if several), or None."""
        return self.rules_for(agent).crawl_delay


def _split_line(line: bytes) -> Tuple[Optional[str], str]:
    """``key: value`` -> (canonical key, value); (None, "") for a line that is not a record we read."""
    i = line.find(b":")
    if i < 0:
        # Google accepts "Disallow /x" (a space instead of the colon); only for keys we know.
        parts = line.split(None, 1)
        if len(parts) != 2:
            return None, ""
        k, v = parts
    else:
        k, v = line[:i], line[i + 1:]
    key = _KEYS.get(k.strip().lower().decode("utf-8", "replace"))
    if key is None:
        return None, ""
    return key, v.strip().decode("utf-8", "surrogateescape")


def parse(data: Union[bytes, str], *, max_bytes: int = MAX_BYTES) -> RobotsTxt:
    """``RobotsTxt.parse``."""
    return RobotsTxt.parse(data, max_bytes=max_bytes)


def is_allowed(data: Union[bytes, str], agent: str, url: Union[str, bytes]) -> bool:
    """Is ``url`` allowed for ``agent`` by the robots.txt ``data``? (Parses every call: for one-offs.)"""
    return RobotsTxt.parse(data).allowed(url, agent)


# --------------------------------------------------------------------------------------------
# Fetch outcomes and the cache


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


def _header(headers: Headers, name: str) -> Optional[str]:
    items = headers.items() if isinstance(headers, Mapping) else headers
    for k, v in items:
        if k.lower() == name:
            return v
    return None


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
    With ``policy="ignore"`` nothing is fetched and everything is allowed.
    """

    def __init__(self, agent: str, *, policy: str = "obey", max_age: float = MAX_AGE,
                 retry_unreachable: float = RETRY_UNREACHABLE, stale_limit: float = STALE_LIMIT,
                 max_redirects: int = MAX_REDIRECTS, max_bytes: int = MAX_BYTES,
                 clock: Callable[[], float] = time.time) -> None:
        if policy not in POLICIES:
            raise ValueError(f"robots policy {policy!r}: one of {', '.join(POLICIES)}")
        if max_age > MAX_AGE:
            raise ValueError(f"max_age {max_age} s: RFC 9309 2.4 says at most {MAX_AGE:.0f} s")
        self.agent = agent
        self.token = product_token(agent)
        self.policy = policy
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
        d = e.robots.decide(url, self.agent)
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
                loc = _header(headers, "location")
                if not loc:
                    return self._unreachable(rurl, now, status, chain, f"{status} without Location")
                if hops >= self.max_redirects:
                    return self._store(RobotsEntry(rurl, UNAVAILABLE, RobotsTxt.allow_all(), now,
                                                   now + self.max_age, status, chain,
                                                   f"more than {self.max_redirects} redirects"))
                hops += 1
                url = urljoin(final or url, loc.strip())
                continue
            if 200 <= status < 300:
                rt = RobotsTxt.parse(body, max_bytes=self.max_bytes)
                return self._store(RobotsEntry(rurl, FOUND, rt, now, now + self.max_age, status, chain,
                                               found_at=now))
            if 400 <= status < 500 and status != 429:
                return self._store(RobotsEntry(rurl, UNAVAILABLE, RobotsTxt.allow_all(), now,
                                               now + self.max_age, status, chain, f"HTTP {status}"))
            return self._unreachable(rurl, now, status, chain, f"HTTP {status}")

    def _unreachable(self, rurl: str, now: float, status: int, chain: List[str], why: str) -> RobotsEntry:
        old = self._entries.get(rurl)
        expires = now + self.retry_unreachable
        if old is not None and old.found_at is not None:
            if now - old.found_at <= self.stale_limit:
                return self._store(RobotsEntry(rurl, UNREACHABLE, old.robots, now, expires, status, chain, why,
                                               stale=True, found_at=old.found_at))
        return self._store(RobotsEntry(rurl, UNREACHABLE, RobotsTxt.disallow_all(), now, expires, status, chain,
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


# --------------------------------------------------------------------------------------------
# Page-level directives: <meta name="robots"> and X-Robots-Tag (policy "obey" only)


@dataclass(frozen=True)
class Directives:
    """Page-level robots directives. Heritrix's "obey" honours ``nofollow`` (no links extracted)."""

    noindex: bool = False
    nofollow: bool = False
    noarchive: bool = False

    def __or__(self, other: "Directives") -> "Directives":
        return Directives(self.noindex or other.noindex, self.nofollow or other.nofollow,
                          self.noarchive or other.noarchive)


def _directives(values: Iterable[str]) -> Directives:
    noindex = nofollow = noarchive = False
    for v in values:
        for word in v.replace(";", ",").split(","):
            w = word.strip().lower()
            if w == "none":
                noindex = nofollow = True
            elif w == "noindex":
                noindex = True
            elif w == "nofollow":
                nofollow = True
            elif w == "noarchive":
                noarchive = True
    return Directives(noindex, nofollow, noarchive)


_META = re.compile(rb"<meta\b[^>]*>", re.I)
_ATTR = re.compile(rb"""([a-zA-Z-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
_HEAD_BYTES = 256 * 1024


def meta_robots(html: bytes, agent: str = "") -> Directives:
    """Directives of ``<meta name="robots">`` and ``<meta name="TOKEN">`` (the agent's token) in ``html``.

    Only the first 256 KiB are searched; names and values are case-insensitive.
    """
    token = product_token(agent) if agent else ""
    values = []
    for m in _META.finditer(html[:_HEAD_BYTES]):
        attrs = {}
        for a in _ATTR.finditer(m.group(0)):
            attrs[a.group(1).lower()] = (a.group(2) or a.group(3) or a.group(4) or b"")
        name = attrs.get(b"name", b"").strip().lower().decode("latin-1")
        if name == "robots" or (token and name == token):
            values.append(attrs.get(b"content", b"").decode("latin-1"))
    return _directives(values)


_XRT_NOT_AGENT = frozenset(["unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"])


def x_robots_tag(headers: Headers, agent: str = "") -> Directives:
    """Directives of the ``X-Robots-Tag`` headers that apply to ``agent``.

    A value may start with a user-agent (``"otherbot: noindex"``); it then applies to that agent only.
    """
    token = product_token(agent) if agent else ""
    items = headers.items() if isinstance(headers, Mapping) else headers
    values = []
    for k, v in items:
        if k.lower() != "x-robots-tag":
            continue
        head, sep, rest = v.partition(":")
        who = head.strip().lower()
        if sep and _TOKEN.fullmatch(who) and who not in _XRT_NOT_AGENT:
            if who == token:
                values.append(rest)
        else:
            values.append(v)
    return _directives(values)


def page_directives(policy: str, headers: Headers, body: bytes, agent: str = "",
                    content_type: str = "") -> Directives:
    """The page-level directives a crawler with ``policy`` must honour: none unless ``obey``."""
    if policy != "obey":
        return Directives()
    d = x_robots_tag(headers, agent)
    ctype = content_type or (_header(headers, "content-type") or "")
    if "html" in ctype.lower():
        d = d | meta_robots(body, agent)
    return d
