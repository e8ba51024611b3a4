"""Parameters a client of `warchive serve` (or of `warchive cdx`) gets wrong on purpose: numbers
with thousands of digits (Python's int() refuses more than 4300: a ValueError), digits int()
does not read ('²'), and URLs that have no key (``http://[``). Each is answered, a bad one with
400 and a short message, never a 500; the CLI says it in one line and exits 2. So are the
numbers a hostile archive holds where replay reads numbers: a status line, a segment number.

Two collections of the same captures: ``web`` with its segment, ``zn`` with a ZipNum cluster
only, so that the parameters only a cluster reads (page, pageSize, showNumPages,
showPagedIndex) are read.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple
from urllib.parse import quote, urlencode

import pytest

import warcgen
from warchive.cli.access import CDX_PARAMETERS
from warchive.collection import Collection
from warchive.index.zipnum import write_zipnum
from warchive.replay.app import create_app

TS = "20240102030405"
BIG = "9" * 5000                 # past int()'s 4300 digits
NUMBERS = [BIG, "-" + BIG, "0" * 5000 + "7", "²", "1e5", " 12 ", "-1", "0"]
URLS = ["http://[", "http://[::1", "http://a:" + BIG + "/", "http://[1:2::3]:99999999999999999999/",
        "http://%zz/", "\x00", "//[", "http://" + BIG + "/"]
VALUES = NUMBERS + URLS + [f"{field}:{n}" for field in ("timestamp", "urlkey", "x") for n in (BIG, "²", "-3")] + [
    f"a b!{BIG}", "=timestamp:" + BIG]


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("badparams")
    recs = []
    for i in range(12):
        recs += warcgen.get_pair(f"p{i}", f"http://example.com/p{i}", f"/p{i}", body=b"<p>%d</p>" % i)
    warc = warcgen.write_warc(d, "site", recs).path
    coll = d / "colls" / "web"
    Collection.init(str(coll)).add([str(warc)])
    lines = subprocess.run([sys.executable, "-m", "warchive", "index", "--sort", str(warc)], check=True,
                           capture_output=True).stdout.splitlines()
    (d / "colls" / "zn" / "indexes").mkdir(parents=True)
    write_zipnum(lines, d / "colls" / "zn" / "indexes" / "zn", lines_per_block=2)
    odd = [warcgen.r_rec("response", name, f"http://odd.example.org/{name}", "application/http; msgtype=response",
                         b"HTTP/1.1 " + line + b"\r\nContent-Type: text/plain\r\n\r\nodd")
           for name, line in (("sup", "²²² Odd".encode()), ("big", BIG.encode() + b" Big"))]
    odd.append(warcgen.r_rec("response", "seg", "http://odd.example.org/seg", "application/http; msgtype=response",
                             b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nfirst",
                             extra=(("WARC-Segment-Number", "1"),)))
    odd.append(warcgen.r_rec("continuation", "seg2", "http://odd.example.org/seg", None, b"second",
                             extra=(("WARC-Segment-Origin-ID", warcgen.rid("seg")), ("WARC-Segment-Number", "²"))))
    Collection.init(str(d / "colls" / "odd")).add([str(warcgen.write_warc(d, "odd", odd).path)])
    return d / "colls"


@pytest.fixture(scope="module")
def app(root) -> Any:
    return create_app(str(root), framed_replay=False)


def call(app: Any, path: str, query: str = "", headers: Tuple[Tuple[bytes, bytes], ...] = (),
         method: str = "GET") -> Tuple[int, bytes]:
    """One request through the ASGI app: (status, body)."""
    scope = {"type": "http", "method": method, "path": path, "raw_path": path.encode("utf-8"),
             "query_string": query.encode("latin-1"), "root_path": "", "scheme": "http",
             "server": ("127.0.0.1", 8080), "headers": [(b"host", b"127.0.0.1:8080"), *headers]}
    out: Dict[str, Any] = {"body": []}

    async def receive() -> Dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(msg: Dict[str, Any]) -> None:
        if msg["type"] == "http.response.start":
            out["status"] = msg["status"]
        else:
            out["body"].append(msg.get("body", b""))

    asyncio.run(app(scope, receive, send))
    return out["status"], b"".join(out["body"])


def test_the_cluster_is_read(app):
    status, body = call(app, "/web/cdx", "url=example.com/*&output=text")
    assert status == 200 and body.count(b"\n") == 12
    status, body = call(app, "/zn/cdx", "url=example.com/*&showNumPages=true")
    assert status == 200 and json.loads(body)["pages"] == 1
    status, body = call(app, "/zn/cdx", "url=example.com/*&showNumPages=true&pageSize=2")
    assert status == 200 and json.loads(body)["pages"] == 3


@pytest.mark.parametrize("name", [name for name, _, _ in CDX_PARAMETERS])
def test_no_value_of_a_cdx_parameter_is_a_server_error(app, name):
    """Every parameter of the API, given each hostile value (with the cluster's page parameters
    beside it): answered, a refusal with 400 and a JSON message."""
    bad: List[Tuple[str, str, int, bytes]] = []
    for value in VALUES:
        for coll, base in (("web", {"url": "example.com/*"}), ("zn", {"url": "example.com/*"}),
                           ("zn", {"url": "example.com/*", "showNumPages": "true"}),
                           ("zn", {"url": "example.com/*", "showPagedIndex": "true", "output": "text"}),
                           ("zn", {"url": "example.com/*", "page": "1", "pageSize": "2"})):
            params = dict(base)
            params[name] = value
            status, body = call(app, f"/{coll}/cdx", urlencode(params, quote_via=quote))
            if status >= 500 or (status == 400 and not json.loads(body)["message"]):
                bad.append((coll, value[:20], status, body[:200]))
    assert not bad, bad


@pytest.mark.parametrize("url", URLS)
@pytest.mark.parametrize("match", ["exact", "prefix", "host", "domain"])
def test_a_search_for_a_url_without_a_key_is_a_bad_request(app, url, match):
    status, _ = call(app, "/web/", urlencode({"url": url, "matchType": match}))
    assert status < 500
    if match in ("host", "domain") and url.startswith("http://["):
        assert status == 400


@pytest.mark.parametrize("url", URLS)
@pytest.mark.parametrize("form", ["link", "json", "cdxj"])
def test_a_timemap_of_a_url_without_a_key_is_a_bad_request(app, url, form):
    """Answered, not a server error; a bad request (400) where no key can be made of the URL."""
    status, body = call(app, f"/web/timemap/{form}/{url}")
    assert status < 500, body[:200]
    if url in URLS[:4]:   # (a host cut short, a port past 65535)
        assert status == 400, body[:200]


@pytest.mark.parametrize("rng", [f"bytes={BIG}-", f"bytes=0-{BIG}", f"bytes=-{BIG}", f"bytes={BIG}-{BIG}",
                                 "bytes=0000000000000000000000000000001-2"])
def test_a_range_of_thousands_of_digits_is_answered(app, rng):
    body = b"<p>3</p>"
    status, got = call(app, f"/web/{TS}id_/http://example.com/p3", headers=((b"range", rng.encode()),))
    want = {f"bytes={BIG}-": (416, b""), f"bytes=0-{BIG}": (206, body), f"bytes=-{BIG}": (206, body),
            f"bytes={BIG}-{BIG}": (416, b""), "bytes=0000000000000000000000000000001-2": (206, body[1:3])}[rng]
    assert (status, got) == want


def test_the_cli_says_a_bad_parameter_in_one_line_and_exits_2(root):
    for coll, args, what in (("web", ["--collapse", "timestamp:²"], "collapse"), ("web", ["--limit", "x" + BIG], "limit"),
                             ("zn", ["--page", "²"], "page"), ("zn", ["--pageSize", "x"], "pageSize")):
        r = subprocess.run([sys.executable, "-m", "warchive", "cdx", str(root / coll), "--url", "example.com/*",
                            *args], capture_output=True, text=True)
        assert r.returncode == 2, (args[0], r.stderr[-300:])
        assert r.stdout == "" and len(r.stderr.splitlines()) == 1 and what in r.stderr and len(r.stderr) < 300
    # numbers past any count are answered (the captures all share their timestamp)
    for args, lines in ((["--limit", BIG], 12), (["--collapse", "timestamp:" + BIG], 1), (["--collapseTime", BIG], 1)):
        r = subprocess.run([sys.executable, "-m", "warchive", "cdx", str(root / "web"), "--url", "example.com/*",
                            *args, "--fl", "url", "--output", "text"], capture_output=True, text=True)
        assert r.returncode == 0 and len(r.stdout.splitlines()) == lines, (args[0], r.stderr[-300:])


def test_a_number_with_thousands_of_leading_zeros_is_its_value(app):
    status, body = call(app, "/web/cdx", "url=example.com/*&output=text&limit=" + "0" * 5000 + "7")
    assert status == 200 and body.count(b"\n") == 7


def test_a_request_content_length_of_other_digits_is_answered(app):
    status, _ = call(app, f"/web/{TS}/http://example.com/p1", headers=((b"content-length", "²".encode("latin-1")),),
                     method="POST")
    assert status < 500


def test_numbers_an_archive_holds_are_read_as_text_when_they_are_no_numbers(app, root):
    from warchive.replay.load import CaptureLoader

    for name, line in (("sup", "²²² Odd"), ("big", BIG + " Big")):
        status, body = call(app, f"/odd/{TS}id_/http://odd.example.org/{name}")
        assert (status, body) == (200, b"odd")   # (replayed as 200, the line kept in a header)
        with CaptureLoader(str(root / "odd")) as loader, loader.load_closest(f"http://odd.example.org/{name}", TS) as cap:
            assert cap.status is None and cap.status_line == line
    status, body = call(app, f"/odd/{TS}id_/http://odd.example.org/seg")   # its segment 2 is none
    assert status == 404


@pytest.mark.parametrize("argv", [
    ["store", "init", "{tmp}/st", "--volumes", "{tmp}/v1", "{tmp}/v2", "-k", "1", "-m", "1", "--fragment-size", BIG],
    ["crawl", "--port-map", "80=x", "http://127.0.0.1:9/", "-o", "{tmp}/c"],
    ["crawl", "--port-map", "80=" + BIG, "http://127.0.0.1:9/", "-o", "{tmp}/c"],
    ["index", "--scheduler", "local:1", "--target-size", "1e999", "{tmp}/x.warc.gz", "-o", "{tmp}/x.cdxj"],
], ids=["store-fragment-size", "crawl-port-map-word", "crawl-port-map-digits", "index-target-size-inf"])
def test_other_commands_refuse_numbers_they_cannot_read_as_usage_errors(tmp_path, argv):
    if argv[0] == "index":
        pytest.importorskip("distributed")
        warcgen.write_warc(tmp_path, "x", warcgen.get_pair("p", "http://example.com/", "/"))
    r = subprocess.run([sys.executable, "-m", "warchive", *[a.replace("{tmp}", str(tmp_path)) for a in argv]],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr[-500:]
    assert not (tmp_path / "c").exists() and not (tmp_path / "st").exists()
