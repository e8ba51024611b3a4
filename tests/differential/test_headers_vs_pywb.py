"""warchive.replay.headers against pywb 2.10's DefaultHeaderRewriter, asked through
tests/pywb_oracle.py (``op: headers``), field by field.

Inputs: the hand table of real-world heads of tests/headgen.py, every response head of the
generated fixtures and the Wget crawl, and hypothesis-drawn heads; each under pages of every mode
(``mp_``, ``id_``, ``js_``, ``sw_``, ``bn_``...), relative and absolute prefixes, a body rewritten
or not, and many Accept-Encodings.

pywb answers for each input field the fields it makes of it. Where our answer differs, the case
must be one of our deliberate differences (docs/replay.md, "Where we differ"), named as there, and
our answer must be what that entry says: a header pywb keeps is prefixed, a Link's URLs are each
rewritten as pywb's UrlRewriter rewrites them, and so on. A URL in a header that we rewrite
otherwise than pywb must be one of the URL differences of test_urls_vs_pywb.py (``rewrite_differs``
names it). Every field not so explained must equal pywb's, and the whole head must be the
concatenation of the fields plus what pywb adds (``Service-Worker-Allowed`` under ``sw_``).
"""

from __future__ import annotations

import base64
import re
from http.cookies import CookieError, SimpleCookie
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import headgen
import pywb_oracle
import warchive.warc
from test_urls_vs_pywb import CONTROL, encode_controls, rewrite_differs
from warchive.replay.headers import ORIG_PREFIX, RULES, head_mode, rewrite_field, rewrite_headers
from warchive.replay.urls import ArchivalUrl, ArchivalUrlError, UrlRewriter, link_modifier
from warchive.warc.headers import Headers

DOCS = Path(__file__).resolve().parents[2] / "docs" / "replay.md"
SEEN: set = set()   # the differences met, to check each is documented
HOP_BY_HOP = {"keep-alive", "proxy-connection", "te"}
LIVE_WEB = {"clear-site-data", "nel", "report-to", "reporting-endpoints", "expect-ct", "public-key-pins-report-only",
            "service-worker-allowed", "speculation-rules", "memento-datetime"}
EXPIRES = re.compile(r"[;]\s*?expires=.{4}[^,;]+", re.I)   # what both remove before parsing a cookie


@pytest.fixture(scope="module")
def pywb():
    pywb_oracle.require_pywb()
    with pywb_oracle.pywb_rewrite() as oracle:
        yield oracle


Field = List[str]


def request(statusline: str, fields, page: str, prefix: Tuple[str, Optional[str], Optional[str]], content_rw: bool,
            accept: Optional[str], protocol: str = "HTTP/1.1") -> dict:
    return dict(op="headers", page=page, prefix=prefix[0], full_prefix=prefix[1], rel_prefix=prefix[2],
                statusline=statusline, protocol=protocol, headers=[list(f) for f in fields], content_rw=content_rw,
                accept_encoding=accept)


def rewriter(case: dict) -> UrlRewriter:
    return UrlRewriter(case["page"], case["prefix"], case["full_prefix"], rel_prefix=case["rel_prefix"])


