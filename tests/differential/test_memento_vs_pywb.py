"""warchive.replay.memento against pywb 2.10, asked through tests/pywb_oracle.py.

Two levels:

* pywb's own functions on the same inputs (``pywb_rewrite``): the Memento-Datetime of any
  timestamp and WARC-Date (warcio's converters), Accept-Datetime as ``RewriterApp._check_accept_dt``
  reads it, the Link/Memento-Datetime/Vary fields of ``RewriterApp._add_memento_links`` for a
  memento, a frame and a 307, the archival URLs of Content-Location and Location
  (``UrlRewriter.get_new_url``), and TimeMap bodies (``MementoUtils.make_timemap`` and
  ``wrap_timemap_header``; the warcserver's JSON and CDXJ lines) for generated capture lists;
* pywb's replay app (``FrontEndApp`` through ``pywb_load``) serving the ``timeline`` collection of
  cdx_queries.py framed, frameless and with ``redirect_to_exact``: for mementos, TimeGates (with
  and without Accept-Datetime), frames, inexact timestamps and TimeMaps in the three forms, the
  Memento fields and TimeMap bodies it sends against ours for the capture it serves.

Everything pywb sends must be ours byte for byte, but for what we add (docs/replay.md,
"Memento"): our Link is pywb's followed by ``, `` and the navigation links, which must name the
first, previous, next and last mementos that pywb's own TimeMap lists; our TimeMap's ``self``
line carries ``until`` (the last memento's datetime in pywb's body); and the named differences,
each shown on pywb at the end.
"""

from __future__ import annotations

import base64
import json
import re
from collections import Counter
from datetime import datetime, timedelta
from email.utils import parsedate_tz
from pathlib import Path
from typing import Dict, List, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pywb_oracle
from warchive.index.capture import Capture, Origin
from warchive.replay.memento import (MementoError, Timeline, frame_headers, http_date, memento_headers,
                                     navigation_links, parse_accept_datetime, redirect_headers, timemap_cdxj,
                                     timemap_headers, timemap_json, timemap_link, warc_date_http_date)
from warchive.replay.urls import ArchivalUrl, UrlRewriter

DOCS = Path(__file__).resolve().parents[2] / "docs" / "replay.md"
SEEN: set = set()
FULL = "http://127.0.0.1:8080/coll/"
MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
DAYS = "Mon Tue Wed Thu Fri Sat Sun".split()
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def pywb():
    pywb_oracle.require_pywb()
    with pywb_oracle.pywb_rewrite() as oracle:
        yield oracle


# --------------------------------------------------------------------------- datetimes

TIMESTAMPS = ["19941106084937", "20000620180259", "2019", "201902", "20200230", "20191399999999", "1", "12345",
              "99999999999999", "00000000000000", "18991231235959", "30000101000000", "2020022923", "202002292359",
              "20200229235960", "", "123456789012345", "20201301"]


def test_http_date_like_pywb(pywb):
    stamps = TIMESTAMPS + ["".join(str((i * 7 + j * 3) % 10) for j in range(n)) for n in range(1, 17) for i in range(12)]
    answers = pywb.ask([{"op": "http_date", "timestamp": t} for t in stamps])
    for ts, theirs in zip(stamps, answers):
        assert theirs["ok"], (ts, theirs)
        assert http_date(ts) == theirs["result"], ts


@settings(max_examples=300, **SETTINGS)
@given(st.text("0123456789", max_size=16))
def test_http_date_like_pywb_drawn(pywb, ts):
    assert http_date(ts) == pywb.one({"op": "http_date", "timestamp": ts})["result"]


@settings(max_examples=200, **SETTINGS)
@given(st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2999, 12, 31)),
       st.sampled_from(["%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%d %H:%M:%S", "%Y%m%d%H%M%S"]))
def test_warc_date_like_pywb(pywb, dt, fmt):
    d = dt.strftime(fmt)
    theirs = pywb.one({"op": "http_date", "warc_date": d})
    try:
        mine = warc_date_http_date(d)
    except ValueError:
        assert not theirs["ok"], d
        return
    assert theirs["ok"] and mine == theirs["result"], d


