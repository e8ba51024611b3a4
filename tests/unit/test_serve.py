"""`warchive serve`'s listening socket and access log: connections accepted on the socket by
asyncio's loop (the one serve runs) answer without Nagle's delay (TCP_NODELAY), a port taken is a
clear error, and the access log names client, request as sent and status."""

from __future__ import annotations

import asyncio
import io
import socket

import pytest

from warchive.cli.serve import AccessLog, listen_socket
from warchive.errors import ArchiveError


def test_accepted_connections_have_nodelay() -> None:
    seen: list = []

    class Probe(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:   # type: ignore[override]
            s = transport.get_extra_info("socket")
            seen.append(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            transport.close()

    async def main() -> None:
        sock = listen_socket("127.0.0.1", 0)
        server = await asyncio.get_running_loop().create_server(Probe, sock=sock)
        port = sock.getsockname()[1]
        _, w = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(100):
            if seen:
                break
            await asyncio.sleep(0.01)
        w.close()
        server.close()
        await server.wait_closed()

    asyncio.run(main())
    assert seen and seen[0] != 0


def test_port_taken_is_an_archive_error() -> None:
    first = listen_socket("127.0.0.1", 0)
    first.listen(1)
    first.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 0)
    try:
        port = first.getsockname()[1]
        with pytest.raises(ArchiveError, match=f"cannot listen on 127.0.0.1:{port}"):
            listen_socket("127.0.0.1", port).close()
    finally:
        first.close()


def test_access_log_line_names_client_request_as_sent_and_status() -> None:
    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        code = 404 if scope["path"].startswith("/nope") else 200
        await send({"type": "http.response.start", "status": code, "headers": []})
        await send({"type": "http.response.body", "body": b"x"})

    out = io.StringIO()
    logged = AccessLog(app, out)

    async def call(scope):
        async def receive():
            return {"type": "http.request", "body": b"", "more_body": False}

        async def send(message):
            pass
        await logged(scope, receive, send)

    base = {"type": "http", "method": "GET", "http_version": "1.1", "client": ("127.0.0.1", 4242)}
    asyncio.run(call(dict(base, path="/coll/2020id_/http://a.example/ b", raw_path=b"/coll/2020id_/http://a.example/%20b",
                          query_string=b"q=%C3%A9")))
    asyncio.run(call(dict(base, path="/nope", raw_path=b"/nope", query_string=b"", method="HEAD", http_version="1.0")))
    asyncio.run(call({"type": "lifespan"}))
    assert out.getvalue().splitlines() == [
        'INFO:     127.0.0.1:4242 - "GET /coll/2020id_/http://a.example/%20b?q=%C3%A9 HTTP/1.1" 200 OK',
        'INFO:     127.0.0.1:4242 - "HEAD /nope HTTP/1.0" 404 Not Found']
