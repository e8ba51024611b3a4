"""warchive.replay.urls on its own: the archival URL grammar (ArchivalUrl) and URL rewriting
(UrlRewriter), case by case as pywb 2.10 answers (tests/differential/test_urls_vs_pywb.py asks
pywb itself), our deliberate differences (docs/replay.md), and properties: parsing never fails
but with ArchivalUrlError, str() parses back, and no rewritten URL leaves the archive."""

from __future__ import annotations

import dataclasses
import re
from urllib.parse import urljoin, urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from budget import examples

from archival_urls import IDN, archival_paths, references
from warchive.errors import ArchiveError
from warchive.replay.urls import (_PATH_START, ArchivalUrl, ArchivalUrlError, UrlRewriter, display_url, link_modifier,
                                  normalize_url)

PAGE = "20131010/http://example.com/path/page.html"
IDN_PUNY = "xn--e1afmkfd.xn--80akhbyknj4f"
IDN_PCT = "%D0%BF%D1%80%D0%B8%D0%BC%D0%B5%D1%80.%D0%B8%D1%81%D0%BF%D1%8B%D1%82%D0%B0%D0%BD%D0%B8%D0%B5"


def fields(path):
    u = ArchivalUrl.parse(path)
    return u.type, u.timestamp, u.end_timestamp, u.modifier, u.url, str(u)


# --------------------------------------------------------------------------- the grammar

