"""Unit tests of warchive.surt: each rule of the key on its own, the Python
API (types, errors, batches), the C core's buffer contract, and pywb's
canonicalize/unsurt.

Expected keys come from the `surt` package (the oracle), never from our own
output; the URLs below avoid hosts that would make surt ask DNS.
"""

from __future__ import annotations

import random
import re
import threading
from pathlib import Path

import pytest
import surt as surt_pkg
from surt.GoogleURLCanonicalizer import unescapeRepeatedly
from urllib.parse import SplitResultBytes

import urlgen
from warchive import surt as ws
from warchive._ext import surt as kernel
from warchive.errors import ArchiveError, UrlError

DOCS = Path(__file__).resolve().parents[2] / "docs" / "format.md"

# One URL per rule (or corner of a rule) of docs/format.md, "How a key is made".
RULES = {
    "plain": "http://example.com/",
    "whitespace stripped, tab/newline removed": " \thttp://exa\nmple.com/a\rb \x0c",
    "vertical tab stripped but not removed inside": "\x0bhttp://ex\x0bample.com/\x0b",
    "no scheme": "example.com/path",
    "scheme kept as written when hostless": "MailTo:Someone@Example.COM",
    "repeated schemes": "http://https://http://example.com/",
    "repeated schemes, case-sensitive": "HTTP://http://example.com/",
    "fragment dropped": "http://example.com/a#frag?x",
    "empty query dropped": "http://example.com/a?",
    "query without path": "http://example.com?b=1",
    "userinfo dropped": "http://user:pass@www.example.com/",
    "last @ wins": "http://a@b@example.com/",
    "trailing colons": "http://example.com:::/",
    "port 0": "http://example.com:0/",
    "port with zeros": "http://example.com:0080/",
    "default https port, scheme case": "HTTPS://example.com:443/",
    "http port on https": "https://example.com:80/",
    "ftp keeps its port": "ftp://example.com:21/",
    "host lowercased up to %": "http://EXAMPLE.com%41B/",
    "IPv6": "http://[2001:DB8::1]:8080/",
    "IPv6 zone": "http://[FE80::1%25EtH0]/",
    "junk after ]": "http://[::1]abc:81/",
    "no ]": "http://[::1/",
    "http branch": "http:///www.Example.com:8080/x",
    "http branch, no netloc": "http:example.com/a",
    "http branch, empty netloc host": "http://:80/foo",
    "http branch only slashes": "http:////",
    "https branch": "https:///example.com",
    "not http: no branch": "ftp:///example.com/x",
    "host unescaped repeatedly": "http://%2577ww.example.com/",
    "IDN unicode": "http://B\u00fccher.example/",
    "IDN punycode": "http://xn--bcher-kva.example/",
    "IDN escaped": "http://%C3%BC.example/",
    "IDN fails: raw bytes escaped": "http://\u00fc\u00fc.a..b/",
    "IDN label too long": "http://" + "\u00e9" * 70 + ".com/",
    "ideographic full stop": "http://example\u3002com/",
    "double dots": "http://a...b..c/",
    "leading/trailing dots": "http://..example.com../",
    "only dots": "http://.../x/../y",
    "all digits": "http://2130706433/",
    "all digits over 32 bits": "http://4294967297/",
    "octal": "http://0177.0.0.1/",
    "short form": "http://127.1/",
    "three parts": "http://10.1.258/",
    "hex is a name": "http://0x7f.0.0.1/",
    "five parts is a name": "http://1.2.3.4.5/",
    "www stripped": "http://www.example.com/",
    "www digits stripped": "http://www42.example.com/",
    "wwwx kept": "http://wwwx.example.com/",
    "www only once": "http://www.www.example.com/",
    "dns: keeps www": "dns:www.example.com",
    "DNS: massaged": "DNS://www.example.com/",
    "path dot segments": "http://example.com/a/./b/../../c/./d",
    "path .. above root": "http://example.com/../../a",
    "path .. pops an empty segment": "http://example.com/a//../b",
    "path repeated slashes": "http://example.com//a///b//",
    "path escaped slash": "http://example.com/a%2Fb/%2e%2e/c",
    "path percent kept": "http://example.com/100%/%zz",
    "path lowercased, escapes lowercase": "http://example.com/A/%7e/\u00c9",
    "path trailing slash": "http://example.com/a/b/",
    "path without host not normalized": "urn:a/./b/../c",
    "aspx session (S(...))": "http://example.com/x/(S(abcdefghijklmnopqrstuvwx))/default.aspx",
    "aspx session (...)": "http://example.com/x/(abcdefghijklmnopqrstuvwx)/page.aspx",
    "aspx session, rightmost": "http://example.com/(abcdefghijklmnopqrstuvwx)/(abcdefghijklmnopqrstuvwx)/p.aspx",
    "aspx session needs .aspx before ?": "http://example.com/x/(abcdefghijklmnopqrstuvwx)/%3F.aspx",
    "aspx session not at segment start": "http://example.com/x/(abcdefghijklmnopqrstuvwx)/.aspx",
    "query reorder": "http://example.com/?b=2&a=1&c",
    "query tuple order": "http://example.com/?a=1&a&ab&a=",
    "query duplicates": "http://example.com/?a=1&a=1&A=1",
    "query = in value": "http://example.com/?a=b=c&a=b",
    "query empty args": "http://example.com/?&&b&",
    "query escapes": "http://example.com/?q=%2525%23x&s=a%20b&t=\u00e9",
    "jsessionid": "http://example.com/?x=1&JSESSIONID=0123456789abcdef0123456789ABCDEF&y=2",
    "jsessionid at end": "http://example.com/?x=1&jsessionid=0123456789abcdef0123456789ABCDEF",
    "jsessionid too long": "http://example.com/?jsessionid=0123456789abcdef0123456789ABCDEFa",
    "phpsessid": "http://example.com/?PHPSESSID=0123456789abcdef0123456789ABCDEF&p=1",
    "sid": "http://example.com/?sid=0123456789abcdef0123456789ABCDEF",
    "aspsessionid": "http://example.com/?ASPSESSIONIDQQQQQQQQ=ABCDEFGHIJKLMNOPQRSTUVWX&z=1",
    "cfid/cftoken": "http://example.com/?a=1&CFID=123&CFTOKEN=abc&b=2",
    "only a session id": "http://example.com/p?sid=0123456789abcdef0123456789ABCDEF",
    "long path": "http://example.com/" + "abc/" * 3000,
    "long query": "http://example.com/?" + "&".join(f"k{i % 13}={i}" for i in range(2000)),
    "long URL with IDN host": "http://b\u00fccher.example/" + "x" * 20000,
}


