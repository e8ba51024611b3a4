"""Dedup end to end: two crawls written by warchive's writer with a Deduplicator in front of
it, replayed by warchive's revisit resolution and by pywb 2.10.

Crawl 1 writes a logo and a page, then meets the logo under another host (a URL-agnostic
revisit in the same crawl), a small copy below the minimum size (written twice), and a 404
with the page's body (never deduplicated). The digest index is flushed and reopened for
crawl 2, which meets the logo under a third host and the page at its own URL (revisits of
crawl 1's records), skips a fourth copy under the skip policy, and gets a 304 to a
conditional request (a server-not-modified revisit).

What must hold: every revisit names its original in WARC-Refers-To, -Target-URI and -Date
(checked with warcio reading the files); ``load_closest`` and pywb's resource and replay
modes serve the original's payload with the revisit's own headers for every revisit; the
skipped URL has no capture and its decision says where its payload is.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path
from typing import Dict, List

import pytest

TESTS = Path(__file__).resolve().parents[1]
for _p in (TESTS, TESTS / "differential"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import cdx_queries  # noqa: E402
import pywb_oracle  # noqa: E402

LOGO = bytes(range(256)) * 8                      # 2048 bytes of "image"
PAGE = b"<html><body>" + b"<p>archived text</p>" * 60 + b"</body></html>"
TINY = b"tiny!"


def _http(status: str, ctype: str, body: bytes, extra=()) -> bytes:
    head = [f"HTTP/1.1 {status}", f"Content-Type: {ctype}", f"Content-Length: {len(body)}", *extra]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def _request(url: str, extra=()) -> bytes:
    host = url.split("/")[2]
    return ("\r\n".join([f"GET /{url.split('/', 3)[3]} HTTP/1.1", f"Host: {host}", *extra]) + "\r\n\r\n").encode()


class Crawler:
    """The capture layer's part, minimally: build the response, ask, write what was decided."""

    def __init__(self, out_dir: Path, prefix: str, dedup) -> None:
        from warchive.warc.writer import WarcWriter

        self.w = WarcWriter(out_dir, prefix=prefix, warcinfo={"dedup": dedup.policy})
        self.dd = dedup
        self.decisions: Dict[str, object] = {}

    def fetch(self, url: str, status: str, ctype: str, body: bytes, date: str, extra=()) -> object:
        resp = self.w.builder.response(url, _http(status, ctype, body, extra), date=date)
        digest = resp.get("WARC-Payload-Digest")
        d = self.dd.decide(url, digest, len(body), ctype, int(status.split()[0]))
        self.decisions[url] = d
        if d.action == "write":
            written = self.w.write(resp)
            self.w.write_request(url, _request(url), date=date, concurrent_to=written.record_id)
            self.dd.written(url, digest, written.date, written.record_id, len(body), int(status.split()[0]))
        elif d.action == "revisit":
            self.w.write_revisit(url, _http(status, ctype, b"", extra), date=date, **d.revisit_kwargs())
        return d

    def not_modified(self, url: str, previous, date: str) -> object:
        from warchive.capture.dedup import conditional_headers

        cond = conditional_headers(previous)
        assert cond, "the previous capture gives a conditional request"
        d = self.dd.not_modified(url, 304, previous)
        self.decisions[url + " 304"] = d
        head = ("HTTP/1.1 304 Not Modified\r\nETag: " + previous.etag + "\r\n\r\n").encode()
        self.w.write_revisit(url, head, date=date, **d.revisit_kwargs())
        return d

    def close(self) -> List[str]:
        return self.w.close()


