"""robots.txt parsing and matching, read the way Google's parser reads it or strictly by RFC 9309.

The parser and matcher are pure functions over bytes (``parse``, ``RobotsTxt``).
What a crawler needs around them lives beside: ``robots_cache`` (one entry per
authority, the outcome of fetching ``/robots.txt``, a lifetime, the fetch
protocol) and ``robots_meta`` (``<meta name="robots">`` and ``X-Robots-Tag``).

Two readings (``mode``), differing only as listed here (docs/api.md, "robots.txt", has a table):

* ``"google"`` (the default): as Google's open-source parser (google/robotstxt,
  robots.cc, by the RFC's authors) reads a file, since sites tune their
  robots.txt against it. A rule's non-ASCII octets are %-encoded and its
  ``%xx`` upper-cased, nothing else; the URL path is compared as given (a
  crawler gives it as it will be requested: ``request_path``); an ``Allow``
  of ``.../index.htm*`` also allows its directory; keys are matched by prefix,
  with Google's common typos; a line without a colon counts if it is two words;
  a user-agent line names the leading run of its token characters; lines are
  cut at 16,663 bytes; a partial UTF-8 byte order mark is skipped too.
* ``"rfc"``: RFC 9309's grammar and sentences. Both the rule and the URL path
  are brought to one form: non-ASCII, controls and spaces %-encoded, ``%XX`` of
  an unreserved character decoded, other ``%XX`` kept (upper-case), a literal
  ``*``/``$`` in the URL compared as ``%2A``/``%24`` (2.2.2, 2.2.3). Literal
  reserved characters (``/ ? : =``...) stay as they are: a crawler cannot tell
  a delimiter from data. Only the keys of the grammar, spelled right, with a
  colon; a user-agent line whose value is not a product token starts a group
  that names no crawler.

In both: only the first 500 KiB are parsed (2.5; a line cut by the limit is
dropped), ``/robots.txt`` itself is always allowed (2.2.2), longest match wins
and ``Allow`` wins a tie.

This module must not fetch, write WARCs or decide scope.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Mapping, NamedTuple, Optional, Sequence, Tuple, Union
from urllib.parse import quote, urlsplit

from ..errors import UrlError

__all__ = ["RobotsTxt", "Rule", "Group", "Ruleset", "Decision", "parse", "is_allowed", "product_token",
           "normalize_path", "google_pattern", "url_path", "request_path", "robots_url", "header_value",
           "POLICIES", "MODES", "GOOGLE", "RFC", "MAX_BYTES", "GOOGLE_LINE_BYTES", "TOKEN"]

MAX_BYTES = 500 * 1024          # RFC 9309 2.5: the parsing limit must be at least 500 KiB

#: The two readings: Google's parser (the default) and RFC 9309 read strictly.
GOOGLE = "google"
RFC = "rfc"
MODES = (GOOGLE, RFC)

#: Bytes of one line Google's parser keeps (a buffer of 8 x 2083, the longest URL a browser took, less
#: the terminating NUL); the rest of a longer line is ignored (robots.cc, RobotsTxtParser::Parse).
GOOGLE_LINE_BYTES = 2083 * 8 - 1

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


_GOOGLE_ESCAPES = re.compile(rb"%[0-9A-Fa-f]{2}|[\x80-\xff]")


def _google_escape(m: "re.Match[bytes]") -> bytes:
    t = m.group(0)
    return t.upper() if len(t) == 3 else b"%%%02X" % t[0]


def google_pattern(value: Union[str, bytes]) -> str:
    """A rule path as Google's parser keeps it: octets above 0x7F %-encoded, the hex of ``%xx`` upper-cased.

    Nothing else changes: ``%62`` stays ``%62`` (not ``b``), a space, ``*`` or ``$`` stays itself, a
    stray ``%`` stays ``%``.
    """
    b = value.encode("utf-8", "surrogateescape") if isinstance(value, str) else bytes(value)
    if _PLAIN.match(b) and b"%" not in b:
        return b.decode("ascii")
    return _GOOGLE_ESCAPES.sub(_google_escape, b).decode("ascii")


_NOT_URL_CHARS = re.compile(r"[^\x21-\x7e]+")


def request_path(url: Union[str, bytes]) -> str:
    """``url_path(url)`` as a crawler requests it: every run of octets outside ``!``..``~`` %-encoded (UTF-8).

    This is how ``warchive.capture.fetch`` writes the request target, so a rule is matched against
    the path actually sent. Google's parser asks its caller for the URL in this escaped form.
    """
    p = url_path(url)
    return _NOT_URL_CHARS.sub(lambda m: quote(m.group(0), safe="", errors="surrogateescape"), p)


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
    so tokens are compared lower-cased. This is the crawler's side, in both modes (HTTP's
    User-Agent is products and comments, the first product names the crawler); a user-agent line
    in a robots.txt is read this way by Google's parser (``mode="google"``).
    """
    m = TOKEN.match(agent.strip())
    return m.group(0).lower() if m else ""


