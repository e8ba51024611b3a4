"""A test web site: a real HTTP server on 127.0.0.1 (port 0) serving many virtual hosts.

Named ``testsite`` and not ``site`` because ``site`` is a standard-library module that Python
imports at start-up (``import site`` would never reach this file).

The server sends exact, known bytes: every response is assembled here byte by byte (status line,
headers, chunked framing, gzip) so a test can compare a WARC record with what was sent, and every
request is logged with a server-side timestamp (``Site.log``, a list of ``Hit``) for politeness
and resume assertions. It runs its own asyncio loop in a daemon thread, so synchronous tests,
asyncio tests and benchmarks all use it the same way::

    with Site.default(n_hosts=5) as site:
        site.url("h001.site.test", "/")        # "http://h001.site.test:PORT/"
        site.resolver()                         # a StaticResolver mapping *.site.test to 127.0.0.1
        site.hits(host="h001.site.test")        # [Hit(t, host, method, target, request, response, ...)]

Every host of ``Site.default`` serves the same layout (``LAYOUT`` lists it); host ``h000`` also
has ``Crawl-delay: 1`` in its robots.txt and every host disallows ``/private/``. Hosts are
``hNNN.site.test`` (``.test`` is reserved: such names never resolve on the real network).
This module must not import the crawler: it is the ground truth the crawler is tested against.
"""

from __future__ import annotations

import asyncio
import gzip as _gzip
import threading
import time
import zlib
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import pytest

DOMAIN = "site.test"

# --------------------------------------------------------------------------- exact bytes


