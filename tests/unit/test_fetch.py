"""The fetcher against the loopback test site (tests/testsite.py): the bytes it keeps are the bytes
the server received and sent, whatever the framing; failures become Heritrix's negative codes."""

from __future__ import annotations

import asyncio
import gzip
import shutil
import socket
import ssl
import subprocess
import zlib

import pytest

from testsite import Reply, Site, response_bytes, web_site  # noqa: F401  (web_site is a fixture)
from warchive.capture import fetch as F
from warchive.capture.fetch import Fetcher
from warchive.capture.resolve import StaticResolver

HOST = "h001.site.test"
LOOPBACK = ["127.0.0.1"]   # the test servers' address: no fetcher connects to loopback unless allowed


def run(coro):
    return asyncio.run(coro)


def fetcher(site, **kw) -> Fetcher:
    return Fetcher(resolver=site.resolver(), port_map={80: site.port}, allow_addresses=LOOPBACK, **kw)


def get(site, path, host=HOST, **kw) -> F.FetchResult:
    async def go():
        async with fetcher(site, **kw) as f:
            return await f.fetch(f"http://{host}{path}")
    return run(go())


# --------------------------------------------------------------------------- exact bytes

EXACT = ["/", "/page/2", "/chunked.html", "/gzip.html", "/gzip-chunked.html", "/close.html", "/redirect",
         "/img.png", "/data.bin", "/busy", "/unavailable", "/no-such-page", "/robots.txt"]


@pytest.mark.parametrize("path", EXACT)
def test_exact_bytes(web_site, path):
    r = get(web_site, path)
    [hit] = web_site.hits(host=HOST, path=path)
    assert r.request == hit.request, "the request bytes kept are not what the server received"
    assert r.response == hit.response, "the response bytes kept are not what the server sent"
    assert r.status == int(hit.response.split(b" ", 2)[1])
    assert r.ip == "127.0.0.1" and r.port == web_site.port
    assert r.truncated is None and r.error is None
    assert r.response[:r.head_length].endswith(b"\r\n\r\n") and r.body == r.response[r.head_length:]


def test_request_bytes_are_plain_http11(web_site):
    f = Fetcher(user_agent="warchive-test/1 (+http://example.test/bot)", from_="ops@example.test")
    req, _, target = f.build_request("http://a.test:8080/p/q?x=1&y=2#frag")
    assert target == "/p/q?x=1&y=2"
    assert req == (b"GET /p/q?x=1&y=2 HTTP/1.1\r\nHost: a.test:8080\r\n"
                   b"User-Agent: warchive-test/1 (+http://example.test/bot)\r\nFrom: ops@example.test\r\n"
                   b"Accept: */*\r\nAccept-Encoding: gzip, deflate\r\nConnection: close\r\n\r\n")
    req, _, _ = f.build_request("https://a.test:443/")
    assert b"\r\nHost: a.test\r\n" in req


def _own_route(site, path, raw: bytes, **kw):
    site.add(HOST, path, Reply([raw], **kw))


def test_chunked_payload_dechunked(web_site):
    body = b"<html>" + bytes(range(256)) * 3 + b"</html>"
    _own_route(web_site, "/own-chunked", response_bytes(200, body, [("Content-Type", "text/html")], chunked=5))
    r = get(web_site, "/own-chunked")
    assert b"\r\n5\r\n" in r.body     # the framing is kept in the record ...
    assert r.payload() == body       # ... and undone for links and digests


def test_gzip_payload_decoded(web_site):
    body = b"<p>" + b"compressible " * 500 + b"</p>"
    z = gzip.compress(body, mtime=0)
    _own_route(web_site, "/own-gz", response_bytes(200, z, [("Content-Encoding", "gzip")], chunked=64))
    r = get(web_site, "/own-gz")
    assert r.body != body and r.payload() == body
    d = zlib.compress(body)
    _own_route(web_site, "/own-deflate", response_bytes(200, d, [("Content-Encoding", "deflate")]))
    assert get(web_site, "/own-deflate").payload() == body


def test_close_delimited_http10(web_site):
    body = b"no length, the end of the connection ends it\n" * 50
    raw = b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n" + body
    _own_route(web_site, "/own-close", raw, close=True)
    r = get(web_site, "/own-close")
    assert r.http_version == "1.0" and r.status == 200
    assert r.response == raw and r.payload() == body and r.error is None


def test_redirect_not_followed(web_site):
    r = get(web_site, "/chain/3")
    assert r.status == 302 and r.location == f"http://{HOST}/chain/2"
    assert [h.target for h in web_site.hits(host=HOST)] == ["/chain/3"]


