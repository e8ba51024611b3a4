"""warchive.replay.html against pywb 2.10's HTMLRewriter on real pages: the HTML samples of
tests/data/html, the HTML of the Wget fixture (every 8th page; all of them, and the corpus's when
WARCHIVE_CORPUS names it, with -m slow).

pywb writes every tag anew (its own quoting, names lowercased), so the outputs are compared as a
browser reads them: both are parsed (html.parser), tag by tag and attribute by attribute, and
each value must be pywb's, but where docs/replay.md lists a deliberate difference, which the
test names and counts (a difference it cannot name fails it). Style sheets are compared by the
URLs they hold. pywb's JavaScript rewriting is left out (ours is elsewhere). And on every page,
two checks of our own: with every URL marked instead of rewritten, the output with the marks
taken out is the page, byte for byte (nothing but URLs changes); and the kernel's C fast path
writes what its Python path writes.
"""

from __future__ import annotations

import base64
import collections
import gzip
from html.parser import HTMLParser
import os
import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

import pytest

from pywb_oracle import pywb_rewrite, require_pywb
from warchive._ext import html_rewrite as k
from warchive.replay import html as replay_html
from warchive.replay.urls import UrlRewriter

TESTS = Path(__file__).resolve().parents[1]
SAMPLES = TESTS / "data" / "html"
WGET = TESTS / "data" / "wget" / "docs-python-3.11.warc.gz"
TS = "20131010"
PREFIX = "/coll/"
CSS_URL = re.compile(r"""url\(\s*['"]?([^'")\s]+)|@import\s+['"]([^'"]+)""", re.I)


def wget_pages(every: int) -> List[Tuple[str, bytes]]:
    import warchive.warc
    from warchive.warc.content import content_stream
    out = []
    with warchive.warc.open(WGET, types={"response"}) as recs:
        for i, rec in enumerate(r for r in recs if r.http and "html" in (r.http.get("content-type") or "")):
            if i % every == 0:
                out.append((rec.target_uri, content_stream(rec).read()))
    return out


def corpus_pages(limit: int = 400) -> List[Tuple[str, bytes]]:
    import warchive.warc
    from warchive.warc.content import content_stream
    root = os.environ.get("WARCHIVE_CORPUS")
    if not root:
        return []
    out: List[Tuple[str, bytes]] = []
    for path in sorted(Path(root).glob("*.warc.gz")):
        n = 0
        with warchive.warc.open(path, types={"response"}) as recs:
            for rec in recs:
                if rec.http and "html" in (rec.http.get("content-type") or "") and n < limit:
                    out.append((rec.target_uri, content_stream(rec).read()))
                    n += 1
    return out


def sample_pages() -> List[Tuple[str, bytes]]:
    out = []
    for line in (SAMPLES / "SAMPLES.tsv").read_text().splitlines():
        name, url = line.split("\t")[:2]
        out.append((url, gzip.decompress((SAMPLES / f"{name}.html.gz").read_bytes())))
    return out


# --------------------------------------------------------------------------- reading both outputs

# Elements whose content is text for a browser (and for our tokenizer), markup for html.parser.
RAW = {"textarea", "title", "xmp", "noembed", "noframes", "iframe", "plaintext"}


class Tags(HTMLParser):
    """Start tags with their attributes (values decoded) and whether html.parser found them inside
    an element a browser reads as text; and the text of <style> elements."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: List[Tuple[str, List[Tuple[str, Optional[str]]]]] = []
        self.in_raw: List[bool] = []
        self.raw_text: List[str] = []
        self.styles: List[str] = []
        self._in_style = False
        self._raw: Optional[str] = None

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        self.in_raw.append(self._raw is not None)
        self.raw_text.append(self.get_starttag_text() or "")
        if self._raw is None and tag in RAW:
            self._raw = tag
        self._in_style = tag == "style"
        if self._in_style:
            self.styles.append("")

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag):
        self._in_style = False
        if tag == self._raw and tag != "plaintext":
            self._raw = None

    def handle_data(self, data):
        if self._in_style:
            self.styles[-1] += data


def parse(text: str) -> Tags:
    t = Tags()
    t.feed(text)
    t.close()
    return t


def srcset_urls(v: str) -> List[str]:
    return [c.split()[0] for c in re.split(r",\s+|,(?=/|http)", v.strip()) if c.strip()]


def css_urls(v: str) -> List[str]:
    return [a or b for a, b in CSS_URL.findall(v)]


def mp(v: str) -> str:
    """Our modifiers where pywb gives the page's (mp_)."""
    return re.sub(rf"{PREFIX}{TS}(?:im|oe)_/", f"{PREFIX}{TS}mp_/", v)


