"""warchive.replay.memento on its own: the datetimes against RFC 7231/7089 examples and the
standard library, every Link header and TimeMap read back with an RFC 8288 link-value parser
written here from the grammar (not from the module), navigation and paging against what a list
of captures says, and the JSON/CDXJ TimeMaps against the CDX API's own answer. What pywb has is
compared with pywb in tests/differential/test_memento_vs_pywb.py."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from email.utils import formatdate, parsedate_to_datetime
from typing import Dict, List, Optional, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warchive.index.capture import Capture, Origin
from warchive.replay.memento import (DEFAULT_PAGE_SIZE, LINK_FORMAT, MementoError, Timeline, frame_headers, http_date,
                                     memento_headers, memento_link, parse_accept_datetime, redirect_headers,
                                     timemap_cdxj, timemap_headers, timemap_json, timemap_link,
                                     warc_date_http_date)
from warchive.replay.urls import UrlRewriter

PREFIX = "http://localhost:8080/web/"
ORIGIN = Origin("web/indexes/index.cdxj", "web", access="allow")

# --------------------------------------------------------------------------- RFC 8288 link-values, read from the grammar

TOKEN = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
QUOTED = r'"(?:[^"\\]|\\.)*"'
LINK_VALUE = re.compile(r"<([^>]*)>((?:[ \t]*;[ \t]*" + TOKEN + r"(?:[ \t]*=[ \t]*(?:" + TOKEN + "|" + QUOTED + r"))?)*)")
PARAM = re.compile(r"[ \t]*;[ \t]*(" + TOKEN + r")(?:[ \t]*=[ \t]*(" + TOKEN + "|" + QUOTED + "))?")
IMF_FIXDATE = re.compile(r"(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
                         r"[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT")


def links(value: str, sep: str = ",") -> List[Tuple[str, Dict[str, str]]]:
    """Every link-value of a Link header (or of a link-format body, ``sep`` ",\\n") as
    (URI, params); fails unless the whole value is link-values joined by ``sep``."""
    out = []
    pos = 0
    while True:
        m = LINK_VALUE.match(value, pos)
        assert m, f"not a link-value at {pos}: {value[pos:pos + 80]!r}"
        params = {}
        for p in PARAM.finditer(m.group(2)):
            v = p.group(2) or ""
            params[p.group(1).lower()] = v[1:-1] if v.startswith('"') else v
        out.append((m.group(1), params))
        pos = m.end()
        if pos == len(value):
            return out
        assert value.startswith(sep, pos), value[pos:pos + 40]
        pos += len(sep)
        while value[pos:pos + 1] in (" ", "\t") and sep == ",":
            pos += 1


def by_rel(parsed) -> Dict[str, List[Tuple[str, Dict[str, str]]]]:
    out: Dict[str, list] = {}
    for uri, params in parsed:
        out.setdefault(params["rel"], []).append((uri, params))
    return out


def cap(ts: str, url: str = "http://example.com/", status: str = "200", origin: Optional[Origin] = ORIGIN) -> Capture:
    fields = {"url": url, "mime": "text/html", "status": status, "digest": "sha1:AAAA", "length": "10",
              "offset": "0", "filename": "a.warc.gz"}
    return Capture(f"com,example)/ {ts} {json.dumps(fields)}".encode(), origin)


TIMES = ["20190304050607", "20200101000000", "20200101000000", "20200101000030", "20200615120000", "20221231235959"]


def timeline(times=TIMES) -> Timeline:
    return Timeline([cap(t) for t in times])


# --------------------------------------------------------------------------- datetimes

@pytest.mark.parametrize("ts, want", [
    ("19941106084937", "Sun, 06 Nov 1994 08:49:37 GMT"),        # RFC 7231's example
    ("20000620180259", "Tue, 20 Jun 2000 18:02:59 GMT"),        # RFC 7089's
    ("2019", "Tue, 31 Dec 2019 23:59:59 GMT"), ("201902", "Thu, 28 Feb 2019 23:59:59 GMT"),
    ("20200230", "Sat, 29 Feb 2020 23:59:59 GMT"), ("20191399999999", "Tue, 31 Dec 2019 23:59:59 GMT"),
])
def test_http_date(ts, want):
    assert http_date(ts) == want
    assert IMF_FIXDATE.fullmatch(want)


@given(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2999, 12, 31)))
def test_http_date_reads_back(dt):
    ts = dt.strftime("%Y%m%d%H%M%S")
    got = http_date(ts)
    assert IMF_FIXDATE.fullmatch(got)
    assert parsedate_to_datetime(got) == dt.replace(microsecond=0, tzinfo=timezone.utc)
    assert parse_accept_datetime(got) == ts


@given(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2999, 12, 31)))
def test_http_date_is_the_standard_librarys(dt):
    ts = dt.strftime("%Y%m%d%H%M%S")
    assert http_date(ts) == formatdate(dt.replace(microsecond=0, tzinfo=timezone.utc).timestamp(), usegmt=True)


def test_warc_date():
    assert warc_date_http_date("2019-03-04T05:06:07Z") == "Mon, 04 Mar 2019 05:06:07 GMT"
    assert warc_date_http_date("2019-03-04T05:06:07.123456Z") == "Mon, 04 Mar 2019 05:06:07 GMT"
    with pytest.raises(ValueError):
        warc_date_http_date("yesterday")


@pytest.mark.parametrize("value, ts", [
    ("Sun, 06 Nov 1994 08:49:37 GMT", "19941106084937"),           # RFC 1123 / IMF-fixdate
    ("Sunday, 06-Nov-94 08:49:37 GMT", "19941106084937"),          # RFC 850
    ("Sun Nov  6 08:49:37 1994", "19941106084937"),                # asctime
    ("sun, 06 nov 1994 08:49:37 gmt", "19941106084937"), ("06 Nov 1994 08:49:37 GMT", "19941106084937"),
    ("Sun, 06 Nov 1994 08:49 GMT", "19941106084900"), ("  Sun, 06 Nov 1994 08:49:37 GMT ", "19941106084937"),
    ("Sun, 06 Nov 1994 08:49:37 +0200", "19941106064937"), ("Sun, 06 Nov 1994 23:49:37 -0500", "19941107044937"),
    ("Sun, 06 Nov 1994 08:49:37 EST", "19941106134937"), ("Sat, 01 Jan 0994 00:00:00 GMT", "09940101000000"),
])
def test_accept_datetime(value, ts):
    assert parse_accept_datetime(value) == ts


@pytest.mark.parametrize("value", ["", "2019", "20190101", "1994-11-06T08:49:37Z", "Sun, 06 Nov 1994",
                                   "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT",
                                   "Sun, 06 Nov 1994 08:49:37.5 GMT", "garbage", "Fri, 31 Dec 9999 23:00:00 -0500",
                                   "Sun, 06 Nov 99999 08:49:37 GMT"])
def test_accept_datetime_refused(value):
    with pytest.raises(MementoError) as e:
        parse_accept_datetime(value)
    assert isinstance(e.value, ValueError) and repr(value) in str(e.value)


# --------------------------------------------------------------------------- the timeline

def test_timeline_neighbours():
    t = Timeline([cap(x) for x in reversed(TIMES)])
    assert [c.timestamp for c in t] == sorted(TIMES)
    assert (t.first.timestamp, t.last.timestamp) == (TIMES[0], TIMES[-1])
    prev, nxt = t.neighbours("20200101000000")
    assert (prev.timestamp, nxt.timestamp) == ("20190304050607", "20200101000030")
    assert t.neighbours(TIMES[0])[0] is None and t.neighbours(TIMES[-1])[1] is None
    assert t.neighbours("2020")[1].timestamp == "20200101000000"   # between captures
    assert Timeline([]).first is None and Timeline([]).neighbours("2020") == (None, None)


# --------------------------------------------------------------------------- Link headers

def test_memento_link():
    t = timeline()
    current = t.captures[4]   # 20200615120000
    value = memento_link(t, current, PREFIX)
    parsed = links(value)
    rels = by_rel(parsed)
    assert [p["rel"] for _, p in parsed] == ["original", "timegate", "timemap", "memento", "first memento",
                                             "prev memento", "next memento", "last memento"]
    assert rels["original"][0][0] == "http://example.com/"
    assert rels["timegate"][0][0] == PREFIX + "http://example.com/"
    assert rels["timemap"][0] == (PREFIX + "timemap/link/http://example.com/", {"rel": "timemap", "type": LINK_FORMAT})
    for rel, ts in (("memento", "20200615120000"), ("first memento", TIMES[0]), ("prev memento", "20200101000030"),
                    ("next memento", TIMES[-1]), ("last memento", TIMES[-1])):
        uri, params = rels[rel][0]
        assert uri == f"{PREFIX}{ts}mp_/http://example.com/"
        assert parsedate_to_datetime(params["datetime"]).strftime("%Y%m%d%H%M%S") == ts
        assert params["collection"] == "web"


def test_first_and_last_memento_have_no_prev_or_next():
    t = timeline()
    first = [p["rel"] for _, p in links(memento_link(t, t.captures[0], PREFIX))]
    assert "prev memento" not in first and first[-3:] == ["first memento", "next memento", "last memento"]
    last = [p["rel"] for _, p in links(memento_link(t, t.captures[-1], PREFIX, replay_mod=""))]
    assert "next memento" not in last and last[-3:] == ["first memento", "prev memento", "last memento"]
    one = Timeline([cap("2020")])
    assert [p["rel"] for _, p in links(memento_link(one, one.captures[0], PREFIX))][-2:] == ["first memento", "last memento"]


def test_memento_headers():
    t = timeline()
    rw = UrlRewriter("20200615mp_/http://example.com/", PREFIX, rel_prefix="/web/")
    got = memento_headers(t, t.captures[4], rw, warc_date="2020-06-15T12:00:00.5Z")
    assert [k for k, _ in got] == ["Memento-Datetime", "Link", "Content-Location"]
    assert got[0][1] == "Mon, 15 Jun 2020 12:00:00 GMT"
    assert got[2][1] == PREFIX + "20200615120000mp_/http://example.com/"
    tg = memento_headers(t, t.captures[-1], UrlRewriter("id_/http://example.com/", PREFIX), timegate=True)
    assert [k for k, _ in tg] == ["Memento-Datetime", "Link", "Vary", "Content-Location"]
    assert tg[2][1] == "accept-datetime" and tg[3][1] == PREFIX + TIMES[-1] + "id_/http://example.com/"


def test_a_line_naming_its_own_timestamp_is_a_memento_of_that_time():
    # pywb reads a CDXJ line's JSON over its columns (R14): the capture is of the JSON's time,
    # the time the redirect to the exact memento names and the request then asks for
    fields = {"url": "http://example.com/", "timestamp": "20200101000030", "status": "200"}
    c = Capture(f"com,example)/ 20990101000000 {json.dumps(fields)}".encode(), ORIGIN)
    t = Timeline([cap(TIMES[0]), c, cap(TIMES[-1])])
    assert [x is c for x in t.captures] == [False, True, False]
    r = redirect_headers(t, c, UrlRewriter("mp_/http://example.com/", PREFIX))
    assert r[0] == ("Location", PREFIX + "20200101000030mp_/http://example.com/")
    got = dict(memento_headers(t, c, UrlRewriter("20200101000030mp_/http://example.com/", PREFIX)))
    assert got["Memento-Datetime"] == "Wed, 01 Jan 2020 00:00:30 GMT"
    assert got["Content-Location"] == PREFIX + "20200101000030mp_/http://example.com/"
    rels = by_rel(links(got["Link"]))
    assert rels["prev memento"][0][0] == PREFIX + TIMES[0] + "mp_/http://example.com/"
    assert rels["next memento"][0][0] == PREFIX + TIMES[-1] + "mp_/http://example.com/"


def test_frame_and_redirect_headers():
    t = timeline()
    frame = frame_headers(t, t.captures[1], UrlRewriter("http://example.com", PREFIX), timegate=True)
    assert [k for k, _ in frame] == ["Link", "Vary"]
    rels = by_rel(links(frame[0][1]))
    assert rels["original"][0][0] == "http://example.com"   # the requested URL, as pywb
    assert "collection" not in rels["memento"][0][1] and rels["first memento"][0][1]["collection"] == "web"
    assert [k for k, _ in frame_headers(t, t.captures[1], UrlRewriter("2020/http://example.com/", PREFIX))] == \
        ["Memento-Datetime", "Link"]
    r = redirect_headers(t, t.captures[-1], UrlRewriter("mp_/http://example.com/", PREFIX), timegate=True)
    assert r[:2] == [("Location", PREFIX + TIMES[-1] + "mp_/http://example.com/"), ("Content-Length", "0")]
    assert [k for k, _ in r] == ["Location", "Content-Length", "Link", "Vary"]
    inexact = redirect_headers(t, t.captures[4], UrlRewriter("2020mp_/http://example.com/", PREFIX))
    assert inexact[2] == ("Link", '<http://example.com/>; rel="original"') and len(inexact) == 3


def test_timemap_headers():
    got = timemap_headers(UrlRewriter("http://example.com/", PREFIX), "json")
    assert got[0] == ("Content-Type", "text/x-ndjson")
    assert [p["rel"] for _, p in links(got[1][1])] == ["original", "timegate", "timemap"]


@settings(max_examples=200)
@given(st.lists(st.sampled_from(TIMES + ["2021", "20210101000000"]), min_size=1, max_size=12), st.data())
def test_navigation_agrees_with_the_list(times, data):
    t = timeline(times)
    current = data.draw(st.sampled_from(t.captures))
    rels = by_rel(links(memento_link(t, current, PREFIX)))
    stamps = sorted(c.timestamp for c in t)
    before = [s for s in stamps if s < current.timestamp]
    after = [s for s in stamps if s > current.timestamp]

    def ts_of(rel):
        return [re.match(re.escape(PREFIX) + r"([0-9]*)mp_/", u).group(1) for u, _ in rels.get(rel, [])]
    assert ts_of("first memento") == [stamps[0]] and ts_of("last memento") == [stamps[-1]]
    assert ts_of("prev memento") == before[-1:] and ts_of("next memento") == after[:1]


# --------------------------------------------------------------------------- TimeMaps

def body_links(body: bytes):
    text = body.decode()
    assert text.endswith("\n")
    return links(text[:-1], ",\n")


def test_timemap_link():
    t = timeline()
    body = timemap_link(t.captures, UrlRewriter("http://example.com/", PREFIX))
    parsed = body_links(body)
    assert [p["rel"] for _, p in parsed] == ["self", "timegate", "original"] + ["memento"] * len(TIMES)
    self_uri, self_params = parsed[0]
    assert self_uri == PREFIX + "timemap/link/http://example.com/" and self_params["type"] == LINK_FORMAT
    assert (self_params["from"], self_params["until"]) == (http_date(TIMES[0]), http_date(TIMES[-1]))
    assert [u for u, _ in parsed[3:]] == [f"{PREFIX}{ts}mp_/http://example.com/" for ts in TIMES]
    assert timemap_link([], UrlRewriter("http://example.com/", PREFIX)) is None


def test_timemap_range_in_self():
    t = timeline()
    body = timemap_link(t.captures[1:5], UrlRewriter("2020*2021/http://example.com/", PREFIX))
    assert body_links(body)[0][0] == PREFIX + "timemap/link/2020*2021/http://example.com/"


def follow(captures: List[Capture], page_size: int, url: str = "http://example.com/"):
    """Walk the pages of a TimeMap from its first, answering each page's URL as the server
    would (the captures from its FROM on); returns [(self URI, params, memento URIs)]."""
    pages = []
    path = url
    while True:
        rw = UrlRewriter(path, PREFIX)
        given_caps = [c for c in captures if not rw.page.timestamp or c.timestamp >= rw.page.timestamp]
        parsed = body_links(timemap_link(given_caps, rw, page_size=page_size))
        rels = by_rel(parsed)
        pages.append((parsed[0][0], parsed[0][1], [u for u, _ in rels.get("memento", [])], rels.get("timemap", [])))
        if "timemap" not in rels:
            return pages
        nxt = rels["timemap"][0][0]
        assert nxt.startswith(PREFIX + "timemap/link/")
        path = nxt[len(PREFIX + "timemap/link/"):]


@settings(max_examples=150)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=60), st.integers(0, 9))
def test_paging_covers_every_capture_once(seconds, page_size):
    captures = Timeline([cap(f"202001010000{s:02d}") for s in seconds]).captures
    pages = follow(captures, page_size)
    everything = [u for _, _, mementos, _ in pages for u in mementos]
    assert everything == [f"{PREFIX}{c.timestamp}mp_/http://example.com/" for c in captures]
    if page_size == 0 or len(captures) <= page_size:
        assert len(pages) == 1
    for i, (uri, params, mementos, nxt) in enumerate(pages):
        stamps = [re.search(r"/([0-9]{14})mp_/", m).group(1) for m in mementos]
        assert (params["from"], params["until"]) == (http_date(stamps[0]), http_date(stamps[-1]))
        assert page_size == 0 or len(mementos) <= page_size or len(set(stamps[page_size - 1:])) == 1
        if i + 1 < len(pages):   # a second is never split, and the link tells the next page's extent
            next_stamps = [re.search(r"/([0-9]{14})mp_/", m).group(1) for m in pages[i + 1][2]]
            assert stamps[-1] < next_stamps[0]
            assert (nxt[0][1]["from"], nxt[0][1]["until"]) == (http_date(next_stamps[0]), http_date(next_stamps[-1]))
            assert nxt[0][0] == pages[i + 1][0] and nxt[0][1]["type"] == LINK_FORMAT


def test_paging_keeps_the_range_end():
    captures = Timeline([cap(f"2020010100000{s}") for s in range(6)]).captures
    body = timemap_link(captures[:5], UrlRewriter("*20200101000004/http://example.com/", PREFIX), page_size=2)
    nxt = by_rel(body_links(body))["timemap"][0][0]
    assert nxt == PREFIX + "timemap/link/20200101000002*20200101000004/http://example.com/"


def test_default_page_size_is_generous():
    assert DEFAULT_PAGE_SIZE >= 1000
    captures = Timeline([cap("2020%010d" % i) for i in range(DEFAULT_PAGE_SIZE)]).captures
    assert "timemap" not in by_rel(body_links(timemap_link(captures, UrlRewriter("http://example.com/", PREFIX))))


def test_json_and_cdxj_timemaps_are_the_cdx_api_answer(tmp_path):
    from warchive.index.query import Index
    lines = [cap(t, origin=None).line for t in TIMES]
    index = tmp_path / "index.cdxj"
    index.write_bytes(b"".join(ln + b"\n" for ln in lines))   # TIMES are in order
    with Index(str(index)) as idx:
        caps = idx.query("http://example.com/")
        assert timemap_json(caps) == idx.answer("url=http://example.com/&output=json").read()
        assert timemap_cdxj(caps) == idx.answer("url=http://example.com/&output=cdxj").read()
    assert timemap_json([]) == b"" == timemap_cdxj([])
