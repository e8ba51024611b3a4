"""What one client can hold of ``warchive serve`` (docs/security.md, "Resource limits"), tried on
a real server over loopback with each of uvicorn's parsers (httptools and h11): a huge request
head, many fields, heads and bodies sent a byte at a time, a silent socket, many connections
from one address, a refused body, and a client's own X-Forwarded-Proto.

Each test measures what the promise is about: the status the client gets, that the server
closed the socket (a read returns end of file), and the server's own peak RSS (VmHWM of its
process) where memory is the point. Times in these tests are the server's settings made short
(``--request-timeout 2``); nothing asserts how fast anything is.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Iterator, Tuple

import pytest

from loadkit import hwm_kib, serve
from replaysite import TS1, write_site
from warchive.collection import Collection

PARSERS = ["httptools", "h11"]


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("limits")
    r = work / "colls"
    Collection.init(str(r / "web")).add([str(write_site(work))])
    return r


@pytest.fixture(params=PARSERS)
def server(request, root) -> Iterator[Tuple[int, int]]:
    """(port, pid) of a server with short timeouts and 4 connections a client."""
    with serve(root, "--http", request.param, "--request-timeout", "2", "--max-client-connections", "4") as (base, pid):
        yield int(base.rsplit(":", 1)[1]), pid


def connect(port: int) -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), 5)
    s.settimeout(15)
    return s


def read_all(s: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a timeout fails the test)."""
    out = b""
    while True:
        try:
            piece = s.recv(65536)
        except ConnectionResetError:
            return out
        if not piece:
            return out
        out += piece


def send_until_closed(s: socket.socket, head: bytes, filler: bytes, total: int) -> int:
    """Send head, then filler up to total bytes, until the server closes: the bytes sent."""
    sent = 0
    try:
        s.sendall(head)
        sent = len(head)
        while sent < total:
            s.sendall(filler)
            sent += len(filler)
    except (BrokenPipeError, ConnectionResetError):
        pass
    return sent


def status_of(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/1.1 ") else 0


def test_a_huge_header_is_refused_and_never_held(server):
    port, pid = server
    before = hwm_kib(pid)
    s = connect(port)
    sent = send_until_closed(s, b"GET /web/ HTTP/1.1\r\nHost: x\r\nX-Big: ", b"a" * 65536, 128 << 20)
    reply = read_all(s)
    s.close()
    assert status_of(reply) in (400, 431), reply[:200]   # (h11 says 400 for a head over its limit)
    assert sent < 64 << 20, sent   # the server closed long before the 128 MB were sent
    assert hwm_kib(pid) - before < 32 << 10   # and never held them: peak RSS grew < 32 MB


def test_many_fields_are_refused(server):
    port, pid = server
    before = hwm_kib(pid)
    s = connect(port)
    one = b"".join(b"X-F%d: %s\r\n" % (i, b"v" * 1000) for i in range(64))
    sent = send_until_closed(s, b"GET /web/ HTTP/1.1\r\nHost: x\r\n", one, 100_000 * 1010)
    reply = read_all(s)
    s.close()
    assert status_of(reply) in (400, 431), reply[:200]
    assert sent < 10 << 20
    assert hwm_kib(pid) - before < 32 << 10
    s = connect(port)   # 150 short fields: under the byte limit, over the count
    s.sendall(b"GET /web/ HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(150)) + b"\r\n")
    assert status_of(read_all(s)) == 431
    s.close()


def test_a_normal_request_is_answered_with_either_parser(server):
    port, _ = server
    s = connect(port)
    s.sendall(f"GET /web/{TS1}id_/http://example.com/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
              .encode() + b"".join(b"X-%d: v\r\n" % i for i in range(90)) + b"\r\n")
    assert status_of(read_all(s)) == 200   # 90 fields: under the limit of 100
    s.close()


@pytest.mark.parametrize("what", ["silent", "trickled head", "trickled body", "idle after a response"])
def test_slow_or_silent_connections_are_closed(server, what):
    port, _ = server
    s = connect(port)
    t0 = time.monotonic()
    closed = False
    if what != "silent":   # (a silent socket: the read below must see the server close it)
        if what == "idle after a response":
            s.sendall(f"GET /web/{TS1}id_/http://example.com/ HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        elif what == "trickled body":
            s.sendall(b"POST /web/" + TS1.encode() + b"/http://example.com/form HTTP/1.1\r\nHost: x\r\n"
                      b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\n")
        else:
            s.sendall(b"GET /web/ HTTP/1.1\r\n")
        try:
            for _ in range(60):   # a byte every half second, for up to 30 s
                time.sleep(0.5)
                s.sendall(b"a" if what == "trickled body" else b"X-Slow: 1\r\n" if what == "trickled head" else b"")
                if what == "idle after a response":
                    s.setblocking(False)
                    try:
                        while s.recv(65536):
                            pass
                        closed = True
                        break
                    except BlockingIOError:
                        pass
                    finally:
                        s.setblocking(True)
        except (BrokenPipeError, ConnectionResetError):
            closed = True
    s.settimeout(15)
    if not closed:
        read_all(s)
    took = time.monotonic() - t0
    s.close()
    assert took < 25, f"{what}: still open after {took:.0f} s"   # (the setting is 2 s; the loop runs 30)


def test_one_address_holds_a_bounded_number_of_connections(server):
    port, _ = server
    time.sleep(0.5)   # (until the server has seen the end of the connection that waited for it to start)
    held = [connect(port) for _ in range(4)]
    time.sleep(0.3)
    extra = connect(port)
    reply = read_all(extra)
    assert status_of(reply) == 503, reply[:200]
    for s in held:
        s.close()
    time.sleep(0.3)
    s = connect(port)   # a place is free again
    s.sendall(f"GET /web/{TS1}id_/http://example.com/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    assert status_of(read_all(s)) == 200
    s.close()


def test_a_refused_body_closes_the_connection_unread(server):
    port, pid = server
    before = hwm_kib(pid)
    s = connect(port)
    head = (b"POST /web/" + TS1.encode() + b"/http://example.com/form HTTP/1.1\r\nHost: x\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1073741824\r\n\r\n")
    sent = send_until_closed(s, head, b"q" * 65536, 1 << 30)
    reply = read_all(s)
    s.close()
    assert status_of(reply) == 413 and b"connection: close" in reply.lower(), reply[:300]
    assert sent < 256 << 20, sent   # the server closed; it did not read and discard the GB
    assert hwm_kib(pid) - before < 32 << 10


@pytest.mark.parametrize("trusted", [False, True])
def test_x_forwarded_proto_is_believed_only_from_a_trusted_proxy(root, trusted):
    extra = ("--trust-proxy", "127.0.0.1") if trusted else ()
    with serve(root, *extra) as (base, _):
        port = int(base.rsplit(":", 1)[1])
        for proto in (b"javascript:alert(document.domain)//", b"https"):
            s = connect(port)
            s.sendall(f"GET /web/{TS1}mp_/http://example.com/ HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                      f"Connection: close\r\n".encode() + b"X-Forwarded-Proto: " + proto + b"\r\n\r\n")
            reply = read_all(s)
            s.close()
            assert status_of(reply) == 200, reply[:300]
            assert b"javascript:alert" not in reply
            links = f"://127.0.0.1:{port}/web/".encode()
            assert (b"https" + links in reply) == (trusted and proto == b"https")
            assert b"http" + links in reply or b"https" + links in reply
