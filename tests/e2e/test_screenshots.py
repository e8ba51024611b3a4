"""Screenshots in Debian's chromium: same fetch and parallel, what the browser may reach, records
written, indexed, found by page URL and loaded back.

Pages are served by tests/localsite.py's Site on 127.0.0.1 (a port picked at run time).
The test page is red with a 100×100 box at the top left that its stylesheet colours green;
version 2 of the site is blue with a yellow box, so a pixel says which bytes were rendered.
"""

from __future__ import annotations

import asyncio
import gzip
import json

import pytest

import localsite
import pngutil
from warchive.capture import browser as B
from warchive.collection import add_warcs
from warchive.index.cdx import written_record_line
from warchive.index.query import Index
from warchive.replay.load import load_capture
from warchive.replay import screenshots as S
from warchive.warc.writer import WarcWriter



@pytest.fixture(scope="module", autouse=True)
def need_browser():
    localsite.require_browser()


@pytest.fixture
def site():
    s = localsite.Site()
    yield s
    s.close()


@pytest.fixture
def other_site():
    s = localsite.Site()
    yield s
    s.close()


@pytest.fixture
def run():
    """Run a coroutine to completion in a fresh event loop."""
    return asyncio.run

VIEW = (320, 240)
RED, GREEN, BLUE, YELLOW = (255, 0, 0), (0, 255, 0), (0, 0, 255), (255, 255, 0)
HTML = ('<!doctype html><html><head><link rel="stylesheet" href="/style.css"></head>'
        '<body style="margin:0;background:rgb{bg}"><div id="box" style="width:100px;height:100px"></div>'
        '<div style="height:0;overflow:hidden">{extra}</div></body></html>')


def page(bg, extra=""):
    return (200, [("Content-Type", "text/html; charset=utf-8")], HTML.format(bg=bg, extra=extra).encode())


def css(rgb):
    return (200, [("Content-Type", "text/css")], f"#box{{background:rgb{rgb}}}".encode())


def version(site, n, extra=""):
    site.pages["/"] = page(RED if n == 1 else BLUE, extra)
    site.pages["/style.css"] = css(GREEN if n == 1 else YELLOW)


def colours(shot, scale=1):
    img = pngutil.decode(shot.png)
    assert (img.width, img.height) == (VIEW[0] * scale, VIEW[1] * scale)
    return img.pixel(10 * scale, 10 * scale), img.pixel(200 * scale, 200 * scale)


def shooter(**kw):
    kw.setdefault("viewport", VIEW)
    kw.setdefault("settle", 0.5)
    kw.setdefault("timeout", 15)
    return B.Screenshotter(**kw)


def test_same_fetch_renders_the_captured_bytes(site, run):
    version(site, 1)
    raw_page, raw_css = site.raw_get("/"), site.raw_get("/style.css")
    version(site, 2)      # the live site has changed since the crawl fetched it
    site.log.clear()
    captures = {site.url("/style.css"): B.Captured.from_http(site.url("/style.css"), raw_css)}

    async def go():
        async with shooter() as s:
            a = await s.screenshot(site.url("/"), response=raw_page, resources=captures.get)
            seen_a = list(site.paths())
            # the page from the capture, subresources it lacks from the (allowed) network
            b = await s.screenshot(site.url("/"), response=raw_page, passthrough=True, allow=[site.origin])
            return a, seen_a, b

    a, seen_a, b = run(go())
    assert seen_a == []                                  # nothing was fetched again
    assert colours(a) == (GREEN, RED)
    assert a.mode == B.SAME_FETCH and a.status == 200 and a.final_url == site.url("/")
    assert a.from_capture == 1 and a.from_network == 0 and a.blocked_count == 0
    assert a.browser == "chromium" and a.browser_version and "Chrome" in a.user_agent
    assert a.viewport == VIEW and a.device_scale_factor == 1.0
    assert colours(b) == (YELLOW, RED) and site.paths() == ["/style.css"] and b.from_network == 1