# --------------------------------------------------------------------------------------------
# Rules and groups


class Rule:
    """One ``allow`` or ``disallow`` line: its pattern (normalised) and how to match it."""

    __slots__ = ("pattern", "allow", "length", "_pieces", "_anchored", "line", "origin")

    def __init__(self, pattern: str, allow: bool, line: int = 0, origin: str = "") -> None:
        self.pattern = pattern
        self.allow = allow
        self.line = line
        self.origin = origin   # the written pattern when this rule is derived from it (Google's index.html)
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

    __slots__ = ("rules", "crawl_delay", "agent", "matched", "mode")

    def __init__(self, rules: Iterable[Rule], crawl_delay: Optional[float], agent: str, matched: str,
                 mode: str = GOOGLE) -> None:
        # Longest first; at equal length allow first (2.2.2: allow wins a tie): the first match decides.
        self.rules = sorted(rules, key=lambda r: (-r.length, not r.allow))
        self.crawl_delay = crawl_delay
        self.agent = agent
        self.matched = matched   # "agent", "*" or "none": which groups were used
        self.mode = mode

    def decide(self, url: Union[str, bytes]) -> Decision:
        """The decision for ``url`` (absolute, or a path). In Google's reading the path is compared as
        given, so give it %-encoded as it will be requested (``request_path``)."""
        path = url_path(url)
        if self.mode == RFC:
            path = normalize_path(path)
        if path == "/robots.txt":
            return Decision(True, None, "robots.txt is implicitly allowed")
        for rule in self.rules:
            if rule.matches(path):
                kind = "allow" if rule.allow else "disallow"
                via = f", from {rule.origin}" if rule.origin else ""
                return Decision(rule.allow, rule, f"{kind}: {rule.pattern} (line {rule.line}{via})")
        return Decision(True, None, "no rule matched")

    def allowed(self, url: Union[str, bytes]) -> bool:
        return self.decide(url).allowed


# Keys as RFC 9309's grammar spells them (case-insensitive), plus the two other records read here.
_RFC_KEYS = {"user-agent": "user-agent", "allow": "allow", "disallow": "disallow",
             "sitemap": "sitemap", "crawl-delay": "crawl-delay"}