def accept_differs(value: str) -> Optional[str]:
    """The documented difference an Accept-Datetime meets (an independent reading: the e-mail
    date grammar's zone and year)."""
    if not value:
        return "accept-datetime-empty"
    parts = parsedate_tz(value)
    if parts is None:
        return None
    if parts[9]:
        return "accept-datetime-zone"
    if parts[0] < 1000:
        return "accept-datetime-year"
    return None


def check_accept(value: str, theirs: dict) -> None:
    assert theirs["ok"], (value, theirs)
    name = accept_differs(value)
    try:
        mine: Optional[str] = parse_accept_datetime(value)
    except MementoError:
        mine = None
    if name:
        SEEN.add(name)
        if name == "accept-datetime-empty":
            assert theirs["status"] == 200 and theirs["timestamp"] == "" and mine is None
        elif name == "accept-datetime-zone" and theirs["status"] == 200:
            parts = parsedate_tz(value)
            try:
                shifted = datetime.strptime(theirs["timestamp"], "%Y%m%d%H%M%S") - timedelta(seconds=parts[9])
            except OverflowError:   # past 9999 once in UTC
                assert mine is None, value
                return
            assert mine == "%04d%s" % (shifted.year, shifted.strftime("%m%d%H%M%S")), value
        elif name == "accept-datetime-year" and theirs["status"] == 200:
            assert mine == theirs["timestamp"].zfill(14), value
        return
    if theirs["status"] == 400:
        assert mine is None, (value, mine)
    else:
        assert (theirs["status"], theirs["is_timegate"], theirs["type"]) == (200, True, "replay")
        assert mine == theirs["timestamp"], value


def _rfc1123(dt: datetime) -> str:
    return f"{DAYS[dt.weekday()]}, {dt.day:02d} {MONTHS[dt.month - 1]} {dt.year} {dt:%H:%M:%S} GMT"


ACCEPTS = ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
           "sun, 06 nov 1994 08:49:37 gmt", "06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49 GMT",
           "  Sun, 06 Nov 1994 08:49:37 GMT ", "Sun, 06 Nov 1994 08:49:37 +0200", "Sun, 06 Nov 1994 08:49:37 EST",
           "Sun, 06 Nov 1994 08:49:37 -0000", "Sun, 06 Nov 1994 08:49:37 UT", "Sun, 06 Nov 1994 08:49:37 Z",
           "Sat, 01 Jan 0994 00:00:00 GMT", "Sun, 06 Nov 994 08:49:37 GMT", "Sun, 06 Nov 0 08:49:37 GMT",
           "Sun, 06 Nov 99999 08:49:37 GMT", "Fri, 31 Dec 9999 23:00:00 -0500", "", "2019", "20190101",
           "1994-11-06T08:49:37Z", "Sun, 06 Nov 1994", "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT",
           "Sun, 06 Nov 1994 08:61:37 GMT", "Sun, 06 Nov 1994 08:49:60 GMT", "Sun, 06 Nov 1994 08:49:37.5 GMT",
           "garbage", "Xyz, 06 Nov 1994 08:49:37 GMT", "Nov 06 1994 08:49:37", "1994 Nov 06 08:49:37",
           "Sun, 6 Nov 1994 8:9:7 GMT", "Sun, 06 Nov 1994 08.49.37 GMT", "Thu, 29 Feb 2024 12:00:00 GMT",
           "Wed, 29 Feb 2023 12:00:00 GMT", "Mon, 01 Jan 1900 00:00:00 GMT", "Tue, 31 Dec 2999 23:59:59 GMT"]


def test_accept_datetime_like_pywb(pywb):
    values = ACCEPTS + [_rfc1123(datetime(1990, 1, 1) + timedelta(seconds=i * 7919 * 3607)) for i in range(300)]
    answers = pywb.ask([{"op": "accept_datetime", "path": "mp_/http://example.com/", "value": v} for v in values])
    for value, theirs in zip(values, answers):
        check_accept(value, theirs)


PIECES = ["Sun", ",", " ", "06", "6", "Nov", "nov", "1994", "94", "08:49:37", "08:49", "GMT", "+0200", "-", ":",
          "2019", "T", "Z", "EST", "31", "Feb", "25:00:00", "."]


