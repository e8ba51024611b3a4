"""Inline scripts in rewritten HTML (``warchive.replay.html.rewrite(..., scripts=True)``, what
replay serves): which ``<script>`` elements are JavaScript, that their text comes out as
warchive.replay.js rewrites a script (the expected outputs below are written by hand from its
rules: ``location``/``top``/``parent`` routed to the client's ``__wa_`` objects), that every
other byte stays as it was, and that the output does not depend on how the document is cut
into chunks, the end tag included."""

from __future__ import annotations

import pytest

from warchive.replay import html
from warchive.replay.content import body_rewriter
from warchive.replay.js import rewrite_js
from warchive.replay.urls import UrlRewriter

PAGE = "20131010mp_/http://example.com/dir/page.html"
LOC = 'if (top != self) top.location = "/x";'
LOC_RW = 'if (__wa_top != self) __wa_top.__wa_location = "/x";'


def rw() -> UrlRewriter:
    return UrlRewriter(PAGE, "/coll/")


def rewrite(doc: str, scripts: bool = True) -> str:
    return html.rewrite(doc.encode(), rw(), scripts=scripts).decode()


def chunked(doc: bytes, sizes, scripts: bool = True) -> bytes:
    r = html.HtmlRewriter(rw(), scripts=scripts)
    out, i, k = [], 0, 0
    while i < len(doc):
        n = sizes[k % len(sizes)]
        out.append(r.feed(doc[i:i + n]))
        i, k = i + n, k + 1
    out.append(r.close())
    return b"".join(out)


@pytest.mark.parametrize("open_tag", [
    "<script>", '<script type="text/javascript">', "<SCRIPT TYPE='application/javascript'>",
    '<script type=" Text/JavaScript ">', '<script type="">', "<script type>", '<script type="module">',
    '<script type="application/ecmascript">', '<script language="javascript" async>',
    '<script type="text/javascript;version=1.8">',
])
def test_javascript_scripts_are_rewritten(open_tag):
    assert rewrite(f"<p>a</p>{open_tag}{LOC}</script><p>b</p>") == f"<p>a</p>{open_tag}{LOC_RW}</script><p>b</p>"


@pytest.mark.parametrize("open_tag", [
    '<script type="application/json">', '<script type="application/ld+json">', '<script type="text/template">',
    '<script type="text/x-handlebars-template">', '<script type="importmap">', '<script type="speculationrules">',
])
def test_data_scripts_are_left_alone(open_tag):
    doc = f'{open_tag}{{"location": "{LOC}"}}</script>'
    assert rewrite(doc) == doc


def test_scripts_pass_as_they_are_without_the_option():
    doc = f"<script>{LOC}</script>"
    assert rewrite(doc, scripts=False) == doc


def test_what_is_not_a_script_is_not_rewritten_as_one():
    doc = (f"<style>/* {LOC} */</style><textarea>{LOC}</textarea><title>top.location</title>"
           f"<!-- <script>{LOC}</script> --><p title='top.location=1'>location</p><xmp>{LOC}</xmp>")
    assert rewrite(doc) == doc


def test_the_text_is_what_the_js_rewriter_makes_of_it():
    body = ("var l = window.location.href; // location\nvar s = 'top.location';\n"
            "function f(a) { return a.top + parent.frames.length; }\nimport('./m.js');\n")
    out = rewrite(f"<script>{body}</script>")
    assert out == f"<script>{rewrite_js(body, 'http://example.com/dir/page.html')}</script>"
    assert "window.__wa_location.href" in out and "'top.location'" in out and "a.__wa_top" in out
    assert '__wa_import("http://example.com/dir/page.html")(' in out


def test_import_is_relative_to_the_base_after_a_base_tag():
    out = rewrite('<base href="http://other.example/app/"><script>import("./m.js")</script>')
    assert '__wa_import("http://other.example/app/")(' in out


def test_the_end_tag_ends_the_script_whatever_its_case_and_the_rest_is_html():
    out = rewrite(f'<script>{LOC}</SCRIPT ><a href="/y">y</a><script>location</script >')
    assert out == f'<script>{LOC_RW}</SCRIPT ><a href="/coll/20131010mp_/http://example.com/y">y</a>' \
                  '<script>__wa_location</script >'


