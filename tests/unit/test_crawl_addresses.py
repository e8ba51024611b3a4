"""The crawler refuses non-public addresses: the fetcher judges the address it is about to connect to
(after DNS, on every connection), and the crawler records each refusal and goes on.

Every test runs under tests/netguard.py's connect guard: a connect the fetcher attempts is recorded,
and one to anything but the test's own loopback server is stopped before the system call. So these
tests fail, without sending a packet anywhere, on a crawler that would connect; with the guard in
the fetcher there is no attempt at all. Host names that must resolve inward are given by a static
table; numeric spellings (2130706433, 0x7f000001, 127.1) are read by getaddrinfo with
AI_NUMERICHOST, as the system resolver reads a URL's host, and never reach DNS.
"""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path
from typing import Dict, List, Sequence

import pytest

import netguard
from test_crawler import warc_blocks
from testsite import DOMAIN, Site, html, response_bytes, web_site  # noqa: F401  (web_site is a fixture)
from warchive.capture.addresses import KINDS
from warchive.capture.crawl_log import read_log
from warchive.capture.crawler import CrawlConfig, CrawlError, Crawler
from warchive.capture.fetch import ADDRESS_REFUSED, FetchResult, Fetcher
from warchive.capture.resolve import StaticResolver
from warchive.capture.robots import robots_url
from warchive.capture.session import read_session
from warchive.cli import main

SEED_HOST = "a." + DOMAIN
LOOPBACK = ["127.0.0.1"]          # the test site's address, allowed where a crawl must reach it
NAMES = {"metadata.google.internal": "169.254.169.254", "inside." + DOMAIN: "10.0.0.7",
         "*." + DOMAIN: "127.0.0.1"}


class Numeric:
    """Reads a host as getaddrinfo reads a numeric one (inet_aton: 2130706433, 0x7f000001, 127.1,
    0177.0.0.1); ``AI_NUMERICHOST`` keeps it from asking DNS."""

    async def resolve(self, host: str, port: int) -> List[str]:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_NUMERICHOST)
        return list(dict.fromkeys(str(i[4][0]) for i in infos))


def resolver() -> StaticResolver:
    return StaticResolver(NAMES, fallback=Numeric())


def fetch(url: str, **kw) -> FetchResult:
    async def go() -> FetchResult:
        async with Fetcher(resolver=kw.pop("resolver", resolver()), **kw) as f:
            return await f.fetch(url)
    return asyncio.run(go())


# --------------------------------------------------------------------------- the fetcher, per class

# (URL, the kind of address refused); PORT is the test site's, where a connect would be answered.
CLASSES = [
    ("http://169.254.169.254/latest/meta-data/", "link-local"),
    ("http://metadata.google.internal/computeMetadata/v1/", "link-local"),
    ("http://10.0.0.1/", "private"),
    ("http://172.16.0.1/", "private"),
    ("http://192.168.0.1/", "private"),
    ("http://100.64.0.1/", "shared"),
    ("http://[fd00::1]/", "private"),
    ("http://[fc00::1]/", "private"),
    ("http://[fe80::1]/", "link-local"),
    ("http://[ff02::1]/", "multicast"),
    ("http://0.0.0.0:PORT/", "unspecified"),
    ("http://0:PORT/", "unspecified"),
    ("http://[::]:PORT/", "unspecified"),
    ("http://127.0.0.1:PORT/", "loopback"),       # loopback on any port, the test site's included
    ("http://127.0.0.2:PORT/", "loopback"),
    ("http://[::1]:PORT/", "loopback"),
    ("http://2130706433:PORT/", "loopback"),      # 127.0.0.1 as one decimal number
    ("http://0x7f000001:PORT/", "loopback"),      # ... as one hex number
    ("http://127.1:PORT/", "loopback"),           # ... with its zeros left out
    ("http://0177.0.0.1:PORT/", "loopback"),      # ... in octal
    ("http://[::ffff:127.0.0.1]:PORT/", "loopback"),   # v4-mapped IPv6
    ("http://[::ffff:7f00:1]:PORT/", "loopback"),
    ("http://[2002:7f00:1::1]:PORT/", "loopback"),     # 6to4 carrying 127.0.0.1
    ("http://[64:ff9b::a9fe:a9fe]/", "link-local"),    # NAT64 carrying 169.254.169.254
]


