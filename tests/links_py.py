"""THE ORACLE, not warchive's code: a pure-Python outlink extractor with the interface of
warchive.capture.links, kept unchanged below this paragraph so that
tests/differential/test_links_vs_python.py, tests/unit/test_links.py (its deviations) and
bench/html_compare.py can compare the kernel's link mode with it. It imports nothing from warchive.

Outlinks of fetched pages: a streaming HTML tokenizer and a CSS scanner.

``extract_links(url, content_type, payload)`` is what the crawler calls for each response: the
links of an HTML or CSS payload, resolved against the page (or its ``<base href>``), fragments
dropped, ``javascript:``/``mailto:``/``data:`` (and other non-fetchable schemes) skipped, each with
its hop type as Heritrix writes it in hop paths:

    L  navigation link        <a href>, <area href>, <link rel=alternate href>, <form action>,
                              <blockquote cite>, <q cite>
    E  embed                  <img src/srcset>, <script src>, <link rel=stylesheet>, <iframe src>,
                              <video>/<audio>/<source>/<track>, SVG <image>, <html manifest>,
                              CSS url() and @import
    R  redirect               <meta http-equiv=refresh content="0; url=...">
    X  speculative            lazy-loading attributes (data-src, data-srcset) on any element

The tokenizer follows the HTML5 tokenizer where it matters for finding attributes: comments
(``<!-- -->``, ``<!-->``), bogus comments (``<!...>``, ``<?...>``), raw text inside
``<script>``, ``<style>``, ``<xmp>``, ``<iframe>``, ``<noembed>``, ``<noframes>`` and RCDATA inside
``<textarea>``, ``<title>`` (no tags there), unquoted and unterminated attribute values, duplicate
attributes (the first wins), a tag cut off by the end of the file (dropped, as a browser does).
It is fed text in pieces (``HtmlLinkExtractor.feed``) and keeps only the unfinished tail between
pieces; every piece is scanned once, so broken input costs linear time. Two deliberate
simplifications: an attribute value whose opening quote never closes anywhere in the document is
read as an unquoted value, up to white space or ``>`` (a browser would swallow the rest of the
file), and character references are decoded with
``html.unescape`` (the HTML5 table, without the attribute-value exceptions for legacy ``&amp``).

Pure Python: it runs at about twice the speed of ``html.parser`` merely tokenizing, and URL
resolution (``urljoin``) takes about 40 % of its time (bench/README.md), which is why the crawler
uses the kernel's link mode (``ext/html_rewrite``, URLs joined in C) behind this same interface.
It must not fetch, decide scope, or touch the seen set.
"""

from __future__ import annotations

import codecs
import html as _html
import re
from dataclasses import dataclass
from typing import Dict, Iterable, List, Optional, Set, Tuple, Union
from urllib.parse import urljoin

__all__ = ["Link", "HtmlLinkExtractor", "extract_html", "extract_css", "extract_links", "SKIPPED_SCHEMES"]


@dataclass(frozen=True)
class Link:
    url: str        # absolute, without fragment
    hop: str        # "L", "E", "R" or "X"
    context: str    # where it was found: "a/@href", "img/@srcset", "style/url()", "css/@import", ...


SKIPPED_SCHEMES = frozenset({"javascript", "mailto", "data", "tel", "about", "blob", "file", "vbscript", "sms",
                             "callto", "news", "irc", "magnet", "chrome", "view-source"})
_FETCHABLE = ("http", "https", "ftp")
_FETCHABLE_PREFIXES = ("http://", "https://", "ftp://")

# --------------------------------------------------------------------------- CSS

_CSS_COMMENT = re.compile(r"/\*.*?(?:\*/|\Z)", re.S)
_CSS_URL = re.compile(r"""url\(\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|((?:[^)\s'"\\]|\\.)*))\s*\)""",
                      re.I | re.S)
_CSS_IMPORT = re.compile(r"""@import\s+(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)')""", re.I | re.S)
_CSS_ESCAPE = re.compile(r"\\(?:([0-9a-fA-F]{1,6})\s?|(.))", re.S)


