"""The threat model's claims (docs/security.md), tried through the ASGI app (warchive.replay.app)
the way a network client of `warchive serve` would: path traversal, header injection through
archived headers, XSS on our own pages, SSRF, and resource limits.

The app is called with raw ASGI scopes (no HTTP client in between), so that what is checked is
exactly what the app hands the server: its header list as bytes and its body pieces. Files opened
and sockets connected while a request is answered are recorded by a Python audit hook
(``open``, ``socket.connect``, ``socket.getaddrinfo``), which sees every open and connect made by
Python code and by the stdlib on its behalf, whatever module makes it.

The collection is written here with warcio and by hand (tests/warcgen.py); the secret files the
attacks aim at hold a marker that must never come back.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import re
import struct
import sys
import tracemalloc
import zlib
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import pytest
import zstandard

import warcgen
from warchive.collection import Collection
from warchive.errors import ArchiveError
from warchive.index.cdx import IndexOptions, index_file
import warchive.replay
from warchive.replay.app import create_app
from warchive.replay.pages import frame_page

SECRET = b"TOP-SECRET-0451"
TS = "20240102030405"
XSS = '"><script>alert(1)</script>'
BOMB_SIZE = 32 << 20         # the bomb's inflated payload: 32 MiB of zeros (~32 KiB deflated: 1000x)

# ---------------------------------------------------------------------------------------- watch

_WATCH: Optional[Dict[str, List[Any]]] = None


def _audit(event: str, args: Tuple[Any, ...]) -> None:
    w = _WATCH
    if w is None:
        return
    if event == "open":
        w["open"].append(args[0])
    elif event == "socket.connect":
        w["connect"].append(args[1])
    elif event == "socket.getaddrinfo":
        w["resolve"].append(args[0])


sys.addaudithook(_audit)   # (audit hooks cannot be removed: it does nothing unless _WATCH is set)


def call(app: Any, path: str, query: str = "", headers: Optional[List[Tuple[bytes, bytes]]] = None,
         keep_body: bool = True) -> Tuple[int, List[Tuple[bytes, bytes]], bytes, Dict[str, List[Any]]]:
    """One GET through the app: (status, raw header list, body, what was opened and connected)."""
    global _WATCH
    raw = path.encode("utf-8", "surrogateescape") if isinstance(path, str) else path
    scope = {"type": "http", "method": "GET", "path": raw.decode("latin-1"), "raw_path": raw,
             "query_string": query.encode("latin-1"), "root_path": "", "scheme": "http",
             "server": ("127.0.0.1", 8080),
             "headers": [(b"host", b"127.0.0.1:8080")] + list(headers or [])}
    out: Dict[str, Any] = {"status": None, "headers": None, "body": [], "size": 0}

    async def receive() -> Dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(msg: Dict[str, Any]) -> None:
        if msg["type"] == "http.response.start":
            out["status"], out["headers"] = msg["status"], msg["headers"]
        else:
            out["size"] += len(msg.get("body", b""))
            if keep_body:
                out["body"].append(msg.get("body", b""))

    seen: Dict[str, List[Any]] = {"open": [], "connect": [], "resolve": []}
    _WATCH = seen
    try:
        asyncio.run(app(scope, receive, send))
    finally:
        _WATCH = None
    seen["size"] = [out["size"]]
    return out["status"], out["headers"], b"".join(out["body"]), seen


# ---------------------------------------------------------------------------------------- the site

LIVE_HTML = (b'<!doctype html><html><head><title>live refs</title>'
             b'<link rel="stylesheet" href="http://live.invalid/a.css">'
             b'<script src="https://live.invalid/a.js"></script></head><body>'
             b'<img src="http://127.0.0.2:9/x.png"><iframe src="http://live.invalid/f"></iframe>'
             b'<a href="http://live.invalid/">x</a><form action="http://live.invalid/post"></form>'
             b'<style>@import url(http://live.invalid/b.css);</style></body></html>')
TITLE_HTML = b"<html><head><title>" + XSS.encode() + b"</title></head><body>t</body></html>"


def _raw_response(name: str, uri: str, head_lines: List[bytes], body: bytes) -> warcgen.Rec:
    http = b"HTTP/1.1 200 OK\r\n" + b"".join(h + b"\r\n" for h in head_lines) + b"\r\n" + body
    return warcgen.r_rec("response", name, uri, "application/http; msgtype=response", http)


def _recs() -> list:
    bomb = warcgen.gzip_member(b"\0" * BOMB_SIZE)
    assert len(bomb) * 1000 < BOMB_SIZE * 1.1          # ~1000x
    recs = []
    recs += warcgen.get_pair("home", "http://example.com/", "/")
    recs += warcgen.get_pair("live", "http://example.com/live", "/live", body=LIVE_HTML)
    recs += warcgen.get_pair("title", "http://example.com/title", "/title", body=TITLE_HTML)
    recs.append(_raw_response("xssurl", "http://example.com/q?x=" + XSS, [b"Content-Type: text/html"], b"<p>q</p>"))
    recs.append(_raw_response("jsurl", "javascript:alert(1)//x", [b"Content-Type: text/html"], b"<p>js</p>"))
    recs.append(_raw_response("crlf", "http://example.com/crlf", [
        b"Content-Type: text/plain",
        b"X-Cr: a\rInjected-Cr: yes",                       # a lone CR inside a value
        b"X-Lf: b\nInjected-Lf: yes",                       # a lone LF: a line of its own, or part of the value
        b"Location: http://example.com/%0d%0aInjected-Loc: yes\r",
        b"X-Latin: caf\xe9 \xff\x80",                       # not UTF-8, not ASCII
        "X-Utf8: 日本語 ünï".encode("utf-8"),
        b"X-Nul: n\0Injected-Nul: yes",
        b"Set-Cookie: a=b\rInjected-Cookie: yes",
        b"Link: <http://example.com/\rInjected-Link: yes>; rel=next",
    ], b"crlf body"))
    recs.append(_raw_response("bomb", "http://example.com/bomb", [
        b"Content-Type: application/octet-stream", b"Content-Encoding: gzip",
        b"Content-Length: %d" % len(bomb)], bomb))
    try:
        import brotli
    except ImportError:
        return recs
    br = brotli.compress(b"\0" * BOMB_SIZE)
    recs.append(_raw_response("brbomb", "http://example.com/brbomb", [
        b"Content-Type: application/octet-stream", b"Content-Encoding: br",
        b"Content-Length: %d" % len(br)], br))
    return recs


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("security")
    (d / "secret.txt").write_bytes(SECRET)
    outside = warcgen.write_warc(d, "outside", warcgen.get_pair("s", "http://secret.example/", "/", body=SECRET))
    warc = warcgen.write_warc(d / "in", "site", _recs()) if (d / "in").mkdir() is None else None
    Collection.init(str(d / "colls" / "web")).add([str(warc.path)])
    # index lines naming files outside the archive directory: relative climbs, absolute, NUL, URL
    off = outside.member_offsets[1]
    length = outside.member_offsets[2] - off
    names = ["../../outside.warc.gz", "../../../" + str(outside.path).lstrip("/"), str(outside.path),
             "x/../../../outside.warc.gz", "..\\..\\outside.warc.gz", "site.warc.gz\0../../outside.warc.gz",
             "file://" + str(outside.path)]
    lines = []
    for i, name in enumerate(names):
        fields = {"url": f"http://secret.example/{i}", "mime": "text/html", "status": "200",
                  "length": str(length), "offset": str(off), "filename": name}
        lines.append(f"com,example,secret)/{i} {TS} {json.dumps(fields)}")
    (d / "colls" / "web" / "indexes" / "evil.cdxj").write_text("\n".join(sorted(lines)) + "\n")
    return d


@pytest.fixture(scope="module")
def app(site):
    return create_app(str(site / "colls"))


def _outside(site: Path, paths: List[Any]) -> List[str]:
    """The opened paths not under the collections' root nor warchive's own package."""
    import warchive
    allowed = [str((site / "colls").resolve()), os.path.dirname(os.path.realpath(warchive.__file__))]
    bad = []
    for p in paths:
        if isinstance(p, int):
            continue
        rp = os.path.realpath(os.fsdecode(p))
        if not any(rp == a or rp.startswith(a + os.sep) for a in allowed):
            bad.append(rp)
    return bad


# ---------------------------------------------------------------------------------------- traversal

TRAVERSALS = [
    "/../secret.txt", "/%2e%2e/secret.txt", "/%2E%2E/%2e%2e/secret.txt", "/web/../../secret.txt",
    "/web/%2e%2e%2f%2e%2e%2fsecret.txt", "/..%2fsecret.txt", "/%2e%2e%2fsecret.txt",
    "/static/../../../secret.txt", "/static/%2e%2e/%2e%2e/app.py", "/static/..%2fapp.py", "/static/app.py",
    "/static/%2fetc%2fpasswd", "/static//etc/passwd", "/web%2f..%2f..%2fsecret.txt/", "/web%00/",
    "/%00/", "/./", "/.%2e/", "/colls/", "/web/" + TS + "id_/file:///etc/passwd",
    "/web/" + TS + "id_/file://" + "{site}/secret.txt", "/web/" + TS + "id_/../../secret.txt",
    "/web/" + TS + "id_/http://example.com/../../../secret.txt", "/web/cdx",
]


@pytest.mark.parametrize("path", TRAVERSALS)
def test_traversal_urls_read_nothing_outside_the_collections(site, app, path):
    status, _, body, seen = call(app, path.replace("{site}", str(site)))
    assert SECRET not in body
    assert b"root:" not in body and b"import" not in body[:200]     # /etc/passwd, app.py
    assert _outside(site, seen["open"]) == []


@pytest.mark.parametrize("i", range(7))
def test_index_lines_naming_files_outside_the_archive_are_refused(site, app, i):
    status, _, body, seen = call(app, f"/web/{TS}id_/http://secret.example/{i}")
    assert status != 200
    assert SECRET not in body
    assert _outside(site, seen["open"]) == []
    assert str(site / "outside.warc.gz").encode() not in body or status >= 400   # named in a message at most


def test_a_collection_named_dotdot_is_no_collection(site, app):
    for name in ("..", "%2e%2e", ".", "%2e", ".hidden", "web%2f..", "web%5c..", "web%00"):
        status, _, body, seen = call(app, f"/{name}/{TS}id_/http://example.com/")
        assert status == 404, name
        assert _outside(site, seen["open"]) == []


def test_the_traversal_fixture_is_readable_when_named_properly(site, app):
    """The attacks above are real: the same capture is served when its record is in the archive,
    and the guard sees the archive opened (a fresh app: nothing open yet)."""
    status, _, body, seen = call(create_app(str(site / "colls")), f"/web/{TS}id_/http://example.com/")
    assert status == 200 and b"Hello, archive." in body
    assert any(os.fsdecode(p).endswith("site.warc.gz") for p in seen["open"] if not isinstance(p, int))
    assert _outside(site, [str(site / "secret.txt")]) != []


# ---------------------------------------------------------------------------------------- headers

def test_archived_headers_with_cr_lf_nul_and_non_latin1_do_not_split_or_crash(site, app):
    for mod in ("id_", "mp_", ""):
        status, headers, body, _ = call(app, f"/web/{TS}{mod}/http://example.com/crlf")
        assert status in (200, 301, 302), (mod, status)
        for k, v in headers:
            assert isinstance(k, bytes) and isinstance(v, bytes)
            for bad in (b"\r", b"\n", b"\0"):
                assert bad not in k and bad not in v, (mod, k, v)
            # a lone LF ends a line (as warcio and browsers read a head): "Injected-Lf" is then a
            # field of the archived head, and passes as other unknown fields do (pywb's rule)
            assert not k.lower().startswith(b"injected") or k == b"Injected-Lf", (mod, k)
            assert all(0x21 <= c <= 0x7e and c != 0x3a for c in k), (mod, k)       # a token
        if mod == "id_":
            assert body == b"crlf body"
        names = [k.lower() for k, _ in headers]
        assert mod == "" or b"x-latin" in names or b"x-archive-orig-x-latin" in names, names


def test_the_header_fixture_would_inject_if_passed_raw(site):
    """The attack is real: the archived head holds CR/LF that, sent as they are, split the head."""
    raw = (site / "in" / "site.warc.gz").read_bytes()
    data = b""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    while raw:
        data += d.decompress(raw)
        raw = d.unused_data
        d = zlib.decompressobj(16 + zlib.MAX_WBITS) if raw else d
    assert b"X-Cr: a\rInjected-Cr: yes" in data and b"Injected-Link" in data


# ---------------------------------------------------------------------------------------- XSS

def _assert_escaped(body: bytes, what: str) -> None:
    assert b"<script>alert(1)</script>" not in body, what
    assert b'"><script' not in body, what
    assert b"href=\"javascript:" not in body.lower() and b"src=\"javascript:" not in body.lower(), what


XSS_Q = XSS.replace('"', "%22").replace("<", "%3C").replace(">", "%3E")


@pytest.mark.parametrize("path,query", [
    ("/web/*/http://example.com/q?x=" + XSS, ""),                       # the captures page (calendar)
    ("/web/*/http://example.com/q*", ""),                               # the URL list
    ("/web/" + TS + "/http://example.com/q?x=" + XSS, ""),             # the banner's frame
    ("/web/" + TS + "/http://example.com/title", ""),                   # a page titled with the payload
    ("/web/*/http://example.com/" + XSS, ""),                           # not in the archive: an error
    ("/web/" + TS + "/http://example.com/" + XSS, ""),
    ("/web/" + TS + "/javascript:alert(1)//" + XSS, ""),
    ("/web/*/javascript:alert(1)", ""),
    ("/web/" + TS + "/javascript:alert(1)//x", ""),                    # a capture of a javascript: URL
    ("/web/*/javascript:alert(1)//x", ""),
    ("/" + XSS + "/", ""),                                              # no such collection
    ("/web/", "url=" + XSS_Q),                                          # the search form
    ("/web/", "url=" + XSS_Q + "&matchType=host"),
    ("/web/", "url=javascript:alert(1)&matchType=domain"),
    ("/web/timemap/link/http://example.com/" + XSS, ""),
    ("/static/" + XSS, ""),
    ("/web/" + TS + "x" + XSS + "/http://example.com/", ""),            # a bad timestamp/modifier
    ("/", ""),
])
def test_payloads_in_urls_titles_and_queries_are_escaped_on_our_pages(app, path, query):
    for p in (path, path.replace('"', "%22").replace("<", "%3C").replace(">", "%3E")):
        status, headers, body, _ = call(app, p, query)
        ctype = dict(headers).get(b"content-type", b"")
        if b"html" in ctype:
            _assert_escaped(body, p)
        loc = dict(headers).get(b"location", b"")
        assert not loc.lower().startswith(b"javascript:"), (p, loc)


@pytest.mark.parametrize("path", ["/web/" + TS + "/javascript:alert(1)", "/web/" + TS + "id_/http://javascript:alert(1)/",
                                  "/web/javascript:alert(1)", "/web/" + TS + "mp_/data:text/html,<b>x</b>"])
def test_a_url_with_no_key_is_a_bad_request_not_a_server_error(app, path):
    status, _, body, _ = call(app, path)
    assert status == 400, (path, status, body[:200])


@pytest.mark.parametrize("url,href", [
    ("javascript:alert(1)//x", "#"), ("JavaScript:alert(1)", "#"), ("data:text/html,<b>x</b>", "#"),
    ("vbscript:x", "#"), ("http://example.com/a?b=1&c=2", "http://example.com/a?b=1&amp;c=2"),
    ("HTTPS://example.com/", "HTTPS://example.com/"), ("ftp://example.com/f", "ftp://example.com/f")])
def test_the_banners_live_link_is_only_ever_a_web_url(url, href):
    page = frame_page(coll="web", url=url, timestamp=TS, captures=[], content_url="/web/x",
                      full_prefix="http://h/web/", static="/static/", coll_url="/web/").decode()
    m = re.search(r'<a id="wa-orig" href="([^"]*)"', page)
    assert m and m.group(1) == href, page


def test_the_banner_script_links_only_web_urls():
    js = (Path(warchive.replay.__file__).parent / "static" / "banner.js").read_text()
    line = next(x for x in js.splitlines() if "orig.href" in x)
    assert "orig.href = url;" not in line and "https?|ftps?" in line, line


def test_the_xss_fixture_is_real(app):
    """The archived page itself (mp_, not ours) does hold the raw payload: the checks above would
    see it if a page of ours copied it unescaped."""
    status, _, body, _ = call(app, f"/web/{TS}mp_/http://example.com/title")
    assert status == 200 and XSS.encode() in body


# ---------------------------------------------------------------------------------------- SSRF

@pytest.mark.parametrize("path", [
    f"/web/{TS}/http://example.com/live", f"/web/{TS}mp_/http://example.com/live",
    f"/web/{TS}id_/http://example.com/live", "/web/http://example.com/live",
    f"/web/{TS}mp_/http://live.invalid/a.css", f"/web/{TS}js_/https://live.invalid/a.js",
    f"/web/{TS}mp_/http://127.0.0.2:9/x.png", "/web/http://live.invalid/", "/web/*/http://live.invalid/*",
    "/web/cdx", "/web/timemap/link/http://live.invalid/",
])
def test_replay_never_opens_a_connection(app, path):
    status, _, body, seen = call(app, path, "url=http://live.invalid/" if path.endswith("cdx") else "")
    assert status is not None
    assert seen["connect"] == [] and seen["resolve"] == [], seen


def test_the_socket_guard_sees_connections():
    """The guard is live: a connect made while watching is recorded."""
    global _WATCH
    import socket
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    seen: Dict[str, List[Any]] = {"open": [], "connect": [], "resolve": []}
    _WATCH = seen
    try:
        c = socket.create_connection(srv.getsockname())
        c.close()
    finally:
        _WATCH = None
        srv.close()
    assert seen["connect"] and seen["resolve"]


# ---------------------------------------------------------------------------------------- limits

def _peak(fn) -> Tuple[Any, int]:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        r = fn()
        return r, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_gzip_bomb_record_is_streamed_not_inflated_whole(app):
    """A record inflating 1000x, replayed to a client not accepting gzip (so it is decoded):
    the whole payload arrives, and the memory the replay took stays well under its size (before
    the decoder's INFLATE_MAX, one 16 KiB block inflated to 16 MiB at once)."""
    (status, headers, _, seen), peak = _peak(lambda: call(app, f"/web/{TS}id_/http://example.com/bomb",
                                                          headers=[(b"accept-encoding", b"identity")],
                                                          keep_body=False))
    assert status == 200
    assert seen["size"][0] == BOMB_SIZE
    assert peak < BOMB_SIZE // 4, peak     # (the replayer holds up to BUFFER_REWRITTEN, 4 MiB)


@pytest.mark.parametrize("limit", ["1000000000000000000000", "-1000000000000000000000", "99999999999"])
def test_an_absurd_cdx_limit_answers(app, limit):
    status, _, body, _ = call(app, "/web/cdx", f"url=http://example.com/*&limit={limit}")
    assert status in (200, 400)
    if status == 200:
        assert body.count(b"\n") <= 20


def test_a_huge_query_string_is_answered_not_crashed(app):
    big = "a" * (2 << 20)
    for path, q in (("/web/cdx", f"url=http://example.com/{big}"), ("/web/", f"url=http://example.com/{big}"),
                    (f"/web/{TS}/http://example.com/", f"q={big}"), ("/web/cdx", "&".join(["filter=a"] * 20000)
                                                                   + "&url=example.com")):
        status, _, body, _ = call(app, path, q)
        assert status is not None and status < 500, (path[:40], status, body[:200])


def test_a_brotli_bomb_record_is_streamed_not_inflated_whole(app):
    """As the gzip bomb, in br (a 32 MiB payload in ~50 bytes): decoded by brotli's bounded
    output (brotli >= 1.2), the memory the replay took well under the payload's size."""
    pytest.importorskip("brotli")
    (status, _, _, seen), peak = _peak(lambda: call(app, f"/web/{TS}id_/http://example.com/brbomb",
                                                    headers=[(b"accept-encoding", b"identity")],
                                                    keep_body=False))
    assert status == 200
    assert seen["size"][0] == BOMB_SIZE
    assert peak < BOMB_SIZE // 4, peak


def test_indexing_a_gzip_bomb_takes_bounded_memory(tmp_path):
    """A WARC whose gzip member inflates 1000x (a 32 MiB response body of zeros) and a record
    whose Content-Encoding is a bomb: indexed with their lines, the memory the indexer took well
    under the inflated size."""
    zeros = b"\0" * BOMB_SIZE
    recs = warcgen.get_pair("big", "http://example.com/big", "/big", body=zeros,
                            headers=[("Content-Type", "application/octet-stream"),
                                     ("Content-Length", str(BOMB_SIZE))])
    bomb = warcgen.gzip_member(zeros)
    recs.append(_raw_response("bomb", "http://example.com/bomb", [
        b"Content-Type: text/html", b"Content-Encoding: gzip", b"Content-Length: %d" % len(bomb)], bomb))
    fx = warcgen.write_warc(tmp_path, "bomb", recs)
    del zeros, recs, bomb
    assert fx.path.stat().st_size * 500 < BOMB_SIZE * 2
    lines: List[bytes] = []
    _, peak = _peak(lambda: index_file(str(fx.path), lines.append, IndexOptions()))
    text = b"".join(lines)
    assert b"com,example)/big" in text and b"com,example)/bomb" in text
    assert peak < BOMB_SIZE // 4, peak



def _post(app: Any, path: str, chunks: List[bytes]) -> Tuple[int, int]:
    """A POST whose body arrives in ``chunks``: (status, chunks the app asked for)."""
    scope = {"type": "http", "method": "POST", "path": path, "raw_path": path.encode(), "query_string": b"",
             "root_path": "", "scheme": "http", "server": ("127.0.0.1", 8080),
             "headers": [(b"host", b"127.0.0.1:8080"), (b"content-type", b"application/x-www-form-urlencoded")]}
    given = [0]
    out: Dict[str, Any] = {}

    async def receive() -> Dict[str, Any]:
        i = given[0]
        given[0] += 1
        return {"type": "http.request", "body": chunks[i], "more_body": i + 1 < len(chunks)}

    async def send(msg: Dict[str, Any]) -> None:
        if msg["type"] == "http.response.start":
            out["status"] = msg["status"]

    asyncio.run(app(scope, receive, send))
    return out["status"], given[0]


def test_a_huge_request_body_is_refused_without_being_held_whole(app):
    mib = b"q" * (1 << 20)
    status, asked = _post(app, "/web/" + TS + "/http://example.com/form", [mib] * 64)
    assert status == 413
    assert asked == 17   # read up to the 16 MiB limit and one chunk past it, not the 64 MiB
    status, asked = _post(app, "/web/" + TS + "/http://example.com/form", [mib] * 16)
    assert status != 413 and asked == 16   # at the limit: replayed as any POST


ZSTD_BOMB = 256 << 20


def _zstd_zeros(n: int, prefix: bytes = b"", suffix: bytes = b"") -> bytes:
    """One Zstandard frame of prefix + n zero bytes + suffix, compressed as a stream (never held
    inflated): about 30 000 to 1."""
    obj = zstandard.ZstdCompressor(level=3).compressobj()
    out = [obj.compress(prefix)]
    for _ in range(n >> 20):
        out.append(obj.compress(bytes(1 << 20)))
    out.append(obj.compress(suffix))
    out.append(obj.flush())
    return b"".join(out)


def test_a_zstd_bomb_warc_is_indexed_in_bounded_memory(tmp_path):
    """A .warc.zst whose one frame inflates to a 256 MiB record (a resource of zeros): its line
    and digest come out, the memory taken stays a small fraction of it (before the decoder was
    fed whole blocks only, one 64 KiB read inflated the whole record at once: 256 MiB, and
    re-cutting that buffer made it quadratic)."""
    head = (b"WARC/1.0\r\nWARC-Type: resource\r\nWARC-Target-URI: http://bomb.example/z\r\n"
            b"WARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-0000000000bb>\r\n"
            b"Content-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n" % ZSTD_BOMB)
    path = tmp_path / "bomb.warc.zst"
    path.write_bytes(_zstd_zeros(ZSTD_BOMB, head, b"\r\n\r\n"))
    assert path.stat().st_size * 10_000 < ZSTD_BOMB
    sha1 = hashlib.sha1()
    for _ in range(ZSTD_BOMB >> 20):
        sha1.update(bytes(1 << 20))
    lines: List[bytes] = []
    _, peak = _peak(lambda: index_file(str(path), lines.append, IndexOptions()))
    assert len(lines) == 1 and b"bomb.example" in lines[0]
    assert json.loads(lines[0].split(b" ", 2)[2])["digest"] == "sha1:" + base64.b32encode(sha1.digest()).decode()
    assert peak < 16 << 20, peak


def test_a_zstd_dictionary_bomb_is_refused(tmp_path):
    """A .warc.zst whose dictionary frame holds a compressed dictionary inflating past 64 MiB:
    an ArchiveError naming the file, not the dictionary inflated."""
    comp = _zstd_zeros(80 << 20)
    path = tmp_path / "dictbomb.warc.zst"
    path.write_bytes(struct.pack("<II", 0x184D2A5D, len(comp)) + comp)
    with pytest.raises(ArchiveError, match="dictbomb.warc.zst.*dictionary"):
        _peak(lambda: index_file(str(path), [].append, IndexOptions()))
