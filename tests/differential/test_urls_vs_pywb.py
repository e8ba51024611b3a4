"""warchive.replay.urls against pywb 2.10 (WbUrl, UrlRewriter), asked through tests/pywb_oracle.py.

Inputs: every str URL of tests/urlgen.py under archival prefixes of every shape, pages of
various depths and types under relative and absolute prefixes with every reference of a pool
(hand cases and urlgen's), and hypothesis-drawn paths and references (tests/archival_urls.py).

Where an input meets one of our deliberate differences (docs/replay.md, "Archival URLs" and
"URL rewriting"), ``differs(...)`` names it and the case is left out of the comparison, or, for
control characters, compared with pywb's answer %-encoded; every other case must equal pywb's
answer exactly. The tests at the end show each difference on pywb itself.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional
from urllib.parse import quote, unquote_plus, urljoin, urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pywb_oracle
import urlgen
from archival_urls import IDN, PAGES, PREFIXES, archival_paths, references
from warchive.replay import urls as wu
from warchive.replay.urls import ArchivalUrl, ArchivalUrlError, UrlRewriter

DOCS = Path(__file__).resolve().parents[2] / "docs" / "replay.md"
CONTROL = re.compile(r"[\x00-\x1f\x7f]")
QUOTE_SAFE = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~/")
C0_SPACE = "".join(map(chr, range(0x21)))
SEEN = set()   # the differences met, to check each is documented


@pytest.fixture(scope="module")
def pywb():
    pywb_oracle.require_pywb()
    with pywb_oracle.pywb_rewrite() as oracle:
        yield oracle


def encode_controls(s: str) -> str:
    return CONTROL.sub(lambda m: "%%%02X" % ord(m.group()), s)


def _head_rest(url: str):
    m = wu._PATH_START.search(url)
    return (url[: m.start()], url[m.end():]) if m else (url, "")


def _label_before_port(hostport: str):
    """(the last dot-label of the host, the port) of ``[user@]host[:port]``."""
    host, port = wu._split_port(hostport.rpartition("@")[2])
    return host.rpartition(".")[2], port


def _url_differs(url: str) -> Optional[str]:
    """The difference a target URL (as written) meets in pywb's to_uri and get_url."""
    head, rest = _head_rest(url)
    if not rest.isascii() and any(c.isascii() and c not in QUOTE_SAFE for c in rest):
        return "non-ascii-alone"
    domain = unquote_plus(head).rpartition("/")[2]
    label, port = _label_before_port(domain)
    if not domain.isascii() and ("@" in domain or port and not label.isascii()):
        return "idna-host-only"   # pywb IDNA-encodes userinfo, or a port with the last label
    if "xn--" in url:
        try:
            netloc = urlsplit(wu._to_uri(url)).netloc
        except ValueError:
            return "malformed-host"
        label, port = _label_before_port(netloc)
        if "@" in netloc or port and label.lower().startswith("xn--"):
            return "idna-host-only"   # pywb cannot show such a host decoded
    return None


def parse_differs(path: str, theirs: dict) -> Optional[str]:
    if any(c in path for c in "\t\n\r"):
        return "tabs-and-controls"
    grammar = re.match(r"[^/]*", path).group()
    if any(not c.isascii() and (c.isdigit() or c.isalnum() or c == "_") for c in grammar):
        return "ascii-grammar"
    if theirs["ok"]:
        try:
            urlsplit(theirs["url"])
        except ValueError:
            return "malformed-host"
    try:
        raw = wu._split(path)[4]
    except ArchivalUrlError:
        return None
    return _url_differs(raw) or _url_differs(wu.normalize_url(raw))


def check_parse(path: str, theirs: dict) -> None:
    name = parse_differs(path, theirs)
    if name:
        SEEN.add(name)
        return
    try:
        u = ArchivalUrl.parse(path)
    except ArchivalUrlError:
        assert not theirs["ok"], (path, theirs)
        return
    assert theirs["ok"], (path, theirs, u)
    mine = {"type": u.type, "timestamp": u.timestamp, "end_timestamp": u.end_timestamp, "mod": u.modifier,
            "url": u.url, "str": str(u)}
    want = {k: theirs[k] for k in ("type", "timestamp", "end_timestamp", "mod", "url")}
    want["str"] = theirs.get("str", str(u))
    if CONTROL.search(want["url"] + want["str"]):
        SEEN.add("tabs-and-controls")
        want["url"], want["str"] = encode_controls(want["url"]), encode_controls(want["str"])
    assert mine == want, path


