"""The rewriting kernel's C fast paths against the Python they stand for, on generated inputs:
wa_rw_url against ``UrlRewriter.rewrite`` (as the kernel is set up by warchive.replay.kernel for a
page, a prefix and a modifier), wa_join against ``urllib.parse.urljoin``, and the C
character-reference decoder against ``warchive.htmltext.unescape_attr``. Wherever C answers (it
may decline: WA_SLOW), its answer must be the Python's, byte for byte; the sweeps also check that
C does answer the common cases, or these tests would prove nothing."""

from __future__ import annotations

import html
import itertools
from urllib.parse import urljoin

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from budget import examples

from archival_urls import PAGES, PREFIXES, archival_paths, target_urls
from warchive._ext import html_rewrite as k
from warchive.htmltext import unescape_attr
from warchive.replay.kernel import StreamRewriter
from warchive.replay.urls import ArchivalUrlError, UrlRewriter

SLOT_MODS = list(enumerate(k.SLOTS))
ASCII_PIECES = ["a", "b", "/", ".", ":", "?", "#", "%", "2", "e", "E", "h", "..", "../", "./", "%2e", "%2E", "%2e%2e",
                "http:", "https:", "HTTP:", "ftp:", "//", "javascript:", "data:", "x.com", "xn--", "@", "=", "&", ";",
                "+", "%41", "~", "mailto:", "{", "[", "]", "*", "'", "(", ")", "!", ",", "$", "-", "_", "8080",
                "/coll/", "http://localhost:8080/coll/", "tel:", "blob:", "about:", "wais:", "mms:", "rtsp:"]
ascii_refs = st.lists(st.sampled_from(ASCII_PIECES), min_size=1, max_size=14).map("".join)


def kernel(rw: UrlRewriter, defmod=None) -> k.Kernel:
    return StreamRewriter(rw, defmod=defmod)._kernel


def check_one(kern: k.Kernel, rw: UrlRewriter, mods, ref: str, slot: int, force: bool) -> bool:
    """True when C answered (and then agreed)."""
    rc, out = kern.rewrite_url(ref.encode("ascii"), slot, force)
    if rc == k.SLOW:
        return False
    try:
        want = rw.rewrite(ref, mods[slot], force_abs=force)
    except ArchivalUrlError:
        pytest.fail(f"C answered where UrlRewriter raises: {ref!r}")
    if rc == k.SAME:
        assert want == ref, (str(rw), ref, mods[slot], force)
    else:
        assert out.decode("ascii") == want, (str(rw), ref, mods[slot], force)
    return True


def setup(page: str, prefix: str, full, defmod=None):
    rw = UrlRewriter(page, prefix, full)
    sr = StreamRewriter(rw, defmod=defmod)
    return rw, sr._kernel, sr._mods