@pytest.mark.parametrize("url", list(RULES.values()), ids=list(RULES))
def test_rule_matches_package(url):
    assert ws.surt(url) == surt_pkg.surt(url)
    raw = url.encode("utf-8")
    assert ws.surt(raw) == surt_pkg.surt(raw)


def test_docs_examples_are_the_packages_keys():
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("## SURT keys", 1)[1].split("\n## ", 1)[0]
    pairs = re.findall(r"^(\S+)\n  -> (\S+)$", section, flags=re.M)
    assert len(pairs) >= 8
    for url, key in pairs:
        assert surt_pkg.surt(url) == key, url
        assert ws.surt(url) == key, url


# --------------------------------------------------------------------------- the Python API

def test_types_follow_the_argument():
    assert ws.surt("http://Example.com/") == "com,example)/"
    assert ws.surt(b"http://Example.com/") == b"com,example)/"
    assert type(ws.surt("http://example.com/")) is str
    assert type(ws.surt(b"http://example.com/")) is bytes


def test_missing_and_empty_urls():
    assert ws.surt(None) == surt_pkg.surt(None) == "-"
    assert ws.surt("") == surt_pkg.surt("") == "-"
    assert ws.surt(b"") == surt_pkg.surt(b"") == b"-"


def test_filedesc_passthrough():
    for url in ["filedesc://x.arc 0.0.0.0 2020 text/plain 76", b"filedesc:Y", "filedesc\u00e9"]:
        assert ws.surt(url) == surt_pkg.surt(url) == url
    assert ws.surt(" filedesc:x") == surt_pkg.surt(" filedesc:x") != " filedesc:x"


