"""The crawl log: Heritrix's column layout, parsing lines shaped as Heritrix writes them, round trips,
and the append-only writer."""

from __future__ import annotations

import threading
from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warchive.capture.crawl_log import (CrawlLog, CrawlLogEntry, CrawlLogError, format_line, parse_line, read_log,
                                        sha1_label)
from warchive.capture.fetch import FetchResult


def epoch(y, mo, d, h, mi, s, ms=0):
    return datetime(y, mo, d, h, mi, s, tzinfo=timezone.utc).timestamp() + ms / 1000


# Lines laid out column by column as Heritrix 3's crawl.log documentation describes them (status
# right-aligned in 5 columns, size in 10, thread as #NNN, fetch time as 17 digits + duration).
HERITRIX_LINES = [
    "2024-03-05T10:11:12.345Z   200      38617 http://www.example.test/ - - text/html #009 "
    "20240305101111972+373 sha1:XR5G6T3VHEN6FUQO6AOAVYA3TM5CPXLG - -",
    "2024-03-05T10:11:10.868Z     1         58 dns:www.example.test P http://www.example.test/ text/dns #046 "
    "20240305101110681+155 sha1:UGV3RUJBJFDS5BKPPXM2CGLXSQ5ZHAU6 - content-size:58",
    "2024-03-05T10:11:13.001Z   404        209 http://www.example.test/robots.txt P http://www.example.test/ "
    "text/html #009 20240305101112902+88 sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ - -",
    "2024-03-05T10:11:14.500Z -9998          - http://www.example.test/private/ L http://www.example.test/ "
    "no-type #012 - - - -",
    "2024-03-05T10:11:15.020Z   200       4242 http://www.example.test/a.png LE http://www.example.test/p "
    "image/png #003 20240305101114990+29 sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA seed-1 duplicate:digest,3t",
    "2024-03-05T10:11:16.000Z    -6          - http://nx.example.test/ - - no-type #001 - - - -",
    "2024-03-05T10:11:17.250Z   301          0 http://www.example.test/old L http://www.example.test/ "
    "text/html #004 20240305101117200+50 sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ - - "
    '{"warcFilename":"WEB-20240305-00001.warc.gz","warcFileOffset":1234}',
]


def test_parse_heritrix_lines():
    e = parse_line(HERITRIX_LINES[0])
    assert (e.status, e.size, e.uri, e.hop_path, e.via, e.mime, e.thread) == \
        (200, 38617, "http://www.example.test/", "", None, "text/html", 9)
    assert e.logged == pytest.approx(epoch(2024, 3, 5, 10, 11, 12, 345))
    assert e.fetch_begin == pytest.approx(epoch(2024, 3, 5, 10, 11, 11, 972)) and e.duration_ms == 373
    assert e.digest == "sha1:XR5G6T3VHEN6FUQO6AOAVYA3TM5CPXLG" and e.source is None and e.annotations == []
    dns = parse_line(HERITRIX_LINES[1])
    assert dns.status == 1 and dns.hop_path == "P" and dns.annotations == ["content-size:58"]
    blocked = parse_line(HERITRIX_LINES[3])
    assert blocked.status == -9998 and blocked.size is None and blocked.mime is None and blocked.fetch_begin is None
    emb = parse_line(HERITRIX_LINES[4])
    assert emb.source == "seed-1" and emb.annotations == ["duplicate:digest", "3t"] and emb.hop_path == "LE"
    assert parse_line(HERITRIX_LINES[6]).extra.startswith('{"warcFilename"')


@pytest.mark.parametrize("line", HERITRIX_LINES)
def test_heritrix_lines_round_trip_byte_for_byte(line):
    assert format_line(parse_line(line)) == line + "\n"


