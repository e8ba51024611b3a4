"""Archived heads that a server cannot send as they are, replayed by `warchive serve` over loopback
with each of uvicorn's parsers (httptools and h11, whose status tables and framing checks are
where these failed): statuses uvicorn does not know (LinkedIn's 999, 600), statuses that are no
final status (0, 10**20, a word, 1xx), 204 and 304 archived with a body, and a Content-Length
that claims more than the record holds.

Each answer is read with http.client on one keep-alive connection, and a second request follows
on it: a body sent where the client expects none would be read as the next answer's head. The
server's log must hold no traceback. Records are written here by hand (tests/warcgen.py).
"""

from __future__ import annotations

import http.client
import socket
from pathlib import Path
from typing import Iterator, List, Tuple

import pytest

import warcgen
from loadkit import serve
from warchive.collection import Collection

PARSERS = ["httptools", "h11"]
TS = "20240102030405"
BODY = b"<p>hello</p>"
BIG = bytes(range(256)) * (5 << 12)   # 5 MiB: more than the replayer reads ahead to learn a length
CLAIMED = 10 ** 12


def _response(name: str, statusline: bytes, head: List[bytes], body: bytes) -> warcgen.Rec:
    http = b"HTTP/1.1 " + statusline + b"\r\n" + b"".join(h + b"\r\n" for h in head) + b"\r\n" + body
    return warcgen.r_rec("response", name, f"http://example.com/{name}", "application/http; msgtype=response", http)


STATUSES = {   # archived status line -> (status replayed, kept as X-Archive-Orig-Status-Line)
    b"999 Request denied": (999, False), b"600 Six": (600, False), b"599 Last": (599, False),
    b"404 Not Found": (404, False), b"0 Zero": (200, True), b"100000000000000000000 Big": (200, True),
    b"abc Word": (200, True), b"100 Continue": (200, True), b"199 Interim": (200, True),
    b"-5 Minus": (200, True), b"0999 Four digits": (200, True),
}


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("heads")
    recs = [_response("s" + line.split(b" ")[0].decode(), line,
                      [b"Content-Type: text/html", b"Content-Length: %d" % len(BODY)], BODY) for line in STATUSES]
    for code in (b"204 No Content", b"304 Not Modified"):
        recs.append(_response("s" + code[:3].decode(), code, [b"Content-Type: text/html",
                                                              b"Content-Length: %d" % len(BODY)], BODY))
    recs += warcgen.get_pair("plain", "http://example.com/plain", "/plain", body=BODY)
    for name, ctype, body in (("claims", b"text/plain", BODY), ("claims-html", b"text/html", BODY),
                              ("claims-big", b"application/octet-stream", BIG)):
        recs.append(_response(name, b"200 OK", [b"Content-Type: " + ctype, b"Content-Length: %d" % CLAIMED], body))
    warc = warcgen.write_warc(d / "in", "heads", recs) if (d / "in").mkdir() is None else None
    Collection.init(str(d / "colls" / "web")).add([str(warc.path)])
    return d / "colls"


@pytest.fixture(scope="module", params=PARSERS)
def server(request, root) -> Iterator[Tuple[int, List[str]]]:
    """(port, the server's stderr lines) of `warchive serve --http PARSER --frameless`."""
    log: List[str] = []
    with serve(root, "--http", request.param, "--frameless", log=log) as (base, _):
        yield int(base.rsplit(":", 1)[1]), log
    assert not [line for line in log if "Traceback" in line or "Exception" in line], "".join(log[-40:])


def _two(port: int, path: str, method: str = "GET") -> Tuple[http.client.HTTPResponse, bytes, int, bytes]:
    """``path`` then a plain capture, on one connection: (answer, its body, then the second's status and body)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    try:
        c.request(method, path)
        r = c.getresponse()
        body = r.read()
        c.request("GET", f"/web/{TS}id_/http://example.com/plain")
        r2 = c.getresponse()
        return r, body, r2.status, r2.read()
    finally:
        c.close()


@pytest.mark.parametrize("modifier", ["id_", "mp_"])
@pytest.mark.parametrize("line", list(STATUSES), ids=[s.split(b" ")[0].decode()[:8] for s in STATUSES])
def test_any_archived_status_is_replayed_or_clamped(server, modifier, line):
    port, _ = server
    want, clamped = STATUSES[line]
    r, body, then, after = _two(port, f"/web/{TS}{modifier}/http://example.com/s{line.split(b' ')[0].decode()}")
    assert r.status == want
    assert r.getheader("X-Archive-Orig-Status-Line") == (line.decode() if clamped else None)
    assert BODY in body
    assert (then, after) == (200, BODY)


@pytest.mark.parametrize("method", ["GET", "HEAD"])
@pytest.mark.parametrize("code", ["204", "304"])
def test_no_body_goes_with_a_204_or_304(server, code, method):
    port, _ = server
    r, body, then, after = _two(port, f"/web/{TS}id_/http://example.com/s{code}", method)
    assert (r.status, body, r.getheader("Content-Length")) == (int(code), b"", None)
    assert (then, after) == (200, BODY)


@pytest.mark.parametrize("modifier", ["id_", "mp_"])
@pytest.mark.parametrize("name", ["claims", "claims-html"])
def test_a_content_length_claiming_more_than_the_record_holds_is_the_real_one(server, name, modifier):
    port, _ = server
    r, body, then, after = _two(port, f"/web/{TS}{modifier}/http://example.com/{name}")
    assert r.status == 200 and BODY in body and r.getheader("Content-Length") == str(len(body))
    assert (then, after) == (200, BODY)


def test_a_range_of_such_a_payload_is_of_the_bytes_it_has(server):
    port, _ = server
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=15)
    c.request("GET", f"/web/{TS}id_/http://example.com/claims", headers={"Range": "bytes=2-99"})
    r = c.getresponse()
    assert (r.status, r.getheader("Content-Range"), r.read()) == (206, f"bytes 2-{len(BODY) - 1}/{len(BODY)}", BODY[2:])
    c.close()


def test_a_longer_payload_that_ends_early_closes_the_connection_without_a_traceback(server):
    """Past what is read ahead the archived length is sent; the body ends short of it, and the
    server closes the connection (the client sees it cut short), logging one line, no traceback
    (the fixture checks the log)."""
    port, log = server
    with socket.create_connection(("127.0.0.1", port), 15) as s:
        s.sendall(f"GET /web/{TS}id_/http://example.com/claims-big HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        got = b""
        while True:   # until the server closes (a timeout fails the test)
            piece = s.recv(1 << 20)
            if not piece:
                break
            got += piece
    head, _, body = got.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ") and f"content-length: {CLAIMED}".encode() in head.lower().split(b"\r\n")
    assert body == BIG
    assert any("Content-Length claims" in line for line in log)