@pytest.mark.parametrize("url,kind", CLASSES)
def test_the_fetcher_refuses_each_class_before_connecting(web_site, url, kind):
    url = url.replace("PORT", str(web_site.port))
    with netguard.watch() as w:
        r = fetch(url)
    assert w.attempts == [], f"connect attempted to {w.attempts} for {url}"
    assert r.status == ADDRESS_REFUSED and r.refused is not None and r.refused.kind == kind, (r.status, r.error)
    assert r.request == b"" and r.response == b"" and web_site.hits() == []
    assert r.refused.address in r.error and "not connected" in r.error


def test_an_allowed_network_is_connected_to(web_site):
    """127.0.0.0/8 allowed: every spelling of 127.0.0.1 reaches the site, the network's bound holds."""
    port = web_site.port
    with netguard.watch(("127.0.0.1", port)) as w:
        for host in ("127.0.0.1", "2130706433", "0x7f000001", "127.1"):
            r = fetch(f"http://{host}:{port}/", allow_addresses=["127.0.0.0/8"])
            assert r.status == 404 and r.ip == "127.0.0.1" and r.request, (host, r.error)
        r = fetch("http://10.0.0.1/", allow_addresses=["127.0.0.0/8"])
        assert r.status == ADDRESS_REFUSED
    assert w.elsewhere() == [] and len(web_site.hits()) == 4


def test_every_connection_is_checked_when_the_answer_changes(web_site):
    """A name that resolved to an allowed address and then to an inward one (DNS rebinding, the
    lookup made again): the second connection is refused; the address judged is the one connected to."""
    class Rebinding:
        answers = [["127.0.0.1"], ["10.0.0.1"]]

        async def resolve(self, host: str, port: int) -> List[str]:
            return self.answers.pop(0)

    async def go():
        async with Fetcher(resolver=Rebinding(), port_map={80: web_site.port}, allow_addresses=LOOPBACK) as f:
            first = await f.fetch("http://rebind.site.test/")
            f.dns_cache.clear()            # the name's lookup expires: a new one is made
            return first, await f.fetch("http://rebind.site.test/")

    with netguard.watch(("127.0.0.1", web_site.port)) as w:
        first, second = asyncio.run(go())
    assert first.status == 404 and first.ip == "127.0.0.1"
    assert second.status == ADDRESS_REFUSED and second.refused.address == "10.0.0.1"
    assert w.attempts == [("127.0.0.1", web_site.port)]


def test_of_several_addresses_an_allowed_one_is_connected_to(web_site):
    both = StaticResolver({"two.site.test": ["10.0.0.1", "127.0.0.1"]})
    with netguard.watch(("127.0.0.1", web_site.port)) as w:
        r = fetch("http://two.site.test/", resolver=both, port_map={80: web_site.port}, allow_addresses=LOOPBACK)
        none = fetch("http://two.site.test/", resolver=both, port_map={80: web_site.port})
    assert r.status == 404 and r.ip == "127.0.0.1"
    assert none.status == ADDRESS_REFUSED and none.refused.address == "10.0.0.1"   # the first one's reason
    assert w.attempts == [("127.0.0.1", web_site.port)]


# --------------------------------------------------------------------------- the crawler

def config(site: Site, seeds: Sequence[str] = (f"http://{SEED_HOST}/",), **kw) -> CrawlConfig:
    base = dict(seeds=list(seeds), delay_factor=0.0, min_delay=0.01, max_delay=0.01, fsync=False, concurrency=4,
                read_timeout=3.0, total_timeout=5.0, max_retries=0, port_map={"80": site.port},
                allow_addresses=LOOPBACK, index_every=60.0)
    base.update(kw)
    return CrawlConfig(**base)


def crawl(site: Site, coll: Path, **kw) -> Crawler:
    c = Crawler(config(site, **kw), str(coll), resolver=resolver())
    with netguard.watch(("127.0.0.1", site.port)) as w:
        asyncio.run(c.run())
    assert w.elsewhere() == [], f"the crawl tried to connect to {w.elsewhere()}"
    return c


def skipped(c: Crawler) -> Dict[str, dict]:
    """URL -> its skipped entry in the session journal."""
    s = read_session(Path(c.session_dir) / "session.journal")
    return {f["url"]: f for f in s.all_fields() if f.get("kind") == "skipped"}


def log_lines(c: Crawler) -> Dict[str, object]:
    return {e.uri: e for e in read_log(str(Path(c.session_dir) / "crawl.log"))}


