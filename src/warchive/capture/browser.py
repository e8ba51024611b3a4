"""Screenshots of HTML pages as associated resources: render in Chromium, store as WARC records.

    from warchive.capture.browser import Screenshotter, Captured, write_screenshot
    async with Screenshotter(concurrency=2) as shots:
        # same fetch: the browser renders the exact response the crawler fetched
        shot = await shots.screenshot(url, response=Captured.from_http(url, response_bytes),
                                      resources=crawl_lookup)          # url -> Captured or None
        # parallel: the browser fetches the page itself (only from allowed origins)
        shot = await shots.screenshot(url, allow=["http://127.0.0.1:8000"])
    written = write_screenshot(warc_writer, shot, page_record_id=resp.record_id)

The browser is Debian's ``chromium`` driven through Playwright's async API
(``executable_path``; Playwright's own browser downloads are never used).
One browser serves every call; ``concurrency`` slots each hold a browser
context and a page that are reused (cookies cleared between pages, the
context recreated every ``recycle_every`` pages and after any failure).

Every request the page makes passes one route handler, which decides, in
this order: the page URL itself from the captured response (same fetch);
a subresource from ``resources`` (what the crawl captured); the network,
only when the URL's origin or host is allowed; otherwise the request is
aborted and listed in ``Screenshot.blocked``. WebSockets and service
workers are refused; with ``host_map`` Chromium's resolver knows only the
mapped names, so nothing else can be reached even by name.

Records (docs/format.md, "Screenshots (associated resources)"): a
``resource`` record, WARC-Target-URI ``urn:screenshot:`` + page URL,
Content-Type ``image/png``, WARC-Concurrent-To the page's response record,
metadata as compact JSON in the ``WARC-JSON-Metadata`` header (the names are
``warchive.warc.screenshot``'s). Replay finds them again by page URL
(``warchive.replay.screenshots``).

This module must not write anything but through a WarcWriter, and must not
let the browser reach a host the caller did not allow.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import inspect
import io
import json
import os
import shutil
import struct
from dataclasses import dataclass, field
from typing import (TYPE_CHECKING, Any, Awaitable, Callable, Dict, Iterable, List, Mapping, Optional, Sequence,
                    Tuple, Union)
from urllib.parse import urlsplit

from ..errors import ArchiveError, BrowserUnavailable, ScreenshotError
from ..warc.content import content_stream
from ..warc.headers import Headers
from ..warc.builder import split_http
from ..warc.screenshot import JSON_METADATA, PNG, screenshot_uri
from ..warc.writer import WarcWriter, Written

if TYPE_CHECKING:  # playwright is the optional extra "browser"
    from playwright.async_api import Browser, BrowserContext, Page, Playwright, Route

SAME_FETCH = "same-fetch"
PARALLEL = "parallel"
DEFAULT_VIEWPORT = (1280, 800)
_HOP_BY_HOP = frozenset(("connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer",
                         "upgrade", "content-encoding", "content-length"))
_MAX_LISTED = 200   # blocked/missing URLs kept in a Screenshot (the counts are exact)


# --------------------------------------------------------------------------- captured responses

@dataclass
class Captured:
    """A response as the browser is given it: status, headers, and the payload (de-chunked and
    decoded; the framing headers that no longer hold are dropped when it is served)."""

    url: str
    status: int
    headers: List[Tuple[str, str]]
    body: bytes

    @classmethod
    def from_http(cls, url: str, message: Union[bytes, bytearray, memoryview]) -> "Captured":
        """From an HTTP response exactly as received (status line, headers, body as framed on the
        wire): chunked and Content-Encoding (gzip, deflate, br) undone, as a browser would."""
        msg = bytes(message)
        n, http = split_http(msg)
        if http is None or not http.statusline:
            raise ArchiveError(f"{url}: the captured response has no HTTP head")
        try:
            status = int(http.statusline.split(" ", 1)[0])
        except ValueError:
            raise ArchiveError(f"{url}: the captured response has no status code ({http.statusline!r})") from None
        return cls(url, status, list(http.fields), _decoded(msg[n:], http))

    def served_headers(self) -> Dict[str, str]:
        """Headers for the browser: framing and hop-by-hop fields dropped, repeats joined
        (Set-Cookie with newlines, which Playwright splits again; others with commas)."""
        out: Dict[str, str] = {}
        for k, v in self.headers:
            low = k.lower()
            if low in _HOP_BY_HOP:
                continue
            if low in out:
                out[low] += ("\n" if low == "set-cookie" else ", ") + v
            else:
                out[low] = v
        return out


class _Shim:
    def __init__(self, body: bytes, http: Headers) -> None:
        self.payload = io.BytesIO(body)
        self.http = http


def _decoded(body: bytes, http: Headers) -> bytes:
    return content_stream(_Shim(body, http)).read() or b""


Resources = Callable[[str], Union[Optional[Captured], Awaitable[Optional[Captured]]]]
Allow = Union[None, Callable[[str], bool], Iterable[str]]


def _allow_fn(allow: Allow, page_url: str) -> Callable[[str], bool]:
    """The network policy: a predicate over URLs. ``allow`` is a predicate, or origins
    ("http://127.0.0.1:8000") and bare host names; None allows the page's own origin only."""
    if callable(allow):
        return allow
    entries = [page_url] if allow is None else list(allow)
    origins, hosts = set(), set()
    for e in entries:
        if "://" in e:
            origins.add(_origin(e))
        else:
            hosts.add(e.lower())

    def allowed(url: str) -> bool:
        try:
            return _origin(url) in origins or (urlsplit(url).hostname or "") in hosts
        except ValueError:
            return False
    return allowed


