"""Every `warchive` command builds the whole argument parser at start-up, so building it must not
import the heavy parts (the crawler's asyncio, numpy, the fetcher, Playwright): `warchive index`
is timed with its start-up included (bench/compare.py), and a 150 ms import once slipped in."""

import json
import subprocess
import sys

HEAVY = ["asyncio", "numpy", "h11", "playwright", "warchive.capture.crawler", "warchive.capture.fetch",
         "warchive.capture.dedup", "starlette", "uvicorn"]


def test_building_the_parser_imports_nothing_heavy():
    code = ("import sys, json; import warchive.cli as c; c._parser(); "
            f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert json.loads(out) == []


def test_the_crawl_options_still_default_from_the_crawl_config():
    from warchive.capture.crawl_config import CrawlConfig
    from warchive.cli import _parser

    args = _parser().parse_args(["crawl", "http://example.org/", "-o", "x"])
    d = CrawlConfig(seeds=[])
    assert (args.delay_factor, args.min_delay, args.max_hops, args.robots) == \
        (d.delay_factor, d.min_delay, d.max_hops, d.robots)
