"""HTTP response heads for the tests of warchive.replay.headers (unit and differential): a table of
heads shaped like those real servers send (nginx, Apache, Cloudflare, CDNs, WordPress, JSON APIs,
HTTP/2-style lower-case names), written by hand after the headers such servers are documented to
send, and hypothesis strategies drawing heads from pools of names and values. They know nothing
about the right answers.

A head is ``(statusline, [(name, value), ...])``.
"""

from __future__ import annotations

from typing import List, Tuple

from hypothesis import strategies as st

Head = Tuple[str, List[Tuple[str, str]]]

DATE = "Tue, 12 Mar 2019 17:42:07 GMT"
LATER = "Wed, 11 Mar 2020 17:42:07 GMT"

HEADS: List[Head] = [
    ("200 OK", [   # nginx, a page behind a framework, gzip and chunked
        ("Server", "nginx/1.14.2"), ("Date", DATE), ("Content-Type", "text/html; charset=utf-8"),
        ("Transfer-Encoding", "chunked"), ("Connection", "keep-alive"), ("Vary", "Accept-Encoding"),
        ("Set-Cookie", f"sessionid=8fa0c1; expires={LATER}; HttpOnly; Max-Age=31536000; Path=/; SameSite=Lax"),
        ("Set-Cookie", f"csrftoken=Zx81; Domain=.example.com; expires={LATER}; Path=/; Secure"),
        ("Strict-Transport-Security", "max-age=31536000; includeSubDomains; preload"),
        ("X-Frame-Options", "SAMEORIGIN"), ("X-Content-Type-Options", "nosniff"),
        ("Content-Security-Policy", "default-src 'self'; img-src * data:; script-src 'self' https://cdn.example.net; "
                                    "report-uri https://csp.example.com/r"),
        ("Content-Encoding", "gzip")]),
    ("301 Moved Permanently", [   # Apache, a relative Location
        ("Date", DATE), ("Server", "Apache/2.4.38 (Debian)"), ("Location", "/docs/"), ("Content-Length", "229"),
        ("Keep-Alive", "timeout=5, max=100"), ("Connection", "Keep-Alive"), ("Content-Type", "text/html; charset=iso-8859-1")]),
    ("302 Found", [   # a login redirect with ../ and a scoped session cookie
        ("Location", "../login?next=%2Fapp%2Fhome&r=1"), ("Cache-Control", "no-cache, no-store, must-revalidate"),
        ("Pragma", "no-cache"), ("Expires", "0"),
        ("Set-Cookie", "JSESSIONID=1A2B3C; Path=/app; HttpOnly"), ("Content-Length", "0")]),
    ("302 Moved Temporarily", [   # to another host, scheme-relative
        ("Location", "//static.example.net/landing?utm_source=x"), ("Content-Type", "text/html"), ("Content-Length", "154"),
        ("Connection", "close")]),
    ("307 Temporary Redirect", [   # HSTS-style upgrade
        ("Location", "https://example.com/"), ("Non-Authoritative-Reason", "HSTS"), ("Cross-Origin-Resource-Policy", "Cross-Origin")]),
    ("200 OK", [   # Cloudflare
        ("Date", DATE), ("Content-Type", "text/html; charset=UTF-8"), ("Transfer-Encoding", "chunked"), ("Connection", "keep-alive"),
        ("Set-Cookie", f"__cf_bm=abc.def-1; path=/; expires={DATE}; domain=.example.com; HttpOnly; Secure; SameSite=None"),
        ("CF-Cache-Status", "DYNAMIC"),
        ("Report-To", '{"endpoints":[{"url":"https:\\/\\/a.nel.cloudflare.com\\/report\\/v3?s=xyz"}],"group":"cf-nel","max_age":604800}'),
        ("NEL", '{"success_fraction":0,"report_to":"cf-nel","max_age":604800}'), ("Server", "cloudflare"),
        ("CF-RAY", "7b1c2d3e4f-AMS"), ("Content-Encoding", "br"), ("alt-svc", 'h3=":443"; ma=86400')]),
    ("200 OK", [   # Link preload and preconnect (HTTP/2 push hints)
        ("Content-Type", "text/html"),
        ("Link", '</static/app.css>; rel=preload; as=style, </static/app.js>; rel=preload; as=script, '
                 '<https://fonts.gstatic.com>; rel=preconnect; crossorigin'),
        ("Link", '<https://fonts.gstatic.com/s/roboto/v30/KFOmCnqEu92Fr1Mu4mxK.woff2>; rel="preload"; as="font"; type="font/woff2"; crossorigin'),
        ("Content-Length", "10240")]),
    ("200 OK", [   # WordPress
        ("Server", "Apache"), ("X-Powered-By", "PHP/7.4.33"),
        ("Link", '<https://example.com/wp-json/>; rel="https://api.w.org/", <https://example.com/wp-json/wp/v2/pages/42>; '
                 'rel="alternate"; type="application/json", <https://example.com/?p=42>; rel=shortlink'),
        ("X-Pingback", "https://example.com/xmlrpc.php"), ("Vary", "Accept-Encoding,Cookie"),
        ("Cache-Control", "max-age=3, must-revalidate"), ("Content-Encoding", "gzip"), ("Content-Length", "18764"),
        ("Content-Type", "text/html; charset=UTF-8")]),
    ("200 OK", [   # a JSON API with CORS
        ("Content-Type", "application/json; charset=utf-8"), ("Access-Control-Allow-Origin", "*"),
        ("Access-Control-Allow-Credentials", "true"), ("Access-Control-Expose-Headers", "ETag, Link, X-RateLimit-Remaining"),
        ("Access-Control-Allow-Methods", "GET, POST, OPTIONS"), ("Access-Control-Max-Age", "86400"),
        ("ETag", 'W/"5f3b-1a2b"'), ("Cache-Control", "private, max-age=60"), ("X-RateLimit-Remaining", "59"),
        ("Link", '<https://api.example.com/items?page=2>; rel="next", <https://api.example.com/items?page=9>; rel="last"'),
        ("Content-Length", "1893")]),
    ("200 OK", [   # an image on a CDN
        ("Accept-Ranges", "bytes"), ("Age", "5123"), ("Cache-Control", "public, max-age=31536000, immutable"),
        ("Content-Length", "48213"), ("Content-Type", "image/jpeg"), ("ETag", '"d41d8cd98f00b204"'),
        ("Last-Modified", "Mon, 04 Feb 2019 10:00:00 GMT"), ("Via", "1.1 varnish"), ("X-Cache", "HIT, HIT"),
        ("Timing-Allow-Origin", "*")]),
    ("206 Partial Content", [   # a video range
        ("Content-Type", "video/mp4"), ("Content-Range", "bytes 0-1048575/73400320"), ("Content-Length", "1048576"),
        ("Accept-Ranges", "bytes"), ("Last-Modified", DATE)]),
    ("200 OK", [   # a Refresh header and Content-Location/Content-Base
        ("Refresh", "5; url=https://example.com/next.html"), ("Content-Location", "index.en.html"),
        ("Content-Base", "http://example.com/docs/"), ("Content-Language", "en"), ("Vary", "negotiate,accept-language"),
        ("TCN", "choice"), ("Content-Type", "text/html")]),
    ("200 OK", [   # cookies of every shape
        ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2; Path=/"), ("Set-Cookie", "c=3; Path=/sub/dir/; Domain=example.com"),
        ("Set-Cookie", f"d=4; Expires={LATER}; Path=/file.html"), ("Set-Cookie", "e=5; Max-Age=0; Path=/"),
        ("Set-Cookie", "f=6; Path=/; Secure; HttpOnly; SameSite=Strict"), ("Set-Cookie", 'g="quoted value"; Path=/x'),
        ("Set-Cookie", "h=7; Path=relative/path"), ("Set-Cookie", "i@bad=8"), ("Set-Cookie", "j=9, k=10; Path=/k"),
        ("Set-Cookie", "l=11; Domain=.example.com; Path=/; Max-Age=3600; Secure"),
        ("Set-Cookie", "m=12; Path=http://example.com/abs/"), ("Content-Type", "text/plain")]),
    ("200 OK", [   # source maps
        ("Content-Type", "application/javascript"), ("SourceMap", "/static/js/main.3f2a.js.map"),
        ("X-SourceMap", "https://cdn.example.net/main.js.map"), ("Content-Length", "4521")]),
    ("200 OK", [   # the security headers of a modern site
        ("Content-Security-Policy-Report-Only", "default-src https:; report-uri /csp-report"),
        ("Permissions-Policy", "geolocation=(), camera=()"), ("Referrer-Policy", "strict-origin-when-cross-origin"),
        ("Cross-Origin-Opener-Policy", "same-origin"), ("Cross-Origin-Embedder-Policy", "require-corp"),
        ("X-XSS-Protection", "1; mode=block"), ("Expect-CT", 'max-age=86400, enforce, report-uri="https://r.example.com/ct"'),
        ("Public-Key-Pins", 'pin-sha256="d6qzRu9zOECb90Uez27xWltNsj0e1Md7GkYYkVoZWmM="; max-age=5184000'),
        ("Public-Key-Pins-Report-Only", 'pin-sha256="x"; report-uri="https://r.example.com/hpkp"'),
        ("Clear-Site-Data", '"cache", "cookies", "storage"'), ("Reporting-Endpoints", 'main="https://r.example.com/reports"'),
        ("Content-Type", "text/html")]),
    ("200 OK", [   # encodings
        ("Content-Type", "text/css"), ("Content-Encoding", "br"), ("Content-Length", "3112")]),
    ("200 OK", [("Content-Type", "application/octet-stream"), ("Content-Encoding", "deflate"), ("Content-Length", "77")]),
    ("200 OK", [("Content-Type", "text/plain"), ("Content-Encoding", "x-gzip"), ("Content-Length", "77")]),
    ("200 OK", [("Content-Type", "text/html"), ("Content-Encoding", "identity"), ("Content-Length", "12")]),
    ("401 Unauthorized", [
        ("WWW-Authenticate", 'Basic realm="Restricted", charset="UTF-8"'), ("Content-Type", "text/html"), ("Content-Length", "381")]),
    ("304 Not Modified", [("Date", DATE), ("ETag", '"abc"'), ("Cache-Control", "max-age=600"), ("Expires", LATER)]),
    ("200 OK", [   # HTTP/2-style lower-case names, as a crawler through an h2 proxy may store them
        ("content-type", "text/html; charset=utf-8"), ("content-length", "5120"), ("date", DATE),
        ("strict-transport-security", "max-age=63072000"), ("location", "/ignored-on-200"),
        ("set-cookie", "NID=511=abc; expires=Thu, 12-Sep-2019 17:42:07 GMT; path=/; domain=.google.com; HttpOnly"),
        ("link", '<https://www.gstatic.com/>; rel=preconnect'), ("x-frame-options", "DENY"), ("alt-svc", "clear")]),
    ("200 OK", [   # hop-by-hop and odd lengths
        ("Connection", "keep-alive, Upgrade"), ("Keep-Alive", "timeout=15"), ("Upgrade", "h2c"), ("TE", "trailers"),
        ("Proxy-Connection", "keep-alive"), ("Trailer", "Expires"), ("Content-Length", "100"), ("Content-Length", "100")]),
    ("200 OK", [("Content-Length", "100"), ("Content-Length", "101"), ("Content-Type", "text/plain")]),
    ("200 OK", [("Content-Length", "+12"), ("Content-Type", "text/plain")]),
    ("200 OK", [("Content-Length", "0"), ("Content-Type", "text/html")]),
    ("200 OK", [("Content-Length", "12"), ("Transfer-Encoding", "chunked"), ("Content-Type", "text/html")]),
    ("200 OK", [   # Memento headers of an archived memento (a capture of a web archive)
        ("Memento-Datetime", "Sun, 06 Nov 1994 08:49:37 GMT"),
        ("Link", '<http://example.com/>; rel="original", <http://archive.example/web/timemap/link/http://example.com/>; '
                 'rel="timemap"; type="application/link-format"'),
        ("Content-Type", "text/html")]),
    ("200 OK", [   # service workers and speculation rules
        ("Service-Worker-Allowed", "/"), ("Speculation-Rules", '"/rules/prefetch.json"'), ("Content-Type", "text/javascript")]),
    ("HTTP/1.1 200", [("Content-Type", "text/html"), ("Status", "200 OK"), ("P3P", 'CP="NOI DSP COR"'), ("Tk", "N"),
                      ("Retry-After", "120"), ("Warning", '110 - "Response is Stale"'), ("Content-MD5", "Q2hlY2sgSW50ZWdyaXR5IQ==")]),
]

