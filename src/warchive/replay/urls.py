"""Archival URLs (``20131010im_/http://example.com/a.png``) and the rewriting of a page's URLs into
them, with pywb 2.10's semantics (its ``WbUrl`` and ``UrlRewriter``), so that a pywb user's links
keep working. docs/replay.md lists where and why we differ from pywb, with the inputs that show it.

An archival URL is what follows the collection in a replay path: ``[timestamp][modifier]/url``
(a memento, or the latest capture without a timestamp), ``[modifier/][from]*[to]/url`` (the
captures of a URL) and ``.../url*`` (of every URL under a prefix). Parsing never fails on odd
input short of an empty string or one that is not text; it normalises the target URL as pywb does
(IDN hosts to punycode, a scheme for scheme-less URLs, ``http:/x`` to ``http://x``).

This module only computes strings: it opens nothing and asks no DNS. An ``ArchivalUrl`` is a URL,
never a path: its ``url`` may hold ``..`` and ``%2e%2e`` (they are part of the URLs archived), its
timestamp holds digits only and its modifier no ``/``. The server must still check the collection
name it took from the request against its collections, and must never make a file name from any
part of an archival URL.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import List, Literal, Optional, Tuple, Union, get_args
from urllib.parse import quote, quote_plus, unquote_plus, urljoin, urlsplit, urlunsplit

from ..errors import ArchivalUrlError

UrlType = Literal["replay", "latest_replay", "query", "url_query"]
URL_TYPES = get_args(UrlType)

# The modifiers pywb gives a meaning to (how a capture is served); the grammar passes any other
# `[a-z]+_` or `$[a-z0-9:.-]+` one through, as pywb does.
MODIFIERS = ("mp_", "id_", "js_", "cs_", "im_", "oe_", "if_", "fr_")

# The grammar. Digits and word characters are ASCII (Python's \d and \w are not).
_QUERY = re.compile(r"(?:(?P<mod>[A-Za-z0-9_:-]+)/)?(?P<ts>[0-9]*)[*-](?P<end>[0-9]*)/?(?P<url>.+)", re.S)
_REPLAY = re.compile(r"(?P<ts>[0-9]*)(?P<mod>[a-z]+_|\$[a-z0-9:.-]+)?/{1,3}(?P<url>.+)", re.S)
_REPLAY_MOD = re.compile(r"[a-z]+_|\$[a-z0-9:.-]+")
_QUERY_MOD = re.compile(r"[A-Za-z0-9_:-]+")
_DIGITS = re.compile(r"[0-9]*")

# Where the path (or query) of a URL starts: a '/' or '?' neither after ':' or '/' nor before '/'
# (the class first, so that the search skips to it).
_PATH_START = re.compile(r"[/?](?<![:/][/?])(?!/)")
# A scheme, then ':/' (the class holds '+', ',', '-' and '.': pywb's range '+-.').
_SCHEME = re.compile(r"[A-Za-z0-9+,.-]+:/")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_TAB_NEWLINE = str.maketrans("", "", "\t\n\r")
_C0_OR_SPACE = "".join(map(chr, range(0x21)))


# --------------------------------------------------------------------------- target URLs

def _pct(m: "re.Match[str]") -> str:
    """%-encode a run of characters as UTF-8; a surrogate escaping a raw byte (\\udc80-\\udcff, as
    ``surrogateescape`` decodes) is that byte, any other lone surrogate U+FFFD."""
    s = m.group()
    try:
        return quote(s, safe="")
    except UnicodeEncodeError:
        raw = bytearray()
        for ch in s:
            o = ord(ch)
            if 0xDC80 <= o <= 0xDCFF:
                raw.append(o - 0xDC00)
            elif 0xD800 <= o <= 0xDFFF:
                raw += b"\xef\xbf\xbd"
            else:
                raw += ch.encode("utf-8")
        return quote(bytes(raw), safe="")


def _split_port(hostport: str) -> Tuple[str, str]:
    colon = hostport.rfind(":")
    return (hostport[:colon], hostport[colon:]) if colon > hostport.rfind("]") else (hostport, "")


def _idna(name: str) -> Optional[str]:
    try:
        return name.encode("idna").decode("ascii")
    except UnicodeError:   # not a host name (too long, empty label, prohibited)
        return None


def _host_to_ascii(domain: str) -> str:
    """An IDN host in punycode (IDNA 2003, Python's codec, as pywb). pywb encodes userinfo, host
    and port as one name, which makes nonsense of userinfo (``xn--user@bcher-feb.de``) and of a
    port after a non-ASCII label (``xn--:8080-...``): there the host alone is encoded, userinfo
    %-encoded and the port NFKC-normalised (as IDNA would); anything else is encoded as pywb does."""
    if domain.isascii():
        return domain
    user, at, hostport = domain.rpartition("@")
    host, port = _split_port(hostport)
    if at or (port and not host.rpartition(".")[2].isascii()):
        ascii_host = _idna(host)
        if ascii_host is not None:
            if not port.isascii():
                port = unicodedata.normalize("NFKC", port)
                port = port if port.isascii() else _NON_ASCII.sub(_pct, port)
            return (user if user.isascii() else _NON_ASCII.sub(_pct, user)) + at + ascii_host + port
    whole = _idna(domain)
    return domain if whole is None else whole


@functools.lru_cache(maxsize=4096)
def _to_uri(url: str) -> str:
    """pywb's ``WbUrl.to_uri``: scheme and host %-decoded ('+' as space) and IDNA-encoded, the
    rest left as it is but for non-ASCII characters, %-encoded as UTF-8. It keeps scheme-relative
    URLs as they are and adds no scheme. Control characters are left to ``_safe``."""
    m = _PATH_START.search(url)
    if m:
        head, sep, rest = url[: m.start()], m.group(), url[m.end() :]
    else:
        head, sep, rest = url, "", ""
    before, slash, domain = unquote_plus(head).rpartition("/")
    return before + slash + _host_to_ascii(domain) + sep + (rest if rest.isascii() else _NON_ASCII.sub(_pct, rest))


def _safe(url: str) -> str:
    """Control characters %-encoded: the last step of every URL this module gives out, so that
    none can split a header or an attribute (pywb leaves them, %0A in a host decoded)."""
    return url if url.isprintable() else _CONTROL.sub(_pct, url)   # (no control is printable)


def _check_text(s: str, what: str) -> None:
    if type(s) is str and s.isascii():   # (the usual case: no lone surrogate in it)
        return
    if not isinstance(s, str):
        raise ArchivalUrlError(f"{what} must be text, not {type(s).__name__}")
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ArchivalUrlError(f"{what} {s!r} holds a lone surrogate at character {e.start}, "
                               "which no URL can carry") from None


def _drop_tab_newline(s: str) -> str:
    """``s`` without tabs and newlines (as browsers read URLs)."""
    return s.translate(_TAB_NEWLINE) if "\t" in s or "\n" in s or "\r" in s else s


def normalize_url(url: str) -> str:
    """The target URL as an archival URL holds it (``ArchivalUrl.url``), as pywb's WbUrl makes it:
    tabs and newlines removed (as browsers do), ``_to_uri``, then ``http://`` for a URL without
    ``scheme:/`` (``urn:`` URLs excepted) and ``scheme://`` for ``scheme:/x``."""
    _check_text(url, "URL")
    return _normalize(url)


@functools.lru_cache(maxsize=4096)
def _normalize(url: str) -> str:
    """normalize_url of a checked URL: cached, as a request names its URL several times over (its
    archival URL, the capture's, the Memento links) and a page's resources share their hosts."""
    url = _to_uri(_drop_tab_newline(url))
    if url.startswith("urn:"):
        return _safe(url)
    m = _SCHEME.match(url)
    if not m:
        return _safe("http://" + url)
    i = m.end()
    if i < len(url) and url[i] != "/":
        url = url[:i] + "/" + url[i:]
    return _safe(url)


def display_url(url: str) -> str:
    """A URL as an archival URL shows it (pywb's ``get_url``): when it holds ``xn--`` anywhere,
    it goes through urlsplit/urlunsplit and its punycode host is shown UTF-8 and %-encoded (the
    whole netloc is %-encoded: ``:`` of a port becomes ``%3A``); any other URL is unchanged.
    Control characters are %-encoded in either."""
    if "xn--" not in url:
        return _safe(url)
    try:
        parts = urlsplit(url)
    except ValueError:   # a malformed [IPv6] host: shown as it is (pywb raises)
        return _safe(url)
    user, at, hostport = parts.netloc.rpartition("@")
    host, port = _split_port(hostport)
    try:
        host = host.encode("utf-8").decode("idna")
    except UnicodeError:
        pass
    try:
        netloc = quote(user + at + host + port)
    except UnicodeEncodeError:   # a lone surrogate (from bytes that were not UTF-8)
        return _safe(url)
    return _safe(urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment)))


