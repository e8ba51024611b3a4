"""The whole crawler: fetches/s and CPU per fetch on a loopback site of 100 hosts, politeness off.

    python -m pytest bench/test_crawl_bench.py -s        (with keep-alive, the default, and without)
    CRAWL_BENCH_CONCURRENCY=8,32,128 CRAWL_BENCH_HOPS=4 python -m pytest bench/test_crawl_bench.py -s

tests/testsite.py serves 100 hosts from a child process, so the CPU time measured here is the
crawler's own: frontier, robots (one robots.txt per host, archived), scope and seen set, the
fetcher, dedup, WARC writing (gzip), session journal, crawl log, link extraction and the index
segments written as it goes. ``--no-politeness`` (no delays, no per-host limit), the calendar
trap cut at CRAWL_BENCH_HOPS hops, ``/busy`` (a 429 with Retry-After: 1) excluded so that one
second of back-off does not count as crawling. Each run asserts what it archived: every
response record is byte for byte what the site sends for that URL (warcio reads the WARCs),
and the index segments hold a line for each. Times are printed, never asserted.

Memory per 1 M queued URLs (frontier and seen set) is bench/test_frontier_bench.py's figure.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import testsite  # noqa: E402
from warchive.capture.crawler import CrawlConfig, Crawler  # noqa: E402

HOSTS = 100
CONCURRENCY = [int(x) for x in os.environ.get("CRAWL_BENCH_CONCURRENCY", "8,32").split(",")]
HOPS = int(os.environ.get("CRAWL_BENCH_HOPS", "4"))
FIGURES: Dict[str, str] = {}


@pytest.fixture(scope="module")
def site_process():
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "testsite.py"), str(HOSTS)],
                            stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    port = int(line.split("127.0.0.1:")[1].split()[0])
    yield port
    proc.terminate()
    proc.wait(10)


def expected() -> Dict[Tuple[str, str], bytes]:
    """What the site sends for each fixed (host, path): the same Site built here, never started."""
    site = testsite.Site.default(HOSTS)
    out = {}
    for h in site.hosts:
        for p, fn in site.routes[h].items():
            if p not in ("/busy", "/hang", "/slow"):
                out[(h, p)] = fn(None).data
    return out


@pytest.mark.parametrize("keep_alive", [True, False], ids=["keep-alive", "close"])
@pytest.mark.parametrize("concurrency", CONCURRENCY)
def test_crawl_throughput(site_process, tmp_path, concurrency, keep_alive):
    from warcio.archiveiterator import ArchiveIterator

    seeds = [f"http://{testsite.host_name(i)}/" for i in range(HOSTS)]
    cfg = CrawlConfig(seeds=seeds, politeness_off=True, max_hops=HOPS, exclude=[r"/busy$"], fsync=False,
                      concurrency=concurrency, resolve={"*.site.test": "127.0.0.1"},
                      port_map={"80": site_process}, index_every=5.0, keep_alive=keep_alive,
                      allow_addresses=["127.0.0.1"])
    coll = tmp_path / "coll"
    crawler = Crawler(cfg, str(coll))
    c0, t0 = time.process_time(), time.perf_counter()
    stats = asyncio.run(crawler.run())
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0

    want = expected()
    responses = 0
    for p in sorted((coll / "archive").glob("*.warc.gz")):
        with open(p, "rb") as f:
            for rec in ArchiveIterator(f, no_record_parse=True):
                if rec.rec_type != "response":
                    continue
                uri = rec.rec_headers.get_header("WARC-Target-URI")
                if uri.startswith("dns:"):
                    continue
                host, path = uri.split("/")[2], "/" + uri.split("/", 3)[3]
                block = rec.raw_stream.read()
                if (host, path) in want:
                    assert block == want[(host, path)], uri
                responses += 1
    assert stats.failed == 0 and stats.fetched >= HOSTS * 20
    assert responses + stats.revisits == stats.fetched
    key = f"crawl c={concurrency} {'keep-alive' if keep_alive else 'connection per fetch'}"
    FIGURES[key] = (f"{key}: {stats.fetched} fetches ({stats.revisits} revisits) on {HOSTS} hosts in {wall:.1f} s: "
                    f"{stats.fetched / wall:,.0f} fetches/s, {cpu / stats.fetched * 1e6:,.0f} µs CPU per fetch, "
                    f"{stats.bytes / 1e6:.1f} MB of WARC, {stats.segments} index segments")
    print("\n" + FIGURES[key])
