"""robots.txt as RFC 9309 defines it: parsing and matching.

The parser and matcher are pure functions over bytes (``parse``, ``RobotsTxt``).
What a crawler needs around them lives beside: ``robots_cache`` (one entry per
authority, the outcome of fetching ``/robots.txt``, a lifetime, the fetch
protocol) and ``robots_meta`` (``<meta name="robots">`` and ``X-Robots-Tag``).

Where the RFC leaves a choice, this module chooses (docs/api.md, "robots"):

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

import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union
from urllib.parse import urlsplit

from ..errors import UrlError

__all__ = ["RobotsTxt", "Rule", "Group", "Ruleset", "Decision", "parse", "is_allowed", "product_token",
           "normalize_path", "url_path", "robots_url", "header_value", "POLICIES", "MAX_BYTES", "TOKEN"]

MAX_BYTES = 500 * 1024          # RFC 9309 2.5: the parsing limit must be at least 500 KiB

#: robots policies, as Heritrix names them: obey robots.txt and meta robots; robots.txt only; ignore both.
POLICIES = ("obey", "robotsTxtOnly", "ignore")

#: HTTP response headers, as a mapping or as (name, value) pairs.
Headers = Union[Mapping[str, str], Sequence[Tuple[str, str]]]

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


#: What a product token holds (RFC 9309 2.2.1): letters, "_" and "-".
TOKEN = re.compile(r"[A-Za-z_-]*")


def product_token(agent: str) -> str:
    """The product token of a user-agent string ("ExampleBot/2.1 (+http://...)" -> "examplebot").

    RFC 9309 2.2.1: a product token holds only letters, "_" and "-"; matching is case-insensitive,
    so tokens are compared lower-cased. A user-agent line in a robots.txt is read the same way.
    """
    m = TOKEN.match(agent.strip())
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


def header_value(headers: Headers, name: str) -> Optional[str]:
    """The first value of the header `name` (lower-case) in `headers`, or None."""
    items = headers.items() if isinstance(headers, Mapping) else headers
    for k, v in items:
        if k.lower() == name:
            return v
    return None