def _css_unescape(s: str) -> str:
    if "\\" not in s:
        return s

    def one(m: "re.Match[str]") -> str:
        if m.group(1):
            cp = int(m.group(1), 16)
            return chr(cp) if 0 < cp < 0x110000 and not 0xD800 <= cp < 0xE000 else "\ufffd"
        return m.group(2)
    return _CSS_ESCAPE.sub(one, s)


def _css_refs(text: str) -> Iterable[Tuple[str, str]]:
    """(raw reference, context) of every url() and @import "..." in a style sheet."""
    if "/*" in text:
        text = _CSS_COMMENT.sub(" ", text)
    found: List[Tuple[int, str, str]] = []
    if "@" in text:
        for m in _CSS_IMPORT.finditer(text):
            found.append((m.start(), _css_unescape(m.group(1) if m.group(1) is not None else m.group(2)), "@import"))
    if "(" in text:
        for m in _CSS_URL.finditer(text):
            v = next(g for g in m.groups() if g is not None)
            found.append((m.start(), _css_unescape(v), "url()"))
    found.sort(key=lambda x: x[0])
    return [(v, c) for _, v, c in found]


def extract_css(text: str, base_url: str, context: str = "css") -> List[Link]:
    """Links of a style sheet (a CSS file, a ``<style>`` element or a ``style=`` attribute): every
    ``url()`` and ``@import``, hop E."""
    out: List[Link] = []
    seen: Set[Tuple[str, str]] = set()
    for raw, what in _css_refs(text):
        url = resolve(base_url, raw)
        if url is not None and (url, "E") not in seen:
            seen.add((url, "E"))
            out.append(Link(url, "E", f"{context}/{what}"))
    return out


# --------------------------------------------------------------------------- URLs

_STRIP = " \t\n\r\f"
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")


def resolve(base: str, raw: str) -> Optional[str]:
    """``raw`` resolved against ``base`` (urljoin), fragment dropped; None when it is empty, a
    fragment only, of a skipped scheme or not fetchable."""
    u = raw.strip(_STRIP)
    if "\t" in u or "\n" in u or "\r" in u:   # the URL standard removes them anywhere
        u = u.replace("\t", "").replace("\n", "").replace("\r", "")
    if not u or u[0] == "#":
        return None
    if ":" in u:
        m = _SCHEME.match(u)
        if m and m.group(1).lower() in SKIPPED_SCHEMES:
            return None
    try:
        url = urljoin(base, u)
    except ValueError:
        return None
    if "#" in url:
        url = url.split("#", 1)[0]
    if url.startswith(_FETCHABLE_PREFIXES):
        return url
    m = _SCHEME.match(url)   # the same schemes in another case: HTTP://
    return url if m and m.group(1).lower() in _FETCHABLE else None


def _srcset(value: str) -> List[str]:
    """The URLs of a srcset attribute (the HTML spec's parsing: URLs may contain commas, a candidate
    ends at whitespace; a URL ending in commas loses them)."""
    out = []
    i, n = 0, len(value)
    while i < n:
        while i < n and (value[i] in _STRIP or value[i] == ","):
            i += 1
        if i >= n:
            break
        j = i
        while j < n and value[j] not in _STRIP:
            j += 1
        url = value[i:j]
        if url.endswith(","):
            url = url.rstrip(",")
            i = j
        else:
            depth = 0   # skip the descriptors up to the next comma outside parentheses
            while j < n:
                c = value[j]
                if c == "(":
                    depth += 1
                elif c == ")":
                    depth = max(0, depth - 1)
                elif c == "," and depth == 0:
                    break
                j += 1
            i = j + 1
        if url:
            out.append(url)
    return out


_REFRESH = re.compile(r"""^\s*[0-9.]*\s*[;,]?\s*(?:url\s*=\s*)?(['"]?)(.*)$""", re.I | re.S)


def _refresh_url(content: str) -> Optional[str]:
    m = _REFRESH.match(content)
    if not m:
        return None
    url = m.group(2).strip()
    if m.group(1) and m.group(1) in url:
        url = url[:url.index(m.group(1))]
    return url or None


# --------------------------------------------------------------------------- the tokenizer

# Everything after a tag name up to its ">": attributes with optional values, quoted or not.
# Its alternatives start with disjoint characters and it cannot fail, so it never backtracks;
# it stops only at ">" or at the end of the buffer.
_ATTRS_RE = r"""(?:[\s/]+|[^\s/>][^\s/>=]*(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]*))?)*"""
_TAG = re.compile(r"<(/?)([A-Za-z][^\s/>]*)(" + _ATTRS_RE + ")")
_ATTR = re.compile(r"""([^\s/>][^\s/>=]*)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]*)))?""")

