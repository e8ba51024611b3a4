"""The crawler against the test web site (tests/testsite.py): politeness from the server's clock,
robots.txt obeyed, the exact bytes the server sent in the WARC, dedup revisits that resolve, the
calendar trap stopped by the hop limit, the index written as it goes (cdxj-indexer agrees), and
SIGKILL then --resume without fetching anything finished again.

Expected values come from the site's definition (what it serves, what robots.txt forbids, the
Crawl-delay it asks for, how deep the calendar goes), never from an earlier run of the crawler.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import os
import signal
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import pytest

from testsite import DOMAIN, Site, add_standard_host, html, response_bytes
from warchive.capture.crawl_log import read_log
from warchive.capture.crawler import CrawlConfig, Crawler
from warchive.capture.session import read_session
from warchive.index.query import Index
from warchive.replay.load import load_capture
from warchive.index.segment import Segment

MIN_DELAY = 0.15       # the crawl's min delay (delay factor 0: every host waits exactly this)
SLOW = "slow." + DOMAIN
SLOW_DELAY = 0.6       # the Crawl-delay slow.site.test asks for in its robots.txt
MAX_HOPS = 4
TOLERANCE = 0.05       # the server sets Hit.done a moment after the client may have read the reply


def make_site() -> Site:
    site = Site()
    for i in (1, 2):                      # the standard layout (no Crawl-delay: that is host 0's)
        add_standard_host(site, f"h{i:03d}.{DOMAIN}", i, pages=2)
    robots = f"User-agent: *\nDisallow: /private/\nCrawl-delay: {SLOW_DELAY}\n".encode()
    site.add(SLOW, "/robots.txt", response_bytes(200, robots, [("Content-Type", "text/plain")]))
    ct = [("Content-Type", "text/html")]
    site.add(SLOW, "/", response_bytes(200, html("slow", '<a href="/a">a</a><a href="/private/x">p</a>'), ct))
    site.add(SLOW, "/a", response_bytes(200, html("a", '<a href="/b">b</a>'), ct))
    site.add(SLOW, "/b", response_bytes(200, html("b", "<p>end</p>"), ct))
    site.add(SLOW, "/private/x", response_bytes(200, html("x", "<p>no</p>"), ct))
    return site


SEEDS = [f"http://h001.{DOMAIN}/", f"http://h002.{DOMAIN}/", f"http://{SLOW}/"]


def config(site: Site, **kw) -> CrawlConfig:
    base = dict(seeds=SEEDS, delay_factor=0.0, min_delay=MIN_DELAY, max_delay=MIN_DELAY, crawl_delay_cap=5.0,
                max_hops=MAX_HOPS, dedup_min_size=0, fsync=False, concurrency=4, read_timeout=3.0,
                total_timeout=5.0, resolve={"*." + DOMAIN: "127.0.0.1"}, port_map={"80": site.port},
                allow_addresses=["127.0.0.1"], index_every=0.5)
    base.update(kw)
    return CrawlConfig(**base)


def warc_blocks(coll: Path):
    """(type, target URI, block bytes, WARC headers) of every record, read by warcio (not by us)."""
    from warcio.archiveiterator import ArchiveIterator

    out = []
    for p in sorted((coll / "archive").glob("*.warc.gz")):
        with open(p, "rb") as f:
            for rec in ArchiveIterator(f, no_record_parse=True):
                out.append((rec.rec_type, rec.rec_headers.get_header("WARC-Target-URI"),
                            rec.raw_stream.read(), rec.rec_headers))
    return out


def segment_lines(coll: Path):
    lines = []
    for p in sorted((coll / "indexes").glob("*.seg")):
        s = Segment(str(p))
        try:
            lines.extend(bytes(x) for x in s.range(b"", None))
        finally:
            s.close()
    return lines


def cdxj_lines(coll: Path, cdxj_indexer):
    files = sorted((coll / "archive").glob("*.warc.gz"))
    run = cdxj_indexer(files, [])
    assert run.error is None, run.error
    return sorted(ln for ln in run.output.splitlines() if ln)


def path_of(uri: str) -> str:
    return "/" + uri.split("/", 3)[3] if uri.count("/") >= 3 else "/"


def host_of(uri: str) -> str:
    return uri.split("/")[2].split(":")[0]


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    """One crawl of the site, shared by the tests that inspect it (it takes a few seconds)."""
    with make_site() as site:
        coll = tmp_path_factory.mktemp("crawl") / "coll"
        crawler = Crawler(config(site), str(coll))
        stats = asyncio.run(crawler.run())
        yield site, coll, crawler, stats


def test_politeness_from_the_server_clock(crawled):
    site, coll, crawler, stats = crawled
    by_host = defaultdict(list)
    for h in site.log:
        by_host[h.host].append(h)
    assert set(by_host) == {f"h001.{DOMAIN}", f"h002.{DOMAIN}", SLOW}
    for host, hits in by_host.items():
        hits.sort(key=lambda h: h.t)
        need = SLOW_DELAY if host == SLOW else MIN_DELAY
        for a, b in zip(hits, hits[1:]):
            gap = b.t - a.done
            assert gap >= need - TOLERANCE, f"{host}: {a.target} then {b.target} after {gap:.3f} s (< {need} s)"
        # 429 with Retry-After: 1 on /busy: the second request waits at least a second
        busy = [h for h in hits if h.target == "/busy"]
        if host != SLOW:
            assert len(busy) == 2 and busy[1].t - busy[0].done >= 1.0 - TOLERANCE
    # the politeness ledger is in the crawl log
    log = list(read_log(os.path.join(crawler.session_dir, "crawl.log")))
    slow = [e for e in log if e.uri.startswith(f"http://{SLOW}/") and e.status == 200 and e.uri != f"http://{SLOW}/robots.txt"]
    assert slow and all(any(a.startswith("politeness:crawl-delay:0.600s") for a in e.annotations) for e in slow)


def test_robots_obeyed_and_logged(crawled):
    site, coll, crawler, stats = crawled
    assert not [h for h in site.log if h.target.startswith("/private/")]
    log = list(read_log(os.path.join(crawler.session_dir, "crawl.log")))
    blocked = {e.uri for e in log if e.status == -9998}
    assert blocked == {f"http://h001.{DOMAIN}/private/secret.html", f"http://h002.{DOMAIN}/private/secret.html",
                       f"http://{SLOW}/private/x"}
    # robots.txt fetched once per host and archived as an ordinary response record
    assert all(len(site.hits(host=h, path="/robots.txt")) == 1 for h in (f"h001.{DOMAIN}", f"h002.{DOMAIN}", SLOW))
    robots_records = [u for t, u, _, _ in warc_blocks(coll) if t in ("response", "revisit") and u.endswith("/robots.txt")]
    assert len(robots_records) == 3
    # a dns: record once per host
    dns = [u for t, u, _, _ in warc_blocks(coll) if u and u.startswith("dns:")]
    assert sorted(dns) == sorted(f"dns:{h}" for h in (f"h001.{DOMAIN}", f"h002.{DOMAIN}", SLOW))


def test_exact_bytes_in_the_warc(crawled):
    site, coll, crawler, stats = crawled
    sent = defaultdict(set)       # (host, target) -> response bytes the server wrote
    received = defaultdict(set)   # (host, target) -> request bytes the server read
    for h in site.log:
        sent[(h.host, h.target)].add(h.response)
        received[(h.host, h.target)].add(h.request)
    checked = 0
    for rtype, uri, block, _ in warc_blocks(coll):
        if not uri or uri.startswith("dns:"):
            continue
        key = (host_of(uri), path_of(uri))
        if rtype == "response":
            assert block in sent[key], f"{uri}: the WARC block is not what the server sent"
            checked += 1
        elif rtype == "request":
            assert block in received[key], f"{uri}: the WARC request is not what the server read"
        elif rtype == "revisit":   # the head of what was sent
            assert any(s.startswith(block) for s in sent[key])
    # chunked framing, gzip and binaries are among them, as the site sent them
    kinds = {path_of(u) for t, u, _, _ in warc_blocks(coll) if t in ("response", "revisit") and u
             and not u.startswith("dns:")}
    assert {"/chunked.html", "/gzip.html", "/gzip-chunked.html", "/img.png", "/data.bin", "/close.html"} <= kinds
    assert checked >= 30


def test_dedup_revisits_resolve(crawled):
    site, coll, crawler, stats = crawled
    records = warc_blocks(coll)
    revisits = [(u, hd) for t, u, _, hd in records if t == "revisit"]
    assert revisits, "identical payloads (/dup/a, /dup/b, the same pages on two hosts) gave no revisit"
    uris = {u for u, _ in revisits}
    # /dup/b of h001 and h002, /dup/a of the later host: the payload is the same everywhere
    assert sum(1 for u in uris if u.endswith(("/dup/a", "/dup/b"))) >= 3
    ix = Index(str(coll))
    dup = html("duplicate", "<p>the same payload under two URLs</p>")
    n = 0
    for u, hd in revisits:
        if not u.endswith(("/dup/a", "/dup/b")):
            continue
        caps = [c for c in ix.query(u) if c.get("mime") == "warc/revisit"]
        assert caps, f"{u}: its revisit is not in the index written during the crawl"
        with load_capture(caps[0], index=str(coll)) as cap:
            assert cap.status == 200 and cap.read() == dup
            assert cap.resolved_by != "self"
        n += 1
    assert n >= 3
    log = list(read_log(os.path.join(crawler.session_dir, "crawl.log")))
    assert sum("duplicate:digest" in e.annotations for e in log) == len(revisits)


def test_trap_stopped_by_hop_limit(crawled):
    site, coll, crawler, stats = crawled
    for host in (f"h001.{DOMAIN}", f"h002.{DOMAIN}"):
        months = sorted(h.target for h in site.log if h.host == host and h.target.startswith("/calendar/"))
        # /calendar/2024/01 is one hop from the seed (a link on /), month N is N hops
        assert months == [f"/calendar/2024/{m:02d}" for m in range(1, MAX_HOPS + 1)]
    assert crawler.done


def test_index_as_it_goes_agrees_with_cdxj_indexer(crawled, cdxj_indexer):
    site, coll, crawler, stats = crawled
    ours = segment_lines(coll)
    # one segment per rollover and per index_every (0.5 s) while crawling, merged into one at the end
    assert stats.segments >= 2 and len(list((coll / "indexes").glob("*.seg"))) == 1
    assert ours == cdxj_lines(coll, cdxj_indexer)        # sorted, and no line twice


def test_session_and_redirects(crawled):
    site, coll, crawler, stats = crawled
    s = read_session(os.path.join(crawler.session_dir, "session.journal"))
    r = s.lookup(f"http://h001.{DOMAIN}/chain/3")
    assert r is not None and r.status == 302
    # the chain is followed through the frontier, hop R each time
    log = {e.uri: e for e in read_log(os.path.join(crawler.session_dir, "crawl.log"))}
    assert log[f"http://h001.{DOMAIN}/chain/0"].hop_path == "LRRR"
    assert log[f"http://h001.{DOMAIN}/chain/0"].via == f"http://h001.{DOMAIN}/chain/1"
    assert log[f"http://h001.{DOMAIN}/page/1"].status == 200
    # the 429 and its retry in the crawl log (Heritrix's "2t"; ours: the Retry-After honoured)
    busy = [e for e in read_log(os.path.join(crawler.session_dir, "crawl.log")) if e.uri == f"http://h001.{DOMAIN}/busy"]
    assert [e.status for e in busy] == [429, 200]
    assert "retry-after:1s" in busy[0].annotations and "2t" in busy[1].annotations
    assert any(a.startswith("politeness:retry-after:1.000s") for a in busy[1].annotations)
    assert not any(a.endswith("t") and a[:-1].isdigit() for e in log.values() if not e.uri.endswith("/busy")
                   for a in e.annotations)
    # nothing fetched twice except the 429 retry
    twice = [k for k, v in _counts(site).items() if v > 1]
    assert sorted(twice) == sorted((f"h00{i}.{DOMAIN}", "/busy") for i in (1, 2))


def _counts(site):
    c = defaultdict(int)
    for h in site.log:
        c[(h.host, h.target)] += 1
    return c


def _in_flight(session):
    """URLs whose "fetching" entry (the request about to go out) has no outcome after it."""
    out = set()
    for r in session.records():
        open_fetch = False
        for e in r.entries:
            if e.kind == "fetching":
                open_fetch = True
            elif e.kind in ("fetch", "failed", "skipped"):
                open_fetch = False
        if open_fetch:
            out.add(r.url)
    return out


def _fetched_twice(site, in_flight, journal):
    """URLs the server saw more than once that were neither in flight at a kill (`in_flight`) nor
    tried again by design (a ``failed`` entry: 429, 503, a timeout)."""
    retried = {r.url for r in read_session(journal, skip_errors=True).records() if r.failures}
    return {f"http://{h}{p}": n for (h, p), n in _counts(site).items()
            if n > 1 and f"http://{h}{p}" not in in_flight | retried}


def test_conditional_revisit_304(tmp_path):
    """A URL fetched again with the validators of its first capture: a 304 becomes a
    server-not-modified revisit referring to the first capture (replayed as a 304 alone, as
    pywb does: docs/api.md, "How a revisit is resolved", rule 1)."""
    body = html("etag", "<p>validated</p>")
    ok = response_bytes(200, body, [("Content-Type", "text/html"), ("ETag", '"v1"')])
    nm = response_bytes(304, b"", [("ETag", '"v1"')], content_length=False)
    site = Site()
    site.add("e." + DOMAIN, "/robots.txt", response_bytes(404, b""))
    site.add("e." + DOMAIN, "/", lambda req: __import__("testsite").Reply(
        [nm if any(k.lower() == "if-none-match" and v == '"v1"' for k, v in req.headers) else ok]))
    with site:
        coll = tmp_path / "c"
        cfg = config(site, seeds=[f"http://e.{DOMAIN}/"], revisit_after=0.05, revisits=1, min_delay=0.05,
                     max_delay=0.05)
        crawler = Crawler(cfg, str(coll))
        asyncio.run(crawler.run())
        hits = site.hits(path="/")
    assert len(hits) == 2 and b'If-None-Match: "v1"' in hits[1].request
    recs = warc_blocks(coll)
    revs = [hd for t, u, _, hd in recs if t == "revisit"]
    first = [hd for t, u, _, hd in recs if t == "response" and u == f"http://e.{DOMAIN}/"]
    assert len(revs) == 1 and revs[0].get_header("WARC-Profile").endswith("server-not-modified")
    assert len(first) == 1
    assert revs[0].get_header("WARC-Refers-To") == first[0].get_header("WARC-Record-ID")
    assert revs[0].get_header("WARC-Refers-To-Date") == first[0].get_header("WARC-Date")
    caps = [c for c in Index(str(coll)).query(f"http://e.{DOMAIN}/") if c.get("mime") == "warc/revisit"]
    with load_capture(caps[0], index=str(coll)) as cap:
        assert cap.status == 304


def test_screenshots_not_in_this_build(tmp_path, monkeypatch, capsys):
    """A build without warchive.capture.browser refuses --screenshots before touching anything."""
    import warchive.capture.crawler as crawler_mod
    from warchive.cli import main

    monkeypatch.setattr(crawler_mod, "screenshots_available", lambda: False)
    assert main(["crawl", "http://x.test/", "-o", str(tmp_path / "c"), "--screenshots"]) == 2
    assert "not available in this build" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


# ------------------------------------------------------------------------------------------ kill and resume


def test_sigkill_then_resume(tmp_path, cdxj_indexer):
    """Kill the crawl (SIGKILL) mid-way, resume it: nothing finished is fetched again, nothing is
    requested twice but what was in flight at the kill (and the retries of 429, 503 and timeouts),
    it completes, the recovered WARCs index as cdxj-indexer indexes them and the revisits resolve."""
    coll = tmp_path / "coll"
    with make_site() as site:
        args = [sys.executable, "-m", "warchive", "crawl", *SEEDS, "-o", str(coll), "--delay-factor", "0",
                "--min-delay", "0.1", "--max-delay", "0.1", "--max-hops", str(MAX_HOPS), "--dedup-min-size", "0",
                "--resolve", f"*.{DOMAIN}=127.0.0.1", "--port-map", f"80={site.port}", "--allow-address",
                "127.0.0.1", "--no-fsync", "--index-every", "0.3", "-q", "--timeout", "3"]
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.time() + 30
        while len(site.log) < 40 and time.time() < deadline and p.poll() is None:
            time.sleep(0.02)
        assert p.poll() is None, p.stderr.read().decode() if p.stderr else ""
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        killed_at = time.time()
        time.sleep(0.2)   # a request the server was still answering ends
        session_dir = next((coll / "crawls").iterdir())
        first = read_session(str(session_dir / "session.journal"), skip_errors=True)
        finished = {r.url for r in first.records() if r.state in ("fetched", "skipped")}
        assert finished and list((coll / "archive").glob("*.open")), "the kill came too late to test anything"
        n_before = len(site.log)

        r = subprocess.run([sys.executable, "-m", "warchive", "crawl", "--resume", str(coll), "-q"],
                           capture_output=True, timeout=120)
        assert r.returncode == 0, r.stderr.decode()
        after = site.log[n_before:]
        again = [f"http://{h.host}{h.target}" for h in after if f"http://{h.host}{h.target}" in finished]
        assert not again, f"fetched again after resume: {again}"
        assert all(h.t > killed_at for h in after)
        assert _fetched_twice(site, _in_flight(first), str(session_dir / "session.journal")) == {}
        # the crawl is complete: everything a single crawl fetches was fetched once (and /busy twice)
        counts = _counts(site)
        for host in (f"h001.{DOMAIN}", f"h002.{DOMAIN}"):
            for path in ("/", "/page/1", "/page/2", "/chain/0", "/dup/a", "/dup/b", "/img.png", "/close.html",
                         "/calendar/2024/04"):
                assert counts[(host, path)] >= 1, (host, path)
        assert counts[(SLOW, "/b")] == 1
    assert not list((coll / "archive").glob("*.open"))
    ours = sorted(set(segment_lines(coll)))
    assert ours == cdxj_lines(coll, cdxj_indexer)
    ix = Index(str(coll))
    revisits = [c for c in ix.query(DOMAIN, matchType="domain") if c.get("mime") == "warc/revisit"]
    assert revisits
    for c in revisits:
        with load_capture(c, index=str(coll)) as cap:
            assert cap.status in (200, 404) and cap.read() is not None


def test_retry_failed(tmp_path):
    """A URL whose only attempt failed (the server closed the connection without a byte) is left
    alone by a plain --resume and fetched again by --resume --retry-failed."""
    from testsite import Reply

    ok = response_bytes(200, html("flaky", "<p>second time lucky</p>"), [("Content-Type", "text/html")])
    site = Site()
    host = "f." + DOMAIN
    site.add(host, "/robots.txt", response_bytes(404, b""))
    site.add(host, "/", response_bytes(200, html("f", '<a href="/flaky">flaky</a>'), [("Content-Type", "text/html")]))
    site.add(host, "/flaky", lambda req: Reply([], close=True) if req.count == 0 else Reply([ok]))
    coll = tmp_path / "c"
    with site:
        # (no keep-alive: on a reused connection, a close without a byte is taken for a stale
        # connection and the request sent once more on a new one, as HTTP clients do)
        asyncio.run(Crawler(config(site, seeds=[f"http://{host}/"], max_retries=0, keep_alive=False), str(coll)).run())
        assert len(site.hits(path="/flaky")) == 1
        session = next((coll / "crawls").iterdir())
        s = read_session(str(session / "session.journal"))
        assert [r.url for r in s.failed()] == [f"http://{host}/flaky"]
        asyncio.run(Crawler(None, str(coll), session_dir=str(session), resume=True).run())
        assert len(site.hits(path="/flaky")) == 1          # a failure is final without --retry-failed
        asyncio.run(Crawler(None, str(coll), session_dir=str(session), resume=True, retry_failed=True).run())
        flaky = site.hits(path="/flaky")
        assert len(flaky) == 2 and flaky[1].response == ok
    s = read_session(str(session / "session.journal"))
    assert not s.failed() and s.lookup(f"http://{host}/flaky").status == 200
    assert len(site.hits(path="/")) == 1


def test_sigterm_stops_cleanly_and_resume_completes(tmp_path):
    coll = tmp_path / "coll"
    with make_site() as site:
        args = [sys.executable, "-m", "warchive", "crawl", SEEDS[0], "-o", str(coll), "--delay-factor", "0",
                "--min-delay", "0.1", "--max-delay", "0.1", "--max-hops", "2", "--resolve",
                f"*.{DOMAIN}=127.0.0.1", "--port-map", f"80={site.port}", "--allow-address", "127.0.0.1",
                "--no-fsync"]
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.time() + 30
        while len(site.log) < 8 and time.time() < deadline and p.poll() is None:
            time.sleep(0.02)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=30)
        assert p.returncode == 0, err.decode()
        assert b"stopped with" in err and b"--resume" in err
        assert not list((coll / "archive").glob("*.open"))     # closed, not cut
        n = len(site.log)
        r = subprocess.run([sys.executable, "-m", "warchive", "crawl", "--resume", str(coll)],
                           capture_output=True, timeout=60)
        assert r.returncode == 0 and b"crawl complete" in r.stderr, r.stderr.decode()
        assert len(site.log) > n
        counts = _counts(site)
        host = f"h001.{DOMAIN}"
        assert all(v == 1 for (h, t), v in counts.items() if t != "/busy"), counts
        assert counts[(host, "/page/2")] == 1 and counts[(host, "/busy")] == 2


def test_progress_display():
    import io

    from warchive.cli.progress import Progress

    class F:
        def __len__(self):
            return 7

        inflight = 2

        def depths(self, n):
            return [("test,site,h001)", 5), ("test,site,h002)", 2)][:n]

        def host_count(self):
            return 2

    class C:
        stats = __import__("warchive.capture.crawler", fromlist=["CrawlStats"]).CrawlStats(fetched=3, failed=1,
                                                                                          bytes=2_000_000)
        frontier = F()

    buf = io.StringIO()
    p = Progress(buf, interval=1.0)
    p(C())
    p(C())                     # within the second: not drawn again
    text = buf.getvalue()
    assert text.count("queued") == 1 and "fetched        3" in text and "h001.site.test 5" in text and "test,site" not in text
    assert "2.0 MB" in text
    p._last = 0
    p(C())
    assert "\x1b[2F\x1b[J" in buf.getvalue()   # the previous two lines are erased before redrawing


def test_robots_unreachable_is_a_failure(tmp_path):
    """robots.txt answering 503 (RFC 9309: disallow everything) is no verdict on the URL: the crawl
    log says -61, the session counts it failed, and nothing but robots.txt was requested."""
    site = Site()
    host = "down." + DOMAIN
    site.add(host, "/robots.txt", response_bytes(503, b"down\n"))
    site.add(host, "/", response_bytes(200, html("x", "<p>x</p>"), [("Content-Type", "text/html")]))
    coll = tmp_path / "c"
    with site:
        c = Crawler(config(site, seeds=[f"http://{host}/"]), str(coll))
        asyncio.run(c.run())
        assert [h.target for h in site.log] == ["/robots.txt"]
        log = {e.uri: e for e in read_log(os.path.join(c.session_dir, "crawl.log"))}
        assert log[f"http://{host}/"].status == -61 and log[f"http://{host}/robots.txt"].status == 503
        s = read_session(os.path.join(c.session_dir, "session.journal"))
        assert [r.url for r in s.failed()] == [f"http://{host}/"]
        # robots.txt is back: --retry-failed asks for it again (an unreachable answer is not kept)
        site.add(host, "/robots.txt", response_bytes(200, b"User-agent: *\nDisallow:\n"))
        asyncio.run(Crawler(None, str(coll), session_dir=c.session_dir, resume=True, retry_failed=True).run())
        assert [h.target for h in site.log] == ["/robots.txt", "/robots.txt", "/"]
    assert not read_session(os.path.join(c.session_dir, "session.journal")).failed()


def test_page_hooks(tmp_path):
    """The hook --screenshots uses: called once per archived HTML page with its response record; a
    hook that fails is recorded in the journal and the crawl goes on."""
    site = Site()
    host = "p." + DOMAIN
    site.add(host, "/robots.txt", response_bytes(404, b""))
    site.add(host, "/", response_bytes(200, html("p", '<a href="/b">b</a><img src="/i.png">'),
                                       [("Content-Type", "text/html")]))
    site.add(host, "/b", response_bytes(200, html("b", "<p>b</p>"), [("Content-Type", "text/html")]))
    site.add(host, "/i.png", response_bytes(200, b"\x89PNG...", [("Content-Type", "image/png")]))
    seen = []

    async def hook(crawler, url, result, written):
        seen.append((url, written.type, written.target_uri))
        crawler.writer.write_resource("urn:test:" + url, b"x", "text/plain")
        if url.endswith("/b"):
            raise RuntimeError("boom")

    coll = tmp_path / "c"
    with site:
        c = Crawler(config(site, seeds=[f"http://{host}/"]), str(coll))
        c.page_hooks.append(hook)
        asyncio.run(c.run())
    assert sorted(seen) == [(f"http://{host}/", "response", f"http://{host}/"),
                            (f"http://{host}/b", "response", f"http://{host}/b")]
    assert len(Index(str(coll)).query(f"urn:test:http://{host}/")) == 1
    s = read_session(os.path.join(c.session_dir, "session.journal"))
    kinds = [f["kind"] for r in s.records() for f in r.fields()]
    assert kinds.count("page-hook-failed") == 1


def test_resume_skips_what_the_session_says_is_finished(tmp_path):
    """A URL back in the frontier after its finish was lost (its "F" line never written) is not
    fetched again: the session journal says it finished."""
    from warchive.capture.frontier import Frontier
    from warchive.capture.politeness import Politeness

    site = Site()
    host = "r." + DOMAIN
    site.add(host, "/robots.txt", response_bytes(404, b""))
    site.add(host, "/", response_bytes(200, html("r", '<a href="/b">b</a>'), [("Content-Type", "text/html")]))
    site.add(host, "/b", response_bytes(200, html("b", "<p>b</p>"), [("Content-Type", "text/html")]))
    coll = tmp_path / "c"
    with site:
        c = Crawler(config(site, seeds=[f"http://{host}/"]), str(coll))
        asyncio.run(c.run())
        n = len(site.log)
        assert n == 3
        f = Frontier.open(os.path.join(c.session_dir, "frontier"), Politeness())
        f.add(f"http://{host}/b", hops="L", via=f"http://{host}/")
        f.add(f"http://{host}/", hops="")
        f.checkpoint()
        f.close()
        again = Crawler(None, str(coll), session_dir=c.session_dir, resume=True)
        stats = asyncio.run(again.run())
        assert len(site.log) == n and stats.skipped == 2 and stats.fetched == 0


def _star_site(host: str) -> Site:
    """/ links to /p1../p5, each /pN to /qN (which link nowhere)."""
    site = Site()
    ct = [("Content-Type", "text/html")]
    site.add(host, "/robots.txt", response_bytes(404, b""))
    site.add(host, "/", response_bytes(200, html("r", "".join(f'<a href="/p{i}">p</a>' for i in range(1, 6))), ct))
    for i in range(1, 6):
        site.add(host, f"/p{i}", response_bytes(200, html("p", f'<a href="/q{i}">q</a>'), ct))
        site.add(host, f"/q{i}", response_bytes(200, html("q", "<p>q</p>"), ct))
    return site


def _pages(site: Site) -> list:
    return sorted({h.target for h in site.log if h.target != "/robots.txt"})


def test_resume_keeps_the_session_limits(tmp_path, capsys):
    """--max-urls counts what the whole session queued: a crawl stopped after its first page, then
    resumed, queues no more than the first run's limit left; --max-urls given with --resume
    replaces the session's, which keeps it (config.json) for the next resume."""
    from warchive.cli import main

    host = "m." + DOMAIN
    site = _star_site(host)
    coll = tmp_path / "c"
    with site:
        c = Crawler(config(site, seeds=[f"http://{host}/"], max_urls=4), str(coll))

        async def stop_after_first(crawler, url, r, w):
            crawler.stop()
        c.page_hooks.append(stop_after_first)
        asyncio.run(c.run())
        assert _pages(site) == ["/"]     # queued: /, /p1, /p2, /p3 (the limit: 4 URLs)
        asyncio.run(Crawler(None, str(coll), session_dir=c.session_dir, resume=True).run())
        assert _pages(site) == ["/", "/p1", "/p2", "/p3"]   # /qN found, but the session had queued 4

        site.clear_log()
        c = Crawler(config(site, seeds=[f"http://{host}/"], max_urls=4), str(tmp_path / "d"))
        c.page_hooks.append(stop_after_first)
        asyncio.run(c.run())
        assert main(["crawl", "--resume", c.session_dir, "-q", "--max-urls", "6"]) == 0
        # /p1../p3 queued by the first run, then the first two /qN their pages link to
        assert len(_pages(site)) == 6 and {"/", "/p1", "/p2", "/p3"} <= set(_pages(site))
        with open(os.path.join(c.session_dir, "config.json")) as f:
            assert json.load(f)["max_urls"] == 6
    capsys.readouterr()