def _format(type_: str, timestamp: str, end_timestamp: str, modifier: str, url: str) -> str:
    if type_ in ("query", "url_query"):
        head = (modifier + "/" if modifier else "") + timestamp + "*" + end_timestamp
        return head + "/" + url + ("*" if type_ == "url_query" else "")
    tsmod = timestamp + modifier
    return tsmod + "/" + url if tsmod else url


# --------------------------------------------------------------------------- ArchivalUrl

def _split(path: str) -> Tuple[UrlType, str, str, str, str]:
    """(type, timestamp, end timestamp, modifier, target URL as written) of an archival URL;
    a query is tried first, as in pywb."""
    m = _QUERY.fullmatch(path)
    if m:
        url = m["url"]
        if not url.endswith("*"):
            return "query", m["ts"], m["end"], m["mod"] or "", url
        return "url_query", m["ts"], m["end"], m["mod"] or "", url[:-1] or "http://"   # '*/*': pywb's 'http://'
    m = _REPLAY.fullmatch(path)
    if m:
        ts = m["ts"]
        return ("replay" if ts else "latest_replay"), ts, "", m["mod"] or "", m["url"]
    if not path:
        raise ArchivalUrlError("empty archival URL (expected [timestamp][modifier]/url)")
    return "latest_replay", "", "", "", path