_RAW = {"script", "style", "xmp", "iframe", "noembed", "noframes", "textarea", "title", "plaintext"}
_RAW_END: Dict[str, "re.Pattern[str]"] = {n: re.compile(r"</%s[\s/>]" % n, re.I) for n in _RAW}

# tag -> ((attribute, hop, kind), ...); kind "" = one URL, "srcset" = a candidate list
_URL_ATTRS: Dict[str, Tuple[Tuple[str, str, str], ...]] = {
    "a": (("href", "L", ""), ("xlink:href", "L", "")),
    "area": (("href", "L", ""),),
    "img": (("src", "E", ""), ("srcset", "E", "srcset"), ("lowsrc", "E", "")),
    "script": (("src", "E", ""),),
    "iframe": (("src", "E", ""),),
    "frame": (("src", "E", ""),),
    "embed": (("src", "E", ""),),
    "source": (("src", "E", ""), ("srcset", "E", "srcset")),
    "video": (("src", "E", ""), ("poster", "E", "")),
    "audio": (("src", "E", ""),),
    "track": (("src", "E", ""),),
    "input": (("src", "E", ""),),
    "object": (("data", "E", ""),),
    "body": (("background", "E", ""),),
    "table": (("background", "E", ""),),
    "td": (("background", "E", ""),),
    "image": (("href", "E", ""), ("xlink:href", "E", "")),      # SVG
    "html": (("manifest", "E", ""),),
    "blockquote": (("cite", "L", ""),),
    "q": (("cite", "L", ""),),
    "th": (("background", "E", ""),),
}
_SPECIAL = {"link", "meta", "base", "form"}
_EMBED_RELS = {"stylesheet", "icon", "apple-touch-icon", "apple-touch-icon-precomposed", "preload",
               "modulepreload", "prefetch", "manifest", "mask-icon"}
_LAZY = (("data-src", ""), ("data-srcset", "srcset"), ("data-original", ""), ("data-lazy-src", ""))


