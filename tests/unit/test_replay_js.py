"""Server-side JavaScript rewriting (warchive.replay.js): the rules on hand-written scripts (the
expected text written from the rules in the module docstring), literals left alone, streaming in
any pieces giving the same bytes as one piece, and every byte outside an edit unchanged."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warchive.replay.content import body_rewriter
from warchive.replay.js import JsRewriter, rewrite_js
from warchive.replay.urls import UrlRewriter

BASE = "http://example.com/js/app.js"
IMP = '__wa_import("http://example.com/js/app.js")('

CASES = [
    # location: bare, as a member, assigned, in a ternary
    ('location.href = "x"', '__wa_location.href = "x"'),
    ("window.location = u; document.location.replace(a)", "window.__wa_location = u; document.__wa_location.replace(a)"),
    ("a ? location : b", "a ? __wa_location : b"),
    ("a?location:b", "a?__wa_location:b"),
    ("x = a ? b.location : c", "x = a ? b.__wa_location : c"),
    ("typeof location", "typeof __wa_location"),
    # top: frame busting, members of any object, keys and labels left
    ("if (top !== self) top.location = self.location;", "if (__wa_top !== self) __wa_top.__wa_location = self.__wa_location;"),
    ('el.style.top = "5px"', 'el.style.__wa_top = "5px"'),
    ("var r = {top: 1, left: 2}, q = { top : 3 }", "var r = {top: 1, left: 2}, q = { top : 3 }"),
    ("switch (x) { case top: break }", "switch (x) { case __wa_top: break }"),
    ("top: for (;;) { continue top; } location: while (1) break location", "top: for (;;) { continue top; } location: while (1) break location"),
    # shorthand properties keep their key; declarations and module lists are renamed
    ('scrollTo({top, behavior: "smooth"})', 'scrollTo({top: __wa_top, behavior: "smooth"})'),
    ("f({left, top})", "f({left, top: __wa_top})"),
    ("return {location}", "return {location: __wa_location}"),
    ("const {top, left} = rect", "const {__wa_top, left} = rect"),
    ("let {location} = window", "let {__wa_location} = window"),
    ('import {top, location} from "./m.js"; export {top};', 'import {__wa_top, __wa_location} from "./m.js"; export {__wa_top};'),
    ("function f({top}) { return top }", "function f({top: __wa_top}) { return __wa_top }"),
    # parent: bare and after the window objects only
    ("var p = parent; window.parent.postMessage(m, o)", "var p = __wa_parent; window.__wa_parent.postMessage(m, o)"),
    ("self.parent; top.parent; node.parent = 3; a.b.parent", "self.__wa_parent; __wa_top.__wa_parent; node.parent = 3; a.b.parent"),
    ("window?.parent", "window?.__wa_parent"),
    # import(): the dynamic form only
    ('import("./m.js").then(f)', IMP + '"./m.js").then(f)'),
    ("await import (u)", "await " + IMP + "u)"),
    ('import x from "y"; import.meta.url; obj.import(3); ({import(a) { return a }})',
     'import x from "y"; import.meta.url; obj.import(3); ({import(a) { return a }})'),
    # words inside other words, private names and $ names are not the references
    ("mylocation; location2; $location; location$; #top; _top", "mylocation; location2; $location; location$; #top; _top"),
    ("...location", "...__wa_location"),
    # literals are left alone; code inside ${} is not
    ('var s = "Back to top", t = \'location\';', 'var s = "Back to top", t = \'location\';'),
    ("// top of page\n/* location */ x", "// top of page\n/* location */ x"),
    ("x = a / top / 2; y = /top|location/g.test(z)", "x = a / __wa_top / 2; y = /top|location/g.test(z)"),
    ("return /location/.test(s)", "return /location/.test(s)"),
    ("x = (a) / location.b", "x = (a) / __wa_location.b"),
    ("r = /[/]top/; top", "r = /[/]top/; __wa_top"),
    ("t = `top ${location.href} and ${ {top}.top } end`", "t = `top ${__wa_location.href} and ${ {top: __wa_top}.__wa_top } end`"),
    ("t = `a ${`b ${top}`} location`", "t = `a ${`b ${__wa_top}`} location`"),
    ('s = "a\\"top"; top', 's = "a\\"top"; __wa_top'),
    # a string left open at the line end ends there, as it would in a browser's error
    ('s = "open\ntop', 's = "open\n__wa_top'),
]


@pytest.mark.parametrize("src,want", CASES)
def test_rules(src, want):
    assert rewrite_js(src, BASE) == want


def _pieces(data: bytes, cuts):
    rw = JsRewriter(BASE)
    out, prev = [], 0
    for c in sorted(cuts):
        out.append(rw.feed(data[prev:c]))
        prev = c
    out.append(rw.feed(data[prev:]))
    out.append(rw.close())
    return b"".join(out)


ALL = "\n".join(src for src, _ in CASES).encode()


def test_every_cut_point_gives_the_same_bytes():
    whole = _pieces(ALL, [])
    assert whole == "\n".join(want for _, want in CASES).encode()
    for cut in range(len(ALL) + 1):
        assert _pieces(ALL, [cut]) == whole, cut


def test_byte_by_byte():
    assert _pieces(ALL, range(len(ALL))) == _pieces(ALL, [])


def test_non_ascii_bytes_pass_through():
    src = "var s = 'caf\u00e9 top'; top; // \u2028 location\n".encode("utf-8") + b"\xff\xfe location"
    out = _pieces(src, [])
    assert out == src.replace(b"; top;", b"; __wa_top;").replace(b"\xfe location", b"\xfe __wa_location")


def _apply(src: str, rw: JsRewriter) -> str:
    out, prev = [], 0
    for e in rw.edits:
        out.append(src[prev:e.start])
        out.append(e.text)
        prev = e.end
    return "".join(out) + src[prev:]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["location", "top", "parent", "import", "(", ")", "{", "}", "[", "]", ".", ",",
                                 ":", "?", "/", "*", "'", '"', "`", "${", "\\", "\n", " ", "=", "x", "return",
                                 "const", "case", "break", "window", "$", "#", "1"]), max_size=60),
       st.lists(st.integers(0, 400), max_size=5))
def test_any_text_streams_and_changes_only_its_edits(tokens, cuts):
    src = "".join(tokens)
    whole = JsRewriter(BASE, record=True)
    text = whole.feed_text(src) + whole.close_text()
    assert _apply(src, whole) == text            # outside the edits, every character as it was
    for e in whole.edits:
        assert src[e.start:e.end] in ("location", "top", "parent") or src[e.start:e.end].startswith("import")
    data = src.encode("latin-1")
    assert _pieces(data, [c for c in cuts if c <= len(data)]) == text.encode("latin-1")


def test_random_pieces_of_a_long_script():
    src = ("function f(a) { if (top != self) { top.location = self.location } return a / 2 }\n"
           "var re = /top\\/[a-z]+/g, s = 'it\\'s location', t = `${parent.x} ${`${top}`}`;\n"
           "/* a comment with top */ window.parent.postMessage({top, location}, '*');\n") * 200
    data = src.encode()
    want = _pieces(data, [])
    rnd = random.Random(7)
    for _ in range(20):
        cuts = sorted(rnd.sample(range(len(data)), 40))
        assert _pieces(data, cuts) == want
    assert want.count(b"__wa_top") == 200 * 4 and want.count(b"__wa_location") == 200 * 3


def test_body_rewriter_of_js_bodies():
    rw = UrlRewriter("20200101js_/http://example.com/s/app.js", "http://h/coll/")
    body = body_rewriter("js", rw)
    out = body.feed(b"import('./x.js'); top.loc") + body.feed(b"ation = 1") + body.close()
    assert out == b'__wa_import("http://example.com/s/app.js")(\'./x.js\'); __wa_top.__wa_location = 1'


def test_the_import_base_cannot_end_a_script_element():
    out = rewrite_js("import(a)", "http://example.com/</script><script>alert(1)//")
    assert "</script" not in out and "<" not in out
