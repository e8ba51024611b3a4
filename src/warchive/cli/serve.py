"""`warchive serve`: the collections under a root directory over HTTP.

The command is ``serve(args)`` and its options ``serve_arguments(p)``
(warchive.cli.commands explains the registry).
"""

from __future__ import annotations

import copy
import http
import logging
import socket
import sys
from argparse import ArgumentParser, ArgumentTypeError, BooleanOptionalAction, Namespace
from typing import Any, Awaitable, Callable, Dict, TextIO

import uvicorn
from uvicorn.protocols.http import h11_impl

from ..errors import ArchiveError
from ..replay.app import create_app
from ..replay.collections import CollectionUnavailable, Collections
from ..replay.server import ServerLimits, guarded_protocol, parser_protocol
from . import paths

try:   # (uvicorn[standard] brings httptools; without it uvicorn parses with h11)
    from uvicorn.protocols.http import httptools_impl
except ImportError:   # pragma: no cover
    httptools_impl = None  # type: ignore[assignment]

LOG_LEVELS = ("critical", "error", "warning", "info", "debug")


def _port(text: str) -> int:
    n = int(text)
    if not 0 <= n <= 65535:
        raise ArgumentTypeError(f"a port is 0 to 65535, not {n}")
    return n


def _count(text: str) -> int:
    if not text.isdigit() or len(text) > 9 or int(text) < 1:
        raise ArgumentTypeError(f"a count is a whole number from 1 to 999999999, not {text[:40]!r}")
    return int(text)


def _seconds(text: str) -> float:
    try:
        n = float(text)
    except ValueError:
        n = -1.0
    if not 0.5 <= n <= 86400:
        raise ArgumentTypeError(f"a time in seconds from 0.5 to 86400, not {text[:40]!r}")
    return n


def serve_arguments(p: ArgumentParser) -> None:
    p.add_argument("--root", default=None, metavar="DIR",
                   help="directory of collections (default ./collections, or the config's collections_root)")
    p.add_argument("--config", metavar="FILE", help="a pywb-style config.yaml: collections, archive_paths and "
                   "index_paths, framed_replay, redirect_to_exact, replay_host, ... (docs/replay.md)")
    p.add_argument("--frameless", action="store_true", help="replay pages without the banner's top frame")
    p.add_argument("--redirect-to-exact", action="store_true",
                   help="answer a TimeGate or an inexact timestamp with a 307 to the exact memento")
    p.add_argument("--replay-host", metavar="ORIGIN",
                   help="serve archived pages from this origin (http://host:port), another than the banner's")
    p.add_argument("--host", default="127.0.0.1", metavar="ADDRESS", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=_port, default=8080, metavar="N", help="port to listen on (default 8080; 0: any free port)")
    p.add_argument("--log-level", choices=LOG_LEVELS, default="warning",
                   help="what the server logs on stderr (default warning)")
    p.add_argument("--access-log", action=BooleanOptionalAction, default=True,
                   help="log every request on stderr: client, method, path, status (default; --no-access-log: not)")
    p.add_argument("--trust-proxy", metavar="ADDRESSES", default=None,
                   help="addresses of reverse proxies whose X-Forwarded-Proto and X-Forwarded-For are believed "
                        "(comma-separated IPs or networks, '*' for any; default: none, the headers are ignored)")
    p.add_argument("--max-client-connections", type=_count, default=ServerLimits.max_per_client, metavar="N",
                   help=f"connections one client address may hold at once; one more is answered 503 "
                        f"(default {ServerLimits.max_per_client}; behind a proxy, its address is the client's)")
    p.add_argument("--request-timeout", type=_seconds, default=ServerLimits.head_timeout, metavar="SECONDS",
                   help=f"a request's head must arrive within this, and its body at 1 KiB/s after it "
                        f"(default {ServerLimits.head_timeout:g}); else 408 and the connection is closed")
    p.add_argument("--http", choices=("auto", "httptools", "h11"), default="auto",
                   help="uvicorn's HTTP parser (default auto: httptools when installed); the limits of "
                        "docs/security.md hold with either")


def _log_config() -> Dict[str, Any]:
    """uvicorn's logging, every handler on stderr (standard output stays empty; the access log is
    AccessLog's)."""
    config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    config["handlers"]["access"]["stream"] = "ext://sys.stderr"
    return config


Scope = Dict[str, Any]
Message = Dict[str, Any]
ASGIApp = Callable[[Scope, Any, Any], Awaitable[None]]
_PHRASES = {int(s): f"{int(s)} {s.phrase}" for s in http.HTTPStatus}


