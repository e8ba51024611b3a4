"""The `warchive` command as one thing: one registry, usage errors exit 2, every option declared
with help, `cdx` refusing what it does not know, `serve` saying where it listens."""

import queue
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from warchive.cli.access import CDX_PARAMETERS
from warchive.cli.commands import COMMANDS, parser

FIRST_CRAWL = Path(__file__).resolve().parents[1] / "data" / "wget" / "docs-python-3.11.warc.gz"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _cli(*argv, **kw):
    return subprocess.run([sys.executable, "-m", "warchive", *map(str, argv)], capture_output=True, text=True,
                          timeout=120, **kw)


def test_a_misspelt_cdx_parameter_is_a_usage_error(tmp_path):
    r = _cli("cdx", tmp_path, "--url", "example.com", "--limt", "1")
    assert r.returncode == 2
    assert r.stderr.startswith("usage: warchive cdx") and "unrecognized arguments: --limt 1" in r.stderr
    assert r.stdout == ""


def test_cdx_help_lists_every_api_parameter():
    r = _cli("cdx", "--help")
    assert r.returncode == 0
    for name, _, help_ in CDX_PARAMETERS:
        assert f"--{name} " in r.stdout, name
    # the engine's own parameters (docs/cdx-api.md R4, W1) are all there
    for name in ("url", "matchType", "from", "to", "filter", "collapse", "collapseTime", "closest", "sort",
                 "reverse", "limit", "fl", "output", "resolveRevisits", "page", "pageSize", "showNumPages",
                 "showPagedIndex", "allowFuzzy", "nosource", "sources", "showResumeKey", "resumeKey",
                 "fastLatest", "content_type", "memento_format"):
        assert f"--{name} " in r.stdout, name


def test_cdx_parameters_reach_the_engine(tmp_path):
    coll = tmp_path / "web"
    assert _cli("init", coll).returncode == 0
    r = _cli("add", coll, FIRST_CRAWL)
    assert r.returncode == 0, r.stderr
    r = _cli("cdx", coll, "--url", "docs.python.org/3.11/*", "--filter", "=mime:text/css", "--filter",
             "!status:404", "--fl", "mime,status", "--output", "text", "--limit", "2")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["text/css 200", "text/css 200"]


@pytest.mark.parametrize("argv", [["load", "http://example.com/"],                 # no timestamp
                                  ["recover", "a.open", "b.open", "-o", "x"],     # -o with two inputs
                                  ["crawl", "http://example.com/"],                # no -o
                                  ["session"], ["dedup-index"],                    # no action
                                  ["index"], ["frobnicate"], []])
def test_usage_errors_exit_2(argv):
    r = _cli(*argv)
    assert r.returncode == 2, (argv, r.stderr)
    assert "usage: warchive" in (r.stderr + r.stdout)


def test_every_command_and_option_has_help():
    p = parser()
    sub = next(a for a in p._actions if a.dest == "command")
    assert [c.name for c in COMMANDS] == list(sub.choices)
    helps = {a.dest: a.help for a in sub._choices_actions}
    for name, sp in sub.choices.items():
        assert helps[name], name
        assert sp.description, name
        for a in sp._actions:
            if a.dest in ("help",) or a.help == "==SUPPRESS==":
                continue
            if a.dest in ("session_command", "dedup_command", "store_command"):
                for action_name, action_parser in a.choices.items():
                    for b in action_parser._actions:
                        assert b.help, (name, action_name, b.dest)
                continue
            assert a.help, (name, a.dest)


def test_docs_have_a_section_for_every_command():
    text = DOCS.read_text()
    for c in COMMANDS:
        assert re.search(rf"^## warchive {re.escape(c.name)}\b", text, re.M), c.name
    assert text.count("```") % 2 == 0, "a code block of docs/cli.md is never closed"