@pytest.mark.parametrize("path, want", [
    ("20131010000506/example.com", ("replay", "20131010000506", "", "", "http://example.com", "20131010000506/http://example.com")),
    ("20130102im_/https://example.com", ("replay", "20130102", "", "im_", "https://example.com", "20130102im_/https://example.com")),
    ("20130102im_/https:/example.com", ("replay", "20130102", "", "im_", "https://example.com", "20130102im_/https://example.com")),
    ("20130102im_///example.com", ("replay", "20130102", "", "im_", "http://example.com", "20130102im_/http://example.com")),
    ("20130102$cbr:test-foo.123/https:/example.com",
     ("replay", "20130102", "", "$cbr:test-foo.123", "https://example.com", "20130102$cbr:test-foo.123/https://example.com")),
    ("cs_/example.com", ("latest_replay", "", "", "cs_", "http://example.com", "cs_/http://example.com")),
    ("cs_/example.com/?foo=http://example.com/",
     ("latest_replay", "", "", "cs_", "http://example.com/?foo=http://example.com/", "cs_/http://example.com/?foo=http://example.com/")),
    ("im_/20130102.org", ("latest_replay", "", "", "im_", "http://20130102.org", "im_/http://20130102.org")),
    ("20130102.example.com", ("latest_replay", "", "", "", "http://20130102.example.com", "http://20130102.example.com")),
    ("20130102.org/1", ("latest_replay", "", "", "", "http://20130102.org/1", "http://20130102.org/1")),
    ("20130102/1.com", ("replay", "20130102", "", "", "http://1.com", "20130102/http://1.com")),
    ("https://example.com/xyz?a=%2f&b=%2E",
     ("latest_replay", "", "", "", "https://example.com/xyz?a=%2f&b=%2E", "https://example.com/xyz?a=%2f&b=%2E")),
    ("http://example.com?example=2", ("latest_replay", "", "", "", "http://example.com?example=2", "http://example.com?example=2")),
    ("http://example.com/xyz##abc", ("latest_replay", "", "", "", "http://example.com/xyz##abc", "http://example.com/xyz##abc")),
    ("urn:X-wpull:log", ("latest_replay", "", "", "", "urn:X-wpull:log", "urn:X-wpull:log")),
    ("URN:x", ("latest_replay", "", "", "", "http://URN:x", "http://URN:x")),   # urn: is matched in lower case only
    ("https%3A//example.com/", ("latest_replay", "", "", "", "https://example.com/", "https://example.com/")),
    ("2014/http%3A%2F%2Fexample.com/", ("replay", "2014", "", "", "http://example.com/", "2014/http://example.com/")),
    ("///example.com", ("latest_replay", "", "", "", "http://example.com", "http://example.com")),
    ("//example.com/", ("latest_replay", "", "", "", "http://example.com/", "http://example.com/")),
    ("/example.com/", ("latest_replay", "", "", "", "http://example.com/", "http://example.com/")),
    ("https:/", ("latest_replay", "", "", "", "https:/", "https:/")),
    ("http://", ("latest_replay", "", "", "", "http://", "http://")),
    ("mailto:a@b", ("latest_replay", "", "", "", "http://mailto:a@b", "http://mailto:a@b")),
    ("a,b:/x", ("latest_replay", "", "", "", "a,b://x", "a,b://x")),   # ',' is a scheme character (pywb's range +-.)
    ("2013xx_/http://x/", ("replay", "2013", "", "xx_", "http://x/", "2013xx_/http://x/")),   # unknown modifiers pass
    ("2013ABC_/x", ("latest_replay", "", "", "", "http://2013ABC_/x", "http://2013ABC_/x")),   # not a modifier
    ("2013$/x", ("latest_replay", "", "", "", "http://2013$/x", "http://2013$/x")),
    ("2013", ("latest_replay", "", "", "", "http://2013", "http://2013")),
    ("2013id_", ("latest_replay", "", "", "", "http://2013id_", "http://2013id_")),
    ("1234567890123456789/http://x/", ("replay", "1234567890123456789", "", "", "http://x/", "1234567890123456789/http://x/")),
    ("2013////x", ("replay", "2013", "", "", "http:///x", "2013/http:///x")),   # at most 3 slashes go
    # queries
    ("*/http://example.com/abc?def=a", ("query", "", "", "", "http://example.com/abc?def=a", "*/http://example.com/abc?def=a")),
    ("*/http://example.com/abc?def=a*", ("url_query", "", "", "", "http://example.com/abc?def=a", "*/http://example.com/abc?def=a*")),
    ("*/example.com*", ("url_query", "", "", "", "http://example.com", "*/http://example.com*")),
    ("2010*/http://example.com/", ("query", "2010", "", "", "http://example.com/", "2010*/http://example.com/")),
    ("2010-/http://example.com/", ("query", "2010", "", "", "http://example.com/", "2010*/http://example.com/")),
    ("2009-2015/http://example.com/", ("query", "2009", "2015", "", "http://example.com/", "2009*2015/http://example.com/")),
    ("2009*2015/http://example.com/", ("query", "2009", "2015", "", "http://example.com/", "2009*2015/http://example.com/")),
    ("-2015/http://example.com/", ("query", "", "2015", "", "http://example.com/", "*2015/http://example.com/")),
    ("*2015/http://example.com/", ("query", "", "2015", "", "http://example.com/", "*2015/http://example.com/")),
    ("json/*/http://example.com/", ("query", "", "", "json", "http://example.com/", "json/*/http://example.com/")),
    ("timemap-link/2011*/http://example.com/",
     ("query", "2011", "", "timemap-link", "http://example.com/", "timemap-link/2011*/http://example.com/")),
    ("2013-2014", ("query", "2013", "201", "", "http://4", "2013*201/http://4")),   # regex backtracking, as pywb
    ("-ex.com", ("query", "", "", "", "http://ex.com", "*/http://ex.com")),
    ("*/*", ("url_query", "", "", "", "http://", "*/http://*")),
    ("*/x**", ("url_query", "", "", "", "http://x*", "*/http://x**")),
    # IDN: punycode in .url, UTF-8 %-encoded in str()
    ("http://" + IDN, ("latest_replay", "", "", "", "http://" + IDN_PUNY, "http://" + IDN_PCT)),
    ("2014id_/https://" + IDN + "/abc", ("replay", "2014", "", "id_", f"https://{IDN_PUNY}/abc", f"2014id_/https://{IDN_PCT}/abc")),
    ("2014id_/http://" + IDN_PCT + "/abc", ("replay", "2014", "", "id_", f"http://{IDN_PUNY}/abc", f"2014id_/http://{IDN_PCT}/abc")),
    ("2014id_///" + IDN_PCT + "/abc", ("replay", "2014", "", "id_", f"http://{IDN_PUNY}/abc", f"2014id_/http://{IDN_PCT}/abc")),
    ("//" + IDN + "/abc/", ("latest_replay", "", "", "", f"http://{IDN_PUNY}/abc/", f"http://{IDN_PCT}/abc/")),
    (f"http://{IDN}:8080/", ("latest_replay", "", "", "", f"http://{IDN_PUNY}:8080/", f"http://{IDN_PCT}%3A8080/")),
    ("http://example.com:8080/xn--a", ("latest_replay", "", "", "", "http://example.com:8080/xn--a", "http://example.com%3A8080/xn--a")),
    ("http://xn--abcd/", ("latest_replay", "", "", "", "http://xn--abcd/", "http://xn--abcd/")),
    ("http://a+b.com/", ("latest_replay", "", "", "", "http://a b.com/", "http://a b.com/")),   # '+' in a host is a space
    ("http://%2541.com/", ("latest_replay", "", "", "", "http://%41.com/", "http://A.com/")),   # str() decodes once more
])
def test_parse_as_pywb(path, want):
    assert fields(path) == want


