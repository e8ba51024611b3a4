"""Server-side JavaScript rewriting (warchive.replay.js) against pywb 2.10's location rewriter
(``JSLocationRewriterRules``, the light rules ours are learned from), on real scripts: the
JavaScript bodies and inline ``<script>`` texts of the committed Wget crawl (tests/data/wget) and
of the benchmark corpus when it is there (``WARCHIVE_CORPUS``, default corpus/ at the repository root).

Both rewriters run with the same prefix; every reference one of them rewrites is looked up in
the other's edits. Where the rules are the same the edits must be the same (same place, same
replacement); every other difference must be one of the deliberate ones of docs/replay.md
("JavaScript: where we differ from pywb"), named here as there:

    literal         pywb rewrites inside a string, template text, comment or regex literal
    key-or-label    pywb rewrites an object key or label written with a space before its `:`
    label           pywb rewrites the label of a break/continue
    private-name    pywb rewrites a #private name
    shorthand       a shorthand property: we keep its key (`top: __wa_top`)
    ternary-case    pywb leaves a reference right before a `:` (`?h.top:0`, `case top:`), we
                    rewrite it (its (?!:) look-ahead, meant for keys)
    post-message    pywb's `.postMessage(` and `.frameElement` rules (the client handles those)
    ours            parent and import(): rules pywb's location rewriter does not have
"""

from __future__ import annotations

import gzip
import os
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Dict, Iterator, List, Tuple

import pytest

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

from pywb_oracle import pywb_available, pywb_rewrite  # noqa: E402
from warchive.replay.js import PREFIX, JsRewriter  # noqa: E402

FIXTURES = TESTS / "data" / "wget"          # the committed Wget crawl (tests/data/README.md)
CORPUS = Path(os.environ.get("WARCHIVE_CORPUS", TESTS.parent / "corpus"))
MAX_SCRIPT = 3 << 20
INLINE = re.compile(rb"<script(?![^>]*\bsrc\s*=)[^>]*>(.*?)</script", re.S | re.I)

pytestmark = pytest.mark.skipif(not pywb_available(), reason="pywb 2.10 venv missing (scripts/setup_pywb.sh)")


def _records(path: Path, offsets=None) -> Iterator[Tuple[str, str, bytes]]:
    """(url, content type, decoded payload) of the response records of a WARC (at ``offsets``)."""
    from warcio.archiveiterator import ArchiveIterator
    with open(path, "rb") as f:
        if offsets is None:
            yield from _responses(ArchiveIterator(f))
            return
        for off in offsets:
            f.seek(off)
            yield from _responses(ArchiveIterator(f), one=True)


def _responses(it, one=False):
    for rec in it:
        if rec.rec_type == "response" and rec.http_headers is not None:
            ctype = rec.http_headers.get_header("Content-Type") or ""
            yield rec.rec_headers.get_header("WARC-Target-URI"), ctype, rec.content_stream().read(MAX_SCRIPT + 1)
        if one:
            return


def corpus_scripts() -> List[Tuple[str, str]]:
    """(name, text) of the scripts: every JavaScript body, and the inline scripts of the first
    pages, of the fixtures' WARC; the JavaScript bodies the corpus's CDX names, up to 60 a file
    (scripts over 3 MB, search indexes, left out)."""
    out: List[Tuple[str, str]] = []
    fixture = FIXTURES / "docs-python-3.11.warc.gz"
    if fixture.exists():
        pages = 0
        for url, ctype, body in _records(fixture):
            if "javascript" in ctype and len(body) <= MAX_SCRIPT:
                out.append((url, body.decode("latin-1")))
            elif ctype.startswith("text/html") and pages < 80:
                pages += 1
                for i, m in enumerate(INLINE.finditer(body)):
                    if m.group(1).strip():
                        out.append((f"{url}#script{i}", m.group(1).decode("latin-1")))
    for cdx in sorted(CORPUS.glob("*.cdx")) if CORPUS.is_dir() else []:
        by_file: Dict[str, List[int]] = {}
        for line in cdx.read_text(errors="replace").splitlines():
            f = line.split(" ")
            if len(f) >= 10 and "javascript" in f[3] and f[4] == "200" and f[8].isdigit():   # CDX a b a m s k r M V g u
                by_file.setdefault(f[9], []).append(int(f[8]))
        for name, offsets in by_file.items():
            warc = CORPUS / name
            if warc.exists():
                for url, ctype, body in _records(warc, sorted(offsets)[:60]):
                    if len(body) <= MAX_SCRIPT:
                        out.append((url, body.decode("latin-1")))
    return out