@settings(max_examples=400, **SETTINGS)
@given(st.lists(st.sampled_from(PIECES), max_size=9).map("".join) | st.text(max_size=20))
def test_accept_datetime_like_pywb_drawn(pywb, value):
    if "\x00" in value or any(0xD800 <= ord(c) <= 0xDFFF for c in value):
        return
    check_accept(value, pywb.one({"op": "accept_datetime", "path": "http://example.com/", "value": value}))


def test_a_timestamp_in_the_url_ignores_accept_datetime(pywb):
    """pywb reads Accept-Datetime only on a URL without timestamp, even a malformed one (the
    server must do the same: memento.parse_accept_datetime is for TimeGate requests)."""
    for value in ("garbage", "Sun, 06 Nov 1994 08:49:37 GMT"):
        theirs = pywb.one({"op": "accept_datetime", "path": "2020mp_/http://example.com/", "value": value})
        assert (theirs["status"], theirs["is_timegate"], theirs["timestamp"]) == (200, False, "2020")


# --------------------------------------------------------------------------- Link fields and archival URLs

ORIGIN = Origin("coll/indexes/index.cdxj", "coll", access="allow")
URLS = ["http://example.com/", "https://www.example.com/a/b?c=d&e=f", "http://example.com/caf%C3%A9",
        "http://xn--bcher-kva.de/x", "http://example.com:8080/port", "https://example.com/p?q=a%20b#frag"]


def capture(ts: str, url: str, coll: Optional[str] = "coll") -> Capture:
    fields = {"url": url, "mime": "text/html", "status": "200", "digest": "sha1:AAAA", "length": "1", "offset": "0",
              "filename": "x.warc.gz"}
    origin = Origin("coll/indexes/index.cdxj", coll, access="allow") if coll else None
    return Capture(f"com,example)/ {ts} {json.dumps(fields)}".encode(), origin)


def split_link(value: str) -> List[str]:
    return re.split(r",\s*(?=<)", value)


def check_extends(mine: str, theirs: str, timeline: Timeline, current: Capture, replay_mod: str) -> None:
    """Our Link is pywb's, then exactly our navigation links."""
    assert mine.startswith(theirs), (mine, theirs)
    rest = mine[len(theirs):]
    nav = navigation_links(timeline, current, FULL, replay_mod)
    assert rest == "".join(", " + n for n in nav), rest
    SEEN.add("navigation-links")


@settings(max_examples=150, **SETTINGS)
@given(st.lists(st.sampled_from(["20190304050607", "20200101000000", "20200101000030", "20221231235959", "2021"]),
                min_size=1, max_size=6), st.data(), st.sampled_from(URLS), st.sampled_from(["", "mp_"]),
       st.sampled_from(["", "mp_", "id_", "im_"]), st.booleans(), st.sampled_from(["coll", None]))
def test_memento_fields_like_pywb(pywb, times, data, url, replay_mod, mod, timegate, coll):
    tl = Timeline([capture(t, url, coll) for t in times])
    current = data.draw(st.sampled_from(tl.captures))
    page = f"{mod}/{url}" if timegate else f"{current.timestamp[:8]}{mod}/{url}"
    rw = UrlRewriter(page, FULL, FULL, rel_prefix="/coll/")
    warc_date = data.draw(st.sampled_from([None, "2019-03-04T05:06:07.5Z"]))
    dt = warc_date_http_date(warc_date) if warc_date else http_date(current.timestamp)
    base = dict(op="memento_links", url=url, full_prefix=FULL, memento_ts=current.timestamp, replay_mod=replay_mod)
    asks = [dict(base, memento_dt=dt, is_timegate=timegate, coll=coll, is_memento=True),             # a memento
            dict(base, url=rw.page.url, memento_dt=None, is_timegate=timegate, is_memento=not timegate),   # the frame
            dict(base, memento_dt=dt, is_timegate=True, is_memento=False),                          # a TimeGate's 307
            dict(op="new_url", page=page, prefix=FULL, url=url, timestamp=current.timestamp)]        # Content-Location
    memento, frame, redirect, new_url = pywb.ask(asks)
    mine = memento_headers(tl, current, rw, replay_mod=replay_mod, warc_date=warc_date, timegate=timegate)
    assert [k for k, _ in mine[:-1]] == [k for k, _ in memento["headers"]]
    assert mine[-1] == ("Content-Location", new_url["result"])
    for (k, v), (tk, tv) in zip(mine, memento["headers"]):
        if k == "Link":
            check_extends(v, tv, tl, current, replay_mod)
        else:
            assert (k, v) == (tk, tv)
    mine_frame = frame_headers(tl, current, rw, replay_mod=replay_mod, timegate=timegate)
    assert [k for k, _ in mine_frame] == [k for k, _ in frame["headers"]]
    for (k, v), (tk, tv) in zip(mine_frame, frame["headers"]):
        if k == "Link":
            check_extends(v, tv, tl, current, replay_mod)
        else:
            assert (k, v) == (tk, tv)
    mine_redirect = redirect_headers(tl, current, UrlRewriter(f"{mod}/{url}", FULL), replay_mod=replay_mod,
                                     warc_date=warc_date, timegate=True)
    assert [k for k, _ in mine_redirect[2:]] == [k for k, _ in redirect["headers"]]
    check_extends(mine_redirect[2][1], redirect["headers"][0][1], tl, current, replay_mod)
    assert mine_redirect[3] == tuple(redirect["headers"][1])