def _origin(url: str) -> Tuple[str, str, Optional[int]]:
    p = urlsplit(url)
    scheme = p.scheme.lower()
    port = p.port or {"http": 80, "https": 443, "ws": 80, "wss": 443}.get(scheme)
    return scheme, (p.hostname or "").lower(), port


# --------------------------------------------------------------------------- the result

@dataclass
class Screenshot:
    """A rendered page: the PNG and how it was made."""

    page_url: str
    png: bytes
    mode: str                        # "same-fetch" (the crawler's response) or "parallel" (fetched by the browser)
    final_url: str                   # the page's URL after rendering (redirects, history changes)
    status: Optional[int]            # HTTP status of the main document as the browser saw it
    browser: str                     # "chromium"
    browser_version: str
    user_agent: str
    viewport: Tuple[int, int]        # CSS pixels; the PNG is viewport × device_scale_factor
    device_scale_factor: float
    full_page: bool
    date: _dt.datetime               # UTC, when the screenshot was taken
    duration: float                  # seconds from navigation to PNG
    from_capture: int = 0            # subresources served from the crawl's captures
    from_network: int = 0            # ... let through to the network
    blocked: List[str] = field(default_factory=list)   # refused (first 200)
    blocked_count: int = 0

    def metadata(self, page_record_id: Optional[str] = None, page_date: Optional[str] = None) -> Dict[str, Any]:
        """The JSON of the record's WARC-JSON-Metadata header (docs/format.md lists the fields)."""
        meta: Dict[str, Any] = {
            "type": "screenshot",
            "page": self.page_url,
            "mode": self.mode,
            "final_url": self.final_url,
            "status": self.status,
            "browser": self.browser,
            "browser_version": self.browser_version,
            "user_agent": self.user_agent,
            "viewport": {"width": self.viewport[0], "height": self.viewport[1]},
            "device_scale_factor": self.device_scale_factor,
            "full_page": self.full_page,
            "date": _iso(self.date),
            "duration": round(self.duration, 3),
            "subresources": {"from_capture": self.from_capture, "from_network": self.from_network,
                             "blocked": self.blocked_count},
        }
        if page_record_id:
            meta["page_record_id"] = page_record_id
        if page_date:
            meta["page_date"] = page_date
        return meta


def _iso(when: _dt.datetime) -> str:
    return when.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def png_size(data: bytes) -> Tuple[int, int]:
    """(width, height) from a PNG's IHDR; raises ArchiveError when ``data`` is not a PNG."""
    if len(data) < 24 or data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR":
        raise ArchiveError("not a PNG image (no signature and IHDR chunk)")
    w, h = struct.unpack(">II", data[16:24])
    return w, h


# --------------------------------------------------------------------------- the browser

def chromium_path() -> Optional[str]:
    """Debian's chromium (``WARCHIVE_CHROMIUM`` overrides), or None when it is not installed."""
    env = os.environ.get("WARCHIVE_CHROMIUM")
    if env:
        return env if os.access(env, os.X_OK) else None
    for name in ("chromium", "chromium-browser"):
        p = shutil.which(name)
        if p:
            return p
    return "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None


