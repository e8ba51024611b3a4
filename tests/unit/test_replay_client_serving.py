"""What the server does for the client script and against leaks (warchive.replay.app and
replayer): JavaScript bodies rewritten under js_ and as archived under id_, the head insert left
out of HTML a script fetches, the top frame's Content-Security-Policy (frame-src), the replayed
pages' policy (no sockets), and CORS preflights from the sandboxed frame.

The collection is built with warcio (tests/warcgen.py); the expected bytes are the archived
ones with the renames of warchive.replay.js written out by hand.
"""

from __future__ import annotations

import pytest
from starlette.testclient import TestClient

from warcgen import w_http, write_warc
from warchive.collection import Collection
from warchive.replay.app import create_app

D1 = "2020-01-01T00:00:00Z"
TS = "20200101000000"
JS = b"if (top !== self) { top.location = self.location }\nvar s = 'top';\nimport('./m.js');\n"
PAGE = b"<!doctype html><html><head><title>t</title></head><body>page</body></html>"


def resp(name, uri, body, ctype):
    return w_http("response", name, uri, "HTTP/1.1", "200 OK",
                  [("Content-Type", ctype), ("Content-Length", str(len(body)))], body, date=D1)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    d = tmp_path_factory.mktemp("client-serving")
    write_warc(d, "site", [resp("js", "http://example.com/app.js", JS, "application/javascript"),
                           resp("page", "http://example.com/", PAGE, "text/html; charset=utf-8")])
    Collection.init(str(d / "colls" / "web")).add([str(d / "site.warc.gz")])
    return d / "colls"


@pytest.fixture()
def client(root):
    return TestClient(create_app(str(root)))


def test_js_bodies_are_rewritten(client):
    r = client.get(f"/web/{TS}js_/http://example.com/app.js")
    assert r.status_code == 200
    assert r.content == (b"if (__wa_top !== self) { __wa_top.__wa_location = self.__wa_location }\n"
                         b"var s = 'top';\n"
                         b'__wa_import("http://example.com/app.js")(\'./m.js\');\n')
    assert r.headers["content-length"] == str(len(r.content))
    assert r.headers["content-type"].startswith("text/javascript")


def test_id_gives_the_script_as_archived(client):
    assert client.get(f"/web/{TS}id_/http://example.com/app.js").content == JS


def test_a_script_fetching_html_gets_no_head_insert(client):
    url = f"/web/{TS}mp_/http://example.com/"
    page = client.get(url, headers={"Sec-Fetch-Dest": "iframe"}).content   # a frame: the page and its client
    start = page.index(b'<script type="application/json" id="wa-replay-info">')
    end = page.index(b'wa_client.js"></script>') + len(b'wa_client.js"></script>')
    assert page[:start] + page[end:] == PAGE
    for h in ({"Sec-Fetch-Dest": "empty"}, {"X-Requested-With": "XMLHttpRequest"}):
        assert client.get(url, headers=h).content == PAGE


def test_replayed_pages_allow_no_sockets(client):
    csp = client.get(f"/web/{TS}mp_/http://example.com/").headers["content-security-policy"]
    assert "'self'" in csp and "ws:" not in csp and "wss:" not in csp


def test_the_top_frame_may_frame_the_archive_only(client, root):
    csp = client.get("/web/http://example.com/").headers["content-security-policy"]
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert directives["frame-src"] == "'self'"
    assert directives["default-src"] == "'self'" and "unsafe" not in csp
    other = TestClient(create_app(str(root), replay_host="http://replay.example:8081"))
    csp2 = other.get("/web/http://example.com/").headers["content-security-policy"]
    assert "frame-src 'self' http://replay.example:8081" in csp2


def test_cors_preflight_from_the_sandboxed_frame(client, root):
    r = client.options(f"/web/{TS}mp_/http://example.com/", headers={
        "Origin": "null", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type, x-asked"})
    assert r.status_code == 204
    assert r.headers["access-control-allow-origin"] == "*"
    assert r.headers["access-control-allow-headers"] == "content-type, x-asked"
    assert "POST" in r.headers["access-control-allow-methods"]
    # with a replay host, pages have an origin of their own: no cross-origin request to allow
    other = TestClient(create_app(str(root), replay_host="http://replay.example:8081"))
    assert other.options(f"/web/{TS}mp_/http://example.com/", headers={
        "Origin": "http://elsewhere.example", "Access-Control-Request-Method": "POST"}).status_code == 403


def test_a_capture_not_found_is_readable_by_the_sandboxed_frame(client, root):
    """A script's fetch() of a URL never captured sees the 404, as it would have seen the live
    one's, not a network error: the sandboxed frame's origin is opaque, so the error needs the
    same Access-Control-Allow-Origin as replayed responses."""
    for url in (f"/web/{TS}mp_/http://example.com/never.json", f"/web/{TS}id_/http://other.example/x.woff2"):
        r = client.get(url, headers={"Origin": "null", "Sec-Fetch-Mode": "cors"})
        assert r.status_code == 404
        assert r.headers["access-control-allow-origin"] == "*"
    assert client.get(f"/web/{TS}mp_/http://example.com/").headers["access-control-allow-origin"] == "*"
    # pages on an origin of their own, or at the top (frameless): nothing cross-origin to allow
    for other in (TestClient(create_app(str(root), replay_host="http://replay.example:8081"),
                             base_url="http://replay.example:8081"),
                  TestClient(create_app(str(root), framed_replay=False))):
        r = other.get(f"/web/{TS}mp_/http://example.com/never.json")
        assert r.status_code == 404 and "access-control-allow-origin" not in r.headers
