"""Replay through the ASGI app (warchive.replay.app): the bodies and headers a visitor gets for
mementos, TimeGates, top frames, ranges, POSTs, queries and errors.

The collection is built here with warcio (tests/warcgen.py): the payloads, dates and URLs the
assertions compare against are the ones written into the WARC, not anything warchive computed.
"""

from __future__ import annotations

import re
from email.utils import format_datetime, parsedate_to_datetime

import pytest
from starlette.testclient import TestClient

from replaysite import EVIL_URL, PNG, SHOT, TS1, TS2, TS3, VIDEO, VIEW, page, write_site
from storekit import store_in_place
from warchive.collection import Collection
from warchive.replay.app import create_app
from warchive.replay.urls import ArchivalUrl, UrlRewriter

@pytest.fixture(scope="module", params=["plain", "store"])
def root(request, tmp_path_factory):
    """The collection, its WARC as a plain file in archive/, or (``store``) only in the durable
    store that archive/ is made into (tests/storekit.py): every test here runs over both."""
    d = tmp_path_factory.mktemp("replay")
    Collection.init(str(d / "colls" / "web")).add([str(write_site(d))])
    if request.param == "store":
        store_in_place(d / "colls" / "web" / "archive", d / "volumes")
    return d / "colls"


@pytest.fixture()
def client(root):
    return TestClient(create_app(str(root)))


@pytest.fixture()
def frameless(root):
    return TestClient(create_app(str(root), framed_replay=False))


def _link_rels(link):
    """{rel: (url, datetime)} of a Link header."""
    out = {}
    for m in re.finditer(r'<([^>]*)>((?:;\s*[a-z]+="[^"]*")*)', link):
        params = dict(re.findall(r'([a-z]+)="([^"]*)"', m.group(2)))
        out[params["rel"]] = (m.group(1), params.get("datetime"))
    return out


def test_id_gives_the_archived_bytes_and_headers(client):
    r = client.get(f"/web/{TS1}id_/http://example.com/logo.png")
    assert r.status_code == 200
    assert r.content == PNG
    assert r.headers["content-type"] == "image/png"
    assert r.headers["content-length"] == str(len(PNG))
    assert "content-security-policy" not in r.headers      # id_: as archived


def test_a_memento_has_its_datetime_and_neighbours(frameless):
    r = frameless.get(f"/web/{TS2}/http://example.com/")
    assert r.status_code == 200
    assert parsedate_to_datetime(r.headers["memento-datetime"]) == parsedate_to_datetime("Tue, 15 Jun 2021 12:00:00 GMT")
    rels = _link_rels(r.headers["link"])
    assert rels["original"][0] == "http://example.com/"
    assert rels["timegate"][0].endswith("/web/http://example.com/")
    assert rels["timemap"][0].endswith("/web/timemap/link/http://example.com/")
    assert rels["memento"][0].endswith(f"/web/{TS2}/http://example.com/")
    assert rels["first memento"][0].endswith(f"/web/{TS1}/http://example.com/")
    assert rels["last memento"][0].endswith(f"/web/{TS3}/http://example.com/")
    assert parsedate_to_datetime(rels["first memento"][1]).year == 2020
    assert b"version 2" in r.content


def test_the_page_gets_the_client_script_after_head_and_is_otherwise_whole(frameless):
    r = frameless.get(f"/web/{TS1}mp_/http://example.com/")
    body = r.content
    i = body.index(b"<head>") + len(b"<head>")
    assert body[i:].startswith(b'<script type="application/json" id="wa-replay-info">')
    script_end = body.index(b"wa_client.js\"></script>", i) + len(b"wa_client.js\"></script>")
    # every byte but the image's URL is the page's, and that URL is UrlRewriter's (pywb's im_ for <img src>)
    rw = UrlRewriter(ArchivalUrl("http://example.com/", TS1, "mp_"), "http://testserver/web/", "http://testserver/web/")
    want = page(1).replace(b'src="/logo.png"', b'src="' + rw.rewrite("/logo.png", "im_").encode() + b'"')
    assert want != page(1)
    assert body[:i] + body[script_end:] == want
    assert r.headers["content-length"] == str(len(body))
    csp = r.headers["content-security-policy"]
    assert "'self'" in csp and "http:" not in csp and "*" not in csp.replace("'unsafe-eval'", "")