@dataclass(frozen=True, init=False)
class ArchivalUrl:
    """One archival URL. ``ArchivalUrl.parse(path)`` reads one; ``ArchivalUrl(url, timestamp,
    modifier, end_timestamp=..., type=...)`` builds one, normalising ``url`` as parse does;
    ``str()`` is the canonical form, which parses back to the same value (except for a host that
    holds an encoded ``%`` or ``+``, decoded once more each time, as in pywb).

    ``type``: ``"replay"`` (a timestamp), ``"latest_replay"`` (none), ``"query"`` (``*``, or a
    ``from*to`` range: the captures of ``url``), ``"url_query"`` (the same ending in ``*``: the
    URLs under the prefix ``url``). ``timestamp`` and ``end_timestamp`` are digits (any number of
    them, as in pywb; the lookup reads the first 14), ``end_timestamp`` only in queries.
    ``modifier`` is ``""``, ``[a-z]+_`` (``mp_``, ``id_``, ... or another) or ``$[a-z0-9:.-]+``
    in replay; in a query, pywb's output name before ``/`` (``json``, ``timemap-link``...).
    ``url`` is normalised (punycode host, a scheme); ``str()`` shows an IDN host %-encoded.
    """

    type: UrlType
    url: str
    timestamp: str
    end_timestamp: str
    modifier: str

    def __init__(self, url: str, timestamp: str = "", modifier: str = "", *, end_timestamp: str = "",
                 type: Optional[UrlType] = None) -> None:
        for value, what in ((timestamp, "timestamp"), (end_timestamp, "end timestamp"), (modifier, "modifier")):
            _check_text(value, what)
        if not _DIGITS.fullmatch(timestamp) or not _DIGITS.fullmatch(end_timestamp):
            raise ArchivalUrlError(f"timestamps are digits: {timestamp!r}, {end_timestamp!r}")
        if type is None:
            type = "replay" if timestamp else "latest_replay"
        elif type not in URL_TYPES:
            raise ArchivalUrlError(f"type {type!r} is none of {', '.join(URL_TYPES)}")
        if type in ("replay", "latest_replay"):
            if end_timestamp:
                raise ArchivalUrlError(f"an end timestamp ({end_timestamp!r}) makes a query, not a {type}")
            if bool(timestamp) != (type == "replay"):
                raise ArchivalUrlError(f"a {type} has {'a' if type == 'replay' else 'no'} timestamp")
            if modifier and not _REPLAY_MOD.fullmatch(modifier):
                raise ArchivalUrlError(f"modifier {modifier!r} is not [a-z]+_ nor $[a-z0-9:.-]+")
        elif modifier and not _QUERY_MOD.fullmatch(modifier):
            raise ArchivalUrlError(f"query modifier {modifier!r} is not [A-Za-z0-9_:-]+")
        _check_text(url, "URL")
        if not url:
            raise ArchivalUrlError("empty URL")
        url = _normalize(url)
        if type == "query" and url.endswith("*"):
            raise ArchivalUrlError(f"a query URL ending in '*' ({url!r}) is a url_query")
        try:
            urlsplit(url)
        except ValueError as e:   # pywb takes it, then fails on it with a 500
            raise ArchivalUrlError(f"{url!r}: {e}") from None
        set_ = object.__setattr__
        set_(self, "type", type)
        set_(self, "url", url)
        set_(self, "timestamp", timestamp)
        set_(self, "end_timestamp", end_timestamp)
        set_(self, "modifier", modifier)

    @classmethod
    def parse(cls, path: str) -> "ArchivalUrl":
        """Read an archival URL: the part of a replay path after ``/<coll>/`` (a leading ``/`` is
        taken as pywb takes it: ``/example.com/`` is ``http://example.com/``). Raises
        ArchivalUrlError when it is empty or not text."""
        _check_text(path, "archival URL")
        type_, timestamp, end_timestamp, modifier, url = _split(_drop_tab_newline(path))
        return cls(url, timestamp, modifier, end_timestamp=end_timestamp, type=type_)

    def __str__(self) -> str:
        # pywb's to_str puts the URL through to_uri once more (a host's %25 or %2B decoded again)
        return _format(self.type, self.timestamp, self.end_timestamp, self.modifier, display_url(_to_uri(self.url)))

    @property
    def is_replay(self) -> bool:
        """A memento (``replay``) or the latest capture (``latest_replay``)."""
        return self.type in ("replay", "latest_replay")

    @property
    def is_query(self) -> bool:
        """A list of captures (``query``) or of URLs (``url_query``)."""
        return self.type in ("query", "url_query")

    @property
    def is_identity(self) -> bool:
        """``id_``: the capture as archived, neither its body nor its URLs rewritten."""
        return self.modifier == "id_"


