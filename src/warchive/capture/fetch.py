"""The fetcher: one HTTP/1.1 exchange over an asyncio socket, keeping the exact bytes.

``Fetcher.fetch(url)`` resolves the host through a pluggable resolver (``resolve``), connects
(TLS for https), writes a request it built itself and reads the response, and
returns a ``FetchResult`` whose ``request`` is every byte written to the socket
and whose ``response`` is every byte read for this exchange (head, then the
body as framed on the wire: chunked framing and Content-Encoding untouched).
The WARC request and response blocks are exactly these bytes.

h11 only *parses* what was read (it is fed a copy): it decides where the
message ends (Content-Length, chunked, or the end of the connection for a
close-delimited body) and gives the status and headers. A response h11 will
not parse is still kept: its bytes up to the connection's end are the record.

It connects only to an address ``addresses.refusal`` lets through (a globally reachable one, or
one in ``allow_addresses``), judged on the very address handed to ``connect``, for every new
connection, so a name that resolves inward, an obfuscated spelling of loopback, or an answer that
changes between two lookups all end as ``ADDRESS_REFUSED`` without a packet sent.

It must not follow redirects (``FetchResult.location`` goes back to the
frontier), wait for politeness, read robots.txt, or write WARCs: the crawler
does those around it. A failure is never raised: it becomes a negative
Heritrix-style status in the result (``FETCH_STATUS`` is the table).
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import re
import ssl
import time
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Mapping, Optional, Tuple
from urllib.parse import quote, urljoin, urlsplit

import h11

from ..warc.content import decode_body
from .addresses import Refusal, networks, refusal
from .resolve import DnsFacts, Resolver, SystemResolver

__all__ = [
    "FETCH_STATUS", "CONNECT_FAILED", "CONNECT_LOST", "TIMEOUT", "DOMAIN_LOOKUP_FAILED", "UNSUPPORTED_URI",
    "EMPTY_RESPONSE", "RUNTIME_ERROR", "DNS_SUCCESS", "ADDRESS_REFUSED", "FetchResult", "Fetcher", "TlsFacts",
]

# Heritrix's fetch status codes that the fetcher itself can produce. The crawler adds its own
# (robots, scope, quota: -9998, -5000...) from the same table in docs/format.md.
DNS_SUCCESS = 1
CONNECT_FAILED = -2          # refused, unreachable, TLS handshake failed
CONNECT_LOST = -3            # the connection broke before a complete response head
TIMEOUT = -4                 # connect or read timeout before a response head
RUNTIME_ERROR = -5           # an unexpected error inside the fetcher (a bug: the message says which)
DOMAIN_LOOKUP_FAILED = -6    # the host name did not resolve
UNSUPPORTED_URI = -7         # not http(s), or no host
EMPTY_RESPONSE = -404        # the server closed the connection without sending a byte
ADDRESS_REFUSED = -5001      # Heritrix's "blocked by user setting": the address is not public (addresses.py)

FETCH_STATUS: Dict[int, str] = {
    DNS_SUCCESS: "successful DNS lookup (dns: records)",
    CONNECT_FAILED: "HTTP connect failed (refused, unreachable, TLS handshake failed)",
    CONNECT_LOST: "HTTP connect broken (connection lost before a complete response head)",
    TIMEOUT: "HTTP timeout (connect or read timeout before a complete response head)",
    RUNTIME_ERROR: "unexpected runtime error in the fetcher",
    DOMAIN_LOOKUP_FAILED: "domain lookup failed (the host name did not resolve)",
    UNSUPPORTED_URI: "URI not supported (scheme other than http/https, or no host)",
    EMPTY_RESPONSE: "empty HTTP response (connection closed without a byte), counted as 404",
    ADDRESS_REFUSED: "blocked: the host's address is not public and no --allow-address network holds it",
}

_READ = 65536


@dataclass
class TlsFacts:
    """The TLS session of an https fetch (the peer certificate as DER, and what it can be told by)."""

    version: Optional[str]
    cipher: Optional[str]
    server_name: str
    peer_cert_der: Optional[bytes]
    verified: bool
    # subject, issuer, notBefore, notAfter, subjectAltName... as ssl.getpeercert() gives them: only
    # for a verified certificate (the ssl module decodes no other; peer_cert_der always has it all)
    peer_cert: Optional[dict] = None

    @property
    def cert_sha256(self) -> Optional[str]:
        return hashlib.sha256(self.peer_cert_der).hexdigest() if self.peer_cert_der else None


# --------------------------------------------------------------------------- the result

@dataclass
class FetchResult:
    """One exchange. ``status`` is the HTTP status, or a negative code of ``FETCH_STATUS`` when no
    response head arrived (then ``error`` says why and ``response`` holds whatever was read)."""

    url: str
    method: str
    request: bytes = b""               # exactly the bytes written to the socket
    response: bytes = b""              # exactly the bytes read: head + body as framed on the wire
    status: int = 0
    reason: str = ""
    http_version: str = ""             # "1.1", "1.0"
    headers: List[Tuple[str, str]] = field(default_factory=list)   # as sent (names keep their case)
    head_length: int = 0               # response[:head_length] is the status line and headers
    ip: Optional[str] = None           # WARC-IP-Address
    port: Optional[int] = None
    started: float = 0.0               # epoch seconds when the fetch began (before DNS/connect)
    duration: float = 0.0              # seconds until the response was read (or the fetch failed)
    truncated: Optional[str] = None    # WARC-Truncated: "length" (max_size), "time" (timeouts),
                                       # "disconnect" (closed before the framed end of the body)
    error: Optional[str] = None
    dns: Optional[DnsFacts] = None     # set on the fetch that looked the host up (once per host)
    tls: Optional[TlsFacts] = None
    refused: Optional[Refusal] = None  # why the address was not connected to (status ADDRESS_REFUSED)
    reused_connection: bool = False
    _buf: bytearray = field(default_factory=bytearray, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.status > 0

    def header(self, name: str, default: Optional[str] = None) -> Optional[str]:
        """The first header of that name (case-insensitive)."""
        n = name.lower()
        for k, v in self.headers:
            if k.lower() == n:
                return v
        return default

    @property
    def body(self) -> bytes:
        """The body as it came off the wire (still chunked and encoded)."""
        return self.response[self.head_length:]

    def transfer_decoded(self) -> bytes:
        """The body with chunked framing removed, Content-Encoding kept: what WARC-Payload-Digest
        and the crawl log's digest are taken over (WARC 1.1, 6.3.2)."""
        return decode_body(self.body, self.header("transfer-encoding"), None)

    def payload(self) -> bytes:
        """The body de-chunked and decoded (Content-Encoding gzip, deflate, br), as a browser sees
        it: what links are extracted from."""
        return decode_body(self.body, self.header("transfer-encoding"), self.header("content-encoding"))

    def robots_view(self) -> Tuple[int, List[Tuple[str, str]], bytes, str]:
        """What ``warchive.capture.robots_cache.RobotsCache`` asks of a fetch: (status, headers, decoded
        body, URL fetched), status 0 when no response head came back (the cache follows redirects)."""
        return (max(self.status, 0), self.headers, self.payload() if self.status > 0 else b"", self.url)

    @property
    def content_type(self) -> Optional[str]:
        return self.header("content-type")

    @property
    def mime(self) -> str:
        """The MIME type without parameters, lower case ("unknown" when none was sent)."""
        ct = self.content_type
        return ct.split(";", 1)[0].strip().lower() or "unknown" if ct else "unknown"

    @property
    def location(self) -> Optional[str]:
        """For a 3xx, the Location resolved against the URL: for the frontier to queue (hop R)."""
        if not 300 <= self.status < 400:
            return None
        loc = self.header("location")
        return urljoin(self.url, loc.strip()) if loc else None