def test_columns():
    e = CrawlLogEntry(status=200, uri="http://a.test/x", size=1288, hop_path="LLE", via="http://a.test/",
                      mime="text/html; charset=UTF-8", thread=5, fetch_begin=epoch(2024, 1, 1, 12, 0, 0, 123),
                      duration_ms=45, digest="sha1:2SAWDDZYR4PAA3XZPQXVFFSLVJ4HOQEE",
                      annotations=["3t", "politeness:crawl-delay:1.000s:1.002s"], logged=epoch(2024, 1, 1, 12, 0, 0, 168))
    line = format_line(e)
    assert line == ("2024-01-01T12:00:00.168Z   200       1288 http://a.test/x LLE http://a.test/ text/html #005 "
                    "20240101120000123+45 sha1:2SAWDDZYR4PAA3XZPQXVFFSLVJ4HOQEE - 3t,politeness:crawl-delay:1.000s:1.002s\n")
    assert line[25:30] == "  200" and line[31:41] == "      1288"
    wide = format_line(CrawlLogEntry(status=-9998, uri="u", size=12345678901, logged=0))
    assert wide.startswith("1970-01-01T00:00:00.000Z -9998 12345678901 u - - no-type #000 - - - -")


def test_fields_never_split_the_line():
    e = CrawlLogEntry(status=200, uri="http://a.test/a b", via="http://a.test/\n", annotations=["x y", "p,q"],
                      logged=0)
    line = format_line(e)
    assert line.count("\n") == 1 and len(line.split()) == 12
    back = parse_line(line)
    assert back.uri == "http://a.test/a%20b" and back.annotations == ["x%20y", "p%2Cq"]


@pytest.mark.parametrize("bad", ["", "2024-01-01T00:00:00.000Z 200 1 u", "not-a-time 200 1 u - - x #001 - - - -",
                                 "2024-01-01T00:00:00.000Z abc 1 u - - x #001 - - - -",
                                 "2024-01-01T00:00:00.000Z 200 1 u - - x 001 - - - -",
                                 "2024-01-01T00:00:00.000Z 200 1 u - - x #001 2024+5 - - -"])
def test_bad_lines(bad):
    with pytest.raises(CrawlLogError):
        parse_line(bad)


# a field of just "-" is Heritrix's "none" and reads back as None (tested in test_parse_heritrix_lines)
field_text = st.text(st.characters(min_codepoint=33, max_codepoint=0x2FFF, blacklist_characters=",%"),
                     min_size=1, max_size=20).filter(lambda v: v != "-")


@settings(max_examples=300, deadline=None)
@given(status=st.integers(-10000, 99999), size=st.none() | st.integers(0, 10**12), uri=field_text,
       hop=st.text("LERXPI", max_size=8), via=st.none() | field_text, thread=st.integers(0, 999),
       begin_ms=st.none() | st.integers(0, 4 * 10**12), dur=st.integers(0, 10**7),
       digest=st.none() | field_text, source=st.none() | field_text, ann=st.lists(field_text, max_size=4),
       logged_ms=st.integers(0, 4 * 10**12))
def test_round_trip(status, size, uri, hop, via, thread, begin_ms, dur, digest, source, ann, logged_ms):
    e = CrawlLogEntry(status=status, uri=uri, size=size, hop_path=hop, via=via, mime="text/html", thread=thread,
                      fetch_begin=None if begin_ms is None else begin_ms / 1000,
                      duration_ms=None if begin_ms is None else dur, digest=digest, source=source,
                      annotations=ann, logged=logged_ms / 1000)
    line = format_line(e)
    back = parse_line(line)
    assert format_line(back) == line
    assert (back.status, back.size, back.uri, back.hop_path, back.via, back.thread, back.digest, back.source,
            back.annotations) == (status, size, uri, hop, via, thread, digest, source, ann)
    assert round(back.logged * 1000) == logged_ms
    if begin_ms is not None:
        assert round(back.fetch_begin * 1000) == begin_ms and back.duration_ms == dur


