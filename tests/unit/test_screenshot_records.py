"""Screenshot records without a browser: the record, its index line (against cdxj-indexer), the
key scheme, the lookup by page URL, loading the PNG back; Captured.from_http decoding."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import subprocess
import sys

import pytest

import pngutil
from warchive.capture import browser as B
from warchive.collection import add_warcs
from warchive.errors import ArchiveError
from warchive.index.cdx import written_record_line
from warchive.index.query import Index
from warchive.replay.load import load_capture
from warchive.replay import screenshots as S
from warchive.surt import surt
from warchive.warc.reader import ArchiveIterator
from warchive.warc.writer import WarcWriter

PAGE = "http://example.com/a/Page?b=2&a=1"
HTML = b"<!doctype html><title>x</title><p>hello</p>"
RESPONSE = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n"
            % len(HTML)) + HTML
REQUEST = b"GET /a/Page?b=2&a=1 HTTP/1.1\r\nHost: example.com\r\n\r\n"


def shot(url=PAGE, rgb=(255, 0, 0), when=None, mode=B.SAME_FETCH):
    return B.Screenshot(url, pngutil.encode_solid(64, 48, rgb), mode, url, 200, "chromium", "156.0.1",
                        "Mozilla/5.0 test", (64, 48), 1.0, False,
                        when or dt.datetime(2026, 11, 29, 12, 0, 1, tzinfo=dt.timezone.utc), 0.25, 2, 0,
                        ["http://elsewhere.example/x.js"], 1)


def write(tmp_path, shots, name="SHOT"):
    """The page's response/request, then each screenshot linked to it; (paths, page Written, [Written])."""
    seen = []
    with WarcWriter(tmp_path / "warcs", prefix=name, fsync=False, on_record=seen.append) as w:
        _, resp = w.write_exchange(PAGE, REQUEST, RESPONSE, date="2026-11-29T12:00:00.000000Z")
        written = [B.write_screenshot(w, s, page_record_id=resp.record_id, page_date=resp.date) for s in shots]
    return w.closed_files, resp, written


def test_record_heads_and_metadata(tmp_path):
    paths, resp, (w,) = write(tmp_path, [shot()])
    with open(paths[0], "rb") as fh:
        recs = [(r.type, r.headers, r.payload.read()) for r in ArchiveIterator(fh)]
    rtype, heads, body = recs[-1]
    assert rtype == "resource"
    assert heads.get("WARC-Target-URI") == "urn:screenshot:" + PAGE
    assert heads.get("Content-Type") == "image/png"
    assert heads.get("WARC-Concurrent-To") == resp.record_id
    assert heads.get("WARC-Date") == "2026-11-29T12:00:01.000000Z"
    assert body == shot().png and B.png_size(body) == (64, 48)
    meta = json.loads(heads.get("WARC-JSON-Metadata"))
    assert meta["mode"] == "same-fetch" and meta["browser"] == "chromium" and meta["browser_version"] == "156.0.1"
    assert meta["viewport"] == {"width": 64, "height": 48} and meta["device_scale_factor"] == 1.0
    assert meta["page_record_id"] == resp.record_id and meta["page"] == PAGE
    assert meta["subresources"] == {"from_capture": 2, "from_network": 0, "blocked": 1}
    assert meta["date"] == "2026-11-29T12:00:01.000000Z"


def test_refuses_non_png(tmp_path):
    s = shot()
    s.png = b"GIF89a..."
    with WarcWriter(tmp_path, fsync=False) as w, pytest.raises(ArchiveError):
        B.write_screenshot(w, s)


@pytest.mark.parametrize("url", [PAGE, "https://www.Example.com:443/", "http://example.com/#frag",
                                 "http://example.com/p/?jsessionid=1&x=%7E"])
def test_key_is_the_surt_packages(url):
    import surt as surt_pkg

    assert S.screenshot_key(url) == surt_pkg.surt("urn:screenshot:" + url) == surt("urn:screenshot:" + url)
    # lower-cased and canonicalized, not host-reversed: the scheme and host stay as written
    assert S.screenshot_key(url).startswith("urn:screenshot:" + url.split("://")[0].lower() + "://")


def test_index_line_equals_cdxj_indexer(tmp_path, cdxj_indexer, warchive_cli):
    paths, _, written = write(tmp_path, [shot(), shot(rgb=(0, 0, 255), mode=B.PARALLEL)])
    for args in ([], ["--cdx11"], ["--records", "all"]):
        peer = cdxj_indexer(paths, args)
        assert peer.error is None, peer.stderr
        ours = warchive_cli(["index", *args, *paths])
        assert ours.returncode == 0, ours.stderr
        assert ours.stdout == peer.output, args
        assert b"urn:screenshot:" in ours.stdout
    peer = cdxj_indexer(paths, [])
    lines = [ln for ln in peer.output.splitlines(keepends=True) if ln.startswith(b"urn:screenshot:")]
    assert len(lines) == 2
    # the crawler's index-as-it-goes line is the same line
    assert [written_record_line(w) for w in written] == lines
    key, ts, js = lines[0].split(b" ", 2)
    assert key.decode() == S.screenshot_key(PAGE) == "urn:screenshot:http://example.com/a/page?a=1&b=2"
    assert ts == b"20261129120001"
    assert json.loads(js)["mime"] == "image/png" and "status" not in json.loads(js)