# --------------------------------------------------------------------------- the fetcher

class _Conn:
    __slots__ = ("reader", "writer", "ip", "port", "tls")

    def __init__(self, reader, writer, ip, port, tls) -> None:
        self.reader = reader
        self.writer = writer
        self.ip = ip
        self.port = port
        self.tls = tls


class Fetcher:
    """Fetches URLs; one instance serves many concurrent ``fetch`` calls.

    Timeouts are seconds: ``connect_timeout`` (DNS + TCP + TLS), ``read_timeout`` (between two
    reads), ``total_timeout`` (the whole exchange). ``max_size`` caps the body bytes kept (the rest
    is not read: ``truncated="length"``); a read or total timeout after the response head keeps what
    was read (``truncated="time"``), and so does a connection that ends before the body's framed
    end (``truncated="disconnect"``). ``keep_alive`` keeps one idle connection per host:port for the
    next fetch (the crawler fetches one URL per host at a time); otherwise every request says
    ``Connection: close``. ``allow_addresses`` are networks (``"10.0.0.0/8"``, ``"127.0.0.1"``) whose
    addresses may be connected to although they are not public; no others are (``ValueError``
    for a value that is no network).
    """

    def __init__(self, *, resolver: Optional[Resolver] = None, user_agent: str = "warchive/0.1",
                 from_: Optional[str] = None, accept_encoding: Optional[str] = "gzip, deflate",
                 extra_headers: Iterable[Tuple[str, str]] = (), connect_timeout: float = 20.0,
                 read_timeout: float = 30.0, total_timeout: float = 300.0, max_size: Optional[int] = None,
                 keep_alive: bool = False, ssl_context: Optional[ssl.SSLContext] = None,
                 verify_tls: bool = False, port_map: Optional[Mapping[int, int]] = None,
                 allow_addresses: Iterable[str] = ()) -> None:
        self.resolver: Resolver = resolver or SystemResolver()
        self.allow_addresses = networks(allow_addresses)
        self.user_agent = user_agent
        self.from_ = from_
        self.accept_encoding = accept_encoding
        self.extra_headers = list(extra_headers)
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.total_timeout = total_timeout
        self.max_size = max_size
        self.keep_alive = keep_alive
        self.verify_tls = verify_tls
        self._ssl_context = ssl_context   # made on the first https fetch (loading CA paths costs ~30 ms)
        # Tests and benchmarks run one server on a random port for every http URL: map 80 -> it.
        self.port_map = dict(port_map or {})
        self.dns_cache: Dict[str, DnsFacts] = {}
        self._dns_pending: Dict[str, asyncio.Future] = {}
        self._idle: Dict[Tuple[str, str, int], _Conn] = {}

    @property
    def ssl_context(self) -> ssl.SSLContext:
        if self._ssl_context is None:
            self._ssl_context = _default_ssl_context(self.verify_tls)
        return self._ssl_context

    # -- public

    async def fetch(self, url: str, *, method: str = "GET", headers: Iterable[Tuple[str, str]] = (),
                    body: bytes = b"") -> FetchResult:
        res = FetchResult(url=url, method=method, started=time.time())
        t0 = time.monotonic()
        try:
            await asyncio.wait_for(self._fetch(res, headers, body, t0), self.total_timeout)
        except asyncio.TimeoutError:
            if res.head_length:
                res.truncated = "time"
                res.error = f"total timeout after {self.total_timeout} s"
            else:
                res.status, res.error = TIMEOUT, f"total timeout after {self.total_timeout} s"
        except Exception as e:  # never raise: a crawl goes on
            res.status, res.error = RUNTIME_ERROR, f"{type(e).__name__}: {e}"
        if res._buf:
            res.response = bytes(res._buf)
            res._buf = bytearray()
        res.duration = time.monotonic() - t0
        return res

    async def close(self) -> None:
        idle, self._idle = self._idle, {}
        for c in idle.values():
            _close(c)

    async def __aenter__(self) -> "Fetcher":
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    def build_request(self, url: str, method: str = "GET", headers: Iterable[Tuple[str, str]] = (),
                      body: bytes = b"") -> Tuple[bytes, List[Tuple[str, str]], str]:
        """The request bytes for ``url`` and the (name, value) list h11 is told about."""
        parts = urlsplit(url)
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        target = _NOT_URL_CHARS.sub(lambda m: quote(m.group(0), safe=""), target)
        default_port = 443 if parts.scheme == "https" else 80
        host = _ascii_host(parts.hostname or "")
        if ":" in host:
            host = f"[{host}]"
        if parts.port and parts.port != default_port:
            host += f":{parts.port}"
        hs: List[Tuple[str, str]] = [("Host", host), ("User-Agent", self.user_agent)]
        if self.from_:
            hs.append(("From", self.from_))
        hs.append(("Accept", "*/*"))
        if self.accept_encoding:
            hs.append(("Accept-Encoding", self.accept_encoding))
        hs.extend(self.extra_headers)
        hs.extend(headers)
        if body or method in ("POST", "PUT"):
            hs.append(("Content-Length", str(len(body))))
        hs.append(("Connection", "keep-alive" if self.keep_alive else "close"))
        head = f"{method} {target} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hs) + "\r\n"
        return head.encode("latin-1", "strict") + body, hs, target

    # -- the exchange

    async def _fetch(self, res: FetchResult, extra: Iterable[Tuple[str, str]], body: bytes, t0: float) -> None:
        parts = urlsplit(res.url)
        scheme = parts.scheme.lower()
        try:
            host = parts.hostname
            port = parts.port or (443 if scheme == "https" else 80)
        except ValueError as e:
            res.status, res.error = UNSUPPORTED_URI, f"bad URL: {e}"
            return
        if scheme not in ("http", "https") or not host:
            res.status, res.error = UNSUPPORTED_URI, f"cannot fetch {scheme or 'a relative'} URL"
            return
        try:
            req, hs, target = self.build_request(res.url, res.method, extra, body)
        except UnicodeError:
            res.status, res.error = UNSUPPORTED_URI, "the host has no IDNA form, or a header is not Latin-1"
            return
        host = _ascii_host(host)
        port = self.port_map.get(port, port)
        key = (scheme, host.lower(), port)
        conn: Optional[_Conn] = None
        keep = False
        for attempt in (0, 1):
            conn = self._idle.pop(key, None) if attempt == 0 else None
            if conn is not None and (conn.reader.at_eof() or conn.writer.is_closing()):
                _close(conn)
                conn = None
            if conn is None:
                conn = await self._connect(res, scheme, host, port)
                if conn is None:
                    return
            else:
                res.reused_connection = True
            res.ip, res.port, res.tls = conn.ip, conn.port, conn.tls
            res.request = req
            keep = False
            try:
                keep = await self._exchange(res, conn, hs, target)
            finally:
                if not keep:
                    _close(conn)
            if (res.reused_connection and not res._buf and res.status in (EMPTY_RESPONSE, CONNECT_LOST)):
                # the server had closed the idle connection: once more on a new one
                res.status, res.error, res.reused_connection = 0, None, False
                continue
            break
        if keep and self.keep_alive and conn is not None:
            old = self._idle.pop(key, None)
            if old is not None:
                _close(old)
            self._idle[key] = conn
        elif keep and conn is not None:
            _close(conn)

    async def _lookup(self, res: FetchResult, host: str, port: int) -> Optional[DnsFacts]:
        h = host.lower()
        facts = self.dns_cache.get(h)
        if facts is not None:
            return facts
        try:
            ipaddress.ip_address(h)
            return DnsFacts(h, [h], time.time(), 0.0)   # an IP literal: no lookup, no dns: record
        except ValueError:
            pass
        pending = self._dns_pending.get(h)
        if pending is not None:
            return await asyncio.shield(pending)
        fut: asyncio.Future = asyncio.get_running_loop().create_future()
        self._dns_pending[h] = fut
        started, t = time.time(), time.monotonic()
        try:
            try:
                addrs = await asyncio.wait_for(self.resolver.resolve(host, port), self.connect_timeout)
            except (OSError, asyncio.TimeoutError, UnicodeError) as e:
                fut.set_result(None)
                res.status, res.error = DOMAIN_LOOKUP_FAILED, f"{host}: {e or type(e).__name__}"
                return None
            facts = DnsFacts(h, addrs, started, time.monotonic() - t)
            self.dns_cache[h] = facts
            res.dns = facts   # this fetch made the lookup: the crawler writes the dns: record
            fut.set_result(facts)
            return facts
        finally:
            self._dns_pending.pop(h, None)
            if not fut.done():
                fut.set_result(None)

    async def _connect(self, res: FetchResult, scheme: str, host: str, port: int) -> Optional[_Conn]:
        facts = await self._lookup(res, host, port)
        if facts is None:
            if not res.status:
                res.status, res.error = DOMAIN_LOOKUP_FAILED, f"{host}: did not resolve"
            return None
        ip, refused = self._admit(facts.addresses)
        if refused is not None:
            res.ip, res.refused = refused.address, refused
            res.status, res.error = ADDRESS_REFUSED, f"{host}: {refused}; not connected"
            return None
        tls = scheme == "https"
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(ip, port, ssl=self.ssl_context if tls else None,
                                        server_hostname=host if tls else None, limit=_READ),
                self.connect_timeout)
        except asyncio.TimeoutError:
            res.ip, res.status, res.error = ip, TIMEOUT, f"connect timeout after {self.connect_timeout} s"
            return None
        except (OSError, ssl.SSLError) as e:
            res.ip, res.status, res.error = ip, CONNECT_FAILED, f"connect to {ip}:{port} failed: {e}"
            return None
        tls_facts = None
        if tls:
            sobj = writer.get_extra_info("ssl_object")
            cipher = writer.get_extra_info("cipher")
            tls_facts = TlsFacts(version=sobj.version() if sobj else None, cipher=cipher[0] if cipher else None,
                                 server_name=host,
                                 peer_cert_der=sobj.getpeercert(binary_form=True) if sobj else None,
                                 verified=self.verify_tls, peer_cert=(sobj.getpeercert() or None) if sobj else None)
        return _Conn(reader, writer, ip, port, tls_facts)

    def _admit(self, addresses: List[str]) -> Tuple[str, Optional[Refusal]]:
        """The first of a lookup's addresses that may be connected to, else the first one's refusal.
        The address returned is the one connected to: no lookup happens between this and connect."""
        first: Optional[Refusal] = None
        for ip in addresses:
            why = refusal(ip, self.allow_addresses)
            if why is None:
                return ip, None
            first = first or why
        return "", first or refusal("", ())

    async def _exchange(self, res: FetchResult, conn: _Conn, hs: List[Tuple[str, str]], target: str) -> bool:
        """Write the request, read the response into ``res``; True when the connection can be reused."""
        h = h11.Connection(h11.CLIENT, max_incomplete_event_size=1 << 20)
        h.send(h11.Request(method=res.method, target=target, headers=hs))
        h.send(h11.EndOfMessage())
        try:
            conn.writer.write(res.request)
            await asyncio.wait_for(conn.writer.drain(), self.read_timeout)
        except (OSError, asyncio.TimeoutError) as e:
            res.status, res.error = CONNECT_LOST, f"writing the request failed: {e or type(e).__name__}"
            return False
        buf = res._buf
        parse_ok = True
        complete = False
        while True:
            try:
                data = await asyncio.wait_for(conn.reader.read(_READ), self.read_timeout)
            except asyncio.TimeoutError:
                if res.head_length:
                    res.truncated, res.error = "time", f"read timeout after {self.read_timeout} s"
                else:
                    res.status, res.error = TIMEOUT, f"read timeout after {self.read_timeout} s"
                break
            except (OSError, ssl.SSLError) as e:
                if not res.head_length:
                    res.status, res.error = CONNECT_LOST, f"connection lost: {e}"
                else:
                    res.truncated, res.error = "disconnect", f"connection lost in the body: {e}"
                break
            if res.head_length and self.max_size is not None:
                room = res.head_length + self.max_size - len(buf)
                if len(data) > room:
                    data, res.truncated = data[:room], "length"
            buf += data
            if parse_ok and (data or not res.truncated):   # b"" tells h11 the connection ended
                try:
                    h.receive_data(data)
                    complete = self._events(res, h, buf)
                except h11.RemoteProtocolError as e:
                    parse_ok = False
                    if data or not res.head_length:
                        res.error = f"malformed response: {e}"
                    if not res.head_length:
                        _head_by_hand(res, buf)
            if res.head_length and self.max_size is not None and len(buf) > res.head_length + self.max_size:
                del buf[res.head_length + self.max_size:]
                res.truncated = "length"
            if complete or res.truncated or not data:
                break
        if not buf and not res.status:
            res.status, res.error = EMPTY_RESPONSE, "the server closed the connection without a response"
        elif not res.head_length and res.status >= 0:
            if not res.status:
                res.status = CONNECT_LOST
            res.error = res.error or "the connection closed inside the response head"
        elif res.head_length and not complete and not res.truncated and not res.error:
            res.truncated, res.error = "disconnect", "the connection closed before the end of the body"
        # bytes after the end of the message (a server sending more than it framed) stay in the
        # record, as read; such a connection is not reused
        return (complete and parse_ok and not res.truncated and h.our_state is h11.DONE
                and h.their_state is h11.DONE and not h.trailing_data[0])

    @staticmethod
    def _events(res: FetchResult, h: h11.Connection, buf: bytearray) -> bool:
        """Drain h11's events after feeding it; True at the end of the response."""
        while True:
            ev = h.next_event()
            if ev is h11.NEED_DATA or ev is h11.PAUSED:
                return False
            if isinstance(ev, h11.InformationalResponse):
                continue  # 1xx: stays in the record, the final response follows
            if isinstance(ev, h11.Response):
                res.status = ev.status_code
                res.reason = ev.reason.decode("latin-1")
                res.http_version = ev.http_version.decode("ascii")
                res.headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in ev.headers.raw_items()]
                # h11 does not say where the head ended in the bytes: find the end of the final
                # head (after any 1xx heads) in what was read.
                res.head_length = _head_end(buf, res.status)
            elif isinstance(ev, h11.EndOfMessage):
                return True
            elif isinstance(ev, h11.ConnectionClosed):
                return True