def test_location_and_content_location_like_pywb(pywb):
    """Location and Content-Location are pywb's get_new_url of the capture under the request's
    modifier, for requests of every shape."""
    cases = []
    for url in URLS + ["http://b\u00fccher.de/", "example.com/no-scheme"]:
        for page in (f"mp_/{url}", url, f"2020id_/{url}", f"2019im_/{url}", f"20200101000000/{url}"):
            cases.append((page, "20200101000000", "https://example.com/" if "no-scheme" in url else url))
    answers = pywb.ask([dict(op="new_url", page=p, prefix=FULL, url=u, timestamp=t) for p, t, u in cases])
    for (page, ts, url), theirs in zip(cases, answers):
        cur = capture(ts, url)
        tl = Timeline([cur])
        rw = UrlRewriter(page, FULL)
        assert memento_headers(tl, cur, rw)[-1] == ("Content-Location", theirs["result"]), page
        assert redirect_headers(tl, cur, rw)[0] == ("Location", theirs["result"]), page


# --------------------------------------------------------------------------- TimeMap bodies

def with_until(theirs: str, mine: str) -> str:
    """pywb's link TimeMap with our ``until`` put after its ``from``: the last memento's
    datetime of pywb's own body."""
    last = re.findall(r'datetime="([^"]+)"', theirs)[-1]
    first_line, rest = theirs.split("\n", 1)
    assert first_line.endswith('",'), first_line
    SEEN.add("timemap-until")
    return first_line[:-1] + f'; until="{last}",' + "\n" + rest


@settings(max_examples=150, **SETTINGS)
@given(st.lists(st.tuples(st.sampled_from(["20190304050607", "20200101000000", "2021", "20221231235959", "1999"]),
                          st.sampled_from(URLS), st.sampled_from(["coll", "other", None])), min_size=1, max_size=8),
       st.sampled_from(URLS), st.sampled_from(["", "mp_"]))
def test_timemaps_like_pywb(pywb, rows, url, replay_mod):
    caps = Timeline([capture(ts, u, c) for ts, u, c in rows]).captures
    lines = [ln.decode().rstrip("\n") for ln in (timemap_cdxj(caps).splitlines(keepends=True))]
    ask = dict(op="timemap", lines=lines, url=url, full_prefix=FULL, replay_mod=replay_mod)
    link, js, cdxj = pywb.ask([dict(ask, output=o) for o in ("link", "json", "cdxj")])
    rw = UrlRewriter(url, FULL)
    mine = timemap_link(caps, rw, replay_mod=replay_mod).decode()
    assert mine == with_until(link["body"], mine)
    assert timemap_json(caps).decode() == js["body"]
    assert timemap_cdxj(caps).decode() == cdxj["body"]


# --------------------------------------------------------------------------- pywb's replay app

@pytest.fixture(scope="module")
def timeline_coll(tmp_path_factory):
    import cdx_queries
    from test_load_vs_pywb import make_collection
    root = tmp_path_factory.mktemp("mementocoll")
    warcs = root / "warcs"
    warcs.mkdir()
    return make_collection(root, "coll", [cdx_queries.write_timeline(warcs)])