def test_found_by_page_url_and_loaded(tmp_path, warchive_cli):
    early = shot(rgb=(0, 255, 0), when=dt.datetime(2026, 11, 29, 12, 0, 5, tzinfo=dt.timezone.utc))
    paths, resp, _ = write(tmp_path, [shot(), early])
    coll = tmp_path / "coll"
    assert add_warcs(str(coll), paths)
    caps = S.find_screenshots(str(coll), PAGE)
    assert [c["timestamp"] for c in caps] == ["20261129120001", "20261129120005"]
    assert all(c["mime"] == "image/png" and c["url"] == "urn:screenshot:" + PAGE for c in caps)
    assert [c["timestamp"] for c in S.find_screenshots(str(coll), PAGE, closest="20261129120004")] == \
        ["20261129120005", "20261129120001"]
    with Index(str(coll)) as idx:
        with load_capture(caps[1], index=idx) as cap:
            assert cap.read() == early.png
        png, meta = S.load_screenshot(caps[0], idx)
    assert png == shot().png and meta["page_record_id"] == resp.record_id
    # the page's own capture is not a screenshot, and another page has none
    assert S.find_screenshots(str(coll), "http://example.com/other") == []
    # warchive lookup by the urn
    out = warchive_cli(["lookup", "urn:screenshot:" + PAGE, str(coll)])
    assert out.returncode == 0 and out.stdout.count(b"\n") == 2 and b'"image/png"' in out.stdout


def test_found_from_variants_of_the_page_url(tmp_path):
    paths, _, _ = write(tmp_path, [shot()])
    coll = tmp_path / "coll"
    add_warcs(str(coll), paths)
    for asked in ("https://example.com/a/Page?b=2&a=1", "http://www.example.com/a/Page?a=1&b=2",
                  "https://www.example.com/a/page?b=2&a=1#x"):
        assert len(S.find_screenshots(str(coll), asked)) == 1, asked
    assert S.find_screenshots(str(coll), "https://www.example.com/a/Page?b=2&a=1", variants=False) == []
    assert S.find_screenshots(str(coll), "http://example.org/a/Page?b=2&a=1") == []


def test_other_prefixes(tmp_path):
    with WarcWriter(tmp_path / "w", fsync=False) as w:
        w.write_resource("urn:view:" + PAGE, shot().png, "image/png", date="2026-11-29T12:00:00Z")
    coll = tmp_path / "coll"
    add_warcs(str(coll), w.closed_files)
    assert S.find_screenshots(str(coll), PAGE) == []
    assert len(S.find_screenshots(str(coll), PAGE, prefixes=(S.SCREENSHOT_PREFIX,) + S.OTHER_PREFIXES)) == 1


def test_captured_from_http_undoes_chunking_and_gzip():
    body = b"<html><body>" + b"x" * 5000 + b"</body></html>"
    z = gzip.compress(body)
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(z[i:i + 1000]), z[i:i + 1000]) for i in range(0, len(z), 1000))
    msg = (b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n"
           b"Content-Encoding: gzip\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nX-A: 1\r\nx-a: 2\r\n\r\n"
           + chunked + b"0\r\n\r\n")
    c = B.Captured.from_http("http://x/", msg)
    assert c.status == 404 and c.body == body
    h = c.served_headers()
    assert "transfer-encoding" not in h and "content-encoding" not in h
    assert h["set-cookie"] == "a=1\nb=2" and h["x-a"] == "1, 2" and h["content-type"] == "text/html"
    with pytest.raises(ArchiveError):
        B.Captured.from_http("http://x/", b"not http at all")


def test_allow_policy():
    f = B._allow_fn(None, "http://a.test:8000/p")
    assert f("http://a.test:8000/x.css") and not f("http://a.test:8001/") and not f("https://a.test:8000/")
    g = B._allow_fn(["http://127.0.0.1:9", "cdn.test"], "http://a.test/")
    assert g("http://127.0.0.1:9/x") and g("https://cdn.test:444/y") and not g("http://a.test/")
    assert not g("http://127.0.0.1:10/x") and not g("http://cdn.test.evil/")


def test_module_imports_without_playwright():
    code = ("import sys; sys.modules['playwright'] = None; import warchive.capture.browser as b; "
            "import asyncio\ntry:\n asyncio.run(b.Screenshotter().start())\nexcept b.BrowserUnavailable as e:\n"
            " print('unavailable', 'pip install' in str(e))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "unavailable True", out.stderr
