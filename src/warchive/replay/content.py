"""What a replayed body is and how it is rewritten: its text type (html, css, js, json, or
nothing to rewrite), found as pywb 2.10 finds it (the Content-Type's mime type, the modifier,
and for doubtful types the first bytes of the body), and the streaming rewriter of that type.

    kind = text_type("text/html; charset=utf-8", "mp_", url, first_bytes)   # "html"
    rw = body_rewriter(kind, url_rewriter, charset=..., head_insert=b"<script ...>")
    out = rw.feed(chunk) ... + rw.close()

A body rewriter is fed the payload in pieces and gives back bytes as soon as it can; every byte
it does not rewrite comes out as it went in. The HTML and CSS rewriters are
warchive.replay.html's (over the ext/html_rewrite kernel), the JavaScript one
warchive.replay.js's; until a type has one, its body is passed through, with the head insert
for HTML.
"""

from __future__ import annotations

import re
from typing import Optional, Protocol

from .js import JsRewriter
from .css import CssRewriter
from .html import HtmlRewriter
from .urls import UrlRewriter

# pywb's DefaultRewriter.rewrite_types: mime type -> text type ('guess-*': decided by the body)
REWRITE_TYPES = {
    "text/html": "guess-html", "application/xhtml": "html", "application/xhtml+xml": "html",
    "text/css": "css",
    "text/javascript": "js", "application/javascript": "js", "application/x-javascript": "js",
    "application/json": "json",
    "application/x-mpegURL": "hls", "application/vnd.apple.mpegurl": "hls",
    "application/dash+xml": "dash",
    "application/x-amf": "amf",
    "text/plain": "guess-text",
    "": "guess-text", "application/octet-stream": "guess-bin",
}
# the mime type a body gets when it is rewritten as another type than it was served as
DEFAULT_CONTENT_TYPES = {"html": "text/html", "css": "text/css", "js": "text/javascript"}
WORKER_MODIFIERS = ("sw_", "wkr_")
JSONP_MARKS = ("callback=jQuery", "callback=jsonp", ".json?")
SNIFF_BYTES = 1024

_TAG = re.compile(rb"^(?:\xef\xbb\xbf)?\s*<")
_TAG2 = re.compile(rb"^.*<[!]?\w+[\s>]", re.S)
_JSON = re.compile(rb"^\s*[{\[][{\"]")


def mime_of(content_type: Optional[str]) -> str:
    """The mime type of a Content-Type value, as pywb keys its table (case kept, no parameters)."""
    return (content_type or "").split(";", 1)[0].strip()


def charset_of(content_type: Optional[str]) -> Optional[str]:
    """The charset parameter of a Content-Type value, lower-cased (None: none given)."""
    parts = (content_type or "").split(";", 1)
    if len(parts) < 2:
        return None
    m = re.search(r"charset\s*=\s*[\"']?([^\"';\s]+)", parts[1], re.I)
    return m.group(1).lower() if m else None


def _resolve(orig: Optional[str], modifier: str, first: bytes) -> Optional[str]:
    if modifier in WORKER_MODIFIERS:
        return "js-worker"
    js_or_css = modifier in ("js_", "cs_")
    if orig in ("guess-text", "guess-html"):
        if not js_or_css and modifier not in ("fr_", "if_", "mp_", "bn_", ""):
            return None
    elif orig in ("guess-bin", "html"):
        if not js_or_css:
            return orig
    else:
        return orig
    if _TAG.match(first):
        return "html"
    if orig == "guess-html" and not js_or_css and _TAG2.match(first):
        return "html"
    if not js_or_css:
        return orig
    return "js" if modifier == "js_" else "css"


def rewrites(modifier: str) -> bool:
    """May a body asked with ``modifier`` be rewritten at all (not ``id_``: the bytes as archived)?"""
    return modifier != "id_"