def replay_requests(coll: Path) -> List[dict]:
    from warchive.index.query import Index
    with Index(str(coll)) as idx:
        caps = idx.query(url="example.com/*", matchType="domain")
    urls = sorted({c.url for c in caps if c.url})
    reqs = []
    for u in urls:
        stamps = sorted({c.timestamp for c in caps if c.url == u})
        reqs += [{"replay": f"{ts}mp_/{u}"} for ts in stamps]
        reqs += [{"replay": f"{stamps[0][:4]}mp_/{u}"}, {"replay": f"{stamps[0][:6]}/{u}"}, {"replay": f"mp_/{u}"},
                 {"replay": u}, {"replay": f"{stamps[-1]}/{u}"},
                 {"replay": f"mp_/{u}", "accept_datetime": _rfc1123(datetime.strptime(stamps[0], "%Y%m%d%H%M%S"))},
                 {"replay": f"timemap/link/{u}"}, {"replay": f"timemap/json/{u}"}, {"replay": f"timemap/cdxj/{u}"}]
    return reqs


MEMENTO_FIELDS = ("memento-datetime", "link", "vary", "content-location", "location", "content-length")


def _fields(headers) -> List[tuple]:
    return [(k, v) for k, v in headers if k.lower() in MEMENTO_FIELDS[:5]]


def _pywb_timemap(coll_answers: Dict[str, dict], url: str) -> List[str]:
    """The memento timestamps of pywb's own TimeMap of ``url``, in its order."""
    body = base64.b64decode(coll_answers[f"timemap/link/{url}"]["body"]).decode()
    return re.findall(r'/([0-9]{14})(?:mp_)?/[^>]*>; rel="memento"', body)


def check_navigation(link: str, their_link: str, stamps: List[str], current_ts: str) -> None:
    """Our navigation links name what pywb's TimeMap lists: its first and last memento, and the
    nearest of another second on each side."""
    assert link.startswith(their_link + ", ")
    SEEN.add("navigation-links")
    nav = {}
    for item in split_link(link[len(their_link) + 2:]):
        m = re.fullmatch(r'<[^>]*/([0-9]{14})(?:mp_)?/[^>]*>; rel="(first|prev|next|last) memento"; datetime="([^"]+)"'
                         r'(?:; collection="coll")?', item)
        assert m, item
        assert http_date(m.group(1)) == m.group(3)
        nav[m.group(2)] = m.group(1)
    before = [s for s in stamps if s < current_ts]
    after = [s for s in stamps if s > current_ts]
    want = {"first": stamps[0], "last": stamps[-1]}
    if before:
        want["prev"] = max(before)
    if after:
        want["next"] = min(after)
    assert nav == want, (nav, want)


@pytest.mark.parametrize("config", [{}, {"framed_replay": False}, {"redirect_to_exact": True}],
                         ids=["framed", "frameless", "redirect_to_exact"])