def test_timegate_answers_the_closest_to_accept_datetime(frameless):
    when = format_datetime(parsedate_to_datetime("Mon, 01 Jun 2021 00:00:00 GMT"), usegmt=True)
    r = frameless.get("/web/mp_/http://example.com/", headers={"Accept-Datetime": when})
    assert r.status_code == 200 and b"version 2" in r.content
    assert r.headers["vary"] == "accept-datetime"
    assert r.headers["content-location"].endswith(f"/web/{TS2}mp_/http://example.com/")
    r = frameless.get("/web/mp_/http://example.com/")
    assert b"version 3" in r.content            # no Accept-Datetime: the latest


def test_accept_datetime_is_ignored_with_a_timestamp_and_bad_ones_are_400(frameless):
    r = frameless.get(f"/web/{TS1}mp_/http://example.com/", headers={"Accept-Datetime": "Sat, 31 Dec 2022 23:59:59 GMT"})
    assert b"version 1" in r.content and "vary" not in r.headers
    r = frameless.get("/web/mp_/http://example.com/", headers={"Accept-Datetime": "yesterday"})
    assert r.status_code == 400


def test_redirect_to_exact(root):
    c = TestClient(create_app(str(root), framed_replay=False, redirect_to_exact=True))
    r = c.get("/web/2021mp_/http://example.com/", follow_redirects=False)
    assert r.status_code == 307 and r.headers["location"].endswith(f"/web/{TS2}mp_/http://example.com/")
    r = c.get(f"/web/{TS2}mp_/http://example.com/", follow_redirects=False)
    assert r.status_code == 200 and b"version 2" in r.content
    r = c.get("/web/http://example.com/", follow_redirects=False)
    assert r.status_code == 307 and r.headers["location"].endswith(f"/web/{TS3}/http://example.com/")
    assert r.headers["vary"] == "accept-datetime"


def test_an_unknown_url_is_404_without_memento_headers(frameless):
    r = frameless.get("/web/2020mp_/http://example.com/never")
    assert r.status_code == 404
    assert "memento-datetime" not in r.headers and "link" not in r.headers


def test_an_archived_redirect_stays_a_redirect_into_the_archive(frameless):
    r = frameless.get(f"/web/{TS1}mp_/http://example.com/old", follow_redirects=False)
    assert r.status_code == 301
    assert r.headers["location"].endswith(f"/web/{TS1}mp_/http://example.com/")


@pytest.mark.parametrize("rng, start, end", [("bytes=0-99", 0, 99), ("bytes=1000-", 1000, len(VIDEO) - 1),
                                             ("bytes=-500", len(VIDEO) - 500, len(VIDEO) - 1),
                                             ("bytes=299990-400000", 299990, len(VIDEO) - 1)])
def test_range_requests_get_206_slices_of_the_payload(frameless, rng, start, end):
    r = frameless.get(f"/web/{TS1}mp_/http://example.com/v.mp4", headers={"Range": rng})
    assert r.status_code == 206
    assert r.content == VIDEO[start:end + 1]
    assert r.headers["content-range"] == f"bytes {start}-{end}/{len(VIDEO)}"


def test_an_unsatisfiable_range_is_416(frameless):
    r = frameless.get(f"/web/{TS1}id_/http://example.com/v.mp4", headers={"Range": f"bytes={len(VIDEO)}-"})
    assert r.status_code == 416 and r.headers["content-range"] == f"bytes */{len(VIDEO)}"


