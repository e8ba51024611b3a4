"""Loading captures (warchive.replay.load) against pywb 2.10's own loader.

pywb serves as the oracle in three modes (tests/pywb_oracle.py, ``pywb_load``):

* **cdx**: pywb's ``WARCPathLoader.load_resource`` on one index line, which is what
  its resource mode runs for each capture it tries: the HTTP head, the payload as
  stored and the payload record's WARC head must equal ``load_capture(line,
  dechunk=False)``'s, for every line of the indexes;
* **resource**: ``/<coll>/resource?url=&closest=`` (pywb's fallback past captures that
  fail) against ``load_closest``: the same capture served, same head and payload;
* **replay**: ``/<coll>/<ts>id_/<url>`` against ``load_capture`` with the default
  de-chunking (and ``decompress=True`` when the client sends no Accept-Encoding):
  same status, same body bytes, and the same headers once pywb's own additions are
  taken away (``X-Archive-Orig-`` prefixes, Memento and Content-Location headers).

Where warchive deliberately resolves what pywb cannot (docs/api.md, "Loading
captures", "Where warchive differs from pywb"), ``DEVIATIONS`` names the capture and
the reason; those are checked against hand-written expectations in
tests/unit/test_load.py and here only for pywb still behaving as documented.

The fixtures: warcgen's ``revisits`` set, cdx_queries' ``timeline``, the Wget pair of
tests/data/wget, and ``write_load_cases`` below (the special cases: chunked and gzip
originals, 3xx revisits, the empty-payload digest, a missing original, a
self-redirect, URL-agnostic and chained revisits, a record segmented over two files).
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import os
import sys
from pathlib import Path
from typing import Dict, List, Optional

import pytest

TESTS = Path(__file__).resolve().parents[1]
for _p in (TESTS, TESTS / "differential"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import cdx_queries  # noqa: E402
import warcgen  # noqa: E402

WGET_DIR = TESTS / "data" / "wget"
NET = "http://example.net/"
IDENTICAL = "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"
EMPTY_SHA1 = "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"
T0, T1, T2, T3 = "2021-01-01T00:00:00Z", "2021-06-01T00:00:00Z", "2021-07-01T00:00:00Z", "2022-01-01T00:00:00Z"
HTTP_CT = "application/http; msgtype=response"

CHUNKED_RAW = b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
GZ_BODY = gzip.compress(b"hello gzip\n" * 20, 9, mtime=0)
FOUND_BODY = b"<a href=\"/elsewhere\">moved</a>\n"
SHARED_BODY = b"shared body\n"
CHAIN_BODY = b"chain body\n"
BIG_BODY = b"".join(b"line %05d of a record cut in two\n" % i for i in range(400))
BIG_HALF = 6000


# --------------------------------------------------------------------------- the load-case fixtures

def _resp(name: str, uri: str, date: str, status: str = "200 OK", headers=(), body: bytes = b"",
          length: bool = True) -> warcgen.Rec:
    hs = list(headers) + ([("Content-Length", str(len(body)))] if length else [])
    block = warcgen.http_bytes(b"HTTP/1.1 " + status.encode(), hs, body)
    return warcgen.r_rec("response", "lc/" + name, uri, HTTP_CT, block, date=date)


def _revisit(name: str, uri: str, date: str, digest: Optional[str], status: str = "200 OK", headers=None,
             refers_uri: Optional[str] = None, refers_date: Optional[str] = None,
             refers_id: Optional[str] = None) -> warcgen.Rec:
    """A revisit: ``headers`` None makes an empty one (no HTTP head, Content-Length 0)."""
    block = b"" if headers is None else warcgen.http_bytes(b"HTTP/1.1 " + status.encode(), list(headers))
    extra = [("WARC-Profile", IDENTICAL)]
    if refers_uri:
        extra.append(("WARC-Refers-To-Target-URI", refers_uri))
    if refers_date:
        extra.append(("WARC-Refers-To-Date", refers_date))
    if refers_id:
        extra.append(("WARC-Refers-To", warcgen.rid(refers_id)))
    if digest:
        extra.append(("WARC-Payload-Digest", digest))
    return warcgen.r_rec("revisit", "lc/" + name, uri, HTTP_CT, block, date=date, digests=False, extra=tuple(extra))


def recs_load_cases() -> list:
    """The special cases of record loading, one URL each (distinct times, so that pywb's
    closest queries can aim at each capture)."""
    chunked_digest = warcgen.sha1_b32(CHUNKED_RAW)
    gz_digest = warcgen.sha1_b32(GZ_BODY)
    text = [("Content-Type", "text/plain")]
    return [
        warcgen.warcinfo("lc/info", "loadcases.warc.gz"),
        # chunked original; a revisit with HTTP head; an empty revisit (takes the original's head)
        _resp("chunked", NET + "chunked", T0, headers=text + [("Transfer-Encoding", "chunked")], body=CHUNKED_RAW,
              length=False),
        _revisit("chunked-rv", NET + "chunked", T1, chunked_digest,
                 headers=text + [("Transfer-Encoding", "chunked"), ("X-Revisit", "own head")],
                 refers_uri=NET + "chunked", refers_date=T0),
        _revisit("chunked-empty-rv", NET + "chunked", T2, chunked_digest, refers_uri=NET + "chunked", refers_date=T0),
        # gzip Content-Encoding, and its revisit
        _resp("gz", NET + "gz", T0, headers=text + [("Content-Encoding", "gzip")], body=GZ_BODY),
        _revisit("gz-rv", NET + "gz", T1, gz_digest,
                 headers=text + [("Content-Encoding", "gzip"), ("Content-Length", str(len(GZ_BODY)))],
                 refers_uri=NET + "gz", refers_date=T0),
        # 3xx revisits: served alone with Content-Length 0 (appended when absent)
        _resp("moved", NET + "moved", T0, "301 Moved Permanently", [("Location", NET + "new")]),
        _revisit("moved-rv", NET + "moved", T1, EMPTY_SHA1, "301 Moved Permanently", [("Location", NET + "new")],
                 refers_uri=NET + "moved", refers_date=T0),
        _resp("found", NET + "found", T0, "302 Found", [("Location", "/elsewhere"), ("Content-Type", "text/html")],
              FOUND_BODY),
        _revisit("found-rv", NET + "found", T1, warcgen.sha1_b32(FOUND_BODY), "302 Found",
                 [("Location", "/elsewhere"), ("Content-Type", "text/html"), ("Content-Length", str(len(FOUND_BODY)))],
                 refers_uri=NET + "found", refers_date=T0),
        # the empty-payload digest: an empty 200, a revisit of it whose original is elsewhere and
        # missing, and an empty revisit of it whose original is there
        _resp("empty", NET + "empty", T0, headers=text),
        _revisit("empty-rv", NET + "empty", T1, EMPTY_SHA1, headers=text + [("Content-Length", "0")],
                 refers_uri=NET + "nowhere", refers_date="2020-01-01T00:00:00Z"),
        _revisit("empty-empty-rv", NET + "empty", T2, EMPTY_SHA1, refers_uri=NET + "empty", refers_date=T0),
        # a missing original between two captures of other payloads
        _resp("page-old", NET + "page", T0, headers=text, body=b"old page\n"),
        _revisit("page-rv", NET + "page", T1, warcgen.sha1_b32(b"never archived\n"), headers=text,
                 refers_uri=NET + "page", refers_date="2020-01-01T00:00:00Z"),
        _resp("page-new", NET + "page", T3, headers=text, body=b"new page\n"),
        # a self-redirect (http -> https and a trailing slash) after a good capture
        _resp("loop-ok", NET + "loop", T0, headers=text, body=b"loop ok\n"),
        _resp("loop-302", NET + "loop", T1, "302 Found", [("Location", "https://example.net/loop/")]),
        # URL-agnostic without any Refers-To: only a digest index finds the original
        _resp("shared", NET + "original.txt", T0, headers=text, body=SHARED_BODY),
        _revisit("agnostic-rv", "http://cdn.example.net/copy.txt", T1, warcgen.sha1_b32(SHARED_BODY),
                 headers=text + [("Content-Length", str(len(SHARED_BODY)))]),
        # Wget-style chain: rv2 (another URL) refers by record id to rv1, a revisit itself
        _resp("chain-orig", NET + "chain-a", T0, headers=text, body=CHAIN_BODY),
        _revisit("chain-rv1", NET + "chain-a", T1, warcgen.sha1_b32(CHAIN_BODY), headers=text,
                 refers_id="lc/chain-orig/x"),     # a record id that is nowhere: same-URL join resolves it
        _revisit("chain-rv2", NET + "chain-b", T2, warcgen.sha1_b32(CHAIN_BODY), headers=text,
                 refers_id="lc/chain-rv1"),
        # WARC-Refers-To-Target-URI without a date: the capture's own time decides
        _resp("nodate-2019", NET + "nodate-orig", "2019-01-01T00:00:00Z", headers=text, body=b"nodate\n"),
        _resp("nodate-2021", NET + "nodate-orig", "2021-05-01T00:00:00Z", headers=text, body=b"nodate\n"),
        _revisit("nodate-rv", NET + "nodate", T1, warcgen.sha1_b32(b"nodate\n"), headers=text,
                 refers_uri=NET + "nodate-orig"),
        # no digest, but a target URI: the closest non-revisit there, whatever its payload
        _resp("nodigest", NET + "nodigest", T0, headers=text, body=b"no digest\n"),
        _revisit("nodigest-rv", NET + "nodigest", T1, None, headers=text, refers_uri=NET + "nodigest",
                 refers_date=T0),
    ]


def recs_segment(part: int) -> list:
    """A response cut in two segments: the first ends loadcases-seg-1, the continuation starts
    loadcases-seg-2 (as a writer rolling over to a new file leaves them)."""
    uri = NET + "big"
    if part == 1:
        head = warcgen.http_bytes(b"HTTP/1.1 200 OK", [("Content-Type", "text/plain"),
                                                        ("Content-Length", str(len(BIG_BODY)))])
        block = head + BIG_BODY[:BIG_HALF]
        return [warcgen.warcinfo("lc/seg1-info", "loadcases-seg-1.warc.gz"),
                warcgen.r_rec("response", "lc/big", uri, HTTP_CT, block, date=T0, digests=False,
                              extra=(("WARC-Segment-Number", "1"),
                                     ("WARC-Payload-Digest", warcgen.sha1_b32(BIG_BODY))))]
    first_len = len(warcgen.http_bytes(b"HTTP/1.1 200 OK", [("Content-Type", "text/plain"),
                                                           ("Content-Length", str(len(BIG_BODY)))])) + BIG_HALF
    rest = BIG_BODY[BIG_HALF:]
    return [warcgen.warcinfo("lc/seg2-info", "loadcases-seg-2.warc.gz"),
            warcgen.r_rec("continuation", "lc/big/2", uri, None, rest, date=T0, digests=False, http=False,
                          extra=(("WARC-Segment-Origin-ID", warcgen.rid("lc/big")), ("WARC-Segment-Number", "2"),
                                 ("WARC-Segment-Total-Length", str(first_len + len(rest)))))]


def write_load_cases(directory) -> List[Path]:
    """loadcases.warc.gz, loadcases-seg-1.warc.gz, loadcases-seg-2.warc.gz."""
    return [warcgen.write_warc(directory, "loadcases", recs_load_cases()).path,
            warcgen.write_warc(directory, "loadcases-seg-1", recs_segment(1)).path,
            warcgen.write_warc(directory, "loadcases-seg-2", recs_segment(2)).path]


def make_collection(root: Path, name: str, warcs, index_inputs=None, *, cdx11: bool = False,
                    rix_inputs=None) -> Path:
    """ROOT/NAME/{archive,indexes}: the WARCs linked into archive/, indexes/index.cdxj (or .cdx)
    of ``index_inputs`` (default: all of them), and indexes/records.rix of ``rix_inputs``."""
    from warchive.index.rix import write_record_index

    coll = root / name
    (coll / "archive").mkdir(parents=True)
    (coll / "indexes").mkdir()
    for w in warcs:
        os.symlink(Path(w).resolve(), coll / "archive" / Path(w).name)
    inputs = [coll / "archive" / Path(w).name for w in (index_inputs if index_inputs is not None else warcs)]
    out = coll / "indexes" / ("index.cdx" if cdx11 else "index.cdxj")
    cdx_queries.warchive_index(inputs, out, *(["--cdx11"] if cdx11 else []))
    if rix_inputs:
        write_record_index([coll / "archive" / Path(w).name for w in rix_inputs], coll / "indexes" / "records.rix")
    return coll


def build_collections(root: Path) -> Dict[str, Path]:
    warcs = root / "warcs"
    warcs.mkdir(parents=True, exist_ok=True)
    gen = [warcgen.write_revisits(warcs).path, cdx_queries.write_timeline(warcs)] + write_load_cases(warcs)
    first, recrawl = WGET_DIR / "docs-python-3.11.warc.gz", WGET_DIR / "docs-python-3.11-recrawl.warc.gz"
    return {
        "gen": make_collection(root, "gen", gen),
        "gen_rix": make_collection(root, "gen_rix", gen, rix_inputs=gen),
        "gen_cdx11": make_collection(root, "gen_cdx11", gen, cdx11=True),
        "wget": make_collection(root, "wget", [first, recrawl]),
        "wget_rix": make_collection(root, "wget_rix", [first, recrawl], [recrawl], rix_inputs=[first]),
        "wget_recrawl": make_collection(root, "wget_recrawl", [first, recrawl], [recrawl]),
    }


def index_lines(coll: Path) -> List[str]:
    (idx,) = [p for p in (coll / "indexes").iterdir() if p.suffix in (".cdx", ".cdxj")]
    return [ln for ln in idx.read_text().splitlines() if ln and not ln.startswith(" CDX")]


# --------------------------------------------------------------------------- what differs, and why

# Captures (url, record name) that pywb's loader cannot load and warchive does, on purpose
# (docs/api.md, "Loading captures"), and the collections where that holds (None: all; a
# record index is needed where the reason says so). Everything else must load in both or
# in neither.
DEVIATIONS = {
    # Wget-style revisits: only WARC-Refers-To (pywb needs WARC-Refers-To-Target-URI)
    ("http://example.com/page.html", "rv/wget"): ("same-URL digest join", None),
    ("http://example.net/chain-a", "lc/chain-rv1"): ("same-URL digest join", None),
    ("http://example.net/chain-b", "lc/chain-rv2"): ("record id -> revisit -> original", ("gen_rix",)),
    ("http://example.com/page.html", "rv/nodigest"): ("record id in the record index", ("gen_rix",)),
    ("http://cdn.example.net/copy.txt", "lc/agnostic-rv"): ("digest in the record index", ("gen_rix",)),
    # the empty-payload digest written with its sha1: label (CDXJ): pywb's check misses it
    ("http://example.net/empty", "lc/empty-rv"): ("empty-payload digest with its label", ("gen", "gen_rix")),
    # an empty revisit of the empty payload from a CDX-11 line: pywb takes the revisit alone,
    # finds no HTTP head anywhere and crashes (AttributeError); warchive takes the original's head
    ("http://example.net/empty", "lc/empty-empty-rv"): ("original's head for an empty revisit", ("gen_cdx11",)),
}


def _dev_key(coll_name: str, fields: dict, rec_id: Optional[str]) -> Optional[str]:
    for (url, name), (why, where) in DEVIATIONS.items():
        if fields.get("url") == url and rec_id == warcgen.rid(name) and (where is None or coll_name in where):
            return why
    return None


# --------------------------------------------------------------------------- the tests

pywb_oracle = pytest.importorskip("pywb_oracle")


@pytest.fixture(scope="module")
def colls(tmp_path_factory):
    return build_collections(tmp_path_factory.mktemp("loadcolls"))


def _pywb(coll: Path, requests) -> list:
    pywb_oracle.require_pywb()
    archives = sorted((coll / "archive").iterdir())
    sources = [p for p in (coll / "indexes").iterdir() if p.suffix in (".cdx", ".cdxj")]
    return pywb_oracle.pywb_load(archives, sources, requests, coll="coll")


def _http_of(b64: Optional[str]):
    """pywb's HTTP head bytes as (protocol, statusline, fields)."""
    if not b64:
        return None
    from warchive.warc.headers import http_head, parse_head

    raw = base64.b64decode(b64)
    h = http_head(parse_head(raw, 0, len(raw), True))
    return (h.protocol, h.statusline, h.fields)


