"""Kernel html_rewrite: replay's HTML rewriting and the crawler's link extraction on the HTML of
the bench files, beside a plain copy of the bytes and the pure-Python link extractor.

    python -m pytest bench/test_html_rewrite_bench.py
    WARCHIVE_CORPUS=corpus python -m pytest bench/test_html_rewrite_bench.py

pywb's rewriter lives in another interpreter: bench/html_compare.py puts it beside these in one
run. Each benchmark checks what it computed against a reference computed once, untimed: the
rewritten pages against the kernel's Python path (every URL through UrlRewriter), the links
against the Python extractor's.
"""

from __future__ import annotations

import sys
from typing import List, Tuple

import pytest

from conftest import ROOT, bench_paths

sys.path.insert(0, str(ROOT / "tests"))

import links_py  # noqa: E402
from warchive._ext import html_rewrite as k  # noqa: E402
from warchive.capture import links  # noqa: E402
from warchive.replay import html  # noqa: E402
from warchive.replay.urls import UrlRewriter  # noqa: E402

MB = 60e6
GROUP = "html rewrite"


@pytest.fixture(scope="module")
def pages() -> List[Tuple[str, bytes]]:
    import warchive.warc
    from warchive.warc.content import content_stream
    out, size = [], 0
    for path in bench_paths():
        with warchive.warc.open(path, types={"response"}) as recs:
            for rec in recs:
                if rec.http and "html" in (rec.http.get("content-type") or ""):
                    body = content_stream(rec).read()
                    out.append((rec.target_uri, body))
                    size += len(body)
                    if size > MB:
                        return out
    return out


def rewriter(url: str) -> html.HtmlRewriter:
    return html.HtmlRewriter(UrlRewriter(f"20240101000000mp_/{url}", "/coll/"), defmod="mp_")


@pytest.fixture(scope="module")
def reference(pages) -> List[bytes]:
    """Every page through the kernel's Python path (the fast path off)."""
    out = []
    for url, body in pages:
        r = rewriter(url)
        r._kernel = k.Kernel(r, all_slow=True)
        r._set_page()
        out.append(r.feed(body) + r.close())
    return out


def _mb(pages) -> float:
    return sum(len(b) for _, b in pages) / 1e6


@pytest.mark.benchmark(group=GROUP)
def test_bytes_copy(benchmark, pages):
    n = benchmark.pedantic(lambda: sum(len(bytearray(b)) for _, b in pages), rounds=3, iterations=1)
    assert n == sum(len(b) for _, b in pages)
    benchmark.extra_info["MB"] = _mb(pages)


@pytest.mark.benchmark(group=GROUP)
def test_html_rewrite(benchmark, pages, reference):
    def run():
        out = []
        for url, body in pages:
            r = rewriter(url)
            out.append(r.feed(body) + r.close())
        return out
    assert benchmark.pedantic(run, rounds=3, iterations=1) == reference
    benchmark.extra_info["MB"] = _mb(pages)


@pytest.fixture(scope="module")
def link_reference(pages):
    return [[(x.url, x.hop, x.context) for x in links_py.extract_links(u, "text/html", b)] for u, b in pages]


@pytest.mark.benchmark(group="links")
def test_links_python_extractor(benchmark, pages, link_reference):
    got = benchmark.pedantic(lambda: [links_py.extract_links(u, "text/html", b) for u, b in pages], rounds=1, iterations=1)
    assert [[(x.url, x.hop, x.context) for x in f] for f in got] == link_reference
    benchmark.extra_info["MB"] = _mb(pages)


@pytest.mark.benchmark(group="links")
def test_links_kernel(benchmark, pages, link_reference):
    got = benchmark.pedantic(lambda: [links.extract_links(u, "text/html", b) for u, b in pages], rounds=3, iterations=1)
    assert [[(x.url, x.hop, x.context) for x in f] for f in got] == link_reference
    benchmark.extra_info["MB"] = _mb(pages)
