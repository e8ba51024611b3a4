"""Outlinks of fetched pages, through the rewriting kernel's link mode (ext/html_rewrite).

``extract_links(url, content_type, payload)`` is what the crawler calls for each response: the
links of an HTML or CSS payload, resolved against the page (or its first ``<base href>``),
fragments dropped, ``javascript:``/``mailto:``/``data:`` (and other non-fetchable schemes)
skipped, each with its hop type as Heritrix writes it in hop paths:

    L  navigation link        <a href>, <area href>, <link rel=alternate href>, <form action>,
                              <blockquote cite>, <q cite>
    E  embed                  <img src/srcset>, <script src>, <link rel=stylesheet>, <iframe src>,
                              <video>/<audio>/<source>/<track>, SVG <image>, <html manifest>,
                              CSS url(), @import and image-set()
    R  redirect               <meta http-equiv=refresh content="0; url=...">
    X  speculative            lazy-loading attributes (data-src, data-srcset) on any element

The kernel tokenizes as replay's rewriting does (the HTML standard's tokenizer where it decides
what is a tag and what is an attribute value: comments, bogus comments, raw text, RCDATA, all
quoting forms; a tag cut by the end of the file dropped, as a browser drops it), decodes
character references as a browser does in attribute values, reads CSS as a browser's CSS
tokenizer does, and resolves URLs as ``urllib.parse.urljoin`` in C for the common cases; what it
cannot (a non-ASCII URL, an odd base, a CSS escape) comes here as raw bytes and is resolved by
``resolve``. Each (url, hop) is kept once, in document order; within a tag, in the order of the
rules below (``_special`` tags first, then the attributes of ``_URL_ATTRS``, lazy ones, ``style``).
docs/api.md lists where this differs from the pure-Python extractor tests/links_py.py.

It must not fetch, decide scope, or touch the seen set.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple, Union, cast
from urllib.parse import urljoin

from .._ext import html_rewrite as _k
from ..htmltext import codec_name, css_unescape, transcodes, unescape_attr

__all__ = ["Link", "HtmlLinkExtractor", "extract_html", "extract_css", "extract_links", "resolve",
           "sniff_charset", "SKIPPED_SCHEMES"]


@dataclass(frozen=True)
class Link:
    url: str        # absolute, without fragment
    hop: str        # "L", "E", "R" or "X"
    context: str    # where it was found: "a/@href", "img/@srcset", "style/url()", "css/@import", ...


# The kernel skips the same schemes (wa_html.h wa_url_link).
SKIPPED_SCHEMES = frozenset({"javascript", "mailto", "data", "tel", "about", "blob", "file", "vbscript", "sms",
                             "callto", "news", "irc", "magnet", "chrome", "view-source"})
_FETCHABLE = ("http", "https", "ftp")
_FETCHABLE_PREFIXES = ("http://", "https://", "ftp://")
_STRIP = " \t\n\r\f"
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_CSS_KIND = ("", "url()", "@import", "image-set()")


def resolve(base: str, raw: str) -> Optional[str]:
    """``raw`` resolved against ``base`` (urljoin), fragment dropped; None when it is empty, a
    fragment only, of a skipped scheme or not fetchable. (The kernel's C path is this function
    for printable-ASCII references; tests compare them.)"""
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


def _ascii_base(url: str) -> bytes:
    """A base the kernel's C resolution can take (non-ASCII ones: every link resolved here)."""
    return url.encode("ascii") if url.isascii() else b""


