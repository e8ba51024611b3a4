"""Benchmark: exact lookups in an index segment, beside bisect over the lines in RAM; index sizes.

Input: the sorted CDXJ of the benchmark WARCs (WARCHIVE_CORPUS, else the Wget
fixtures; see conftest.py), or the CDXJ file named by WARCHIVE_BENCH_CDXJ, e.g.
the corpus index made by ``warchive index --sort corpus/*.warc.gz -o
corpus.cdxj`` (44,181 lines).

Lookups: every capture's URL (shuffled, fixed seed) is turned into its SURT key
(``warchive.surt.surt``, timed) and looked up exactly, warm (the block cache
holds the whole segment) and cold (a cache of one block, so nearly every lookup
reads, checks and decodes a block). Each result is asserted equal to bisect
over the sorted list of lines. p50/p99 are of single calls timed with
perf_counter_ns, SURT included.

Sizes: the segment (default settings, and deflate) against a ZipNum cluster
made as pywb / webarchive-indexing make one (shards of 3,000 lines, each a gzip
member, plus the ``.idx`` summary ``KEY TS<TAB>part<TAB>offset<TAB>length<TAB>
lineno``) with plain Python gzip at level 6 (Common Crawl's) and 9 (Python's
default), and against gzip of the whole CDXJ. Nothing is asserted about time
or size; run with

    pytest bench/test_segment_bench.py --benchmark-only -s
"""

from __future__ import annotations

import bisect
import gzip
import json
import os
import random
import time
from pathlib import Path
from typing import List, Tuple

import pytest

from warchive.index.segment import Segment, write_segment
from warchive.surt import surt

CDXJ = os.environ.get("WARCHIVE_BENCH_CDXJ")
ZIPNUM_LINES = 3000


@pytest.fixture(scope="module")
def lines(warc_paths) -> List[bytes]:
    if CDXJ:
        data = Path(CDXJ).read_bytes()
    else:
        from warchive.index.build import index_paths
        from warchive.index.cdx import IndexOptions

        chunks: List[bytes] = []
        index_paths(warc_paths, chunks.append, IndexOptions(), sort=True)
        data = b"".join(chunks)
    out = data.split(b"\n")
    if out and out[-1] == b"":
        out.pop()
    assert out == sorted(out)
    print(f"\n{len(out)} lines, {len(data) / max(1, len(out)):.0f} B a line, from {CDXJ or 'the benchmark WARCs'}")
    return out


