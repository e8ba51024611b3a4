"""Keep-alive in the crawler: a host's connection is reused between its fetches, and
every exchange is still recorded byte for byte (the request and response records hold exactly what
went over that connection for that fetch, as the test server saw it); ``keep_alive=False`` opens a
connection per fetch."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from pathlib import Path

import pytest

from test_crawler import config, make_site, warc_blocks
from warchive.capture.crawler import Crawler


def crawl(tmp_path: Path, keep_alive: bool):
    with make_site() as site:
        coll = tmp_path / ("ka" if keep_alive else "close")
        asyncio.run(Crawler(config(site, keep_alive=keep_alive), str(coll)).run())
        return list(site.hits()), warc_blocks(coll)


@pytest.mark.parametrize("keep_alive", [True, False])
def test_connections_and_exact_bytes(tmp_path: Path, keep_alive: bool) -> None:
    hits, blocks = crawl(tmp_path, keep_alive)
    by_host = defaultdict(list)
    for h in sorted(hits, key=lambda h: h.t):
        by_host[h.host].append(h)
    if keep_alive:
        # a host's next fetch comes over the same connection, unless the response before ended it
        # (HTTP/1.0, Connection: close, a close-delimited body: the standard layout has one)
        new = 0
        for host, hs in by_host.items():
            for a, b in zip(hs, hs[1:]):
                if b.peer != a.peer:
                    new += 1
                    head = a.response.split(b"\r\n\r\n", 1)[0].lower()
                    assert head.startswith(b"http/1.0") or b"connection: close" in head, (host, a.target, head)
        assert new < len(hits) - len(by_host)   # reuse happened
        assert all(b"Connection: keep-alive" in h.request for h in hits)
    else:
        assert len({h.peer for h in hits}) == len(hits)
        assert all(b"Connection: close" in h.request for h in hits)
    sent, received = defaultdict(set), defaultdict(set)   # (host, target) -> bytes the server wrote / read
    for h in hits:
        sent[(h.host, h.target)].add(h.response)
        received[(h.host, h.target)].add(h.request)
    checked = 0
    for rtype, uri, block, _ in blocks:
        if not uri or uri.startswith("dns:"):
            continue
        key = (uri.split("/")[2].split(":")[0], "/" + uri.split("/", 3)[3])
        if rtype == "response":
            assert block in sent[key], uri
            checked += 1
        elif rtype == "request":
            assert block in received[key], uri
            checked += 1
        elif rtype == "revisit":   # the head of what was sent
            assert any(x.startswith(block) for x in sent[key]), uri
    assert checked >= 60
