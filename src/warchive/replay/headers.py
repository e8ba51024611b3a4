"""The HTTP head of a replayed capture: which archived headers are sent as they are, which become
``X-Archive-Orig-*`` (kept for the curious, inert for the browser), which are rewritten into the
archive (Location, Content-Location, Content-Base, Link, Refresh, Set-Cookie), and what the
server must then do to the body (de-chunk, decode, recompute Content-Length). The rules are pywb
2.10's ``DefaultHeaderRewriter`` (with its ``HostScopeCookieRewriter``, the only cookie rules its
replay uses); docs/replay.md lists where and why we differ, with the headers that show it.

This module only computes a new head from an old one and a UrlRewriter; it reads no body and adds
none of the server's own headers (Memento, Content-Security-Policy, Content-Length).
"""

from __future__ import annotations

import re
from http.cookies import CookieError, Morsel, SimpleCookie
from typing import Dict, List, NamedTuple, Optional, Tuple
from urllib.parse import urlsplit

from ..warc.headers import Field, Headers
from .urls import UrlRewriter, link_modifier

ORIG_PREFIX = "X-Archive-Orig-"

# Modifiers under which URLs are not rewritten (pywb's RewriteInfo.is_url_rw): original bytes,
# the banner only, and a worker's raw fetch.
NO_URL_REWRITE = frozenset({"id_", "bn_", "wkrf_"})

# What happens to each header, by lower-case name; a name not listed is kept as it is.
#   keep        sent as archived
#   prefix      sent as X-Archive-Orig-<name>
#   cors        prefixed when URLs are rewritten, else kept (Access-Control-*)
#   encoding    prefixed when the body is decoded, else kept (Content-Encoding)
#   length      kept while the body is sent as stored and the value is a plain number
#   transfer    prefixed, and the body is de-chunked
#   url         rewritten when URLs are rewritten, else kept
#   location    rewritten always; without URL rewriting the original is kept prefixed beside it
#   fetch_url   rewritten when URLs are rewritten, else prefixed (the browser would fetch it)
#   link        each <URL> rewritten when URLs are rewritten, else prefixed
#   refresh     its URL rewritten when URLs are rewritten, else prefixed
#   cookie      scoped to the archival path and the replay host, else prefixed
RULES: Dict[str, str] = {
    **dict.fromkeys((
        "accept-patch", "accept-ranges", "allow", "content-disposition", "content-language",
        "content-range", "content-type", "proxy-authenticate", "www-authenticate"), "keep"),
    **dict.fromkeys((
        "age", "alt-svc", "cache-control", "connection", "content-md5", "content-security-policy",
        "content-security-policy-report-only", "date", "etag", "expires", "last-modified", "p3p",
        "pragma", "public-key-pins", "retry-after", "server", "status", "strict-transport-security",
        "trailer", "tk", "upgrade", "upgrade-insecure-requests", "vary", "via", "warning",
        "x-frame-options", "x-xss-protection"), "prefix"),
    # ours (pywb keeps them): hop-by-hop, or they would make the browser contact the live web,
    # clear or take over the replay origin, or claim a Memento-Datetime that is not the server's
    **dict.fromkeys((
        "keep-alive", "proxy-connection", "te", "clear-site-data", "nel", "report-to",
        "reporting-endpoints", "expect-ct", "public-key-pins-report-only", "service-worker-allowed",
        "speculation-rules", "memento-datetime"), "prefix"),
    **dict.fromkeys((
        "access-control-allow-origin", "access-control-allow-credentials", "access-control-expose-headers",
        "access-control-max-age", "access-control-allow-methods", "access-control-allow-headers"), "cors"),
    "content-encoding": "encoding",
    "content-length": "length",
    "transfer-encoding": "transfer",
    "content-base": "url",
    "content-location": "url",
    "location": "location",
    "sourcemap": "fetch_url",
    "x-sourcemap": "fetch_url",
    "link": "link",
    "refresh": "refresh",
    "set-cookie": "cookie",
}


class RewrittenHead(NamedTuple):
    """What ``rewrite_headers`` made of a capture's HTTP head.

    ``headers``: the status line as archived and the fields to send, in their order.
    ``dechunk``: the stored body carries Transfer-Encoding (chunked): send it de-chunked.
    ``decode``: the Content-Encoding to undo before sending (or rewriting) the body, None to send
    it encoded as stored. ``recompute_length``: ``headers`` holds no Content-Length, because the
    body sent is not the stored one or its length was not a plain number: the server sets it from
    the bytes it sends (or sends them chunked). Otherwise any Content-Length in ``headers`` is right.
    """

    headers: Headers
    dechunk: bool
    decode: Optional[str]
    recompute_length: bool