class Checker:
    """Compares our answers with pywb's for a batch of cases, asking pywb again (in our mode, or
    for single URLs) where a difference is to be explained."""

    def __init__(self, pywb):
        self.pywb = pywb

    def url(self, case: dict, url: str, mod: Optional[str], mine: str) -> Optional[str]:
        """None when ``mine`` is pywb's rewrite of ``url``, else the URL difference that explains it."""
        ask = dict(op="rewrite", page=case["page"], prefix=case["prefix"], full_prefix=case["full_prefix"],
                   rel_prefix=case["rel_prefix"], url=url, mod=mod)
        theirs = self.pywb.one(ask)
        name = rewrite_differs(case["page"], url, theirs)
        if name:
            SEEN.add(name)
            return name
        want = theirs["result"]
        if CONTROL.search(want) and want != url:
            SEEN.add("tabs-and-controls")
            want = encode_controls(want)
        assert mine == want, (case, url, mod)
        return None

    def modifier_of(self, case: dict, url: str) -> Optional[str]:
        """The modifier of an archival URL we made (any of the prefix's forms), None if it is none."""
        rw = rewriter(case)
        host = rw.full_prefix.split("//", 1)[1].split("/", 1)[0] if "//" in rw.full_prefix else ""
        for p in (rw.full_prefix, rw.prefix, "//" + host + rw.rel_prefix, rw.rel_prefix):
            if p and url.startswith(p):
                try:
                    return ArchivalUrl.parse(url[len(p):]).modifier
                except ArchivalUrlError:
                    return None
        return None

    def link(self, case: dict, value: str, mine: str) -> None:
        """Each <URL> of our Link is pywb's rewrite of the archived one; the rest is as archived."""
        theirs_urls = re.findall(r"<([^>]*)>", value)
        mine_urls = re.findall(r"<([^>]*)>", mine)
        assert len(theirs_urls) == len(mine_urls), (value, mine)
        assert re.split(r"<[^>]*>", value) == re.split(r"<[^>]*>", mine), (value, mine)
        for u, m in zip(theirs_urls, mine_urls):
            self.url(case, u, self.modifier_of(case, m), m)

    def refresh(self, case: dict, value: str, mine: str) -> None:
        m = re.match(r"(\s*[0-9.]*\s*(?:[;,]\s*)?(?:url\s*=\s*)?)(['\"]?)(.*?)(\2\s*)$", value, re.I | re.S)
        assert m, value
        head, url, tail = m.group(1) + m.group(2), m.group(3), m.group(4)
        if not url.strip():
            assert mine == value
            return
        assert mine.startswith(head) and mine.endswith(tail), (value, mine)
        self.url(case, url, None, mine[len(head): len(mine) - len(tail)])

    def cookie(self, case: dict, value: str) -> str:
        """The URL difference that makes our Set-Cookie paths differ from pywb's."""
        try:
            jar = SimpleCookie(EXPIRES.sub("", value))
        except CookieError:
            raise AssertionError(f"both reject {value!r}")
        rw = rewriter(case)
        for morsel in jar.values():
            path = "/" if morsel["domain"] else morsel["path"]
            if path:
                name = self.url(case, path, None, rw.rewrite(path))
                if name:
                    return name
        raise AssertionError(f"Set-Cookie {value!r} differs from pywb's for no documented reason ({case})")

    def field(self, case: dict, name: str, value: str, mine: List[Field], theirs: List[Field], mode) -> Optional[str]:
        """None when our fields for one archived field are pywb's, else the documented difference."""
        if mine == theirs:
            return None
        low = name.lower()
        rule = RULES.get(low, "keep")
        kept, inert = [[name, value]], [[ORIG_PREFIX + name, value]]
        if low in HOP_BY_HOP or low in LIVE_WEB:
            assert (mine, theirs) == (inert, kept), (name, value)
            return "hop-by-hop" if low in HOP_BY_HOP else "live-web-headers"
        if rule == "length":
            lengths = {v for k, v in case["headers"] if k.lower() == "content-length"}
            assert (value == "0" and mode.content_rw or not (value.isascii() and value.isdigit()) or len(lengths) > 1
                    or mode.dechunk), (name, value, case)
            assert mine == inert
            return "content-length"
        if not mode.url_rw and rule in ("location", "fetch_url", "link", "refresh", "cookie"):
            assert theirs == kept, (name, value, theirs)
            if rule == "location":
                assert mine[1:] == inert and len(mine) == 2 and mine[0][0] == name
                self.url(case, value, None, mine[0][1])
            else:
                assert mine == inert
            return "identity-mode"
        if rule in ("fetch_url", "link", "refresh"):   # pywb keeps them
            assert theirs == kept and len(mine) == 1 and mine[0][0] == name, (name, value, theirs)
            if rule == "fetch_url":
                self.url(case, value, None, mine[0][1])
            elif rule == "link":
                self.link(case, value, mine[0][1])
            else:
                self.refresh(case, value, mine[0][1])
            return "live-web-headers"
        if rule in ("url", "location"):
            assert len(mine) == len(theirs) == 1 and mine[0][0] == theirs[0][0] == name
            diff = self.url(case, value, None, mine[0][1])
            assert diff, (name, value, mine, theirs)
            return diff
        if rule == "cookie":
            return self.cookie(case, value)
        raise AssertionError(f"{name}: {value!r} gives {mine}, pywb {theirs} ({case})")

    def run(self, cases: List[dict]) -> None:
        first = self.pywb.ask(cases)
        again: Dict[int, dict] = {}
        modes = []
        for i, (case, theirs) in enumerate(zip(cases, first)):
            assert theirs["ok"], (case, theirs)
            http = Headers(case["protocol"], case["statusline"], [tuple(f) for f in case["headers"]])
            mode = head_mode(http, rewriter(case), rewrite_body=case["content_rw"], accept_encoding=case["accept_encoding"])
            modes.append(mode)
            if theirs["is_content_rw"] != mode.content_rw:
                # pywb decides by substring, we by token and q-value: compare the rest in our mode
                assert not case["content_rw"] and http.get("Content-Encoding") is not None, case
                SEEN.add("accept-encoding")
                # (with content_rw false pywb checks Accept-Encoding again: give it the coding itself)
                again[i] = dict(case, content_rw=mode.content_rw,
                                accept_encoding=case["accept_encoding"] if mode.content_rw else http.get("Content-Encoding"))
        for i, theirs in zip(again, self.pywb.ask(list(again.values()))):
            assert theirs["is_content_rw"] == modes[i].content_rw, (cases[i], theirs)
            first[i] = theirs
        for case, theirs, mode in zip(cases, first, modes):
            self.one(case, theirs, mode)

    def one(self, case: dict, theirs: dict, mode) -> None:
        rw = rewriter(case)
        http = Headers(case["protocol"], case["statusline"], [tuple(f) for f in case["headers"]])
        got = rewrite_headers(http, rw, rewrite_body=case["content_rw"], accept_encoding=case["accept_encoding"])
        assert (got.headers.statusline, got.headers.protocol) == (theirs["statusline"], theirs["protocol"])
        assert got.dechunk == theirs["is_chunked"]
        expected: List[Field] = []
        for (name, value), their_fields in zip(case["headers"], theirs["fields"]):
            mine = [list(f) for f in rewrite_field(name, value, mode, rw)]
            diff = self.field(case, name, value, mine, their_fields, mode)
            if diff:
                SEEN.add(diff)
            expected += mine if diff else their_fields
        added = theirs["headers"][sum(len(f) for f in theirs["fields"]):]
        assert theirs["headers"] == [f for fs in theirs["fields"] for f in fs] + added
        assert [list(f) for f in got.headers.fields] == expected + added, case