class AccessLog:
    """serve's access log: an ASGI wrapper writing a line per answered request on ``stream``, as
    uvicorn's does (``INFO:     CLIENT - "METHOD PATH HTTP/V" STATUS``; the path as sent), in one
    write. (uvicorn's goes through logging and its formatter: 22 us a line, 5% of the CPU of
    replaying an image.)"""

    def __init__(self, app: ASGIApp, stream: TextIO) -> None:
        self.app = app
        self.stream = stream

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status: list = []

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            if status:
                client = scope.get("client")
                who = f"{client[0]}:{client[1]}" if client else "-"
                path = (scope.get("raw_path") or scope.get("path", "").encode("utf-8")).decode("latin-1")
                qs = scope.get("query_string", b"")
                if qs:
                    path += "?" + qs.decode("latin-1")
                code = status[0]
                self.stream.write(f'INFO:     {who} - "{scope.get("method", "")} {path} '
                                  f'HTTP/{scope.get("http_version", "1.1")}" {_PHRASES.get(code, code)}\n')


def _report_collections(colls: Collections) -> None:
    """Say which collections the server found, and which of them cannot be served and why."""
    names = colls.names()
    if not names:
        print(f"warchive serve: no collection under {colls.root} yet (warchive init or warchive add makes one)",
              file=sys.stderr)
        return
    ok = []
    for name in names:
        try:
            eng = colls.engine(name)
        except CollectionUnavailable:
            continue   # the app's logger has said why
        ok.append(f"{name} ({len(eng.sources) if eng else 0} index files)")
    if ok:
        print(f"warchive serve: collections: {', '.join(ok)}", file=sys.stderr, flush=True)


def listen_socket(host: str, port: int) -> socket.socket:
    """The socket serve listens on (bound, not listening yet: uvicorn does that). It names
    IPPROTO_TCP: asyncio sets TCP_NODELAY only on connections whose socket says it is TCP, and
    with proto 0 Nagle held each response back (id_ images: 1,090 against 1,510 requests/s)."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        raise ArchiveError(f"cannot listen on {host}:{port}: {e.strerror or e}") from None
    return sock


def send_any_status() -> None:
    """Let uvicorn send every status a capture is replayed with, 200 to 999. Its parsers' tables
    of status lines hold 100-599 only: an archived 999 (LinkedIn's refusal) raised KeyError in
    uvicorn and dropped the connection. The added codes go out with an empty reason phrase
    (RFC 9112 allows one); h11 takes codes up to 999 itself."""
    tables = [(getattr(h11_impl, "STATUS_PHRASES", None), lambda code: b"")]
    if httptools_impl is not None:
        tables.append((getattr(httptools_impl, "STATUS_LINE", None), lambda code: b"HTTP/1.1 %d \r\n" % code))
    for table, line in tables:
        if isinstance(table, dict):
            for code in range(600, 1000):
                table.setdefault(code, line(code))


def serve(args: Namespace) -> int:
    """Serve replay (pywb's URL space: warchive.replay.app) and `GET /COLL/cdx?...` for every
    collection under --root and in --config (uvicorn, one process); a collection's new index
    files are seen without a restart. Prints where it listens and which
    collections it found (a broken one by name, with why: the others are served); Ctrl-C or
    SIGTERM stops it (after the requests being answered)."""
    options: Dict[str, Any] = {}
    if args.frameless:
        options["framed_replay"] = False
    if args.redirect_to_exact:
        options["redirect_to_exact"] = True
    if args.replay_host:
        options["replay_host"] = args.replay_host.rstrip("/")
    if args.root is not None:
        paths.directory(args.root, "directory of collections")
    root = args.root if args.root is not None else (None if args.config else "collections")
    app = create_app(root, config=args.config, **options)
    sock = listen_socket(args.host, args.port)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    where = ", ".join(w for w in (f"collections under {root}" if root else "",
                                  f"config {args.config}" if args.config else "") if w)
    print(f"warchive serve: http://{shown}:{port}/ ({where}; Ctrl-C stops)",
          file=sys.stderr, flush=True)
    handler = logging.StreamHandler(sys.stderr)   # what the app says of its collections, as serve's lines
    handler.setFormatter(logging.Formatter("warchive serve: %(message)s"))
    app_log = logging.getLogger("warchive.serve")
    app_log.addHandler(handler)
    app_log.propagate = False
    _report_collections(app.colls)
    # asyncio's own loop, not uvloop: with the server busy, uvloop leaves some connections
    # waiting (wrk, 50 connections, a 0.5 ms handler: p99 278-378 ms under uvloop, 32-34 ms under
    # asyncio, at the same requests/s: 1,690-1,780 against 1,710-1,790)
    # the access log is serve's own (AccessLog): requests are logged whatever the level of the
    # server's own messages
    served: ASGIApp = AccessLog(app, sys.stderr) if args.access_log else app
    send_any_status()
    limits = ServerLimits(max_per_client=args.max_client_connections, head_timeout=args.request_timeout,
                          body_timeout=args.request_timeout)
    config = uvicorn.Config(served, loop="asyncio", log_level=args.log_level, access_log=False,
                            log_config=_log_config(), http=guarded_protocol(parser_protocol(args.http), limits),
                            h11_max_incomplete_event_size=limits.max_head,
                            proxy_headers=args.trust_proxy is not None, forwarded_allow_ips=args.trust_proxy)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:   # uvicorn shut down cleanly, then raised the Ctrl-C it caught
        pass
    return 0
