"""The rewriting kernel on arbitrary input: it never raises, its output does not depend on how
the input is cut into chunks, it changes nothing but the URLs it names (each URL handed to a
marking handler comes back marked, and with the marks taken out the output is the input), and
its C fast path writes what the Python path writes.

Built with AddressSanitizer and UBSan, these tests are the check that it reads no byte outside its
buffers: ``VENV=.venv-asan CMAKE_DEFINES="WARCHIVE_SANITIZE=ON" bash scripts/setup.sh test``, then
run them with that venv's Python and ``LD_PRELOAD="$(gcc -print-file-name=libasan.so)
$(gcc -print-file-name=libubsan.so)" ASAN_OPTIONS=detect_leaks=0`` (Python itself is not
instrumented). Done for this kernel with 8,000 examples of each test: clean."""

from __future__ import annotations

from typing import List, Optional

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warchive._ext import html_rewrite as k
from warchive.capture.links import extract_css, extract_html
from warchive.replay import css, html
from warchive.replay.kernel import StreamRewriter
from warchive.replay.urls import UrlRewriter

PAGE = "20131010mp_/http://example.com/dir/page.html"
FRAGMENTS = ["<", ">", "/", "!", "-", "--", "<!--", "-->", "--!>", "=", '"', "'", " ", "\n", "\t", "a", "href", "src",
             "img", "script", "style", "</script>", "</style", "<a ", "<img ", "url(", ")", "(", "x.png", "#", "&amp;",
             "&", "#x2F;", "&quot;", "srcset", ",", "1x", "<base href=", "/b/", "http://h.test/", "javascript:",
             "@import ", "<?", "\u00e9", "<meta http-equiv=refresh content=", "0;url=", "<textarea>", "</textarea>",
             "style=", "data-src", "../", "//", "\\", "/*", "*/", "image-set(", "<link rel=stylesheet href=", "ping=",
             "<svg><image xlink:href=", "<![CDATA[", "]]>", "<plaintext>", "<title>", "</title>", "@namespace ",
             "poster=", "background=", "<param value=", "<source srcset=", "<iframe src=", "<object data=", "%2e",
             "xn--", "?", ";", "<STYLE>", "</SCRIPT ", "url( '", "\\29 ", "\r\n", "\x00", "\x0c", "<form action=",
             "location", "top.", "parent", "import(", "<script type=module>", "<script type=application/json>",
             "`${", "}`", "//", "/re/", " onclick=", " onload=\"", "&quot;"]
NEUTRAL_WORDS = ("integrity", "crossorigin", "referrer", "content-security-policy")
CSS_FRAGMENTS = ["url(", "URL(", "/a.png", "../b/c.png", "http://h.test/x", ")", "'", '"', "@import ", "@namespace ",
                 "image-set(", "-webkit-image-set(", "/*", "*/", "\\", "\\29 ", "x", "xx" * 20, " ", "\n", ";", "{", "}",
                 "(", "#", "@", "a-b", "data:", "1x", ",", "u", "rl(", "</style>", "<style>", "&quot;", "style=\"",
                 "@font-face{src:", "format('woff')"]
html_like = st.lists(st.sampled_from(FRAGMENTS), max_size=80).map("".join).map(lambda s: s.encode("utf-8"))
css_like = st.lists(st.sampled_from(CSS_FRAGMENTS), max_size=60).map("".join).map(lambda s: s.encode("utf-8"))
documents = st.one_of(html_like, css_like, st.binary(max_size=600))
cuts = st.lists(st.integers(1, 40), min_size=1, max_size=40)


def chunks(data: bytes, sizes: List[int]) -> List[bytes]:
    out, i, k_ = [], 0, 0
    while i < len(data):
        n = sizes[k_ % len(sizes)]
        out.append(data[i:i + n])
        i, k_ = i + n, k_ + 1
    return out


def rewriter() -> UrlRewriter:
    return UrlRewriter(PAGE, "/coll/")


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, cuts)
def test_html_chunking_does_not_matter(doc, sizes):
    whole = html.rewrite(doc, rewriter())
    r = html.HtmlRewriter(rewriter())
    assert b"".join([r.feed(c) for c in chunks(doc, sizes)] + [r.close()]) == whole


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, cuts)
def test_html_chunking_does_not_matter_with_inline_scripts(doc, sizes):
    whole = html.rewrite(doc, rewriter(), scripts=True)
    r = html.HtmlRewriter(rewriter(), scripts=True)
    assert b"".join([r.feed(c) for c in chunks(doc, sizes)] + [r.close()]) == whole
    if b"<script" not in doc.lower():
        assert whole == html.rewrite(doc, rewriter())   # no script: what the plain rewriter writes


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, cuts)
def test_css_chunking_does_not_matter(doc, sizes):
    whole = css.rewrite(doc, rewriter())
    r = css.CssRewriter(rewriter())
    assert b"".join([r.feed(c) for c in chunks(doc, sizes)] + [r.close()]) == whole


