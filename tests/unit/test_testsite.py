"""The test web site itself (tests/testsite.py), checked with the standard library's http.client,
so the fetcher's tests and the crawler's rest on a site known to do what LAYOUT says."""

from __future__ import annotations

import gzip
import http.client
import socket
import time

from testsite import Site, host_name, response_bytes, web_site  # noqa: F401


def get(site, host, path, raw=False):
    if raw:   # the bytes exactly as the server sends them
        s = socket.create_connection(("127.0.0.1", site.port))
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
        out = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
        s.close()
        return out
    c = http.client.HTTPConnection("127.0.0.1", site.port, timeout=10)
    c.request("GET", path, headers={"Host": host})
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, dict(r.getheaders()), body


def test_layout(web_site):
    h0, h1 = host_name(0), host_name(1)
    st, _, body = get(web_site, h0, "/robots.txt")
    assert st == 200 and b"Crawl-delay: 1" in body and b"Disallow: /private/" in body
    assert b"Crawl-delay" not in get(web_site, h1, "/robots.txt")[2]
    st, hd, _ = get(web_site, h1, "/redirect")
    assert st == 301 and hd["Location"] == "/page/1"
    chain = []
    path = "/chain/3"
    while True:
        st, hd, _ = get(web_site, h1, path)
        chain.append(st)
        if st != 302:
            break
        path = hd["Location"]
    assert chain == [302, 302, 302, 200]
    st, hd, body = get(web_site, h1, "/gzip.html")
    assert hd["Content-Encoding"] == "gzip" and b"<html>" in gzip.decompress(body)
    st, hd, body = get(web_site, h1, "/chunked.html")
    assert hd["Transfer-Encoding"] == "chunked" and body.startswith(b"<!DOCTYPE html>")
    assert get(web_site, h1, "/dup/a")[2] == get(web_site, h1, "/dup/b")[2]
    assert get(web_site, h1, "/img.png")[2].startswith(b"\x89PNG\r\n\x1a\n")
    assert get(web_site, h1, "/nope")[0] == 404
    assert get(web_site, "unknown.test", "/")[0] == 404


def test_calendar_is_endless(web_site):
    path = "/calendar/2024/11"
    for _ in range(30):
        st, _, body = get(web_site, host_name(2), path)
        assert st == 200
        path = body.split(b'href="')[1].split(b'"')[0].decode()
    assert path == "/calendar/2027/05"


def test_busy_then_ok(web_site):
    st, hd, _ = get(web_site, host_name(0), "/busy")
    assert st == 429 and hd["Retry-After"] == "1"
    assert get(web_site, host_name(0), "/busy")[0] == 200
    assert get(web_site, host_name(1), "/busy")[0] == 429   # counted per host
    assert get(web_site, host_name(1), "/unavailable")[0] == 503


def test_exact_bytes_and_log(web_site):
    raw = get(web_site, host_name(1), "/page/2", raw=True)
    [hit] = web_site.hits(path="/page/2")
    assert raw == hit.response
    assert hit.request.startswith(b"GET /page/2 HTTP/1.1\r\nHost: h001.site.test\r\n")
    t0 = time.time()
    get(web_site, host_name(1), "/page/1")
    later = web_site.hits(path="/page/1")[0]
    assert hit.t <= later.t and abs(later.t - t0) < 60
    for _ in range(500):   # the client may read the reply before the server thread notes its end
        if later.done:
            break
        time.sleep(0.01)
    assert later.done >= later.t


def test_close_delimited_raw(web_site):
    raw = get(web_site, host_name(0), "/close.html", raw=True)
    assert raw.startswith(b"HTTP/1.0 200 OK\r\n") and b"Content-Length" not in raw and raw.endswith(b"</html>\n")


def test_response_bytes_framing():
    assert response_bytes(200, b"abcdefg", [("X", "1")], chunked=3) == (
        b"HTTP/1.1 200 OK\r\nX: 1\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3\r\nabc\r\n3\r\ndef\r\n1\r\ng\r\n0\r\n\r\n")
    assert response_bytes(404, b"", reason="Gone Fishing", version="HTTP/1.0") == \
        b"HTTP/1.0 404 Gone Fishing\r\nContent-Length: 0\r\n\r\n"


def test_many_hosts_site_starts_and_stops():
    with Site.default(n_hosts=100, pages=1) as site:
        assert len(site.hosts) == 100
        assert get(site, host_name(99), "/")[0] == 200
    assert site._loop is None