def response_bytes(status: int, body: bytes = b"", headers: Sequence[Tuple[str, str]] = (),
                   reason: Optional[str] = None, version: str = "HTTP/1.1", chunked: Optional[int] = None,
                   content_length: bool = True) -> bytes:
    """A whole response, byte by byte. ``chunked=N`` frames the body in N-byte chunks (with
    ``Transfer-Encoding: chunked``); otherwise Content-Length is sent unless ``content_length`` is
    False (a close-delimited body)."""
    reason = REASONS.get(status, "Status") if reason is None else reason
    head = [f"{version} {status} {reason}"]
    head += [f"{k}: {v}" for k, v in headers]
    if chunked:
        head.append("Transfer-Encoding: chunked")
        framed = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + chunked]), body[i:i + chunked])
                          for i in range(0, len(body), chunked)) + b"0\r\n\r\n"
        return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + framed
    if content_length:
        head.append(f"Content-Length: {len(body)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body


REASONS = {200: "OK", 301: "Moved Permanently", 302: "Found", 304: "Not Modified", 404: "Not Found",
           429: "Too Many Requests", 500: "Internal Server Error", 503: "Service Unavailable"}


def gzip_bytes(data: bytes) -> bytes:
    """gzip with mtime 0, so the same input always gives the same bytes."""
    return _gzip.compress(data, compresslevel=6, mtime=0)


def html(title: str, body: str) -> bytes:
    return (f"<!DOCTYPE html>\n<html><head><title>{title}</title></head>\n<body>\n{body}\n</body></html>\n"
            ).encode("utf-8")


def png_bytes(seed: int = 0) -> bytes:
    """A small valid PNG (1x1, grey level from ``seed``): real binary bytes with NULs and high bytes."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return len(data).to_bytes(4, "big") + kind + data + zlib.crc32(kind + data).to_bytes(4, "big")
    raw = b"\x00" + bytes([seed % 256])
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", b"\x00\x00\x00\x01\x00\x00\x00\x01\x08\x00\x00\x00\x00")
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


# --------------------------------------------------------------------------- replies


@dataclass
class Reply:
    """What the server does for one request: write each ``bytes`` part, sleep for each ``float``
    part (seconds), then close the connection if ``close`` (else keep it for the next request)."""

    parts: List[Union[bytes, float]]
    close: bool = False

    @property
    def data(self) -> bytes:
        return b"".join(p for p in self.parts if isinstance(p, bytes))


@dataclass
class Request:
    host: str            # Host header without the port, lower case
    method: str
    target: str          # as on the request line
    headers: List[Tuple[str, str]]
    raw: bytes           # the request head (and body) as received
    count: int           # how many requests this (host, target) had before this one


Handler = Callable[[Request], Reply]


@dataclass
class Hit:
    """One request as the server saw it: ``t`` is time.time() when its head was complete."""

    t: float
    host: str
    method: str
    target: str
    request: bytes
    response: bytes = b""
    peer: Tuple[str, int] = ("", 0)
    done: float = 0.0    # when the server had written the last byte of the reply (0.0 until then;
                         # a client may have read the reply a moment before it is set)


def fixed(data: bytes, close: bool = False) -> Handler:
    return lambda req: Reply([data], close)


# --------------------------------------------------------------------------- the server


class Site:
    """The server and its hosts. ``add(host, path, handler_or_bytes)``; ``start()``/``stop()`` or
    use it as a context manager. Unknown hosts and paths get a 404."""

    def __init__(self) -> None:
        self.routes: Dict[str, Dict[str, Handler]] = {}
        self.prefix_routes: Dict[str, List[Tuple[str, Callable[[Request, str], Reply]]]] = {}
        self.log: List[Hit] = []
        self.port = 0
        self._counts: Dict[Tuple[str, str], int] = {}
        self._loop: Optional[asyncio.AbstractEventLoop] = None
        self._thread: Optional[threading.Thread] = None
        self._server: Optional[asyncio.base_events.Server] = None
        self._lock = threading.Lock()

    # -- content

    def add(self, host: str, path: str, what: Union[bytes, Handler, Reply]) -> None:
        if isinstance(what, bytes):
            what = fixed(what)
        elif isinstance(what, Reply):
            reply = what
            what = lambda req: reply  # noqa: E731
        self.routes.setdefault(host.lower(), {})[path] = what

    def add_prefix(self, host: str, prefix: str, fn: Callable[[Request, str], Reply]) -> None:
        """``fn(request, rest_of_path)`` answers every path under ``prefix``."""
        self.prefix_routes.setdefault(host.lower(), []).append((prefix, fn))

    @property
    def hosts(self) -> List[str]:
        return sorted(set(self.routes) | set(self.prefix_routes))

    def url(self, host: str, path: str = "/") -> str:
        return f"http://{host}:{self.port}{path}"

    def resolver(self):
        """A warchive StaticResolver sending every host of this site (and any *.site.test) to 127.0.0.1."""
        from warchive.capture.resolve import StaticResolver
        table: Dict[str, str] = {h: "127.0.0.1" for h in self.hosts}
        table["*." + DOMAIN] = "127.0.0.1"
        return StaticResolver(table)

    def hits(self, host: Optional[str] = None, path: Optional[str] = None) -> List[Hit]:
        with self._lock:
            return [h for h in self.log if (host is None or h.host == host) and (path is None or h.target == path)]

    def clear_log(self) -> None:
        with self._lock:
            self.log.clear()
            self._counts.clear()

    # -- running

    def start(self) -> "Site":
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            self._server = loop.run_until_complete(asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=1024))
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            loop.run_forever()
            self._server.close()
            loop.run_until_complete(self._server.wait_closed())
            for task in asyncio.all_tasks(loop):
                task.cancel()
            loop.run_until_complete(asyncio.sleep(0))
            loop.close()

        self._thread = threading.Thread(target=run, name="testsite", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the test site did not start")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop = None

    def __enter__(self) -> "Site":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername") or ("", 0)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                    return
                t = time.time()
                req = self._parse(head)
                length = int(dict((k.lower(), v) for k, v in req.headers).get("content-length", "0") or 0)
                if length:
                    req.raw += await reader.readexactly(length)
                reply = self._route(req)
                hit = Hit(t, req.host, req.method, req.target, req.raw, reply.data, (peer[0], peer[1]))
                with self._lock:
                    self.log.append(hit)
                for part in reply.parts:
                    if isinstance(part, bytes):
                        writer.write(part)
                        await writer.drain()
                    else:
                        await asyncio.sleep(part)
                hit.done = time.time()
                wants_close = any(k.lower() == "connection" and v.lower() == "close" for k, v in req.headers)
                if reply.close or wants_close:
                    return
        except (ConnectionError, asyncio.CancelledError):
            return
        finally:
            try:
                writer.close()
            except Exception:
                pass

    def _parse(self, head: bytes) -> Request:
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        method, target = (parts + ["", ""])[:2]
        headers = []
        for ln in lines[1:]:
            if ":" in ln:
                k, v = ln.split(":", 1)
                headers.append((k.strip(), v.strip()))
        host = next((v for k, v in headers if k.lower() == "host"), "")
        host = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
        key = (host.lower(), target)
        with self._lock:
            n = self._counts.get(key, 0)
            self._counts[key] = n + 1
        return Request(host.lower(), method, target, headers, head, n)

    def _route(self, req: Request) -> Reply:
        fn = self.routes.get(req.host, {}).get(req.target)
        if fn is not None:
            return fn(req)
        for prefix, pfn in self.prefix_routes.get(req.host, []):
            if req.target.startswith(prefix):
                return pfn(req, req.target[len(prefix):])
        return Reply([response_bytes(404, b"not found\n", [("Content-Type", "text/plain")])])

    # -- the standard site

    @classmethod
    def default(cls, n_hosts: int = 3, pages: int = 3) -> "Site":
        site = cls()
        for i in range(n_hosts):
            add_standard_host(site, host_name(i), i, pages)
        return site


def host_name(i: int) -> str:
    return f"h{i:03d}.{DOMAIN}"


LAYOUT = """\
/robots.txt           Disallow: /private/ for every agent (h000 also: Crawl-delay: 1)
/                     links to everything below (and one link to the next host)
/page/N               N = 1..pages, each links to the next page and embeds /img.png
/redirect             301 -> /page/1
/chain/N              302 -> /chain/N-1 ... /chain/0 is a 200 page
/chunked.html         Transfer-Encoding: chunked (7-byte chunks)
/gzip.html            Content-Encoding: gzip, Content-Length
/gzip-chunked.html    gzip and chunked
/dup/a, /dup/b        identical payloads under two URLs
/calendar/YYYY/MM     a crawler trap: each month links to the next, forever
/broken.html          broken HTML with links in it
/img.png, /data.bin   binary (a PNG; 4 KiB of every byte value)
/big.bin              1 MiB of binary
/close.html           HTTP/1.0, no Content-Length: the body ends when the connection closes
/busy                 429 Too Many Requests, Retry-After: 1, on the first request; then 200
/unavailable          503 Service Unavailable, Retry-After: 2, always
/slow                 head at once, body after 2 s
/hang                 never answers
/private/secret.html  disallowed by robots.txt
"""


def add_standard_host(site: Site, host: str, index: int, pages: int = 3) -> None:
    ct_html = ("Content-Type", "text/html; charset=utf-8")
    robots = "User-agent: *\nDisallow: /private/\n"
    if index == 0:
        robots += "Crawl-delay: 1\n"
    site.add(host, "/robots.txt", response_bytes(200, robots.encode(), [("Content-Type", "text/plain")]))
    nxt = host_name(index + 1)
    links = "\n".join(f'<a href="{p}">{p}</a>' for p in (
        "/page/1", "/redirect", "/chain/3", "/chunked.html", "/gzip.html", "/gzip-chunked.html", "/dup/a", "/dup/b",
        "/calendar/2024/01", "/broken.html", "/img.png", "/data.bin", "/close.html", "/busy",
        "/private/secret.html"))
    site.add(host, "/", response_bytes(200, html(host, links + f'\n<a href="http://{nxt}:PORT/">next</a>'
                                                 .replace(":PORT", "") + '\n<img src="/img.png">'), [ct_html]))
    for n in range(1, pages + 1):
        nav = f'<a href="/page/{n + 1}">next</a>' if n < pages else '<a href="/">home</a>'
        site.add(host, f"/page/{n}", response_bytes(200, html(f"page {n}", nav + '<img src="/img.png">'), [ct_html]))
    site.add(host, "/redirect", response_bytes(301, b"", [("Location", "/page/1")]))
    for n in range(1, 4):
        site.add(host, f"/chain/{n}", response_bytes(302, b"", [("Location", f"/chain/{n - 1}")]))
    site.add(host, "/chain/0", response_bytes(200, html("end of chain", "<p>end</p>"), [ct_html]))
    page = html("chunked", '<a href="/page/2">two</a> ' + "chunked body " * 20)
    site.add(host, "/chunked.html", response_bytes(200, page, [ct_html], chunked=7))
    page = html("gzip", '<a href="/page/3">three</a> ' + "gzip body " * 50)
    site.add(host, "/gzip.html", response_bytes(200, gzip_bytes(page), [ct_html, ("Content-Encoding", "gzip")]))
    site.add(host, "/gzip-chunked.html",
             response_bytes(200, gzip_bytes(page), [ct_html, ("Content-Encoding", "gzip")], chunked=100))
    dup = html("duplicate", "<p>the same payload under two URLs</p>")
    site.add(host, "/dup/a", response_bytes(200, dup, [ct_html]))
    site.add(host, "/dup/b", response_bytes(200, dup, [ct_html]))
    site.add_prefix(host, "/calendar/", _calendar)
    broken = (b'<html><head><title>broken</title><body><a href=/page/1>unquoted<a href="/page/2"\n'
              b'<p><img src=\'/img.png\'><!-- <a href="/commented"> --><script>var s = "<a href=/in-script>";'
              b'</script><a href="/page/3" <a href=/dup/a>x</a><div style="background:url(/bg.png)">'
              b'<a href="/unclosed')
    site.add(host, "/broken.html", response_bytes(200, broken, [ct_html]))
    site.add(host, "/img.png", response_bytes(200, png_bytes(index), [("Content-Type", "image/png")]))
    site.add(host, "/data.bin", response_bytes(200, bytes(range(256)) * 16,
                                               [("Content-Type", "application/octet-stream")]))
    site.add(host, "/big.bin", response_bytes(200, bytes(range(256)) * 4096,
                                              [("Content-Type", "application/octet-stream")]))
    site.add(host, "/close.html", fixed(response_bytes(200, html("close", "<p>close-delimited</p>"), [ct_html],
                                                       version="HTTP/1.0", content_length=False), close=True))
    busy = response_bytes(429, b"slow down\n", [("Retry-After", "1"), ("Content-Type", "text/plain")])
    ok = response_bytes(200, html("busy", "<p>now ok</p>"), [ct_html])
    site.add(host, "/busy", lambda req: Reply([busy if req.count == 0 else ok]))
    site.add(host, "/unavailable", response_bytes(503, b"down\n", [("Retry-After", "2"), ("Content-Type", "text/plain")]))
    slow = response_bytes(200, b"slow body\n", [("Content-Type", "text/plain")])
    split = slow.index(b"\r\n\r\n") + 4
    site.add(host, "/slow", Reply([slow[:split], 2.0, slow[split:]]))
    site.add(host, "/hang", Reply([3600.0]))
    site.add(host, "/private/secret.html", response_bytes(200, html("secret", "<p>robots says no</p>"), [ct_html]))


def _calendar(req: Request, rest: str) -> Reply:
    try:
        year, month = (int(x) for x in rest.strip("/").split("/")[:2])
    except ValueError:
        return Reply([response_bytes(404, b"")])
    ny, nm = (year, month + 1) if month < 12 else (year + 1, 1)
    body = html(f"{year}-{month:02d}", f'<a href="/calendar/{ny}/{nm:02d}">next month</a>')
    return Reply([response_bytes(200, body, [("Content-Type", "text/html")])])


@pytest.fixture
def web_site() -> Iterator[Site]:
    """A running ``Site.default(n_hosts=3)`` for one test (import it into a test module to use it)."""
    with Site.default() as site:
        yield site


if __name__ == "__main__":  # python tests/testsite.py: serve the default site by hand
    import sys
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    with Site.default(n) as s:
        print(f"serving {n} hosts on 127.0.0.1:{s.port} (curl -H 'Host: h000.{DOMAIN}' ...)\n{LAYOUT}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