# Attributes we rewrite and pywb leaves (docs/replay.md, "more-attributes").
OURS_ONLY = {("*", "imagesrcset"), ("*", "ping"), ("*", "longdesc"), ("*", "manifest"), ("track", "src"),
             ("*", "xlink:href"), ("image", "href"), ("script", "href")}


MODIFIER = re.compile(rf"^{PREFIX}{TS}[a-z]*_?/")


def classify(tag: str, name: str, attrs: Dict[str, Optional[str]], orig: Optional[str], ours: Optional[str],
             theirs: Optional[str], rw: UrlRewriter, in_raw: bool = False, text: str = "") -> Optional[str]:
    """The name of the deliberate difference between our value and pywb's, or None."""
    if in_raw and ours == orig:
        return "raw-text"               # not a tag for a browser: left as it is
    if "&" in text and ours is not None and theirs is not None:
        return "attribute-references"   # references decoded as the HTML standard does (pywb: only &#...)
    if name == "target" and theirs == "___wb_replay_top_frame":
        return "target"
    if ours is not None and theirs is not None and ours != theirs and ours.strip() == theirs.strip():
        return "spaces-kept"            # white space around a URL is not part of it: we keep it
    if ((tag, name) in OURS_ONLY or ("*", name) in OURS_ONLY) and theirs == orig:
        return "more-attributes"
    if name in ("srcset", "imagesrcset") and ours and theirs:
        if [mp(u) for u in srcset_urls(ours)] == srcset_urls(theirs):
            return "srcset-modifier"
    if name == "style" and ours is not None and theirs is not None:
        a, b = css_urls(ours), css_urls(theirs)
        if a == b:
            return "css-spelling"
    if tag == "base" and name == "href":
        return "first-base"
    if (tag, name) in (("image", "href"), ("script", "href")) and ours and theirs and MODIFIER.sub("", ours) == MODIFIER.sub("", theirs):
        return "svg-modifier"           # SVG <image href> im_, <script href> js_ (pywb: the default)
    same_target = (ours is not None and theirs is not None and bool(MODIFIER.match(ours)) and bool(MODIFIER.match(theirs))
                   and MODIFIER.sub("", ours) == MODIFIER.sub("", theirs))
    rel = attrs.get("rel") or ""
    if tag == "link" and name == "href" and same_target and (rel != rel.lower().strip() or len(rel.split()) > 1
                                                             or "modulepreload" in rel.lower()):
        return "link-rels"              # rel read as a list of tokens without case; modulepreload js_
    if tag == "meta" and name == "content" and (attrs.get("http-equiv") or "").lower() == "refresh" and orig == theirs:
        return "refresh-spec"           # the refresh URL read as the HTML standard reads it
    if orig is not None and ours == rw.rewrite(orig.strip(), None) and not same_target:
        return "url-rewriter"           # UrlRewriter's own differences (test_urls_vs_pywb)
    return None