def test_same_fetch_needs_no_network_at_all(run):
    """A host name that resolves nowhere, a chunked gzip body, https: served from the capture alone."""
    body = HTML.format(bg=BLUE, extra="").replace('href="/style.css"', 'href="data:text/css,"').encode()
    z = gzip.compress(body)
    raw = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: gzip\r\n"
           b"Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n" % (len(z), z))

    async def go():
        async with shooter(host_map={"nothing.test": "127.0.0.1"}) as s:
            return [await s.screenshot(u, response=raw) for u in ("http://unresolvable.test/p",
                                                                  "https://secure.unresolvable.test",
                                                                  "http://UPPER.unresolvable.test/a b?q=é")]

    shots = run(go())
    for shot in shots:
        assert colours(shot)[1] == BLUE and shot.mode == B.SAME_FETCH and shot.status == 200
    # Chromium requests the URL normalized; the page is still the one served from the capture
    assert shots[1].final_url == "https://secure.unresolvable.test/"
    assert shots[2].final_url == "http://upper.unresolvable.test/a%20b?q=%C3%A9"


def test_parallel_fetches_the_live_page(site, run):
    version(site, 2)

    async def go():
        async with shooter(device_scale_factor=2) as s:
            return await s.screenshot(site.url("/"))      # allow: the page's own origin

    shot = run(go())
    assert shot.mode == B.PARALLEL and shot.status == 200 and shot.device_scale_factor == 2.0
    assert colours(shot, scale=2) == (YELLOW, BLUE)
    assert site.paths() == ["/", "/style.css"]


def _leaky_page(site, other):
    """A page on `site` that tries every way it can to reach `other`."""
    o = other.origin
    extra = (f'<img src="{o}/img.png"><img src="http://localhost:{other.port}/img2.png">'
             f'<script src="{o}/x.js"></script><iframe src="{o}/frame"></iframe>'
             f'<link rel="prefetch" href="{o}/prefetch"><img src="/own.png">'
             f'<script>fetch("{o}/api").catch(()=>0); navigator.sendBeacon("{o}/beacon", "x");'
             f'try {{ new WebSocket("ws://127.0.0.1:{other.port}/ws") }} catch (e) {{}}</script>')
    version(site, 1, extra)
    site.pages["/own.png"] = (200, [("Content-Type", "image/png")], pngutil.encode_solid(2, 2, GREEN))


def test_the_browser_reaches_only_what_is_allowed(site, other_site, run):
    _leaky_page(site, other_site)

    async def go(allow):
        async with shooter(settle=1.5) as s:
            return await s.screenshot(site.url("/"), allow=allow)

    shot = run(go([site.origin]))
    assert other_site.log == [], [r.path for r in other_site.log]
    assert set(site.paths()) == {"/", "/style.css", "/own.png"}
    assert shot.blocked_count >= 4 and f"{other_site.origin}/img.png" in shot.blocked
    assert f"http://localhost:{other_site.port}/img2.png" in shot.blocked
    assert f"ws://127.0.0.1:{other_site.port}/ws" in shot.blocked
    assert colours(shot) == (GREEN, RED)
    # the same page with the other origin allowed does reach it: the check above can fail
    run(go([site.origin, other_site.origin]))
    assert {"/img.png", "/x.js", "/frame", "/api"} <= set(other_site.paths())


def test_host_map_is_the_only_resolver(site, other_site, run):
    """Allowed by the policy but not mapped: the name does not resolve, nothing is reached."""
    version(site, 1, f'<img src="http://b.test:{other_site.port}/img.png">')
    url = f"http://a.test:{site.port}/"

    async def go():
        async with shooter(host_map={"a.test": "127.0.0.1"}) as s:
            return await s.screenshot(url, allow=["a.test", "b.test"])

    shot = run(go())
    assert colours(shot) == (GREEN, RED)
    assert {r.host for r in site.log} == {f"a.test:{site.port}"}
    assert other_site.log == []
    assert shot.from_network == 3   # the page, its stylesheet, and the image that did not resolve


def test_timeouts_and_recovery(site, run):
    import time

    def slow(req):
        time.sleep(4)
        return page(RED)
    site.pages["/slow"] = slow
    version(site, 1)

    async def go():
        async with shooter(timeout=1, settle=0, total_timeout=3) as s:
            with pytest.raises(B.ScreenshotError) as e:
                await s.screenshot(site.url("/slow"))
            ok = await s.screenshot(site.url("/"))
            return str(e.value), ok

    msg, ok = run(go())
    assert site.url("/slow") in msg
    assert colours(ok) == (GREEN, RED)


