"""Link extraction: every tag and attribute form, CSS forms, broken HTML, streaming, fuzzing, and a
differential test against the standard library's html.parser on real pages (tests/data/html)."""

from __future__ import annotations

import gzip
import html.parser
from pathlib import Path
from urllib.parse import urljoin

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from budget import examples

from warchive.capture.links import HtmlLinkExtractor, Link, extract_css, extract_html, extract_links

BASE = "http://ex.test/dir/page.html"
DATA = Path(__file__).resolve().parents[1] / "data" / "html"


def pairs(doc, base=BASE):
    return [(link.url, link.hop) for link in extract_html(doc, base)]


# --------------------------------------------------------------------------- tag and attribute forms

CASES = [
    ('<a href="x.html">', [("http://ex.test/dir/x.html", "L")]),
    ("<a href='/abs'>", [("http://ex.test/abs", "L")]),
    ("<a href=unquoted?a=1&amp;b=2>", [("http://ex.test/dir/unquoted?a=1&b=2", "L")]),
    ('<A HREF = "UP/Case.html" >', [("http://ex.test/dir/UP/Case.html", "L")]),
    ('<a href="  \n spaced.html\t ">', [("http://ex.test/dir/spaced.html", "L")]),
    ('<a href="x.html#frag">', [("http://ex.test/dir/x.html", "L")]),
    ('<a href="#only">', []),
    ('<a href="">', []),
    ('<a href="javascript:go()">', []),
    ('<a href="JavaScript:go()">', []),
    ('<a href="mailto:a@b.test">', []),
    ('<a href="data:text/plain,hi">', []),
    ('<a href="tel:+1">', []),
    ('<a href="//other.test/p">', [("http://other.test/p", "L")]),
    ('<a href="https://s.test/">', [("https://s.test/", "L")]),
    ('<a href="ftp://f.test/file">', [("ftp://f.test/file", "L")]),
    ('<a href="a.html" href="b.html">', [("http://ex.test/dir/a.html", "L")]),   # first attribute wins
    ('<area href="map.html">', [("http://ex.test/dir/map.html", "L")]),
    ('<img src="i.png">', [("http://ex.test/dir/i.png", "E")]),
    ('<img src=i.png/>', [("http://ex.test/dir/i.png/", "E")]),   # HTML5: the slash is part of the value
    ('<img src="i.png"/>', [("http://ex.test/dir/i.png", "E")]),
    ('<img srcset="a.png 1x, b.png 2x">', [("http://ex.test/dir/a.png", "E"), ("http://ex.test/dir/b.png", "E")]),
    ('<img srcset="a,b.png 100w,c.png 200w">', [("http://ex.test/dir/a,b.png", "E"), ("http://ex.test/dir/c.png", "E")]),
    ('<img srcset="a.png,, b.png">', [("http://ex.test/dir/a.png", "E"), ("http://ex.test/dir/b.png", "E")]),
    ('<source srcset="s.webp" src="s.jpg">', [("http://ex.test/dir/s.jpg", "E"), ("http://ex.test/dir/s.webp", "E")]),
    ('<script src="app.js"></script>', [("http://ex.test/dir/app.js", "E")]),
    ('<link rel="stylesheet" href="s.css">', [("http://ex.test/dir/s.css", "E")]),
    ('<link rel="Shortcut Icon" href="/favicon.ico">', [("http://ex.test/favicon.ico", "E")]),
    ('<link rel="alternate" href="/feed.xml">', [("http://ex.test/feed.xml", "L")]),
    ('<link rel="canonical" href="/c">', [("http://ex.test/c", "L")]),
    ('<iframe src="f.html"></iframe>', [("http://ex.test/dir/f.html", "E")]),
    ('<frame src="f.html">', [("http://ex.test/dir/f.html", "E")]),
    ('<embed src="m.swf">', [("http://ex.test/dir/m.swf", "E")]),
    ('<object data="o.svg"></object>', [("http://ex.test/dir/o.svg", "E")]),
    ('<video src="v.mp4" poster="p.jpg">', [("http://ex.test/dir/v.mp4", "E"), ("http://ex.test/dir/p.jpg", "E")]),
    ('<audio src="a.ogg">', [("http://ex.test/dir/a.ogg", "E")]),
    ('<track src="t.vtt">', [("http://ex.test/dir/t.vtt", "E")]),
    ('<input type="image" src="b.png">', [("http://ex.test/dir/b.png", "E")]),
    ('<body background="bg.gif">', [("http://ex.test/dir/bg.gif", "E")]),
    ('<td background="c.gif">', [("http://ex.test/dir/c.gif", "E")]),
    ('<svg><image xlink:href="s.png"/><a xlink:href="/svg-link"></a></svg>',
     [("http://ex.test/dir/s.png", "E"), ("http://ex.test/svg-link", "L")]),
    ('<html manifest="app.appcache">', [("http://ex.test/dir/app.appcache", "E")]),
    ('<blockquote cite="/source"><q cite="q.html">', [("http://ex.test/source", "L"), ("http://ex.test/dir/q.html", "L")]),
    ('<form action="/search"><form method=post action="/post">', [("http://ex.test/search", "L")]),
    ('<meta http-equiv="refresh" content="0; url=/next">', [("http://ex.test/next", "R")]),
    ('<meta http-equiv="Refresh" content="5;URL=\'/q?a=b\'">', [("http://ex.test/q?a=b", "R")]),
    ('<meta http-equiv=refresh content="3">', []),
    ('<meta name="description" content="/not-a-link">', []),
    ('<img data-src="lazy.jpg" src="ph.gif">', [("http://ex.test/dir/ph.gif", "E"), ("http://ex.test/dir/lazy.jpg", "X")]),
    ('<div data-srcset="l1.jpg 1x, l2.jpg 2x">', [("http://ex.test/dir/l1.jpg", "X"), ("http://ex.test/dir/l2.jpg", "X")]),
    ('<div style="background: url(bg.png)">', [("http://ex.test/dir/bg.png", "E")]),
    ('<p style="background:url(&quot;q.png&quot;)">', [("http://ex.test/dir/q.png", "E")]),
    ('<style>@import "i.css"; @import url(j.css); a{background:url(\'k.png\')}</style>',
     [("http://ex.test/dir/i.css", "E"), ("http://ex.test/dir/j.css", "E"), ("http://ex.test/dir/k.png", "E")]),
    ('<base href="http://b.test/x/"><a href="y">', [("http://b.test/x/y", "L")]),
    ('<base href="/abs/"><base href="http://no.test/"><img src="i">', [("http://ex.test/abs/i", "E")]),
    ('<base href="/b/" data-src="x.png">', [("http://ex.test/b/x.png", "X")]),   # after the base it sets
    ('<a href="a b.html"><base href="/b/">', [("http://ex.test/dir/a b.html", "L")]),   # resolved in Python, before
    ('<a href="x"><a href="x">', [("http://ex.test/dir/x", "L")]),   # each (url, hop) once
    ('<a href="x"><img src="x">', [("http://ex.test/dir/x", "L"), ("http://ex.test/dir/x", "E")]),
    ('<a href="http://[::1">', []),   # urljoin refuses it: skipped, not raised
    ('<a href="caf\u00e9.html">', [("http://ex.test/dir/caf\u00e9.html", "L")]),
]


