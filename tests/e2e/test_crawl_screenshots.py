"""warchive crawl --screenshots in Debian's chromium: every HTML page the crawl archives gets a
screenshot record rendered from the bytes the crawl fetched (same fetch), indexed under the page's
key scheme as the crawl goes, found by the page URL and loaded back.

The pages are coloured by their own inline styles, so a pixel says which page was rendered.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))

import localsite  # noqa: E402
import pngutil  # noqa: E402
from testsite import DOMAIN, Site, response_bytes  # noqa: E402
from warchive.replay.screenshots import find_screenshots, load_screenshot  # noqa: E402
from warchive.capture.crawler import CrawlConfig, Crawler  # noqa: E402
from warchive.capture.session import read_session  # noqa: E402
from warchive.index.segment import Segment  # noqa: E402


@pytest.fixture(scope="module", autouse=True)
def need_browser():
    localsite.require_browser()


COLOURS = {"/": (0, 255, 0), "/b": (0, 0, 255)}


def page(rgb, links):
    r, g, b = rgb
    return (f'<!doctype html><html><body style="margin:0;background:rgb({r},{g},{b})">{links}'
            '</body></html>').encode()


def test_crawl_screenshots(tmp_path, cdxj_indexer):
    host = "shot." + DOMAIN
    site = Site()
    ct = [("Content-Type", "text/html; charset=utf-8")]
    site.add(host, "/robots.txt", response_bytes(404, b""))
    site.add(host, "/", response_bytes(200, page(COLOURS["/"], '<a href="/b">b</a><img src="/i.png">'), ct))
    site.add(host, "/b", response_bytes(200, page(COLOURS["/b"], ""), ct, chunked=50))
    site.add(host, "/i.png", response_bytes(200, pngutil.encode_solid(4, 4, (9, 9, 9)), [("Content-Type", "image/png")]))
    coll = tmp_path / "c"
    with site:
        cfg = CrawlConfig(seeds=[f"http://{host}/"], delay_factor=0, min_delay=0.05, max_delay=0.05, fsync=False,
                          resolve={"*." + DOMAIN: "127.0.0.1"}, port_map={"80": site.port}, screenshots=True,
                          concurrency=2, allow_addresses=["127.0.0.1"])
        c = Crawler(cfg, str(coll))
        stats = asyncio.run(c.run())
        # the browser fetched nothing: every request the site saw is the crawler's, once each
        assert sorted(h.target for h in site.log) == ["/", "/b", "/i.png", "/robots.txt"]
    assert stats.screenshots == 2
    for path, rgb in COLOURS.items():
        url = f"http://{host}{path}"
        caps = find_screenshots(str(coll), url)
        assert len(caps) == 1, url
        png, meta = load_screenshot(caps[0], str(coll))
        img = pngutil.decode(png)
        assert img.pixel(img.width - 5, img.height - 5)[:3] == rgb
        assert meta.get("mode") == "same-fetch"
    # the screenshot records are in the segments written during the crawl, as cdxj-indexer indexes them
    ours = []
    for p in sorted((coll / "indexes").glob("*.seg")):
        s = Segment(str(p))
        ours.extend(bytes(x) for x in s.range(b"", None))
        s.close()
    files = sorted((coll / "archive").glob("*.warc.gz"))
    peer = cdxj_indexer(files, [])
    assert sorted(set(ours)) == sorted(ln for ln in peer.output.splitlines() if ln)
    assert sum(b"urn:screenshot:" in ln for ln in ours) == 2
    s = read_session(str(Path(c.session_dir) / "session.journal"))
    assert sum(1 for r in s.records() for e in r.records if e.type == "resource") == 2