# --------------------------------------------------------------------------- rewriting

# Left as they are (compared case-insensitively: pywb compares case-sensitively and then
# rewrites `JavaScript:x("../")`; `blob:` and `tel:` are ours).
_NO_REWRITE = ("#", "javascript:", "data:", "mailto:", "about:", "file:", "{", "blob:", "tel:")
_PROTOCOLS = ("http:", "https:", "ftp:", "mms:", "rtsp:", "wais:")
# Scheme-relative as pywb writes them: plain, and escaped in JavaScript strings.
_REL_SCHEME = ("//", "\\/\\/", "\\\\/\\\\/")

# The modifier of a <link> (or Link header) by its rel and, for preloads, its `as`.
_PRELOAD_MODIFIERS = {
    "script": "js_", "worker": "js_", "style": "cs_", "image": "im_", "document": "if_", "fetch": "mp_",
    "font": "oe_", "audio": "oe_", "video": "oe_", "embed": "oe_", "object": "oe_", "track": "oe_",
}


def link_modifier(rel: str, as_: str = "", default: str = "oe_") -> str:
    """The modifier pywb's HTML rewriter gives a ``<link href>`` by its ``rel`` (and ``as``):
    ``stylesheet`` ``cs_``, ``import``/``alternate`` ``mp_``, ``preload`` by ``as`` (``script``
    ``js_``, ``style`` ``cs_``, ``image`` ``im_``, ``document`` ``if_``, ``fetch`` ``mp_``, media
    and fonts ``oe_``), ``modulepreload`` ``js_``; else ``default``. ``rel`` may list several."""
    rels = rel.lower().split()
    if "stylesheet" in rels:
        return "cs_"
    if "preload" in rels:
        return _PRELOAD_MODIFIERS.get(as_.strip().lower(), default)
    if "modulepreload" in rels:
        return "js_"
    if "import" in rels or "alternate" in rels:
        return "mp_"
    return default