@pytest.mark.parametrize("doc,expected", CASES, ids=[c[0][:40] for c in CASES])
def test_tag_forms(doc, expected):
    assert pairs(doc) == expected


# --------------------------------------------------------------------------- broken HTML

BROKEN = [
    ('<!-- <a href="c1"> --><a href="ok">', [("http://ex.test/dir/ok", "L")]),
    ('<!--><a href="ok">', [("http://ex.test/dir/ok", "L")]),             # <!--> ends at once
    ('<!---><a href="ok">', [("http://ex.test/dir/ok", "L")]),
    ('<!-- never closed <a href="c">', []),
    ('<!DOCTYPE html><a href="ok">', [("http://ex.test/dir/ok", "L")]),
    ('<?xml version="1.0"?><a href="ok">', [("http://ex.test/dir/ok", "L")]),
    ('<![CDATA[ <a href="cd"> ]]>', []),    # in HTML a bogus comment: it ends at the first ">", after "cd"
    ('<![CDATA[ x ]]><a href="ok">', [("http://ex.test/dir/ok", "L")]),
    ('<script>var a = "<a href=\'in-js\'>";</script><a href="ok">', [("http://ex.test/dir/ok", "L")]),
    ('<script>if (a</b) x()</SCRIPT ><a href="ok">', [("http://ex.test/dir/ok", "L")]),
    ('<script src="s.js">document.write("<img src=no.png>")', [("http://ex.test/dir/s.js", "E")]),
    ('<textarea><a href="no"></textarea><a href="ok">', [("http://ex.test/dir/ok", "L")]),
    ('<title><a href="no"></title>', []),
    ('<style>/* url(no.png) */ b{background:url(yes.png)}</style>', [("http://ex.test/dir/yes.png", "E")]),
    ('<a href="x.html" <img src="y.png">', [("http://ex.test/dir/x.html", "L")]),  # "<img" is an attribute name
    ('<a href=x.html<b>text', [("http://ex.test/dir/x.html<b", "L")]),
    ('<a title="a>b" href="ok">', [("http://ex.test/dir/ok", "L")]),
    ("<a href=it's.html>", [("http://ex.test/dir/it's.html", "L")]),
    # the quote closes at the next '"', as in a browser: the value swallows "<img src="
    ('<a href="unterminated>next <img src="i.png">', [("http://ex.test/dir/unterminated>next <img src=", "L")]),
    ('<a\nhref\n=\n"nl.html"\n>', [("http://ex.test/dir/nl.html", "L")]),
    ('< a href="not-a-tag">', []),
    ('<3 <a href="ok">', [("http://ex.test/dir/ok", "L")]),
    ('</a href="end-tag"><a href="ok">', [("http://ex.test/dir/ok", "L")]),
    ('<a href="never closed>', []),   # the value never ends: a tag cut by the end of file, dropped
    ('<a href="cut-off', []),                                             # a tag cut by the end of file
    ('<img src="x.png"', []),
    ('<a href="\x00nul">', [("http://ex.test/dir/nul", "L")]),     # urljoin strips leading C0 controls
]