# Pages (archival URLs) in every mode the rules distinguish, and prefixes: (prefix, full_prefix, rel_prefix).
PAGES = ["20190312174207/http://example.com/a/b.html", "20190312174207mp_/http://example.com/a/b.html",
         "20190312174207id_/http://example.com/a/b.html", "20190312174207js_/http://example.com/static/app.js",
         "20190312174207cs_/http://example.com/s.css", "20190312174207im_/https://example.com/i.png",
         "20190312174207if_/http://example.com/", "20190312174207sw_/https://example.com/sw/worker.js",
         "20190312174207bn_/http://example.com/", "20190312174207wkrf_/http://example.com/w.js",
         "http://example.com/a/b.html", "2019oe_/https://www.example.com:8443/x/y?z=1"]
PREFIXES = [("/warc/", None, None), ("http://localhost:8080/warc/", None, "/warc/"),
            ("/warc/", "https://replay.example:8443/warc/", None), ("https://localhost:8443/pywb/", None, "/pywb/")]
ACCEPTS = [None, "", "gzip, deflate, br", "gzip", "br", "identity", "*", "gzip;q=0, br", "GZIP"]

# --------------------------------------------------------------------------- hypothesis

NAMES = ["Location", "Content-Location", "Content-Base", "Link", "Refresh", "SourceMap", "X-SourceMap", "Set-Cookie",
         "Content-Length", "Content-Encoding", "Transfer-Encoding", "Content-Type", "Date", "Cache-Control", "ETag",
         "Content-Security-Policy", "Strict-Transport-Security", "X-Frame-Options", "Alt-Svc", "Vary", "Keep-Alive",
         "TE", "Proxy-Connection", "Access-Control-Allow-Origin", "NEL", "Report-To", "Clear-Site-Data", "Memento-Datetime",
         "X-Custom", "location", "set-cookie", "content-length", "LINK", "Accept-Ranges", "Content-Range", "Trailer"]