def _join(base: str, ref: str) -> str:
    """urljoin, then (as pywb's UrlRewriter.urljoin) a '..' segment left in the path takes the
    segment before it away, the last segment excepted."""
    joined = urljoin(base, ref)
    if "../" not in joined:
        return joined
    scheme, netloc, path, query, fragment = urlsplit(joined)
    segments = path.split("/")
    kept: List[str] = []
    for seg in segments[:-1]:
        if seg != "..":
            kept.append(seg)
        elif kept:
            kept.pop()
    kept.append(segments[-1])
    return urlunsplit((scheme, netloc, "/" if kept == [""] else "/".join(kept), query, fragment))


def _prefix_path(prefix: str) -> str:
    if prefix.startswith(_PROTOCOLS):
        return "/" + prefix.split("/", 3)[3] if prefix.count("/") >= 3 else "/"
    return prefix


# A '..' segment ending in a separator, dots possibly %-encoded, separators possibly backslashes.
_DOTDOT_SLASH = re.compile(r"(?:^|[/\\])(?:\.|%2e){2}[/\\]", re.I)
_DOT_SEGMENT = re.compile(r"(?:\.|%2e){1,2}", re.I)
_DOTDOT_SEGMENT = re.compile(r"(?:^|/)(?:\.|%2e){2}(?:/|$)", re.I)
_AUTHORITY = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.-]*:)?(?://[^/?#]*)?")


def _path_end(url: str, start: int = 0) -> int:
    """Where the path that starts at ``start`` ends: at the first '?' or '#', or the end."""
    end = len(url)
    for c in "?#":
        i = url.find(c, start)
        if 0 <= i < end:
            end = i
    return end


def _browser_path(ref: str) -> str:
    """A relative reference's path as a browser reads it on an http(s) page: backslashes are
    slashes, and ``%2e`` in a dot segment is a dot (the query and fragment are left)."""
    if "\\" not in ref and "%" not in ref:
        return ref
    end = _path_end(ref)
    path = ref[:end].replace("\\", "/")
    if "%" in path:
        path = "/".join(seg.replace("%2e", ".").replace("%2E", ".") if _DOT_SEGMENT.fullmatch(seg) else seg
                        for seg in path.split("/"))
    return path + ref[end:]


def _resolve_dots(url: str) -> str:
    """``url`` with the dot segments of its path resolved (RFC 3986 5.2.4, ``%2e`` as ``.``)
    when one is ``..``, as a browser fetching it would; otherwise unchanged."""
    start = _AUTHORITY.match(url).end()   # type: ignore[union-attr]   # matches the empty string
    end = _path_end(url, start)
    path = url[start:end]
    if not _DOTDOT_SEGMENT.search(path):
        return url
    segments = path.split("/")
    out: List[str] = []
    for i, seg in enumerate(segments):
        dots = seg if not _DOT_SEGMENT.fullmatch(seg) else seg.replace("%2e", ".").replace("%2E", ".")
        last = i == len(segments) - 1
        if dots == "..":
            if out and out != [""]:
                out.pop()
            if last:
                out.append("")
        elif dots == ".":
            if last:
                out.append("")
        else:
            out.append(seg)
    if path.startswith("/") and out[:1] != [""]:
        out.insert(0, "")
    return url[:start] + "/".join(out) + url[end:]


class UrlRewriter:
    """Rewrites the URLs of one archived page into archival URLs under a collection's prefix.

    ``page`` is the page's archival URL (a string such as ``"20131010/http://example.com/a.html"``
    or an ArchivalUrl); ``prefix`` the collection's (``"/coll/"``, or ``"http://host:port/coll/"``
    for absolute links); ``full_prefix`` the absolute form when ``prefix`` is not (default:
    ``prefix``), so that URLs already under either are left alone; ``rel_prefix`` the path of the
    collection (default: ``prefix``, or its path when it is absolute), the path of the cookies
    scoped to the collection.
    """

    __slots__ = ("page", "prefix", "full_prefix", "rel_prefix", "prefix_abs", "_mods")

    def __init__(self, page: Union[str, ArchivalUrl], prefix: str = "", full_prefix: Optional[str] = None, *,
                 rel_prefix: Optional[str] = None) -> None:
        self.page = page if isinstance(page, ArchivalUrl) else ArchivalUrl.parse(page)
        self.prefix = prefix
        self.full_prefix = full_prefix or prefix
        self.rel_prefix = rel_prefix or _prefix_path(prefix)
        self.prefix_abs = prefix.startswith(_PROTOCOLS)
        self._mods = {"", self.page.modifier}

    def __repr__(self) -> str:
        return f"UrlRewriter({str(self.page)!r}, {self.prefix!r}, {self.full_prefix!r})"

    def _check_modifier(self, modifier: str) -> None:
        grammar = _QUERY_MOD if self.page.is_query else _REPLAY_MOD
        if not isinstance(modifier, str) or not grammar.fullmatch(modifier):
            raise ArchivalUrlError(f"modifier {modifier!r} does not fit the grammar of a {self.page.type} URL")
        self._mods.add(modifier)

    def archival_url(self, url: Optional[str] = None, *, timestamp: Optional[str] = None,
                     modifier: Optional[str] = None) -> str:
        """The page's prefixed archival URL with its url, timestamp or modifier replaced
        (pywb's ``get_new_url``); a new ``url`` is put in URI form but given no scheme."""
        page = self.page
        if modifier is not None and modifier not in self._mods:
            self._check_modifier(modifier)
        if timestamp is not None and not _DIGITS.fullmatch(timestamp):
            raise ArchivalUrlError(f"timestamps are digits: {timestamp!r}")
        target = _to_uri(page.url if url is None else _drop_tab_newline(url))
        return self.prefix + _format(page.type, page.timestamp if timestamp is None else timestamp,
                                     page.end_timestamp, page.modifier if modifier is None else modifier,
                                     display_url(target))

    def rewrite(self, url: str, modifier: Optional[str] = None, *, force_abs: bool = False) -> str:
        """``url`` as found in the page, rewritten to load from the archive; ``modifier`` (default:
        the page's) says how it is to be served (``im_`` for an image...).

        Left alone: ``#...``, ``javascript:``, ``data:``, ``mailto:``, ``about:``, ``file:``,
        ``blob:``, ``tel:``, ``{...``, URLs already under the prefix or full prefix, and relative
        URLs without ``../`` (``a.html``, ``?q``: they resolve inside the archive as they are;
        ``force_abs`` rewrites them too). Rewritten: absolute URLs (http, https, ftp, mms, rtsp,
        wais), scheme-relative ones (kept scheme-relative: pywb replays them as ``http:``),
        root-relative ones and those with ``../`` (resolved against the page). With an absolute
        prefix, absolute URLs get absolute archival URLs, the others a root-relative one.

        The reference is read as a browser reads it in an HTML attribute (pywb reads it
        literally): spaces and controls around it and tabs or newlines in it are ignored, the
        scheme's case too; a backslash in the path is a slash (``\\\\host`` and ``/\\host`` are
        scheme-relative); ``%2e`` in a dot segment is a dot; and the ``..`` segments of an
        absolute URL are resolved, so that none can climb out of the archival path. JavaScript
        strings are to be unescaped first (but for pywb's escaped ``\\/\\/``)."""
        ref = url
        if ref[:1] <= " " or ref[-1:] <= " " or "\t" in ref or "\n" in ref or "\r" in ref:
            ref = ref.strip(_C0_OR_SPACE).translate(_TAB_NEWLINE)
        low = ref[:12].lower()
        if low.startswith(_NO_REWRITE):
            return url
        prefix = self.prefix
        if prefix and prefix != "/" and ref.startswith(prefix):
            return url
        if self.full_prefix != prefix and ref.startswith(self.full_prefix):
            return url
        is_abs = low.startswith(_PROTOCOLS)
        scheme_rel = False
        if ref.startswith(_REL_SCHEME):
            is_abs = scheme_rel = True
        elif ref[:1] == "\\" or ref[:2] == "/\\":
            if ref[1:2] in ("/", "\\"):     # '\\host', '\/host', '/\host': scheme-relative to a browser
                ref = "//" + ref.lstrip("/\\")
                is_abs = scheme_rel = True
            else:                           # '\path': root-relative
                ref = "/" + ref[1:]
        elif (not force_abs and not is_abs and not ref.startswith("/") and "../" not in ref
              and not _DOTDOT_SLASH.search(ref, 0, _path_end(ref))):
            return url
        if modifier is None:
            modifier = self.page.modifier
        elif modifier not in self._mods:
            self._check_modifier(modifier)
        if is_abs:
            target = _resolve_dots(ref)
        else:
            try:
                target = _resolve_dots(_join(self.page.url, _browser_path(ref)))
            except ValueError:   # the reference holds a malformed [IPv6] host: archived as it is
                target = ref
        page = self.page
        final = prefix + _format(page.type, page.timestamp, page.end_timestamp, modifier, display_url(_to_uri(target)))
        if not is_abs and self.prefix_abs:
            parts = final.split("/", 3)
            return "/" + parts[3] if len(parts) == 4 else "/"
        if scheme_rel and self.prefix_abs:
            return final.split(":", 1)[1]
        return final

    def rebase(self, base_url: str) -> "UrlRewriter":
        """The rewriter of the same page under a ``<base href>``: the base resolved against the
        page, the page's timestamp, modifier and prefixes kept."""
        if not base_url[:12].lower().startswith(_PROTOCOLS):
            try:
                base_url = _join(self.page.url, base_url)
            except ValueError:
                pass
        page = ArchivalUrl.parse(_format(self.page.type, self.page.timestamp, self.page.end_timestamp,
                                         self.page.modifier, display_url(_to_uri(base_url))))
        return UrlRewriter(page, self.prefix, self.full_prefix, rel_prefix=self.rel_prefix)

    def deprefix(self, url: str) -> str:
        """``url`` with the archival URLs in its query parameters turned back into the URLs they
        point to (pywb's ``deprefix_url``, over the full prefix): ``=<full prefix>[timestamp]
        [xx_][/]`` becomes ``=``, and a %-encoded ``=<full prefix>...http%3A%2F%2F...`` (or
        ``%2F%2F...``) loses the prefix and whatever stands between."""
        p = self.full_prefix
        if not p:   # pywb would take the digits after every '='
            return url
        url = re.sub("=" + re.escape(p) + r"[0-9]*(?:\w{2}_)?/?", "=", url)
        return re.sub("=" + re.escape(quote_plus(p)) + r".*?((?:https?%3A)?%2F%2F[^&]+)", r"=\1", url)

    def unrewrite(self, url: str) -> Optional[ArchivalUrl]:
        """The archival URL that a rewritten URL (under the full prefix or the prefix) points to,
        or None for any other URL (as pywb reads a Referer)."""
        for p in (self.full_prefix, self.prefix):
            if p and url.startswith(p) and len(url) > len(p):
                try:
                    return ArchivalUrl.parse(url[len(p) :])
                except ArchivalUrlError:
                    return None
        return None

