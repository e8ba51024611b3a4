"""A small archived site for replay tests, written with warcio (tests/warcgen.py): three captures
of one page, an image, a video-sized body, a redirect, a page whose URL and title hold markup, a directory page (docs/), and
a form captured by GET and by POST, screenshots of the page (ours and
Browsertrix Crawler's urn:view:) (its request body indexed as pywb's wb-manager indexes it).

The payloads, dates and URLs here are what replay tests compare against: they are what was
written, never what warchive read back.
"""

from __future__ import annotations

from pathlib import Path

from warcgen import rid, w_block, w_http, write_warc

D1, D2, D3 = "2020-01-01T00:00:00Z", "2021-06-15T12:00:00Z", "2022-12-31T23:59:59Z"
TS1, TS2, TS3 = "20200101000000", "20210615120000", "20221231235959"


def page(n: int) -> bytes:
    return (f"<!doctype html><html><head><title>Page {n}</title></head>"
            f"<body><p>version {n}</p><img src=\"/logo.png\"></body></html>").encode()


PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40
VIDEO = bytes((i * 7) % 251 for i in range(300_000))
EVIL_URL = 'http://example.com/q?x="><script>alert(1)</script>'
POST_BODY = b"q=archive&n=1"
SHOT = b"\x89PNG\r\n\x1a\n" + b"screenshot of the page" * 10     # a screenshot (associated resource)
VIEW = b"\x89PNG\r\n\x1a\n" + b"browsertrix view" * 10


def resp(name, uri, date, body, ctype="text/html; charset=utf-8", status="200 OK", extra=()):
    headers = [("Content-Type", ctype), ("Content-Length", str(len(body)))] + list(extra)
    return w_http("response", name, uri, "HTTP/1.1", status, headers, body, date=date)


def req(name, uri, date, method="GET", body=b"", ctype=None):
    path = "/" + uri.split("/", 3)[3] if uri.count("/") >= 3 else "/"
    h = [("Host", uri.split("/")[2])]
    if ctype:
        h.append(("Content-Type", ctype))
    if body:
        h.append(("Content-Length", str(len(body))))
    return w_http("request", name, uri, method, f"{path} HTTP/1.1", h, body, date=date)


def records() -> list:
    return [resp("p1", "http://example.com/", D1, page(1)),
            resp("p2", "http://example.com/", D2, page(2)),
            resp("p3", "http://example.com/", D3, page(3)),
            resp("logo", "http://example.com/logo.png", D1, PNG, "image/png"),
            resp("video", "http://example.com/v.mp4", D1, VIDEO, "video/mp4"),
            resp("redir", "http://example.com/old", D1, b"", status="301 Moved Permanently",
                 extra=[("Location", "http://example.com/")]),
            resp("evil", EVIL_URL, D1, b"<html><head><title>\"><script>alert(2)</script></title></head></html>"),
            req("post/req", "http://example.com/form", D2, "POST", POST_BODY, "application/x-www-form-urlencoded"),
            w_http("response", "post/resp", "http://example.com/form", "HTTP/1.1", "200 OK",
                   [("Content-Type", "text/plain"), ("Content-Length", "11")], b"posted: yes", date=D2,
                   **{"WARC-Concurrent-To": rid("post/req")}),
            resp("get-form", "http://example.com/form", D1, b"the form", "text/plain"),
            resp("docs", "http://example.com/docs/", D1, b"<p>the docs</p>"),
            w_block("resource", "shot", "urn:screenshot:http://example.com/", "image/png", SHOT, date=D2,
                    **{"WARC-JSON-Metadata": '{"viewport":[1280,800]}'}),
            w_block("resource", "view", "urn:view:http://example.com/", "image/png", VIEW, date=D2)]


def write_site(directory) -> Path:
    """site.warc.gz in ``directory``; returns its path."""
    return write_warc(directory, "site", records()).path
