"""WACZ files whose index keys are not the SURT keys of their lines' URLs, as ArchiveWeb.page and
wabac.js write them (``:``, ``@``, ``;`` and ``|`` of the query percent-encoded in the key):
`warchive add` gives those lines warchive's key (and says how many, in one line), and `warchive
serve` finds them in a WACZ served as it is.

The fixture is built here (tests/data/README.md, "WACZ with foreign keys"): a WARC written by
warcio, its index written by cdxj-indexer, the keys of the lines whose query holds those
characters rewritten as ArchiveWeb.page writes them and the lines sorted again, and the WACZ
packaged from that by warchive's writer (plain index, and a compressed one of 4-line blocks).
What must be found comes from what was written: the URLs, dates and payloads.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest
from starlette.testclient import TestClient
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from warchive.collection import Collection
from warchive.replay import create_app
from warchive.wacz import create_wacz

# The URLs whose query holds a character ArchiveWeb.page percent-encodes in its keys.
FOREIGN = ["https://fonts.googleapis.com/css2?family=Source+Sans+Pro:wght@700;900&display=swap",
           "http://example.com/search?q=a|b&who=me@host;v=2"]
PLAIN = ["http://example.com/", "http://example.com/about", "http://example.com/a.css", "http://example.com/a.js",
         "http://example.com/img/logo.png", "http://example.com/search?q=plain", "http://example.com/search?q=a+b",
         "https://www.example.org/", "https://www.example.org/news?page=2&sort=new", "https://www.example.org/x/y",
         "https://fonts.googleapis.com/css2?family=Roboto", "http://example.net/"]
URLS = FOREIGN + PLAIN   # 14 captures, 2 of them keyed otherwise
ENCODED = {":": "%3A", "@": "%40", ";": "%3B", "|": "%7C"}


def date(i: int) -> str:
    return f"2024-03-{i + 1:02d}T10:20:30Z"


def body(i: int) -> bytes:
    return f"capture {i} of {URLS[i]}".encode()


def write_warc(path: Path) -> None:
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True)
        for i, url in enumerate(URLS):
            http = StatusAndHeaders("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body(i))))],
                                    protocol="HTTP/1.1")
            rec = w.create_warc_record(url, "response", payload=io.BytesIO(body(i)),
                                       http_headers=http, warc_headers_dict={"WARC-Date": date(i)})
            w.write_record(rec)


def archiveweb_key(key: bytes) -> bytes:
    """The key as ArchiveWeb.page writes it: ``:@;|`` of the query percent-encoded."""
    path, q, query = key.decode().partition("?")
    for c, e in ENCODED.items():
        query = query.replace(c, e)
    return (path + q + query).encode()


@pytest.fixture(scope="module")
def waczs(tmp_path_factory) -> Dict[str, Path]:
    d = tmp_path_factory.mktemp("wacz-keys")
    warc = d / "site.warc.gz"
    write_warc(warc)
    lines = subprocess.run([sys.executable, "-m", "cdxj_indexer.main", str(warc)], capture_output=True,
                           check=True).stdout.splitlines()
    assert len(lines) == len(URLS)
    foreign = [b" ".join([archiveweb_key(ln.split(b" ", 1)[0]), ln.split(b" ", 1)[1]]) for ln in lines]
    assert sum(a != b for a, b in zip(lines, foreign)) == len(FOREIGN)   # the two lines, and only they
    coll = Collection.init(str(d / "src"))
    (Path(coll.archive_dir) / warc.name).write_bytes(warc.read_bytes())
    (Path(coll.index_dir) / "index.cdxj").write_bytes(b"".join(ln + b"\n" for ln in sorted(foreign)))
    out = {}
    for name, kw in (("plain", {}), ("compressed", {"compress_over": 0, "lines_per_block": 4})):
        root = d / name
        root.mkdir()
        created = create_wacz(coll.path, str(root / "site.wacz"), **kw)
        assert created.compressed == (name == "compressed")
        out[name] = root / "site.wacz"
    return out


def _cli(*argv):
    return subprocess.run([sys.executable, "-m", "warchive", *map(str, argv)], capture_output=True, text=True,
                          timeout=120)


def _timestamps(cdxj: str) -> List[str]:
    return [ln.split(" ")[1] for ln in cdxj.splitlines()]


@pytest.mark.parametrize("kind", ["plain", "compressed"])
def test_add_gives_the_lines_warchives_keys(waczs, tmp_path, kind):
    coll = tmp_path / "web"
    assert _cli("init", coll).returncode == 0
    r = _cli("add", coll, waczs[kind])
    assert r.returncode == 0, r.stderr
    said = [ln for ln in r.stderr.splitlines() if "recomputed" in ln]
    assert said == [f"{waczs[kind]}: {len(FOREIGN)} of {len(URLS)} index keys recomputed from their url (they were "
                    "not warchive's SURT keys, e.g. percent-encoded query characters)"], r.stderr
    for i, url in enumerate(URLS):
        r = _cli("lookup", url, coll)
        assert r.returncode == 0, r.stderr
        assert _timestamps(r.stdout) == [date(i).replace("-", "").replace("T", "").replace(":", "")[:14]], url
        r = _cli("load", url, "2024", coll)
        assert r.returncode == 0 and r.stdout.endswith(body(i).decode()), (url, r.stderr)


def test_a_wacz_keyed_as_warchive_keys_is_said_nothing_about(waczs, tmp_path):
    """warchive's own WACZ of the same WARC: nothing recomputed, no line about it."""
    src = Collection.init(str(tmp_path / "own"))
    src.add([str(waczs["plain"].parent.parent / "site.warc.gz")])
    create_wacz(src.path, str(tmp_path / "own.wacz"))
    coll = tmp_path / "web"
    assert _cli("init", coll).returncode == 0
    r = _cli("add", coll, tmp_path / "own.wacz")
    assert r.returncode == 0 and "recomputed" not in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1


@pytest.mark.parametrize("kind", ["plain", "compressed"])
def test_serve_finds_them_in_the_wacz_as_it_is(waczs, kind):
    client = TestClient(create_app(str(waczs[kind].parent)))
    for i, url in enumerate(URLS):
        ts = date(i).replace("-", "").replace("T", "").replace(":", "")[:14]
        r = client.get("/site/cdx", params={"url": url, "output": "json"})
        assert r.status_code == 200, (url, r.text)
        assert [json.loads(ln)["timestamp"] for ln in r.text.splitlines()] == [ts], url
        r = client.get(f"/site/{ts}id_/{url}")
        assert (r.status_code, r.content) == (200, body(i)), url
    # a query over a domain: each of its captures once, in key order, those recomputed among them
    r = client.get("/site/cdx", params={"url": "example.com", "matchType": "domain", "output": "json"})
    got = [json.loads(ln) for ln in r.text.splitlines()]
    assert sorted(c["url"] for c in got) == sorted(u for u in URLS if u.split("/")[2] == "example.com")
    assert [c["urlkey"] for c in got] == sorted(c["urlkey"] for c in got)