def test_replay_memento_headers_like_pywb(timeline_coll, config):
    from warchive.index.query import Index
    from warchive.replay.load import CaptureLoader
    pywb_oracle.require_pywb()
    archives = sorted((timeline_coll / "archive").iterdir())
    sources = [p for p in (timeline_coll / "indexes").iterdir() if p.suffix == ".cdxj"]
    reqs = replay_requests(timeline_coll)
    answers = pywb_oracle.pywb_load(archives, sources, reqs, coll="coll", config=config)
    by_path = {r["replay"]: a for r, a in zip(reqs, answers) if "accept_datetime" not in r}
    framed = config.get("framed_replay", True)
    exact = bool(config.get("redirect_to_exact"))
    replay_mod = "mp_" if framed else ""
    kinds: Counter = Counter()
    with CaptureLoader(str(timeline_coll)) as loader, Index(str(timeline_coll)) as idx:
        for req, ans in zip(reqs, answers):
            path = req["replay"]
            theirs = _fields(ans["headers"])
            if path.startswith("timemap/"):
                form, url = path.split("/", 2)[1:]
                page = ArchivalUrl.parse(url)
                rw = UrlRewriter(page, FULL, FULL, rel_prefix="/coll/")
                caps = idx.query(url=page.url)
                body = {"link": lambda: timemap_link(caps, rw, replay_mod=replay_mod),
                        "json": lambda: timemap_json(caps), "cdxj": lambda: timemap_cdxj(caps)}[form]()
                assert ans["status"] == 200 and body
                head = timemap_headers(rw, form)
                ctype = dict((k.lower(), v) for k, v in ans["headers"])["content-type"]
                assert head[0] == ("Content-Type", ctype)
                assert [f for f in theirs if f[0] != "Vary"] == head[1:]
                assert ("Vary", "accept-datetime") in theirs   # pywb reads its own timemap URL as a TimeGate's
                SEEN.add("timemap-vary")
                text = base64.b64decode(ans["body"]).decode()
                assert body.decode() == (with_until(text, body.decode()) if form == "link" else text), path
                kinds["timemap " + form] += 1
                continue
            page = ArchivalUrl.parse(path)
            timegate = not page.timestamp
            ts = parse_accept_datetime(req["accept_datetime"]) if req.get("accept_datetime") else page.timestamp
            if ts:
                page = ArchivalUrl(page.url, ts, page.modifier)
            rw = UrlRewriter(page, FULL, FULL, rel_prefix="/coll/")
            with loader.load_closest(page.url, ts or "29991231235959") as cap:
                current = cap.cdx   # the loader's fields of the capture served
                warc_date = cap.warc_headers.get("WARC-Date")
            tl = Timeline(idx.query(url=page.url))
            stamps = _pywb_timemap(by_path, page.url)
            is_frame = framed and page.modifier == ""
            if exact and (timegate or page.timestamp != current["timestamp"]) and not (is_frame and not timegate):
                assert ans["status"] == 307, path
                mine = redirect_headers(tl, current, rw, replay_mod=replay_mod, warc_date=warc_date, timegate=timegate)
                mine = [f for f in mine if f[0] != "Content-Length"]
                kinds["307" + (", timegate" if timegate else ", inexact")] += 1
            elif is_frame:
                assert ans["status"] == 200, path
                if not timegate and page.timestamp != current["timestamp"] and not exact:
                    # pywb's frame names the requested timestamp, before any lookup (but with
                    # redirect_to_exact, where it looks the capture up first)
                    assert theirs[0] == ("Memento-Datetime", http_date(page.timestamp)), path
                    assert frame_headers(tl, current, rw, replay_mod=replay_mod)[0] == \
                        ("Memento-Datetime", http_date(current["timestamp"]))
                    SEEN.add("frame-datetime")
                    kinds["frame, inexact"] += 1
                    continue
                mine = frame_headers(tl, current, rw, replay_mod=replay_mod, timegate=timegate)
                kinds["frame" + (", timegate" if timegate else "")] += 1
            else:
                mine = memento_headers(tl, current, rw, replay_mod=replay_mod, warc_date=warc_date, timegate=timegate)
                kinds["memento" + (", timegate" if timegate else "")] += 1
                if exact:   # pywb sends no Content-Location with redirect_to_exact
                    mine = [f for f in mine if f[0] != "Content-Location"]
            if ans["status"] != 307:   # an archived 3xx keeps its (rewritten) Location
                theirs = [f for f in theirs if f[0].lower() != "location"]
            assert [k for k, _ in mine] == [k for k, _ in theirs], (path, mine, theirs)
            for (k, v), (tk, tv) in zip(mine, theirs):
                if k == "Link" and len(v) > len(tv):
                    check_navigation(v, tv, stamps, current["timestamp"])
                else:
                    assert (k, v) == (tk, tv), path
    want = {"memento", "timemap link", "timemap json", "timemap cdxj"}
    want |= {"frame", "frame, timegate", "frame, inexact"} if framed and not exact else set()
    want |= {"memento, timegate"} if not framed else set()
    want |= {"307, timegate", "307, inexact", "frame"} if exact else set()
    assert want <= set(kinds), kinds
    assert sum(kinds.values()) > 60, kinds


TIMEMAP_EDGES = ["timemap/link/http://never.example/", "timemap/json/http://never.example/",
                 "timemap/cdxj/http://never.example/", "timemap/link/2020/http://never.example/",
                 "timemap/link/2030/http://example.com/", "timemap/json/2030*2031/http://example.com/",
                 "timemap/foo/http://example.com/", "timemap/foo/http://never.example/",
                 "timemap/LINK/http://example.com/", "timemap/xml/2020/http://example.com/",
                 "timemap/link/", "timemap//http://example.com/", "timemap/foo/"]