@pytest.mark.parametrize("name", ["gen", "gen_rix", "gen_cdx11", "wget", "wget_rix"])
def test_every_line_like_pywb_loader(colls, name):
    """cdx mode: every index line, loaded by pywb's loader and by load_capture."""
    from warchive.errors import ArchiveError
    from warchive.replay.load import CaptureLoader, capture_fields

    coll = colls[name]
    lines = index_lines(coll)
    answers = _pywb(coll, [{"cdx": ln} for ln in lines])
    compared = deviated = 0
    with CaptureLoader(str(coll)) as loader:
        for line, ans in zip(lines, answers):
            try:
                # pywb's loader checks self-redirects against the URL asked for: the capture's own
                cap = loader.load(line, dechunk=False, request_url=capture_fields(line).get("url"))
            except ArchiveError as e:
                cap, err = None, e
            if cap is None:
                assert not ans["ok"], f"{name}: pywb loads, warchive fails: {line}\n{err}"
                continue
            with cap:
                own_id = cap.warc_headers.get("WARC-Record-ID")
                why = _dev_key(name, cap.cdx, own_id)
                if not ans["ok"]:
                    wget_revisit = name.startswith("wget") and cap.warc_headers.get("WARC-Type") == "revisit"
                    assert why or wget_revisit, f"{name}: pywb fails ({ans['error']}), warchive loads: {line}"
                    assert "could not be loaded" in ans["error"] or "AttributeError" in ans["error"], ans["error"]
                    deviated += 1
                    continue
                payload = cap.read()
                assert _http_of(ans["http"]) == (cap.headers.protocol, cap.headers.statusline, cap.headers.fields) \
                    or (ans["http"] is None and cap.synthetic_headers), f"{name}: HTTP head differs: {line}"
                pywb_payload = base64.b64decode(ans["payload"])
                payload_rec = [r for r in cap.records if "payload" in r.role][0]
                warc = dict((k.lower(), v) for k, v in ans["warc_headers"])
                assert warc["warc-record-id"] == payload_rec.record_id, f"{name}: other payload record: {line}"
                if any(r.role == "segment" for r in cap.records):   # pywb stops at the first segment
                    assert payload.startswith(pywb_payload) and len(payload) > len(pywb_payload)
                    deviated += 1
                    continue
                assert payload == pywb_payload, f"{name}: payload differs: {line}"
                compared += 1
    assert compared > 0
    if name.startswith("wget"):
        assert deviated == 556     # every Wget revisit: pywb cannot, warchive can