class HtmlLinkExtractor:
    """A streaming link extractor: ``feed(text)`` as pieces arrive, then ``close()``; ``links``
    holds what was found (each (url, hop) once, in document order). ``base_url`` is the page's
    URL; a ``<base href>`` seen later changes the base for what follows it (as browsers resolve
    against the first base element, and almost every page puts it first)."""

    def __init__(self, base_url: str, encoding: Optional[str] = None) -> None:
        self.url = base_url
        self.base = base_url
        self.links: List[Link] = []
        self._seen: Set[Tuple[str, str]] = set()
        self._buf = ""
        self._raw_tag: Optional[str] = None    # inside <script>... until its end tag
        self._raw_start = 0
        self._wait: Optional[Tuple[str, int]] = None   # (what to wait for, where) before trying again
        self._pending: List[str] = []   # text received while waiting
        self._tail = ""                 # the last characters received, for a needle cut in two
        self._based = False
        self._closed = False
        self._decoder = codecs.getincrementaldecoder(_codec(encoding))(errors="replace")

    # -- input

    def feed(self, data: Union[str, bytes]) -> None:
        if isinstance(data, bytes):
            data = self._decoder.decode(data)
        if not data:
            return
        if self._wait is None:
            self._buf += data
            self._scan(final=False)
            return
        # Waiting for the end of a construct (a comment, a tag, raw text): look for it in the new
        # text only (with a few characters of overlap) and keep the pieces, so a long wait in
        # small pieces costs linear time.
        needle = self._wait[0]
        probe = self._tail + data
        if needle == "quote":
            hit = '"' in data or "'" in data
        elif needle == "raw":
            hit = _RAW_END[self._raw_tag or "script"].search(probe) is not None
        else:
            hit = needle in probe
        self._pending.append(data)
        self._tail = probe[-16:]
        if hit:
            self._resume()
            self._scan(final=False)

    def _resume(self) -> None:
        if self._pending:
            self._buf += "".join(self._pending)
            self._pending = []
        self._wait = None

    def close(self) -> List[Link]:
        if not self._closed:
            self._closed = True
            tail = self._decoder.decode(b"", final=True)
            self._resume()
            self._buf += tail
            self._scan(final=True)
            self._buf = ""
        return self.links

    # -- scanning

    def _scan(self, final: bool) -> None:
        buf = self._buf
        n = len(buf)
        pos = 0
        if self._raw_tag is not None:
            pos = self._raw_text(buf, 0, final)
            if pos < 0:
                return
        # A quote that never closes in the buffer makes its value unquoted (see the module's
        # docstring), but more input may yet close it: a tag holding the buffer's last quote of a
        # kind waits for the next quote, or the end.
        last_dq = last_sq = -1
        if not final:
            last_dq, last_sq = buf.rfind('"'), buf.rfind("'")
        while True:
            lt = buf.find("<", pos)
            if lt < 0 or lt + 1 >= n:
                pos = n if lt < 0 or final else lt
                break
            c = buf[lt + 1]
            if c != "!" and c != "?":
                m = _TAG.match(buf, lt)     # the common case first: a start or end tag, whole
                if m is not None:
                    gt = m.end()
                    if gt >= n:
                        if not final:
                            self._wait = (">", n)
                            pos = lt
                            break
                        pos = n      # a tag cut off by the end of the file: dropped
                        break
                    if lt < last_dq < gt or lt < last_sq < gt:
                        self._wait = ("quote", n)
                        pos = lt
                        break
                    pos = gt + 1
                    if m.group(1):   # an end tag
                        continue
                    name = m.group(2).lower()
                    attrs = m.group(3)
                    if "=" in attrs:
                        self._tag(name, attrs)
                    if name in _RAW:
                        self._raw_tag = name
                        pos = self._raw_text(buf, pos, final)
                        if pos < 0:
                            return
                    continue
                if c != "/":
                    pos = lt + 1    # "<" followed by neither a letter, "/", "!" nor "?": text
                    continue
                if lt + 2 >= n and not final:
                    pos = lt
                    break
                # "</>" is ignored; "</ 3>" is a bogus comment up to ">", as "<!..." below
            if c == "!":
                if buf.startswith("<!--", lt):
                    if buf.startswith(">", lt + 4):
                        pos = lt + 5
                        continue
                    if buf.startswith("->", lt + 4):
                        pos = lt + 6
                        continue
                    end = buf.find("-->", lt + 4)
                    if end < 0:
                        if final:
                            pos = n
                            break
                        self._wait = ("-->", n - 2)
                        pos = lt
                        break
                    pos = end + 3
                    continue
                if n - lt < 4 and not final and "<!--".startswith(buf[lt:]):
                    pos = lt   # maybe the start of a comment: wait for more
                    break
            end = buf.find(">", lt + 2)   # "<!...", "<?..." and "</ ...": a bogus comment up to ">"
            if end < 0:
                if final:
                    pos = n
                    break
                self._wait = (">", n)
                pos = lt
                break
            pos = end + 1
        self._buf = buf[pos:]
        if self._wait is not None:
            self._tail = self._buf[-16:]

    def _raw_text(self, buf: str, start: int, final: bool) -> int:
        """Skip the raw text of ``self._raw_tag`` from ``start``; the position after its end tag's
        name (the end tag itself is then read as a tag), or -1 when more input is needed."""
        name = self._raw_tag or ""
        if name == "plaintext":
            end = -1
        else:
            m = _RAW_END[name].search(buf, start)
            end = m.start() if m else -1
        if end < 0:
            if not final:
                self._buf = buf[start:]
                self._wait = ("raw", 0)
                self._tail = self._buf[-16:]
                return -1
            end = len(buf)
        if name == "style":
            for link in extract_css(buf[start:end], self.base, "style"):
                self._add(link)
        self._raw_tag = None
        return end

    def _tag(self, name: str, attrs_text: str) -> None:
        spec = _URL_ATTRS.get(name)
        special = name in _SPECIAL
        low = attrs_text.lower()
        extra = "style" in low or "data-" in low    # maybe a style= or data-src=
        if spec is None and not special and not extra:
            return
        attrs: Dict[str, str] = {}
        for k, v2, v3, v4 in _ATTR.findall(attrs_text):
            k = k.lower()
            if k not in attrs:
                v = v2 or v3 or v4
                attrs[k] = _html.unescape(v) if "&" in v else v
        has_style = extra and "style" in attrs
        has_lazy = extra
        if special:
            self._special(name, attrs)
        if spec is not None:
            for attr, hop, kind in spec:
                v = attrs.get(attr)
                if v is not None:
                    self._value(v, hop, f"{name}/@{attr}", kind)
        if has_lazy:
            for attr, kind in _LAZY:
                v = attrs.get(attr)
                if v is not None:
                    self._value(v, "X", f"{name}/@{attr}", kind)
        if has_style:
            style = attrs.get("style")
            if style:
                for link in extract_css(style, self.base, f"{name}/@style"):
                    self._add(link)

    def _special(self, name: str, attrs: Dict[str, str]) -> None:
        if name == "base":
            href = attrs.get("href")
            if href is not None and not self._based:
                self._based = True
                url = resolve(self.url, href)
                if url is not None:
                    self.base = url
        elif name == "link":
            href = attrs.get("href")
            if href is not None:
                rels = set(attrs.get("rel", "").lower().split())
                self._value(href, "E" if rels & _EMBED_RELS else "L", "link/@href", "")
            if "imagesrcset" in attrs:
                self._value(attrs["imagesrcset"], "E", "link/@imagesrcset", "srcset")
        elif name == "meta":
            if attrs.get("http-equiv", "").strip().lower() == "refresh":
                url = _refresh_url(attrs.get("content", ""))
                if url:
                    self._value(url, "R", "meta/@content", "")
        elif name == "form":
            action = attrs.get("action")
            if action and attrs.get("method", "get").strip().lower() == "get":
                self._value(action, "L", "form/@action", "")

    def _value(self, value: str, hop: str, context: str, kind: str) -> None:
        for raw in (_srcset(value) if kind == "srcset" else (value,)):
            url = resolve(self.base, raw)
            if url is not None:
                self._add(Link(url, hop, context))

    def _add(self, link: Link) -> None:
        key = (link.url, link.hop)
        if key not in self._seen:
            self._seen.add(key)
            self.links.append(link)