def test_a_script_left_open_at_the_end_of_the_document_is_rewritten_to_the_end():
    assert rewrite(f"<p>x</p><script>{LOC} location") == f"<p>x</p><script>{LOC_RW} __wa_location"


def test_empty_scripts():
    doc = "<script></script><script src='/a.js'></script><script>\n</script>"
    assert rewrite(doc) == doc.replace("'/a.js'", "'/coll/20131010js_/http://example.com/a.js'")


DOC = (f'<!DOCTYPE html><html><head><script>{LOC}</script><script type="application/json">{{"top": 1}}</script>'
       '<link rel=stylesheet href="/s.css"></head><body><p>top location</p>'
       '<script>\nvar x = "</scr" + "ipt>"; location.replace("/z");\n// top\n</script><img src="/i.png">'
       '<script type="text/javascript">document.write("<a href=/q>q</a>"); parent.postMessage(1, "*")</script>'
       '</body></html>').encode()


@pytest.mark.parametrize("sizes", [[1], [2], [3], [7], [1, 5, 2], [16], [64], [len(DOC)]])
def test_output_does_not_depend_on_the_chunking(sizes):
    whole = html.rewrite(DOC, rw(), scripts=True)
    assert b"__wa_location.replace" in whole and b"__wa_parent.postMessage" in whole
    assert b'{"top": 1}' in whole
    assert chunked(DOC, sizes) == whole


def test_every_cut_point_of_an_end_tag():
    doc = b"<script>top.location = 1</script><p>location</p>"
    want = b"<script>__wa_top.__wa_location = 1</script><p>location</p>"
    for cut in range(1, len(doc)):
        r = html.HtmlRewriter(rw(), scripts=True)
        assert r.feed(doc[:cut]) + r.feed(doc[cut:]) + r.close() == want, cut


def test_non_utf8_pages_keep_their_bytes():
    text = "<p>caf\u00e9</p><script>var s = 'cr\u00e8me'; top.location = s;</script><p>\u00e9</p>"
    for codec in ("latin-1", "utf-8", "utf-16-le", "shift_jis"):
        try:
            doc = text.encode(codec)
        except UnicodeEncodeError:
            continue
        out = html.rewrite(doc, rw(), encoding=codec, scripts=True)
        assert out == text.replace("top.location", "__wa_top.__wa_location").encode(codec), codec


def test_replay_serves_pages_with_their_scripts_rewritten():
    r = body_rewriter("html", rw(), head_insert=b"<!--insert-->")
    out = r.feed(f"<html><head><script>{LOC}</script></head></html>".encode()) + r.close()
    assert out == f"<html><head><!--insert--><script>{LOC_RW}</script></head></html>".encode()


@pytest.mark.parametrize("doc, want", [
    ('<a href="#" onclick="top.location = &quot;/x&quot;; return false">',
     '<a href="#" onclick="__wa_top.__wa_location = &quot;/x&quot;; return false">'),
    ("<body onload='if (parent != window) parent.postMessage(\"hi\", \"*\")'>",
     "<body onload='if (__wa_parent != window) __wa_parent.postMessage(\"hi\", \"*\")'>"),
    ("<button ONCLICK=location.reload()>", "<button ONCLICK=__wa_location.reload()>"),
    ('<img src=a.png onerror="import(\'./m.js\')">',
     '<img src=a.png onerror="__wa_import(&quot;http://example.com/dir/page.html&quot;)(\'./m.js\')">'),
    # character references are read as the browser reads them, and written back where the quotes
    # need them (the value the browser reads is the rewritten script)
    ('<p onclick="self.location=&apos;/y&apos;">', '<p onclick="self.__wa_location=\'/y\'">'),
    ("<p onclick='a(&quot;top&quot;, top)'>", "<p onclick='a(\"top\", __wa_top)'>"),
])
def test_event_handlers_are_rewritten(doc, want):
    assert rewrite(doc) == want
    assert rewrite(doc, scripts=False) == doc


@pytest.mark.parametrize("doc", [
    '<div on-click="location.href=1">', '<div onmouseover="x()" data-top="top.location">',
    '<p title="top.location">', '<a onclick="">', "<a onclick>", '<p onclick="var s = \'top.location\'">',
])
def test_what_is_no_handler_or_names_nothing_is_left(doc):
    assert rewrite(doc) == doc