@pytest.fixture(scope="module")
def crawls(tmp_path_factory):
    from warchive.capture.dedup import Deduplicator, PreviousCapture
    from warchive.capture.digest_index import DigestIndex

    root = tmp_path_factory.mktemp("dedupcrawls")
    ixdir = root / "digests"
    with DigestIndex(ixdir) as ix:
        c1 = Crawler(root / "warcs", "CRAWLONE", Deduplicator(ix, "revisit"))
        c1.fetch("http://a.example/logo.png", "200 OK", "image/png", LOGO, "2024-01-01T00:00:01Z")
        c1.fetch("http://a.example/page", "200 OK", "text/html", PAGE, "2024-01-01T00:00:02Z",
                 extra=['ETag: "v1"', "Last-Modified: Mon, 01 Jan 2024 00:00:00 GMT"])
        c1.fetch("http://mirror.example/logo-copy.png", "200 OK", "image/png", LOGO, "2024-01-01T00:00:03Z")
        c1.fetch("http://a.example/tiny1", "200 OK", "text/plain", TINY, "2024-01-01T00:00:04Z")
        c1.fetch("http://a.example/tiny2", "200 OK", "text/plain", TINY, "2024-01-01T00:00:05Z")
        c1.fetch("http://a.example/gone", "404 Not Found", "text/html", PAGE, "2024-01-01T00:00:06Z")
        files1 = c1.close()
    page1 = c1.decisions["http://a.example/page"]
    with DigestIndex(ixdir) as ix:                       # the next crawl: the index from disk
        c2 = Crawler(root / "warcs", "CRAWLTWO", Deduplicator(ix, "revisit"))
        c2.fetch("http://c.example/logo.png", "200 OK", "image/png", LOGO, "2024-02-01T00:00:01Z")
        c2.fetch("http://a.example/page", "200 OK", "text/html", PAGE, "2024-02-01T00:00:02Z",
                 extra=['ETag: "v1"', "Last-Modified: Mon, 01 Jan 2024 00:00:00 GMT"])
        skipper = Crawler(root / "warcs", "CRAWLSKIP", Deduplicator(ix, "skip"))
        skipper.fetch("http://d.example/logo.png", "200 OK", "image/png", LOGO, "2024-02-01T00:00:03Z")
        skipper.close()
        # the session database remembers crawl 1's page: ask again conditionally, get a 304
        from warcio.archiveiterator import ArchiveIterator
        prev = None
        for f in files1:
            with open(f, "rb") as fh:
                for rec in ArchiveIterator(fh):
                    if rec.rec_type == "response" and rec.rec_headers.get_header("WARC-Target-URI") == \
                            "http://a.example/page":
                        prev = PreviousCapture(url="http://a.example/page", date=rec.rec_headers.get_header("WARC-Date"),
                                               record_id=rec.rec_headers.get_header("WARC-Record-ID"),
                                               digest=rec.rec_headers.get_header("WARC-Payload-Digest"),
                                               etag=rec.http_headers.get_header("ETag"),
                                               last_modified=rec.http_headers.get_header("Last-Modified"))
        assert prev is not None and page1.action == "write"
        c2.not_modified("http://a.example/page", prev, "2024-03-01T00:00:00Z")
        files2 = c2.close()
    coll = root / "coll"
    (coll / "archive").mkdir(parents=True)
    (coll / "indexes").mkdir()
    warcs = sorted(Path(p) for p in files1 + files2)
    for w in warcs:
        os.symlink(w, coll / "archive" / w.name)
    cdx_queries.warchive_index([coll / "archive" / w.name for w in warcs], coll / "indexes" / "index.cdxj")
    return {"root": root, "coll": coll, "warcs": warcs, "c1": c1, "c2": c2, "skipper": skipper, "prev": prev}


def _records(warcs) -> List[dict]:
    from warcio.archiveiterator import ArchiveIterator

    out = []
    for w in warcs:
        with open(w, "rb") as fh:
            for rec in ArchiveIterator(fh):
                h = rec.rec_headers
                out.append({k: h.get_header(k) for k in (
                    "WARC-Type", "WARC-Target-URI", "WARC-Date", "WARC-Record-ID", "WARC-Payload-Digest",
                    "WARC-Profile", "WARC-Refers-To", "WARC-Refers-To-Target-URI", "WARC-Refers-To-Date")})
    return out


def test_what_was_written(crawls):
    recs = _records(crawls["warcs"])
    by = {}
    for r in recs:
        by.setdefault((r["WARC-Type"], r["WARC-Target-URI"]), []).append(r)
    logo = by[("response", "http://a.example/logo.png")][0]
    page = by[("response", "http://a.example/page")][0]
    ident = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
    for url, orig in (("http://mirror.example/logo-copy.png", logo), ("http://c.example/logo.png", logo)):
        (rv,) = by[("revisit", url)]
        assert rv["WARC-Profile"] == ident
        assert (rv["WARC-Refers-To"], rv["WARC-Refers-To-Target-URI"], rv["WARC-Refers-To-Date"]) == \
            (orig["WARC-Record-ID"], orig["WARC-Target-URI"], orig["WARC-Date"])
        assert rv["WARC-Payload-Digest"] == orig["WARC-Payload-Digest"]
    same_url = [r for r in by[("revisit", "http://a.example/page")] if r["WARC-Profile"] == ident]
    assert len(same_url) == 1 and same_url[0]["WARC-Refers-To"] == page["WARC-Record-ID"]
    (nm,) = [r for r in by[("revisit", "http://a.example/page")] if r["WARC-Profile"] != ident]
    assert nm["WARC-Profile"] == "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
    assert (nm["WARC-Refers-To"], nm["WARC-Refers-To-Date"]) == (page["WARC-Record-ID"], page["WARC-Date"])
    # below the minimum size and not 2xx: written in full; skipped: nowhere
    assert len(by[("response", "http://a.example/tiny1")]) == len(by[("response", "http://a.example/tiny2")]) == 1
    assert len(by[("response", "http://a.example/gone")]) == 1
    assert not any(r["WARC-Target-URI"] == "http://d.example/logo.png" for r in recs)
    skipped = crawls["skipper"].decisions["http://d.example/logo.png"].skipped_fields()
    assert (skipped["original_uri"], skipped["original_record_id"]) == ("http://a.example/logo.png",
                                                                        logo["WARC-Record-ID"])