# --------------------------------------------------------------------------- archival URLs

GRAMMAR_PREFIXES = ["", "2013/", "20131010101010/", "2013im_/", "2013id_/", "2013mp_/", "2013js_/", "2013cs_/", "2013oe_/",
                    "2013if_/", "2013fr_/", "2013xx_/", "id_/", "2013$x.y/", "*/", "2010*2012/", "2010-2012/", "-2012/",
                    "json/*/", "timemap-link/2011*/", "-/", "2013/http:/", "/", "//", "2013///", "1/", "123456789012345/"]


def _tricky(n: int):
    return [u if isinstance(u, str) else u.decode("latin-1") for u in urlgen.tricky_urls(n)]


def test_parse_like_pywb(pywb):
    urls = _tricky(3000)
    paths = [p + u for p in GRAMMAR_PREFIXES for u in urls[:600]] + urls + [u + "*" for u in urls[:400]]
    paths += [f"{'20131010101010'[:n]}{m}/http://example.com/a?b#c" for n in range(1, 15)
              for m in ("", "mp_", "id_", "js_", "cs_", "im_", "oe_", "if_", "fr_", "zz_", "$a.b")]
    for path, theirs in zip(paths, pywb.ask([{"op": "wburl", "path": p} for p in paths])):
        check_parse(path, theirs)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(archival_paths() | st.text(max_size=40))
def test_parse_like_pywb_drawn(pywb, path):
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return   # lone surrogates: pywb raises, and so do we (test_lone_surrogates)
    check_parse(path, pywb.one({"op": "wburl", "path": path}))


# --------------------------------------------------------------------------- URL rewriting

REFS = ["", "other.html", "./x", "../x", "../../../../x", "/x", "/", "//x.com/a", "///x", "http://x.com/a", "https://x.com:8443/a?b#c",
        "#frag", "javascript:alert(1)", "data:text/plain,x", "mailto:a@b", "about:blank", "file:///etc/passwd", "{{url}}",
        "?q=1", "?q=../", "a?x=../b", r"\/\/x.com/a", r"\\/\\/x.com/a", "http:\\/\\/x.com/", "ftp://x/y", "ws://x/",
        "http://b\u00fccher.de/x", "//" + IDN + "/x", "http://[::1]:80/x", "..", "a/../../b", "/coll/2013/http://x/",
        "http://localhost:8080/coll/2013/http://x/", "/coll/", "http://xn--bcher-kva.de:80/x", "https:x.com", "http:/x.com",
        "/a b/c", "a/./b/../c", "/a;b?c=d&e=f#g", "http://user:pw@x.com/", "?", "#", "/?#", "x:y", "mms://x/", "rtsp://x/"]


def rewrite_differs(page: str, ref: str, theirs: dict) -> Optional[str]:
    if not theirs["ok"]:
        return "no-crash"
    trimmed = ref.strip(C0_SPACE)
    if trimmed != ref or any(c in ref for c in "\t\n\r"):
        return "browser-reading"
    low = ref[:12].lower()
    if low.startswith(wu._NO_REWRITE + wu._PROTOCOLS) and not ref.startswith(wu._NO_REWRITE + wu._PROTOCOLS):
        return "browser-reading"   # the scheme's case
    if low.startswith(("blob:", "tel:")):
        return "browser-reading"
    q = min([i for i in (ref.find("?"), ref.find("#")) if i >= 0], default=len(ref))
    path = ref[:q]
    if "\\" in path and not ref.startswith(wu._REL_SCHEME) or "%2e" in path.lower():
        return "browser-reading"
    is_abs = ref.startswith(wu._PROTOCOLS + wu._REL_SCHEME)
    try:
        target = ref if is_abs else wu._join(ArchivalUrl.parse(page).url, ref)   # pywb's join
    except ValueError:   # left as it is by both (a relative reference without ../)
        target = ref
    tq = min([i for i in (target.find("?"), target.find("#")) if i >= 0], default=len(target))
    if wu._DOTDOT_SEGMENT.search(target[wu._AUTHORITY.match(target).end():tq]):
        return "browser-reading"   # '..' left in the path by pywb, resolved by us
    return _url_differs(target)