def test_writer_appends_whole_lines(tmp_path):
    path = tmp_path / "crawl.log"
    path.write_text(HERITRIX_LINES[0] + "\n")
    with CrawlLog(path) as log:
        def worker(k):
            for i in range(200):
                log.write(CrawlLogEntry(status=200, uri=f"http://t{k}.test/{i}", size=i, thread=k))
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        # line-buffered: each line is in the file before the next write, without flush()
        assert path.read_text().count("\n") == 801
    entries = list(read_log(path))
    assert len(entries) == 801 and entries[0].uri == "http://www.example.test/"
    assert sorted(e.uri for e in entries[1:]) == sorted(f"http://t{k}.test/{i}" for k in range(4) for i in range(200))


def test_torn_last_line_is_ignored(tmp_path):
    path = tmp_path / "crawl.log"
    path.write_text(HERITRIX_LINES[0] + "\n" + HERITRIX_LINES[1][:40])
    assert [e.status for e in read_log(path)] == [200]
    path.write_text(HERITRIX_LINES[0] + "\ngarbage\n" + HERITRIX_LINES[2] + "\n")
    with pytest.raises(CrawlLogError, match="line 2"):
        list(read_log(path))
    assert [e.status for e in read_log(path, skip_errors=True)] == [200, 404]


def test_entry_from_fetch():
    body = b"<html>hello</html>"
    raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 18\r\n\r\n" + body
    head = len(raw) - len(body)
    r = FetchResult(url="http://a.test/", method="GET", request=b"GET / HTTP/1.1\r\n\r\n", response=raw, status=200,
                    headers=[("Content-Type", "text/html; charset=utf-8")], head_length=head,
                    started=epoch(2024, 1, 1, 0, 0, 0, 250), duration=0.0421, truncated="length")
    e = CrawlLogEntry.from_fetch(r, hop_path="L", via="http://a.test/seed", thread=7, annotations=["2t"])
    # the digest of the payload, by hand: SHA-1 in RFC 4648 base32
    import base64
    import hashlib
    assert e.digest == "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode() == sha1_label(body)
    assert (e.status, e.size, e.mime, e.thread, e.duration_ms) == (200, 18, "text/html", 7, 42)
    assert e.annotations == ["2t", "lenTrunc"]
    assert " 20240101000000250+42 " in format_line(e)
    failed = FetchResult(url="http://b.test/", method="GET", status=-6, error="b.test: no address")
    f = CrawlLogEntry.from_fetch(failed)
    assert (f.size, f.digest, f.fetch_begin, f.annotations) == (None, None, None, ["err=dns"])


def test_entry_from_dns():
    from warchive.capture.resolve import DnsFacts
    facts = DnsFacts("a.test", ["10.0.0.1", "::1"], epoch(2024, 1, 1, 0, 0, 1, 5), 0.012)
    e = CrawlLogEntry.from_dns(facts, via="http://a.test/", thread=2)
    block = b"20240101000001\na.test.\t0\tIN\tA\t10.0.0.1\na.test.\t0\tIN\tAAAA\t::1\n"
    assert facts.record_block() == block
    assert (e.status, e.uri, e.size, e.hop_path, e.mime, e.digest) == (1, "dns:a.test", len(block), "P", "text/dns",
                                                                      sha1_label(block))
    assert " 20240101000001005+12 " in format_line(e)


def test_frontier_ledger_annotation_round_trips():
    """The politeness ledger entry the frontier hands out is written and read back as one annotation."""
    from warchive.capture.politeness import LedgerEntry
    led = LedgerEntry(host="com,example,", url="http://example.com/", required=5.0, waited=5.25,
                      reason="crawl-delay", not_before=0.0, issued=0.0)
    first = LedgerEntry(host="com,example,", url="http://example.com/", required=0.0, waited=None,
                        reason="first", not_before=0.0, issued=0.0)
    e = CrawlLogEntry(status=200, uri="http://example.com/", annotations=["2t", led.annotation(), first.annotation()],
                      logged=0)
    back = parse_line(format_line(e))
    assert back.annotations == ["2t", "politeness:crawl-delay:5.000s:5.250s", "politeness:first:0.000s:-s"]