_NOT_URL_CHARS = re.compile(r"[^\x21-\x7e]+")


def _ascii_host(host: str) -> str:
    """An internationalized host name as DNS and the Host header need it (IDNA); raises
    UnicodeError when it has no such form."""
    return host if host.isascii() else host.encode("idna").decode("ascii")


def _head_end(buf: bytearray, status: int) -> int:
    """The end of the final response head in ``buf`` (after any 1xx interim heads)."""
    pos = 0
    while True:
        end = buf.find(b"\r\n\r\n", pos)
        nl = buf.find(b"\n\n", pos)
        if end < 0 or (0 <= nl < end):
            end, sep = nl, 2
        else:
            sep = 4
        if end < 0:
            return len(buf)
        line = bytes(buf[pos:buf.find(b"\n", pos)])
        parts = line.split(None, 2)
        if len(parts) >= 2 and parts[1][:1] == b"1" and status >= 200:
            pos = end + sep
            continue
        return end + sep


def _head_by_hand(res: FetchResult, buf: bytearray) -> None:
    """A response h11 rejects (bad header syntax): take the status line and what headers can be read,
    so the crawl log and the frontier still learn the status."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return
    lines = bytes(buf[:end]).split(b"\r\n")
    parts = lines[0].split(None, 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/") or not parts[1].isdigit():
        return
    res.http_version = parts[0][5:].decode("latin-1")
    res.status = int(parts[1])
    res.reason = parts[2].decode("latin-1") if len(parts) > 2 else ""
    for ln in lines[1:]:
        k, sep, v = ln.partition(b":")
        if sep:
            res.headers.append((k.strip().decode("latin-1"), v.strip().decode("latin-1")))
    res.head_length = end + 4


def _close(conn: _Conn) -> None:
    try:
        conn.writer.close()
    except Exception:
        pass


def _default_ssl_context(verify: bool) -> ssl.SSLContext:
    """An archive keeps what a server sends even with a certificate a browser would refuse (the
    facts are recorded instead); ``verify_tls=True`` checks them."""
    ctx = ssl.create_default_context()
    if not verify:
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    ctx.set_alpn_protocols(["http/1.1"])
    return ctx