@pytest.mark.parametrize("url", [
    "   ", "\t\n", b" \r\n", "http://example.com:abc/", "http://example.com:65536/",
    "http://example.com:-1/", "http://example.com:8o/", "http://example.com::80/",
    "http://example.com:\uff18\uff10/", "http://[::1]:x/", "http://" + "1" * 4301 + "/",
    "http://example.com:" + "0" * 4301 + "/", "http://\ud800.com/",
])
def test_where_the_package_raises(url):
    with pytest.raises(Exception):
        surt_pkg.surt(url)
    with pytest.raises(UrlError) as info:
        ws.surt(url)
    assert isinstance(info.value, ValueError) and isinstance(info.value, ArchiveError)
    assert ws.surt_or_url(url) is url


def test_digit_limits_are_pythons_default():
    assert ws.surt("http://" + "0" * 4299 + "1/") == surt_pkg.surt("http://" + "0" * 4299 + "1/")
    assert ws.surt("http://x:" + "0" * 4298 + "80/") == surt_pkg.surt("http://x:" + "0" * 4298 + "80/")


def test_other_argument_types():
    for bad in (1, 1.5, bytearray(b"http://x/"), ["http://x/"]):
        with pytest.raises(TypeError):
            ws.surt(bad)
        with pytest.raises(TypeError):
            ws.surt_many([bad])


def test_surt_many():
    urls = ["http://www.Example.com/", b"http://b.example/", None, "", "filedesc:z",
            "http://B\u00fccher.example/?b&a", "http://x:99999/"]
    want = [surt_pkg.surt(u) for u in urls[:-1]]
    assert ws.surt_many(urls[:-1]) == want
    assert [type(k) for k in ws.surt_many(urls[:-1])] == [type(k) for k in want]
    assert ws.surt_many(urls, or_url=True) == want + [urls[-1]]
    with pytest.raises(UrlError):
        ws.surt_many(urls)
    assert ws.surt_many([]) == []
    assert ws.surt_many(iter(["http://a.example/"])) == ["example,a)/"]
    with pytest.raises(TypeError):
        ws.surt_many(5)


def test_surt_many_across_chunks_and_buffer_sizes():
    # more than one chunk (4096), with a URL too long for the shared buffer in the middle
    urls = [f"http://www.h{i % 97}.example/p/{i}?z={i}&a=1" for i in range(9000)]
    urls[5000] = "http://example.com/" + "q" * 30000
    urls[8999] = "http://" + "\u00e9" * 3 + ".example/" + "r" * 9000
    assert ws.surt_many(urls) == [surt_pkg.surt(u) for u in urls]


def test_surt_many_in_threads():
    urls = [u for u in urlgen.tricky_urls(3000, seed=5) if isinstance(u, str)]
    want = ws.surt_many(urls, or_url=True)
    got = {}

    def work(k):
        got[k] = ws.surt_many(urls, or_url=True)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 4 and all(g == want for g in got.values())


# --------------------------------------------------------------------------- the C contract

