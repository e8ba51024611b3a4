"""warchive.replay.headers on its own: pywb 2.10's header rules case by case (asked of pywb itself
in tests/differential/test_headers_vs_pywb.py), our deliberate differences (docs/replay.md), and
properties over any head: nothing raises, no archived URL is sent pointing out of the archive,
no cookie reaches beyond the archival path, and a Content-Length is sent only when right."""

from __future__ import annotations

import re
from http.cookies import SimpleCookie

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warchive.replay.headers import RULES, RewrittenHead, rewrite_headers, rewrite_link, rewrite_refresh, rewrite_set_cookie
from warchive.replay.urls import UrlRewriter
from warchive.warc.headers import Headers


def rw(headers, page="20171226/http://example.com/", prefix="/warc/", full=None, rel=None, statusline="200 OK",
       **kw) -> RewrittenHead:
    return rewrite_headers(Headers("HTTP/1.0", statusline, list(headers)), UrlRewriter(page, prefix, full, rel_prefix=rel), **kw)


def test_a_200_response():
    got = rw([("Date", "Fri, 03 Jan 2014 03:03:21 GMT"), ("Content-Length", "5"), ("Content-Type", "text/html;charset=UTF-8")])
    assert got.headers.fields == [("X-Archive-Orig-Date", "Fri, 03 Jan 2014 03:03:21 GMT"), ("Content-Length", "5"),
                                  ("Content-Type", "text/html;charset=UTF-8")]
    assert (got.headers.protocol, got.headers.statusline) == ("HTTP/1.0", "200 OK")
    assert (got.dechunk, got.decode, got.recompute_length) == (False, None, False)


def test_a_redirect():
    got = rw([("Connection", "close"), ("Location", "http://example.com/other.html")], statusline="302 Redirect")
    assert got.headers.fields == [("X-Archive-Orig-Connection", "close"),
                                  ("Location", "/warc/20171226/http://example.com/other.html")]
    assert got.headers.statusline == "302 Redirect"


def test_rewritten_body():
    got = rw([("Content-Length", "199999"), ("Content-Type", "text/javascript"), ("Content-Encoding", "gzip")],
             rewrite_body=True, accept_encoding="gzip")
    assert got.headers.fields == [("X-Archive-Orig-Content-Length", "199999"), ("Content-Type", "text/javascript"),
                                  ("X-Archive-Orig-Content-Encoding", "gzip")]
    assert (got.dechunk, got.decode, got.recompute_length) == (False, "gzip", True)


def test_a_binary_body_as_stored():
    got = rw([("Content-Length", "200000"), ("Content-Type", "image/png"), ("Set-Cookie", "foo=bar; Path=/; abc=123; Path=/path.html"),
              ("Content-Encoding", "gzip"), ("X-Custom", "test")], accept_encoding="gzip, deflate, br")
    assert got.headers.fields == [
        ("Content-Length", "200000"), ("Content-Type", "image/png"),
        ("Set-Cookie", "foo=bar; Path=/warc/20171226/http://example.com/"),
        ("Set-Cookie", "abc=123; Path=/warc/20171226/http://example.com/path.html"),
        ("Content-Encoding", "gzip"), ("X-Custom", "test")]
    assert (got.dechunk, got.decode, got.recompute_length) == (False, None, False)


def test_chunked():
    got = rw([("Content-Type", "image/png"), ("Transfer-Encoding", "chunked")], accept_encoding="gzip")
    assert got.headers.fields == [("Content-Type", "image/png"), ("X-Archive-Orig-Transfer-Encoding", "chunked")]
    assert got.dechunk and got.recompute_length and got.decode is None


@pytest.mark.parametrize("accept, decode", [
    (None, "gzip"), ("", "gzip"), ("gzip", None), ("gzip, deflate, br", None), ("GZIP", None), ("br", "gzip"),
    ("gzip;q=0", "gzip"), ("gzip; q=0.5", None), ("*", None), ("*;q=0", "gzip"), ("*, gzip;q=0", "gzip"), ("x-gzip", "gzip"),
])
def test_accept_encoding(accept, decode):
    got = rw([("Content-Encoding", "gzip"), ("Content-Length", "10")], accept_encoding=accept)
    assert got.decode == decode
    assert got.recompute_length == (decode is not None)
    assert (("Content-Encoding", "gzip") in got.headers.fields) == (decode is None)


