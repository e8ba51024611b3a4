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
    """`warchive index` loads what indexing needs and nothing of the other commands. The library
    imports plainly at module level, except imports measured to cost `warchive index` more than
    5 ms of start-up each, kept where they are used with the figure in a comment: argparse (the
    CLI's fast path for index, warchive.cli), logging (the reader's rare warning), tempfile with
    shutil (-p only); and no module on its path uses dataclasses (inspect with it)."""
    avoided = ["argparse", "logging", "tempfile", "shutil", "dataclasses", "inspect",
               "warchive.capture", "warchive.replay", "warchive.collection", "warchive.index.query",
               "starlette", "uvicorn", "numpy", "asyncio", "msgspec"]
    code = ("import sys; from warchive.cli import index_args; import warchive.cli.index; "
            "index_args(['index', 'x.warc.gz', '-o', 'y']); "
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


# --------------------------------------------------------------------------- `warchive index` without argparse

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from budget import examples

INDEX_TOKENS = ["-o", "--output", "-11", "--cdx11", "--records", "--dir-root", "-p", "--post-append", "-s", "--sort",
                "-j", "--jobs", "--verify", "--skip-errors", "-h", "--help", "--ver", "--out", "-j2", "--jobs=3",
                "-o=x", "-ps", "--", "-", "-1", "-x", "--nope", "2", "0", "-3", "x", "a.warc.gz", "dir/", "all",
                "response,revisit", "٣", " 4 ", "index", "out.cdxj", "--records=all", "-f", "--fields",
                "offset,warc-type", "--fields=offset", "--surt-options", "trailing_comma,with_scheme", "--surt"]


def _argparse_view(argv):
    """What main() would run with through argparse: (command, attributes) or 'error'."""
    from warchive.cli.commands import parser

    try:
        args, extra = parser().parse_known_args(argv)
    except SystemExit:
        return "error"
    if extra or args.command is None:
        return "error"
    view = vars(args)
    del view["run"]   # the function the command line runs (the fast path runs warchive.cli.index.index)
    return view


@settings(max_examples=examples(3000), deadline=None)
@given(st.lists(st.sampled_from(INDEX_TOKENS), max_size=9))
def test_index_arguments_parse_as_argparse_parses_them(tail):
    import contextlib
    import io

    from warchive.cli import index_args as _index_args

    argv = ["index", *tail]
    fast = _index_args(argv)
    if fast is None:
        return   # argparse decides
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        expected = _argparse_view(argv)
    assert expected != "error", argv
    assert vars(fast) == expected, argv


def test_the_usual_index_command_lines_take_the_fast_path():
    from warchive.cli import index_args as _index_args

    for argv in (["index", "a.warc.gz", "-o", "out.cdxj"], ["index", "-j", "2", "--verify", "a", "b", "-o", "o"],
                 ["index", "--cdx11", "--records", "all", "--dir-root", "/d", "a"], ["index", "dir/", "--sort", "-p"]):
        assert _index_args(argv) is not None, argv
    for argv in (["index"], ["index", "-h"], ["index", "a", "-j2"], ["index", "a", "-o", "x", "b"], ["sort", "a"]):
        assert _index_args(argv) is None, argv