def compare(url: str, body: bytes, p) -> collections.Counter:
    page = f"{TS}mp_/{url}"
    rw = UrlRewriter(page, PREFIX)
    ours = replay_html.rewrite(body, rw, defmod="mp_").decode("utf-8", "surrogateescape")
    ans = p.one({"op": "html", "page": page, "prefix": PREFIX, "url": url, "defmod": "mp_",
                 "body": base64.b64encode(body).decode("ascii")})
    assert ans["ok"], ans
    theirs = base64.b64decode(ans["body"]).decode("utf-8", "surrogateescape")
    src, a, b = parse(body.decode("utf-8", "surrogateescape")), parse(ours), parse(theirs)
    assert len(a.tags) == len(b.tags) == len(src.tags), (url, len(a.tags), len(b.tags), len(src.tags))
    seen: collections.Counter = collections.Counter()
    for (tag, orig), in_raw, text, (_, mine), (_, pywbs) in zip(src.tags, src.in_raw, src.raw_text, a.tags, b.tags):
        pywbs = [(n, v) for n, v in pywbs if n != "__wb_orig_src"]
        assert [n for n, _ in mine] == [n for n, _ in pywbs], (url, tag, mine, pywbs)
        for (name, o), (_, v1), (_, v2) in zip(orig, mine, pywbs):
            if v1 == v2:
                seen["same"] += v1 != o
                continue
            why = classify(tag, name, dict(orig), o, v1, v2, rw, in_raw, text)
            assert why, f"{url}: <{tag} {name}>: ours {v1!r}, pywb {v2!r} (was {o!r})"
            seen[why] += 1
    for s1, s2 in zip(a.styles, b.styles):
        if css_urls(s1) != css_urls(s2):
            seen["style-element"] += 1       # pywb's regex: comments and @namespace rewritten, no image-set()
    return seen


def check_our_invariants(url: str, body: bytes) -> None:
    class Marker:
        def on_url(self, raw, ctx, slot, force):
            return b"\x01" + raw + b"\x02"

        def on_base(self, raw, ctx):
            return b"\x01" + raw + b"\x02"

        def on_link_base(self, raw, ctx, links):
            pass

    if b"\x01" not in body and b"\x02" not in body and b"referrer" not in body.lower():
        kern = k.Kernel(Marker(), all_slow=True)
        out = kern.feed(body, True)
        assert isinstance(out, bytes)
        stripped = out.replace(b"\x01", b"").replace(b"\x02", b"")
        # the renamed attributes are the only other change
        stripped = re.sub(rb"(?i)(\s)_(integrity|crossorigin|content)(?=[\s=>/])", rb"\1\2", stripped)
        assert stripped == body, url
    rw = UrlRewriter(f"{TS}mp_/{url}", PREFIX)
    fast = replay_html.HtmlRewriter(rw)
    slow = replay_html.HtmlRewriter(UrlRewriter(f"{TS}mp_/{url}", PREFIX))
    slow._kernel = k.Kernel(slow, all_slow=True)
    slow._set_page()
    assert fast.feed(body) + fast.close() == slow.feed(body) + slow.close(), url


def run(pages: List[Tuple[str, bytes]]) -> collections.Counter:
    require_pywb()
    total: collections.Counter = collections.Counter()
    with pywb_rewrite() as p:
        for url, body in pages:
            total += compare(url, body, p)
            check_our_invariants(url, body)
    assert total["same"] > 0, "no URL rewritten the same by both: the comparison proves nothing"
    print("\n" + ", ".join(f"{k_}: {v}" for k_, v in sorted(total.items())))
    return total


def test_samples_and_fixture_pages():
    total = run(sample_pages() + wget_pages(every=8))
    assert total["same"] > 20 * sum(v for k_, v in total.items() if k_ != "same"), total


@pytest.mark.slow
def test_every_fixture_page_and_the_corpus():
    run(wget_pages(every=1) + corpus_pages())


def rule_pages() -> List[Tuple[str, bytes]]:
    """One small page per rule of tests/unit/test_html_rewrite.py (what the corpus hardly holds:
    srcset, style sheets, refreshes, preloads, SVG, entities)."""
    import importlib
    rules = importlib.import_module("unit.test_html_rewrite")
    docs = [d for d, _ in rules.ATTRIBUTES + rules.SVG + rules.LINKS + rules.META + rules.NEUTRALISED + rules.ENTITIES
            + rules.STYLE + rules.TOKENIZER_REWRITES] + rules.LEFT_ALONE + rules.TOKENIZER
    return [("http://example.com/dir/page.html", d.encode()) for d in docs]


def test_rule_pages():
    total = run(rule_pages())
    for why in ("more-attributes", "srcset-modifier", "raw-text", "refresh-spec", "link-rels", "svg-modifier",
                "attribute-references", "style-element"):
        assert total[why], (why, total)      # each difference shows where it should
