"""The three doors to the query engine answer alike: the Python API (Index), the HTTP endpoint
(GET /<coll>/cdx on the ASGI app) and `warchive cdx`; collections are laid out as pywb's."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from warchive.index.query import Index

WGET = Path(__file__).resolve().parents[1] / "data" / "wget"


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """root/web/indexes/wget.cdxj: the two Wget crawls, indexed and sorted by warchive."""
    r = tmp_path_factory.mktemp("colls")
    idx = r / "web" / "indexes"
    idx.mkdir(parents=True)
    subprocess.run([sys.executable, "-m", "warchive", "index", "--sort", *map(str, sorted(WGET.glob("*.warc.gz"))),
                    "-o", str(idx / "wget.cdxj")], check=True)
    return r


URL = "http://docs.python.org/3.11/index.html"


def test_index_query_api(root):
    with Index(str(root / "web")) as idx:
        caps = idx.query(url=URL, filter=["!mime:warc/revisit"])
        assert [c["status"] for c in caps] == ["200"]
        assert caps[0]["source"] == "web/indexes/wget.cdxj" and caps[0]["access"] == "allow"
        both = idx.query(url=URL)
        assert [c["mime"] for c in both] == ["text/html", "warc/revisit"]   # first crawl, then the re-crawl


def test_http_endpoint_equals_cli(root):
    from starlette.testclient import TestClient

    from warchive.replay.app import create_app

    client = TestClient(create_app(str(root)))
    r = client.get("/web/cdx", params={"url": URL, "output": "json", "fl": "timestamp,status"})
    assert r.status_code == 200 and r.headers["content-type"] == "text/x-ndjson"
    cli = subprocess.run([sys.executable, "-m", "warchive", "cdx", str(root / "web"), "--url", URL,
                          "--output", "json", "--fl", "timestamp,status"], capture_output=True, check=True).stdout
    assert r.content == cli
    assert [json.loads(line)["status"] for line in cli.splitlines()] == ["200", "200"]
    bad = client.get("/web/cdx", params={"url": URL, "limit": "x"})
    assert bad.status_code == 400 and "limit" in bad.json()["message"]
    assert client.get("/nope/cdx", params={"url": URL}).status_code == 404


def test_new_index_file_is_seen_without_restart(root, tmp_path):
    from starlette.testclient import TestClient

    from warchive.replay.app import create_app

    r = tmp_path / "root"
    shutil.copytree(root, r)
    client = TestClient(create_app(str(r)))
    q = {"url": "http://example.com/new", "output": "text", "allowFuzzy": "false"}
    assert client.get("/web/cdx", params=q).content == b""
    line = b'com,example)/new 20240101000000 {"url": "http://example.com/new", "status": "200"}\n'
    (r / "web" / "indexes" / "added.cdxj").write_bytes(line)
    assert b"com,example)/new 20240101000000" in client.get("/web/cdx", params=q).content


def test_lookup_command(root):
    out = subprocess.run([sys.executable, "-m", "warchive", "lookup", URL, str(root / "web")],
                         capture_output=True, check=True).stdout
    assert out.count(b"\n") == 2 and out.startswith(b"org,python,docs)/3.11/index.html ")


def test_a_broken_collection_is_named_and_the_others_still_answer(root, tmp_path):
    """A collection whose index cannot be opened answers 503 naming it; the rest of the server works."""
    from starlette.testclient import TestClient

    from warchive.replay.app import create_app

    r = tmp_path / "root"
    shutil.copytree(root, r)
    shutil.copytree(r / "web", r / "bad")
    (r / "bad" / "indexes" / "broken.seg").write_bytes(b"\x89WASEG\r\n" + b"\0" * 40)   # a segment cut short
    client = TestClient(create_app(str(r)))
    bad = client.get("/bad/cdx", params={"url": URL})
    assert bad.status_code == 503 and "'bad'" in bad.json()["message"] and "broken.seg" in bad.json()["message"]
    good = client.get("/web/cdx", params={"url": URL, "output": "json"})
    assert good.status_code == 200 and good.text.count("\n") == 2


def test_collections_follow_their_index_files(root, tmp_path):
    """A collection is opened once, reopened when its indexes/ (or a loose index file) changes,
    and none once its directory or its indexes/ directory has gone."""
    import os

    from warchive.replay.collections import Collections
    from warchive.replay.config import CollectionConfig, ReplayConfig

    r = tmp_path / "root"
    shutil.copytree(root, r)
    loose = tmp_path / "loose.cdxj"
    shutil.copy(r / "web" / "indexes" / "wget.cdxj", loose)
    past = time.time_ns() - 10**9   # views opened in the clock tick of a change are checked again
    os.utime(loose, ns=(past, past))
    colls = Collections(str(r), ReplayConfig(collections={"conf": CollectionConfig("conf", [str(loose)])}))
    web, conf = colls.get("web"), colls.get("conf")
    assert web is not None and conf is not None
    assert colls.get("web") is web and colls.get("conf") is conf   # nothing changed: the same
    (r / "web" / "indexes" / "more.cdxj").write_bytes(b"")
    again = colls.get("web")
    assert again is not None and again is not web
    os.utime(r / "web" / "indexes", ns=(past, past))   # (the change made long enough ago to be trusted)
    again = colls.get("web")
    assert colls.get("web") is again
    shutil.copy(loose, tmp_path / "new.cdxj")
    os.replace(tmp_path / "new.cdxj", loose)   # another file (inode) under the same name
    assert colls.get("conf") is not conf
    shutil.rmtree(r / "web" / "indexes")
    (r / "web" / "indexes").write_bytes(b"")   # indexes/ is no directory: no collection
    assert colls.get("web") is None
    shutil.rmtree(r / "web")
    loose.unlink()
    assert colls.get("web") is None and colls.get("conf") is None and colls.get("nope") is None
    colls.close()