def test_c_core_statuses():
    rc, key = kernel._raw_key(b"http://www.example.com/", kernel._cap(23, 0))
    assert (rc, key) == (kernel.OK, b"com,example)/")
    rc, key = kernel._raw_key(b"  \t ", kernel._cap(4, 0))
    assert (rc, key) == (kernel.FAIL, b"")
    netloc = "%C3%BCber.B\u00dcCHER.example:81".encode()
    url = b"http://" + netloc + b"/"
    rc, host = kernel._raw_key(url, kernel._cap(len(url), 0))
    assert rc == kernel.NEED_IDNA
    # the bytes surt's IDNA step sees: urllib's hostname (lowered up to the first '%'), unescaped
    hostname = SplitResultBytes(b"http", netloc, b"/", b"", b"").hostname
    assert host == unescapeRepeatedly(hostname) and b"B" in host
    idna = host.decode("utf-8", "ignore").encode("idna")
    rc, key = kernel._raw_key(url, kernel._cap(len(url), len(idna)), idna)
    assert rc == kernel.OK and key == surt_pkg.surt(url)


def test_c_core_asks_for_its_bound():
    url = b"http://example.com/" + b"%25" * 40 + b"?" + b"&" * 40
    need = kernel._cap(len(url), 0)
    assert need == 11 * len(url) + 256
    assert kernel._raw_key(url, need - 1) == (kernel.SMALL, b"")
    assert kernel._raw_key(url, need)[0] == kernel.OK
    assert kernel._raw_key(b"", 255) == (kernel.SMALL, b"")


def test_c_core_stays_in_its_buffer():
    # _raw_key puts a guard zone right after `cap` bytes and raises if it was touched.
    for url in urlgen.tricky_urls(4000, seed=11):
        raw = url if isinstance(url, bytes) else url.encode("utf-8", "surrogatepass")
        rc, out = kernel._raw_key(raw, kernel._cap(len(raw), 0))
        if rc == kernel.NEED_IDNA:
            try:
                idna = out.decode("utf-8", "ignore").encode("idna")
            except ValueError:
                idna = out
            rc, out = kernel._raw_key(raw, kernel._cap(len(raw), len(idna)), idna)
        assert rc in (kernel.OK, kernel.FAIL)
        if rc == kernel.OK and not raw.startswith(b"filedesc"):
            assert out.isascii()


# --------------------------------------------------------------------------- pywb's canonicalize / unsurt

def test_canonicalize_as_pywb():
    # pywb.utils.canonicalize doctests
    assert ws.canonicalize("http://example.com/path/file.html", surt_ordered=True) == "com,example)/path/file.html"
    assert ws.canonicalize("http://example.com/path/file.html", surt_ordered=False) == "example.com/path/file.html"
    assert ws.canonicalize("urn:some:id") == "urn:some:id"


def test_canonicalize_is_the_surt_key():
    for url in ["http://www.Example.com:80/a/../B?y=1&x=2#f", "HTTPS://b\u00fccher.example/",
                "dns:www.example.com", b"http://example.com/\xff"]:
        assert ws.canonicalize(url) == surt_pkg.surt(url)


def test_canonicalize_failures():
    # surt raises; a urn: is its own key, anything else is a bad request
    assert ws.canonicalize("urn://x:abc/y") == "urn://x:abc/y"
    assert ws.canonicalize(b"urn://x:abc/y") == b"urn://x:abc/y"
    with pytest.raises(UrlError, match="Invalid Url"):
        ws.canonicalize("http://example.com:abc/")
    with pytest.raises(UrlError):
        ws.canonicalize("URN://x:abc/y")   # pywb's test is case-sensitive


def test_unsurt_as_pywb():
    assert ws.unsurt("com,example)/") == "example.com/"
    assert ws.unsurt("com,example)") == "com,example)"           # broken surt: left alone
    assert (ws.unsurt("suffix,domain,sub,subsub,another,subdomain)/path/file/index.html?a=b?c=)/")
            == "subdomain.another.subsub.sub.domain.suffix/path/file/index.html?a=b?c=)/")
    assert ws.unsurt(b"org,example,www)/a?b=c") == b"www.example.org/a?b=c"