def rewrite_headers(http: Headers, rewriter: UrlRewriter, *, rewrite_body: bool = False,
                    accept_encoding: Optional[str] = None, prefix: str = ORIG_PREFIX) -> RewrittenHead:
    """The head to send for a replayed capture whose archived HTTP head is ``http``.

    ``rewriter`` is the UrlRewriter of the request (its page's modifier decides the mode: under
    ``id_``, ``bn_`` and ``wkrf_`` URLs are not rewritten). ``rewrite_body``: the server sends a
    body other than the stored payload (rewritten HTML/CSS/JS, or decoded to be looked at), as
    pywb's ``is_content_rw``. ``accept_encoding``: the client's Accept-Encoding (None: absent); a
    Content-Encoding it does not accept is decoded even when the body is not rewritten, as pywb
    does (in every mode). ``prefix`` is put before the names of inert headers.
    """
    mode = head_mode(http, rewriter, rewrite_body=rewrite_body, accept_encoding=accept_encoding, prefix=prefix)
    out: List[Field] = []
    for name, value in http.fields:
        if name.lower() in RULES:
            out += rewrite_field(name, value, mode, rewriter)
        else:   # (most fields: kept as they are)
            out.append((name, value))
    if rewriter.page.modifier == "sw_":   # a service worker may control the archived origin only
        parts = urlsplit(rewriter.page.url)
        out.append(("Service-Worker-Allowed", rewriter.rewrite(f"{parts.scheme}://{parts.netloc}/", "mp_")))
    return RewrittenHead(Headers(http.protocol, http.statusline, out), mode.dechunk, mode.decode,
                         recompute_length=mode.has_length and not mode.keep_length or mode.content_rw or mode.dechunk)


class HeadMode(NamedTuple):
    """What the whole head decides for each of its fields: ``url_rw`` (URLs are rewritten: not
    under ``id_``, ``bn_``, ``wkrf_``), ``decode`` (the Content-Encoding to undo, or None),
    ``content_rw`` (the body sent is not the stored one: rewritten or decoded), ``dechunk`` (a
    Transfer-Encoding is undone), ``keep_length`` (the archived Content-Length is the length of
    what is sent) and ``prefix`` (put before the names of inert headers)."""

    url_rw: bool
    decode: Optional[str]
    content_rw: bool
    dechunk: bool
    keep_length: bool
    prefix: str = ORIG_PREFIX
    has_length: bool = False   # the head has a Content-Length


def head_mode(http: Headers, rewriter: UrlRewriter, *, rewrite_body: bool = False,
              accept_encoding: Optional[str] = None, prefix: str = ORIG_PREFIX) -> HeadMode:
    """The HeadMode of ``http`` replayed through ``rewriter`` (arguments as ``rewrite_headers``)."""
    encoding: Optional[str] = None   # (the first, as http.get gives it)
    dechunk = False
    lengths = set()
    for k, v in http.fields:
        low = k.lower()
        if low == "content-encoding":
            if encoding is None:
                encoding = v
        elif low == "transfer-encoding":
            dechunk = True
        elif low == "content-length":
            lengths.add(v)
    decode: Optional[str] = None
    if encoding is not None and encoding.strip() and (rewrite_body or not _accepts(accept_encoding, encoding)):
        decode = encoding
    content_rw = rewrite_body or decode is not None
    value = next(iter(lengths)) if len(lengths) == 1 else ""
    keep_length = not (content_rw or dechunk) and value.isdigit() and value.isascii()
    return HeadMode(rewriter.page.modifier not in NO_URL_REWRITE, decode, content_rw, dechunk, keep_length, prefix,
                    bool(lengths))


def rewrite_field(name: str, value: str, mode: HeadMode, rewriter: UrlRewriter) -> List[Field]:
    """The fields sent in place of one archived field (none, one, or several for a Set-Cookie
    scoped to each modifier or a Location kept beside its rewritten form)."""
    rule = RULES.get(name.lower(), "keep")
    if rule == "keep":
        return [(name, value)]
    inert = [(mode.prefix + name, value)]
    if rule in ("prefix", "transfer"):
        return inert
    if rule == "cors":
        return inert if mode.url_rw else [(name, value)]
    if rule == "encoding":
        return inert if mode.content_rw else [(name, value)]
    if rule == "length":
        return [(name, value)] if mode.keep_length else inert
    if rule == "url":
        return [(name, rewriter.rewrite(value) if mode.url_rw else value)]
    if rule == "location":
        return [(name, rewriter.rewrite(value))] + ([] if mode.url_rw else inert)
    if not mode.url_rw:   # fetch_url, link, refresh, cookie: inert without URL rewriting
        return inert
    if rule == "fetch_url":
        return [(name, rewriter.rewrite(value))]
    if rule == "link":
        return [(name, rewrite_link(value, rewriter))]
    if rule == "refresh":
        return [(name, rewrite_refresh(value, rewriter))]
    return rewrite_set_cookie(value, rewriter)


def _accepts(accept_encoding: Optional[str], coding: str) -> bool:
    """Whether Accept-Encoding takes ``coding``: listed (or ``*``) with a q-value above 0."""
    want = coding.strip().lower()
    if want == "identity":
        return True
    if accept_encoding is None:
        return False
    star: Optional[bool] = None
    for item in accept_encoding.split(","):
        token, _, params = item.partition(";")
        token = token.strip().lower()
        q = 1.0
        for param in params.split(";"):
            k, _, v = param.partition("=")
            if k.strip().lower() == "q":
                try:
                    q = float(v.strip())
                except ValueError:
                    q = 0.0
        if token == want:
            return q > 0
        if token == "*":
            star = q > 0
    return bool(star)