@pytest.mark.parametrize("config", [{}, {"framed_replay": False}], ids=["framed", "frameless"])
def test_timemap_edges_like_pywb(timeline_coll, config):
    """A TimeMap of nothing (a URL never captured, a range without captures) and a TimeMap form
    pywb does not know: status, Content-Type and body as pywb's replay app sends them. A path
    that names no form or no URL is a 404 page, pywb's an HTML page too."""
    from starlette.testclient import TestClient
    from warchive.replay import create_app
    pywb_oracle.require_pywb()
    archives = sorted((timeline_coll / "archive").iterdir())
    sources = [p for p in (timeline_coll / "indexes").iterdir() if p.suffix == ".cdxj"]
    theirs = pywb_oracle.pywb_load(archives, sources, [{"replay": p} for p in TIMEMAP_EDGES], coll="coll",
                                   config=config)
    client = TestClient(create_app(str(timeline_coll.parent), **config))
    for path, ans in zip(TIMEMAP_EDGES, theirs):
        mine = client.get(f"/coll/{path}", follow_redirects=False)
        ctype = dict((k.lower(), v) for k, v in ans["headers"])["content-type"]
        if ctype == "text/html":   # pywb's HTML error page: ours is ours
            assert (mine.status_code, mine.headers["content-type"].split(";")[0]) == (ans["status"], "text/html"), path
            continue
        body = base64.b64decode(ans["body"])
        assert (mine.status_code, mine.headers["content-type"], mine.content) == (ans["status"], ctype, body), path
        assert mine.headers["content-length"] == str(len(body)), path
    statuses = Counter(a["status"] for a in theirs)
    assert statuses[404] >= 5 and statuses[400] >= 3, statuses


# --------------------------------------------------------------------------- each difference, on pywb itself

def test_difference_accept_datetime_zone(pywb):
    theirs = pywb.one({"op": "accept_datetime", "path": "http://example.com/", "value": "Sun, 06 Nov 1994 08:49:37 +0200"})
    assert theirs["timestamp"] == "19941106084937"            # the zone is ignored
    assert parse_accept_datetime("Sun, 06 Nov 1994 08:49:37 +0200") == "19941106064937"


def test_difference_accept_datetime_year(pywb):
    theirs = pywb.one({"op": "accept_datetime", "path": "http://example.com/", "value": "Sun, 06 Nov 994 08:49:37 GMT"})
    assert theirs["timestamp"] == "9941106084937"             # 13 digits: read as the year 9941
    assert parse_accept_datetime("Sun, 06 Nov 994 08:49:37 GMT") == "09941106084937"


def test_difference_accept_datetime_empty(pywb):
    theirs = pywb.one({"op": "accept_datetime", "path": "http://example.com/", "value": ""})
    assert (theirs["status"], theirs["timestamp"]) == (200, "")   # as if absent
    with pytest.raises(MementoError):
        parse_accept_datetime("")


def test_difference_timemap_self_range(pywb):
    caps = [capture("20210101000000", "http://example.com/")]
    lines = [timemap_cdxj(caps).decode().rstrip("\n")]
    theirs = pywb.one(dict(op="timemap", lines=lines, url="http://example.com/", full_prefix=FULL, replay_mod="mp_"))
    assert theirs["body"].startswith(f"<{FULL}timemap/link/http://example.com/>; rel=\"self\"")
    mine = timemap_link(caps, UrlRewriter("2021/http://example.com/", FULL)).decode()
    assert mine.startswith(f"<{FULL}timemap/link/2021/http://example.com/>; rel=\"self\"")
    SEEN.add("timemap-self-range")


def test_every_difference_met_is_documented():
    text = DOCS.read_text()
    missing = [name for name in sorted(SEEN) if f"`{name}`" not in text]
    assert not missing, f"docs/replay.md does not describe: {missing}"
    assert {"accept-datetime-zone", "accept-datetime-year", "accept-datetime-empty", "navigation-links",
            "timemap-until"} <= SEEN