def _closest_cases(coll: Path) -> list:
    """(url, timestamp) of every capture, once each."""
    seen, out = set(), []
    for ln in index_lines(coll):
        key, ts, rest = ln.split(" ", 2)
        url = json.loads(rest)["url"] if rest.startswith("{") else rest.split(" ")[0]
        if (url, ts) not in seen:
            seen.add((url, ts))
            out.append((url, ts))
    return out


@pytest.mark.parametrize("name", ["gen", "wget"])
def test_closest_like_pywb_resource_mode(colls, name):
    """resource mode: the capture pywb's replay would serve (falling back past failures and
    self-redirects) is the one load_closest serves."""
    from warchive.errors import CaptureNotFound
    from warchive.replay.load import CaptureLoader
    from warcio.recordloader import ArcWarcRecordLoader

    coll = colls[name]
    cases = _closest_cases(coll)
    if name == "wget":
        cases = cases[::7]     # odd, so that originals and revisits both come up
    answers = _pywb(coll, [{"url": u, "closest": t} for u, t in cases])
    compared = fell_back = 0
    with CaptureLoader(str(coll)) as loader:
        for (url, ts), ans in zip(cases, answers):
            try:
                cap = loader.load_closest(url, ts, dechunk=False)
            except CaptureNotFound:
                assert ans["status"] != 200, f"pywb serves {url} {ts}, warchive does not"
                continue
            with cap:
                assert ans["status"] == 200, f"warchive serves {url} {ts}, pywb answers {ans['status']}"
                served = dict((k.lower(), v) for k, v in ans["headers"])["warcserver-cdx"]
                pywb_cdx = json.loads(served.split(" ", 2)[2])
                if (pywb_cdx["filename"], pywb_cdx["offset"]) != (cap.cdx["filename"], cap.cdx["offset"]):
                    # pywb fell back past a revisit warchive resolves: that revisit is a deviation
                    assert cap.warc_headers.get("WARC-Type") == "revisit", (url, ts, served)
                    assert name == "wget" or _dev_key(name, cap.cdx, cap.warc_headers.get("WARC-Record-ID")), (url, ts)
                    fell_back += 1
                    continue
                rec = ArcWarcRecordLoader().parse_record_stream(io.BytesIO(base64.b64decode(ans["body"])))
                payload = cap.read()
                if rec.http_headers:
                    assert (rec.http_headers.protocol, rec.http_headers.statusline, rec.http_headers.headers) == \
                        (cap.headers.protocol, cap.headers.statusline, cap.headers.fields), (url, ts)
                if any(r.role == "segment" for r in cap.records):
                    continue
                assert rec.raw_stream.read() == payload, (url, ts)
                compared += 1
    assert compared > 0
    assert fell_back > 0     # pywb fell back past a revisit (Wget's, or rv/wget) that warchive resolved