@pytest.mark.parametrize("digits", range(1, 15))
@pytest.mark.parametrize("modifier", ["", "mp_", "id_", "js_", "cs_", "im_", "oe_", "if_", "fr_", "xx_", "$br:x.1"])
def test_every_timestamp_length_and_modifier(digits, modifier):
    ts = "20131010101010"[:digits]
    u = ArchivalUrl.parse(f"{ts}{modifier}/http://example.com/a?b=c#d")
    assert (u.type, u.timestamp, u.modifier, u.url) == ("replay", ts, modifier, "http://example.com/a?b=c#d")
    assert str(u) == f"{ts}{modifier}/http://example.com/a?b=c#d"
    assert u.is_replay and not u.is_query and u.is_identity == (modifier == "id_")
    latest = ArchivalUrl.parse(f"{modifier}/http://example.com/" if modifier else "http://example.com/")
    assert (latest.type, latest.timestamp, latest.modifier) == ("latest_replay", "", modifier)


@pytest.mark.parametrize("bad", ["", 7, None, b"2013/http://x/", "2013/http://x/\ud800", "\udcff"])
def test_bad_input_is_an_archival_url_error(bad):
    with pytest.raises(ArchivalUrlError) as e:
        ArchivalUrl.parse(bad)
    assert isinstance(e.value, ArchiveError) and isinstance(e.value, ValueError)


@pytest.mark.parametrize("path", ["http://[::1/", "http://a[b]c/", "2013/http://x]y/"])
def test_a_malformed_bracketed_host_is_refused(path):
    # pywb takes these and then fails on them with a 500 (urlsplit raises); we refuse at once
    with pytest.raises(ArchivalUrlError):
        ArchivalUrl.parse(path)