def test_identity_is_never_decoded():
    got = rw([("Content-Encoding", "identity"), ("Content-Length", "3")])
    assert got.decode is None and got.headers.fields == [("Content-Encoding", "identity"), ("Content-Length", "3")]


@pytest.mark.parametrize("values, kept", [
    (["5"], True), (["0"], True), (["5", "5"], True), (["5", "6"], False), (["+5"], False), ([" 7"], False),
    (["1_0"], False), (["\u0661\u0662"], False), (["-1"], False), (["abc"], False), ([""], False),
])
def test_content_length(values, kept):
    got = rw([("Content-Length", v) for v in values])
    assert got.recompute_length == (not kept)
    assert [k for k, _ in got.headers.fields] == ["Content-Length" if kept else "X-Archive-Orig-Content-Length"] * len(values)
    body_changed = rw([("Content-Length", v) for v in values], rewrite_body=True)
    assert body_changed.recompute_length and all(k.startswith("X-Archive-Orig-") for k, _ in body_changed.headers.fields)


def test_prefix_and_keep_rules():
    names = ["Cache-Control", "ETag", "Expires", "Last-Modified", "Vary", "Server", "Strict-Transport-Security",
             "Content-Security-Policy", "X-Frame-Options", "Alt-Svc", "Keep-Alive", "TE", "Proxy-Connection", "Upgrade",
             "Clear-Site-Data", "NEL", "Report-To", "Service-Worker-Allowed", "Memento-Datetime", "Speculation-Rules"]
    got = rw([(n, "v") for n in names])
    assert [k for k, _ in got.headers.fields] == ["X-Archive-Orig-" + n for n in names]
    kept = ["Content-Type", "Content-Disposition", "Accept-Ranges", "Content-Range", "WWW-Authenticate", "X-Anything",
            "Referrer-Policy", "x-custom"]
    assert rw([(n, "v") for n in kept]).headers.fields == [(n, "v") for n in kept]
    assert all(v in {"keep", "prefix", "cors", "encoding", "length", "transfer", "url", "location", "fetch_url", "link",
                     "refresh", "cookie"} for v in RULES.values())


def test_cors_headers_only_inert_when_urls_are_rewritten():
    h = [("Access-Control-Allow-Origin", "*"), ("Access-Control-Allow-Credentials", "true")]
    assert [k for k, _ in rw(h).headers.fields] == ["X-Archive-Orig-Access-Control-Allow-Origin",
                                                    "X-Archive-Orig-Access-Control-Allow-Credentials"]
    assert rw(h, page="2017id_/http://example.com/").headers.fields == h


def test_url_headers():
    got = rw([("Content-Location", "/a.html"), ("Content-Base", "http://example.com/b/"), ("SourceMap", "/x.js.map")],
             prefix="http://localhost:8080/warc/")
    assert got.headers.fields == [("Content-Location", "/warc/20171226/http://example.com/a.html"),
                                  ("Content-Base", "http://localhost:8080/warc/20171226/http://example.com/b/"),
                                  ("SourceMap", "/warc/20171226/http://example.com/x.js.map")]


def test_identity_mode():
    h = [("Location", "http://example.com/next"), ("Content-Location", "http://example.com/a"), ("Link", "<http://x/>; rel=next"),
         ("Refresh", "0; url=http://x/"), ("Set-Cookie", "a=b; Path=/"), ("X-SourceMap", "/m"), ("Date", "d")]
    got = rw(h, page="2017id_/http://example.com/")
    assert got.headers.fields == [
        ("Location", "/warc/2017id_/http://example.com/next"), ("X-Archive-Orig-Location", "http://example.com/next"),
        ("Content-Location", "http://example.com/a"), ("X-Archive-Orig-Link", "<http://x/>; rel=next"),
        ("X-Archive-Orig-Refresh", "0; url=http://x/"), ("X-Archive-Orig-Set-Cookie", "a=b; Path=/"),
        ("X-Archive-Orig-X-SourceMap", "/m"), ("X-Archive-Orig-Date", "d")]


A = "http://localhost:8080/warc/"