def cases_for(heads, cycle: int = 0) -> List[dict]:
    """Every head under every page and prefix, the body rewritten or not and the
    Accept-Encodings taken in turn."""
    out = []
    i = cycle
    for statusline, fields in heads:
        for page in headgen.PAGES:
            for prefix in headgen.PREFIXES:
                i += 1
                out.append(request(statusline, fields, page, prefix, i % 3 == 0, headgen.ACCEPTS[i % len(headgen.ACCEPTS)]))
    return out


def test_real_world_heads_like_pywb(pywb):
    Checker(pywb).run(cases_for(headgen.HEADS) + cases_for(headgen.HEADS, 1))


def _archived_heads(paths, limit: int) -> List[Tuple[str, list]]:
    heads = []
    for path in paths:
        with warchive.warc.open(str(path), types={"response", "revisit"}) as records:
            for rec in records:
                if rec.http is not None and rec.http.statusline:
                    heads.append((rec.http.statusline, [(k, v) for k, v in rec.http.fields]))
                if len(heads) >= limit:
                    return heads
    return heads


def test_archived_heads_like_pywb(pywb, valid_archives):
    paths = [f.path for fid, f in sorted(valid_archives.items()) if str(f.path).endswith(".warc.gz")]
    heads = []
    for p in paths:
        heads += _archived_heads([p], 40)
    assert len(heads) > 100
    Checker(pywb).run(cases_for(heads))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(headgen.heads, st.sampled_from(headgen.PAGES), st.sampled_from(headgen.PREFIXES), st.booleans(),
       st.sampled_from(headgen.ACCEPTS))
def test_drawn_heads_like_pywb(pywb, head, page, prefix, content_rw, accept):
    Checker(pywb).run([request(head[0], head[1], page, prefix, content_rw, accept)])


# --------------------------------------------------------------------------- the modifiers of Link URLs

@pytest.mark.parametrize("rel, as_", [("stylesheet", ""), ("preload", "script"), ("preload", "style"), ("preload", "image"),
                                      ("preload", "font"), ("preload", "fetch"), ("preload", "document"),
                                      ("preload", "video"), ("import", ""), ("alternate", ""), ("icon", ""),
                                      ("next", ""), ("preconnect", ""), ("preload", "")])
