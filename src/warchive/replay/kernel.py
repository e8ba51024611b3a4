"""The rewriting kernel (ext/html_rewrite) set up for one archived page, and its Python side.

``StreamRewriter`` is what ``warchive.replay.html`` and ``warchive.replay.css`` build on: it gives
the kernel the pieces of the page's archival URLs for each modifier (computed by the page's
``UrlRewriter`` itself, so that the kernel's fast path writes what ``UrlRewriter.rewrite`` would),
the prefixes and the base, and answers the kernel's requests: a URL its C fast path does not
handle (decoded from the document's charset, character references and CSS escapes; rewritten by
``UrlRewriter.rewrite``; escaped back for where it stands), and the first ``<base href>``
(rewritten, then the base of what follows).

The document's charset: an ASCII-compatible one (UTF-8, ISO-8859-*, windows-*, EUC-*, GBK,
Big5, Shift_JIS...) is tokenized byte for byte, every byte outside a rewritten URL passed on as
it is. UTF-16 and UTF-32 (named, or found by their byte-order mark), UTF-7, the ISO-2022 family,
HZ and EBCDIC code pages, whose bytes for '<' or '"' are not ASCII's (or may stand for other
characters), are decoded, tokenized as UTF-8 and encoded again: the text outside URLs comes out
the same, and for UTF-16 and UTF-32 the same bytes too (lone surrogates kept; a final odd byte
passed on as it is); bytes that make no character in such a charset (a UTF-32 unit past
U+10FFFF, a broken ISO-2022 escape) come out as U+FFFD in it, as a browser shows them, or "?"
where the charset has no U+FFFD; a stateful encoding (ISO-2022, HZ, UTF-7) may come out with other escape
sequences for the same text.

With ``scripts``, the text of inline JavaScript ``<script>`` elements goes, piece by piece as the
kernel reads it, through warchive.replay.js's streaming rewriter (one per script), and so do
event handler attributes (``onclick=...``) that name what it rewrites.

This module rewrites nothing itself but through UrlRewriter and JsRewriter, and decides nothing
about which attributes hold URLs or which scripts are JavaScript: that is the kernel's.
"""

from __future__ import annotations

import codecs
from typing import Dict, List, Optional, Tuple, Union
from urllib.parse import urlsplit, urlunsplit

from .._ext import html_rewrite as _k
from ..htmltext import C0_OR_SPACE, codec_name, css_escape, css_unescape, escape_attr, transcodes, unescape_attr
from .js import JsRewriter, rewrite_js
from .urls import ArchivalUrl, ArchivalUrlError, UrlRewriter

__all__ = ["StreamRewriter", "ensure_path"]

_SENTINEL = "sentinel.warchive.invalid"
_SAFE_HEAD = frozenset(map(chr, range(0x21, 0x7F))) - set("\"'<>&\\`")
_QUOTE_OF = {1: "", 2: '"', 3: "'"}
_CSS_QUOTE_OF = {1: "", 2: '"', 3: "'"}


def _transcode_errors(e: UnicodeError) -> Tuple[Union[str, bytes], int]:
    """The error handler of transcoding: lone surrogates pass (surrogatepass), anything else
    that makes no character is replaced (U+FFFD decoding, the charset's "?" encoding)."""
    try:
        return _SURROGATEPASS(e)
    except UnicodeError:
        return codecs.replace_errors(e)


_SURROGATEPASS = codecs.lookup_error("surrogatepass")
TRANSCODE_ERRORS = "warchive-transcode"
codecs.register_error(TRANSCODE_ERRORS, _transcode_errors)


def _bom_codec(head: bytes) -> Optional[str]:
    """The charset a byte-order mark names (it overrides any other, as in browsers)."""
    if head.startswith(b"\xef\xbb\xbf"):
        return "utf-8"
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "utf-32-le" if head[0] == 0xFF else "utf-32-be"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16-le" if head[0] == 0xFF else "utf-16-be"
    return None


def _explicit(codec: str) -> str:
    """UTF-16/32 without a byte order: little-endian, the BOM kept as a character (so that it is
    written back, not dropped or doubled)."""
    return {"utf-16": "utf-16-le", "utf-32": "utf-32-le"}.get(codec, codec)


