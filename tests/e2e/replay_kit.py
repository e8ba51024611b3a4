"""What the replay browser tests share: a leak catcher, chromium launched so that nothing but
127.0.0.1 resolves anywhere else, a route guard, and the replay app served under uvicorn.

* ``LeakCatcher``: a TCP server on 127.0.0.1 that records the first bytes of every connection
  (an HTTP request line and Host, a TLS server name). ``launch(pw, leaks.port)`` starts Debian's
  chromium (never ``playwright install``) with ``--host-resolver-rules`` sending every host
  name but 127.0.0.1 to it; the hosts of chromium's own background services resolve nowhere.
* ``Guard``: a Playwright route on a browser context that lets requests to the replay origin
  through and records and aborts any other.
* ``serve(app)``: an ASGI app under uvicorn on 127.0.0.1, port 0, in a daemon thread; yields
  its origin (``http://127.0.0.1:PORT``).

This module drives a browser and a server; it must not know what the tests assert.
"""

from __future__ import annotations

import contextlib
import socket
import socketserver
import threading
import time
from typing import Any, Iterator, List

# chromium's own services (component updates, network time, sign-in) resolve nowhere: they are the
# browser's traffic, not the page's, and no archived page of the tests names those hosts
BROWSER_OWN = ", ".join(f"MAP *.{d} ~NOTFOUND" for d in ("google.com", "googleapis.com", "gstatic.com", "gvt1.com"))
CHROMIUM_ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-domain-reliability", "--no-first-run", "--mute-audio",
                 "--disable-features=DnsOverHttps,MediaRouter,HttpsUpgrades,OptimizationHints"]


def _sni(data: bytes) -> str:
    """The server name of a TLS ClientHello (RFC 8446 4.1.2, extension 0), or ""."""
    try:
        k = 5 + 4 + 2 + 32                                  # record and handshake headers, version, random
        k += 1 + data[k]                                    # session id
        k += 2 + int.from_bytes(data[k:k + 2], "big")       # cipher suites
        k += 1 + data[k]                                    # compression methods
        end = k + 2 + int.from_bytes(data[k:k + 2], "big")
        k += 2
        while k + 4 <= end:
            kind, size = int.from_bytes(data[k:k + 2], "big"), int.from_bytes(data[k + 2:k + 4], "big")
            if kind == 0:
                return data[k + 9:k + 4 + size].decode("ascii", "replace")
            k += 4 + size
    except IndexError:
        pass
    return ""


def _describe(data: bytes) -> str:
    """The request line and Host of an HTTP request, or the server name of a TLS ClientHello."""
    if data[:1] == b"\x16":
        return "TLS " + (_sni(data) or "(no server name)")
    if not data:
        return "(connected, nothing sent)"
    head = data.split(b"\r\n\r\n", 1)[0].decode("latin-1").split("\r\n")
    host = next((h.split(":", 1)[1].strip() for h in head[1:] if h.lower().startswith("host:")), "?")
    return f"{head[0][:120]} (Host: {host})"


class LeakCatcher:
    """A TCP server that records the first bytes of every connection (any protocol)."""

    def __init__(self) -> None:
        self.hits: List[str] = []
        self.open = 0            # connections accepted and not yet recorded
        catcher = self

        class H(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                catcher.open += 1
                self.request.settimeout(2)
                try:
                    data = self.request.recv(4096)
                except OSError:
                    data = b""
                catcher.hits.append(_describe(data))
                catcher.open -= 1
                try:
                    self.request.sendall(b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                except OSError:
                    pass

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def settle(self, timeout: float = 3.0) -> None:
        """Wait until every connection accepted so far is recorded (one that sends nothing is
        recorded when its read times out)."""
        end = time.monotonic() + timeout
        while self.open and time.monotonic() < end:
            time.sleep(0.05)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def launch(pw: Any, leak_port: int) -> Any:
    """Debian's chromium, headless, every host name but 127.0.0.1 resolving to the leak catcher."""
    from warchive.capture.browser import chromium_path
    rules = f"--host-resolver-rules={BROWSER_OWN}, MAP * 127.0.0.1:{leak_port}, EXCLUDE 127.0.0.1"
    return pw.chromium.launch(executable_path=chromium_path(), headless=True, args=[CHROMIUM_ARGS[0], rules,
                                                                                   *CHROMIUM_ARGS[1:]])


def launch_live(pw: Any, host_suffix: str, port: int) -> Any:
    """Debian's chromium, headless, the hosts ``*.host_suffix`` resolving to a live test server
    on 127.0.0.1:port and every other name nowhere: the same flags as ``launch``, so that pages
    render alike in both."""
    from warchive.capture.browser import chromium_path
    rules = f"--host-resolver-rules={BROWSER_OWN}, MAP *.{host_suffix} 127.0.0.1:{port}, MAP * ~NOTFOUND"
    return pw.chromium.launch(executable_path=chromium_path(), headless=True, args=[CHROMIUM_ARGS[0], rules,
                                                                                   *CHROMIUM_ARGS[1:]])


class Guard:
    """A route on ``context`` that lets requests to ``origin`` through (recorded in
    ``requests``) and aborts any other (recorded in ``escaped``)."""

    def __init__(self, context: Any, origin: str) -> None:
        self.origin = origin
        self.requests: List[str] = []
        self.escaped: List[str] = []
        context.route("**/*", self._route)

    def _route(self, route: Any) -> None:
        if route.request.url.startswith(self.origin + "/"):
            self.requests.append(route.request.url)
            route.continue_()
        else:
            self.escaped.append(route.request.url)
            route.abort()


@contextlib.contextmanager
def serve(app: Any) -> Iterator[str]:
    """Serve ``app`` under uvicorn on 127.0.0.1 (port 0) in a daemon thread; yields the origin."""
    import uvicorn
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