def test_a_post_replays_the_post_capture_and_a_get_the_get(frameless):
    r = frameless.post(f"/web/{TS2}mp_/http://example.com/form", content=b"q=archive&n=1",
                       headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 200 and r.content == b"posted: yes"
    r = frameless.get(f"/web/{TS2}mp_/http://example.com/form")
    assert r.content == b"the form"


def test_the_top_frame_holds_the_banner_and_the_content_frame(client):
    r = client.get(f"/web/{TS2}/http://example.com/")
    assert r.status_code == 200
    html = r.text
    m = re.search(r'<iframe id="wa-frame"[^>]* src="([^"]+)"[^>]*sandbox="([^"]+)"', html)
    assert m and m.group(1).endswith(f"/web/{TS2}mp_/http://example.com/")
    assert "allow-same-origin" not in m.group(2)     # the page cannot reach the banner
    assert f"/web/{TS1}/http://example.com/" in html  # previous capture
    assert f"/web/{TS3}/http://example.com/" in html  # next capture
    assert "3 captures" in html


def test_a_hostile_url_or_title_cannot_inject_into_our_pages(client):
    for path in (f"/web/{TS1}/{EVIL_URL}", f"/web/*/{EVIL_URL}", "/web/*/example.com/*"):
        r = client.get(path)
        assert r.status_code == 200, path
        assert "<script>alert" not in r.text, path


def test_the_calendar_and_the_url_list(client):
    r = client.get("/web/*/example.com/")
    for ts in (TS1, TS2, TS3):
        assert f"/web/{ts}/http://example.com/" in r.text
    r = client.get("/web/*/example.com/*")
    for u in ("http://example.com/logo.png", "http://example.com/v.mp4", "http://example.com/old"):
        assert u in r.text


def raw_get(app, raw_path: bytes):
    """GET a path exactly as given (an HTTP client would normalise its dot segments)."""
    import asyncio
    path, _, qs = raw_path.partition(b"?")
    scope = {"type": "http", "method": "GET", "scheme": "http", "path": path.decode("latin-1"), "raw_path": path,
             "query_string": qs, "root_path": "", "headers": [(b"host", b"testserver")],
             "server": ("testserver", 80), "http_version": "1.1"}
    sent = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(msg):
        sent.append(msg)
    asyncio.run(app(scope, receive, send))
    return sent[0]["status"], b"".join(m.get("body", b"") for m in sent[1:])


@pytest.mark.parametrize("path", [b"/../web/cdx?url=x", b"/%2e%2e/web/", b"/..%2fweb/", b"/.hidden/",
                                  b"/web%2f..%2f../", b"/%2Fetc/passwd", b"/web/%2e%2e/%2e%2e/etc/passwd",
                                  b"/web/../../etc/passwd", b"/web/19990101id_/file:///etc/passwd",
                                  b"/web/cdx/../../../etc/passwd", b"/static/../config.py", b"/static/%2e%2e/app.py"])
def test_paths_never_leave_the_collections(root, path):
    status, body = raw_get(create_app(str(root)), path)
    assert status in (400, 404), path
    assert b"root:" not in body and b"import" not in body


def test_collections_home_and_static(client):
    assert "web" in client.get("/").text
    assert client.get("/web/").status_code == 200
    r = client.get("/web/?url=example.com/&matchType=exact", follow_redirects=False)
    assert r.status_code == 302 and r.headers["location"] == "/web/*/example.com/"
    assert client.get("/static/wa_client.js").status_code == 200
    assert client.get("/static/../app.py").status_code == 404
    assert client.get("/nope/").status_code == 404


def test_timemap_link(client):
    r = client.get("/web/timemap/link/http://example.com/")
    assert r.status_code == 200 and r.headers["content-type"] == "application/link-format"
    rels = [m.group(1) for m in re.finditer(r'rel="([^"]+)"', r.text)]
    assert rels[:3] == ["self", "timegate", "original"] and rels.count("memento") == 3
    r2 = client.get("/web/timemap/link/http://example.com/", headers={"Accept-Datetime": "Sat, 31 Dec 2022 00:00:00 GMT"})
    assert r2.text == r.text    # a TimeMap is not negotiated in time (pywb reads it as a FROM)
    assert client.get("/web/timemap/link/http://example.com/never").status_code == 404


def test_the_app_mounts_under_a_prefix(root):
    from starlette.applications import Starlette
    from starlette.routing import Mount
    outer = Starlette(routes=[Mount("/archive", app=create_app(str(root), framed_replay=False))])
    c = TestClient(outer)
    r = c.get(f"/archive/web/{TS1}mp_/http://example.com/")
    assert r.status_code == 200 and b"version 1" in r.content
    assert b'"prefix":"http://testserver/archive/web/"' in r.content


def test_the_banner_names_the_pages_screenshots_and_links_them(client):
    html = client.get(f"/web/{TS2}/http://example.com/").text
    links = dict((label, href) for href, label in
                 re.findall(r'<a class="wa-res" href="([^"]+)"[^>]*>([^<]+)</a>', html))
    assert len(links) == 2, html
    got = {client.get(href.replace("&amp;", "&")).content for href in links.values()}
    assert got == {SHOT, VIEW}
    assert any(label.startswith("screenshot") for label in links)
    assert any(label.startswith("view screenshot") for label in links)


def test_with_a_replay_host_pages_run_on_their_own_origin(root):
    app = create_app(str(root), replay_host="http://replay.test:9000")
    main = TestClient(app, base_url="http://127.0.0.1:8080")
    html = main.get(f"/web/{TS2}/http://example.com/").text
    m = re.search(r'<iframe id="wa-frame"([^>]*)>', html)
    assert f'src="http://replay.test:9000/web/{TS2}mp_/http://example.com/"' in m.group(1)
    assert "sandbox" not in m.group(1)
    for mod in ("mp_", "id_", "im_"):   # no archived bytes on the banner's origin
        r = main.get(f"/web/{TS2}{mod}/http://example.com/", follow_redirects=False)
        assert r.status_code == 307
        assert r.headers["location"] == f"http://replay.test:9000/web/{TS2}{mod}/http://example.com/"
    other = TestClient(app, base_url="http://replay.test:9000")
    r = other.get(f"/web/{TS2}mp_/http://example.com/")
    assert r.status_code == 200 and b"version 2" in r.content
    assert "access-control-allow-origin" not in r.headers
    r = other.get(f"/web/{TS2}/http://example.com/")   # no banner on the replay origin: the page itself
    assert b"version 2" in r.content and b"wa-frame" not in r.content


def test_a_missing_slash_is_redirected_as_pywb_does(frameless):
    r = frameless.get(f"/web/{TS1}mp_/http://example.com/docs", follow_redirects=False)
    assert r.status_code == 307
    assert r.headers["location"].endswith(f"/web/{TS1}mp_/http://example.com/docs/")
    r = frameless.get(f"/web/{TS1}mp_/http://example.com", follow_redirects=False)
    assert r.status_code == 307 and r.headers["location"].endswith(f"/web/{TS1}mp_/http://example.com/")


def test_replay_never_opens_a_network_connection(client, monkeypatch):
    import socket
    tried = []

    def refuse(self, address):
        tried.append(address)
        raise OSError("no network in replay")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: refuse(None, a[0]))
    for path in (f"/web/{TS2}/http://example.com/", f"/web/{TS2}mp_/http://example.com/",
                 "/web/mp_/http://example.com/logo.png", "/web/timemap/link/http://example.com/",
                 "/web/*/example.com/*", "/web/2020mp_/http://never.example/", f"/web/{TS1}mp_/http://example.com/old"):
        client.get(path, follow_redirects=False)
    assert tried == []


def test_a_root_relative_url_that_escaped_is_sent_back_under_its_page(frameless):
    ref = f"http://testserver/web/{TS1}mp_/http://example.com/"
    r = frameless.get("/logo.png?v=2", headers={"Referer": ref}, follow_redirects=False)
    assert r.status_code == 307
    assert r.headers["location"] == f"http://testserver/web/{TS1}mp_/http://example.com/logo.png?v=2"
    r = frameless.get("/logo.png", headers={"Referer": "http://elsewhere.test/web/2020/http://example.com/"},
                      follow_redirects=False)
    assert r.status_code == 404    # a Referer that is not ours sends nothing anywhere
    assert "access-control-allow-origin" not in r.headers   # frameless: no opaque frame to allow


def test_the_redirect_of_an_escaped_url_is_readable_by_the_sandboxed_frame(client):
    ref = f"http://testserver/web/{TS1}mp_/http://example.com/"
    r = client.get("/logo.png", headers={"Referer": ref}, follow_redirects=False)
    assert r.status_code == 307 and r.headers["access-control-allow-origin"] == "*"
