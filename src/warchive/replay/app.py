"""The ASGI application: pywb's URL space over the collections of a root directory or a config.

    /                                   the collections
    /static/<file>                      the banner's and the client script's assets
    /<coll>/                            the collection's home page (search); ?url=... searches
    /<coll>/cdx?<params>                the CDX API (warchive.index.query), byte for byte `warchive cdx`
    /<coll>/timemap/<link|json|cdxj>/<url>   TimeMaps
    /<coll>/*/<url>, /<coll>/<from>*<to>/<url>   the captures of a URL; /<coll>/*/<prefix>* URLs
    /<coll>/[timestamp][modifier]/<url> a memento (warchive.replay.replayer); no timestamp: TimeGate

The path is read as sent (``raw_path``: %-escapes kept, as pywb reads ``REQUEST_URI``), so that
an archival URL reaches the parser unchanged. An unknown collection is 404, a collection whose
index cannot be opened 503 naming it (the others are served), an index failing while answering
500 naming the collection; a capture that is not there is 404 without Memento headers, one in
the index whose record cannot be read for an I/O error (nor any other capture near it) 503, as
pywb answers.

``create_app(root, config=...)`` returns the app; it binds nothing itself: `warchive serve`
runs it with uvicorn, and other servers can mount it under a path (``root_path``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import mimetypes
import os
import re
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from ..errors import ArchiveError, CaptureNotFound, CaptureUnavailable, UrlError
from ..index.capture import QueryError
from ..index.query import Answer
from .client import STATIC
from .collections import CollectionUnavailable, Collections, Served
from .config import ReplayConfig
from ..warc.screenshot import OTHER_PREFIXES, SCREENSHOT_PREFIX
from .pages import captures_page, collections_page, error_page, frame_page, home_page, human_date, urls_page
from .replayer import BadRequest, Reply, Replayer, Request
from .screenshots import find_screenshots
from .memento import TIMEMAP_TYPES, timemap_cdxj, timemap_headers, timemap_json, timemap_link
from .urls import ArchivalUrl, ArchivalUrlError, UrlRewriter

log = logging.getLogger("warchive.serve")

Scope = Dict[str, Any]
STATIC_DIR = os.path.join(os.path.dirname(__file__), "static")
URL_LIST_LIMIT = 1000
MAX_REQUEST_BODY = 16 << 20   # a POST/PUT body past this is 413: it is held whole to match the archived one
MAX_BODIES_HELD = 64 << 20    # request bodies held at once by all requests; past it, 503
RESOURCES_SHOWN = 4      # associated resources named in the banner, closest first
# The top frame's: the banner loads its own assets only, and its iframe may show the archive
# only (frame-src, added with the replay host): a page that navigates its frame to the live web
# is stopped by the browser before a request leaves.
FRAME_CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
             "object-src 'none'; base-uri 'none'; form-action 'self'")


class Route:
    """One line of the server's map: a path pattern and the ReplayApp method answering it.

    A pattern is ``/HEAD`` or ``/HEAD/TAIL``. HEAD is the path's first segment, read
    %-decoded: a literal, or ``{coll}`` (any name: the route is answered once that collection
    is found). TAIL is a literal, optionally ending with ``{name}``, which takes the rest of
    the path as sent, whatever it holds, and is passed to the method as ``name``. Archival
    URLs carry a whole URL, %-escapes, ``//`` and ``?`` included, after the modifier: hence
    this table rather than Starlette's routes, whose converters match the decoded path.
    ``api``: the answer is machine-read, so the collection's errors are JSON."""

    __slots__ = ("pattern", "endpoint", "api", "head", "in_collection", "tail", "name")

    def __init__(self, pattern: str, endpoint: str, api: bool = False) -> None:
        self.pattern, self.endpoint, self.api = pattern, endpoint, api
        head, sep, tail = pattern[1:].partition("/")
        self.in_collection = head == "{coll}"
        self.head = None if self.in_collection else head
        self.tail: Optional[str] = tail if sep else None   # None: the path has no second segment
        self.name: Optional[str] = None
        if sep and tail.endswith("}"):
            self.tail, _, name = tail[:-1].rpartition("{")
            self.name = name

    def match(self, head: str, sep: str, rest: str) -> Optional[Dict[str, str]]:
        """The method's keyword arguments when the path (first segment ``head``, then ``sep``
        and ``rest``) matches; else None."""
        if self.head is not None and head != self.head:
            return None
        if self.tail is None or not sep:
            return {} if self.tail is None and not sep else None
        if self.name is None:
            return {} if rest == self.tail else None
        return {self.name: rest[len(self.tail):]} if rest.startswith(self.tail) else None