def page(body: str) -> bytes:
    return response_bytes(200, html("p", body), [("Content-Type", "text/html")])


# embeds one hop off scope, each on a refused address: (URL, kind, element)
EMBEDS = [
    ("http://169.254.169.254/latest/meta-data/", "link-local", '<img src="{}">'),
    ("http://metadata.google.internal/computeMetadata/v1/", "link-local", '<iframe src="{}"></iframe>'),
    ("http://10.0.0.1/app.js", "private", '<script src="{}"></script>'),
    ("http://192.168.1.1/site.css", "private", '<link rel="stylesheet" href="{}">'),
    ("http://172.16.0.1/x.png", "private", '<img src="{}">'),
    ("http://100.64.0.1/x.png", "shared", '<img src="{}">'),
    ("http://[fd00::1]/x.png", "private", '<img src="{}">'),
    ("http://[fe80::1]/x.png", "link-local", '<img src="{}">'),
    ("http://0.0.0.0:PORT/x.png", "unspecified", '<img src="{}">'),
    ("http://127.0.0.2:PORT/x.png", "loopback", '<img src="{}">'),    # loopback beyond the allowed 127.0.0.1
    ("http://[::1]:PORT/x.png", "loopback", '<img src="{}">'),
]


def test_embeds_off_scope_on_refused_addresses_are_recorded_and_the_crawl_goes_on(tmp_path):
    with Site() as site:
        embeds = [(u.replace("PORT", str(site.port)), kind, el) for u, kind, el in EMBEDS]
        site.add(SEED_HOST, "/", page("".join(el.format(u) for u, _, el in embeds) + '<a href="/next">n</a>'))
        site.add(SEED_HOST, "/next", page("<p>the crawl went on</p>"))
        c = crawl(site, tmp_path / "c")
        assert sorted(h.target for h in site.hits()) == ["/", "/next", "/robots.txt"]
    skips, lines = skipped(c), log_lines(c)
    archived = {uri for _, uri, _, _ in warc_blocks(tmp_path / "c")}
    seed = f"http://{SEED_HOST}/"
    for url, kind, _ in embeds:
        for u, hops in ((url, "E"), (robots_url(url), "EP")):   # the URL, and the robots.txt asked for before it
            e = skips[u]
            assert (e["reason"], e["status"], e["hops"]) == ("address", ADDRESS_REFUSED, hops), e
            assert KINDS[kind] in e["detail"]
            ln = lines[u]
            assert (ln.status, ln.hop_path, ln.annotations) == (ADDRESS_REFUSED, hops, [f"address:{kind}"])
            assert ln.via == (seed if u == url else url)
            assert u not in archived
    assert c.stats.refused == 2 * len(embeds) and c.stats.fetched == 3
    # a name that resolved inward leaves no dns: record telling the archive's readers the address
    assert f"dns:{SEED_HOST}" in archived and "dns:metadata.google.internal" not in archived
    assert "dns:metadata.google.internal" not in lines
    assert not [r for r in read_session(Path(c.session_dir) / "session.journal").failed()]


def test_robots_txt_of_a_new_host_is_refused_and_its_url_refused_as_itself(tmp_path):
    """The robots.txt request made before a host's first URL goes to the same address: refused,
    and the URL is then refused itself, not failed as robots.txt's prerequisite (-61)."""
    with Site() as site:
        site.add(SEED_HOST, "/", page('<img src="http://10.0.0.1/x.png">'))
        c = crawl(site, tmp_path / "c")
    lines = log_lines(c)
    assert lines["http://10.0.0.1/robots.txt"].status == ADDRESS_REFUSED
    assert lines["http://10.0.0.1/x.png"].status == ADDRESS_REFUSED
    assert {e.status for e in lines.values()} == {1, 200, 404, ADDRESS_REFUSED}   # dns:, seed, robots.txt: no -61
    s = read_session(Path(c.session_dir) / "session.journal")
    assert s.failed() == [] and set(skipped(c)) == {"http://10.0.0.1/robots.txt", "http://10.0.0.1/x.png"}