@pytest.mark.parametrize("doc,expected", BROKEN, ids=[c[0][:40] for c in BROKEN])
def test_broken_html(doc, expected):
    assert pairs(doc) == expected


def test_testsite_broken_page():
    """The broken page of tests/testsite.py: what a browser's tokenizer would find there."""
    import testsite
    site = testsite.Site.default(n_hosts=1)
    raw = site.routes["h000.site.test"]["/broken.html"](None).data
    body = raw.split(b"\r\n\r\n", 1)[1]
    got = pairs(body, "http://h000.site.test/broken.html")
    assert ("http://h000.site.test/page/1", "L") in got
    assert ("http://h000.site.test/img.png", "E") in got
    assert ("http://h000.site.test/bg.png", "E") in got
    assert not any("commented" in u or "in-script" in u or "unclosed" in u for u, _ in got)


# --------------------------------------------------------------------------- CSS

CSS = [
    ("a{background:url(x.png)}", ["http://ex.test/dir/x.png"]),
    ('a{background:url( "x y.png" )}', ["http://ex.test/dir/x y.png"]),
    ("a{background:URL('q.png')}", ["http://ex.test/dir/q.png"]),
    ('@import "i.css";', ["http://ex.test/dir/i.css"]),
    ("@import 'i.css' screen;", ["http://ex.test/dir/i.css"]),
    ("@import url(j.css);", ["http://ex.test/dir/j.css"]),
    ("/* url(no.png) */ a{b:url(yes.png)}", ["http://ex.test/dir/yes.png"]),
    ("/* unterminated url(no.png)", []),
    ("@font-face{src:url(f.woff2) format('woff2'),url(f.woff) format('woff')}",
     ["http://ex.test/dir/f.woff2", "http://ex.test/dir/f.woff"]),
    ("a{b:url(data:image/png;base64,AAAA)}", []),
    (r"a{b:url(esc\(aped\).png)}", ["http://ex.test/dir/esc(aped).png"]),
    (r'a{b:url("esc\"q.png")}', ['http://ex.test/dir/esc"q.png']),
    (r"a{b:url('\61 .png')}", ["http://ex.test/dir/a.png"]),
    ("a{b:url()}", []),
]


@pytest.mark.parametrize("css,expected", CSS, ids=[c[0][:40] for c in CSS])
def test_css_forms(css, expected):
    got = extract_css(css, BASE)
    assert [link.url for link in got] == expected
    assert all(link.hop == "E" for link in got)