def text_type(content_type: Optional[str], modifier: str, url: str, first: bytes) -> Optional[str]:
    """The text type a body is rewritten as ("html", "css", "js", "json", "js-worker", "hls",
    "dash", "amf"; None: not rewritten) from its Content-Type, the modifier it is asked with,
    its URL and its first bytes (SNIFF_BYTES of them), as pywb decides it."""
    if not rewrites(modifier):
        return None
    orig = REWRITE_TYPES.get(mime_of(content_type))
    kind = _resolve(orig, modifier, first)
    if kind in ("guess-text", "guess-bin", "guess-html"):
        kind = None
    if kind == "js" and any(m in url for m in JSONP_MARKS):
        kind = "json"
    if kind == "html" and url.endswith(".json") and _JSON.match(first[:56]):
        return "json"
    return kind


class BodyRewriter(Protocol):
    def feed(self, data: bytes) -> bytes: ...
    def close(self) -> bytes: ...


class PassThrough:
    """A body sent as it is."""

    def feed(self, data: bytes) -> bytes:
        return data

    def close(self) -> bytes:
        return b""


_HEAD_OPEN = re.compile(rb"<head(?:\s[^>]*)?>", re.I)
_BEFORE_HEAD = re.compile(rb"<(?:body|div|p|script|link|meta|title|style|img|a|table|frameset|noscript)[\s>/]", re.I)
HEAD_WINDOW = 64 * 1024


class HeadInsert:
    """An HTML body with ``insert`` placed right after its ``<head>`` tag or, when the page has
    none, before its first element that belongs in a head or body (at the very start when the
    first HEAD_WINDOW bytes show neither), as pywb places its head insert. ``inner`` (another
    body rewriter) is applied first."""

    def __init__(self, insert: bytes, inner: Optional[BodyRewriter] = None) -> None:
        self.insert = insert
        self.inner = inner if inner is not None else PassThrough()
        self._held = b""
        self._done = not insert

    def _place(self, data: bytes, final: bool) -> bytes:
        if self._done:
            return data
        buf = self._held + data
        m = _HEAD_OPEN.search(buf)
        cut = None
        if m is not None:
            cut = m.end()
        else:
            n = _BEFORE_HEAD.search(buf)
            if n is not None:
                cut = n.start()
            elif final or len(buf) >= HEAD_WINDOW:
                cut = _after_prolog(buf)
        if cut is None:
            self._held = buf
            return b""
        self._done, self._held = True, b""
        return buf[:cut] + self.insert + buf[cut:]

    def feed(self, data: bytes) -> bytes:
        return self._place(self.inner.feed(data), False)

    def close(self) -> bytes:
        return self._place(self.inner.close(), True)


_PROLOG = re.compile(rb"(?:\xef\xbb\xbf)?\s*(?:<!--.*?-->\s*|<\?[^>]*>\s*|<!doctype[^>]*>\s*|<html(?:\s[^>]*)?>\s*)*",
                     re.I | re.S)


def _after_prolog(buf: bytes) -> int:
    m = _PROLOG.match(buf)
    return m.end() if m else 0


def body_rewriter(kind: Optional[str], rewriter: UrlRewriter, *, charset: Optional[str] = None,
                  head_insert: bytes = b"", defmod: Optional[str] = None) -> BodyRewriter:
    """The streaming rewriter of a body of text type ``kind`` (see ``text_type``): HTML and CSS
    through the kernel (warchive.replay.html, .css), HTML with ``head_insert`` after its
    ``<head>`` and its inline scripts through warchive.replay.js, as JavaScript bodies are. ``defmod``: the modifier of the page's
    links and other navigations (pywb's replay modifier: ``mp_`` in framed replay)."""
    if kind == "html":
        return HeadInsert(head_insert, HtmlRewriter(rewriter, defmod=defmod, encoding=charset, scripts=True))
    if kind == "css":
        return CssRewriter(rewriter, encoding=charset)
    if kind == "js":
        return JsRewriter(rewriter.page.url)
    return PassThrough()


__all__ = ["BodyRewriter", "DEFAULT_CONTENT_TYPES", "HeadInsert", "PassThrough", "REWRITE_TYPES", "body_rewriter",
           "charset_of", "mime_of", "rewrites", "text_type"]