class _Job:
    """The state of one page being rendered in a slot (the route handler reads it)."""

    def __init__(self, url: str, response: Optional[Captured], resources: Optional[Resources],
                 allowed: Callable[[str], bool], passthrough: bool) -> None:
        self.url = url
        self.response = response
        self.resources = resources
        self.allowed = allowed
        self.passthrough = passthrough
        self.page_served = False
        self.from_capture = 0
        self.from_network = 0
        self.blocked: List[str] = []
        self.blocked_count = 0
        self.error: Optional[str] = None    # resources() raised: the caller's bug, reported, not hidden

    def block(self, url: str) -> None:
        self.blocked_count += 1
        if len(self.blocked) < _MAX_LISTED:
            self.blocked.append(url)


class _Slot:
    def __init__(self) -> None:
        self.context: Optional["BrowserContext"] = None
        self.page: Optional["Page"] = None
        self.job: Optional[_Job] = None
        self.used = 0


class Screenshotter:
    """Renders pages in one headless Chromium and returns PNG screenshots (async).

    executable     chromium binary (default: ``chromium_path()``)
    concurrency    pages rendered at once (default 2); further calls wait for a slot
    viewport       (width, height) in CSS pixels (default 1280×800)
    device_scale_factor  device pixels per CSS pixel (default 1)
    user_agent     the browser's User-Agent (default: Chromium's own)
    full_page      capture the whole scrollable page instead of the viewport (default False)
    timeout        seconds for navigation up to the ``load`` event (default 30)
    settle         seconds to wait after ``load`` for the network to go idle (default 2; not an error)
    total_timeout  seconds for one page in all, screenshot included (default timeout + settle + 15)
    host_map       {host name: IP address}: Chromium resolves these names only (a crawl's
                   loopback test site; no other name resolves while it is set)
    recycle_every  pages rendered in a context before it is replaced (default 50; 1 = fresh each time)
    args           extra Chromium command-line switches

    Use ``async with Screenshotter() as s:`` or ``await s.start()`` / ``await s.close()``.
    """

    def __init__(self, *, executable: Optional[str] = None, concurrency: int = 2,
                 viewport: Tuple[int, int] = DEFAULT_VIEWPORT, device_scale_factor: float = 1.0,
                 user_agent: Optional[str] = None, full_page: bool = False, timeout: float = 30.0,
                 settle: float = 2.0, total_timeout: Optional[float] = None,
                 host_map: Optional[Mapping[str, str]] = None, recycle_every: int = 50,
                 args: Sequence[str] = ()) -> None:
        if concurrency < 1:
            raise ArchiveError(f"concurrency must be at least 1, not {concurrency}")
        self.executable = executable
        self.concurrency = concurrency
        self.viewport = (int(viewport[0]), int(viewport[1]))
        self.device_scale_factor = float(device_scale_factor)
        self.user_agent = user_agent
        self.full_page = full_page
        self.timeout = timeout
        self.settle = settle
        self.total_timeout = total_timeout if total_timeout is not None else timeout + settle + 15.0
        self.host_map = dict(host_map or {})
        self.recycle_every = max(1, recycle_every)
        self.args = list(args)
        self.browser_name = "chromium"
        self.browser_version = ""
        self._pw: Optional["Playwright"] = None
        self._browser: Optional["Browser"] = None
        self._slots: Optional["asyncio.Queue[_Slot]"] = None
        self._all: List[_Slot] = []
        self._ua: Optional[str] = None

    # -- life cycle
    async def start(self) -> "Screenshotter":
        if self._browser is not None:
            return self
        try:   # Playwright is the optional extra "browser": imported when a browser is started
            from playwright.async_api import async_playwright
        except ImportError:
            raise BrowserUnavailable("screenshots need Playwright: pip install 'warchive[browser]' "
                                     "(and Debian's chromium: apt-get install chromium)") from None
        exe = self.executable or chromium_path()
        if not exe or not os.access(exe, os.X_OK):
            raise BrowserUnavailable(f"no chromium executable ({exe or 'chromium not on PATH'}): "
                                     "apt-get install chromium, or set WARCHIVE_CHROMIUM")
        self._pw = await async_playwright().start()
        try:
            self._browser = await self._pw.chromium.launch(executable_path=exe, headless=True,
                                                           args=self._launch_args())
        except Exception as e:
            await self._pw.stop()
            self._pw = None
            raise BrowserUnavailable(f"{exe} did not start: {e}") from None
        self.browser_version = self._browser.version
        self._slots = asyncio.Queue()
        for _ in range(self.concurrency):
            s = _Slot()
            self._all.append(s)
            self._slots.put_nowait(s)
        return self

    def _launch_args(self) -> List[str]:
        args = ["--no-sandbox",                  # root in containers; the page is isolated by routing
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-domain-reliability", "--no-first-run", "--no-default-browser-check",
                "--disable-features=DnsOverHttps,InterestFeedContentSuggestions,MediaRouter",
                "--hide-scrollbars", "--mute-audio"]
        if self.host_map:
            rules = [f"MAP {h} {ip}" for h, ip in self.host_map.items()] + ["MAP * ~NOTFOUND"]
            args.append("--host-resolver-rules=" + ", ".join(rules))
        return args + self.args

    async def close(self) -> None:
        """Close every context, the browser and Playwright (safe to call twice)."""
        for s in self._all:
            await self._drop(s)
        self._all = []
        self._slots = None
        if self._browser is not None:
            try:
                await self._browser.close()
            finally:
                self._browser = None
        if self._pw is not None:
            try:
                await self._pw.stop()
            finally:
                self._pw = None

    async def __aenter__(self) -> "Screenshotter":
        return await self.start()

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    # -- one page
    async def screenshot(self, url: str, *, response: Optional[Captured] = None,
                         resources: Optional[Resources] = None, allow: Allow = None,
                         passthrough: bool = False) -> Screenshot:
        """Render ``url`` and take its screenshot.

        Same fetch (``response`` given): the page is served from ``response`` (a Captured; or
        the exact HTTP response bytes), subresources from ``resources(url)`` (the crawl's
        captures; a Captured, or None when there is none, sync or async); with ``passthrough``
        those it has not are fetched from the network when ``allow`` allows them, else refused.
        Parallel (no ``response``): the browser fetches the page and its subresources from
        the network, from allowed origins only (``allow``: a predicate, or origins and host
        names; default the page's origin), ``resources`` first when given.
        Raises ScreenshotError when the page does not render in time."""
        if self._browser is None or self._slots is None:
            raise ArchiveError("the Screenshotter is not started (async with Screenshotter() as s: ...)")
        if isinstance(response, (bytes, bytearray, memoryview)):
            response = Captured.from_http(url, response)
        scheme = urlsplit(url).scheme.lower()
        if scheme not in ("http", "https"):
            raise ScreenshotError(url, f"only http and https pages are rendered, not {scheme or 'no scheme'}")
        job = _Job(url, response, resources, _allow_fn(allow, url),
                   passthrough if response is not None else True)
        slot = await self._slots.get()
        try:
            try:
                return await asyncio.wait_for(self._render(slot, job), self.total_timeout)
            except asyncio.TimeoutError:
                await self._drop(slot)
                raise ScreenshotError(url, f"not rendered within {self.total_timeout:g} s",
                                      "raise total_timeout, or check the page") from None
            except ScreenshotError:
                await self._drop(slot)
                raise
            except asyncio.CancelledError:
                slot.page = None   # mid-navigation: the next call replaces the context (no await here)
                raise
            except Exception as e:
                await self._drop(slot)
                if self._browser is None or not self._browser.is_connected():
                    raise ScreenshotError(url, f"the browser is gone: {e}") from None
                raise ScreenshotError(url, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None
        finally:
            slot.job = None
            self._slots.put_nowait(slot)

    async def _render(self, slot: _Slot, job: _Job) -> Screenshot:
        from playwright.async_api import TimeoutError as PlaywrightTimeout   # started: Playwright is there

        page = await self._page(slot)
        slot.job = job
        started = asyncio.get_running_loop().time()
        try:
            resp = await page.goto(job.url, wait_until="load", timeout=self.timeout * 1000)
        except PlaywrightTimeout:
            raise ScreenshotError(job.url, f"no load event within {self.timeout:g} s") from None
        except Exception as e:
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise ScreenshotError(job.url, f"navigation failed: {first}") from None
        if self.settle > 0:
            try:
                await page.wait_for_load_state("networkidle", timeout=self.settle * 1000)
            except PlaywrightTimeout:
                pass   # a page that keeps polling is still shot
        png = await page.screenshot(type="png", full_page=self.full_page, timeout=self.timeout * 1000)
        if job.error:
            raise ScreenshotError(job.url, job.error)
        when = _dt.datetime.now(_dt.timezone.utc)
        if self._ua is None:
            self._ua = str(await page.evaluate("navigator.userAgent"))
        final = page.url
        await page.goto("about:blank")   # stop scripts and timers before the slot is reused
        for other in page.context.pages:  # popups the page opened
            if other is not page:
                await other.close()
        slot.used += 1
        if slot.used >= self.recycle_every:
            await self._drop(slot)
        return Screenshot(job.url, png, SAME_FETCH if job.response is not None else PARALLEL, final,
                          resp.status if resp is not None else None, self.browser_name, self.browser_version,
                          self.user_agent or self._ua, self.viewport, self.device_scale_factor, self.full_page,
                          when, asyncio.get_running_loop().time() - started, job.from_capture,
                          job.from_network, list(job.blocked), job.blocked_count)

    async def _page(self, slot: _Slot) -> "Page":
        assert self._browser is not None
        if slot.context is None or slot.page is None or slot.page.is_closed():
            await self._drop(slot)
            ctx = await self._browser.new_context(
                viewport={"width": self.viewport[0], "height": self.viewport[1]},
                device_scale_factor=self.device_scale_factor, user_agent=self.user_agent,
                service_workers="block", accept_downloads=False)
            await ctx.route("**/*", lambda route: self._route(slot, route))
            if hasattr(ctx, "route_web_socket"):
                await ctx.route_web_socket("**/*", self._refuse_socket(slot))
            slot.context = ctx
            slot.page = await ctx.new_page()
            slot.used = 0
        else:
            await slot.context.clear_cookies()
        return slot.page

    def _refuse_socket(self, slot: _Slot) -> Callable[[Any], Awaitable[None]]:
        async def refuse(ws: Any) -> None:
            if slot.job is not None:
                slot.job.block(ws.url)
            await ws.close()
        return refuse

    async def _drop(self, slot: _Slot) -> None:
        ctx, slot.context, slot.page, slot.used = slot.context, None, None, 0
        if ctx is not None:
            try:
                await ctx.close()
            except Exception:
                pass   # the browser may be gone already

    async def _route(self, slot: _Slot, route: "Route") -> None:
        """Where one request of the page is answered from (the module docstring has the order)."""
        job = slot.job
        url = route.request.url
        if job is None:   # about:blank between pages, or a straggler of the page before
            await route.abort("blockedbyclient")
            return
        try:
            got: Optional[Captured] = None
            if job.response is not None and not job.page_served and _is_main_navigation(route):
                job.page_served = True
                got = job.response
            elif job.resources is not None:
                try:
                    found = job.resources(url)
                    got = await found if inspect.isawaitable(found) else found
                except Exception as e:
                    job.error = job.error or f"resources({url!r}) raised {type(e).__name__}: {e}"
                    job.block(url)
                    await route.abort("failed")
                    return
                if got is not None:
                    job.from_capture += 1
            if got is not None:
                await route.fulfill(status=got.status, headers=got.served_headers(), body=got.body)
            elif job.passthrough and job.allowed(url):
                job.from_network += 1
                await route.continue_()
            else:
                job.block(url)
                await route.abort("blockedbyclient")
        except Exception:
            # the page went away while this request was answered (navigation, close): nothing to do
            try:
                await route.abort("failed")
            except Exception:
                pass


def _is_main_navigation(route: "Route") -> bool:
    """The page's own document: the first navigation of the main frame after goto (matched by
    role, not by URL, since Chromium normalizes what it requests: case, escapes, a "/" path)."""
    req = route.request
    if not req.is_navigation_request():
        return False
    try:
        return req.frame.parent_frame is None
    except Exception:   # no frame (a service worker's request)
        return False


# --------------------------------------------------------------------------- records

def write_screenshot(writer: WarcWriter, shot: Screenshot, *, page_record_id: Optional[str] = None,
                     page_date: Optional[str] = None) -> Written:
    """Write ``shot`` as a ``resource`` record (docs/format.md, "Screenshots"): target URI
    ``urn:screenshot:`` + page URL, Content-Type image/png, WARC-Date the time of the shot,
    WARC-Concurrent-To ``page_record_id`` (the page's response record), the metadata as
    JSON in WARC-JSON-Metadata. Returns the writer's ``Written`` (its index line:
    ``warchive.index.cdx.written_record_line``)."""
    png_size(shot.png)   # refuse to store anything but a PNG under image/png
    meta = json.dumps(shot.metadata(page_record_id, page_date), separators=(",", ":"), sort_keys=True)
    return writer.write_resource(screenshot_uri(shot.page_url), shot.png, PNG, concurrent_to=page_record_id,
                                 date=shot.date, extra=[(JSON_METADATA, meta)])


__all__ = ["BrowserUnavailable", "Captured", "PARALLEL", "SAME_FETCH", "Screenshot", "ScreenshotError",
           "Screenshotter", "chromium_path", "png_size", "write_screenshot"]