@settings(max_examples=examples(1500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(archival_paths(), st.sampled_from(PAGES)), st.sampled_from(PREFIXES),
       st.one_of(ascii_refs, target_urls().filter(str.isascii)), st.integers(0, len(k.SLOTS) - 1), st.booleans(),
       st.sampled_from([None, "", "mp_", "if_"]))
def test_fast_path_is_urlrewriter(page, prefixes, ref, slot, force, defmod):
    try:
        rw, kern, mods = setup(page, *prefixes, defmod=defmod)
    except ArchivalUrlError:
        return
    if not ref.isascii():
        return
    check_one(kern, rw, mods, ref, slot, force)


COMMON_REFS = [
    "http://example.com/", "https://www.example.org/a/b.html?x=1&y=2#f", "//cdn.example.net/lib.js", "/root.css",
    "/a/b/../c.png", "../up.html", "../../up/two.html", "./../x", "a/../../b?q=../z", "dir/../file", "../",
    "..", "../..", "sub/page.html", "page.html", "?query", "#frag", "javascript:void(0)", "mailto:a@b.c",
    "data:image/png;base64,AAAA", "HTTP://UPPER.EXAMPLE/", "ftp://files.example/x", "/coll/2013/http://x/",
    "http://example.com:8080/p;params?q#f", "../a;b", "../a?", "../a#", "/?", "/#", "//", "/", "http:x",
    "https://play.example/?code=a%20..%20b&edition=2015", "../%41b", "../a+b", "http://a+b.example/",
    "http://a%41.example/", "http://xn--bcher-kva.example/", "../xn--x", "x:y/../z", "/a//b/../c", "../a//b",
]


@pytest.mark.parametrize("page", PAGES + ["20240101000000mp_/http://docs.example/en/3/library/os.path.html",
                                          "2013mp_/https://h.example:8443/a/b/c/", "2013/http://h.example"])
@pytest.mark.parametrize("prefixes", PREFIXES)
def test_fast_path_sweep(page, prefixes):
    try:
        rw, kern, mods = setup(page, *prefixes)
    except ArchivalUrlError:
        pytest.skip("not an archival URL")
    answered = total = 0
    for ref, slot, force in itertools.product(COMMON_REFS, range(len(mods)), (False, True)):
        total += 1
        answered += check_one(kern, rw, mods, ref, slot, force)
    if rw.page.url.isascii() and "xn--" not in rw.page.url and ".." not in rw.page.url and rw.prefix in ("/coll/", "http://localhost:8080/coll/"):
        assert answered > total * 0.6, f"C answered {answered} of {total}"


# --------------------------------------------------------------------------- urljoin

BASES = ["http://ex.test/dir/page.html", "http://ex.test", "https://ex.test/a/b/", "http://ex.test/a//b/c",
         "http://ex.test/a/b;p?q=1#f", "http://user:pw@ex.test:81/x/y?z", "HTTP://EX.test/Up/", "http://ex.test/a/./b/../c",
         "ftp://ex.test/a/", "http://[::1]/a", "http://ex.test/%2e/x", "https://ex.test?only=query"]
JOIN_PIECES = ASCII_PIECES + ["//h.test", "https://o.test/", "HTTPS://x/", "http:/x", "http:///x", "http://[::1]/",
                              "http://[x/", ";p", "\\", "x\\..\\y"]
join_refs = st.lists(st.sampled_from(JOIN_PIECES), min_size=1, max_size=12).map("".join)


def check_join(base: str, ref: str) -> bool:
    got = k.join(base.encode(), ref.encode())
    if got is None:
        return False
    assert got.decode() == urljoin(base, ref), (base, ref)
    return True


@settings(max_examples=examples(3000), deadline=None)
@given(st.sampled_from(BASES), join_refs)
def test_join_is_urljoin(base, ref):
    check_join(base, ref)


def test_join_sweep():
    answered = total = 0
    for base, ref in itertools.product(BASES[:8], COMMON_REFS):
        total += 1
        answered += check_join(base, ref)
    assert answered > total * 0.7


# --------------------------------------------------------------------------- character references

REF_TEXT = ["&", "amp", "amp;", ";", "#", "x", "X", "3", "9", "0", "A", "f", "=", "copy", "lt", "gt", "quot", "apos;",
            "notin;", "not", "it", "nbsp", "#0;", "#x110000;", "#128;", "#x80", "#150", "#55296;", "#xD800;",
            "#99999999999999;", "a", " ", "é", "AMP", "LT;", "lpar;", "colon;", "NewLine;", "nGt;", "fjlig;", "ampx",
            "&&", "&#", "&#x", "&#;", "&#x;", "raquo", "times", "divide;", "para", "sect=", "Aacute", "aacute", "Z"]
ref_values = st.lists(st.sampled_from(REF_TEXT), max_size=16).map("".join)


@settings(max_examples=examples(2000), deadline=None)
@given(st.one_of(ref_values, st.text(max_size=40)))
def test_decoder_is_unescape_attr(value):
    raw = value.encode("utf-8", "surrogatepass")
    got, offsets = k.decode_attr(raw)
    assert got == unescape_attr(value).encode("utf-8", "surrogatepass")
    assert offsets[-1] == len(raw) and len(offsets) == len(got) + 1
    assert offsets == sorted(offsets)
    for i in range(len(got)):                       # a byte that is no reference maps to itself
        if raw[offsets[i]] != ord("&"):
            assert got[i] == raw[offsets[i]]


@pytest.mark.parametrize("value, want", [
    ("a&amp;b", "a&b"), ("&lt;&gt;&quot;&apos;", "<>\"'"), ("&#65;&#x42;&#X43", "ABC"), ("?a=1&copy=2", "?a=1&copy=2"),
    ("?a=1&copy;2", "?a=1\u00a92"), ("&copy 2", "\u00a9 2"), ("&ampx", "&ampx"), ("&amp=", "&amp="), ("&notit;", "&notit;"),
    ("&notin;", "\u2209"), ("&not/", "\u00ac/"), ("&#0;", "\ufffd"), ("&#128;", "\u20ac"), ("&#x81;", "\x81"),
    ("&#1;", "\x01"), ("&#xD800;", "\ufffd"), ("&#x110000;", "\ufffd"), ("&unknown;", "&unknown;"), ("&", "&"),
    ("&#", "&#"), ("&#x;", "&#x;"), ("&lpar;&rpar;", "()"),
])
def test_unescape_attr(value, want):
    """The HTML standard's rules, by hand (html.unescape differs on the attribute-value rule and
    on control characters)."""
    assert unescape_attr(value) == want
    assert k.decode_attr(value.encode())[0] == want.encode()


def test_unescape_attr_matches_html_unescape_outside_its_exceptions():
    for value in ["&amp;&lt;x&gt;", "&eacute;t&eacute;", "&#233;&#xE9;", "&frac12;", "AT&T;", "&nGt;"]:
        assert unescape_attr(value) == html.unescape(value)
