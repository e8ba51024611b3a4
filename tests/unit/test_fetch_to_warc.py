"""From the wire to a WARC file: what the fetcher keeps, written by the writer's RecordBuilder and
read back by the reader, is byte for byte what the test site sent and received; the crawl log's
digest is the record's WARC-Payload-Digest."""

from __future__ import annotations

import asyncio

import pytest

import warchive.warc
from testsite import web_site  # noqa: F401
from warchive.capture.crawl_log import CrawlLogEntry
from warchive.capture.fetch import Fetcher
from warchive.warc.writer import RecordBuilder

PATHS = ["/", "/chunked.html", "/gzip.html", "/gzip-chunked.html", "/close.html", "/redirect", "/img.png",
         "/big.bin"]


@pytest.fixture
def fetched(web_site):
    async def go():
        async with Fetcher(resolver=web_site.resolver(), port_map={80: web_site.port}, max_size=50000,
                           allow_addresses=["127.0.0.1"]) as f:
            return [await f.fetch(f"http://h002.site.test{p}") for p in PATHS]
    return asyncio.run(go())


def test_records_hold_the_exchanged_bytes(tmp_path, web_site, fetched):
    rb = RecordBuilder()
    path = tmp_path / "fetch.warc"
    digests = {}
    with open(path, "wb") as out:
        for r in fetched:
            extra = [("WARC-Truncated", r.truncated)] if r.truncated else None
            resp = rb.response(r.url, r.response, ip=r.ip, extra=extra)
            req = rb.request(r.url, r.request, ip=r.ip, concurrent_to=resp.record_id)
            out.write(resp.to_bytes())
            out.write(req.to_bytes())
            digests[r.url] = resp.get("WARC-Payload-Digest")
            assert CrawlLogEntry.from_fetch(r).digest == digests[r.url], r.url
    sent = {("http://" + h.host + h.target): h for h in web_site.hits()}
    seen = set()
    with warchive.warc.open(path) as records:
        for rec in records:
            hit = sent[rec.target_uri]
            block = rec.block().read()
            if rec.type == "response":
                assert rec.headers.get("WARC-IP-Address") == "127.0.0.1"
                if rec.target_uri.endswith("/big.bin"):
                    assert rec.headers.get("WARC-Truncated") == "length" and hit.response.startswith(block)
                else:
                    assert block == hit.response, rec.target_uri
            else:
                assert block == hit.request
            seen.add((rec.type, rec.target_uri))
    assert len(seen) == 2 * len(PATHS)