URLS = ["http://example.com/x", "https://other.example/a?b=c#d", "//cdn.example/x.js", "/abs/path", "rel/path.html",
        "../up.html", "../../../../../etc/passwd", "?q=1", "#frag", "", "javascript:void(0)", "data:text/plain,x",
        "http://localhost:8080/warc/2019/http://example.com/", "/warc/2019/http://example.com/", "https://example.com:443/",
        "http://b\u00fccher.de/", "mailto:a@example.com"]
COOKIE_ATTRS = ["Path=/", "Path=/x/", "Path=x", "Domain=.example.com", "domain=example.com", f"Expires={DATE}",
                "expires=Thu, 01-Jan-1970 00:00:01 GMT", "Max-Age=60", "Secure", "HttpOnly", "SameSite=Lax", "Path=../..",
                "Comment=x", "Version=1"]
LINK_PARAMS = ["rel=preload; as=font", "rel=preload; as=script", 'rel="preload"; as="style"', "rel=stylesheet",
               "rel=preconnect", "rel=dns-prefetch", 'rel="next"', "rel=canonical", "rel=alternate; hreflang=de",
               'rel="https://api.w.org/"', "rel=modulepreload", 'rel=preload; as=image; imagesrcset="a.png 1x, b.png 2x"',
               'rel=next; title="a, <b>"', ""]
