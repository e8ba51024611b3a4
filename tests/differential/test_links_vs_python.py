"""warchive.capture.links (the rewriting kernel's link mode) against the pure-Python extractor
(tests/links_py.py, the oracle): the same links, hops and contexts, in the same
order, on real pages (the HTML samples and every page of the Wget fixture; the corpus too when
WARCHIVE_CORPUS names it, with -m slow) and on generated HTML.

The generator writes HTML as pages write it (tags with quoted or unquoted values, comments, text,
scripts, style sheets with url() and @import), not the inputs where the two deliberately differ
(docs/api.md, "Outlinks": quotes never closed, comments ended by --!>, legacy references before
'=' or a letter, CSS the pure-Python extractor's regular expressions misread, non-ASCII white space in tags);
tests/unit/test_links.py has a case for each of those.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path
from typing import List, Tuple

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from budget import examples

import links_py as old
from warchive.capture import links as new

TESTS = Path(__file__).resolve().parents[1]
WGET = TESTS / "data" / "wget" / "docs-python-3.11.warc.gz"


def triples(found) -> List[Tuple[str, str, str]]:
    return [(link.url, link.hop, link.context) for link in found]


def same(url: str, content_type: str, body: bytes) -> None:
    want = triples(old.extract_links(url, content_type, body))
    assert triples(new.extract_links(url, content_type, body)) == want, url


def fixture_pages():
    import warchive.warc
    from warchive.warc.content import content_stream
    with warchive.warc.open(WGET, types={"response"}) as recs:
        for rec in recs:
            if rec.http:
                yield rec.target_uri, rec.http.get("content-type") or "", content_stream(rec).read()


def test_samples_and_every_fixture_page():
    n = 0
    for line in (TESTS / "data" / "html" / "SAMPLES.tsv").read_text().splitlines():
        name, url = line.split("\t")[:2]
        same(url, "text/html", gzip.decompress((TESTS / "data" / "html" / f"{name}.html.gz").read_bytes()))
    for url, ctype, body in fixture_pages():
        same(url, ctype, body)
        n += "html" in ctype or "css" in ctype
    assert n > 500


@pytest.mark.slow
def test_corpus_pages():
    import warchive.warc
    from warchive.warc.content import content_stream
    root = os.environ.get("WARCHIVE_CORPUS")
    if not root:
        pytest.skip("WARCHIVE_CORPUS not set")
    for path in sorted(Path(root).glob("*.warc.gz")):
        with warchive.warc.open(path, types={"response"}) as recs:
            for rec in recs:
                ctype = rec.http.get("content-type") or "" if rec.http else ""
                if "html" in ctype or "css" in ctype:
                    same(rec.target_uri, ctype, content_stream(rec).read())


# --------------------------------------------------------------------------- generated HTML

URLS = ["a.html", "/root", "../up/x.png", "//cdn.test/lib.js", "http://o.test/p?q=1&amp;r=2", "https://s.test/",
        "#frag", "javascript:go()", "mailto:a@b.test", "x.html#f", "dir/", "?only", " spaced.html ", "caf\u00e9.html",
        "HTTP://UP.test/", "ftp://f.test/x", "data:image/png;base64,AA", "a b.html", "%41.html", ""]
REL = ["stylesheet", "icon", "alternate", "canonical", "preload", "Shortcut Icon", "next"]
TAGS = ["a", "img", "link", "script", "iframe", "frame", "embed", "source", "video", "audio", "track", "input", "object",
        "body", "table", "td", "th", "image", "html", "blockquote", "q", "area", "form", "meta", "base", "div", "p", "span"]
ATTRS = ["href", "src", "srcset", "rel", "poster", "data", "background", "cite", "action", "method", "lowsrc",
         "xlink:href", "manifest", "imagesrcset", "data-src", "data-srcset", "data-original", "data-lazy-src", "class",
         "style", "http-equiv", "content"]


@st.composite
def values(draw, attr: str) -> str:
    if attr in ("srcset", "imagesrcset", "data-srcset"):
        cands = draw(st.lists(st.tuples(st.sampled_from(URLS[:12]), st.sampled_from(["", " 1x", " 2x", " 100w"])),
                              min_size=1, max_size=3))
        return ", ".join(u.strip() + d for u, d in cands)
    if attr == "rel":
        return draw(st.sampled_from(REL))
    if attr == "method":
        return draw(st.sampled_from(["get", "post", "GET", " Get "]))
    if attr == "http-equiv":
        return draw(st.sampled_from(["refresh", "Refresh", "content-type"]))
    if attr == "content":
        return draw(st.sampled_from(["0; url=/next", "5;URL='/q?a=b'", "3", "0;url=" + draw(st.sampled_from(URLS))]))
    if attr == "style":
        return draw(st.sampled_from(["color:red", "background:url(bg.png)", "background:url('/q.png')",
                                     'background:url(&quot;x.png&quot;)']))
    if attr == "class":
        return draw(st.sampled_from(["c", "a b"]))
    return draw(st.sampled_from(URLS))


@st.composite
def tags(draw) -> str:
    name = draw(st.sampled_from(TAGS))
    if draw(st.booleans()):
        name = name.upper()
    parts = []
    for attr in draw(st.lists(st.sampled_from(ATTRS), max_size=4)):
        v = draw(values(attr))
        q = draw(st.sampled_from(['"', "'", ""]))
        if not q and (not v or any(c in v for c in " \t\n'\"=<>`")):
            q = '"'
        if q and q in v:
            q = "'" if q == '"' else '"'
        if q and q in v:
            continue
        parts.append(f"{attr}={q}{v}{q}")
    sep = draw(st.sampled_from([" ", "\n", "  "]))
    return "<" + name + "".join(sep + p for p in parts) + draw(st.sampled_from([">", " />", ">"]))


CSS = ["a{background:url(i.png)}", "@import 'i.css';", '@import "j.css" screen;', "@import url(k.css);",
       "b{c:url( \"/q.png\" )}", "/* a comment */", "d{e:f}", "@font-face{src:url(f.woff2) format('woff2')}"]
TEXT = st.sampled_from(["text ", "&amp; ", "\n", "<!-- a comment -->", "<!-- <a href=\"no\"> -->",
                        "<script>var a = 1 < 2;</script>", "<!DOCTYPE html>", "</a>", "</div>", "<br>",
                        "<textarea><a href='no'></textarea>", "<title>T</title>", "\u00e9"])
documents = st.lists(st.one_of(tags(), TEXT, st.lists(st.sampled_from(CSS), max_size=4).map(
    lambda c: "<style>" + "".join(c) + "</style>")), max_size=30).map("".join)


@settings(max_examples=examples(1500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents, st.sampled_from(["http://ex.test/dir/page.html", "https://ex.test/", "http://ex.test"]))
def test_generated_html(doc, base):
    want = triples(old.extract_html(doc, base))
    assert triples(new.extract_html(doc, base)) == want
    raw = doc.encode("utf-8")
    assert triples(new.extract_html(raw, base)) == triples(old.extract_html(raw, base))


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(CSS), max_size=8).map("".join))
def test_generated_css(css):
    base = "http://ex.test/css/site.css"
    assert triples(new.extract_css(css, base)) == triples(old.extract_css(css, base))