def ensure_path(url: str) -> str:
    """pywb's ``_ensure_url_has_path``: ``http://example.com#a`` becomes ``http://example.com/#a``."""
    i = url.find("://")
    rest = url[i + 3:] if i > 0 else url[2:] if url.startswith("//") else url
    if "/" in rest:
        return url
    try:
        scheme, netloc, path, query, frag = urlsplit(url)
    except ValueError:
        return url
    return urlunsplit((scheme, netloc, path or "/", query, frag))


_Pieces = Optional[Tuple[bytes, bytes, bytes, bytes]]
_PIECES: Dict[Tuple[object, ...], Tuple[_Pieces, ...]] = {}


def _pieces(rw: UrlRewriter, modifiers: Tuple[str, ...]) -> Tuple[_Pieces, ...]:
    """What UrlRewriter puts before and after the target of an absolute, a root-relative and a
    scheme-relative reference under each of ``modifiers`` (the same for every page of a
    collection, time and modifier: cached), read off its own answers on a page of a sentinel
    host; None for a modifier whose pieces are not plain (the kernel then asks Python for every
    URL of it)."""
    page = rw.page
    key = (rw.prefix, rw.full_prefix, rw.rel_prefix, page.type, page.timestamp, page.end_timestamp,
           page.modifier, modifiers)
    got = _PIECES.get(key)
    if got is None:
        if len(_PIECES) > 1024:
            _PIECES.clear()
        known: Dict[str, _Pieces] = {}
        for mod in modifiers:
            if mod not in known:
                known[mod] = _read_pieces(rw, mod)
        _PIECES[key] = got = tuple(known[mod] for mod in modifiers)
    return got


def _read_pieces(rw: UrlRewriter, modifier: str) -> _Pieces:
    absolute, scheme_rel, path = f"http://{_SENTINEL}/", f"//{_SENTINEL}/", "/warchive-sentinel/x"
    page = rw.page
    try:
        spage = ArchivalUrl(f"http://{_SENTINEL}/dir/page", page.timestamp, page.modifier,
                            end_timestamp=page.end_timestamp, type=page.type)
        srw = UrlRewriter(spage, rw.prefix, rw.full_prefix, rel_prefix=rw.rel_prefix)
        r = srw.rewrite(absolute, modifier)
        i = r.find(absolute)
        if i < 0 or r.count(absolute) != 1:
            return None
        head, tail = r[:i], r[i + len(absolute):]
        r = srw.rewrite(scheme_rel, modifier)
        if not r.endswith(scheme_rel + tail):
            return None
        head_sr = r[: len(r) - len(scheme_rel) - len(tail)]
        target = f"http://{_SENTINEL}{path}"
        r = srw.rewrite(path, modifier)
        if not r.endswith(target + tail):
            return None
        head_rel = r[: len(r) - len(target) - len(tail)]
    except (ArchivalUrlError, ValueError):
        return None
    if srw.prefix_abs and (head.count("/") < 3 or ":" not in head):
        return None            # UrlRewriter would cut into the target itself
    parts = (head, head_rel, head_sr, tail)
    if not all(set(p) <= _SAFE_HEAD for p in parts):
        return None
    return tuple(p.encode("ascii") for p in parts)   # type: ignore[return-value]


