"""The pywb 2.10 rewrite oracle (tests/pywb_oracle.py, ``pywb_rewrite``) itself: each of its
requests answers as pywb's own documentation and tests say, so that the differential tests of
archival URLs, URL rewriting and header rewriting compare with something that means what it
says. Skipped without .venv-pywb, except under CI."""

from __future__ import annotations

import base64
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

import pywb_oracle  # noqa: E402


@pytest.fixture(scope="module")
def pywb():
    pywb_oracle.require_pywb()
    with pywb_oracle.pywb_rewrite() as oracle:
        yield oracle


def test_wburl(pywb):
    a, empty = pywb.ask([{"op": "wburl", "path": "20130102im_/https:/example.com"}, {"op": "wburl", "path": ""}])
    assert a == {"ok": True, "type": "replay", "timestamp": "20130102", "end_timestamp": "", "mod": "im_",
                 "url": "https://example.com", "str": "20130102im_/https://example.com"}
    assert not empty["ok"] and "Invalid WbUrl" in empty["error"]
    bad = pywb.one({"op": "wburl", "path": "http://[xn--x/"})
    assert bad["ok"] and bad["str_error"].startswith("ValueError")


def test_rewrite_rebase_deprefix_new_url(pywb):
    page = "20131010/http://example.com/path/page.html"
    answers = pywb.ask([
        {"op": "rewrite", "page": page, "prefix": "/coll/", "url": "../x", "mod": "im_"},
        {"op": "rewrite", "page": page, "prefix": "/coll/", "url": "../x", "rebase": "/a/b/"},
        {"op": "rewrite", "page": "http://example.com/v.php", "prefix": "http://localhost:8080/live/", "url": "js/b.php",
         "mod": "js_", "force_abs": True},
        {"op": "rewrite", "page": page, "prefix": "/coll/", "url": "foo://[x/../"},
        {"op": "deprefix", "page": "2013id_/http://example.com/f?p=http://localhost:8080/pywb/20141226/http://example.com/",
         "prefix": "/pywb/", "full_prefix": "http://localhost:8080/pywb/"},
        {"op": "new_url", "page": "2013id_/example.com/f.html", "prefix": "/123/", "timestamp": "20131024"},
    ])
    assert [a.get("result") for a in answers] == [
        "/coll/20131010im_/http://example.com/x", "/coll/20131010/http://example.com/a/x", "/live/js_/http://example.com/js/b.php",
        None, "http://example.com/f?p=http://example.com/", "/123/20131024id_/http://example.com/f.html"]
    assert answers[3]["error"].startswith("ValueError")


def test_headers(pywb):
    a = pywb.one({"op": "headers", "page": "20171226/http://example.com/", "prefix": "/warc/", "statusline": "302 Redirect",
                  "headers": [["Connection", "close"], ["Location", "http://example.com/other.html"],
                              ["Content-Encoding", "gzip"], ["Transfer-Encoding", "chunked"]],
                  "content_rw": False, "accept_encoding": "gzip"})
    assert a["headers"] == [["X-Archive-Orig-Connection", "close"], ["Location", "/warc/20171226/http://example.com/other.html"],
                            ["Content-Encoding", "gzip"], ["X-Archive-Orig-Transfer-Encoding", "chunked"]]
    assert (a["is_chunked"], a["is_content_rw"]) == (True, False)
    assert a["fields"] == [[h] for h in a["headers"]] and a["protocol"] == "HTTP/1.1"
    c = pywb.one({"op": "headers", "page": "20171226mp_/http://example.com/", "prefix": "/warc/", "statusline": "200 OK",
                  "headers": [["Set-Cookie", "a=b; Path=/; HttpOnly"], ["Set-Cookie", "bad@name=1"], ["Date", "x"]],
                  "content_rw": False, "accept_encoding": None})
    assert [len(f) for f in c["fields"]] == [8, 0, 1]   # one per modifier, none, one
    assert c["headers"] == c["fields"][0] + c["fields"][2]
    b = pywb.one({"op": "headers", "page": "20171226/http://example.com/", "prefix": "/warc/", "statusline": "200 OK",
                  "headers": [["Content-Encoding", "gzip"], ["Content-Length", "9"]], "content_rw": False, "accept_encoding": None})
    assert b["headers"] == [["X-Archive-Orig-Content-Encoding", "gzip"], ["X-Archive-Orig-Content-Length", "9"]]
    assert b["is_content_rw"]


def test_content(pywb):
    html = b"<html><a href='/x'>x</a>"
    a = pywb.one({"op": "content", "page": "20171226mp_/http://example.com/", "prefix": "/warc/", "url": "http://example.com/",
                  "statusline": "200 OK", "headers": [["Content-Type", "text/html"], ["Content-Length", str(len(html))]],
                  "payload": base64.b64encode(html).decode(), "accept_encoding": "gzip"})
    assert a["is_rw"] and a["headers"] == [["Content-Type", "text/html"], ["X-Archive-Orig-Content-Length", str(len(html))]]
    assert b"/warc/20171226" in base64.b64decode(a["body"])


def test_memento_ops(pywb):
    date, bad, good, links, tm = pywb.ask([
        {"op": "http_date", "timestamp": "20131226095010"},
        {"op": "accept_datetime", "path": "http://example.com/", "value": "not a date"},
        {"op": "accept_datetime", "path": "http://example.com/", "value": "Thu, 26 Dec 2013 09:50:10 GMT"},
        {"op": "memento_links", "url": "http://example.com/", "full_prefix": "http://h/c/", "memento_dt": None,
         "memento_ts": "20131226095010", "is_timegate": True, "replay_mod": "mp_", "is_memento": False},
        {"op": "timemap", "lines": ['com,example)/ 20131226095010 {"url": "http://example.com/", "source-coll": "c"}'],
         "url": "http://example.com/", "full_prefix": "http://h/c/", "replay_mod": ""}])
    assert date["result"] == "Thu, 26 Dec 2013 09:50:10 GMT"   # warcio's own doctest
    assert bad["status"] == 400
    assert (good["status"], good["timestamp"], good["type"], good["is_timegate"]) == (200, "20131226095010", "replay", True)
    assert [k for k, _ in links["headers"]] == ["Link", "Vary"]
    assert links["headers"][0][1].endswith('<http://h/c/20131226095010mp_/http://example.com/>; rel="memento"; '
                                           'datetime="Thu, 26 Dec 2013 09:50:10 GMT"')
    assert tm["body"] == ('<http://h/c/timemap/link/http://example.com/>; rel="self"; type="application/link-format"; '
                          'from="Thu, 26 Dec 2013 09:50:10 GMT",\n<http://h/c/http://example.com/>; rel="timegate",\n'
                          '<http://example.com/>; rel="original",\n<http://h/c/20131226095010/http://example.com/>; '
                          'rel="memento"; datetime="Thu, 26 Dec 2013 09:50:10 GMT"; collection="c"\n')