# The server's map, tried in order (the module docstring describes each).
ROUTES = (
    Route("/", "_collections"),
    Route("/static/{name}", "_static_file"),
    Route("/favicon.ico", "_no_favicon"),
    Route("/favicon.ico/{rest}", "_no_favicon"),
    Route("/{coll}", "_to_home"),
    Route("/{coll}/", "_home"),
    Route("/{coll}/cdx", "_cdx", api=True),
    Route("/{coll}/timemap/{rest}", "_timemap", api=True),
    Route("/{coll}/{url}", "_archival"),
)


def query_string(scope: Scope) -> str:
    """The request's query string as the client sent it (as WSGI's QUERY_STRING, which pywb
    reads: bytes as Latin-1 characters)."""
    qs: bytes = scope.get("query_string", b"")
    return qs.decode("latin-1")


def _raw_path(scope: Scope) -> str:
    """The request path as sent (below the app's mount point), as text: UTF-8, or Latin-1."""
    raw = scope.get("raw_path")
    path = raw.decode("latin-1") if raw else quote(scope.get("path", "/"), safe="/%:@!$&'()*+,;=~")
    root = scope.get("root_path", "")
    if root and path.startswith(root):
        path = path[len(root):] or "/"
    if path.isascii():   # (the usual case: %-encoded)
        return path
    try:
        return path.encode("latin-1").decode("utf-8")
    except UnicodeDecodeError:
        return path


def _host_prefix(scope: Scope, headers: Mapping[str, str]) -> str:
    # The scheme is the server's (uvicorn sets it from X-Forwarded-Proto only for the proxies
    # `serve --trust-proxy` names); a client's own header is never written into links.
    scheme = scope.get("scheme", "http")
    if scheme not in ("http", "https"):
        scheme = "http"
    host = headers.get("host")
    if not host:
        server = scope.get("server") or ("127.0.0.1", 80)
        host = f"{server[0]}:{server[1]}"
    return f"{scheme}://{host}"


class _Static:
    """The files of static/, read once."""

    def __init__(self) -> None:
        self.files: Dict[str, Tuple[bytes, str]] = {}
        for name in os.listdir(STATIC_DIR):
            p = os.path.join(STATIC_DIR, name)
            if os.path.isfile(p):
                with open(p, "rb") as f:
                    data = f.read()
                ctype = mimetypes.guess_type(name)[0] or "application/octet-stream"
                if ctype.startswith("text/") or ctype.endswith("javascript"):
                    ctype += "; charset=utf-8"
                self.files[name] = (data, ctype)