# pywb's replay adds these itself (Memento, its own URLs); everything else must be the archive's
PYWB_ADDED = {"memento-datetime", "link", "content-location", "content-security-policy"}
ORIG_PREFIX = "x-archive-orig-"


def _normalise_replay_headers(headers) -> list:
    out = []
    for k, v in headers:
        if k.lower() in PYWB_ADDED:
            continue
        if k.lower().startswith(ORIG_PREFIX):
            k = k[len(ORIG_PREFIX):]
        out.append((k.lower(), v))
    return sorted(out)


REPLAY_CASES = [
    # (url, timestamp, accept_encoding)
    (NET + "chunked", "20210101000000", "gzip"),
    (NET + "chunked", "20210601000000", "gzip"),
    (NET + "chunked", "20210701000000", "gzip"),
    (NET + "gz", "20210101000000", "gzip, deflate"),
    (NET + "gz", "20210601000000", "gzip, deflate"),
    (NET + "gz", "20210101000000", ""),
    (NET + "gz", "20210601000000", ""),
    (NET + "moved", "20210601000000", "gzip"),
    (NET + "found", "20210601000000", "gzip"),
    (NET + "empty", "20210701000000", "gzip"),
    ("http://example.com/", "20200615120000", "gzip"),
    ("http://mirror.example.com/copy", "20210101000000", "gzip"),
]


