"""The fetcher and link extraction: fetches/s and CPU per fetch on a loopback site of 100 hosts,
and link extraction MB/s on corpus HTML beside html.parser.

    python -m pytest bench/test_fetch_bench.py -s
    FETCH_BENCH_N=5000 FETCH_BENCH_CONCURRENCY=16,64,256 python -m pytest bench/test_fetch_bench.py -s
    WARCHIVE_CORPUS=corpus python -m pytest bench/test_fetch_bench.py -s -k links

The site (tests/testsite.py) runs in a child process, so the CPU time measured in this process
is the fetcher's alone. There is no politeness: the fetcher only (the crawler's own benchmark
adds the frontier). Each run asserts what it fetched (every status 200, every response byte for
byte what the site sends for that URL) and what the extractor found (the same a/@href, img/@src,
link/@href, script/@src links as html.parser); times are printed, never asserted.
"""

from __future__ import annotations

import asyncio
import html.parser
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Tuple
from urllib.parse import urljoin

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import testsite  # noqa: E402
from warchive.capture.fetch import Fetcher  # noqa: E402
from warchive.capture.resolve import StaticResolver  # noqa: E402
from warchive.capture.links import extract_html  # noqa: E402

N = int(os.environ.get("FETCH_BENCH_N", "3000"))
CONCURRENCY = [int(x) for x in os.environ.get("FETCH_BENCH_CONCURRENCY", "8,32,128").split(",")]
HOSTS = 100
PATHS = ["/", "/page/1", "/page/2", "/chunked.html", "/gzip.html", "/img.png", "/data.bin", "/dup/a"]
FIGURES: Dict[str, str] = {}


@pytest.fixture(scope="module")
def site_process():
    """``python tests/testsite.py 100`` in a child process; yields its port."""
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "testsite.py"), str(HOSTS)],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    line = proc.stdout.readline()
    port = int(line.split("127.0.0.1:")[1].split()[0])
    yield port
    proc.terminate()
    proc.wait(10)


def expected_bytes() -> Dict[Tuple[str, str], bytes]:
    """What the site sends for each (host, path): the same Site built here, never started."""
    site = testsite.Site.default(HOSTS)
    return {(h, p): site.routes[h][p](None).data for h in site.hosts for p in PATHS}


async def fetch_all(port: int, urls: List[str], concurrency: int, keep_alive: bool = False):
    sem = asyncio.Semaphore(concurrency)
    out = []
    async with Fetcher(resolver=StaticResolver({"*.site.test": "127.0.0.1"}), port_map={80: port},
                       keep_alive=keep_alive, allow_addresses=["127.0.0.1"]) as f:
        async def one(u):
            async with sem:
                out.append(await f.fetch(u))
        await asyncio.gather(*(one(u) for u in urls))
    return out


@pytest.mark.parametrize("keep_alive", [False, True], ids=["close", "keep-alive"])
@pytest.mark.parametrize("concurrency", CONCURRENCY)
def test_fetches_per_second(site_process, concurrency, keep_alive):
    hosts = [testsite.host_name(i) for i in range(HOSTS)]
    urls = [f"http://{hosts[i % HOSTS]}{PATHS[(i // HOSTS) % len(PATHS)]}" for i in range(N)]
    want = expected_bytes()
    c0, t0 = time.process_time(), time.perf_counter()
    results = asyncio.run(fetch_all(site_process, urls, concurrency, keep_alive))
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    assert len(results) == N
    for r in results:
        host, path = r.url.split("/", 3)[2], "/" + r.url.split("/", 3)[3]
        assert r.status == 200, (r.url, r.status, r.error)
        assert r.response == want[(host, path)], r.url
    mb = sum(len(r.response) for r in results) / 1e6
    key = f"fetch c={concurrency} {'keep-alive' if keep_alive else 'close'}"
    FIGURES[key] = (f"{key}: {N} fetches on {HOSTS} hosts: {N / wall:,.0f} fetches/s, "
                                         f"{cpu / N * 1e6:,.0f} µs CPU per fetch, {mb / wall:.1f} MB/s received")
    print("\n" + FIGURES[key])


# --------------------------------------------------------------------------- link extraction

def corpus_html(limit_mb: float = 60.0) -> List[Tuple[str, bytes]]:
    import warchive.warc
    from warchive.warc.content import content_stream
    corpus = os.environ.get("WARCHIVE_CORPUS")
    if corpus:
        p = Path(corpus)
        paths = sorted(p.glob("*.warc.gz")) if p.is_dir() else [p]
    else:
        paths = [p for p in sorted((ROOT / "tests" / "data" / "wget").glob("*.warc.gz")) if "recrawl" not in p.name]
    docs, size = [], 0
    for path in paths:
        with warchive.warc.open(path, types={"response"}) as recs:
            for rec in recs:
                if rec.http and "html" in (rec.http.get("content-type") or ""):
                    data = content_stream(rec).read()
                    docs.append((rec.target_uri, data))
                    size += len(data)
                    if size > limit_mb * 1e6:
                        return docs
    return docs


class RefParser(html.parser.HTMLParser):
    TAGS = {("a", "href"), ("img", "src"), ("script", "src"), ("link", "href")}

    def __init__(self, base):
        super().__init__(convert_charrefs=True)
        self.base, self.found = base, set()

    def handle_starttag(self, tag, attrs):
        for k, v in attrs:
            if (tag, k) in self.TAGS and v:
                v = v.strip()
                if v and not v.startswith("#") and v.split(":", 1)[0].lower() not in ("javascript", "mailto", "data"):
                    u = urljoin(self.base, v).split("#", 1)[0]
                    if u.startswith(("http:", "https:")):
                        self.found.add(u)
                break


@pytest.fixture(scope="module")
def html_docs():
    docs = corpus_html()
    if not docs:
        pytest.skip("no HTML in the corpus")
    return docs


def test_link_extraction_mb_per_s(html_docs):
    mb = sum(len(d) for _, d in html_docs) / 1e6
    c0 = time.process_time()
    ours = [extract_html(d, u) for u, d in html_docs]
    t_ours = time.process_time() - c0
    c0 = time.process_time()
    refs = []
    for u, d in html_docs:
        p = RefParser(u)
        p.feed(d.decode("utf-8", "replace"))
        p.close()
        refs.append(p.found)
    t_ref = time.process_time() - c0
    same = 0
    for links, ref in zip(ours, refs):
        got = {link.url for link in links if link.context in ("a/@href", "img/@src", "script/@src", "link/@href")}
        same += got == ref
    assert same >= 0.99 * len(html_docs), f"only {same} of {len(html_docs)} pages agree with html.parser"
    n_links = sum(len(x) for x in ours)
    FIGURES["links"] = (f"{len(html_docs)} pages, {mb:.1f} MB: warchive.capture.links {mb / t_ours:.1f} MB/s "
                        f"({n_links:,} links), html.parser (tokenizing only) {mb / t_ref:.1f} MB/s; "
                        f"{same} pages with the same links")
    print("\n" + FIGURES["links"])