def _inside(spans: List[Tuple[int, int]], pos: int) -> bool:
    return any(a <= pos < b for a, b in spans)


def classify(text: str, ours: JsRewriter, pywb_edits: List[List]) -> Tuple[int, Counter, List[str]]:
    """(edits that agree, deliberate differences by name, unexplained differences)."""
    mine = {e.start: e for e in ours.edits}
    agree = 0
    kinds: Counter = Counter()
    odd: List[str] = []
    for start, end, rep in pywb_edits:
        match = text[start:end]
        word = re.search(r"(location|top|postMessage|frameElement)\b[^\w]*$", match) or re.search(
            r"(location|top|postMessage|frameElement)", match)
        assert word is not None, match
        at = start + word.start(1)
        name = word.group(1)
        o = mine.pop(at, None)
        around = text[max(0, at - 30):at + 30]
        if name in ("postMessage", "frameElement"):
            kinds["post-message"] += 1
            if o is not None:
                odd.append(f"both at {at}: {around!r}")
        elif o is not None:
            if o.text == PREFIX + name:
                agree += 1
            elif o.text == f"{name}: {PREFIX}{name}":
                kinds["shorthand"] += 1
            else:
                odd.append(f"{o.text!r} vs {rep!r} at {at}: {around!r}")
        elif _inside(ours.literals, at):
            kinds["literal"] += 1
        elif re.match(r"\s*:", text[at + len(name):]):
            kinds["key-or-label"] += 1
        elif re.search(r"\b(?:break|continue)\s*$", text[max(0, at - 20):at]):
            kinds["label"] += 1
        elif text[at - 1:at] == "#":
            kinds["private-name"] += 1
        else:
            odd.append(f"pywb only at {at}: {around!r}")
    for at, o in mine.items():
        around = text[max(0, at - 30):at + 30]
        if o.name in ("parent", "import"):
            kinds["ours"] += 1
        elif text[o.end:o.end + 1] == ":":
            kinds["ternary-case"] += 1
        else:
            odd.append(f"ours only at {at}: {around!r}")
    return agree, kinds, odd


@pytest.fixture(scope="module")
def scripts():
    got = corpus_scripts()
    if not got:
        pytest.skip(f"no corpus scripts under {FIXTURES} or {CORPUS}")
    return got


def test_corpus_scripts_rewritten_as_pywb_rewrites_them(scripts):
    total_agree = 0
    all_kinds: Counter = Counter()
    problems: List[str] = []
    with pywb_rewrite() as pywb:
        for name, text in scripts:
            ans = pywb.one({"op": "js_location", "text": text, "prefix": PREFIX})
            assert ans["ok"], ans
            ours = JsRewriter(record=True)
            ours.feed_text(text)
            ours.close_text()
            agree, kinds, odd = classify(text, ours, ans["edits"])
            total_agree += agree
            all_kinds.update(kinds)
            problems += [f"{name}: {p}" for p in odd]
            if not ans["edits"] and not ours.edits:
                assert ans["result"] == text
    assert not problems, "\n".join(problems[:30])
    print(f"\n{len(scripts)} scripts: {total_agree} edits the same, differences {dict(all_kinds)}")
    assert total_agree >= 20            # the corpus does exercise the shared rules
    assert all_kinds["literal"] > 0     # ... and pywb's rewriting of literals


CRAFTED = """\
if (top !== self) { top.location = self.location }
var s = "Back to top"; // the top of the page
x = { top : 1, left: 2 }; a ? location : b; y = c?top:d;
outer: for (;;) { break outer } top : for (;;) { continue top }
window.scrollTo({top, behavior: "smooth"});
window.parent.postMessage(m, "*"); var p = parent; import("./m.js");
class A { #top = 1; get() { return this.#top } }
"""


def test_crafted_script_shows_every_difference():
    with pywb_rewrite() as pywb:
        ans = pywb.one({"op": "js_location", "text": CRAFTED, "prefix": PREFIX})
    ours = JsRewriter(record=True)
    ours.feed_text(CRAFTED)
    ours.close_text()
    agree, kinds, odd = classify(CRAFTED, ours, ans["edits"])
    assert not odd, odd
    assert agree == 5       # top !==, top.location (twice), self.location, ? location :
    assert set(kinds) == {"literal", "key-or-label", "label", "private-name", "shorthand", "ternary-case",
                          "post-message", "ours"}, kinds
