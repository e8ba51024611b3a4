"""Frontier and seen set: memory per 1,000,000 queued URLs, push/pop and add rates.

    python -m pytest bench/test_frontier_bench.py -s               # 1,000,000 URLs
    FRONTIER_BENCH_URLS=200000 python -m pytest bench/test_frontier_bench.py -s

URLs look like a crawl's: 10,000 hosts, paths of 40-80 characters, queued as the
outlinks of pages (50 per page, one shared ``via``, hop path "L"). Memory is the
tracemalloc delta (Python allocations, what the structures hold) measured with the
URLs' own ``str`` objects already allocated (so it is the frontier's cost, not the
input's), and, for the seen set, the bytes it keeps on disk. Rates are wall-clock
and process CPU; the machine may be shared. What is asserted is the result (every
URL comes out once, the sets answer like a Python set), never a time.
"""

from __future__ import annotations

import gc
import os
import random
import time
import tracemalloc
from typing import Dict, List

import pytest

from warchive.capture.frontier import Frontier
from warchive.capture.politeness import Politeness
from warchive.capture.seen import BloomSeen, ExactSeen

N = int(os.environ.get("FRONTIER_BENCH_URLS", "1000000"))
HOSTS = 10_000
FIGURES: Dict[str, str] = {}


def make_urls(n: int) -> List[str]:
    rnd = random.Random(9)
    words = ["docs", "news", "2026", "archive", "item", "page", "en", "static", "article", "view"]
    out = []
    for i in range(n):
        host = f"www.site{rnd.randrange(HOSTS)}.example.org"
        path = "/".join(rnd.choice(words) for _ in range(rnd.randrange(2, 6)))
        out.append(f"https://{host}/{path}/{i}.html")
    return out


@pytest.fixture(scope="module")
def urls() -> List[str]:
    return make_urls(N)


def per_million(nbytes: float) -> str:
    return f"{nbytes / N * 1e6 / 2**20:.1f} MiB per 1 M URLs ({nbytes / N:.0f} B/URL)"


def timed(fn):
    gc.collect()
    w, c = time.perf_counter(), time.process_time()
    r = fn()
    return r, time.perf_counter() - w, time.process_time() - c


def test_frontier_memory_and_rates(urls):
    avg = sum(map(len, urls)) / len(urls)
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    f = Frontier(Politeness.off(), clock=time.monotonic)

    def push():
        for i in range(0, len(urls), 50):
            f.add_many(urls[i:i + 50], hops="L", via=urls[i])

    _, wall, cpu = timed(push)
    mem = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert len(f) == N
    FIGURES["frontier memory"] = per_million(mem) + f" (URLs average {avg:.0f} chars; {f.host_count()} hosts)"
    FIGURES["frontier push"] = f"{N / wall:,.0f} URLs/s (CPU {cpu:.2f} s for {N:,})"

    def pop():
        n = 0
        while True:
            lease = f.next()
            if lease is None:
                break
            f.done(lease, duration=0.0)
            n += 1
        return n

    n, wall, cpu = timed(pop)
    assert n == N and len(f) == 0
    FIGURES["frontier pop (next + done)"] = f"{N / wall:,.0f} URLs/s (CPU {cpu:.2f} s)"


def test_exact_seen_memory_and_rates(urls, tmp_path):
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    s = ExactSeen(tmp_path / "seen")

    def add():
        new = 0
        for i in range(0, len(urls), 50):
            new += sum(s.add_many(urls[i:i + 50]))
        return new

    new, wall, cpu = timed(add)
    peak = tracemalloc.get_traced_memory()
    mem = peak[0] - base
    tracemalloc.stop()
    assert new == len(set(urls)) == len(s)
    disk = sum(os.path.getsize(tmp_path / "seen" / p) for p in os.listdir(tmp_path / "seen"))
    FIGURES["exact seen memory"] = (per_million(mem) + f"; peak {per_million(peak[1] - base)}; "
                                    f"in memory: at most {s.buffer:,} keys; runs mmap'd")
    FIGURES["exact seen disk"] = per_million(disk)
    FIGURES["exact seen add_many (new URLs)"] = f"{N / wall:,.0f} URLs/s (CPU {cpu:.2f} s)"
    sample = urls[::10]
    again, wall, cpu = timed(lambda: sum(s.add(u) for u in sample))
    assert again == 0
    FIGURES["exact seen add (already seen, one by one)"] = f"{len(sample) / wall:,.0f} URLs/s"
    s.close()
    s2, wall, _ = timed(lambda: ExactSeen(tmp_path / "seen"))
    assert len(s2) == N
    FIGURES["exact seen reopen"] = f"{wall:.2f} s"
    s2.close()


def test_bloom_seen_memory_and_rates(urls, tmp_path):
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    b = BloomSeen(tmp_path / "seen.bloom", capacity=N, fp_rate=1e-4)
    new, wall, cpu = timed(lambda: sum(b.add_many(urls)))
    mem = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    assert new >= N * (1 - 2e-4)
    FIGURES["bloom seen memory (fp 1e-4)"] = per_million(mem) + f" (m={b.m:,} bits, k={b.k})"
    FIGURES["bloom seen add"] = f"{N / wall:,.0f} URLs/s (CPU {cpu:.2f} s); fp rate now {b.current_fp_rate():.2e}"
    b.close()


def teardown_module(module):
    print(f"\nfrontier / seen set, {N:,} URLs")
    for k, v in FIGURES.items():
        print(f"  {k:45s} {v}")