def test_extract_links_by_type():
    assert extract_links(BASE, "text/css; charset=utf-8", b"a{b:url(c.png)}")[0].url == "http://ex.test/dir/c.png"
    assert extract_links(BASE, "text/html", b'<a href="h">')[0] == Link("http://ex.test/dir/h", "L", "a/@href")
    assert extract_links(BASE, "image/png", b'<a href="h">') == []
    assert extract_links(BASE, None, b'<a href="h">') == []


def test_charsets():
    doc = '<meta charset="iso-8859-1"><a href="caf\u00e9">'.encode("latin-1")
    assert pairs(doc) == [("http://ex.test/dir/caf\u00e9", "L")]
    assert extract_links(BASE, "text/html; charset=windows-1252", '<a href="\u20ac">'.encode("cp1252"))[0].url \
        == "http://ex.test/dir/\u20ac"
    assert pairs('<a href="\u00e9">'.encode("utf-8")) == [("http://ex.test/dir/\u00e9", "L")]
    assert pairs(b'<a href="\xff\xfe">')[0][1] == "L"       # undecodable bytes never raise


# --------------------------------------------------------------------------- streaming and fuzzing

FRAGMENTS = ["<", ">", "/", "!", "-", "--", "<!--", "-->", "=", '"', "'", " ", "\n", "a", "href", "src", "img",
             "script", "style", "</script>", "</style", "<a ", "<img ", "url(", ")", "x.png", "#", "&amp;",
             "srcset", ",", "1x", "<base href=", "/b/", "http://h.test/", "javascript:", "@import ", "<?", "é",
             "<meta http-equiv=refresh content=", "0;url=", "<textarea>", "</textarea>", "style=", "data-src"]
html_like = st.lists(st.sampled_from(FRAGMENTS), max_size=60).map("".join)


@settings(max_examples=400, deadline=None)
@given(html_like, st.lists(st.integers(1, 12), min_size=1, max_size=30))
def test_streaming_equals_whole(doc, cuts):
    """Feeding a document in any pieces finds exactly what one feed finds."""
    whole = extract_html(doc, BASE)
    ex = HtmlLinkExtractor(BASE)
    i, k = 0, 0
    while i < len(doc):
        n = cuts[k % len(cuts)]
        ex.feed(doc[i:i + n])
        i, k = i + n, k + 1
    assert ex.close() == whole


@settings(max_examples=300, deadline=None)
@given(st.one_of(html_like, st.text(max_size=300), st.binary(max_size=300)))
def test_fuzz_never_raises(doc):
    for link in extract_html(doc, BASE):
        assert link.hop in "LERX"
        assert link.url.split(":", 1)[0] in ("http", "https", "ftp")
        assert "#" not in link.url


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=400), st.integers(1, 50))
def test_bytes_streaming_equals_whole(data, step):
    whole = extract_html(data, BASE, "utf-8")
    ex = HtmlLinkExtractor(BASE, "utf-8")
    for i in range(0, len(data), step):
        ex.feed(data[i:i + step])
    assert ex.close() == whole


@pytest.mark.parametrize("unit", ["<a ", "<!--", '<a href="', "<script>", "<", "<a href=x ", "<!", "</", "url("])
def test_pathological_input_finishes(unit):
    """Many unfinished constructs in a row, fed in small pieces: the extractor keeps up (a quadratic
    rescan would take minutes here; the test has no timer, a hang is the failure)."""
    doc = unit * 40000
    ex = HtmlLinkExtractor(BASE)
    for i in range(0, len(doc), 512):
        ex.feed(doc[i:i + 512])
    ex.close()


# --------------------------------------------------------------------------- differential: html.parser

class RefParser(html.parser.HTMLParser):
    """The reference: the standard library's tokenizer, for the tags both handle plainly."""

    TAGS = {("a", "href"), ("area", "href"), ("img", "src"), ("script", "src"), ("link", "href"),
            ("iframe", "src"), ("frame", "src"), ("embed", "src"), ("source", "src")}

    def __init__(self, base):
        super().__init__(convert_charrefs=True)
        self.base = base
        self.found = set()
        self.based = False

    def handle_starttag(self, tag, attrs):
        d = {}
        for k, v in attrs:
            d.setdefault(k, v)
        if tag == "base" and d.get("href") and not self.based:
            self.based = True
            self.base = urljoin(self.base, d["href"].strip())
        for t, a in self.TAGS:
            if tag == t and d.get(a):
                v = d[a].strip(" \t\n\r\f")
                if not v or v.startswith("#") or v.split(":", 1)[0].lower() in ("javascript", "mailto", "data"):
                    continue
                url = urljoin(self.base, v).split("#", 1)[0]
                if url.startswith(("http:", "https:")):
                    self.found.add(url)

    handle_startendtag = handle_starttag