def test_interim_1xx_kept(web_site):
    raw = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
    _own_route(web_site, "/own-100", raw)
    r = get(web_site, "/own-100")
    assert r.status == 200 and r.response == raw and r.body == b"hi"


def test_malformed_head_still_kept(web_site):
    raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nthis is not a header\r\n\r\n<a href=x>"
    _own_route(web_site, "/own-bad", raw, close=True)
    r = get(web_site, "/own-bad")
    assert r.response == raw
    assert r.status == 200 and r.header("content-type") == "text/html" and r.body == b"<a href=x>"
    assert "malformed" in (r.error or "")


# --------------------------------------------------------------------------- limits and timeouts

def test_size_limit_truncates(web_site):
    r = get(web_site, "/big.bin", max_size=10000)
    [hit] = web_site.hits(path="/big.bin")
    assert r.truncated == "length" and r.status == 200
    assert len(r.body) == 10000 and r.response == hit.response[:r.head_length + 10000]


def test_size_limit_not_reached(web_site):
    r = get(web_site, "/data.bin", max_size=4096)
    assert r.truncated is None and len(r.body) == 4096


def test_read_timeout_after_head_truncates(web_site):
    r = get(web_site, "/slow", read_timeout=0.3)
    assert r.status == 200 and r.truncated == "time" and r.body == b""
    assert r.response == web_site.hits(path="/slow")[0].response[:r.head_length]


def test_total_timeout_truncates(web_site):
    r = get(web_site, "/slow", read_timeout=10, total_timeout=1.0)
    assert r.status == 200 and r.truncated == "time" and "total" in r.error


def test_no_answer_is_timeout(web_site):
    r = get(web_site, "/hang", read_timeout=0.3)
    assert r.status == F.TIMEOUT == -4 and r.response == b""


def test_connection_refused():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()   # nothing listens there now

    async def go():
        async with Fetcher(resolver=StaticResolver({"gone.test": "127.0.0.1"}), allow_addresses=LOOPBACK) as f:
            return await f.fetch(f"http://gone.test:{port}/")
    r = run(go())
    assert r.status == F.CONNECT_FAILED == -2 and r.request == b"" and r.ip == "127.0.0.1"


def test_dns_failure(web_site):
    r = get(web_site, "/", host="not-in-the-table.invalid")
    assert r.status == F.DOMAIN_LOOKUP_FAILED == -6 and r.ip is None and r.dns is None
    assert web_site.hits() == []


def test_empty_response(web_site):
    _own_route(web_site, "/own-empty", b"", close=True)
    r = get(web_site, "/own-empty")
    assert r.status == F.EMPTY_RESPONSE == -404 and r.response == b""


def test_closed_inside_head(web_site):
    _own_route(web_site, "/own-cut", b"HTTP/1.1 200 OK\r\nContent-Le", close=True)
    r = get(web_site, "/own-cut")
    assert r.status == F.CONNECT_LOST and r.response == b"HTTP/1.1 200 OK\r\nContent-Le"


def test_closed_inside_body(web_site):
    raw = b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this"
    _own_route(web_site, "/own-short", raw, close=True)
    r = get(web_site, "/own-short")
    assert r.status == 200 and r.response == raw and r.error and r.truncated == "disconnect"


@pytest.mark.parametrize("url", ["ftp://a.test/x", "mailto:a@b.test", "http:///nohost", "http://a.test:99999/"])
def test_unsupported(url):
    r = run(Fetcher(resolver=StaticResolver({})).fetch(url))
    assert r.status == F.UNSUPPORTED_URI == -7


# --------------------------------------------------------------------------- DNS, keep-alive, concurrency

def test_dns_facts_once_per_host(web_site):
    async def go():
        async with fetcher(web_site) as f:
            a = await asyncio.gather(*(f.fetch(f"http://{HOST}/page/{i}") for i in (1, 2, 3)))
            b = await f.fetch(f"http://{HOST}/")
            return a, b, f.dns_cache
    first, later, cache = run(go())
    with_dns = [r for r in first if r.dns is not None]
    assert len(with_dns) == 1 and later.dns is None
    facts = with_dns[0].dns
    assert facts.addresses == ["127.0.0.1"] and facts.uri == f"dns:{HOST}" and cache[HOST] is facts
    lines = facts.record_block().decode().splitlines()
    assert len(lines[0]) == 14 and lines[0].isdigit()
    assert lines[1] == f"{HOST}.\t0\tIN\tA\t127.0.0.1"


def test_ip_literal_needs_no_resolver(web_site):
    async def go():
        async with Fetcher(resolver=StaticResolver({}), allow_addresses=LOOPBACK) as f:
            return await f.fetch(f"http://127.0.0.1:{web_site.port}/")
    r = run(go())
    assert r.status == 404 and r.dns is None and r.ip == "127.0.0.1"


