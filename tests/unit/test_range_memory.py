"""Range requests for payloads whose length only decoding tells, against a real `warchive serve`:
a 1 GiB gzip bomb (a 1 MB record) replayed to a client that does not accept gzip, so decoded,
and 512 MiB of zeros archived chunked, so de-chunked (tests/bombs.py writes both at test time).

Each is answered by decoding and discarding up to the range's start, a piece at a time, and
sending the range (warchive.replay.bodies): 206 with ``bytes FIRST-LAST/*`` while the end is
not known, exactly once it is; 200 with the whole body streamed for a range that would need the
length first. The server's peak RSS (VmHWM of its process) stays within RSS_BOUND of what it
held before (docs/security.md), and while it decodes, its event loop answers other requests.
"""

from __future__ import annotations

import http.client
import socket
from typing import Iterator, List, Optional, Tuple

import h11
import pytest

from bombs import TS, write_giants
from loadkit import hwm_kib, rss_kib, serve
from warchive.collection import Collection

BOMB = 1 << 30
CHUNKED = 512 << 20
RSS_BOUND = 200 << 10   # KiB the server's peak may grow by (docs/security.md)


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Tuple[int, int]]:
    d = tmp_path_factory.mktemp("giants")
    warc = write_giants(d, {"bomb": ("gzip", BOMB), "chunked": ("chunked", CHUNKED)})
    assert warc.stat().st_size < 4 << 20
    Collection.init(str(d / "colls" / "web")).add([str(warc)])
    log: List[str] = []
    with serve(d / "colls", "--frameless", log=log) as (base, pid):
        yield int(base.rsplit(":", 1)[1]), pid
    assert not [line for line in log if "Traceback" in line], "".join(log[-40:])


def _get(port: int, name: str, rng: str) -> Tuple[int, Optional[str], Optional[str], int, bytes]:
    """(status, Content-Range, Content-Length, bytes of the body received, the first 100 of
    them), read with h11 (http.client de-chunks a gigabyte slowly, in Python, a line at a time)."""
    conn = h11.Connection(h11.CLIENT)
    with socket.create_connection(("127.0.0.1", port), 120) as s:
        s.sendall(conn.send(h11.Request(method="GET", target=f"/web/{TS}id_/http://example.com/{name}",
                                        headers=[("Host", "x"), ("Range", rng), ("Accept-Encoding", "identity"),
                                                 ("Connection", "close")])))
        s.sendall(conn.send(h11.EndOfMessage()))
        head: Optional[h11.Response] = None
        n, first = 0, b""
        while True:
            event = conn.next_event()
            if event is h11.NEED_DATA:
                conn.receive_data(s.recv(1 << 20))
            elif isinstance(event, h11.Response):
                head = event
            elif isinstance(event, h11.Data):
                if n < 100:
                    first += bytes(event.data[:100 - n])
                n += len(event.data)
            elif isinstance(event, (h11.EndOfMessage, h11.ConnectionClosed)):
                break
    assert head is not None
    fields = {k.decode().lower(): v.decode() for k, v in head.headers}
    return head.status_code, fields.get("content-range"), fields.get("content-length"), n, first


CASES = [
    ("bomb", "bytes=0-99", (206, "bytes 0-99/*", "100", 100)),
    ("bomb", f"bytes={BOMB - 100}-{BOMB + 99}", (206, f"bytes {BOMB - 100}-{BOMB - 1}/{BOMB}", "100", 100)),
    ("bomb", "bytes=100-", (200, None, None, BOMB)),
    ("chunked", f"bytes={CHUNKED // 2}-{CHUNKED // 2 + 999}", (206, f"bytes {CHUNKED // 2}-{CHUNKED // 2 + 999}/*",
                                                               "1000", 1000)),
    ("chunked", f"bytes={CHUNKED}-{CHUNKED + 10}", (416, f"bytes */{CHUNKED}", "0", 0)),
    ("chunked", "bytes=-100", (200, None, None, CHUNKED)),
]


def test_ranges_of_giant_payloads_are_answered_in_bounded_memory(server):
    port, pid = server
    assert _get(port, "small", "bytes=3-5")[:4] == (206, "bytes 3-5/12", "3", 3)
    before = rss_kib(pid)
    got = [_get(port, name, rng) for name, rng, _ in CASES]
    grew = hwm_kib(pid) - before
    assert grew < RSS_BOUND, f"peak RSS grew by {grew} KiB from {before} KiB"
    for (name, rng, want), (status, crange, length, n, first) in zip(CASES, got):
        assert (status, crange, length, n) == want, (name, rng)
        assert first == bytes(min(n, 100))


def test_other_requests_are_answered_while_a_range_is_decoded(server):
    """A range at the end of the bomb (1 GiB decoded and discarded first); meanwhile another
    request is answered whole, and only then is the range's answer begun."""
    port, _ = server
    with socket.create_connection(("127.0.0.1", port), 120) as a:
        a.sendall(f"GET /web/{TS}id_/http://example.com/bomb HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity\r\n"
                  f"Range: bytes={BOMB - 10}-{BOMB - 1}\r\nConnection: close\r\n\r\n".encode())
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        c.request("GET", f"/web/{TS}id_/http://example.com/small")
        r = c.getresponse()
        assert r.status == 200 and r.read() == b"<p>small</p>"
        c.close()
        a.setblocking(False)
        with pytest.raises(BlockingIOError):   # not a byte of the range's answer yet
            a.recv(1)
        a.setblocking(True)
        got = b""
        while True:
            piece = a.recv(65536)
            if not piece:
                break
            got += piece
    assert got.startswith(b"HTTP/1.1 206 ") and got.endswith(b"\r\n\r\n" + bytes(10))