def test_serve_says_where_it_listens_and_logs_requests(tmp_path):
    root = tmp_path / "colls"
    assert _cli("init", root / "web").returncode == 0
    assert _cli("add", root / "web", FIRST_CRAWL).returncode == 0
    proc = subprocess.Popen([sys.executable, "-m", "warchive", "serve", "--root", str(root), "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)   # logging by default
    lines: "queue.Queue[str]" = queue.Queue()
    threading.Thread(target=lambda: [lines.put(x) for x in proc.stderr], daemon=True).start()
    try:
        first = lines.get(timeout=30)
        m = re.match(r"warchive serve: (http://127\.0\.0\.1:(\d+)/) ", first)
        assert m and int(m.group(2)) > 0, first
        found = lines.get(timeout=30)
        assert found.startswith("warchive serve: collections: web (1 index files)"), found
        url = m.group(1) + "web/cdx?url=http://docs.python.org/3.11/index.html&output=json"
        for _ in range(100):
            try:
                body = urllib.request.urlopen(url, timeout=5).read()
                break
            except OSError:
                time.sleep(0.05)
        else:
            pytest.fail("the server did not answer")
        assert b'"status": "200"' in body
        logged = ""
        deadline = time.monotonic() + 20
        while "GET /web/cdx" not in logged and time.monotonic() < deadline:
            try:
                logged += lines.get(timeout=1)
            except queue.Empty:
                pass
        assert "GET /web/cdx?url=" in logged and " 200" in logged, logged
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert out == ""   # standard output stays empty: everything the server says goes to stderr


def test_serve_without_the_access_log_logs_no_request(tmp_path):
    root = tmp_path / "colls"
    assert _cli("init", root / "web").returncode == 0
    assert _cli("add", root / "web", FIRST_CRAWL).returncode == 0
    proc = subprocess.Popen([sys.executable, "-m", "warchive", "serve", "--root", str(root), "--port", "0",
                             "--no-access-log"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stderr.readline()
        m = re.match(r"warchive serve: (http://127\.0\.0\.1:\d+/) ", first)
        assert m, first
        proc.stderr.readline()   # the collections
        url = m.group(1) + "web/cdx?url=http://docs.python.org/3.11/index.html&output=json"
        for _ in range(100):
            try:
                assert b'"status": "200"' in urllib.request.urlopen(url, timeout=5).read()
                break
            except OSError:
                time.sleep(0.05)
        else:
            pytest.fail("the server did not answer")
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "GET /web/cdx" not in err, err


def test_serve_names_a_broken_collection_and_serves_the_others(tmp_path):
    root = tmp_path / "colls"
    assert _cli("init", root / "web").returncode == 0
    assert _cli("add", root / "web", FIRST_CRAWL).returncode == 0
    assert _cli("init", root / "bad").returncode == 0
    (root / "bad" / "indexes" / "x.seg").write_bytes(b"not a segment")
    proc = subprocess.Popen([sys.executable, "-m", "warchive", "serve", "--root", str(root), "--port", "0"],
                            stderr=subprocess.PIPE, text=True)
    try:
        said = [proc.stderr.readline() for _ in range(3)]
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert said[1].startswith("warchive serve: collection 'bad' is unavailable: ") and "x.seg" in said[1], said
    assert said[2].startswith("warchive serve: collections: web (1 index files)"), said


def test_serve_with_a_port_in_use_fails_cleanly(tmp_path):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    try:
        r = _cli("serve", "--root", tmp_path, "--port", s.getsockname()[1])
    finally:
        s.close()
    assert r.returncode == 1 and "address already in use" in r.stderr.lower() and "Traceback" not in r.stderr


def test_warchive_help_lists_every_command():
    r = _cli("--help")
    assert r.returncode == 0
    for c in COMMANDS:
        assert re.search(rf"^    {re.escape(c.name)}\b", r.stdout, re.M), c.name


def test_an_os_error_is_one_line_not_a_traceback(tmp_path):
    """A full disk or a refused path ends a command with one line naming the file (exit 1)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    src = tmp_path / "in.cdxj"
    src.write_bytes(b"com,example)/ 20200101000000 {}\n")
    for argv in (["sort", src, "-o", blocker / "out.cdxj"], ["recompress", FIRST_CRAWL, blocker / "out.warc.gz"]):
        r = _cli(*argv)
        assert r.returncode == 1, (argv, r.stderr)
        assert "Traceback" not in r.stderr and r.stderr.startswith("warchive: error: ")
        assert "Not a directory" in r.stderr and str(blocker) in r.stderr


def test_a_crawl_that_fetches_nothing_fails(tmp_path):
    """Every fetch refused (nothing listens on the seed's port): exit 1, saying so."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()   # nothing listens there now
    r = _cli("crawl", f"http://127.0.0.1:{port}/", "-o", str(tmp_path / "c"), "--max-retries", "0",
             "--min-delay", "0", "--max-delay", "0", "--delay-factor", "0", "--robots", "ignore",
             "--allow-address", "127.0.0.1")
    assert r.returncode == 1, r.stderr
    assert "nothing was fetched" in r.stderr and "attempts failed" in r.stderr and "session failed" in r.stderr


def test_load_takes_a_timestamp_of_1_to_14_digits(tmp_path, valid_archives):
    """TIMESTAMP is YYYYMMDDhhmmss or a prefix of it: anything else is a usage error (exit 2,
    nothing printed), not some capture the closest order happens to put first."""
    from warcio.archiveiterator import ArchiveIterator

    warc = valid_archives["get_pairs.warc.gz"].path
    with open(warc, "rb") as f:
        url = next(r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(f)
                   if r.rec_type == "response")
    coll = tmp_path / "web"
    assert _cli("init", coll).returncode == 0
    assert _cli("add", coll, warc).returncode == 0
    for ts in ("2", "2024", "20240102030405"):
        r = _cli("load", url, ts, coll, "--headers-only")
        assert r.returncode == 0 and r.stdout.startswith("HTTP/"), (ts, r.stderr)
    for ts in ("notatime", "", "20240102030405123", "2024-01-02", " 2024", "2024\u0662", "+2024"):
        r = _cli("load", url, ts, coll, "--headers-only")
        assert r.returncode == 2, (ts, r.returncode, r.stdout[:80])
        assert r.stdout == ""
        assert r.stderr.startswith("usage: warchive load"), r.stderr
        assert "warchive load: error: TIMESTAMP must be 1 to 14 digits" in r.stderr, r.stderr
        assert "Traceback" not in r.stderr