def test_concurrency_is_bounded_and_pages_are_reused(site, run):
    import threading
    import time

    version(site, 1)
    lock, state = threading.Lock(), {"now": 0, "max": 0}

    def slow_page(i):
        def serve(req):
            with lock:
                state["now"] += 1
                state["max"] = max(state["max"], state["now"])
            time.sleep(0.3)
            with lock:
                state["now"] -= 1
            return page(RED if i % 2 else BLUE)
        return serve
    for i in range(6):
        site.pages[f"/p{i}"] = slow_page(i)

    async def go():
        s = shooter(concurrency=2, recycle_every=100)
        async with s:
            shots = await asyncio.gather(*[s.screenshot(site.url(f"/p{i}")) for i in range(6)])
            contexts = {id(slot.context) for slot in s._all}
            browser = s._browser
        return shots, contexts, browser

    shots, contexts, browser = run(go())
    assert [colours(x)[1] for x in shots] == [BLUE, RED] * 3
    assert len(contexts) == 2
    assert state["max"] == 2          # two pages at a time, never more
    assert browser is not None and not browser.is_connected()   # closed cleanly


def test_screenshot_record_indexed_found_and_loaded(site, run, tmp_path, cdxj_indexer, warchive_cli):
    version(site, 1)
    raw_page, raw_css = site.raw_get("/"), site.raw_get("/style.css")
    url = site.url("/")

    async def go():
        async with shooter() as s:
            return await s.screenshot(url, response=raw_page,
                                      resources={site.url("/style.css"): B.Captured.from_http(url, raw_css)}.get)

    shot = run(go())
    lines = []
    with WarcWriter(tmp_path / "w", prefix="CRAWL", fsync=False) as w:
        _, resp = w.write_exchange(url, b"GET / HTTP/1.0\r\n\r\n", raw_page)
        written = B.write_screenshot(w, shot, page_record_id=resp.record_id, page_date=resp.date)
        lines.append(written_record_line(written))
    peer = cdxj_indexer(w.closed_files, [])
    assert peer.error is None
    assert [ln for ln in peer.output.splitlines(keepends=True) if ln.startswith(b"urn:")] == lines
    assert lines[0].startswith(S.screenshot_key(url).encode() + b" ")

    coll = tmp_path / "coll"
    add_warcs(str(coll), w.closed_files)
    (cap,) = S.find_screenshots(str(coll), url)
    with Index(str(coll)) as idx:
        with load_capture(cap, index=idx) as loaded:
            assert loaded.read() == shot.png
            assert loaded.warc_headers.get("WARC-Concurrent-To") == resp.record_id
            meta = json.loads(loaded.warc_headers.get("WARC-JSON-Metadata"))
    assert meta["mode"] == "same-fetch" and meta["browser_version"] == shot.browser_version
    assert meta["viewport"] == {"width": VIEW[0], "height": VIEW[1]} and meta["user_agent"] == shot.user_agent
    assert colours(shot) == (GREEN, RED)
    out = warchive_cli(["lookup", "urn:screenshot:" + url, str(coll)])
    assert out.returncode == 0 and json.loads(out.stdout.split(b" ", 2)[2])["digest"] == cap["digest"]


def test_a_failing_resources_lookup_is_reported(site, run):
    version(site, 1)
    raw = site.raw_get("/")

    def broken(url):
        raise OSError("disk gone")

    async def go():
        async with shooter() as s:
            with pytest.raises(B.ScreenshotError) as e:
                await s.screenshot(site.url("/"), response=raw, resources=broken)
            return str(e.value)

    assert "disk gone" in run(go())


def test_full_page(site, run):
    site.pages["/"] = (200, [("Content-Type", "text/html")],
                       b'<body style="margin:0"><div style="height:700px;background:rgb(0,0,255)"></div>'
                       b'<div style="height:100px;background:rgb(255,0,0)"></div></body>')

    async def go():
        async with shooter(full_page=True) as s:
            return await s.screenshot(site.url("/"))

    shot = run(go())
    img = pngutil.decode(shot.png)
    assert (img.width, img.height) == (VIEW[0], 800) and shot.full_page
    assert img.pixel(5, 5) == BLUE and img.pixel(5, 750) == RED