@pytest.mark.parametrize("value, want", [
    ("<https://fonts.example/x.woff2>; rel=preload; as=font", f"<{A}2017oe_/https://fonts.example/x.woff2>; rel=preload; as=font"),
    ('<http://x/s.css>; rel="stylesheet", </j.js>; rel=preload; as="script"',
     f'<{A}2017cs_/http://x/s.css>; rel="stylesheet", </warc/2017js_/http://example.com/j.js>; rel=preload; as="script"'),
    ("<//cdn.example>; rel=preconnect", "<//localhost:8080/warc/2017oe_///cdn.example>; rel=preconnect"),
    ('<http://x/a,b>; rel="next"; title="a, <b>"', f'<{A}2017oe_/http://x/a,b>; rel="next"; title="a, <b>"'),
    ("<rel.html>; rel=alternate", "<rel.html>; rel=alternate"),
    ("http://x/ no brackets", "http://x/ no brackets"),
    ("<http://x/", "<http://x/"),
    ("", ""),
])
def test_link(value, want):
    assert rewrite_link(value, UrlRewriter("2017/http://example.com/", A)) == want


@pytest.mark.parametrize("value, want", [
    ("0; url=http://example.com/next", "0; url=/w/2017/http://example.com/next"),
    ("5;URL='http://example.com/n' ", "5;URL='/w/2017/http://example.com/n' "),
    ('3, "//x.com/a"', '3, "/w/2017///x.com/a"'),
    ("1 http://x/", "1 /w/2017/http://x/"),
    ("url=/a", "url=/w/2017/http://example.com/a"),
    ("0; url=javascript:alert(1)", "0; url=javascript:alert(1)"),
    ("5", "5"), ("", ""), ("0;", "0;"), ("0; url=", "0; url="),
])
def test_refresh(value, want):
    assert rewrite_refresh(value, UrlRewriter("2017/http://example.com/", "/w/")) == want


def cookies(value, page="20131226101010/http://example.com/some/path/index.html", prefix="/pywb/", full=None, rel=None):
    return [v for _, v in rewrite_set_cookie(value, UrlRewriter(page, prefix, full, rel_prefix=rel))]


def test_cookies_host_scope():
    assert cookies("a=b; c=d;") == ["a=b", "c=d"]
    assert cookies("some=value; Path=/;") == ["some=value; Path=/pywb/20131226101010/http://example.com/"]
    assert cookies("some=value; Path=/diff/path/;") == ["some=value; Path=/pywb/20131226101010/http://example.com/diff/path/"]
    assert cookies("some=value; Domain=.example.com; Path=/diff/path/; Max-Age=1500") == \
        ["some=value; Path=/pywb/20131226101010/http://example.com/"]
    assert cookies("abc=def; Path=file.html; Expires=Wed, 13 Jan 2021 22:23:01 GMT") == ["abc=def; Path=file.html"]
    assert cookies("abc@def=123") == []
    assert cookies("some=value; Domain=.example.com; Secure; Path=/diff/path/; HttpOnly; Max-Age=1500",
                   prefix="http://localhost:8080/pywb/", rel="/pywb/") == \
        ["some=value; HttpOnly; Path=/pywb/20131226101010/http://example.com/"]
    assert cookies("abc=def; Path=/f.html; HttpOnly; Secure", prefix="https://localhost:8080/p/") == \
        ["abc=def; HttpOnly; Path=/p/20131226101010/http://example.com/f.html; Secure"]
    assert cookies("abc=def; Path=/f.html; Expires=Wed, 13 Jan 2021 22:23:01 GMT, foo=bar") == \
        ["abc=def; Path=/pywb/20131226101010/http://example.com/f.html,", "foo=bar"]
    # an absolute archival path is cut to its path
    assert cookies("a=b; Path=http://example.com/x/", prefix="http://h/pywb/") == \
        ["a=b; Path=/pywb/20131226101010/http://example.com/x/"]


def test_httponly_cookies_for_every_modifier():
    got = cookies("a=b; Path=/; HttpOnly", page="20171226mp_/http://example.com/", prefix="/warc/")
    assert got == [f"a=b; HttpOnly; Path=/warc/20171226{m}/http://example.com/"
                   for m in ("mp_", "cs_", "js_", "im_", "oe_", "if_", "sw_", "wkrf_")]
    assert len(cookies("a=b; Path=/x; HttpOnly", page="20171226mp_/http://example.com/")) == 1
    assert len(cookies("a=b; Path=/", page="20171226mp_/http://example.com/")) == 1