class _Extractor:
    """The kernel in link mode and what it hands back: links resolved in C, raw ones resolved
    here, contexts named, each (url, hop) kept once."""

    def __init__(self, base_url: str, css: bool, css_context: str = "css") -> None:
        self.url = base_url
        self.base = base_url
        self.links: List[Link] = []
        self._seen: Set[Tuple[str, str]] = set()
        self._css_context = css_context
        self._contexts: Dict[Tuple[int, int, int, bytes], str] = {}
        self._raw_codec = "utf-8"
        self._raw_errors = "replace"
        self._kernel = _k.Kernel(self, css=css, links=True)
        self._kernel.set_base(_ascii_base(base_url))
        self._closed = False

    # the kernel's requests (link mode asks only for the first <base href>)

    def on_url(self, raw: bytes, ctx: int, slot: int, force_abs: bool) -> Optional[bytes]:
        raise AssertionError("link mode rewrites nothing")

    def on_base(self, raw: bytes, ctx: int) -> Optional[bytes]:
        raise AssertionError("link mode rewrites nothing")

    def on_link_base(self, raw: bytes, ctx: int, links: List[_k.LinkRecord]) -> None:
        self._take(links)             # found before the base: resolved against the page
        url = resolve(self.url, unescape_attr(raw.decode(self._raw_codec, self._raw_errors)))
        if url is not None:
            self.base = url
            self._kernel.set_base(_ascii_base(url))

    # records

    def _context(self, what: int, attr: int, css: int, tag: bytes) -> str:
        key = (what, attr, css, tag)
        c = self._contexts.get(key)
        if c is None:
            if what == _k.LW_ATTR:
                c = f"{tag.decode('ascii', 'replace')}/@{_k.ATTR_NAMES[attr]}"
            elif what == _k.LW_STYLE_ATTR:
                c = f"{tag.decode('ascii', 'replace')}/@style/{_CSS_KIND[css]}"
            elif what == _k.LW_STYLE_EL:
                c = f"style/{_CSS_KIND[css]}"
            else:
                c = f"{self._css_context}/{_CSS_KIND[css]}"
            self._contexts[key] = c
        return c

    def _take(self, records: List[_k.LinkRecord]) -> None:
        seen, links = self._seen, self.links
        for hop, what, attr, css, raw, ctx, value, tag in records:
            if raw:
                text = cast(bytes, value).decode(self._raw_codec, self._raw_errors)
                if ctx & 3:
                    text = unescape_attr(text)
                if ctx >> 2:
                    text = css_unescape(text)
                url = resolve(self.base, text)
                if url is None:
                    continue
            else:
                url = cast(str, value)
            if (url, hop) in seen:
                continue
            seen.add((url, hop))
            links.append(Link(url, hop, self._context(what, attr, css, tag)))

    def _feed_bytes(self, data: bytes, final: bool) -> None:
        found = self._kernel.feed(data, final)
        assert isinstance(found, list)
        self._take(found)


class HtmlLinkExtractor(_Extractor):
    """A streaming link extractor: ``feed(data)`` as pieces arrive (all ``str``, or all ``bytes``
    in ``encoding``, UTF-8 by default), then ``close()``; ``links`` holds what was found. ``base_url``
    is the page's URL; the first ``<base href>`` changes the base for what follows it."""

    def __init__(self, base_url: str, encoding: Optional[str] = None) -> None:
        super().__init__(base_url, css=False)
        self._codec = codec_name(encoding)
        self._text: Optional[bool] = None          # fed str (True) or bytes (False)
        self._decoder: Optional[codecs.IncrementalDecoder] = None

    def feed(self, data: Union[str, bytes]) -> None:
        if self._closed:
            raise ValueError("feed() after close()")
        text = isinstance(data, str)
        if self._text is None:
            self._text = text
            if text:
                self._raw_codec, self._raw_errors = "utf-8", "surrogatepass"
            elif transcodes(self._codec):
                self._decoder = codecs.getincrementaldecoder(self._codec)(errors="replace")
                self._raw_codec, self._raw_errors = "utf-8", "surrogatepass"
            else:
                self._raw_codec = self._codec
        elif text != self._text:
            raise TypeError("feed() takes either str or bytes for one document, not both")
        if text:
            self._feed_bytes(data.encode("utf-8", "surrogatepass"), False)   # type: ignore[union-attr]
        elif self._decoder is not None:
            self._feed_bytes(self._decoder.decode(data).encode("utf-8", "surrogatepass"), False)  # type: ignore[arg-type]
        else:
            self._feed_bytes(data, False)   # type: ignore[arg-type]

    def close(self) -> List[Link]:
        if not self._closed:
            self._closed = True
            tail = self._decoder.decode(b"", final=True).encode("utf-8", "surrogatepass") if self._decoder else b""
            self._feed_bytes(tail, True)
        return self.links


def extract_css(text: str, base_url: str, context: str = "css") -> List[Link]:
    """Links of a style sheet: every ``url()``, ``@import`` and ``image-set()`` URL, hop E, in
    contexts ``{context}/url()``, ``{context}/@import``, ``{context}/image-set()``."""
    ex = _Extractor(base_url, css=True, css_context=context)
    ex._raw_codec, ex._raw_errors = "utf-8", "surrogatepass"
    ex._feed_bytes(text.encode("utf-8", "surrogatepass"), True)
    return ex.links


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
    HTML and XHTML through the kernel's HTML tokenizer, CSS through its CSS scanner, anything
    else none. Meta robots and X-Robots-Tag are ``warchive.capture.robots_meta.page_directives``'s
    job."""
    mime = (content_type or "").split(";", 1)[0].strip().lower()
    if mime in _HTML_TYPES:
        return extract_html(payload, url, sniff_charset(content_type, payload))
    if mime == "text/css":
        enc = codec_name(sniff_charset(content_type, b""))
        return extract_css(payload.decode(enc, "replace"), url)
    return []