# Google's parser takes a key that *starts with* one of these (so "Disallowed" is "disallow"),
# tried in this order; the misspellings are the ones it accepts (robots.cc, ParsedRobotsKey).
_GOOGLE_KEYS = (
    (b"user-agent", "user-agent"), (b"useragent", "user-agent"), (b"user agent", "user-agent"),
    (b"allow", "allow"),
    (b"disallow", "disallow"), (b"dissallow", "disallow"), (b"dissalow", "disallow"), (b"disalow", "disallow"),
    (b"diasllow", "disallow"), (b"disallaw", "disallow"),
    (b"sitemap", "sitemap"), (b"site-map", "sitemap"),
)
# Crawl-delay is not Google's (it ignores the record); read in both modes, these spellings exactly.
_DELAY_KEYS = frozenset((b"crawl-delay", b"crawldelay", b"crawl delay"))
_LINES = re.compile(rb"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"
_IDENTIFIER = re.compile(rb"[A-Za-z_-]+\Z")   # RFC 9309 2.2.1: identifier = 1*(%x2D / %x41-5A / %x5F / %x61-7A)
_GOOGLE_TOKEN = re.compile(rb"[A-Za-z_-]*")
_INDEX_HTM = "/index.htm"


class RobotsTxt:
    """A parsed robots.txt: its groups and the rules that apply to a given product token.

    ``RobotsTxt.parse(body, mode="google")`` reads the bytes (``mode="rfc"``: RFC 9309 strictly);
    ``allow_all()`` and ``disallow_all()`` stand for the outcomes of a failed fetch (RFC 9309
    2.3.1.3, 2.3.1.4).
    """

    def __init__(self, groups: Sequence[Group] = (), *, sitemaps: Sequence[str] = (), truncated: bool = False,
                 disallow_everything: bool = False, size: int = 0, mode: str = GOOGLE) -> None:
        if mode not in MODES:
            raise ValueError(f"robots.txt mode {mode!r}: one of {', '.join(MODES)}")
        self.groups = list(groups)
        self.sitemaps = list(sitemaps)
        self.truncated = truncated
        self.disallow_everything = disallow_everything
        self.size = size
        self.mode = mode
        self._sets: Dict[str, Ruleset] = {}

    @classmethod
    def allow_all(cls, mode: str = GOOGLE) -> "RobotsTxt":
        return cls(mode=mode)

    @classmethod
    def disallow_all(cls, mode: str = GOOGLE) -> "RobotsTxt":
        return cls(disallow_everything=True, mode=mode)

    @classmethod
    def parse(cls, data: Union[bytes, str], *, max_bytes: int = MAX_BYTES, mode: str = GOOGLE) -> "RobotsTxt":
        """Parse robots.txt bytes (UTF-8; other bytes are kept as %-escapes). Never raises on content."""
        if mode not in MODES:
            raise ValueError(f"robots.txt mode {mode!r}: one of {', '.join(MODES)}")
        google = mode == GOOGLE
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        size = len(data)
        truncated = size > max_bytes
        if truncated:
            data = data[:max_bytes]
            cut = max(data.rfind(b"\n"), data.rfind(b"\r"))
            data = data[:cut + 1] if cut >= 0 else b""  # a line cut by the limit would change its meaning
        if data.startswith(_BOM):
            data = data[3:]
        elif google and data[:1] == _BOM[:1]:
            # Google skips as much of a byte order mark as the file starts with ("\xef", "\xef\xbb").
            data = data[2:] if data[:2] == _BOM[:2] else data[1:]
        groups: List[Group] = []
        sitemaps: List[str] = []
        current: Optional[Group] = None
        in_agents = False   # True while reading the user-agent lines that start a group
        for lineno, raw in enumerate(_LINES.split(data), 1):
            if google and len(raw) > GOOGLE_LINE_BYTES:
                raw = raw[:GOOGLE_LINE_BYTES]   # Google keeps a long line's head and reads it as usual
            line = raw.split(b"#", 1)[0].strip()
            if not line:
                continue  # blank lines and comments never end a group (2.2, the grammar)
            key, value = _split_line(line, google)
            if key is None:
                continue  # 2.3.1.5: lines that cannot be parsed are skipped, the rest still count
            if key == "user-agent":
                if not in_agents:
                    current = Group()
                    groups.append(current)
                    in_agents = True
                token = _agent_line_token(value, google)
                if token and current is not None:
                    current.agents.append(token)
                continue
            if key in ("allow", "disallow"):
                in_agents = False
                if current is None:
                    continue  # 2.2.2: rules outside any group are ignored
                if not value:
                    continue  # an empty pattern matches nothing
                allow = key == "allow"
                pattern = google_pattern(value) if google else normalize_path(value, pattern=True)
                current.rules.append(Rule(pattern, allow, lineno))
                if google and allow:
                    # Google: allowing ".../index.htm..." allows the directory itself, ".../" exactly
                    # (robots.cc, RobotsMatcher::HandleAllow).
                    slash = pattern.rfind("/")
                    if slash >= 0 and pattern.startswith(_INDEX_HTM, slash):
                        current.rules.append(Rule(pattern[:slash + 1] + "$", True, lineno, origin=pattern))
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
                sitemaps.append(value.decode("utf-8", "surrogateescape"))
        return cls(groups, sitemaps=sitemaps, truncated=truncated, size=size, mode=mode)

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
            rs = Ruleset([Rule("/", False)], None, token, "unreachable", self.mode)
        else:
            groups = [g for g in self.groups if token and token != "*" and token in g.agents]
            matched = "agent"
            if not groups:
                groups = [g for g in self.groups if "*" in g.agents]
                matched = "*" if groups else "none"
            rules = [r for g in groups for r in g.rules]
            delays = [g.crawl_delay for g in groups if g.crawl_delay is not None]
            rs = Ruleset(rules, max(delays) if delays else None, token, matched, self.mode)
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


def _split_line(line: bytes, google: bool) -> Tuple[Optional[str], bytes]:
    """A stripped, comment-free line -> (canonical key, value); (None, b"") for a line not read."""
    i = line.find(b":")
    if i >= 0:
        k, v = line[:i].strip(), line[i + 1:].strip()
    elif google:
        # Google accepts whitespace for the colon when the line is exactly two words ("Disallow /x").
        parts = line.split()
        if len(parts) != 2:
            return None, b""
        k, v = parts
    else:
        return None, b""   # RFC 9309 2.2: every record has its ":"
    k = k.lower()
    if k in _DELAY_KEYS:
        return "crawl-delay", v
    if google:
        for prefix, key in _GOOGLE_KEYS:
            if k.startswith(prefix):
                return key, v
        return None, b""
    return _RFC_KEYS.get(k.decode("latin-1")), v


def _agent_line_token(value: bytes, google: bool) -> str:
    """What a user-agent line names: "*", a lower-cased product token, or "" (no crawler)."""
    if google:
        # "*" alone or followed by a space is "*"; otherwise the leading run of token characters
        # ("Foo Bar" and "foo/1.2" name "foo"; robots.cc, RobotsMatcher::HandleUserAgent).
        if value[:1] == b"*" and (len(value) == 1 or value[1:2].isspace()):
            return "*"
        m = _GOOGLE_TOKEN.match(value)
        return m.group(0).decode("ascii").lower() if m else ""
    # RFC 9309 2.2.1: the value is "*" or a product token; anything else names no crawler, but the
    # line is still a user-agent line (dropping it would hand its rules to the group before).
    if value == b"*":
        return "*"
    return value.decode("ascii").lower() if _IDENTIFIER.match(value) else ""


def parse(data: Union[bytes, str], *, max_bytes: int = MAX_BYTES, mode: str = GOOGLE) -> RobotsTxt:
    """``RobotsTxt.parse``."""
    return RobotsTxt.parse(data, max_bytes=max_bytes, mode=mode)


def is_allowed(data: Union[bytes, str], agent: str, url: Union[str, bytes], *, mode: str = GOOGLE) -> bool:
    """Is ``url`` allowed for ``agent`` by the robots.txt ``data``? (Parses every call: for one-offs.)"""
    return RobotsTxt.parse(data, mode=mode).allowed(url, agent)


def header_value(headers: Headers, name: str) -> Optional[str]:
    """The first value of the header `name` (lower-case) in `headers`, or None."""
    items = headers.items() if isinstance(headers, Mapping) else headers
    for k, v in items:
        if k.lower() == name:
            return v
    return None