# --------------------------------------------------------------------------- Link and Refresh

_LINK_PARAM = re.compile(r'\s*;\s*([!#$%&\'*+.^_`|~0-9A-Za-z-]+)\s*(?:=\s*("(?:[^"\\]|\\.)*"|[^;,]*))?')


def _link_params(params: str) -> Tuple[str, str]:
    rel = as_ = ""
    for m in _LINK_PARAM.finditer(params):
        value = (m.group(2) or "").strip()
        if value[:1] == '"':
            value = value[1:-1]
        name = m.group(1).lower()
        if name == "rel" and not rel:
            rel = value
        elif name == "as" and not as_:
            as_ = value
    return rel, as_


def rewrite_link(value: str, rewriter: UrlRewriter) -> str:
    """A Link header (RFC 8288: ``<URL>; rel=...; as=..., <URL>...``) with each URL rewritten,
    its modifier chosen by ``rel`` and ``as`` as for a ``<link>`` element; every other
    character is kept."""
    out: List[str] = []
    i, n = 0, len(value)
    while i < n:
        lt = value.find("<", i)
        gt = value.find(">", lt + 1) if lt >= 0 else -1
        if gt < 0:
            break
        j = gt + 1
        quoted = False
        while j < n:   # the link's parameters run to the next ',' outside a quoted string
            c = value[j]
            if quoted:
                if c == "\\":
                    j += 1
                elif c == '"':
                    quoted = False
            elif c == '"':
                quoted = True
            elif c == ",":
                break
            j += 1
        rel, as_ = _link_params(value[gt + 1 : j])
        out += [value[i : lt + 1], rewriter.rewrite(value[lt + 1 : gt], link_modifier(rel, as_)), value[gt:j]]
        i = j
    out.append(value[i:])
    return "".join(out)


_REFRESH = re.compile(r"(\s*[0-9.]*\s*(?:[;,]\s*)?(?:url\s*=\s*)?)(['\"]?)(.*)", re.I | re.S)


def rewrite_refresh(value: str, rewriter: UrlRewriter) -> str:
    """A Refresh header (or ``<meta http-equiv=refresh content>``: ``5; url=URL``, quoted or
    not, ``url=`` optional) with its URL rewritten; a bare delay is kept."""
    m = _REFRESH.match(value)
    assert m is not None   # every group may be empty
    head, quote, rest = m.groups()
    if quote and quote in rest:
        url, tail = rest.split(quote, 1)
        tail = quote + tail
    else:
        url = rest.rstrip()
        tail = rest[len(url) :]
    if not url.strip():
        return value
    return head + quote + rewriter.rewrite(url) + tail


# --------------------------------------------------------------------------- Set-Cookie

_EXPIRES = re.compile(r";\s*?expires=.{4}[^,;]+", re.I)
# The modifiers an HttpOnly cookie set under mp_/if_/sw_ is repeated for (its resources' paths).
_COOKIE_MODIFIERS = ("mp_", "cs_", "js_", "im_", "oe_", "if_", "sw_", "wkrf_")


def rewrite_set_cookie(value: str, rewriter: UrlRewriter) -> List[Field]:
    """The Set-Cookie headers that replace one archived Set-Cookie (pywb's host scope): a
    ``Domain`` is removed and the path becomes the archival URL of the page's host (the cookie
    then belongs to the replay host, under that path), any other ``Path`` is rewritten;
    ``Expires`` and ``Max-Age`` go (the cookie lasts the session), so does ``Secure`` unless the
    full prefix is https. An HttpOnly cookie whose path ends in ``/`` set under ``mp_``, ``if_``
    or ``sw_`` is set once per modifier its page's resources use. A value that Python's cookie
    parser rejects sets nothing (``[]``)."""
    try:
        jar = SimpleCookie(_EXPIRES.sub("", value))
    except CookieError:
        return []
    out: List[Field] = []
    mod = rewriter.page.modifier
    for morsel in jar.values():
        if morsel["domain"]:
            morsel["domain"] = ""
            morsel["path"] = rewriter.rewrite("/")
        elif morsel["path"]:
            morsel["path"] = rewriter.rewrite(morsel["path"])
        _scope(morsel, rewriter)
        path = morsel["path"]
        if mod in ("mp_", "if_", "sw_") and morsel["httponly"] and path.endswith("/"):
            for other in _COOKIE_MODIFIERS:
                morsel["path"] = path.replace(mod + "/", other + "/")
                out.append(("Set-Cookie", morsel.OutputString()))
        else:
            out.append(("Set-Cookie", morsel.OutputString()))
    return out


def _scope(morsel: "Morsel[str]", rewriter: UrlRewriter) -> None:
    path = morsel["path"]
    if path:
        at = path.find(rewriter.rel_prefix)
        if at > 0:   # an absolute archival URL: its path
            morsel["path"] = path[at:]
    if not rewriter.full_prefix.startswith("https://"):
        morsel["secure"] = ""
    morsel["expires"] = ""
    morsel["max-age"] = ""