def test_keep_alive_reuses_one_connection(web_site):
    async def go():
        async with fetcher(web_site, keep_alive=True) as f:
            return [await f.fetch(f"http://{HOST}{p}") for p in ("/page/1", "/chunked.html", "/gzip.html")]
    rs = run(go())
    hits = web_site.hits(host=HOST)
    assert [r.reused_connection for r in rs] == [False, True, True]
    assert len({h.peer for h in hits}) == 1
    assert [r.response for r in rs] == [h.response for h in hits]
    assert all(b"Connection: keep-alive" in r.request for r in rs)


def test_many_hosts_concurrently():
    with Site.default(n_hosts=20, pages=2) as site:
        async def go():
            async with fetcher(site) as f:
                urls = [f"http://{h}{p}" for h in site.hosts for p in ("/", "/page/1", "/gzip.html")]
                return await asyncio.gather(*(f.fetch(u) for u in urls))
        rs = run(go())
        assert len(rs) == 60 and all(r.status == 200 for r in rs)
        sent = {(h.host, h.target): h.response for h in site.hits()}
        for r in rs:
            host, path = r.url.split("/", 3)[2], "/" + r.url.split("/", 3)[3]
            assert r.response == sent[(host, path)]
        assert sum(r.dns is not None for r in rs) == 20


# --------------------------------------------------------------------------- TLS