class ReplayApp:
    """The ASGI app (see the module docstring)."""

    def __init__(self, colls: Collections, config: ReplayConfig) -> None:
        self.colls = colls
        self.config = config
        self.replayer = Replayer(config)
        self.static = _Static()
        self.bodies_held = 0   # bytes of POST/PUT bodies being read or held (MAX_BODIES_HELD)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                msg = await receive()
                if msg["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif msg["type"] == "lifespan.shutdown":
                    self.colls.close()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        method = scope.get("method", "GET")
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        body = b""
        refused: Optional[Reply] = None
        held = 0
        if method in ("POST", "PUT"):
            body, held, refused = await self._read_body(headers, receive)
        req = Request(method, headers, _host_prefix(scope, headers), scope.get("root_path", "").rstrip("/"), body)
        try:
            if refused is not None:
                reply = refused
            elif method == "OPTIONS" and "access-control-request-method" in headers:
                reply = self._preflight(headers)
            else:
                reply = self.route(_raw_path(scope), query_string(scope), req)
                if reply.prepare is not None:
                    reply = await self._prepared(reply, req)
        except Exception:
            log.exception("answering %s %s", method, scope.get("path"))
            reply = self._error(req, 500, "Server error", "the server failed answering this request (see its log)")
        finally:
            self.bodies_held -= held
        await self._send(reply, send, head_only=method == "HEAD", path=scope.get("path", ""))

    async def _prepared(self, reply: Reply, req: Request) -> Reply:
        """The reply ``reply.prepare`` makes, made in a thread: it reads and decodes (up to a
        range's start), which on the event loop would stop every other request meanwhile."""
        assert reply.prepare is not None
        try:
            return await asyncio.to_thread(reply.prepare)
        except ArchiveError as e:   # the record fails as it is read: as route answers that
            log.error("%s", e)
            return self._error(req, 500, "Archive error", str(e))

    async def _read_body(self, headers: Mapping[str, str], receive: Any) -> Tuple[bytes, int, Optional[Reply]]:
        """(body, bytes counted against MAX_BODIES_HELD, refusal) of a POST/PUT. A body is held whole
        (its lookup key is made of it), so its size is bounded (413) and so is what all requests
        hold at once (503); either refusal closes the connection, so the server does not read
        and discard the rest of a body it refused."""
        declared = headers.get("content-length", "")
        if declared.isascii() and declared.isdigit() and (len(declared) > 12 or int(declared) > MAX_REQUEST_BODY):
            return b"", 0, self._body_refused(413)
        parts: List[bytes] = []
        size = 0
        more = True
        while more:
            try:
                msg = await receive()
            except BaseException:   # (the client went away: what it sent is no longer held)
                self.bodies_held -= size
                raise
            piece = msg.get("body", b"")
            more = msg.get("more_body", False)
            size += len(piece)
            if size > MAX_REQUEST_BODY or self.bodies_held + len(piece) > MAX_BODIES_HELD:
                self.bodies_held -= size - len(piece)
                return b"", 0, self._body_refused(413 if size > MAX_REQUEST_BODY else 503)
            self.bodies_held += len(piece)
            parts.append(piece)
        return b"".join(parts), size, None

    def _body_refused(self, status: int) -> Reply:
        if status == 413:
            text = f"a request body of more than {MAX_REQUEST_BODY >> 20} MiB is not replayed\n"
        else:
            text = f"the server holds {MAX_BODIES_HELD >> 20} MiB of request bodies already; try again\n"
        headers = [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(text))),
                   ("Connection", "close")] + ([("Retry-After", "1")] if status == 503 else [])
        return Reply(status, headers, iter([text.encode("ascii")]))

    async def _send(self, reply: Reply, send: Any, head_only: bool, path: str = "") -> None:
        hdrs = [f for f in (_wire_field(k, v) for k, v in reply.headers) if f is not None]
        try:
            await send({"type": "http.response.start", "status": reply.status, "headers": hdrs})
            if head_only:
                await send({"type": "http.response.body", "body": b""})
                return
            promised = _content_length(hdrs)
            pending: Optional[bytes] = None
            sent = 0
            try:
                for piece in reply.body:
                    if pending is not None:
                        await send({"type": "http.response.body", "body": pending, "more_body": True})
                    pending = piece
                    sent += len(piece)
            except (ArchiveError, OSError) as e:
                broken: Optional[str] = str(e)
            else:
                broken = None if promised is None or sent >= promised else \
                    f"the archived payload ends after {sent} of the {promised} bytes its Content-Length claims"
            if broken is not None:
                # the head is out: the server closes the connection (the app returns without
                # ending the body), so the client sees a body cut short, not a whole one
                log.warning("%s: %s; the connection is closed", path, broken)
                if pending:
                    await send({"type": "http.response.body", "body": pending, "more_body": True})
                return
            await send({"type": "http.response.body", "body": pending or b""})
        finally:
            reply.close()

    def _preflight(self, headers: Mapping[str, str]) -> Reply:
        """A CORS preflight: a page in the sandboxed frame (an opaque origin) asking to send a
        script's request with other methods or headers than a simple one (pywb has none: such
        requests fail there). Allowed as asked when the frame is sandboxed; else refused."""
        if not self.config.sandboxed_frame:
            return Reply(403, [("Content-Length", "0")])
        allow = [("Access-Control-Allow-Origin", "*"), ("Access-Control-Max-Age", "600"),
                 ("Access-Control-Allow-Methods", "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS"),
                 ("Content-Length", "0")]
        asked = headers.get("access-control-request-headers", "")
        if asked:
            allow.append(("Access-Control-Allow-Headers", asked))
        return Reply(204, allow)

    # ------------------------------------------------------------------ routing
    def static_url(self, req: Request) -> str:
        return f"{req.host_prefix}{req.app_prefix}/{STATIC}"

    def route(self, path: str, qs: str, req: Request) -> Reply:
        """The reply of the first route of ROUTES that matches ``path``; a route under a
        collection is answered once the collection is found (else 503, 404 or, from a replayed
        page, a redirect back into the archive)."""
        if not path.startswith("/"):
            path = "/" + path
        head, sep, rest = path[1:].partition("/")
        if "%" in head:
            head = unquote(head)
        for r in ROUTES:
            params = r.match(head, sep, rest)
            if params is None:
                continue
            endpoint = getattr(self, r.endpoint)
            if not r.in_collection:
                return endpoint(req, qs, **params)
            try:
                served = self.colls.get(head)
            except CollectionUnavailable as e:
                return _json(503, str(e)) if r.api else self._error(req, 503, "Collection unavailable", str(e))
            if served is None:
                back = self._from_referrer(path, qs, req)
                if back is not None:
                    return back
                msg = f"no collection {head!r}"
                return _json(404, msg) if r.api else self._error(req, 404, "No such collection", msg)
            return endpoint(served, req, qs, **params)
        raise AssertionError(f"no route for {path!r}")   # (the last route takes every path under a collection)

    # ------------------------------------------------------------------ endpoints (ROUTES)
    def _no_favicon(self, req: Request, qs: str, rest: str = "") -> Reply:
        return self._error(req, 404, "Not found", "no favicon")

    def _to_home(self, served: Served, req: Request, qs: str) -> Reply:
        return Reply(301, [("Location", f"{req.app_prefix}/{quote(served.name)}/"), ("Content-Length", "0")])

    def _archival(self, served: Served, req: Request, qs: str, url: str) -> Reply:
        """``[timestamp][modifier]/URL``, ``*/URL`` and the other archival URLs (ArchivalUrl)."""
        coll = served.name
        target = url + ("?" + qs if qs else "")
        try:
            aurl = ArchivalUrl.parse(target)
        except ArchivalUrlError as e:
            return self._replay_error(req, 400, "Bad archival URL", str(e), served)
        try:
            if aurl.is_query:
                return self._query_page(served, aurl, req)
            reply = self.replayer.replay(served, aurl, req)
            if reply.frame is not None:
                return self._frame(served, reply, req)
            return reply
        except (BadRequest, QueryError, UrlError) as e:   # the asked URL has no key (`javascript:alert(1)`)
            return self._replay_error(req, 400, "Bad request", str(e), served)
        except CaptureUnavailable as e:   # in the index, but reading its WARC failed: pywb's 503
            log.error("collection %r: %s", coll, e)
            return self._replay_error(req, 503, "Archive not available", str(e), served)
        except CaptureNotFound as e:
            log.info("%s: %s", coll, e)
            return self._replay_error(req, 404, "Not in the archive",
                                      f"{aurl.url} is not in the collection {coll}" +
                                      (f" near {aurl.timestamp}" if aurl.timestamp else ""), served)
        except ArchiveError as e:
            log.error("collection %r: %s", coll, e)
            return self._replay_error(req, 500, "Archive error", f"collection {coll!r}: {e}", served)

    def _from_referrer(self, path: str, qs: str, req: Request) -> Optional[Reply]:
        """A root-relative URL that escaped rewriting (``/img/a.png`` from a script) asked by a
        replayed page: 307 to it under the page's collection, time and modifier, read from the
        Referer (pywb does the same). None when the Referer is no archival URL of ours."""
        ref = req.headers.get("referer", "")
        own = req.host_prefix + req.app_prefix + "/"
        if not ref.startswith(own):
            return None
        coll, sep, rest = ref[len(own):].partition("/")
        if not sep or coll == "static":
            return None
        try:
            if self.colls.get(unquote(coll)) is None:
                return None
            page = ArchivalUrl.parse(rest)
        except (ArchiveError, ValueError):
            return None
        if not page.is_replay or not page.url.startswith(("http:", "https:")):
            return None
        parts = urlsplit(page.url)
        target = f"{parts.scheme}://{parts.netloc}{path}" + ("?" + qs if qs else "")
        mod = page.modifier if page.modifier not in ("", "mp_") else "mp_"
        loc = own + coll + "/" + str(ArchivalUrl(target, page.timestamp, mod))
        reply = Reply(307, [("Location", loc), ("Content-Length", "0")])
        if self.config.sandboxed_frame:
            # a script's fetch from the sandboxed frame (an opaque origin) follows it
            reply.headers.append(("Access-Control-Allow-Origin", "*"))
        return reply

    # ------------------------------------------------------------------ pages
    def _error(self, req: Request, status: int, title: str, message: str, served: Optional[Served] = None) -> Reply:
        crumbs = [(served.name, f"{req.app_prefix}/{quote(served.name)}/")] if served is not None else []
        body = error_page(status, title, message, static=self.static_url(req), app_prefix=req.app_prefix,
                          crumbs=crumbs)
        return _html(status, body)

    def _replay_error(self, req: Request, status: int, title: str, message: str, served: Served) -> Reply:
        """An error answering an archival URL, which an archived page may have asked from a
        script or as a font: readable by the sandboxed frame (an opaque origin) as replayed
        responses are, so that the page sees the status as it would have seen the live one's,
        not a network error (a fetch() rejected, where live it resolved with a 404)."""
        reply = self._error(req, status, title, message, served)
        if self.config.sandboxed_frame:
            reply.headers.append(("Access-Control-Allow-Origin", "*"))
        return reply

    def _collections(self, req: Request, qs: str) -> Reply:
        names = self.colls.names()
        bad: Dict[str, str] = {}
        for n in names:
            try:
                self.colls.get(n)
            except CollectionUnavailable as e:
                bad[n] = str(e)
        return _html(200, collections_page(names, app_prefix=req.app_prefix, static=self.static_url(req),
                                           unavailable=bad))

    def _home(self, served: Served, req: Request, qs: str) -> Reply:
        coll_url = f"{req.app_prefix}/{quote(served.name)}/"
        params = dict(parse_qsl(qs))
        url = params.get("url", "").strip()
        if url:   # the search form: to the captures (or URLs) page
            match = params.get("matchType", "exact")
            lo, hi = params.get("from", ""), params.get("to", "")
            span = f"{lo}*{hi}" if (lo or hi) else "*"
            if match == "prefix":
                target = f"{span}/{url.rstrip('*')}*"
            elif match in ("host", "domain"):
                target = f"{span}/{url}"
                try:
                    return self._url_list(served, ArchivalUrl.parse(target), req, match)
                except (ArchivalUrlError, QueryError, UrlError) as e:   # no URL (`http://[`): no key
                    return self._error(req, 400, "Bad request", str(e), served)
            else:
                target = f"{span}/{url}"
            return Reply(302, [("Location", coll_url + target), ("Content-Length", "0")])
        return _html(200, home_page(served.name, coll_url=coll_url, app_prefix=req.app_prefix,
                                    static=self.static_url(req)))

    def _query_page(self, served: Served, aurl: ArchivalUrl, req: Request) -> Reply:
        if aurl.type == "url_query":
            return self._url_list(served, aurl, req, "prefix")
        coll_url = f"{req.app_prefix}/{quote(served.name)}/"
        full = f"{req.host_prefix}{coll_url}"
        params: Dict[str, Any] = {"matchType": "exact", "allowFuzzy": "false"}
        if aurl.timestamp:
            params["from"] = aurl.timestamp
        if aurl.end_timestamp:
            params["to"] = aurl.end_timestamp
        if aurl.modifier:   # pywb's output names: the CDX API's answer
            out = {"timemap-link": "link", "json": "json", "cdxj": "cdxj", "link": "link"}.get(aurl.modifier)
            if out is not None:
                return self._cdx(served, req, "url=" + quote(aurl.url, safe="") + "&output=" + out +
                                 "".join(f"&{k}={v}" for k, v in params.items() if k in ("from", "to")))
        caps = self._query(served, aurl.url, **params)
        return _html(200, captures_page(served.name, aurl.url, caps, full_prefix=full, coll_url=coll_url,
                                        app_prefix=req.app_prefix, static=self.static_url(req)))

    def _url_list(self, served: Served, aurl: ArchivalUrl, req: Request, match: str) -> Reply:
        coll_url = f"{req.app_prefix}/{quote(served.name)}/"
        full = f"{req.host_prefix}{coll_url}"
        url = aurl.url.rstrip("*")
        params: Dict[str, Any] = {"matchType": match, "allowFuzzy": "false", "limit": str(URL_LIST_LIMIT * 20)}
        if aurl.timestamp:
            params["from"] = aurl.timestamp
        if aurl.end_timestamp:
            params["to"] = aurl.end_timestamp
        caps = self._query(served, url, **params)
        urls = {c.url for c in caps}
        return _html(200, urls_page(served.name, url, caps, full_prefix=full, coll_url=coll_url,
                                    app_prefix=req.app_prefix, static=self.static_url(req),
                                    more=len(caps) >= URL_LIST_LIMIT * 20 or len(urls) > URL_LIST_LIMIT))

    def _query(self, served: Served, url: str, **params: Any) -> List[Any]:
        index = served.loader.index
        return list(index.query(url, **params)) if index is not None else []

    def _frame(self, served: Served, reply: Reply, req: Request) -> Reply:
        f = reply.frame
        assert f is not None
        url = str(f["url"])
        ts = str(f["timestamp"])
        full = str(f["full_prefix"])
        resources: List[Tuple[str, str]] = []
        index = served.loader.index
        if index is not None and ts:
            try:
                shots = find_screenshots(index, url, closest=ts, prefixes=(SCREENSHOT_PREFIX,) + OTHER_PREFIXES)
            except ArchiveError:
                shots = []
            for c in shots[:RESOURCES_SHOWN]:
                kind = (c.url or "urn:screenshot:").split(":", 2)[1]
                label = "screenshot" if kind == "screenshot" else f"{kind} screenshot"
                resources.append((f"{label} ({human_date(c.timestamp)})",
                                  full + str(ArchivalUrl(c.url or "", c.timestamp, "id_"))))
        body = frame_page(coll=served.name, url=url, timestamp=ts, captures=f["captures"],
                          content_url=str(f["content_url"]), full_prefix=full, static=self.static_url(req),
                          coll_url=f"{req.app_prefix}/{quote(served.name)}/", banner=self.config.banner,
                          sandboxed=not self.config.replay_host, resources=resources)
        csp = f"{FRAME_CSP}; frame-src 'self'{' ' + self.config.replay_host if self.config.replay_host else ''}"
        return _html(200, body, extra=[h for h in reply.headers if h[0].lower() != "content-type"] +
                     [("Content-Security-Policy", csp)])

    def _static_file(self, req: Request, qs: str, name: str) -> Reply:
        hit = self.static.files.get(name)
        if hit is None:
            return self._error(req, 404, "Not found", f"no static file {name!r}")
        data, ctype = hit
        return Reply(200, [("Content-Type", ctype), ("Content-Length", str(len(data))),
                           ("Cache-Control", "public, max-age=3600")], iter([data]))

    # ------------------------------------------------------------------ the CDX API and TimeMaps
    def _cdx(self, served: Served, req: Request, qs: str) -> Reply:
        try:
            ans: Answer = served.engine.answer(qs)
            body = b"".join(ans.body)
        except ArchiveError as e:   # an index damaged under the server: this request fails, not the server
            log.error("collection %r: %s", served.name, e)
            return _json(500, f"collection {served.name!r}: {e}")
        return Reply(ans.status, [("content-type", ans.content_type), ("content-length", str(len(body)))],
                     iter([body]))

    def _timemap(self, served: Served, req: Request, qs: str, rest: str) -> Reply:
        """``timemap/FORM/[FROM[*TO]/]URL``: the TimeMap of URL (a page of it, from FROM)."""
        form, _, target = rest.partition("/")
        if not form or not target:
            return self._error(req, 404, "Not found", "a TimeMap is timemap/link|json|cdxj/URL", served)
        if form not in TIMEMAP_TYPES:   # pywb's answer: the form is the CDX API's output parameter
            return _json(400, f"output={form} not supported")
        m = _RANGE.match(target)
        lo, hi = (m.group(1), m.group(3) or "") if m else ("", "")
        if m:
            target = target[m.end():]
        target += "?" + qs if qs else ""
        try:
            page = ArchivalUrl(target, lo, end_timestamp=hi, type="query")
        except ArchivalUrlError as e:
            return self._error(req, 400, "Bad URL", str(e), served)
        full = f"{req.host_prefix}{req.app_prefix}/{served.name}/"
        rw = UrlRewriter(page, full, full)
        params: Dict[str, Any] = {"matchType": "exact", "allowFuzzy": "false"}
        if lo:
            params["from"] = lo
        if hi:
            params["to"] = hi
        try:
            caps = self._query(served, page.url, **params)
        except (QueryError, UrlError) as e:   # a URL with no key (a port past 65535, `http://[`): as the CDX API
            return _json(400, str(e))
        except ArchiveError as e:
            return _json(500, f"collection {served.name!r}: {e}")
        if form == "link":
            body = timemap_link(caps, rw, replay_mod=self.replayer.replay_mod)
        else:
            body = (timemap_json if form == "json" else timemap_cdxj)(caps) or None
        if not body:   # as pywb: the TimeMap's own type, nothing in it (a client reads no HTML page as one)
            return Reply(404, [("Content-Type", TIMEMAP_TYPES[form]), ("Content-Length", "0")], iter([b""]))
        # pywb answers its TimeMap route as a TimeGate would (Vary: accept-datetime): kept, harmless
        head = timemap_headers(rw, form) + [("Vary", "accept-datetime"), ("Content-Length", str(len(body)))]
        return Reply(200, head, iter([body]))