def test_service_worker_allowed():
    got = rw([("Content-Type", "application/javascript")], page="2017sw_/https://example.com/a/sw.js")
    assert got.headers.fields[-1] == ("Service-Worker-Allowed", "/warc/2017mp_/https://example.com/")


# --------------------------------------------------------------------------- properties

NAMES = st.sampled_from(["Location", "Content-Location", "Content-Base", "Link", "Refresh", "SourceMap", "Set-Cookie",
                         "Content-Length", "Content-Encoding", "Transfer-Encoding", "Date", "X-Custom", "content-length",
                         "LOCATION", "set-cookie", "Keep-Alive", "Access-Control-Allow-Origin"])
VALUES = st.sampled_from(["http://live.example/x", "//live.example/x", "HTTP://live.example/", " http://live.example/",
                          "\\\\live.example/x", "/root", "rel", "../../../../x", "%2e%2e/%2e%2e/%2e%2e/x", "0",
                          "12", "+3", "gzip", "chunked", "a=b; Domain=live.example; Path=/", "a=b; Path=/", "a=b; Path=../../..",
                          "a=b; Path=http://live.example/", '<http://live.example/f>; rel=preload; as=font',
                          "<//live.example>; rel=preconnect", "0; url=http://live.example/", "5, //live.example/",
                          "a=b; HttpOnly; Path=/x/", "x"]) | st.text(max_size=30)
HEADS = st.lists(st.tuples(NAMES, VALUES), max_size=8)
PAGES = st.sampled_from(["20171226/http://example.com/", "20171226mp_/http://example.com/a/b", "2017id_/http://example.com/",
                         "2017sw_/https://example.com/sw.js", "http://example.com/", "2017bn_/http://example.com/"])
URL_HEADERS = ("location", "content-location", "content-base", "sourcemap", "x-sourcemap")


def _inside(url: str) -> bool:
    """Loads from the archive: under the collection, relative without '../', or not fetched from
    the web (another scheme: 'javascript:', 'a:')."""
    url = url.strip()
    if url.startswith(("/warc/", "http://localhost:8080/warc/", "//localhost:8080/warc/")):
        return True
    m = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", url)
    if m:
        return m.group(1).lower() not in ("http", "https", "ftp", "ws", "wss")
    return not url.startswith(("/", "\\")) and "../" not in url and not re.search(r"(?i)(?:^|[/\\])(?:\.|%2e){2}[/\\]", url)


@settings(max_examples=800, suppress_health_check=[HealthCheck.too_slow])
@given(HEADS, PAGES, st.sampled_from(["/warc/", "http://localhost:8080/warc/"]), st.booleans(),
       st.sampled_from([None, "", "gzip", "br, gzip"]))
def test_any_head(head, page, prefix, body, accept):
    got = rw(head, page=page, prefix=prefix, rewrite_body=body, accept_encoding=accept)
    fields = got.headers.fields
    lengths = [v for k, v in fields if k.lower() == "content-length"]
    assert not (got.recompute_length and lengths)
    assert all(v.isdigit() and v.isascii() for v in lengths) and len(set(lengths)) <= 1
    assert not any(k.lower() == "transfer-encoding" for k, _ in fields)
    assert got.dechunk == any(k.lower() == "transfer-encoding" for k, _ in head)
    for k, v in fields:
        low = k.lower()
        if low in URL_HEADERS and not (low != "location" and page.startswith(("2017id_", "2017bn_"))):
            assert _inside(v), (k, v)
        elif low == "link":
            assert all(_inside(u) for u in re.findall(r"<([^>]*)>", v)), v
        elif low == "refresh":
            assert _inside(re.sub(r"^\s*[0-9.]*\s*[;,]?\s*(url\s*=\s*)?['\"]?", "", v, flags=re.I)), v
        elif low == "set-cookie":
            jar = SimpleCookie(v)
            for morsel in jar.values():
                assert not morsel["domain"] and not morsel["expires"] and not morsel["max-age"]
                path = morsel["path"]
                assert not path or path.startswith("/warc/") or not path.startswith("/"), v
                if path.startswith("/warc/"):
                    assert "/../" not in path and not path.endswith("/..")