SAMPLES = [line.split("\t") for line in (DATA / "SAMPLES.tsv").read_text().splitlines()]


@pytest.mark.parametrize("name,url", [(s[0], s[1]) for s in SAMPLES])
def test_same_links_as_html_parser(name, url):
    doc = gzip.decompress((DATA / f"{name}.html.gz").read_bytes())
    ref = RefParser(url)
    ref.feed(doc.decode("utf-8", "replace"))
    ref.close()
    ours = {link.url for link in extract_html(doc, url)
            if link.context.split("/")[1] in {"@" + a for _, a in RefParser.TAGS}
            and (link.context.split("/")[0], link.context.split("/")[1][1:]) in RefParser.TAGS}
    assert ref.found, f"{name}: the reference found no links (sample damaged?)"
    assert ours == ref.found, (sorted(ours - ref.found)[:5], sorted(ref.found - ours)[:5])


@pytest.mark.slow
@settings(max_examples=examples(20000), deadline=None)
@given(html_like, st.lists(st.integers(1, 40), min_size=1, max_size=30))
def test_streaming_equals_whole_long(doc, cuts):
    """The long run of test_streaming_equals_whole (pytest -m slow)."""
    test_streaming_equals_whole.hypothesis.inner_test(doc, cuts)


@pytest.mark.parametrize("opening", ["<!--", "<script>", '<a href="', "<a ", "<!DOCTYPE"])
def test_long_wait_in_small_pieces(opening):
    """A construct left open for 2 MB fed 16 characters at a time, then closed: the text received
    while waiting is kept in pieces (no quadratic copying) and the link after it is found."""
    closing = {"<!--": "-->", "<script>": "</script>", '<a href="': '">', "<a ": ">", "<!DOCTYPE": ">"}[opening]
    doc = opening + "x" * 2_000_000 + closing + '<a href="after">'
    ex = HtmlLinkExtractor(BASE)
    for i in range(0, len(doc), 16):
        ex.feed(doc[i:i + 16])
    assert ("http://ex.test/dir/after", "L") in [(link.url, link.hop) for link in ex.close()]


# --------------------------------------------------------------------------- where the kernel differs from the Python extractor

# (document, what the kernel finds, what the pure-Python extractor (tests/links_py.py) finds):
# docs/api.md, "Outlinks", lists these.
DEVIATIONS = [
    ('<a href="never closed>', [], [('http://ex.test/dir/"never', "L")]),
    ('<!-- x --!><a href="ok">', [("http://ex.test/dir/ok", "L")], []),
    ('<a href="?a=1&copy=2">', [("http://ex.test/dir/page.html?a=1&copy=2", "L")],
     [("http://ex.test/dir/page.html?a=1\u00a9=2", "L")]),
    ('<a href="x&#1;y">', [("http://ex.test/dir/x\x01y", "L")], [("http://ex.test/dir/xy", "L")]),
    ('<a\x0bhref="x">', [], [("http://ex.test/dir/x", "L")]),
    ("<style>a{b:xurl(x.png)}</style>", [], [("http://ex.test/dir/x.png", "E")]),
    ("<style>a{b:url(cut.png</style>", [("http://ex.test/dir/cut.png", "E")], []),
    ('<style>a{b:image-set("s.png" 1x)}</style>', [("http://ex.test/dir/s.png", "E")], []),
    ("<style>@namespace svg url(http://www.w3.org/2000/svg);</style>", [],
     [("http://www.w3.org/2000/svg", "E")]),
]


@pytest.mark.parametrize("doc,new,old", DEVIATIONS, ids=[d[0][:40] for d in DEVIATIONS])
def test_deviations_from_the_python_extractor(doc, new, old):
    import links_py
    assert pairs(doc) == new
    assert [(link.url, link.hop) for link in links_py.extract_html(doc, BASE)] == old
