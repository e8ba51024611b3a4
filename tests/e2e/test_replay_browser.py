"""Replay in Debian's chromium, with nothing allowed to leave the archive.

A test web site (tests/testsite.py: virtual hosts www/cdn/api.site.test on 127.0.0.1) is crawled
by warchive's crawler (every URL a seed, including those only scripts ask for); a POST and a
page with ``<script>`` in its URL and title are written beside it with warcgen (a crawler does
not post). The collection is served by ``create_app`` under uvicorn on 127.0.0.1 (port 0), with
the default framed replay (the page in a sandboxed iframe under the banner).

chromium resolves every host name but 127.0.0.1 to a leak catcher (``--host-resolver-rules``;
the hosts of chromium's own background services excepted, they resolve nowhere), which records
whatever connects to it (an HTTP request line and Host, a TLS server name); a Playwright route guard records and aborts any request
not to the replay server. Every test ends by asserting that both saw nothing. Pages write what
their scripts got into their DOM; the tests read it from the frame.

Static HTML attributes, CSS and inline scripts are rewritten by the HTML kernel (ext/html_rewrite,
scripts through warchive.replay.js); a navigation no rewriter can see (a computed property name)
is stopped by the Content-Security-Policy, not leaked.

The static pages (images, srcset, CSS url() and @import, a web font, <base>, windows-1252) are
also screenshot live, served by the same test site to a chromium of their own, and replayed:
the decoded pixels must be equal (the section "replayed = live" says what is compared with
what). The catcher, the guard, the launch flags and the server are in replay_kit.py.
"""

from __future__ import annotations

import json
import math
import re
import struct
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import List

import pytest