def _codec(encoding: Optional[str]) -> str:
    if encoding:
        try:
            return codecs.lookup(encoding.strip().strip("'\"")).name
        except LookupError:
            pass
    return "utf-8"


_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_\-:.]+)""", re.I)


def sniff_charset(content_type: Optional[str], head: bytes) -> Optional[str]:
    """The charset of Content-Type, else of a ``<meta charset>`` in the first 1024 bytes, else None
    (then UTF-8 with replacement characters: URLs are mostly ASCII)."""
    if content_type:
        for param in content_type.split(";")[1:]:
            k, _, v = param.partition("=")
            if k.strip().lower() == "charset" and v.strip():
                return v.strip().strip("'\"")
    if head[:3] == b"\xef\xbb\xbf":
        return "utf-8"
    m = _META_CHARSET.search(head[:1024])
    return m.group(1).decode("ascii") if m else None


def extract_html(data: Union[bytes, str], base_url: str, encoding: Optional[str] = None) -> List[Link]:
    """Links of a whole HTML document (bytes are decoded by ``encoding``, else as sniffed)."""
    if isinstance(data, bytes) and encoding is None:
        encoding = sniff_charset(None, data)
    ex = HtmlLinkExtractor(base_url, encoding)
    ex.feed(data)
    return ex.close()


_HTML_TYPES = {"text/html", "application/xhtml+xml", "application/xml+xhtml", "text/xhtml"}


def extract_links(url: str, content_type: Optional[str], payload: bytes) -> List[Link]:
    """The outlinks of a fetched payload (de-chunked and decoded), chosen by its MIME type:
    HTML and XHTML through the tokenizer, CSS through the CSS scanner, anything else none.
    Meta robots and X-Robots-Tag are ``warchive.capture.robots_meta.page_directives``'s job."""
    mime = (content_type or "").split(";", 1)[0].strip().lower()
    if mime in _HTML_TYPES:
        return extract_html(payload, url, sniff_charset(content_type, payload))
    if mime == "text/css":
        enc = _codec(sniff_charset(content_type, b""))
        return extract_css(payload.decode(enc, "replace"), url)
    return []