def check_rewrite(case: dict, theirs: dict) -> None:
    name = rewrite_differs(case["page"], case["url"], theirs)
    r = UrlRewriter(case["page"], case["prefix"], case["full_prefix"])
    mine = r.rewrite(case["url"], case["mod"], force_abs=bool(case.get("force_abs")))
    if name:
        SEEN.add(name)
        return
    want = theirs["result"]
    if CONTROL.search(want) and want != case["url"]:   # a reference left alone is left alone
        SEEN.add("tabs-and-controls")
        want = encode_controls(want)
    assert mine == want, case


def rewrite_cases(refs, mods=(None, "", "im_", "js_", "id_", "mp_", "oe_", "cs_", "if_")):
    cases = []
    for i, (page, (prefix, full), ref) in enumerate((p, x, r) for p in PAGES for x in PREFIXES for r in refs):
        cases.append(dict(op="rewrite", page=page, prefix=prefix, full_prefix=full, url=ref, mod=mods[i % len(mods)],
                          force_abs=i % 17 == 0))
    return cases


def test_rewrite_like_pywb(pywb):
    refs = REFS + _tricky(700)
    cases = rewrite_cases(refs)
    for case, theirs in zip(cases, pywb.ask(cases)):
        check_rewrite(case, theirs)


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(references | st.text(max_size=30), st.sampled_from(PAGES), st.sampled_from(PREFIXES),
       st.sampled_from([None, "", "im_", "id_", "js_"]))
def test_rewrite_like_pywb_drawn(pywb, ref, page, prefix, mod):
    try:
        ref.encode("utf-8")
    except UnicodeEncodeError:
        return
    case = dict(op="rewrite", page=page, prefix=prefix[0], full_prefix=prefix[1], url=ref, mod=mod)
    check_rewrite(case, pywb.one(case))


def test_rebase_and_archival_url_like_pywb(pywb):
    cases = [dict(op="rewrite", page=p, prefix=x, full_prefix=None, url=u, rebase=b)
             for p in PAGES[:4] for x, _ in PREFIXES[:3] for b in ("/a/b/", "c/", "http://other.com/d/", "../e/")
             for u in ("x", "../y", "/z", "http://w.com/")]
    for case, theirs in zip(cases, pywb.ask(cases)):
        r = UrlRewriter(case["page"], case["prefix"]).rebase(case["rebase"])
        assert r.rewrite(case["url"]) == theirs["result"], case
    news = [dict(op="new_url", page=p, prefix=x, url=u, timestamp=t, mod=m) for p in PAGES for x, _ in PREFIXES[:3]
            for u, t, m in ((None, "20200101", None), ("http://o.com/", None, "im_"), ("", None, None), (None, None, "id_"))]
    for case, theirs in zip(news, pywb.ask(news)):
        got = UrlRewriter(case["page"], case["prefix"]).archival_url(case["url"], timestamp=case["timestamp"],
                                                                    modifier=case["mod"])
        assert got == theirs["result"], case


def test_deprefix_like_pywb(pywb):
    full = ["http://localhost:8080/pywb/", "https://web.archive.org/web/", "http://h/c/"]
    pages = []
    for f in full:
        for inner in ("20141226/http://example.com/", "if_/https://example.com/f.html", "https://example.com/f.html",
                      "2014im_/http://x.com/a?b=c", "extra/path/http://example.com/"):
            pages += [f"2013id_/http://example.com/f?p={f}{inner}&q=1", f"http://example.com/f?u={quote(f + inner, safe='')}&z=2",
                      f"http://example.com/f?a=1&u={quote(f + inner, safe='')}", f"http://example.com/?x={f}{inner}"]
    cases = [dict(op="deprefix", page=p, prefix="/pywb/", full_prefix=f) for p in pages for f in full]
    for case, theirs in zip(cases, pywb.ask(cases)):
        r = UrlRewriter(case["page"], case["prefix"], case["full_prefix"])
        assert r.deprefix(r.page.url) == theirs["result"], case


# --------------------------------------------------------------------------- each difference, on pywb itself

def _wb(pywb, path):
    return pywb.one({"op": "wburl", "path": path})


def _rw(pywb, ref, page="20131010/http://example.com/path/page.html", prefix="/coll/"):
    return pywb.one({"op": "rewrite", "page": page, "prefix": prefix, "url": ref})


def test_difference_ascii_grammar(pywb):
    path = "\u0662\u0660\u0661\u0663/http://example.com/"
    assert _wb(pywb, path)["timestamp"] == "\u0662\u0660\u0661\u0663"
    assert ArchivalUrl.parse(path).timestamp == ""


