"""The client script (src/warchive/replay/static/wa_client.js) in Debian's chromium, on its own:

* its URL rewriting agrees with warchive.replay.urls.UrlRewriter.rewrite, the reference, on a
  table of absolute, scheme-relative, root-relative and relative URLs generated here (pages x
  prefixes x references x modifiers, and seeded random references built from URL pieces);
* the corpus scripts, rewritten by warchive.replay.js, still parse where the originals parse
  (the browser's own parser, through ``new Function``).

The page is a blank one with the insert's JSON element and the script; nothing is fetched.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
for _p in (TESTS, TESTS / "differential"):
    if str(_p) not in sys.path:
        sys.path.insert(0, str(_p))

import localsite  # noqa: E402
from warchive.capture.browser import chromium_path  # noqa: E402
from warchive.replay.js import rewrite_js  # noqa: E402
from warchive.replay.urls import ArchivalUrl, UrlRewriter  # noqa: E402

CLIENT = (TESTS.parent / "src" / "warchive" / "replay" / "static" / "wa_client.js").read_text()


@pytest.fixture(scope="module")
def page():
    localsite.require_browser()
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium_path(), headless=True,
                                     args=["--no-sandbox", "--host-resolver-rules=MAP * ~NOTFOUND"])
        pg = browser.new_page()
        pg.route("**/*", lambda route: route.abort())
        info = {"coll": "coll", "prefix": "http://127.0.0.1:9/coll/", "url": "http://example.com/",
                "timestamp": "20200101000000", "mod": "mp_", "framed": True, "static": "http://127.0.0.1:9/static/"}
        pg.set_content('<html><head><script type="application/json" id="wa-replay-info">'
                       f'{json.dumps(info)}</script></head><body></body></html>')
        pg.add_script_tag(content=CLIENT)
        assert pg.evaluate("typeof window.__wa_client") == "object"
        yield pg
        browser.close()


PAGES = ["http://example.com/dir/page.html", "https://www.example.org:8443/a/b/", "http://example.com/",
         "http://example.com/dir/sub/index.php?x=1", "http://bücher.de/ü/x"]
PREFIXES = ["http://127.0.0.1:8080/coll/", "http://localhost:9/app/my-coll/"]
MODS = [None, "im_", "js_", "oe_", "mp_"]
HOSTS = ["example.com", "Example.COM:8080", "a.b.c", "xn--bcher-kva.de", "bücher.de", "user:pw@host.com",
         "127.0.0.1:8000", "[::1]:80", "пример.испытание", "xn--e1afmkfd.xn--80akhbyknj4f:81"]
PATHS = ["", "/", "/a/b.html", "/a/../b", "/%2e%2e/x", "/a/./b/", "/é/ü", "/a b", "/a?q=1&r=2", "/a#frag",
         "/a/..", "/;p=1/x", "/a/b/../../../c", "/x?u=http://y/", "/a%20b/%C3%A9", "/xn--path", "/a/%2E%2e/b"]
SCHEMES = ["http://", "https://", "HTTP://", "Https://", "//", "\\\\", "/\\", "\\/\\/", "ftp://", "rtsp://"]
RELATIVE = ["a.html", "../a.html", "./../x", "?q", "#h", "sub/../../x", "a\\b\\..\\c", "%2e%2e/x", "..", "../",
            " /x ", "\t/x\n", "data:x", "javascript:../x", "JavaScript:x", "mailto:a", "tel:1", "blob:x", "{x}",
            "mms:x", "/", "", "  ", "/a/b", "/../x", "/a//b/../c", "\\x\\y", "\\..\\x", "x/%2E%2E/y", "../../../../x",
            ".", "./", "a/./b", "a/../b?c=../d", "../?q", "../#f", "//", "///x", "http:x", "http:/x", "HTTPS:/\\x",
            "/é?a=é#é", "../é", "weird:../x", "a:b/../c"]
PIECES = ["a", "b", "..", ".", "%2e%2e", "%2E", "", "é", "x y", "?", "#", ";", "=", "&", "%", "+", "\\", ":", "@"]


def _refs():
    refs = list(RELATIVE)
    for s in SCHEMES:
        for h in HOSTS:
            for p in PATHS[::2] if s not in ("http://", "//") else PATHS:
                refs.append(s + h + p)
    refs += ["/" + p.lstrip("/") for p in PATHS] + ["../" + p.lstrip("/") for p in PATHS]
    rnd = random.Random(12)
    for _ in range(400):
        segs = [rnd.choice(PIECES) for _ in range(rnd.randint(1, 5))]
        lead = rnd.choice(["", "/", "../", "./", "//h.example", "http://h.example/", "\\"])
        refs.append(lead + "/".join(segs))
    return refs


def _python(page_url, prefix, ref, mod):
    rw = UrlRewriter(ArchivalUrl(page_url, "20200101000000", "mp_"), prefix, prefix,
                     rel_prefix="/" + prefix.split("/", 3)[3])
    try:
        return rw.rewrite(ref, mod)
    except Exception as e:   # the reference raises on nothing (docs/replay.md `no-crash`)
        return f"raised {type(e).__name__}"


def test_url_rewriting_agrees_with_the_python_reference(page):
    refs = _refs()
    rows = []
    for page_url in PAGES:
        norm = ArchivalUrl(page_url, "20200101000000", "mp_").url
        for prefix in PREFIXES:
            for i, ref in enumerate(refs):
                mod = MODS[i % len(MODS)]
                rows.append([norm, prefix, ref, mod, _python(page_url, prefix, ref, mod)])
    got = page.evaluate("""rows => rows.map(([url, prefix, ref, mod]) => {
        try { return new window.__wa_client.UrlRewriter({url, timestamp: "20200101000000", mod: "mp_"}, prefix)
                .rewrite(ref, mod === null ? undefined : mod); }
        catch (e) { return "threw " + e; } })""", rows)
    bad = [(r[0], r[1], r[2], r[3], r[4], g) for r, g in zip(rows, got) if r[4] != g]
    assert not bad, f"{len(bad)} of {len(rows)} differ, e.g.:\n" + "\n".join(map(repr, bad[:25]))
    kinds = {"absolute": 0, "scheme-relative": 0, "root-relative": 0, "relative": 0}
    for r in rows:
        ref = r[2].strip()
        kind = ("scheme-relative" if ref.startswith(("//", "\\\\", "/\\", "\\/\\/")) else
                "absolute" if ref[:6].lower().startswith(("http:", "https", "ftp:", "rtsp:")) else
                "root-relative" if ref.startswith("/") else "relative")
        kinds[kind] += 1
    assert min(kinds.values()) > 100, kinds
    assert sum(r[2] != r[4] for r in rows) > len(rows) // 2   # most of them are rewritten


def test_unrewrite_gives_back_the_original(page):
    prefix = "http://127.0.0.1:9/coll/"
    urls = ["http://example.com/a/b.html?q=1#f", "https://x.example:8443/", "http://example.com/é"]
    rows = []
    for u in urls:
        for mod in ("mp_", "im_", None):
            rw = UrlRewriter(ArchivalUrl("http://example.com/", "20200101000000", "mp_"), prefix, prefix)
            rows.append([rw.rewrite(u, mod), ArchivalUrl.parse(rw.rewrite(u, mod)[len(prefix):]).url])
            rows.append(["/coll/20200101000000/" + ArchivalUrl(u).url, ArchivalUrl(u).url])
    got = page.evaluate("rows => rows.map(r => window.__wa_client.unrewrite(r[0]))", rows)
    assert got == [r[1] for r in rows]
    assert page.evaluate("window.__wa_client.unrewrite('http://elsewhere.example/x')") == "http://elsewhere.example/x"


def test_rewritten_corpus_scripts_still_parse(page):
    from test_js_vs_pywb import corpus_scripts
    scripts = corpus_scripts()
    if not scripts:
        pytest.skip("no corpus scripts")
    pairs = [(name, text, rewrite_js(text, "http://example.com/a.js")) for name, text in scripts]
    verdicts = page.evaluate("""pairs => pairs.map(([name, a, b]) => {
        const parses = src => { try { new Function(src); return null } catch (e) { return String(e) } };
        return [parses(a), parses(b)]; })""", pairs)
    bad = [(name, v) for (name, _, _), v in zip(pairs, verdicts) if (v[0] is None) != (v[1] is None)]
    assert not bad, bad[:10]
    assert sum(v[0] is None for v in verdicts) >= len(pairs) * 0.9   # classic scripts, nearly all
