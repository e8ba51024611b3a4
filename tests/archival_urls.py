"""Hypothesis strategies for the tests of warchive.replay.urls (unit and differential): archival
URL paths of every shape, target URLs with awkward hosts and paths, and references as pages hold
them. They know nothing about the right answers."""

from __future__ import annotations

from hypothesis import strategies as st

IDN = "\u043f\u0440\u0438\u043c\u0435\u0440.\u0438\u0441\u043f\u044b\u0442\u0430\u043d\u0438\u0435"   # пример.испытание

MODIFIERS = ["", "mp_", "id_", "js_", "cs_", "im_", "oe_", "if_", "fr_", "zz_", "$a:b.c-1"]
QUERY_MODIFIERS = ["", "json/", "cdx/", "timemap-link/"]

URL_PIECES = st.sampled_from(list("abcXYZ019-._~:/?#[]@!$&'()*+,;=%") + ["%2e", "%2F", "%25", "%41", "\u00e9", "\u4f8b", ".."])
HOSTS = st.sampled_from(["example.com", "EXAMPLE.com", "127.0.0.1", "[::1]", "a-b.c", "x", "b\u00fccher.de", IDN,
                         "xn--bcher-kva.de", "host:8080", "user:pw@host", "www.example.co.uk", "b\u00fccher.de:81"])
SCHEMES = st.sampled_from(["http://", "https://", "ftp://", "//", "", "http:/", "https:/", "HTTP://"])


@st.composite
def target_urls(draw) -> str:
    rest = draw(st.lists(URL_PIECES, max_size=12).map("".join))
    return draw(SCHEMES) + draw(HOSTS) + ("/" + rest if rest[:1] != "/" else rest)


@st.composite
def archival_paths(draw) -> str:
    kind = draw(st.sampled_from(["replay", "latest", "query", "range", "url_query"]))
    ts = draw(st.text("0123456789", min_size=1, max_size=16))
    mod = draw(st.sampled_from(MODIFIERS))
    url = draw(target_urls())
    if kind == "replay":
        return f"{ts}{mod}/{url}"
    if kind == "latest":
        return f"{mod}/{url}" if mod else url
    qmod = draw(st.sampled_from(QUERY_MODIFIERS))
    if kind == "query":
        return f"{qmod}{draw(st.sampled_from(['', ts]))}*/{url}"
    if kind == "range":
        return f"{qmod}{ts}*{draw(st.text('0123456789', max_size=14))}/{url}"
    return f"{qmod}*/{url}*"


REF_PIECES = ["a", "b", "/", "\\", ".", ":", "?", "#", "%", "2", "e", "E", " ", "\t", "\n", "h", "..", "../", "%2e%2e",
              "http:", "https:", "HTTP:", "//", "javascript:", "x.com", "\u00e9", "@", "=", "&"]
references = st.lists(st.sampled_from(REF_PIECES), max_size=14).map("".join)

PAGES = ["20131010/http://example.com/path/page.html", "20131010/http://example.com", "20131010/http://example.com/a/b/c/d/e.html",
         "http://example.com/", "*/http://example.com/x*", "2013id_/https://example.com:8443/a/", "2010*2012/http://example.com/q?x=1",
         "2013im_/http://b\u00fccher.de/\u00e9/x", "2013js_//example.com/a/b.js", "2013/http://example.com/a/../b/p"]
PREFIXES = [("/coll/", None), ("http://localhost:8080/coll/", None), ("/coll/", "http://localhost:8080/coll/"), ("", None),
            ("/", None), ("https://web.archive.org/web/", None), ("localhost:8080/", None)]