@pytest.fixture(scope="module")
def segment_path(lines, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("seg") / "index.seg"
    write_segment(lines, path)
    return path


@pytest.fixture(scope="module")
def urls(lines) -> List[bytes]:
    out = []
    for line in lines:
        parts = line.split(b" ", 2)
        if len(parts) == 3 and parts[2].startswith(b"{"):
            url = json.loads(parts[2]).get("url")
            if url:
                out.append(url.encode("utf-8"))
    random.Random(7).shuffle(out)
    return out


@pytest.fixture(scope="module")
def expected(lines, urls) -> List[List[bytes]]:
    return [bisect_lookup(lines, surt(u)) for u in urls]


def bisect_lookup(lines: List[bytes], key: bytes) -> List[bytes]:
    a = bisect.bisect_left(lines, key + b" ")
    return lines[a:bisect.bisect_left(lines, key + b"!", a)]


def _report(benchmark, name: str, n: int) -> None:
    mean = benchmark.stats.stats.mean
    benchmark.extra_info["lookups_per_s"] = round(n / mean)
    print(f"\n{name}: {n / mean:,.0f} exact lookups/s incl. SURT ({n} in {mean * 1e3:.1f} ms)")


def _latency(fn, keys) -> Tuple[float, float]:
    now = time.perf_counter_ns
    lat = []
    for k in keys:
        t = now()
        fn(k)
        lat.append(now() - t)
    lat.sort()
    return lat[len(lat) // 2] / 1e3, lat[int(len(lat) * 0.99)] / 1e3


def test_bench_segment_lookup_warm(benchmark, segment_path, urls, expected):
    with Segment(segment_path) as seg:
        lookup = seg.lookup
        for u in urls:    # warm the cache
            lookup(surt(u))
        result = benchmark(lambda: [lookup(surt(u)) for u in urls])
        assert result == expected
        _report(benchmark, "segment lookup (warm)", len(urls))
        p50, p99 = _latency(lambda u: lookup(surt(u)), urls)
        benchmark.extra_info.update(p50_us=p50, p99_us=p99)
        print(f"segment lookup (warm): p50 {p50:.1f} us, p99 {p99:.1f} us; cache {seg.cache_info}")


def test_bench_segment_lookup_cold(benchmark, segment_path, urls, expected):
    with Segment(segment_path, cache_bytes=0) as seg:
        lookup = seg.lookup
        some = urls[:5000]
        result = benchmark.pedantic(lambda: [lookup(surt(u)) for u in some], rounds=3, iterations=1)
        assert result == expected[:len(some)]
        _report(benchmark, "segment lookup (cold: a block decoded per lookup)", len(some))
        p50, p99 = _latency(lambda u: lookup(surt(u)), some)
        benchmark.extra_info.update(p50_us=p50, p99_us=p99)
        print(f"segment lookup (cold): p50 {p50:.1f} us, p99 {p99:.1f} us")


def test_bench_bisect_lookup(benchmark, lines, urls, expected):
    result = benchmark(lambda: [bisect_lookup(lines, surt(u)) for u in urls])
    assert result == expected
    _report(benchmark, "bisect over the lines in RAM", len(urls))
    p50, p99 = _latency(lambda u: bisect_lookup(lines, surt(u)), urls)
    benchmark.extra_info.update(p50_us=p50, p99_us=p99)
    print(f"bisect: p50 {p50:.1f} us, p99 {p99:.1f} us")


def zipnum_bytes(lines: List[bytes], level: int) -> Tuple[int, int]:
    """(shard bytes, .idx bytes) of a ZipNum cluster of these lines, in one part."""
    shard = idx = 0
    for n, i in enumerate(range(0, len(lines), ZIPNUM_LINES)):
        block = b"".join(x + b"\n" for x in lines[i:i + ZIPNUM_LINES])
        member = gzip.compress(block, compresslevel=level, mtime=0)
        first = b" ".join(lines[i].split(b" ", 2)[:2])
        idx += len(b"%s\tpart-00000\t%d\t%d\t%d\n" % (first, shard, len(member), n + 1))
        shard += len(member)
    return shard, idx


def test_bench_sizes(benchmark, lines, segment_path, tmp_path):
    raw = sum(len(x) + 1 for x in lines)
    deflate = tmp_path / "deflate.seg"
    benchmark.pedantic(write_segment, (lines, deflate), {"compression": "deflate"}, rounds=1, iterations=1)
    shard, idx = zipnum_bytes(lines, 6)
    zipnum = shard + idx
    shard9, idx9 = zipnum_bytes(lines, 9)
    rows = [
        ("CDXJ", raw),
        (f"ZipNum: {ZIPNUM_LINES}-line blocks, gzip -6 (as Common Crawl), .idx {idx} B", zipnum),
        ("ZipNum: gzip -9 (Python's gzip default)", shard9 + idx9),
        ("gzip -9 of the whole CDXJ", len(gzip.compress(b"".join(x + b"\n" for x in lines), 9))),
    ]
    for name, path in (("segment (default: zstd -9)", segment_path), ("segment (deflate, ISA-L -3)", deflate)):
        with Segment(path) as seg:
            assert list(seg) == lines
            rows.append((f"{name}, {seg.block_count} blocks", os.path.getsize(path)))
    print()
    for name, size in rows:
        print(f"{name:64s} {size:>12,d} B {size / len(lines):6.1f} B/line "
              f"{size / zipnum:6.3f} x ZipNum -6 {size / (shard9 + idx9):6.3f} x ZipNum -9")
    benchmark.extra_info["segment_over_zipnum"] = round(os.path.getsize(segment_path) / zipnum, 4)
    benchmark.extra_info["segment_over_zipnum_gzip9"] = round(os.path.getsize(segment_path) / (shard9 + idx9), 4)