def test_replay_identity_like_pywb(colls):
    """replay mode (id_): de-chunked (and, without Accept-Encoding, decoded) bodies and the
    archived headers, as a browser gets them from pywb."""
    from warchive.replay.load import CaptureLoader

    coll = colls["gen"]
    answers = _pywb(coll, [{"replay": f"{ts}id_/{url}", "accept_encoding": ae} for url, ts, ae in REPLAY_CASES])
    with CaptureLoader(str(coll)) as loader:
        for (url, ts, ae), ans in zip(REPLAY_CASES, answers):
            decompress = "gzip" not in ae
            with loader.load_closest(url, ts, decompress=decompress) as cap:
                assert ans["status"] == cap.status, (url, ts, ans["status"])
                body = cap.read()
                assert base64.b64decode(ans["body"]) == body, (url, ts)
                mine = [(k.lower(), v) for k, v in cap.headers.fields]
                if cap.content_decoded:   # pywb renames what no longer applies; so would a server
                    mine = [(k, v) for k, v in mine if k not in ("content-encoding", "content-length")]
                    theirs = [(k, v) for k, v in _normalise_replay_headers(ans["headers"])
                              if k not in ("content-encoding", "content-length")]
                else:
                    theirs = _normalise_replay_headers(ans["headers"])
                assert sorted(mine) == theirs, (url, ts)