def test_a_redirect_to_a_refused_address_is_refused(tmp_path):
    """An allowed site redirects to the metadata service and to a name that resolves inward; scope
    admits both (--include): the address still decides."""
    with Site() as site:
        site.add(SEED_HOST, "/", page('<a href="/go">go</a><a href="/go2">go2</a>'))
        site.add(SEED_HOST, "/go", response_bytes(302, b"", [("Location", "http://169.254.169.254/latest/meta-data/")]))
        site.add(SEED_HOST, "/go2", response_bytes(301, b"", [("Location", f"http://inside.{DOMAIN}/secret")]))
        c = crawl(site, tmp_path / "c", include=[r"^http://169\.254\.169\.254/", r"^http://inside\."])
        assert sorted(h.target for h in site.hits()) == ["/", "/go", "/go2", "/robots.txt"]
    skips = skipped(c)
    meta, inside = skips["http://169.254.169.254/latest/meta-data/"], skips[f"http://inside.{DOMAIN}/secret"]
    assert (meta["reason"], meta["hops"], meta["via"]) == ("address", "LR", f"http://{SEED_HOST}/go")
    assert (inside["reason"], inside["hops"], inside["via"]) == ("address", "LR", f"http://{SEED_HOST}/go2")
    assert "10.0.0.7" in inside["detail"] and "169.254.169.254" in meta["detail"]


def test_robots_ignore_still_refuses_the_metadata_service(tmp_path):
    with Site() as site:
        site.add(SEED_HOST, "/", page('<img src="http://169.254.169.254/latest/meta-data/">'
                                      '<img src="http://metadata.google.internal/computeMetadata/v1/">'))
        c = crawl(site, tmp_path / "c", robots="ignore")
        assert [h.target for h in site.hits()] == ["/"]
    lines = log_lines(c)
    for url in ("http://169.254.169.254/latest/meta-data/", "http://metadata.google.internal/computeMetadata/v1/"):
        assert lines[url].status == ADDRESS_REFUSED and lines[url].annotations == ["address:link-local"]
    assert not any(u.endswith("/robots.txt") for u in lines)
    assert c.stats.refused == 2


def test_an_allowed_range_is_crawled(tmp_path):
    """With 127.0.0.0/8 allowed, loopback embeds under other spellings are fetched; 10.0.0.1 is not."""
    with Site() as site:
        port = site.port
        site.add(SEED_HOST, "/", page(f'<img src="http://2130706433:{port}/x.png"><img src="http://127.1:{port}/y.png">'
                                      '<img src="http://10.0.0.1/z.png">'))
        c = crawl(site, tmp_path / "c", allow_addresses=["127.0.0.0/8"])
        got = {(h.host, h.target) for h in site.hits()}
    assert {("2130706433", "/x.png"), ("127.1", "/y.png")} <= got
    lines = log_lines(c)
    assert lines[f"http://2130706433:{port}/x.png"].status == 404
    assert lines["http://10.0.0.1/z.png"].status == ADDRESS_REFUSED


def test_a_loopback_seed_is_refused_without_allow_address(tmp_path, capsys):
    """A seed on loopback is no implicit allow: the crawl archives nothing and says how to admit it."""
    with Site() as site:
        site.add("127.0.0.1", "/", page("<p>local</p>"))
        seed = f"http://127.0.0.1:{site.port}/"
        opts = ["--no-politeness", "--no-fsync", "--robots", "ignore", "-q"]
        with netguard.watch(("127.0.0.1", site.port)) as w:
            assert main(["crawl", seed, "-o", str(tmp_path / "c"), *opts]) == 1
            assert site.hits() == [] and w.attempts == []
            err = capsys.readouterr().err
            assert "1 URLs refused by address" in err and "--allow-address" in err
            assert main(["crawl", seed, "-o", str(tmp_path / "d"), *opts, "--allow-address", "127.0.0.1"]) == 0
            assert [h.target for h in site.hits()] == ["/"]
    [session] = (tmp_path / "c" / "crawls").iterdir()
    assert json.loads((session / "config.json").read_text())["allow_addresses"] == []
    [session] = (tmp_path / "d" / "crawls").iterdir()
    assert json.loads((session / "config.json").read_text())["allow_addresses"] == ["127.0.0.1"]


def test_a_bad_allow_address_stops_the_crawl_before_it_starts(tmp_path, capsys):
    with Site() as site:
        c = Crawler(config(site, allow_addresses=["10.0.0.0/33"]), str(tmp_path / "c"))
        with pytest.raises(CrawlError) as e:
            asyncio.run(c.run())
    assert "'10.0.0.0/33'" in str(e.value) and not (tmp_path / "c").exists()
    assert main(["crawl", "http://a.test/", "-o", str(tmp_path / "d"), "--allow-address", "intranet"]) == 2
    assert "--allow-address 'intranet' is not an IP network" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()