_RANGE = re.compile(r"([0-9]+)(\*([0-9]*))?/")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
# the control characters but tab, as spaces (a byte table: one pass over the encoded value)
_CTL_TO_SPACE = bytes(32 if (c < 32 and c != 9) or c == 127 else c for c in range(256))


_NAMES: Dict[str, Optional[bytes]] = {}   # header names seen, as sent (None: no token, dropped)


def _wire_field(name: str, value: str) -> Optional[Tuple[bytes, bytes]]:
    """A header field as sent: an archived head may hold CR, LF or NUL inside a value (a lone
    CR, a folded line) or a name that is no token; sent as they are, they would split the head
    (header injection, response splitting) or make the server fail. Such a name is dropped, such
    characters become spaces; characters past Latin-1 become '?' (docs/security.md)."""
    try:
        wire = _NAMES[name]
    except KeyError:
        wire = name.encode("ascii") if _TOKEN.fullmatch(name) else None
        if len(_NAMES) < 4096:
            _NAMES[name] = wire
    if wire is None:
        return None
    return wire, value.encode("latin-1", "replace").translate(_CTL_TO_SPACE)


def _content_length(fields: List[Tuple[bytes, bytes]]) -> Optional[int]:
    """The Content-Length of a reply's fields as sent (the app's own: a number)."""
    for k, v in fields:
        if k.lower() == b"content-length" and v.isdigit() and len(v) <= 18:
            return int(v)
    return None


def _html(status: int, body: bytes, extra: Optional[List[Tuple[str, str]]] = None) -> Reply:
    h = [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body)))]
    return Reply(status, h + (extra or []), iter([body]))


def _json(status: int, message: str) -> Reply:
    body = json.dumps({"message": message}).encode("utf-8")
    return Reply(status, [("content-type", "application/json; charset=utf-8"), ("content-length", str(len(body)))],
                 iter([body]))


def create_app(root: Optional[str] = None, *, config: Union[None, str, ReplayConfig] = None,
               **options: Any) -> ReplayApp:
    """The ASGI app serving the collections under ``root`` and/or those of ``config`` (a
    ReplayConfig, or the path of a pywb-style config.yaml); ``options`` set ReplayConfig's
    fields (``framed_replay=False``, ``redirect_to_exact=True``, ``replay_host=...``)."""
    conf = ReplayConfig.load(config) if isinstance(config, str) else (config or ReplayConfig())
    if options:
        conf = ReplayConfig(**{**conf.__dict__, **options})
    return ReplayApp(Collections(root, conf), conf)


__all__ = ["CollectionUnavailable", "Collections", "ReplayApp", "create_app", "query_string"]