class Marker:
    """Every URL comes back between \\x01 and \\x02 (bytes the documents below never hold)."""

    def __init__(self) -> None:
        self.kernel: Optional[k.Kernel] = None
        self.seen: List[bytes] = []

    def on_url(self, raw: bytes, ctx: int, slot: int, force_abs: bool) -> bytes:
        self.seen.append(raw)
        return b"\x01" + raw + b"\x02"

    def on_base(self, raw: bytes, ctx: int) -> bytes:
        return self.on_url(raw, ctx, 0, False)

    def on_link_base(self, raw: bytes, ctx: int, links) -> None:
        pass


def marked(doc: bytes, sizes: List[int], css_doc: bool = False) -> bytes:
    m = Marker()
    kern = k.Kernel(m, css=css_doc, all_slow=True)
    parts = [kern.feed(c) for c in chunks(doc, sizes)] + [kern.feed(b"", True)]
    return b"".join(parts)   # type: ignore[arg-type]


no_marks = documents.map(lambda d: d.replace(b"\x01", b"").replace(b"\x02", b"")).filter(
    lambda d: not any(w in d.lower() for w in [x.encode() for x in NEUTRAL_WORDS]))


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(no_marks, cuts, st.booleans())
def test_only_urls_change(doc, sizes, css_doc):
    out = marked(doc, sizes, css_doc)
    assert out.replace(b"\x01", b"").replace(b"\x02", b"") == doc
    assert out == marked(doc, [len(doc) or 1], css_doc)      # the same spans whatever the chunking
    depth = 0
    for c in out:                                            # marks neither nest nor stay open
        if c == 1:
            depth += 1
            assert depth == 1
        elif c == 2:
            depth -= 1
            assert depth == 0
    assert depth == 0


def test_marked_spans_are_the_urls():
    doc = (b'<a href=" http://x/ " title="http://no/"><img srcset="a.png 1x,  b.png 2x" src=c.png>'
           b'<p style="background:url( \'d.png\' )"><style>@import "e.css"; x{y:url(f.png)}</style>'
           b'<meta http-equiv=refresh content="0; url=\'g.html\'"><!-- <a href="no"> --><base href="h/">')
    out = marked(doc, [len(doc)])
    spans = [s.split(b"\x02")[0] for s in out.split(b"\x01")[1:]]
    assert spans == [b"http://x/", b"a.png", b"b.png", b"c.png", b"d.png", b"e.css", b"f.png", b"g.html", b"h/"]


def all_slow(r: StreamRewriter) -> StreamRewriter:
    """The same rewriter with every URL through Python (the kernel rebuilt with all_slow)."""
    fresh = k.Kernel(r, css=r._css, all_slow=True)
    r._kernel = fresh
    r._set_page()
    return r


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.sampled_from([PAGE, "20131010/http://example.com", "2013js_/https://h.example:81/a/b/"]),
       st.sampled_from(["/coll/", "http://localhost:8080/coll/"]))
def test_fast_path_writes_what_python_writes(doc, page, prefix):
    fast = html.HtmlRewriter(UrlRewriter(page, prefix))
    slow = all_slow(html.HtmlRewriter(UrlRewriter(page, prefix)))
    assert fast.feed(doc) + fast.close() == slow.feed(doc) + slow.close()
    fast_c = css.CssRewriter(UrlRewriter(page, prefix))
    slow_c = all_slow(css.CssRewriter(UrlRewriter(page, prefix)))
    assert fast_c.feed(doc) + fast_c.close() == slow_c.feed(doc) + slow_c.close()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, cuts)
def test_links_mode_never_raises_and_ignores_chunking(doc, sizes):
    whole = extract_html(doc, "http://ex.test/d/p.html", "utf-8")
    from warchive.capture.links import HtmlLinkExtractor
    ex = HtmlLinkExtractor("http://ex.test/d/p.html", "utf-8")
    for c in chunks(doc, sizes):
        ex.feed(c)
    assert ex.close() == whole
    for link in whole + extract_css(doc.decode("utf-8", "replace"), "http://ex.test/d/p.html"):
        assert link.hop in "LERX" and "#" not in link.url
        assert link.url.split(":", 1)[0].lower() in ("http", "https", "ftp")


def test_long_constructs_in_small_pieces_finish():
    """Comments, tags, style sheet strings, url()s and words and raw text a megabyte long, fed 7 bytes at a time:
    each held construct is appended to, never rescanned from its start (a quadratic rescan would
    not finish; there is no timer, a hang is the failure)."""
    for opening, closing in [(b"<!--", b"-->"), (b'<a href="', b'">'), (b"<style>a{b:url('", b"')}</style>"),
                             (b"<script>", b"</script>"), (b"<style>/*", b"*/</style>"), (b"<a ", b">"),
                             (b"<style>a{b:url(data:", b")}</style>"), (b"<style>a{b:url(\\", b")}</style>"),
                             (b"<style>a{b:", b"}</style>"), (b"<style>@", b";</style>"), (b"<style>a{b:#", b"}</style>")]:
        doc = opening + b"x" * 1_000_000 + closing + b'<a href="/after">'
        r = html.HtmlRewriter(rewriter())
        out = b"".join(r.feed(doc[i:i + 7]) for i in range(0, len(doc), 7)) + r.close()
        assert out.endswith(b'<a href="/coll/20131010mp_/http://example.com/after">'), opening
