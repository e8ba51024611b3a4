"""Helpers of the browser tests (tests/e2e): a logging HTTP server on 127.0.0.1 and the
check that Debian's chromium and Playwright are there.

Browser tests skip when Playwright or chromium is missing, unless
WARCHIVE_REQUIRE_BROWSER=1 (scripts/test.sh sets it, so CI cannot pass by
skipping them): ``require_browser()`` decides.
"""

from __future__ import annotations

import http.server
import os
import socket
import threading
import time
from typing import Callable, Dict, List, Optional, Tuple

import pytest


def _why_no_browser() -> Optional[str]:
    try:
        import playwright.async_api  # noqa: F401
    except ImportError:
        return "Playwright is not installed (pip install '.[browser]')"
    from warchive.capture.browser import chromium_path

    if chromium_path() is None:
        return "Debian's chromium is not installed (apt-get install chromium; scripts/setup.sh does it for tests)"
    return None


def require_browser() -> None:
    """Skip the calling test (or fail it under WARCHIVE_REQUIRE_BROWSER=1) without a browser."""
    why = _why_no_browser()
    if why:
        if os.environ.get("WARCHIVE_REQUIRE_BROWSER") == "1":
            pytest.fail(f"WARCHIVE_REQUIRE_BROWSER=1 but {why}")
        pytest.skip(why)


Handler = Callable[["Request"], Tuple[int, List[Tuple[str, str]], bytes]]


class Request:
    def __init__(self, path: str, host: str, when: float) -> None:
        self.path, self.host, self.when = path, host, when


class Site:
    """An HTTP/1.0 server on 127.0.0.1 (port picked at run time) that logs every request.

    ``pages[path] = (status, headers, body)`` or a handler function; unknown paths are 404."""

    def __init__(self) -> None:
        self.pages: Dict[str, object] = {}
        self.log: List[Request] = []
        self.connections = 0
        site = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def do_GET(self) -> None:   # noqa: N802
                req = Request(self.path, self.headers.get("Host", ""), time.time())
                site.log.append(req)
                got = site.pages.get(self.path.split("?")[0])
                if callable(got):
                    got = got(req)
                status, headers, body = got if got is not None else (404, [("Content-Type", "text/plain")], b"no")
                self.send_response(status)
                for k, v in headers:
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *a) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.origin = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return self.origin + path

    def raw_get(self, path: str) -> bytes:
        """The exact bytes of the response to a GET, as a crawler's fetcher keeps them."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as s:
            s.sendall(f"GET {path} HTTP/1.0\r\nHost: 127.0.0.1:{self.port}\r\n\r\n".encode())
            buf = b""
            while True:
                b = s.recv(65536)
                if not b:
                    return buf
                buf += b

    def paths(self) -> List[str]:
        return [r.path for r in self.log]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