def test_pywb_deviations_still_hold(colls):
    """The documented pywb behaviours warchive departs from are still pywb's."""
    lines = {json.loads(ln.split(" ", 2)[2])["url"] + " " + ln.split(" ", 2)[1]: ln for ln in index_lines(colls["gen"])}
    blank = json.loads(lines["http://example.com/ 20200615120000"].split(" ", 2)[2])
    blank.update({"filename": "-", "offset": "-", "length": "-"})
    blank_line = "com,example)/ 20200615120000 " + json.dumps(blank)
    reqs = [{"cdx": lines[NET + "empty 20210601000000"]},          # empty digest with sha1: label
            {"cdx": blank_line},                                    # blank filename: pywb crashes
            {"cdx": lines["http://cdn.example.net/copy.txt 20210601000000"]}]
    a = _pywb(colls["gen"], reqs)
    assert not a[0]["ok"] and "could not be loaded" in a[0]["error"]
    assert not a[1]["ok"] and a[1]["error"].startswith("AttributeError")
    assert not a[2]["ok"]
    # with CDX-11 lines (no label) pywb does recognise the empty digest
    cdx11 = [ln for ln in index_lines(colls["gen_cdx11"]) if " http://example.net/empty " in ln and " 20210601" in ln]
    (b,) = _pywb(colls["gen_cdx11"], [{"cdx": cdx11[0]}])
    assert b["ok"] and base64.b64decode(b["payload"]) == b""