def test_canonicalize_unsurted_forms():
    assert ws.canonicalize("http://www.Example.co.uk/A/?b=2&a=1", surt_ordered=False) == \
        "example.co.uk/a?a=1&b=2"
    # pywb only splits the host part at ',', so a port stays on the label it follows
    assert ws.canonicalize("http://www.Example.co.uk:8080/A", surt_ordered=False) == \
        "example:8080.co.uk/a"
    assert ws.canonicalize("http://[::1]:81/x", surt_ordered=False) == "::1:81/x"
    # hostless keys have no ")/" and stay as they are
    assert ws.canonicalize("mailto:A@B.example", surt_ordered=False) == "mailto:a@b.example"


# --------------------------------------------------------------------------- options (test_surt_options_vs_surt.py has the rest)

def test_docs_option_examples_are_the_packages_keys():
    text = DOCS.read_text(encoding="utf-8")
    section = text.split("### SURT options", 1)[1].split("\n## ", 1)[0]
    triples = re.findall(r"^(\S+)  +(\S+)\n  -> (\S+)$", section, flags=re.M)
    assert len(triples) >= 6
    for url, names, key in triples:
        opts = ws.parse_options(names)
        assert surt_pkg.surt(url, **opts) == key, (url, names)
        assert ws.surt(url, **opts) == key, (url, names)


def test_parse_options():
    assert ws.parse_options("") == {}
    assert ws.parse_options("with_scheme,trailing_comma") == {"with_scheme": True, "trailing_comma": True}
    assert ws.parse_options(" host_massage=false , surt=TRUE,query_lowercase=0,") == \
        {"host_massage": False, "surt": True, "query_lowercase": False}
    assert ws.parse_options("public_suffix=no") == {"public_suffix": False}
    for bad, what in (("with_schme", "with_schme"), ("surt=maybe", "maybe"), ("=1", "''"),
                      ("public_suffix", "public_suffix")):
        with pytest.raises(ValueError, match=what):
            ws.parse_options(bad)


def test_c_core_stays_in_its_buffer_with_options():
    # with_scheme and trailing_comma make keys longer than the default: the bound still holds
    rng = random.Random(17)
    masks = [kernel.surt_flags(**{n: True for n in ws.OPTIONS if n != "public_suffix"}),
             kernel.surt_flags(with_scheme=True, trailing_comma=True, query_strip_empty=False),
             kernel.surt_flags(surt=False, with_scheme=True)]
    for url in urlgen.tricky_urls(2000, seed=23):
        raw = url if isinstance(url, bytes) else url.encode("utf-8", "surrogatepass")
        flags = rng.choice(masks + [rng.getrandbits(16)])   # bits past the options are ignored
        idna = b""
        rc, out = kernel._raw_key(raw, kernel._cap(len(raw), 0), None, flags)
        if rc == kernel.NEED_IDNA:
            try:
                idna = out.decode("utf-8", "ignore").encode("idna")
            except ValueError:
                idna = out
            rc, out = kernel._raw_key(raw, kernel._cap(len(raw), len(idna)), idna, flags)
        assert rc in (kernel.OK, kernel.FAIL)
        if rc == kernel.OK and not raw.startswith(b"filedesc"):
            assert out.isascii()
            assert len(out) < 3 * len(raw) + 3 * len(idna) + 40     # wa_surt.h's bound of a key


def test_the_fast_call_is_the_plain_call():
    # surt and surt_or_url take one positional URL without argument parsing; every other
    # call goes through the def with Python's argument binding
    import inspect

    assert str(inspect.signature(ws.surt)) == "(url, canonicalizer=None, **options)"
    assert ws.surt.__name__ == "surt" and ws.surt.__module__ == "warchive._ext.surt"
    url = "http://www.Example.com/A?b&a"
    assert ws.surt(url) == ws.surt(url, None) == ws.surt(url=url) == ws.surt(url, canonicalizer=None) == \
        surt_pkg.surt(url)
    assert ws.surt_or_url(url=b"http://x:99999/") == b"http://x:99999/"
    with pytest.raises(TypeError, match="positional"):
        ws.surt()
    with pytest.raises(TypeError):
        ws.surt(url, None, None)
    with pytest.raises(TypeError):
        ws.surt(url, canonicalizer=None, url=url)