def test_warcio_checks_the_files(crawls):
    import subprocess

    for w in crawls["warcs"]:
        r = subprocess.run([sys.executable, "-m", "warcio.cli", "check", str(w)], capture_output=True, text=True)
        if "No module named" in r.stderr:
            r = subprocess.run(["warcio", "check", str(w)], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr


REVISITS = [  # (url, timestamp, payload expected, content type)
    ("http://mirror.example/logo-copy.png", "20240101000003", LOGO, "image/png"),
    ("http://c.example/logo.png", "20240201000001", LOGO, "image/png"),
    ("http://a.example/page", "20240201000002", PAGE, "text/html"),
]
ORIGINALS = [
    ("http://a.example/logo.png", "20240101000001", LOGO, "image/png"),
    ("http://a.example/tiny2", "20240101000005", TINY, "text/plain"),
]


def test_warchive_replays_the_revisits(crawls):
    from warchive.replay.load import CaptureLoader

    with CaptureLoader(str(crawls["coll"])) as loader:
        for url, ts, body, ctype in REVISITS + ORIGINALS:
            with loader.load_closest(url, ts) as cap:
                assert cap.cdx["timestamp"] == ts, (url, cap.cdx)       # the revisit itself, not a fallback
                assert (cap.status, cap.read()) == (200, body), url
                assert cap.headers.get("Content-Type") == ctype
        with loader.load_closest("http://a.example/page", "20240301000000") as cap:
            assert cap.status == 304 and cap.read() == b""
        with pytest.raises(Exception):
            loader.load_closest("http://d.example/logo.png", "20240201000003", fuzzy=False)


def test_warchive_load_command(crawls):
    import subprocess

    r = subprocess.run([sys.executable, "-m", "warchive", "load", "http://c.example/logo.png", "20240201000001",
                        str(crawls["coll"]), "-o", str(crawls["root"] / "out.bin")], capture_output=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(b"HTTP/1.1 200 OK\r\n")
    assert (crawls["root"] / "out.bin").read_bytes() == LOGO


def _pywb(crawls, requests):
    pywb_oracle.require_pywb()
    coll = crawls["coll"]
    return pywb_oracle.pywb_load(sorted((coll / "archive").iterdir()), [coll / "indexes" / "index.cdxj"],
                                 requests, coll="coll")


def test_pywb_replays_the_revisits(crawls):
    from warcio.recordloader import ArcWarcRecordLoader
    import io

    cases = REVISITS + ORIGINALS
    reqs: List[dict] = []
    for url, ts, _, _ in cases:
        reqs += [{"url": url, "closest": ts}, {"replay": f"{ts}id_/{url}", "accept_encoding": "gzip"}]
    answers = _pywb(crawls, reqs)
    for i, (url, ts, body, ctype) in enumerate(cases):
        res, rep = answers[2 * i], answers[2 * i + 1]
        assert res["status"] == 200, (url, res)
        served = dict((k.lower(), v) for k, v in res["headers"])["warcserver-cdx"]
        assert served.split(" ", 2)[1] == ts, (url, served)             # pywb served the revisit itself
        rec = ArcWarcRecordLoader().parse_record_stream(io.BytesIO(base64.b64decode(res["body"])))
        assert rec.raw_stream.read() == body, url
        assert rep["status"] == 200, (url, rep["status"])
        assert base64.b64decode(rep["body"]) == body, url
        hs = {k.lower(): v for k, v in rep["headers"]}
        assert hs.get("content-type") == ctype, (url, hs)


def test_pywb_loader_and_warchive_agree_on_every_line(crawls):
    """pywb's loader on each index line (304 revisit included) against load_capture."""
    from warchive.replay.load import CaptureLoader

    lines = [ln for ln in (crawls["coll"] / "indexes" / "index.cdxj").read_text().splitlines() if ln]
    answers = _pywb(crawls, [{"cdx": ln} for ln in lines])
    revisits = 0
    with CaptureLoader(str(crawls["coll"])) as loader:
        for line, ans in zip(lines, answers):
            assert ans["ok"], (line, ans.get("error"))
            with loader.load(line, dechunk=False) as cap:
                assert base64.b64decode(ans["payload"]) == cap.read(), line
                revisits += json.loads(line.split(" ", 2)[2]).get("mime") == "warc/revisit"
    assert revisits == 4


def test_skips_are_listed_by_warchive_session_skipped(crawls, tmp_path):
    """A skip decision recorded in the session database (``warchive.capture.session.SessionDB``) is listed
    by ``warchive session skipped`` with the capture that holds the payload."""
    import subprocess

    session_db = pytest.importorskip("warchive.capture.session")
    d = crawls["skipper"].decisions["http://d.example/logo.png"]
    journal = tmp_path / "session.jsonl"
    with session_db.SessionDB(journal) as db:
        db.skipped(**d.skipped_fields())
    r = subprocess.run([sys.executable, "-m", "warchive", "session", "skipped", str(journal)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "http://d.example/logo.png" in r.stdout and "duplicate" in r.stdout
    assert "http://a.example/logo.png" in r.stdout