def test_building_one():
    u = ArchivalUrl("example.com/a", "2013", "im_")
    assert (u.type, u.url, str(u)) == ("replay", "http://example.com/a", "2013im_/http://example.com/a")
    assert ArchivalUrl("http://x/").type == "latest_replay"
    q = ArchivalUrl("http://x/", "2009", "json", end_timestamp="2015", type="query")
    assert str(q) == "json/2009*2015/http://x/" and q.is_query
    assert str(ArchivalUrl("http://x/", type="url_query")) == "*/http://x/*"
    assert dataclasses.replace(u, modifier="id_") == ArchivalUrl.parse("2013id_/http://example.com/a")
    assert u == ArchivalUrl.parse(str(u)) and hash(u) == hash(ArchivalUrl.parse(str(u)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        u.url = "http://other/"   # type: ignore[misc]


@pytest.mark.parametrize("kwargs", [
    dict(url=""), dict(url="http://x/", timestamp="2013a"), dict(url="http://x/", timestamp="\u0662\u0660"),
    dict(url="http://x/", modifier="im"), dict(url="http://x/", modifier="../"), dict(url="http://x/", modifier="a/b_"),
    dict(url="http://x/", type="replay"), dict(url="http://x/", timestamp="2013", type="latest_replay"),
    dict(url="http://x/", end_timestamp="2014"), dict(url="http://x/", type="other"),
    dict(url="http://x/", modifier="$x", type="query"), dict(url="http://x/*", type="query"),
    dict(url="http://x/\udc80"), dict(url=b"http://x/"),
])
def test_building_a_bad_one(kwargs):
    with pytest.raises(ArchivalUrlError):
        ArchivalUrl(**kwargs)


# --------------------------------------------------------------------------- deliberate differences (docs/replay.md)

def test_ascii_digits_only():
    # pywb's \d takes Arabic-Indic digits as a timestamp
    u = ArchivalUrl.parse("\u0662\u0660\u0661\u0663/http://example.com/")
    assert u.type == "latest_replay" and u.timestamp == ""


def test_non_ascii_is_encoded_alone():
    # pywb %-encodes all of a path and query that holds a non-ASCII character (its ?, =, & and %)
    u = ArchivalUrl.parse("http://example.com/caf\u00e9?a=b%20c&d")
    assert u.url == "http://example.com/caf%C3%A9?a=b%20c&d"


def test_idn_userinfo_is_not_idna_encoded():
    # pywb IDNA-encodes userinfo and host together ('xn--user@bcher-9vb.de')
    assert ArchivalUrl.parse("http://user@b\u00fccher.de/").url == "http://user@xn--bcher-kva.de/"
    assert ArchivalUrl.parse("http://\u00fc@example.com/").url == "http://%C3%BC@example.com/"
    assert str(ArchivalUrl.parse("http://user:pw@b\u00fccher.de/")) == "http://user%3Apw%40b%C3%BCcher.de/"


def test_tabs_and_newlines_go_and_controls_are_encoded():
    # pywb's regexes stop at a newline; controls from %0A in a host come out raw (a header split)
    assert fields("2013/http://a/\nb") == ("replay", "2013", "", "", "http://a/b", "2013/http://a/b")
    assert ArchivalUrl.parse("http://a%0Ab.com/\x00x").url == "http://a%0Ab.com/%00x"
    for path in ("2013/http://a%0d%0aSet-Cookie:%20x/", "http://x/\r\nLocation: evil"):
        s = str(ArchivalUrl.parse(path))
        assert not re.search(r"[\x00-\x1f\x7f]", s), s


# --------------------------------------------------------------------------- properties

def _str_is_not_canonical(u: ArchivalUrl) -> bool:
    """As in pywb: each str() decodes a host's %XX once more ('%2541' gives '%41', then 'A') and
    '+' to a space; a URL holding 'xn--' goes through urlsplit and urlunsplit, which lower its
    scheme and drop extra slashes and an empty query."""
    head = re.split(r"(?<![:/])[/?](?!/)", u.url, maxsplit=1)[0]
    return "%" in head or "+" in head or "xn--" in u.url


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(archival_paths())
def test_str_parses_back(path):
    u = ArchivalUrl.parse(path)
    if _str_is_not_canonical(u):
        once = str(ArchivalUrl.parse(str(u)))   # the generated hosts hold no '%' nor '+': one round
        assert str(ArchivalUrl.parse(once)) == once, (path, str(u), once)
        return
    again = ArchivalUrl.parse(str(u))
    assert again == u, (path, str(u))
    assert str(again) == str(u)


_ANY = st.text(st.characters(blacklist_categories=("Cs",)), max_size=60) | st.lists(
    st.sampled_from(list("0123456789*-/$:._abcz%2eEF\\?#@ \t\n\x00\u00e9") + ["http:", "//", "..", "%2e%2e", "xn--"]),
    max_size=30).map("".join)


@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
@given(_ANY)
def test_parsing_anything_never_crashes_and_nothing_is_path_like(path):
    try:
        u = ArchivalUrl.parse(path)
    except ArchivalUrlError:
        return
    assert u.type in ("replay", "latest_replay", "query", "url_query")
    assert u.timestamp.isdigit() or u.timestamp == ""
    assert u.end_timestamp.isdigit() or u.end_timestamp == ""
    assert u.timestamp.isascii() and u.end_timestamp.isascii()
    assert "/" not in u.modifier and "\\" not in u.modifier and u.modifier not in (".", "..")
    assert not re.search(r"[\x00-\x1f\x7f]", u.url + str(u))
    s = str(u)
    assert isinstance(s, str) and s.endswith(("*",) if u.type == "url_query" else ("",))


@pytest.mark.parametrize("path", ["../../etc/passwd", "/etc/passwd", "%2e%2e/%2e%2e/etc/passwd", "2013/../../../x",
                                  "2013id_/..%2f..%2fetc", "..\\..\\windows", "*/../x*", "2013/file:///etc/passwd"])
def test_hostile_paths_are_urls(path):
    u = ArchivalUrl.parse(path)
    assert u.timestamp in ("", "2013") and u.modifier in ("", "id_")
    assert u.url.startswith(("http://", "file://")), u.url


# --------------------------------------------------------------------------- rewriting

@pytest.mark.parametrize("ref, page, prefix, mod, full, want", [
    ("other.html", PAGE, "https://web.archive.org/web/", None, None, "other.html"),
    ("/path/file.js", PAGE, "https://web.archive.org/web/", "js_", None, "/web/20131010js_/http://example.com/path/file.js"),
    ("/file.js", "20131010/http://example.com/", "/coll/", None, None, "/coll/20131010/http://example.com/file.js"),
    ("/file.js", "20131010/http://example.com", "/coll/", "js_", None, "/coll/20131010js_/http://example.com/file.js"),
    ("file.js", "20131010/http://example.com", "/coll/", "", None, "file.js"),
    ("/other.html", "20130907*/http://example.com/path/page.html", "http://localhost:8080/coll/", None, None,
     "/coll/20130907*/http://example.com/other.html"),
    ("/other.html", "20130907*/http://example.com/path/page.html", "/coll/", None, None, "/coll/20130907*/http://example.com/other.html"),
    ("other.html", "20130907*/http://example.com/path/page.html", "/coll/", None, None, "other.html"),
    ("../other.html", "20131112im_/http://example.com/path/page.html", "/coll/", None, None,
     "/coll/20131112im_/http://example.com/other.html"),
    ("../../other.html", "*/http://example.com/index.html", "localhost:8080/", None, None, "localhost:8080/*/http://example.com/other.html"),
    ("path/../../other.html", "*/http://example.com/index.html", "localhost:8080/", None, None,
     "localhost:8080/*/http://example.com/other.html"),
    ("http://some-other-site.com", "20101226101112/http://example.com/index.html", "localhost:8080/", None, None,
     "localhost:8080/20101226101112/http://some-other-site.com"),
    ("http://localhost:8080/web/2014im_/http://some-other-site.com", "http://example.com/index.html", "/web/", None,
     "http://localhost:8080/web/", "http://localhost:8080/web/2014im_/http://some-other-site.com"),
    ("/web/http://some-other-site.com", "http://example.com/index.html", "/web/", None, "http://localhost:8080/web/",
     "/web/http://some-other-site.com"),
    (r"http:\/\/some-other-site.com", "20101226101112/http://example.com/index.html", "https://localhost:8080/", None, None,
     r"https://localhost:8080/20101226101112/http:\/\/some-other-site.com"),
    ("//some-other-site.com", "20101226101112/http://example.com/index.html", "http://localhost:8080/", None, None,
     "//localhost:8080/20101226101112///some-other-site.com"),
    (r"\/\/some-other-site.com", "20101226101112/http://example.com/index.html", "http://localhost:8080/", None, None,
     r"//localhost:8080/20101226101112/\/\/some-other-site.com"),
    (r"\\/\\/some-other-site.com", "20101226101112/http://example.com/index.html", "https://localhost:8080/", None, None,
     r"//localhost:8080/20101226101112/\\/\\/some-other-site.com"),
    ("//x.com/a", PAGE, "/coll/", None, None, "/coll/20131010///x.com/a"),
    ("../../other.html", "2020/http://example.com/index.html", "/", None, None, "/2020/http://example.com/other.html"),
    ("../../other.html", "2020/http://example.com/index.html", "", None, None, "2020/http://example.com/other.html"),
    ("/2013/http://x/", PAGE, "/", None, None, "/20131010/http://example.com/2013/http://x/"),   # '/' protects nothing
    ("/coll/2013/http://x/", PAGE, "/coll/", None, None, "/coll/2013/http://x/"),
    ("", "20131010010203/http://example.com/file.html", "/web/", None, None, ""),
    ("?q=1", PAGE, "/coll/", None, None, "?q=1"),
    ("a?x=../b", PAGE, "/coll/", None, None, "/coll/20131010/http://example.com/path/a?x=../b"),
    ("..", PAGE, "/coll/", None, None, ".."),
    ("../../../../../../x", PAGE, "/coll/", None, None, "/coll/20131010/http://example.com/x"),
    ("/../../x", PAGE, "/coll/", None, None, "/coll/20131010/http://example.com/x"),
    ("/x#frag", PAGE, "/coll/", None, None, "/coll/20131010/http://example.com/x#frag"),
    ("http://x/?q#frag", PAGE, "/coll/", "", None, "/coll/20131010/http://x/?q#frag"),
    ("ftp://x/y", PAGE, "/coll/", None, None, "/coll/20131010/ftp://x/y"),
    ("https:/x.com", PAGE, "/coll/", None, None, "/coll/20131010/https:/x.com"),
    ("http://" + IDN + "/", PAGE, "/coll/", "im_", None, f"/coll/20131010im_/http://{IDN_PCT}/"),
    ("../c", "http://example.com:8080/a/b/", "/coll/", None, None, "/coll/http://example.com:8080/a/c"),
    ("/a", "20131010id_/http://example.com/", "/coll/", None, None, "/coll/20131010id_/http://example.com/a"),
    ("/a", "*/http://example.com/x*", "/coll/", None, None, "/coll/*/http://example.com/a*"),
    ("/a", "json/*/http://example.com/x", "/coll/", None, None, "/coll/json/*/http://example.com/a"),
    ("/x", PAGE, "/coll/", None, "http://h:8/coll/", "/coll/20131010/http://example.com/x"),
    ("http://x.com/a", PAGE, "http://h:8/coll/", "im_", None, "http://h:8/coll/20131010im_/http://x.com/a"),
    ("/a", PAGE, "http://h:8/coll/", None, None, "/coll/20131010/http://example.com/a"),
])
def test_rewrite_as_pywb(ref, page, prefix, mod, full, want):
    assert UrlRewriter(page, prefix, full).rewrite(ref, mod) == want


@pytest.mark.parametrize("ref", ["#anchor", "javascript:void(0)", "data:text/plain,x", "mailto:a@b.c", "about:blank",
                                 "file:///etc/passwd", "{{url}}", "blob:http://x/1", "tel:+123", "JavaScript:x('../')",
                                 "DATA:,x", "other.html", "./x", "?q", "", "a/..", "ws://x/"])
def test_left_alone(ref):
    assert UrlRewriter(PAGE, "/coll/").rewrite(ref) == ref


def test_force_abs():
    r = UrlRewriter("http://example.com/vucht.php", "http://localhost:8080/live/")
    assert r.rewrite("js/bundle.php?v=1", "js_", force_abs=True) == "/live/js_/http://example.com/js/bundle.php?v=1"
    assert r.rewrite("js/bundle.php?v=1", "js_") == "js/bundle.php?v=1"


@pytest.mark.parametrize("ref, want", [
    # read as a browser reads an attribute (pywb leaves all these as they are: the live web)
    ("HTTP://x.com/", "/coll/20131010/HTTP://x.com/"),
    ("Https://x.com/a", "/coll/20131010/Https://x.com/a"),
    (" http://x.com/ ", "/coll/20131010/http://x.com/"),
    ("\thttp://x.com/\n", "/coll/20131010/http://x.com/"),
    ("http://ex\nample.com/", "/coll/20131010/http://example.com/"),
    ("\\\\x.com/a", "/coll/20131010///x.com/a"),
    ("\\/x.com/a", "/coll/20131010///x.com/a"),
    ("/\\x.com/a", "/coll/20131010///x.com/a"),
    ("\\x", "/coll/20131010/http://example.com/x"),
    # dot segments: %2e is a dot, backslashes are slashes, absolute URLs resolved
    ("%2e%2e/%2e%2e/%2e%2e/x", "/coll/20131010/http://example.com/x"),
    ("a\\..\\..\\..\\x", "/coll/20131010/http://example.com/x"),
    ("http://x/../../../../../../y", "/coll/20131010/http://x/y"),
    ("//x/a/../../../b?c=../d", "/coll/20131010///x/b?c=../d"),
    # non-ASCII alone is %-encoded
    ("/\u00e9?a=b%20", "/coll/20131010/http://example.com/%C3%A9?a=b%20"),
    ("http://b\u00fccher.de/\u00e9?a=b", "/coll/20131010/http://b%C3%BCcher.de/%C3%A9?a=b"),
])
def test_rewrite_where_we_differ(ref, want):
    assert UrlRewriter(PAGE, "/coll/").rewrite(ref) == want


def test_rewrite_never_raises_where_pywb_does():
    r = UrlRewriter(PAGE, "/coll/")
    assert r.rewrite("foo://[x/../") == "/coll/20131010/foo://[x/../"     # pywb: ValueError from urljoin
    assert r.rewrite("http://[xn--/") == "/coll/20131010/http://[xn--/"   # pywb: ValueError from urlsplit
    assert r.rewrite("http://x/\udcff/") == "/coll/20131010/http://x/%FF/"   # a raw byte, surrogate-escaped


def test_a_bad_modifier_is_refused():
    r = UrlRewriter(PAGE, "/coll/")
    for mod in ("im", "a/b_", "../", "$"):
        with pytest.raises(ArchivalUrlError):
            r.rewrite("/x", mod)
    assert r.rewrite("/x", "$br:1") == "/coll/20131010$br:1/http://example.com/x"


# The replay page's URL as the browser sees it; the property below resolves every rewritten URL
# against it the way a browser does (roughly: WHATWG's special-scheme rules), and asks that it
# stays under the collection, or is one of the schemes that never fetch.
_REPLAY_BASE = "http://localhost:8080/coll/20131010/http://example.com/path/page.html"
_INERT = ("#", "javascript:", "data:", "mailto:", "about:", "file:", "{", "blob:", "tel:")


def _browser_resolve(base: str, ref: str) -> str:
    ref = ref.strip("".join(map(chr, range(0x21)))).translate(str.maketrans("", "", "\t\n\r"))
    m = re.match(r"([A-Za-z][A-Za-z0-9+.-]*):", ref)
    if m and m.group(1).lower() in ("http", "https", "ftp", "ws", "wss"):
        rest = ref[m.end():]
        if m.group(1).lower() == "http" and rest[:1] not in ("/", "\\"):
            ref = rest   # same scheme as the base, no slashes: relative
        else:
            return m.group(1).lower() + "://" + rest.lstrip("/\\")
    elif m:
        return ref   # another scheme: nothing an attribute fetches
    q = min([i for i in (ref.find("?"), ref.find("#")) if i >= 0], default=len(ref))
    path = ref[:q].replace("\\", "/")
    path = "/".join(s.lower().replace("%2e", ".") if re.fullmatch(r"(?i)(?:\.|%2e){1,2}", s) else s for s in path.split("/"))
    return urljoin(base, path + ref[q:])


@settings(max_examples=examples(1500), suppress_health_check=[HealthCheck.too_slow])
@given(references, st.sampled_from([PAGE, "20131010/http://example.com", "20131010/http://example.com/a/b/c/d/e.html",
                               "http://example.com/", "*/http://example.com/x*"]),
       st.sampled_from(["/coll/", "http://localhost:8080/coll/"]))
def test_no_rewritten_url_leaves_the_collection(ref, page, prefix):
    r = UrlRewriter(page, prefix, "http://localhost:8080/coll/")
    out = r.rewrite(ref)
    base = "http://localhost:8080/coll/" + str(r.page)
    if out.strip().lower().startswith(_INERT):
        return
    resolved = _browser_resolve(base, out)
    if not resolved.startswith(("http://", "https://", "ftp://", "ws://", "wss://")):
        return   # 'ahttp:', 'x:y': schemes no attribute fetches
    assert resolved.startswith("http://localhost:8080/coll/"), (ref, out, resolved)


def test_deprefix():
    def dep(url, prefix, full):
        return UrlRewriter(url, prefix, full).deprefix(ArchivalUrl.parse(url).url)
    p, f = "/pywb/", "http://localhost:8080/pywb/"
    assert dep("2013id_/http://example.com/f?param=http://localhost:8080/pywb/20141226/http://example.com/", p, f) == \
        "http://example.com/f?param=http://example.com/"
    assert dep("2013id_/http://example.com/f?param=http://localhost:8080/pywb/if_/https://example.com/x.html", p, f) == \
        "http://example.com/f?param=https://example.com/x.html"
    assert dep("http://example.com/f?u=http%3A%2F%2Flocalhost%3A8080%2Fpywb%2Fextra%2Fpath%2Fhttp%3A%2F%2Fexample.com%2Fx&b=1",
               p, f) == "http://example.com/f?u=http%3A%2F%2Fexample.com%2Fx&b=1"
    assert UrlRewriter(PAGE, "").deprefix("http://x/?a=123") == "http://x/?a=123"   # no prefix, nothing to take


def test_unrewrite():
    r = UrlRewriter(PAGE, "/coll/", "http://h:8/coll/")
    assert r.unrewrite("http://h:8/coll/2014im_/http://x.com/a") == ArchivalUrl.parse("2014im_/http://x.com/a")
    assert r.unrewrite("/coll/http://x.com/").url == "http://x.com/"
    assert r.unrewrite("http://other/coll/2014/http://x/") is None
    assert r.unrewrite("/coll/") is None


def test_archival_url_and_rebase():
    assert UrlRewriter("19960708im_/http://domain.example.com/path.txt", "/abc/").archival_url(url="") == "/abc/19960708im_/"
    assert UrlRewriter("2013id_/example.com/file/path/blah.html", "/123/").archival_url(timestamp="20131024") == \
        "/123/20131024id_/http://example.com/file/path/blah.html"
    # tabs and newlines are dropped from a new url (as browsers read URLs), whichever there are
    for url in ("http://x/\ta", "http://x/\na", "http://x/\ra", "\thttp://x/\r\n\ta\n"):
        assert UrlRewriter(PAGE, "/c/").archival_url(url) == "/c/20131010/http://x/a"
    r = UrlRewriter(PAGE, "/coll/", "http://h:8/coll/").rebase("/other/base/")
    assert (r.page.url, r.prefix, r.full_prefix) == ("http://example.com/other/base/", "/coll/", "http://h:8/coll/")
    assert r.rewrite("../x") == "/coll/20131010/http://example.com/other/x"


def test_link_modifiers():
    assert [link_modifier(r, a) for r, a in [("stylesheet", ""), ("preload", "script"), ("preload", "style"),
                                             ("preload", "image"), ("Preload", "FONT"), ("preload", "nope"),
                                             ("modulepreload", ""), ("alternate", ""), ("icon", ""), ("preload stylesheet", "")]] == \
        ["cs_", "js_", "cs_", "im_", "oe_", "oe_", "js_", "mp_", "oe_", "cs_"]


def test_normalize_and_display():
    assert normalize_url("example.com") == "http://example.com"
    assert normalize_url("http:/x") == "http://x"
    assert display_url("http://" + IDN_PUNY + "/") == f"http://{IDN_PCT}/"
    assert display_url("http://[xn--/") == "http://[xn--/"   # pywb raises ValueError
    assert normalize_url("//" + IDN) == "http:////" + IDN_PUNY   # the grammar strips the slashes, not this
    assert urlsplit(ArchivalUrl.parse("//" + IDN).url).netloc == IDN_PUNY


def _path_start_by_rule(url: str) -> int:
    """The first '/' or '?' neither after ':' or '/' nor before '/', written out (-1: none)."""
    for i, c in enumerate(url):
        if c in "/?" and (i == 0 or url[i - 1] not in ":/") and url[i + 1:i + 2] != "/":
            return i
    return -1


@settings(max_examples=examples(3000), deadline=None)
@given(st.text(alphabet="/?:a.\n%", max_size=12))
def test_where_a_path_starts(url):
    m = _PATH_START.search(url)
    assert (m.start() if m else -1) == _path_start_by_rule(url)
