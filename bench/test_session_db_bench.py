"""Session database (warchive.capture.session): append rate, load time and sidecar lookups.

    python -m pytest bench/test_session_db_bench.py -s          # 1,000,000 entries
    SESSION_BENCH_ENTRIES=200000 python -m pytest bench/test_session_db_bench.py -s

Times are wall-clock (best of 3 where pytest-benchmark runs them) and, since the
machine may be shared, process CPU time too. The journal is a made-up crawl with the mix of a real one: per URL a fetch (one in
eight through a redirect hop), request and response records, outlinks on one in
three, a failure on one in forty and a dedup skip on one in twenty. Each figure is
printed; what is asserted is the result (entry and record counts, what a lookup
finds), never a time. The target printed beside the load time: a 1,000,000-entry session
read in under 2 s.
"""

from __future__ import annotations

import os
import random
import time
from typing import Dict

import pytest

from warchive.capture import session as sdb

N = int(os.environ.get("SESSION_BENCH_ENTRIES", "1000000"))
FSYNC_ALWAYS_N = 2000          # fdatasync per entry costs a disk flush each: a small sample
FIGURES: Dict[str, str] = {}


def write_crawl(path: str, n: int, fsync="none") -> Dict[str, int]:
    """Append about n entries (a few more at most) of a made-up crawl; returns counts."""
    rnd = random.Random(4)
    written = 0
    urls = 0
    with sdb.SessionDB(path, fsync=fsync) as db:
        db.start(config={"depth": 3, "dedup": "skip"}, seeds=["https://www.example.org/"])
        written += 1
        while written < n:
            u = f"https://host{urls % 5000}.example.org/docs/{urls}/index.html"
            urls += 1
            hop = None
            if urls % 8 == 0:
                db.fetched(u, 301, location=u + "?lang=en", duration=0.01)
                hop = u + "?lang=en"
                written += 1
            if urls % 40 == 0:
                db.failed(u, "connection timed out", hop=hop)
                written += 1
                continue
            if urls % 20 == 0:
                db.skipped(u, "duplicate", hop=hop, digest="sha1:2WAXX5NUWNNCS2BDKCO5OVDQBJVNKIVV",
                           original_uri="https://mirror.example.org/a.png", original_date="2026-11-29T22:00:00Z")
                written += 1
                continue
            db.fetched(u, 200, hop=hop, content_type="text/html; charset=utf-8", size=rnd.randrange(100, 90000),
                       etag='"5f3c-62a1"', last_modified="Sat, 28 Nov 2026 10:00:00 GMT",
                       duration=round(rnd.random(), 4), digest="sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ")
            db.record(u, "WA-20261129225001123456-00001-crawler.warc.gz", written * 1000, 620, type="request",
                      hop=hop)
            db.record(u, "WA-20261129225001123456-00001-crawler.warc.gz", written * 1000 + 620, 8800, hop=hop)
            written += 3
            if urls % 3 == 0 and written < n:
                db.outlinks(u, [f"https://host{(urls + k) % 5000}.example.org/docs/{urls + k}/index.html"
                                for k in range(1, 4)])
                written += 1
    return {"entries": written, "urls": urls}


@pytest.fixture(scope="module")
def journal(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("session") / "crawl.session")
    t = time.perf_counter()
    counts = write_crawl(path, N)
    dt = time.perf_counter() - t
    FIGURES["append, fsync none"] = f"{counts['entries'] / dt:,.0f} entries/s ({counts['entries']:,} entries, " \
                                    f"{os.path.getsize(path) / 2**20:.0f} MiB)"
    return path, counts


def test_append_fsync_policies(tmp_path):
    for policy, n in (("none", 200_000), (1000, 200_000), ("always", FSYNC_ALWAYS_N)):
        p = str(tmp_path / f"append-{policy}.session")
        t = time.perf_counter()
        counts = write_crawl(p, n, fsync=policy)
        dt = time.perf_counter() - t
        assert len(sdb.read_session(p)) == counts["entries"]
        FIGURES[f"append, fsync {policy}"] = f"{counts['entries'] / dt:,.0f} entries/s ({counts['entries']:,} entries)"


def test_load(journal, benchmark):
    """Reading: every line parsed (its JSON checked) and the entries grouped by original URL,
    ready for lookups by any URL of a chain; then every record merged with all its fields."""
    path, counts = journal

    def load():
        s = sdb.read_session(path)
        s.groups()
        return s

    s = benchmark.pedantic(load, rounds=3, iterations=1, warmup_rounds=0)
    assert len(s) == counts["entries"] and len(s.groups()) == counts["urls"]
    assert s.lookup("https://host7.example.org/docs/7/index.html?lang=en").url.endswith("/7/index.html")
    FIGURES["read (parse + group by URL)"] = (f"{benchmark.stats.stats.min:.2f} s wall (best of 3), "
                                              f"{_cpu(load):.2f} s CPU; {len(s):,} entries, target < 2 s")

    def records():
        s = sdb.read_session(path)
        states = [r.state for r in s.records()]  # each record merged from its entries, all fields decoded
        assert len(states) == counts["urls"]

    t = time.perf_counter()
    cpu = _cpu(records)
    FIGURES["read + every record merged"] = f"{time.perf_counter() - t:.2f} s wall, {cpu:.2f} s CPU"


def _cpu(fn) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


def test_sidecar_lookups(journal, benchmark):
    path, counts = journal
    t = time.perf_counter()
    sdb.build_index(path)
    FIGURES["sidecar build"] = f"{time.perf_counter() - t:.2f} s"
    rnd = random.Random(7)
    picks = [rnd.randrange(1, counts["urls"]) for _ in range(20000)]
    keys = [f"https://host{u % 5000}.example.org/docs/{u}/index.html" + ("?lang=en" if (u + 1) % 8 == 0 else "")
            for u in picks]
    with sdb.SessionIndex(path) as ix:
        assert ix.state == "fresh"

        def run():
            found = 0
            for k in keys:
                if ix.lookup(k) is not None:
                    found += 1
            return found

        found = benchmark.pedantic(run, rounds=3, iterations=1, warmup_rounds=0)
    assert found == len(keys)
    FIGURES["lookups through the sidecar"] = f"{len(keys) / benchmark.stats.stats.min:,.0f} lookups/s " \
                                             "(any URL of a chain; record merged)"


def teardown_module(module):
    print("\nsession database figures (N = %s):" % f"{N:,}")
    for k, v in FIGURES.items():
        print(f"  {k:32} {v}")