def test_difference_tabs_and_controls(pywb):
    assert _wb(pywb, "2013/http://a/\nb")["type"] == "latest_replay"
    assert ArchivalUrl.parse("2013/http://a/\nb").url == "http://a/b"
    assert _wb(pywb, "http://a%0Ab.com/")["url"] == "http://a\nb.com/"
    assert ArchivalUrl.parse("http://a%0Ab.com/").url == "http://a%0Ab.com/"


def test_difference_non_ascii_alone(pywb):
    assert _wb(pywb, "http://example.com/\u00e9?a=b%20c")["url"] == "http://example.com/%C3%A9%3Fa%3Db%2520c"
    assert ArchivalUrl.parse("http://example.com/\u00e9?a=b%20c").url == "http://example.com/%C3%A9?a=b%20c"


def test_difference_idna_host_only(pywb):
    assert _wb(pywb, "http://user@b\u00fccher.de/")["url"] == "http://xn--user@bcher-feb.de/"
    assert ArchivalUrl.parse("http://user@b\u00fccher.de/").url == "http://user@xn--bcher-kva.de/"
    assert _wb(pywb, f"http://{IDN}:8080/")["url"] == "http://xn--e1afmkfd.xn--:8080-3ve9awb3cuxo9j/"
    assert ArchivalUrl.parse(f"http://{IDN}:8080/").url == "http://xn--e1afmkfd.xn--80akhbyknj4f:8080/"


def test_difference_malformed_host(pywb):
    theirs = _wb(pywb, "http://[xn--x/")
    assert theirs["ok"] and theirs["str_error"].startswith("ValueError")
    with pytest.raises(ArchivalUrlError):
        ArchivalUrl.parse("http://[xn--x/")
    assert _rw(pywb, "http://[xn--/")["error"].startswith("ValueError")
    assert UrlRewriter("2013/http://x/", "/coll/").rewrite("http://[xn--/") == "/coll/2013/http://[xn--/"


def test_difference_no_crash(pywb):
    assert _rw(pywb, "foo://[x/../")["error"].startswith("ValueError")
    assert _wb(pywb, "http://x/\ud800?\u00e9")["error"].startswith("UnicodeEncodeError")
    with pytest.raises(ArchivalUrlError):
        ArchivalUrl.parse("http://x/\ud800?\u00e9")


@pytest.mark.parametrize("ref", ["HTTP://x.com/", " http://x.com/", "http://x.com/\n", "\\\\x.com/a", "\\/x.com/a",
                                 "/\\x.com/a", "%2e%2e/%2e%2e/%2e%2e/%2e%2e/x", "a\\..\\..\\..\\..\\x",
                                 "http://x/../../../../../../y", "blob:x/../y", "JavaScript:x('../')"])
def test_difference_browser_reading(pywb, ref):
    theirs, mine = _rw(pywb, ref)["result"], UrlRewriter("20131010/http://example.com/path/page.html", "/coll/").rewrite(ref)
    assert theirs != mine
    assert mine.startswith("/coll/20131010/") or mine == ref
    if ref.lower().startswith(("http", " http", "\\", "/\\")):
        assert mine.startswith("/coll/20131010/") and not theirs.startswith("/coll/20131010/http://example.com/x")


def test_difference_deprefix_escaped(pywb):
    page, full = "http://example.com/f?u=http%3A%2F%2FaXb%2Fc%2Fhttp%3A%2F%2Fz.com%2F", "http://a.b/c/"
    assert pywb.one({"op": "deprefix", "page": page, "prefix": "/c/", "full_prefix": full})["result"] == \
        "http://example.com/f?u=http%3A%2F%2Fz.com%2F"   # its '.' matched the 'X'
    assert UrlRewriter(page, "/c/", full).deprefix(ArchivalUrl.parse(page).url) == ArchivalUrl.parse(page).url


def test_difference_rebase_keeps_prefixes(pywb):
    case = dict(op="rewrite", page="20131010/http://example.com/p.html", prefix="/coll/", full_prefix="http://h:8/coll/",
                url="http://h:8/coll/2014/http://x/", rebase="/b/")
    assert pywb.one(case)["result"] == "/coll/20131010/http://h:8/coll/2014/http://x/"   # full prefix forgotten
    r = UrlRewriter(case["page"], "/coll/", "http://h:8/coll/").rebase("/b/")
    assert r.rewrite(case["url"]) == case["url"]


def test_every_difference_met_is_documented():
    text = DOCS.read_text()
    missing = [name for name in sorted(SEEN) if f"`{name}`" not in text]
    assert not missing, f"docs/replay.md does not describe: {missing}"