def test_link_modifier_is_pywb_html_link_modifier(pywb, rel, as_):
    """A Link URL gets the modifier pywb's HTML rewriter gives ``<link rel as href>`` (for one rel)."""
    html = f'<html><head><link rel="{rel}"{f" as={as_}" if as_ else ""} href="http://x.example/r"></head></html>'.encode()
    theirs = pywb.one({"op": "content", "page": "20190312mp_/http://example.com/", "prefix": "/warc/",
                       "url": "http://example.com/", "statusline": "200 OK", "headers": [["Content-Type", "text/html"]],
                       "payload": base64.b64encode(html).decode(), "accept_encoding": "gzip"})
    body = base64.b64decode(theirs["body"]).decode()
    mod = re.search(r'href="/warc/20190312([a-z]*_)?/http://x\.example/r"', body)
    assert mod, body
    assert link_modifier(rel, as_) == (mod.group(1) or "")


# --------------------------------------------------------------------------- each difference, on pywb itself

def _both(pywb, fields, page="20190312mp_/http://example.com/a/", content_rw=False, accept="gzip"):
    case = request("200 OK", fields, page, ("/warc/", None, None), content_rw, accept)
    theirs = pywb.one(case)
    mine = rewrite_headers(Headers("HTTP/1.1", "200 OK", list(fields)), rewriter(case), rewrite_body=content_rw,
                           accept_encoding=accept)
    return [tuple(f) for f in theirs["headers"]], mine.headers.fields, theirs


def test_difference_hop_by_hop(pywb):
    theirs, mine, _ = _both(pywb, [("Keep-Alive", "timeout=5"), ("TE", "trailers")])
    assert theirs == [("Keep-Alive", "timeout=5"), ("TE", "trailers")]
    assert mine == [("X-Archive-Orig-Keep-Alive", "timeout=5"), ("X-Archive-Orig-TE", "trailers")]


def test_difference_live_web_headers(pywb):
    link = "<https://fonts.example/x.woff2>; rel=preload; as=font"
    theirs, mine, _ = _both(pywb, [("Link", link), ("Refresh", "0; url=http://example.com/next"), ("NEL", "{}"),
                                   ("Clear-Site-Data", '"cookies"')])
    assert theirs == [("Link", link), ("Refresh", "0; url=http://example.com/next"), ("NEL", "{}"),
                      ("Clear-Site-Data", '"cookies"')]
    assert mine == [("Link", "</warc/20190312oe_/https://fonts.example/x.woff2>; rel=preload; as=font"),
                    ("Refresh", "0; url=/warc/20190312mp_/http://example.com/next"), ("X-Archive-Orig-NEL", "{}"),
                    ("X-Archive-Orig-Clear-Site-Data", '"cookies"')]


def test_difference_identity_mode(pywb):
    fields = [("Location", "http://example.com/next"), ("Set-Cookie", "a=b; Path=/")]
    theirs, mine, _ = _both(pywb, fields, page="20190312id_/http://example.com/")
    assert theirs == fields
    assert mine == [("Location", "/warc/20190312id_/http://example.com/next"),
                    ("X-Archive-Orig-Location", "http://example.com/next"), ("X-Archive-Orig-Set-Cookie", "a=b; Path=/")]


def test_difference_content_length(pywb):
    theirs, mine, _ = _both(pywb, [("Content-Length", "0")], content_rw=True)
    assert theirs == [("Content-Length", "0")] and mine == [("X-Archive-Orig-Content-Length", "0")]
    theirs, mine, _ = _both(pywb, [("Content-Length", "+5")])
    assert theirs == [("Content-Length", "+5")] and mine == [("X-Archive-Orig-Content-Length", "+5")]
    theirs, mine, _ = _both(pywb, [("Content-Length", "12"), ("Transfer-Encoding", "chunked")])
    assert theirs[0] == ("Content-Length", "12") and mine[0] == ("X-Archive-Orig-Content-Length", "12")


def test_difference_accept_encoding(pywb):
    _, mine, theirs = _both(pywb, [("Content-Encoding", "gzip")], accept="gzip;q=0")
    assert not theirs["is_content_rw"] and mine == [("X-Archive-Orig-Content-Encoding", "gzip")]
    _, mine, theirs = _both(pywb, [("Content-Encoding", "gzip")], accept="*")
    assert theirs["is_content_rw"] and mine == [("Content-Encoding", "gzip")]
    _, mine, theirs = _both(pywb, [("Content-Encoding", "identity")], accept="gzip")
    assert theirs["is_content_rw"] and mine == [("Content-Encoding", "identity")]


def test_every_difference_met_is_documented():
    text = DOCS.read_text()
    missing = [name for name in sorted(SEEN) if f"`{name}`" not in text]
    assert not missing, f"docs/replay.md does not describe: {missing}"
    assert {"hop-by-hop", "live-web-headers", "identity-mode", "content-length", "accept-encoding"} <= SEEN
