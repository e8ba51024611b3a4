"""Screenshot records as pywb 2.10 finds and replays them: the CDX answer for
``url=urn:screenshot:<page>`` (and a differently-cased page URL that has the same key) is
byte-identical to ours, and pywb's replay (``id_``) serves the PNG we stored.
No browser: the PNG is made by tests/pngutil.py."""

from __future__ import annotations

import base64
import datetime as dt
from urllib.parse import urlencode

import pytest

import pngutil
from warchive.capture import browser as B
from warchive.index.query import Engine, NamedSource
from warchive.sortedfile import SortedFile
from warchive.warc.writer import WarcWriter

pywb_oracle = pytest.importorskip("pywb_oracle")

PAGE = "http://example.com/Shop/?b=2&a=1"
HTML = b"<p>hi</p>"
RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s" % (len(HTML), HTML)


def _need_pywb():
    pywb_oracle.require_pywb()


@pytest.fixture(scope="module")
def archive(tmp_path_factory, warchive_cli):
    d = tmp_path_factory.mktemp("shots")
    png = pngutil.encode_solid(40, 30, (10, 200, 30))
    shot = B.Screenshot(PAGE, png, B.PARALLEL, PAGE, 200, "chromium", "156", "UA", (40, 30), 1.0, False,
                        dt.datetime(2026, 11, 29, 12, 0, 3, tzinfo=dt.timezone.utc), 0.1)
    with WarcWriter(d / "w", prefix="SHOTS", fsync=False) as w:
        _, resp = w.write_exchange(PAGE, b"GET / HTTP/1.1\r\n\r\n", RESPONSE, date="2026-11-29T12:00:00Z")
        B.write_screenshot(w, shot, page_record_id=resp.record_id)
    cdxj = d / "index.cdxj"
    out = warchive_cli(["index", "--sort", *w.closed_files, "-o", cdxj])
    assert out.returncode == 0, out.stderr
    return w.closed_files, cdxj, png


def test_pywb_cdx_answers_equal_ours(archive):
    _need_pywb()
    _, cdxj, _ = archive
    queries = [{"url": "urn:screenshot:" + PAGE, "output": "json"},
               {"url": "urn:screenshot:http://EXAMPLE.com/shop?a=1&b=2", "output": "json"},
               {"url": "urn:screenshot:" + PAGE, "matchType": "prefix"},
               {"url": "urn:screenshot:http://example.com/other"}]
    pywb = pywb_oracle.pywb_cdx([cdxj], queries)
    engine = Engine([NamedSource(SortedFile(str(cdxj)), f"coll/indexes/{cdxj.name}", "coll")], access="allow")
    for q, (status, ctype, body) in zip(queries, pywb):
        ans = engine.answer(urlencode(q))
        assert (ans.status, ans.content_type, ans.read()) == (status, ctype, body), q
    assert b"image/png" in pywb[0][2] and pywb[0][2] == pywb[1][2]
    assert pywb[3][2] == b""


def test_pywb_replays_the_png(archive):
    _need_pywb()
    warcs, cdxj, png = archive
    (got,) = pywb_oracle.pywb_load(warcs, [cdxj], [{"replay": "20261129120003id_/urn:screenshot:" + PAGE}])
    assert got["status"] == 200, got
    assert base64.b64decode(got["body"]) == png
