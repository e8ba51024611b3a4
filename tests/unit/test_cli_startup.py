"""Every `warchive` command builds the options of its own command only (warchive.cli.commands), so
a command must not import the heavy parts it does not use (the crawler's asyncio, numpy, the
fetcher, Playwright, the HTTP server): a 150 ms import once slipped into every command."""

import json
import subprocess
import sys

from warchive.cli.commands import COMMANDS

HEAVY = ["asyncio", "numpy", "h11", "playwright", "warchive.capture.crawler", "warchive.capture.fetch",
         "warchive.capture.dedup", "starlette", "uvicorn"]
USES_HEAVY = {"crawl", "serve", "dedup-index",   # what they run needs them
              "load"}   # (the capture loader is replay's, whose package face is the ASGI app: asyncio)


def test_building_the_parser_imports_nothing_heavy():
    names = [c.name for c in COMMANDS if c.name not in USES_HEAVY] + [None]
    got = {}
    for name in names:
        code = (f"import sys, json; from warchive.cli.commands import parser; parser({name!r}); "
                f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))")
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
        got[name] = json.loads(out)
    assert got == {n: [] for n in names}


def test_the_crawl_options_still_default_from_the_crawl_config():
    from warchive.capture.crawl_config import CrawlConfig
    from warchive.cli.commands import parser

    args = parser("crawl").parse_args(["crawl", "http://example.org/", "-o", "x"])
    d = CrawlConfig(seeds=[])
    assert (args.delay_factor, args.min_delay, args.max_hops, args.robots) == \
        (d.delay_factor, d.min_delay, d.max_hops, d.robots)


# --------------------------------------------------------------------------- only the command run is built

SAMPLE_ARGV = [
    ["index", "a.warc.gz", "b", "-o", "out.cdxj", "-j", "2", "--verify", "--records", "all"],
    ["index", "x", "--cdx11", "--skip-errors", "-p", "--sort", "--dir-root", "/d"],
    ["sort", "in.cdxj", "-o", "out", "--mem", "64"],
    ["cdx", "coll", "--url", "example.com", "--limit", "3"],
    ["lookup", "http://example.com/"],
    ["load", "http://example.com/", "2024", "--raw"],
    ["session", "stats", "journal.jsonl", "--top", "3"],
    ["dedup-index", "lookup", "dir", "sha1:AAAA"],
    ["robots", "robots.txt", "--agent", "bot", "http://example.com/"],
    ["crawl", "http://example.org/", "-o", "coll", "--max-hops", "2"],
    ["recover", "x.warc.gz.open", "-n"],
    ["extract", "x.warc.gz", "1234", "--payload"],
    ["index", "-", "--fields", "offset,http:status", "--records", "response"],
]


def test_a_command_parses_the_same_when_only_it_is_built():
    from warchive.cli.commands import parser

    for argv in SAMPLE_ARGV:
        assert parser(argv[0]).parse_known_args(argv) == parser().parse_known_args(argv), argv


def test_an_unknown_command_still_lists_every_command():
    r = subprocess.run([sys.executable, "-m", "warchive", "frobnicate"], capture_output=True, text=True)
    assert r.returncode == 2
    assert "invalid choice: 'frobnicate'" in r.stderr
    for name in ("index", "cdx", "session", "crawl", "robots", "recover"):
        assert f"'{name}'" in r.stderr


def test_warchive_index_start_up_imports_only_what_it_uses():
    """`warchive index` loads what indexing needs and nothing of the other commands: not the
    crawler, replay, the collection or the query engine, nor what only they use."""
    avoided = ["logging", "warchive.capture", "warchive.replay", "warchive.collection", "warchive.index.query",
               "starlette", "uvicorn", "numpy", "asyncio", "msgspec"]
    code = ("import sys; from warchive.cli.commands import parser; "
            "parser('index').parse_args(['index', 'x.warc.gz', '-o', 'y']); "
            f"print(repr([m for m in {avoided!r} if m in sys.modules]))")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "[]"


def test_index_to_a_pipe_is_complete(tmp_path):
    """The console script ends `warchive index` with os._exit once stdout is flushed."""
    from pathlib import Path

    wget = sorted((Path(__file__).resolve().parents[1] / "data" / "wget").glob("*.warc.gz"))
    out = tmp_path / "out.cdxj"
    subprocess.run([sys.executable, "-m", "warchive", "index", *map(str, wget), "-o", str(out)], check=True)
    r = subprocess.run([sys.executable, "-m", "warchive", "index", *map(str, wget)], capture_output=True)
    assert r.returncode == 0 and r.stdout == out.read_bytes() and r.stdout.count(b"\n") > 500
    r = subprocess.run([sys.executable, "-m", "warchive", "index", str(tmp_path / "missing.warc.gz")],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "no such file" in r.stderr
