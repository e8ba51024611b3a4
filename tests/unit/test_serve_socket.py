"""`warchive serve`'s listening socket: connections accepted on it by asyncio's loop (the one
serve runs) answer without Nagle's delay (TCP_NODELAY), and a port taken is a clear error."""

from __future__ import annotations

import asyncio
import socket

import pytest

from warchive.cli.serve import listen_socket
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