LENGTHS = ["0", "1", "1234", "+5", " 7", "-1", "abc", "", "\u0661\u0662", "1_0"]
TEXT = st.characters(blacklist_categories=("Cs",))   # no lone surrogates: they cannot reach pywb as JSON
ENCODINGS = ["gzip", "br", "deflate", "identity", "x-gzip", "zstd", "gzip, br", "GZIP", ""]


@st.composite
def cookies(draw) -> str:
    name = draw(st.sampled_from(["a", "sid", "__Host-x", "b@d", "c"]))
    value = draw(st.sampled_from(["1", "v", '"q v"', "x=y", ""]))
    attrs = draw(st.lists(st.sampled_from(COOKIE_ATTRS), max_size=5))
    more = draw(st.sampled_from(["", ", z=2", ", z=2; Path=/z"]))
    return "; ".join([f"{name}={value}"] + attrs) + more


@st.composite
def links(draw) -> str:
    items = draw(st.lists(st.tuples(st.sampled_from(URLS), st.sampled_from(LINK_PARAMS)), min_size=1, max_size=4))
    return ", ".join(f"<{u}>" + (f"; {p}" if p else "") for u, p in items)


@st.composite
def refreshes(draw) -> str:
    delay = draw(st.sampled_from(["0", "5", " 3 ", "1.5", ""]))
    sep = draw(st.sampled_from(["; url=", ";URL=", ", ", " ", "; "]))
    quote = draw(st.sampled_from(["", "'", '"']))
    return f"{delay}{sep}{quote}{draw(st.sampled_from(URLS))}{quote}"


def values_for(name: str) -> st.SearchStrategy[str]:
    low = name.lower()
    if low in ("location", "content-location", "content-base", "sourcemap", "x-sourcemap"):
        return st.sampled_from(URLS)
    if low == "set-cookie":
        return cookies()
    if low == "link":
        return links()
    if low == "refresh":
        return refreshes()
    if low == "content-length":
        return st.sampled_from(LENGTHS)
    if low == "content-encoding":
        return st.sampled_from(ENCODINGS)
    if low == "transfer-encoding":
        return st.sampled_from(["chunked", "gzip, chunked", "identity"])
    return st.sampled_from(["x", "max-age=0", "*", DATE, "default-src 'self'"]) | st.text(TEXT, max_size=12)


fields = st.sampled_from(NAMES).flatmap(lambda n: values_for(n).map(lambda v: (n, v)))
heads = st.tuples(st.sampled_from(["200 OK", "302 Found", "404 Not Found", "206 Partial Content"]),
                  st.lists(fields, max_size=10))