TESTS = Path(__file__).resolve().parents[1]
for _p in (TESTS, TESTS / "e2e"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import localsite  # noqa: E402
import warcgen  # noqa: E402
import pngutil  # noqa: E402
from replay_kit import Guard, LeakCatcher, launch, launch_live, serve  # noqa: E402
from testsite import DOMAIN, Site, png_bytes, response_bytes  # noqa: E402

WWW, CDN, API = f"www.{DOMAIN}", f"cdn.{DOMAIN}", f"api.{DOMAIN}"
LIVE = f"live.{DOMAIN}"
EVIL_URL = f'http://{WWW}/q?x="><script>window.__xss=1</script>'
EVIL_TITLE = "<script>window.__xss=2</script>"
FONT = next((p for p in ("/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
                         "/usr/share/fonts/truetype/liberation/LiberationMono-Regular.ttf") if Path(p).exists()), None)

OUT = ('<pre id="out"></pre><script>function out(k, v) {'
       'document.getElementById("out").textContent += k + "=" + v + "\\n"; }</script>')


def html(title, body, head="", charset="utf-8"):
    return (f'<!DOCTYPE html>\n<html><head>{head}<title>{title}</title></head>\n<body>{body}</body></html>\n'
            ).encode(charset)


def wav(seconds=60, rate=44100):
    """A 16-bit stereo WAV of a 441 Hz tone: a media file with a duration to seek in (there is
    no video encoder on the test machine; chromium plays it in a <video> element)."""
    n = seconds * rate
    period = rate // 441   # 441 Hz: a whole period in 100 samples at 44100 Hz
    mono = [int(8000 * math.sin(2 * math.pi * i / period)) for i in range(period)]
    block = struct.pack(f"<{2 * period}h", *(v for v in mono for _ in (0, 1)))
    data = (block * (n // period + 1))[: n * 4]
    head = b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVEfmt " + struct.pack("<IHHIIHH", 16, 1, 2, rate,
                                                                                     rate * 4, 4, 16)
    return head + b"data" + struct.pack("<I", len(data)) + data


APP_JS = """(function () {
  function out(k, v) { document.getElementById("out").textContent += k + "=" + v + "\\n"; }
  function got(k, p) { p.then(function (v) { out(k, v); }, function (e) { out(k, "error " + e); }); }
  out("location", location.href);
  out("window.location", window.location.pathname + window.location.search);
  out("top", top === window);
  out("parent", parent === window && window.parent === self);
  got("fetch-rel", fetch("../data/a.json").then(function (r) { return r.json(); }).then(function (j) { return j.v; }));
  got("fetch-root", fetch("/data/b.json").then(function (r) { return r.json(); }).then(function (j) { return j.v; }));
  got("fetch-abs", fetch("http://api.site.test/c.json").then(function (r) { return r.json(); }).then(function (j) { return j.v; }));
  got("fetch-origin", fetch(location.origin + "/data/b.json").then(function (r) { return r.json(); }).then(function (j) { return j.v; }));
  got("fetch-request", fetch(new Request("http://api.site.test/c.json", {headers: {"X-Asked": "1"}})).then(function (r) { return r.json(); }).then(function (j) { return j.v; }));
  got("fetch-missing", fetch("http://api.site.test/never-captured.json").then(function (r) { return r.status; }));
  got("xhr", new Promise(function (ok, no) {
    var x = new XMLHttpRequest();
    x.open("GET", "http://api.site.test/x.txt");
    x.onload = function () { ok(x.responseText.trim()); };
    x.onerror = function () { no("xhr failed"); };
    x.send();
  }));
  got("import-rel", import("./mod.js").then(function (m) { return m.v; }));
  got("import-abs", import("http://cdn.site.test/js/cdnmod.js").then(function (m) { return m.v; }));
  got("worker", new Promise(function (ok, no) {
    var w = new Worker("worker.js");
    w.onmessage = function (e) { ok(e.data); };
    w.onerror = function () { no("worker failed"); };
  }));
  got("websocket", new Promise(function (ok) {
    var ws = new WebSocket("ws://live.site.test/socket");
    ws.onerror = function () { ok("failed"); };
    ws.onopen = function () { ok("open"); };
  }));
  out("beacon", navigator.sendBeacon("http://stats.site.test/beacon", "x"));
  document.cookie = "k=v; path=/";
  out("cookie", document.cookie);
  localStorage.setItem("a", "1");
  out("storage", localStorage.getItem("a"));
  out("domain", document.domain);
  got("eventsource", new Promise(function (ok) {
    var es = new EventSource("http://api.site.test/events");
    es.onerror = function () { es.close(); ok("closed"); };
  }));
})();
"""

EVIL_JS = """(function () {
  function out(k, v) { document.getElementById("out").textContent += k + "=" + v + "\\n"; }
  var P = window["par" + "ent"], T = window["to" + "p"];   // past the server's rewriting
  try { P.document.body.innerHTML = "pwned"; out("banner-dom", "changed"); } catch (e) { out("banner-dom", "blocked"); }
  try { out("banner-read", T.document.title); } catch (e) { out("banner-read", "blocked"); }
  try { out("banner-cookie", T.document.cookie); } catch (e) { out("banner-cookie", "blocked"); }
  try { T.location.href = "http://live.site.test/phish"; } catch (e) { /* sandboxed */ }
  out("cookie", document.cookie);
  window.addEventListener("load", function () {   // after the client has told the banner where it is
    P.postMessage({wa: "location", url: "javascript:window.__pwned=1", timestamp: "20200101000000", title: "x"}, "*");
    P.postMessage({wa: "location", url: "http://www.site.test/told", timestamp: "20200101000000",
                   title: "<img src=x onerror=window.__pwned=2>"}, "*");
    out("done", 1);
  });
})();
"""


def build_site(site: Site) -> List[str]:
    """The pages and resources; returns every URL to crawl."""
    ct_html = [("Content-Type", "text/html; charset=utf-8")]
    js = [("Content-Type", "text/javascript")]
    css = [("Content-Type", "text/css")]
    jsn = [("Content-Type", "application/json")]
    urls = []

    def add(host, path, status, body, headers):
        site.add(host, path, response_bytes(status, body, headers))
        urls.append(f"http://{host}{path}")

    links = "".join(f'<li><a href="{p}">{p}</a></li>' for p in (
        "images.html", "css.html", "scripts.html", "frame.html", "form.html", "base.html", "latin1.html",
        "setloc.html", "setloc-js.html", "setloc-dyn.html", "onclick.html", "push.html", "video.html", "evil.html"))
    add(WWW, "/", 200, html("Index", f'<ul>{links}</ul><a id="abs" href="http://{WWW}/images.html">absolute</a>'
                                     f'<a id="root" href="/css.html">root</a>'), ct_html)
    add(WWW, "/images.html", 200, html("Images", OUT + f"""
<img id="rel" src="img/a.png"><img id="root" src="/img/a.png"><img id="abs" src="http://{CDN}/img/b.png">
<img id="ss" src="img/a.png" srcset="img/c1.png 1x, http://{CDN}/img/c2.png 2x"><img id="dyn"><div id="ih"></div>
<script>
document.getElementById("dyn").src = "http://{CDN}/img/b.png";
document.getElementById("ih").innerHTML = '<img id="ihimg" src="http://{CDN}/img/c2.png">';
</script>"""), ct_html)
    for path, seed in (("/img/a.png", 1), ("/img/c1.png", 3)):
        add(WWW, path, 200, png_bytes(seed), [("Content-Type", "image/png")])
    for path, seed in (("/img/b.png", 2), ("/img/c2.png", 4)):
        add(CDN, path, 200, png_bytes(seed), [("Content-Type", "image/png")])
    add(WWW, "/css.html", 200, html("CSS", '<div id="box">box</div><div id="more">more</div><div id="imported">imp</div>'
                                           '<div id="font" style="font-family: TestFont">font</div>',
                                    head='<link rel="stylesheet" href="css/main.css">'), ct_html)
    add(WWW, "/css/main.css", 200, f"""@import url("http://{CDN}/css/extra.css");
@import "more.css";
@font-face {{ font-family: TestFont; src: url(../fonts/test.ttf) format("truetype"); }}
#box {{ background: rgb(0, 128, 0) url(../img/a.png); }}
""".encode(), css)
    add(WWW, "/css/more.css", 200, b"#more { color: rgb(1, 2, 3); }", css)
    add(CDN, "/css/extra.css", 200, b"#imported { color: rgb(4, 5, 6); }", css)
    if FONT:
        add(WWW, "/fonts/test.ttf", 200, Path(FONT).read_bytes(), [("Content-Type", "font/ttf")])
    add(WWW, "/scripts.html", 200, html("Scripts", OUT + '<script src="js/app.js"></script>'), ct_html)
    add(WWW, "/js/app.js", 200, APP_JS.encode(), js)
    add(WWW, "/js/mod.js", 200, b'export const v = "module-rel";', js)
    add(CDN, "/js/cdnmod.js", 200, b'export const v = "module-abs";', js)
    add(WWW, "/worker.js", 200, b'postMessage("worker-ok");', js)
    add(WWW, "/data/a.json", 200, b'{"v": "a"}', jsn)
    add(WWW, "/data/b.json", 200, b'{"v": "b"}', jsn)
    add(API, "/c.json", 200, b'{"v": "c"}', jsn)
    add(API, "/x.txt", 200, b"x-text\n", [("Content-Type", "text/plain")])
    add(WWW, "/frame.html", 200, html("Frames", f'<iframe id="f1" src="framed.html"></iframe>'
                                                f'<iframe id="f2" src="http://{WWW}/framed2.html"></iframe>'), ct_html)
    add(WWW, "/framed.html", 200, html("Framed", '<p id="t">framed content</p>'), ct_html)
    add(WWW, "/framed2.html", 200, html("Framed 2", '<p id="t">framed two</p>'), ct_html)
    add(WWW, "/r1", 301, b"", [("Location", f"http://{WWW}/r2")])
    add(WWW, "/r2", 302, b"", [("Location", "/final.html")])
    add(WWW, "/final.html", 200, html("Final", '<p id="t">final page</p>'), ct_html)
    add(WWW, "/form.html", 200, html("Form", '<form id="f1" method="post" action="submit">'
                                             '<input name="q" value="archive"><button id="go1">go</button></form>'
                                             f'<form id="f2" method="post" action="http://{WWW}/submit">'
                                             '<input name="q" value="archive"><button id="go2">go</button></form>'),
        ct_html)
    add(WWW, "/base.html", 200, html("Base", OUT + '<img id="b" src="b.png"><script>fetch("c.json")'
                                     '.then(function (r) { return r.json(); }).then(function (j) { out("fetch-base", j.v); })'
                                     '</script>', head=f'<base href="http://{WWW}/sub/">'), ct_html)
    add(WWW, "/sub/b.png", 200, png_bytes(5), [("Content-Type", "image/png")])
    add(WWW, "/sub/c.json", 200, b'{"v": "sub-c"}', jsn)
    add(WWW, "/latin1.html", 200, html("caf\u00e9", '<p id="t">caf\u00e9 cr\u00e8me</p>',
                                       head='<meta charset="iso-8859-1">', charset="latin-1"),
        [("Content-Type", "text/html; charset=iso-8859-1")])
    add(WWW, "/setloc.html", 200, html("Set location", '<script>setTimeout(function () {'
                                       f' location.href = "http://{WWW}/target.html"; }}, 10);</script>'), ct_html)
    # a navigation no rewriter can see (the property's name computed): only the CSP stops it
    add(WWW, "/setloc-dyn.html", 200, html("Set location (computed)", '<script>setTimeout(function () {'
                                           f' window["loc" + "ation"].href = "http://{WWW}/target.html"; }}, 10);'
                                           '</script>'), ct_html)
    add(WWW, "/onclick.html", 200, html("Set location (handler)", '<button id="go" onclick="location.href = '
                                        f'&quot;http://{WWW}/target.html?via=onclick&quot;">go</button>'), ct_html)
    add(WWW, "/setloc-js.html", 200, html("Set location (js)", '<script src="js/nav.js"></script>'), ct_html)
    add(WWW, "/js/nav.js", 200, b'setTimeout(function () { window.location = "/target.html?via=js"; }, 10);', js)
    add(WWW, "/target.html", 200, html("Target", '<p id="t">target page</p>'), ct_html)
    add(WWW, "/target.html?via=onclick", 200, html("Target onclick", '<p id="t">target via onclick</p>'), ct_html)
    add(WWW, "/target.html?via=js", 200, html("Target js", '<p id="t">target via js</p>'), ct_html)
    add(WWW, "/push.html", 200, html("Push", '<p id="t">push</p><script src="js/push.js"></script>'), ct_html)
    add(WWW, "/js/push.js", 200, b'setTimeout(function () { history.pushState({}, "", "/pushed/state?x=1"); '
                                 b'document.getElementById("t").textContent = "pushed"; }, 10);', js)
    add(WWW, "/video.html", 200, html("Video", '<video id="v" src="media/tone.wav" preload="metadata"></video>'), ct_html)
    add(WWW, "/media/tone.wav", 200, wav(), [("Content-Type", "audio/wav"), ("Accept-Ranges", "bytes")])
    add(WWW, "/evil.html", 200, html("Evil", OUT + '<script src="js/evil.js"></script>'), ct_html)
    add(WWW, "/js/evil.js", 200, EVIL_JS.encode(), js)
    return urls


class Replay:
    """What the tests share: the replay origin, the browser context and what leaked."""

    def __init__(self, origin, context, leaks, escaped, console, requests, pw):
        self.origin, self.context, self.leaks, self.escaped = origin, context, leaks, escaped
        self.console, self.requests, self.pw = console, requests, pw

    def top(self, url: str, ts: str = "") -> str:
        return f"{self.origin}/web/{ts}{'/' if ts else ''}{url}"

    def assert_no_leak(self) -> None:
        time.sleep(0.3)   # let connections still in flight reach the catcher
        assert self.leaks.hits == [], "\n".join(self.leaks.hits)
        assert self.escaped == [], self.escaped

    def reset(self) -> None:
        self.leaks.hits.clear()
        self.escaped.clear()
        self.console.clear()
        self.requests.clear()


def _crawl(site: Site, urls: List[str], coll: Path) -> None:
    import asyncio

    from warchive.capture.crawler import CrawlConfig, Crawler
    cfg = CrawlConfig(seeds=urls, delay_factor=0, min_delay=0, max_delay=0, politeness_off=True, fsync=False,
                      resolve={"*." + DOMAIN: "127.0.0.1"}, port_map={"80": site.port}, robots="ignore",
                      concurrency=4, max_hops=0, scope="domain", allow_addresses=["127.0.0.1"])
    stats = asyncio.run(Crawler(cfg, str(coll)).run())
    assert stats is not None


def _extra_warc(d: Path) -> Path:
    """The POST (a crawler does not post) and the page with <script> in its URL and title."""
    date = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    body = b"q=archive"
    uri = f"http://{WWW}/submit"
    recs = [warcgen.w_http("request", "post/req", uri, "POST", "/submit HTTP/1.1",
                           [("Host", WWW), ("Content-Type", "application/x-www-form-urlencoded"),
                            ("Content-Length", str(len(body)))], body, date=date),
            warcgen.w_http("response", "post/resp", uri, "HTTP/1.1", "200 OK",
                           [("Content-Type", "text/html; charset=utf-8")],
                           html("Posted", '<p id="t">posted: archive</p>'), date=date,
                           **{"WARC-Concurrent-To": warcgen.rid("post/req")}),
            warcgen.w_http("response", "evil", EVIL_URL, "HTTP/1.1", "200 OK",
                           [("Content-Type", "text/html; charset=utf-8")],
                           f"<html><head><title>{EVIL_TITLE}</title></head><body>evil</body></html>".encode(),
                           date=date)]
    warcgen.write_warc(d, "extra", recs)
    return d / "extra.warc.gz"


@pytest.fixture(scope="module")
def replay(tmp_path_factory):
    localsite.require_browser()
    from playwright.sync_api import sync_playwright

    from warchive.collection import Collection
    from warchive.replay.app import create_app

    tmp = tmp_path_factory.mktemp("replay-browser")
    coll = tmp / "colls" / "web"
    Collection.init(str(coll))
    site = Site()
    urls = build_site(site)
    with site:
        _crawl(site, urls, coll)
        crawled = {h.target for h in site.log}
    assert "/media/tone.wav" in crawled and "/submit" not in crawled
    Collection(str(coll)).add([str(_extra_warc(tmp))])

    leaks = LeakCatcher()
    console: List[str] = []
    with serve(create_app(str(tmp / "colls"))) as origin, sync_playwright() as pw:
        browser = launch(pw, leaks.port)
        context = browser.new_context(viewport={"width": 900, "height": 700}, device_scale_factor=1)
        guard = Guard(context, origin)
        context.on("console", lambda m: console.append(m.text))
        try:
            yield Replay(origin, context, leaks, guard.escaped, console, guard.requests, pw)
        finally:
            context.close()
            browser.close()
            leaks.close()


@pytest.fixture
def page(replay):
    replay.reset()
    pg = replay.context.new_page()
    pg.on("console", lambda m: replay.console.append(m.text))
    yield pg
    pg.close()


def frame_of(page):
    f = page.frame(name="wa-frame")
    assert f is not None
    return f


def outputs(frame, until: str) -> dict:
    frame.wait_for_function(f"""() => {{ const o = document.getElementById("out");
        return o && o.textContent.includes({json.dumps(until + '=')}); }}""", timeout=20000)
    text = frame.locator("#out").text_content() or ""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def loaded(frame, sel: str) -> bool:
    return frame.evaluate(f"""() => {{ const i = document.querySelector({json.dumps(sel)});
        return !!i && i.complete && i.naturalWidth > 0; }}""")


def blocked_by_csp(replay, url_part: str) -> bool:
    return any("Content Security Policy" in m and url_part in m for m in replay.console)


def go(page, replay, path: str):
    page.goto(replay.top(f"http://{WWW}{path}"))
    f = frame_of(page)
    f.wait_for_load_state("load")
    return f


# ---------------------------------------------------------------------------- the tests

def test_scripts_get_archived_responses_through_the_client(page, replay):
    f = go(page, replay, "/scripts.html")
    for k in ("fetch-rel", "fetch-root", "fetch-abs", "fetch-origin", "fetch-request", "fetch-missing", "xhr",
              "import-rel", "import-abs", "worker", "websocket", "eventsource"):
        got = outputs(f, k)
    assert got["location"] == f"http://{WWW}/scripts.html"          # the location proxy
    assert got["window.location"] == "/scripts.html"
    assert got["top"] == "true" and got["parent"] == "true"          # the archive's top, not the banner
    assert got["fetch-rel"] == "a" and got["fetch-root"] == "b" and got["fetch-abs"] == "c"
    assert got["fetch-origin"] == "b" and got["fetch-request"] == "c"
    assert got["fetch-missing"] == "404"                             # the archive's 404, as live: no network error
    assert got["xhr"] == "x-text"
    assert got["import-rel"] == "module-rel" and got["import-abs"] == "module-abs"
    assert got["worker"] == "worker-ok"
    assert got["websocket"] == "failed"                              # blocked, never connected
    assert got["cookie"] == "k=v" and got["storage"] == "1"         # no SecurityError in the opaque origin
    assert got["domain"] == WWW
    assert got["eventsource"] == "closed"
    replay.assert_no_leak()


def test_images_and_srcset(page, replay):
    f = go(page, replay, "/images.html")
    f.wait_for_function("() => document.getElementById('ihimg') && document.getElementById('ihimg').complete"
                        " && document.getElementById('dyn').complete")
    assert loaded(f, "#rel") and loaded(f, "#ss")
    assert f.evaluate("document.getElementById('ss').currentSrc").endswith(f"/http://{WWW}/img/c1.png")
    assert loaded(f, "#dyn") and loaded(f, "#ihimg")                 # set by a script: the client
    assert f.evaluate("document.getElementById('dyn').src") == f"http://{CDN}/img/b.png"   # read back as archived
    replay.assert_no_leak()


def test_static_image_urls_are_rewritten(page, replay):
    f = go(page, replay, "/images.html")
    assert loaded(f, "#abs") and loaded(f, "#root")
    replay.assert_no_leak()


def test_unrewritten_static_urls_are_blocked_not_leaked(page, replay):
    f = go(page, replay, "/images.html")
    f.wait_for_function("() => document.getElementById('abs').complete")
    if not loaded(f, "#abs"):        # without the kernel: the CSP stopped it in the browser
        assert blocked_by_csp(replay, f"http://{CDN}/img/b.png")
    replay.assert_no_leak()


def test_css_urls_imports_and_fonts(page, replay):
    f = go(page, replay, "/css.html")
    assert f.evaluate("getComputedStyle(document.getElementById('box')).backgroundColor") == "rgb(0, 128, 0)"
    assert f.evaluate("getComputedStyle(document.getElementById('more')).color") == "rgb(1, 2, 3)"   # @import
    f.wait_for_function("() => document.fonts.status === 'loaded'")
    assert any(u.endswith(f"/http://{WWW}/img/a.png") for u in replay.requests), replay.requests   # url()
    if FONT:
        assert f.evaluate("document.fonts.load('12px TestFont').then(l => l.length)") == 1          # @font-face
    if f.evaluate("getComputedStyle(document.getElementById('imported')).color") != "rgb(4, 5, 6)":
        assert blocked_by_csp(replay, f"http://{CDN}/css/extra.css")
    replay.assert_no_leak()


def test_css_absolute_import(page, replay):
    f = go(page, replay, "/css.html")
    assert f.evaluate("getComputedStyle(document.getElementById('imported')).color") == "rgb(4, 5, 6)"


def test_iframe(page, replay):
    f = go(page, replay, "/frame.html")
    inner = f.frame_locator("#f1").locator("#t")
    assert inner.text_content() == "framed content"
    replay.assert_no_leak()


def test_iframe_with_absolute_src(page, replay):
    f = go(page, replay, "/frame.html")
    assert f.frame_locator("#f2").locator("#t").text_content(timeout=5000) == "framed two"


def test_redirect_chain_and_the_banner_follows(page, replay):
    page.goto(replay.top(f"http://{WWW}/r1"))
    f = frame_of(page)
    f.wait_for_selector("#t")
    assert f.locator("#t").text_content() == "final page"
    page.wait_for_function(f"() => document.getElementById('wa-orig').textContent === 'http://{WWW}/final.html'")
    assert page.url.endswith(f"/http://{WWW}/final.html")           # the banner's address follows too
    replay.assert_no_leak()


def test_banner_updates_when_the_frame_navigates(page, replay):
    f = go(page, replay, "/")
    f.click("a[href='images.html']")
    page.wait_for_function(f"() => document.getElementById('wa-orig').textContent === 'http://{WWW}/images.html'")
    page.goto(replay.top(f"http://{WWW}/"))
    f = frame_of(page)
    f.wait_for_load_state("load")
    f.click("#abs")                                                   # an absolute link: the client's net
    page.wait_for_function(f"() => document.getElementById('wa-orig').textContent === 'http://{WWW}/images.html'")
    page.goto(replay.top(f"http://{WWW}/push.html"))
    f = frame_of(page)
    f.wait_for_function("() => document.getElementById('t').textContent === 'pushed'")
    page.wait_for_function(f"() => document.getElementById('wa-orig').textContent === 'http://{WWW}/pushed/state?x=1'")
    assert f.evaluate("location.href").endswith(f"/http://{WWW}/pushed/state?x=1")
    replay.assert_no_leak()


def test_form_post(page, replay):
    for button in ("#go1", "#go2"):
        f = go(page, replay, "/form.html")
        f.click(button)
        f.wait_for_selector("#t")
        assert f.locator("#t").text_content() == "posted: archive"
    replay.assert_no_leak()


def test_base_tag(page, replay):
    f = go(page, replay, "/base.html")
    got = outputs(f, "fetch-base")
    assert got["fetch-base"] == "sub-c"                                # the client resolves against <base>
    if not loaded(f, "#b"):
        assert blocked_by_csp(replay, f"http://{WWW}/sub/b.png")
    replay.assert_no_leak()


def test_base_tag_static(page, replay):
    f = go(page, replay, "/base.html")
    assert loaded(f, "#b")


def test_non_utf8_page(page, replay):
    f = go(page, replay, "/latin1.html")
    assert f.locator("#t").text_content() == "caf\u00e9 cr\u00e8me"
    assert f.evaluate("document.characterSet") == "windows-1252"
    page.wait_for_function("() => document.title.startsWith('caf\u00e9')")   # the title, told to the banner
    replay.assert_no_leak()


def test_page_setting_location_from_a_script_file(page, replay):
    go(page, replay, "/setloc-js.html")
    page.wait_for_function(f"() => document.getElementById('wa-orig').textContent === 'http://{WWW}/target.html?via=js'")
    assert frame_of(page).locator("#t").text_content() == "target via js"
    replay.assert_no_leak()


def test_page_setting_location_from_an_inline_script(page, replay):
    go(page, replay, "/setloc.html")
    page.wait_for_function(f"() => document.getElementById('wa-orig').textContent === 'http://{WWW}/target.html'")
    assert frame_of(page).locator("#t").text_content() == "target page"
    replay.assert_no_leak()


def test_page_setting_location_from_an_event_handler(page, replay):
    f = go(page, replay, "/onclick.html")
    f.locator("#go").click()
    page.wait_for_function(f"() => document.getElementById('wa-orig').textContent === "
                           f"'http://{WWW}/target.html?via=onclick'")
    assert frame_of(page).locator("#t").text_content() == "target via onclick"
    replay.assert_no_leak()


def test_unrewritten_navigation_is_blocked_in_the_browser(page, replay):
    """An inline script's ``window["loc" + "ation"].href = <live URL>``, which no rewriting
    can see: the banner's frame-src stops it before any request. chromium still preconnects to the host of a
    navigation it then blocks (a TCP connection that carries nothing): the catcher may see that,
    never a request."""
    go(page, replay, "/setloc-dyn.html")
    page.wait_for_timeout(1000)
    f = frame_of(page)
    assert f.url.startswith((replay.origin + "/web/", "chrome-error://")), f.url   # blocked: an error page
    assert any("frame-src" in m and f"http://{WWW}/" in m for m in replay.console), replay.console
    time.sleep(0.3)
    replay.leaks.settle()   # the preconnect is recorded here, not in the next test
    assert all(h == "(connected, nothing sent)" for h in replay.leaks.hits), replay.leaks.hits
    assert replay.escaped == []


def test_video_seeks_with_ranges(page, replay):
    ranges = []
    page.on("response", lambda r: ranges.append((r.status, r.request.headers.get("range"), r.headers.get("content-range")))
            if "tone.wav" in r.url else None)
    f = go(page, replay, "/video.html")
    duration = f.evaluate("""() => new Promise(ok => { const v = document.getElementById('v');
        if (v.readyState >= 1) ok(v.duration); else v.addEventListener('loadedmetadata', () => ok(v.duration)); })""")
    assert abs(duration - 60) < 0.1
    t = f.evaluate("""() => new Promise(ok => { const v = document.getElementById('v');
        v.addEventListener('seeked', () => ok(v.currentTime), {once: true}); v.currentTime = 55; })""")
    assert abs(t - 55) < 0.5
    f.evaluate("""() => new Promise(ok => { const v = document.getElementById('v'); v.muted = true;
        v.addEventListener('timeupdate', () => ok(v.currentTime), {once: true}); v.play(); })""")
    assert ranges and all(s == 206 for s, _, _ in ranges), ranges
    starts = [int(re.match(r"bytes (\d+)-", cr).group(1)) for s, _, cr in ranges if cr]
    assert max(starts) > 44 + 50 * 44100 * 4 * 0.9, ranges           # a range from near the seek point
    replay.assert_no_leak()


def test_archived_page_cannot_reach_the_banner_or_the_replay_hosts_cookies(page, replay):
    replay.context.add_cookies([{"name": "secret", "value": "s3cr3t", "url": replay.origin + "/"}])
    try:
        f = go(page, replay, "/evil.html")
        got = outputs(f, "done")
        assert got["banner-dom"] == "blocked" and got["banner-read"] == "blocked"
        assert got["banner-cookie"] == "blocked"
        assert "s3cr3t" not in got["cookie"]
        assert page.locator("#wa-banner").count() == 1 and "pwned" not in (page.text_content("body") or "")
        page.wait_for_function(f"() => document.getElementById('wa-orig').textContent === 'http://{WWW}/told'")
        assert page.get_attribute("#wa-orig", "href") == f"http://{WWW}/told"   # the javascript: one refused
        assert page.evaluate("window.__pwned") is None
        assert page.locator("#wa-banner img").count() == 0
        assert page.url.startswith(replay.origin + "/")                          # top not navigated
    finally:
        replay.context.clear_cookies()
    replay.assert_no_leak()


def test_script_in_a_url_or_title_does_not_run_in_our_pages(page, replay):
    from urllib.parse import quote
    for target in (replay.top(EVIL_URL), f"{replay.origin}/web/*/{EVIL_URL}",
                   f"{replay.origin}/web/*/http://{WWW}/q*", f"{replay.origin}/web/?url={quote(EVIL_URL)}"):
        page.goto(target)
        page.wait_for_load_state("load")
        assert page.evaluate("window.__xss") is None, target
        assert page.locator("body script").count() == 0, target
    page.goto(replay.top(EVIL_URL))
    f = frame_of(page)
    f.wait_for_load_state("load")
    page.wait_for_function("() => document.title.includes('<script>')")        # shown as text
    assert page.evaluate("window.__xss") is None
    replay.assert_no_leak()


# ---------------------------------------------------------------------------- replayed = live, pixel for pixel
#
# Chromium draws a cross-origin iframe's text on a layer of its own: about a dozen anti-aliased
# pixels of a page come out one level apart from the same page drawn at the top of a window
# (measured: "/" 14 pixels, css.html 1, frame.html 1, each off by 1 in one channel). The banner's
# frame is cross-origin (sandboxed: an opaque origin), so the user's view is compared with the
# live page in a cross-origin frame of the same size, and the page's own content (its mp_ URL)
# at the top of a window with the live page at the top of one. (A sandboxed live frame is no
# oracle: its opaque origin makes the live site's @font-face a CORS failure, which the archive's
# Access-Control-Allow-Origin avoids.)

SHOT = {"width": 900, "height": 700}
STATIC_PAGES = ["/", "/images.html", "/css.html", "/base.html", "/latin1.html", "/frame.html"]
WRAP = f"wrap.{DOMAIN}"
SETTLED = """async () => {
  await document.fonts.ready;
  await Promise.all(Array.from(document.images,
                               i => i.complete ? null : new Promise(ok => { i.onload = i.onerror = ok; })));
  await new Promise(ok => requestAnimationFrame(() => requestAnimationFrame(ok)));
  const out = document.getElementById("out");
  return {images: Array.from(document.images).filter(i => i.naturalWidth > 0).length,
          broken: Array.from(document.images).filter(i => !i.naturalWidth).length,
          fonts: Array.from(document.fonts).filter(f => f.status === "loaded").length,
          text: document.body.innerText, out: out ? out.textContent : null};
}"""


def _settled(frame) -> list:
    """When the frame and its frames have their fonts and images: what each shows."""
    got = [frame.evaluate(SETTLED)] + [s for c in frame.child_frames for s in _settled(c)]
    return sorted(got, key=json.dumps)


def _drew(png: bytes) -> bool:
    img = pngutil.decode(png)
    return any(row != img.rows[0] for row in img.rows) or len(set(img.rows[0])) > 1


def _wrapper(req, rest: str):
    """A page of another origin holding the live page in a frame the size of the viewport."""
    from testsite import Reply
    body = (f'<!DOCTYPE html><html><body style="margin:0"><iframe id="x" src="http://{WWW}/{rest}" '
            f'style="display:block;border:0;width:{SHOT["width"]}px;height:{SHOT["height"]}px"></iframe>'
            '</body></html>').encode()
    return Reply([response_bytes(200, body, [("Content-Type", "text/html")])])


@pytest.fixture(scope="module")
def live(replay):
    """The test site served live (the same bytes the crawl archived) and a host of another
    origin framing its pages, in a chromium of its own whose *.site.test resolve to it, with
    the replay's flags and viewport."""
    site = Site()
    build_site(site)
    site.add_prefix(WRAP, "/", _wrapper)
    with site:
        browser = launch_live(replay.pw, DOMAIN, site.port)
        context = browser.new_context(viewport=SHOT, device_scale_factor=1)
        try:
            yield context
        finally:
            context.close()
            browser.close()


def _written(frame, path: str) -> None:
    """Wait until the page's own script has written what it writes (base.html: its fetch)."""
    if path == "/base.html":
        outputs(frame, "fetch-base")


def _differences(a: bytes, b: bytes) -> str:
    """"" when the two PNGs decode to the same pixels, else where they differ."""
    ia, ib = pngutil.decode(a), pngutil.decode(b)
    if (ia.width, ia.height) != (ib.width, ib.height):
        return f"sizes differ: {ia.width}x{ia.height} live, {ib.width}x{ib.height} replayed"
    if ia.channels == ib.channels:
        rows = [y for y in range(ia.height) if ia.rows[y] != ib.rows[y]]
    else:
        rows = [y for y in range(ia.height) if any(ia.pixel(x, y) != ib.pixel(x, y) for x in range(ia.width))]
    if not rows:
        return ""
    pixels = [(x, y) for y in rows for x in range(ia.width) if ia.pixel(x, y) != ib.pixel(x, y)]
    x, y = pixels[0]
    return (f"{len(pixels)} pixels differ in rows {rows[0]}..{rows[-1]}; first at ({x}, {y}): "
            f"live {ia.pixel(x, y)}, replayed {ib.pixel(x, y)}")


def _live_shots(live, path: str):
    """The live page at the top of a window and in a cross-origin frame: (state, top, framed)."""
    lp = live.new_page()
    try:
        lp.goto(f"http://{WWW}{path}")
        _written(lp.main_frame, path)
        state = _settled(lp.main_frame)
        top = lp.screenshot(animations="disabled", caret="hide")
        lp.goto(f"http://{WRAP}{path}")
        f = lp.locator("#x").element_handle().content_frame()
        f.wait_for_load_state("load")
        _written(f, path)
        assert _settled(f) == state
        framed = lp.locator("#x").screenshot(animations="disabled", caret="hide")
    finally:
        lp.close()
    return state, top, framed


def _compare(path: str, what: str, live_png: bytes, replay_png: bytes, out: Path) -> None:
    diff = _differences(live_png, replay_png)
    if diff:
        stem = what.replace(" ", "-")
        (out / f"{stem}-live.png").write_bytes(live_png)
        (out / f"{stem}-replayed.png").write_bytes(replay_png)
    assert diff == "", f"{path} {what}: {diff} (the screenshots are in {out})"


@pytest.mark.parametrize("path", STATIC_PAGES)
def test_replayed_static_page_looks_as_the_live_one(path, live, page, replay, tmp_path):
    """Same viewport (the banner's frame sized to it), the same fonts (DejaVu through
    @font-face, the system's otherwise), no animation, no caret: the replayed page in the
    banner's frame, as the user sees it, and its mp_ URL at the top of a window are the live
    page's pixels."""
    state, live_top, live_framed = _live_shots(live, path)
    assert all(s["broken"] == 0 for s in state) and _drew(live_top)   # the live page is whole and drew
    page.set_viewport_size(SHOT)
    go(page, replay, path)
    banner = page.evaluate("document.getElementById('wa-frame').getBoundingClientRect().top")
    assert banner == int(banner), banner            # the banner is whole pixels high: no subpixel shift
    page.set_viewport_size({"width": SHOT["width"], "height": SHOT["height"] + int(banner)})
    f = go(page, replay, path)
    box = page.locator("#wa-frame").bounding_box()
    assert (box["width"], box["height"]) == (SHOT["width"], SHOT["height"]), box
    _written(f, path)
    assert _settled(f) == state
    _compare(path, "framed", live_framed, page.locator("#wa-frame").screenshot(animations="disabled", caret="hide"),
             tmp_path)
    content = f.url
    assert "mp_/" in content, content
    page.set_viewport_size(SHOT)
    page.goto(content)
    _written(page.main_frame, path)
    assert _settled(page.main_frame) == state
    _compare(path, "top", live_top, page.screenshot(animations="disabled", caret="hide"), tmp_path)
    replay.assert_no_leak()