@pytest.mark.slow
def test_killed_three_times(tmp_path, cdxj_indexer):
    """Five hosts, SIGKILL three times at different points, resumed each time: nothing finished
    before a kill is fetched after it, the last run completes, the index agrees with cdxj-indexer."""
    hosts = [f"h{i:03d}.{DOMAIN}" for i in range(1, 6)]
    site = Site()
    for i, h in enumerate(hosts, 1):
        add_standard_host(site, h, i, pages=4)
    coll = tmp_path / "coll"
    with site:
        base = [sys.executable, "-m", "warchive", "crawl"]
        first = [*(f"http://{h}/" for h in hosts), "-o", str(coll), "--delay-factor", "0", "--min-delay", "0.05",
                 "--max-delay", "0.05", "--max-hops", "6", "--dedup-min-size", "0", "--resolve",
                 f"*.{DOMAIN}=127.0.0.1", "--port-map", f"80={site.port}", "--allow-address", "127.0.0.1",
                 "--no-fsync", "--index-every", "0.2", "-q", "--timeout", "3", "-c", "3"]
        args = first
        in_flight = set()
        for threshold in (30, 70, 110):
            p = subprocess.Popen(base + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            deadline = time.time() + 60
            while len(site.log) < threshold and time.time() < deadline and p.poll() is None:
                time.sleep(0.01)
            assert p.poll() is None, "the crawl ended before the kill"
            os.kill(p.pid, signal.SIGKILL)
            p.wait()
            time.sleep(0.2)
            session = next((coll / "crawls").iterdir())
            s = read_session(str(session / "session.journal"), skip_errors=True)
            finished = {r.url for r in s.records() if r.state in ("fetched", "skipped") and r.status not in (429, 503)}
            in_flight |= _in_flight(s)
            n = len(site.log)
            args = ["--resume", str(coll), "-q"]
            r = subprocess.run(base + args, capture_output=True, timeout=180) if threshold == 110 else None
            if r is None:
                # the next round's process resumes; check after it what it fetched
                p2 = subprocess.Popen(base + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                deadline = time.time() + 60
                while len(site.log) < threshold + 15 and time.time() < deadline and p2.poll() is None:
                    time.sleep(0.01)
                if p2.poll() is None:
                    os.kill(p2.pid, signal.SIGKILL)
                p2.wait()
                in_flight |= _in_flight(read_session(str(session / "session.journal"), skip_errors=True))
            else:
                assert r.returncode == 0, r.stderr.decode()
            again = [f"http://{h.host}{h.target}" for h in site.log[n:] if f"http://{h.host}{h.target}" in finished]
            assert not again, f"fetched again after resume: {again}"
        r = subprocess.run(base + ["--resume", str(coll)], capture_output=True, timeout=180)
        assert r.returncode == 0 and b"crawl complete" in r.stderr, r.stderr.decode()
        assert _fetched_twice(site, in_flight, str(session / "session.journal")) == {}
        counts = _counts(site)
        for h in hosts:
            for path in ("/", "/page/4", "/chain/0", "/dup/b", "/calendar/2024/06", "/close.html"):
                assert counts[(h, path)] >= 1, (h, path)
    assert not list((coll / "archive").glob("*.open"))
    assert sorted(set(segment_lines(coll))) == cdxj_lines(coll, cdxj_indexer)
    ix = Index(str(coll))
    for c in ix.query(DOMAIN, matchType="domain"):
        if c.get("mime") == "warc/revisit":
            with load_capture(c, index=str(coll)) as cap:
                assert cap.status is not None and cap.read() is not None


def test_size_limit_truncates(tmp_path):
    """A body over --max-size is cut there: the record says WARC-Truncated: length, the crawl log
    lenTrunc, and the bytes kept are the first bytes the server sent."""
    site = Site()
    host = "big." + DOMAIN
    body = bytes(range(256)) * 4096
    sent = response_bytes(200, body, [("Content-Type", "application/octet-stream")])
    site.add(host, "/robots.txt", response_bytes(404, b""))
    site.add(host, "/", response_bytes(200, html("big", '<a href="/big.bin">big</a>'), [("Content-Type", "text/html")]))
    site.add(host, "/big.bin", sent)
    coll = tmp_path / "c"
    with site:
        c = Crawler(config(site, seeds=[f"http://{host}/"], max_size=100_000), str(coll))
        asyncio.run(c.run())
    rec = [(b, hd) for t, u, b, hd in warc_blocks(coll) if t == "response" and u.endswith("/big.bin")]
    assert len(rec) == 1
    block, hd = rec[0]
    assert hd.get_header("WARC-Truncated") == "length"
    head = sent.index(b"\r\n\r\n") + 4
    assert sent.startswith(block) and len(block) - head >= 100_000 and len(block) < len(sent)
    log = {e.uri: e for e in read_log(os.path.join(c.session_dir, "crawl.log"))}
    assert "lenTrunc" in log[f"http://{host}/big.bin"].annotations


def test_politeness_holds_across_a_kill(tmp_path):
    """The first fetch of a host after --resume waits the host's delay counted from its last fetch
    before the kill (the session journal's times), not from the restart."""
    delay = 1.5
    site = Site()
    host = "k." + DOMAIN
    site.add(host, "/robots.txt", response_bytes(404, b""))
    ct = [("Content-Type", "text/html")]
    site.add(host, "/", response_bytes(200, html("k", "".join(f'<a href="/{i}">{i}</a>' for i in range(4))), ct))
    for i in range(4):
        site.add(host, f"/{i}", response_bytes(200, html(str(i), "<p>x</p>"), ct))
    coll = tmp_path / "c"
    with site:
        args = [sys.executable, "-m", "warchive", "crawl", f"http://{host}/", "-o", str(coll), "--delay-factor", "0",
                "--min-delay", str(delay), "--max-delay", str(delay), "--resolve", f"*.{DOMAIN}=127.0.0.1",
                "--port-map", f"80={site.port}", "--allow-address", "127.0.0.1", "--no-fsync", "-q"]
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.time() + 30
        while len(site.log) < 3 and time.time() < deadline:
            time.sleep(0.005)
        while not site.log[-1].done and time.time() < deadline:
            time.sleep(0.005)
        time.sleep(0.1)   # the crawler has the reply and records it
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        n = len(site.log)
        r = subprocess.run([sys.executable, "-m", "warchive", "crawl", "--resume", str(coll), "-q"],
                           capture_output=True, timeout=60)
        assert r.returncode == 0, r.stderr.decode()
        assert len(site.log) > n
        gap = site.log[n].t - site.log[n - 1].done
        assert gap >= delay - TOLERANCE, f"first fetch after the restart {gap:.3f} s after the last one"


# ------------------------------------------------------------------------------------------ what a kill leaves behind
# (tests/unit/test_resume_once.py kills crawls at random moments; these set up each state a kill can
# leave, one at a time, without a kill)


def _kill_site_crawl(tmp_path, site, stop_after=None, **kw):
    """An in-process crawl of crawlkill's site; with `stop_after`, stopped cleanly after that many pages."""
    import crawlkill

    c = Crawler(config(site, seeds=crawlkill.seeds(), max_hops=60, **kw), str(tmp_path / "coll"))
    if stop_after is not None:
        pages = []

        async def hook(crawler, url, r, w):
            pages.append(url)
            if len(pages) >= stop_after:
                crawler.stop()
        c.page_hooks.append(hook)
    asyncio.run(c.run())
    return c


def test_resume_with_the_seen_set_behind_the_frontier(tmp_path):
    """The seen set reaches disk every 2 s, the frontier's log at every call: a kill can leave URLs
    queued that the seen set does not know (here: none at all). Resumed, the crawl queues none of
    them a second time when another page links to them: every URL is requested once (server log)."""
    import shutil
    import crawlkill

    site, expected = crawlkill.kill_site()
    with site:
        c = _kill_site_crawl(tmp_path, site, stop_after=6)
        assert len(c.frontier) > 10, "stopped too late to test anything"
        shutil.rmtree(os.path.join(c.session_dir, "seen"))
        asyncio.run(Crawler(None, str(tmp_path / "coll"), session_dir=c.session_dir, resume=True).run())
        n = crawlkill.counts(site)
    assert set(n) == expected
    assert {k: v for k, v in n.items() if v > 1} == {}


def test_robots_archived_as_a_revisit_is_restored(tmp_path):
    """Two hosts serve the same robots.txt: the second is archived as a revisit. The answers a resume
    restores are both the robots.txt served (its original's body), not an empty one (allow all)."""
    import crawlkill
    from warchive.capture.resume import restore_robots
    from warchive.capture.robots_cache import RobotsCache

    site, _ = crawlkill.kill_site()
    with site:
        c = _kill_site_crawl(tmp_path, site)
    types = {u: t for t, u, _, _ in warc_blocks(tmp_path / "coll") if u and u.endswith("/robots.txt") and t != "request"}
    assert sorted(types.values()) == ["response", "revisit"]
    cache = RobotsCache(c.config.user_agent)
    restore_robots(cache, read_session(os.path.join(c.session_dir, "session.journal")), c.archive_dir)
    for host in crawlkill.HOSTS:
        assert not cache.needs_fetch(f"http://{host}/p/1")
        assert cache.cached_decision(f"http://{host}/p/1").allowed
        assert not cache.cached_decision(f"http://{host}/private/1").allowed


def test_digests_recovered_from_the_journal_and_the_warcs(tmp_path):
    """A digest index that lost what it had not flushed gets every original back: from the journal
    and the WARC records it names, or from the WARC files a resume cut (read whole). The originals
    are those warcio reads: each 2xx response's payload digest, URI and record id."""
    from warcio.archiveiterator import ArchiveIterator
    import crawlkill
    from warchive.capture.dedup import DigestIndex
    from warchive.capture.resume import recover_digests

    site, _ = crawlkill.kill_site()
    with site:
        c = _kill_site_crawl(tmp_path, site)
    want = {}
    files = sorted(str(p) for p in (tmp_path / "coll" / "archive").glob("*.warc.gz"))
    for p in files:
        with open(p, "rb") as f:
            for rec in ArchiveIterator(f):
                h = rec.rec_headers
                if rec.rec_type == "response" and rec.http_headers is not None and \
                        rec.http_headers.get_statuscode().startswith("2"):
                    want[h.get_header("WARC-Payload-Digest")] = (h.get_header("WARC-Target-URI"),
                                                                  h.get_header("WARC-Record-ID"))
    assert len(want) > 10
    session = read_session(os.path.join(c.session_dir, "session.journal"))
    for i, recovered in enumerate(([], files)):
        ix = DigestIndex(str(tmp_path / f"ix{i}"))
        assert recover_digests(ix, session, c.archive_dir, recovered) == len(want)
        got = {o.digest: (o.uri, o.record_id) for o in ix.items()}
        assert got == want


def test_recover_warcs_takes_a_file_its_warcinfo_names(tmp_path):
    """A run killed after it opened a WARC file but before the journal named a record in it: the
    resume knows the file by its warcinfo's description and cuts it; a file another session's
    warcinfo names is left alone (that crawl may be writing it)."""
    from warchive.capture.resume import recover_warcs
    from warchive.capture.session import SessionDB
    from warchive.warc.writer import WarcWriter

    archive = tmp_path / "archive"
    archive.mkdir()
    ours = WarcWriter(str(archive), "A", warcinfo={"description": "warchive crawl session s1"}, fsync=False)
    ours.write_resource("urn:x:1", b"one", "text/plain")
    theirs = WarcWriter(str(archive), "B", warcinfo={"description": "warchive crawl session s10"}, fsync=False)
    theirs.write_resource("urn:x:2", b"two", "text/plain")
    # killed between creating a file and writing its warcinfo: empty, named after the run started
    (archive / "A-20261129225001124-00001-h.warc.gz.open").write_bytes(b"")
    (archive / "A-20261129225001122-00002-h.warc.gz.open").write_bytes(b"")   # before: not the run's
    journal = str(tmp_path / "session.journal")
    with SessionDB(journal) as db:
        db.start(config={}, t="2026-11-29T22:50:01.123456Z")
    s = read_session(journal)
    assert recover_warcs(str(archive), s) == []
    opened = ours.current_files[0]
    assert recover_warcs(str(archive), s, "warchive crawl session s1") == [opened[:-len(".open")]]
    left = sorted(p.name for p in archive.iterdir())
    assert left == sorted([os.path.basename(opened)[:-len(".open")], "A-20261129225001122-00002-h.warc.gz.open",
                           os.path.basename(theirs.current_files[0])])