class StreamRewriter:
    """Rewrites one document's URLs chunk by chunk: ``feed(chunk)`` returns the output so far,
    ``close()`` the rest (a construct still held). See ``warchive.replay.html.HtmlRewriter``."""

    def __init__(self, rewriter: UrlRewriter, *, css: bool = False, defmod: Optional[str] = None,
                 encoding: Optional[str] = None, scripts: bool = False) -> None:
        self.rewriter = rewriter
        self.defmod = rewriter.page.modifier if defmod is None else defmod
        self._mods: Tuple[str, ...] = tuple(self.defmod if s == "def" else s for s in _k.SLOTS)
        self._codec = codec_name(encoding)
        self._decided = False
        self._css = css
        self._kernel = _k.Kernel(self, css=css, scripts=scripts)
        self._js: Optional[JsRewriter] = None   # the inline script being read (scripts)
        self._set_page()
        prefix, full = rewriter.prefix, rewriter.full_prefix
        self._kernel.set_prefixes(prefix.encode("utf-8", "surrogatepass"), full.encode("utf-8", "surrogatepass"),
                                  bool(prefix) and prefix != "/", full != prefix)
        self._kernel.set_heads(_pieces(rewriter, self._mods))
        self._dec: Optional[codecs.IncrementalDecoder] = None
        self._enc: Optional[codecs.IncrementalEncoder] = None
        self._text = "utf-8"             # the charset of what the kernel reads
        self._first = b""

    # -- set-up

    def _set_page(self) -> None:
        url = self.rewriter.page.url
        self._kernel.set_base(url.encode("ascii") if url.isascii() else b"")

    def _start(self, codec: str) -> None:
        self._decided = True
        self._codec = _explicit(codec)
        if transcodes(self._codec):
            self._dec = codecs.getincrementaldecoder(self._codec)(TRANSCODE_ERRORS)
            self._enc = codecs.getincrementalencoder(self._codec)(TRANSCODE_ERRORS)
            self._text = "utf-8"
        else:
            self._text = self._codec

    # -- the kernel's requests

    def on_url(self, raw: bytes, ctx: int, slot: int, force_abs: bool) -> Optional[bytes]:
        attr, css = ctx & 3, (ctx >> 2) & 3
        text = raw.decode(self._text, "surrogateescape")
        if attr:
            text = unescape_attr(text)
        if css:
            text = css_unescape(text)
        if not text.strip(C0_OR_SPACE):
            return None
        try:
            out = self.rewriter.rewrite(text, self._mods[slot], force_abs=force_abs)
        except ArchivalUrlError:
            return None
        if out == text:
            return None
        return self._write(out, attr, css, b"&" in raw)

    def on_base(self, raw: bytes, ctx: int) -> Optional[bytes]:
        attr = ctx & 3
        text = unescape_attr(raw.decode(self._text, "surrogateescape")).strip(C0_OR_SPACE)
        url = ensure_path(text)
        try:
            out = self.rewriter.rewrite(url, self.defmod)
            self.rewriter = self.rewriter.rebase(url)
        except (ArchivalUrlError, ValueError):
            return None
        self._set_page()
        if out == text:
            return None
        return self._write(out, attr, 0, b"&" in raw)

    def on_script(self, raw: bytes, last: bool) -> Optional[bytes]:
        """The next piece of an inline script's text, through warchive.replay.js (its
        ``import()`` relative to the document's base URL, as a classic script's are)."""
        js = self._js
        if js is None:
            js = self._js = JsRewriter(self.rewriter.page.url)
        out = js.feed(raw)
        if last:
            out += js.close()
            self._js = None
        return None if out == raw else out

    def on_handler(self, raw: bytes, ctx: int) -> Optional[bytes]:
        """An event handler attribute's script (as the document holds it: character references
        decoded first, escaped again for its quotes), through warchive.replay.js."""
        attr = ctx & 3
        text = unescape_attr(raw.decode(self._text, "surrogateescape"))
        out = rewrite_js(text, self.rewriter.page.url)
        if out == text:
            return None
        return self._write(out, attr, 0, b"&" in raw)

    def on_link_base(self, raw: bytes, ctx: int, links: List[_k.LinkRecord]) -> None:   # links mode only
        raise AssertionError("not a link extractor")

    def _write(self, out: str, attr: int, css: int, amp: bool) -> bytes:
        if css:
            out = css_escape(out, _CSS_QUOTE_OF[css])
        if attr:
            out = escape_attr(out, _QUOTE_OF[attr], amp)
        try:
            return out.encode(self._text, "surrogateescape")
        except UnicodeEncodeError:
            if attr:
                return out.encode(self._text, "xmlcharrefreplace")
            return "".join(c if c.isascii() else f"\\{ord(c):X} " for c in out).encode(self._text)

    # -- input

    def feed(self, data: bytes) -> bytes:
        """Rewrite the next chunk; returns the output it completes (possibly b"")."""
        return self._feed(data, False)

    def close(self) -> bytes:
        """The end of the document: the output still held."""
        return self._feed(b"", True)

    def _feed(self, data: bytes, final: bool) -> bytes:
        if not self._decided:
            if self._first:
                data = self._first + bytes(data)
            if len(data) < 4 and not final:
                self._first = bytes(data)
                return b""
            self._first = b""
            self._start(_bom_codec(data[:4]) or self._codec)
        if self._dec is None:
            return self._kernel.feed(data, final)   # type: ignore[return-value]
        assert self._enc is not None
        text = self._dec.decode(data, False)
        tail = self._dec.getstate()[0] if final else b""   # bytes that make no character: as they are
        out = self._kernel.feed(text.encode("utf-8", "surrogatepass"), final)
        assert isinstance(out, bytes)
        return self._enc.encode(out.decode("utf-8", "surrogatepass"), final) + tail