@pytest.fixture(scope="module")
def tls_cert(tmp_path_factory):
    """A self-signed certificate made now with the openssl command."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a self-signed certificate")
    d = tmp_path_factory.mktemp("tls")
    key, cert = d / "key.pem", d / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out",
                    str(cert), "-days", "2", "-subj", "/CN=tls.site.test",
                    "-addext", "subjectAltName=DNS:tls.site.test"], check=True, capture_output=True)
    return key, cert


def test_tls_exact_bytes_and_cert(tls_cert):
    key, cert = tls_cert
    raw = response_bytes(200, b"secret page\n", [("Content-Type", "text/plain")], chunked=4)
    got = {}

    async def handle(reader, writer):
        got["request"] = await reader.readuntil(b"\r\n\r\n")
        writer.write(raw)
        await writer.drain()
        writer.close()

    async def go(verify):
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(cert, key)
        server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=ctx)
        port = server.sockets[0].getsockname()[1]
        client_ctx = None
        if verify:
            client_ctx = ssl.create_default_context(cafile=str(cert))
        async with Fetcher(resolver=StaticResolver({"tls.site.test": "127.0.0.1"}), verify_tls=verify,
                           ssl_context=client_ctx, allow_addresses=LOOPBACK) as f:
            r = await f.fetch(f"https://tls.site.test:{port}/s")
        server.close()
        await server.wait_closed()
        return r

    for verify in (False, True):
        r = run(go(verify))
        assert r.status == 200, r.error
        assert r.response == raw and r.request == got["request"] and r.payload() == b"secret page\n"
        assert r.tls is not None and r.tls.version.startswith("TLS") and r.tls.server_name == "tls.site.test"
        assert r.tls.peer_cert_der == ssl.PEM_cert_to_DER_cert(cert.read_text())
        assert r.tls.verified is verify and len(r.tls.cert_sha256) == 64
        if verify:
            assert ("commonName", "tls.site.test") in [kv for rdn in r.tls.peer_cert["subject"] for kv in rdn]
        else:
            assert r.tls.peer_cert is None


def test_tls_handshake_failure_is_connect_failed():
    """An https URL to a server that answers in plain text: the handshake fails."""
    async def handle(reader, writer):
        writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()
        writer.close()

    async def go():
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        async with Fetcher(resolver=StaticResolver({"plain.test": "127.0.0.1"}), connect_timeout=5,
                           allow_addresses=LOOPBACK) as f:
            r = await f.fetch(f"https://plain.test:{port}/")
        server.close()
        await server.wait_closed()
        return r
    r = run(go())
    assert r.status == F.CONNECT_FAILED, r.error


def test_keep_alive_after_server_closed(web_site):
    """The server closes a connection the client kept: the next fetch still gets its answer."""
    raw = response_bytes(200, b"bye", [("Content-Type", "text/plain")])
    _own_route(web_site, "/own-bye", raw, close=True)

    async def go():
        async with fetcher(web_site, keep_alive=True) as f:
            a = await f.fetch(f"http://{HOST}/own-bye")
            b = await f.fetch(f"http://{HOST}/own-bye")
            c = await f.fetch(f"http://{HOST}/page/1")
            return a, b, c
    a, b, c = run(go())
    assert a.response == b.response == raw and c.status == 200
    assert len(web_site.hits(host=HOST)) == 3


def test_idna_host_and_non_ascii_path(web_site):
    web_site.add("xn--caf-dma.site.test", "/caf%C3%A9?q=%C3%BC%20x", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    r = get(web_site, "/caf\u00e9?q=\u00fc x", host="caf\u00e9.site.test")
    assert r.status == 200 and r.body == b"ok"
    assert r.request.startswith(b"GET /caf%C3%A9?q=%C3%BC%20x HTTP/1.1\r\nHost: xn--caf-dma.site.test\r\n")


# --------------------------------------------------------------------------- property: any framing

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@pytest.fixture(scope="module")
def shared_site():
    with Site() as site:
        yield site


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.binary(max_size=3000), chunk=st.none() | st.integers(1, 700), gz=st.booleans(),
       close_delimited=st.booleans(), http10=st.booleans())
def test_any_framing_kept_and_decoded(shared_site, body, chunk, gz, close_delimited, http10):
    """Whatever the framing (Content-Length, chunked in any sizes, close-delimited, HTTP/1.0) and
    encoding, the response kept is the bytes sent and the payload is the body before framing."""
    sent = gzip.compress(body, mtime=0) if gz else body
    headers = [("Content-Encoding", "gzip")] if gz else []
    version = "HTTP/1.0" if http10 else "HTTP/1.1"
    if http10 or close_delimited:
        raw = response_bytes(200, sent, headers, version=version, content_length=not close_delimited)
        close = True
    else:
        raw = response_bytes(200, sent, headers, chunked=chunk)
        close = False
    path = f"/p{len(shared_site.log)}"
    shared_site.add("any.site.test", path, Reply([raw], close=close))
    r = get(shared_site, path, host="any.site.test")
    assert r.status == 200 and r.error is None and r.truncated is None, r.error
    assert r.response == raw
    assert r.payload() == body


heads = st.sampled_from([b"HTTP/1.1 200 OK\r\n", b"HTTP/1.0 404 Nope\r\n", b"HTTP/1.1 100 Continue\r\n\r\n",
                         b"HTTP/1.1 301 Moved\r\nLocation: /x\r\n", b"HTTP/2 200\r\n", b"ICY 200 OK\r\n", b""])
header_lines = st.lists(st.sampled_from([b"Content-Length: 5\r\n", b"Content-Length: x\r\n",
                                         b"Transfer-Encoding: chunked\r\n", b"Content-Encoding: gzip\r\n",
                                         b"Bad Header\r\n", b"X: \xff\xfe\r\n", b"\r\n", b"5\r\nhello\r\n",
                                         b"0\r\n\r\n", b"zz\r\n"]), max_size=8).map(b"".join)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(head=heads, lines=header_lines, tail=st.binary(max_size=200))
def test_hostile_responses_never_raise(shared_site, head, lines, tail):
    """Whatever a server sends before closing: no exception, no runtime error, and what is kept is
    a prefix of what was sent (h11 may end a message before the connection closes)."""
    sent = head + lines + tail
    path = f"/h{len(shared_site.log)}"
    shared_site.add("bad.site.test", path, Reply([sent], close=True))
    r = get(shared_site, path, host="bad.site.test", read_timeout=5)
    assert r.status != F.RUNTIME_ERROR, r.error
    assert sent.startswith(r.response)
    r.payload()
    assert (r.status > 0) == (r.head_length > 0)


def test_robots_cache_through_the_fetcher(web_site):
    """The robots module's cache, fed by the fetcher: each host's robots.txt of the test site."""
    from warchive.capture.robots_cache import RobotsCache
    cache = RobotsCache("warchive-test")
    archived = []

    async def go():
        async with fetcher(web_site) as f:
            async def robots_fetch(url):
                r = await f.fetch(url)
                archived.append(r)      # the crawler writes it to the WARC like any response
                return r.robots_view()
            return [await cache.adecide(f"http://{h}{p}", robots_fetch)
                    for h, p in [("h000.site.test", "/private/secret.html"), ("h000.site.test", "/page/1"),
                                 ("gone.site.test", "/x")]]
    private, page, gone = run(go())
    assert not private.allowed and page.allowed
    assert cache.crawl_delay("http://h000.site.test/") == 1.0
    assert gone.allowed      # a 404 robots.txt: everything allowed (RFC 9309 2.3.1.3)
    assert [r.url for r in archived] == ["http://h000.site.test/robots.txt", "http://gone.site.test/robots.txt"]
