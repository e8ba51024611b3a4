"""Benchmark: the dedup digest index (warchive.capture.digest_index) at 1 M and 10 M digests.

For each size N (``WARCHIVE_DEDUP_BENCH_N=1000000,10000000`` by default) an index is
built in a temporary directory from N synthetic captures: digest ``sha1`` of the 8-byte
number i, URI ``http://host<i % 5000>.example.com/section/<i>/page.html``, WARC-Date one
second apart, record id ``<urn:uuid:...>`` derived from i (about 120 bytes of heap an
entry, like real crawls). Measured, in one process:

* build: N ``add()`` calls (digest parsing included; the inputs are made beforehand, off
  the clock) and the ``flush()`` that sorts and writes the generation; the file's size;
* open: a fresh ``DigestIndex`` (mmap, header, every CRC, key order checked) and one
  unverified;
* lookups: ``get(label)`` of 200,000 labelled digests, all hits (shuffled, fixed seed) and
  all misses (numbers >= N), in-process: digest decoding, binary search over the mmap'd
  prefixes, tail compare, heap decode.

Every hit is asserted against the generating function (uri, date, record id of i), every
miss is None; the reference is the arithmetic, not our own output. Times are printed as
wall clock and as this process's CPU time (on a shared machine the CPU figure is the one
that says what the code costs). No timing is asserted. Run with

    pytest bench/test_dedup_bench.py --benchmark-only -s
"""

from __future__ import annotations

import base64
import hashlib
import os
import random
import struct
import time
import uuid
from typing import Dict, List

import pytest

from warchive.capture.digest_index import DigestIndex

SIZES = [int(x) for x in os.environ.get("WARCHIVE_DEDUP_BENCH_N", "1000000,10000000").split(",")]
LOOKUPS = 200_000
CHUNK = 500_000
T0 = 1_700_000_000          # 2023-11-14T22:13:20Z


def label(i: int) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(struct.pack("<Q", i)).digest()).decode()


def uri(i: int) -> str:
    return f"http://host{i % 5000}.example.com/section/{i}/page.html"


def date(i: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(T0 + i))


def rid(i: int) -> str:
    return f"<urn:uuid:{uuid.UUID(int=i * 0x9E3779B97F4A7C15 % (1 << 128))}>"


_built: Dict[int, dict] = {}


@pytest.fixture(scope="module", params=SIZES, ids=lambda n: f"{n // 1_000_000}M" if n >= 10 ** 6 else str(n))
def built(request, tmp_path_factory):
    n = request.param
    d = tmp_path_factory.mktemp(f"dedup{n}")
    ix = DigestIndex(d)
    add = ix.add
    adding = adding_cpu = 0.0
    for lo in range(0, n, CHUNK):               # inputs made outside the clock, a chunk at a time
        rows = [(label(i), uri(i), date(i), rid(i)) for i in range(lo, min(n, lo + CHUNK))]
        t, c = time.perf_counter(), time.process_time()
        for r in rows:
            add(*r)
        adding += time.perf_counter() - t
        adding_cpu += time.process_time() - c
    t1, c1 = time.perf_counter(), time.process_time()
    path = ix.flush()
    t2, c2 = time.perf_counter(), time.process_time()
    ix.close()
    size = os.path.getsize(path)
    info = {"n": n, "dir": d, "add_s": adding, "flush_s": t2 - t1, "bytes": size}
    print(f"\n[dedup {n:,}] build: {n:,} add() in {adding:.1f} s wall, {adding_cpu:.1f} s CPU "
          f"({n / adding_cpu:,.0f}/s of CPU); flush {t2 - t1:.1f} s wall, {c2 - c1:.1f} s CPU; "
          f"file {size / 1e6:,.1f} MB ({size / n:.1f} B a digest); load average {os.getloadavg()[0]:.1f}")
    yield info
    for f in d.iterdir():
        f.unlink()


def test_open(built, benchmark):
    def verified():
        DigestIndex(built["dir"]).close()

    c = time.process_time()
    benchmark.pedantic(verified, rounds=3, iterations=1)
    cpu = (time.process_time() - c) / 3
    with DigestIndex(built["dir"]) as ix:
        assert len(ix) == built["n"]
    t = time.perf_counter()
    DigestIndex(built["dir"], verify=False).close()
    t2 = time.perf_counter()
    print(f"\n[dedup {built['n']:,}] open: verified {benchmark.stats.stats.mean:.3f} s wall, {cpu:.3f} s CPU "
          f"(file in the page cache); unverified {1e3 * (t2 - t):.2f} ms")


def _probe(n: int, hits: bool) -> List[int]:
    rng = random.Random(7)
    return [rng.randrange(n) if hits else n + rng.randrange(1 << 40) for _ in range(LOOKUPS)]


@pytest.mark.parametrize("kind", ["hits", "misses"])
def test_lookups(built, kind, benchmark):
    n = built["n"]
    nums = _probe(n, kind == "hits")
    labels = [label(i) for i in nums]
    with DigestIndex(built["dir"], verify=False) as ix:
        got = [ix.get(x) for x in labels]
        if kind == "hits":
            for i, o in zip(nums, got):
                assert o is not None and (o.uri, o.date, o.record_id) == (uri(i), date(i), rid(i)), i
        else:
            assert all(o is None for o in got)
        get = ix.get

        def run():
            for x in labels:
                get(x)

        c = time.process_time()
        benchmark.pedantic(run, rounds=3, iterations=1)
        cpu = (time.process_time() - c) / 3
        per_s = LOOKUPS / benchmark.stats.stats.mean
        print(f"\n[dedup {n:,}] {kind}: {per_s:,.0f} lookups/s wall ({1e6 / per_s:.2f} us each), "
              f"{LOOKUPS / cpu:,.0f}/s of CPU ({1e6 * cpu / LOOKUPS:.2f} us); "
              f"load average {os.getloadavg()[0]:.1f}")
