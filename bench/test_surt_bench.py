"""Benchmark: SURT keys per second, warchive against the `surt` package.

Input: every WARC-Target-URI of the benchmark corpus corpus/*.warc.gz
(about 88,000 records; another directory with WARCHIVE_BENCH_CORPUS), or of
tests/data/wget when there is none, normalized as warcio does (Wget's <...>
stripped, spaces escaped).  Both sides compute cdxj-indexer's key (the URL
itself where surt raises), without options and with Heritrix's
(with_scheme, trailing_comma, host_massage=False), and each benchmark checks
its result against the package's.  Not part of the default test run; run it with

    pytest bench/test_surt_bench.py --benchmark-only -s
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import List

import pytest
import surt as surt_pkg

from warchive import surt as ws

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("WARCHIVE_BENCH_CORPUS", str(ROOT / "corpus")))
FALLBACK = ROOT / "tests" / "data" / "wget"


def _target_uris(paths) -> List[str]:
    try:
        from fastwarc.warc import ArchiveIterator  # much faster than warcio over 300 MB
    except ImportError:  # pragma: no cover
        from warcio.archiveiterator import ArchiveIterator as WarcioIterator

        uris = []
        for path in paths:
            with open(path, "rb") as fh:
                for rec in WarcioIterator(fh):
                    uri = rec.rec_headers.get_header("WARC-Target-URI")
                    if uri is not None:
                        uris.append(uri)
        return uris
    uris = []
    for path in paths:
        with open(path, "rb") as fh:
            for rec in ArchiveIterator(fh, parse_http=False):
                uri = rec.headers.get("WARC-Target-URI")
                if uri is None:
                    continue
                if uri.startswith("<") and uri.endswith(">"):  # as warcio's record loader
                    uri = uri[1:-1]
                if " " in uri:
                    uri = uri.replace(" ", "%20")
                uris.append(uri)
    return uris


def _package_key(url: str, **options: bool) -> str:
    try:
        return surt_pkg.surt(url, **options)
    except Exception:  # cdxj-indexer's get_url_key
        return url


@pytest.fixture(scope="module")
def urls() -> List[str]:
    paths = sorted(CORPUS.glob("*.warc.gz")) or sorted(FALLBACK.glob("*.warc.gz"))
    uris = _target_uris(paths)
    assert uris, f"no WARC-Target-URI found in {paths}"
    print(f"\n{len(uris)} URLs from {len(paths)} files in {paths[0].parent}")
    return uris


@pytest.fixture(scope="module")
def expected(urls) -> List[str]:
    return [_package_key(u) for u in urls]


def _report(benchmark, name: str, n: int) -> None:
    mean = benchmark.stats.stats.mean
    rate = n / mean
    benchmark.extra_info["keys_per_s"] = round(rate)
    print(f"\n{name}: {rate:,.0f} keys/s ({n} keys in {mean * 1e3:.1f} ms)")


def test_bench_warchive_surt_many(benchmark, urls, expected):
    result = benchmark(ws.surt_many, urls, or_url=True)
    assert result == expected
    _report(benchmark, "warchive surt_many", len(urls))


def test_bench_warchive_surt_one_by_one(benchmark, urls, expected):
    surt_or_url = ws.surt_or_url
    result = benchmark(lambda: [surt_or_url(u) for u in urls])
    assert result == expected
    _report(benchmark, "warchive surt_or_url loop", len(urls))


def test_bench_surt_package(benchmark, urls, expected):
    result = benchmark.pedantic(lambda: [_package_key(u) for u in urls], rounds=3, iterations=1)
    assert result == expected
    _report(benchmark, "surt package", len(urls))


# --------------------------------------------------------------------------- with options

HERITRIX = {"with_scheme": True, "trailing_comma": True, "host_massage": False}   # http://(com,example,www,)/


@pytest.fixture(scope="module")
def expected_heritrix(urls) -> List[str]:
    return [_package_key(u, **HERITRIX) for u in urls]


def test_bench_warchive_surt_many_heritrix(benchmark, urls, expected_heritrix):
    result = benchmark(ws.surt_many, urls, or_url=True, **HERITRIX)
    assert result == expected_heritrix
    _report(benchmark, "warchive surt_many, Heritrix options", len(urls))


def test_bench_warchive_surt_one_by_one_heritrix(benchmark, urls, expected_heritrix):
    surt_or_url = ws.surt_or_url
    result = benchmark(lambda: [surt_or_url(u, **HERITRIX) for u in urls])
    assert result == expected_heritrix
    _report(benchmark, "warchive surt_or_url loop, Heritrix options", len(urls))
