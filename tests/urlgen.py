"""A deterministic generator of tricky URLs for differential tests of URL keys.

``tricky_urls()`` returns the same list on every run (seeded): a hand-written
list of edge cases, then URLs assembled from pools of awkward parts (schemes,
userinfo, hosts, ports, paths, queries, fragments), then mutants of those
(bytes inserted, case flipped, whitespace and controls sprinkled), plus a few
very long ones.  Most are str; some are bytes, including bytes that are not
UTF-8.  It knows nothing about what the right key is: the oracle decides.
"""

from __future__ import annotations

import random
from typing import List, Union

Url = Union[str, bytes]

SEED = 20240607

SID32 = "0123456789abcdefABCDEF0123456789"  # 32 alphanumerics
SID24 = "abcdefghijklmnopqrstuvwx"  # 24 alphanumerics (letters only)

SCHEMES = [
    "http://", "https://", "HTTP://", "Http://", "hTTpS://", "", "//", "///",
    "ftp://", "FTP://", "dns:", "DNS:", "mailto:", "urn:", "file://", "file:///",
    "http:", "http:/", "http:///", "http:////", "https:", "https:///",
    "http://http://", "http://https://", "https://http://", "http://http://http://",
    "https://https://", "HTTP://http://", "http://HTTP://", "ws://", "wss://",
    "httpfoo://", "httpx:", "a+b.c-d://", "1http://", "+http://", "h:", "x-y:",
    "javascript:", "data:", "about:", "news:", "h\u00e9llo://", "http;//", "http//",
]

USERINFO = [
    "", "", "", "", "user@", "user:pass@", "u@v@", ":@", "@", "us%40er@",
    "user:p%3Ass@", "\u00fc@", "user:@", "a:b:c@", "@@", "user%20name@",
]

HOSTS = [
    "example.com", "example.com", "Example.COM", "www.example.com", "WWW.EXAMPLE.COM",
    "www2.example.com", "www12.example.com", "www.www.example.com", "wwwx.example.com",
    "www-1.example.com", "ww.example.com", "www.", "www", "www1", "www1.", "www..example.com",
    "sub.domain.example.co.uk", "localhost", "a", "a.b", "x.y.z.w.v.u",
    "xn--bcher-kva.example", "XN--BCHER-KVA.example", "b\u00fccher.example", "B\u00dcCHER.example",
    "\u4f8b\u3048.\u30c6\u30b9\u30c8", "\uff25\uff38\uff21\uff2d\uff30\uff2c\uff25.com",
    "example\u3002com", "example\uff0ecom", "\u2603.net", "caf\u00e9.fr", "\u0440\u043e\u0441\u0441\u0438\u044f.\u0440\u0444",
    "xn--.com", "xn--zz.example", "a\u00e9..b", "\u00e9" * 70 + ".com", "\u00e9." * 3,
    "a..b", "..a.b..", ".", "..", "...", "....a", "a.b...", "",
    "%77%77%77.example.com", "ex%41mple.com", "EX%41MPLE.com", "%2e%2e", "%2E.example.com",
    "%C3%BC.example", "%c3%bc.example", "%FF.example", "%FF%FE", "%25", "%2541.com", "%%41.com",
    "%zz.example", "%", "a%20b.com", "a b.com", "a%00b.com", "%0a.com", "ex%2Fample.com",
    "exa%3Ample.com", "exa%40mple.com",
    "127.0.0.1", "2130706433", "017700000001", "0x7f.0.0.1", "0177.0.0.1", "127.1", "127.0.1",
    "1.2.3.4.5", "256.1.1.1", "1.2.3.256", "08.1.2.3", "010.010.010.010", "4294967296",
    "4294967295", "99999999999999999999", "0", "00", "0.0", "0.0.0.0", "255.255.255.255",
    "1.2.3.4%0A", "1.2.3.4%0a.com", "10.08.0.1", "10.010.0.1", "1.0000000000000000000001",
    "0400.1.1.1", "037777777777", "040000000000", "1.16777215", "1.16777216", "1.2.65535",
    "1.2.65536", "0.0xff", "00000000000000000000000000001", "1.2.3.4.", ".1.2.3.4", "1..2.3",
    "1...2", "%31%32%37.0.0.1", "%31.%32.%33.%34", "\uff11\uff12\uff17.0.0.1", "0.0.0.01",
    "[::1]", "[2001:db8::1]", "[2001:DB8::A]", "[fe80::1%25eth0]", "[FE80::1%EtH0]",
    "[::ffff:1.2.3.4]", "[::1", "::1]", "[v1.x]", "[]", "a[b]c", "[a]b[c]", "[::1]x",
    "[[::1]]", "[::1]]", "x]y",
    "a" * 63 + ".com", "a" * 64 + ".com", ("abcdefghij" * 30) + ".com", "-x-.com", "_x_.com",
    "EXAMPLE.com%", "exa\u00admple.com",
]

PORTS = [
    "", "", "", "", "", ":", "::", ":80", ":443", ":8080", ":0", ":00", ":00080",
    ":0000000000000080", ":65535", ":65536", ":99999", ":-1", ":+80", ":abc", ":8o", ":80:90",
    ":\uff18\uff10", ": 80", ":80 ", ":1", ":080", ":0443", ":" + "9" * 30, ":" + "0" * 30 + "1",
]

PATHS = [
    "", "/", "/", "/a/b/c", "/a/b/c/", "/a/./b/../c", "/../a", "/a/..", "/a/../..", "/..",
    "/../../x", "/.", "/./", "/a//b///c", "//a", "///", "/A/B.HTML", "/Index.HTML/",
    "/%7Euser/", "/~user", "/a%2Fb", "/a%252Fb", "/a%2F..%2Fb", "/%2e%2e/a", "/%2E/b",
    "/a/%2e%2e", "/%zz", "/%", "/100%", "/%%", "/%2", "/%25", "/%2525", "/%252525252541",
    "/a b", "/a%20b", "/a+b", "/%00", "/%7F", "/caf%C3%A9", "/caf\u00e9", "/%FF%FE",
    "/%e2%82%ac", "/a#b", "/a?b", "/a%3Fb", "/a%23b", "/a%26b", "/a\\b", "/a;b=c",
    "/a;jsessionid=" + SID32, "/x/y.aspx", "/x/(S(" + SID24 + "))/default.aspx",
    "/(S(" + SID24 + "))/default.aspx", "/x/(a(" + SID24 + ")b(" + SID24 + "))/p.ASPX",
    "/x/(" + SID24 + ")/page.aspx", "/x/(" + SID24 + ")/page.aspx?x",
    "/x/(" + SID24 + ")/a/(" + SID24 + ")/page.aspx", "/x/(" + SID24 + ")/.aspx",
    "/x/(" + SID24 + ")/a.aspx", "/x/(" + SID24.upper() + ")/Page.Aspx/more",
    "/(S(" + SID24 + "))/(" + SID24 + ")/z.aspx", "/x/(S(" + SID24[:-1] + "))/d.aspx",
    "/x/(S(" + SID24 + "))/p%3F.aspx", "/x/(" + SID24 + ")/%3Fq.aspx",
    "/a/b/../../../../c", "/a/./././b", "/a//../b", "/a/b//..//c", "/index.html/",
    "/very/deep/" + "d/" * 40, "/\u00fcber/\u00e4", "/a\tb", "/a\nb", "/%0d%0a",
]

QUERIES = [
    "", "", "", "?", "??", "?a=1", "?b=2&a=1", "?a=1&a=1", "?A=1&a=2", "?a&a=&a=1", "?=x",
    "?&&", "?&", "?a=b=c", "?a=1&", "?&a=1", "?z&y&x&a=", "?B=2&a=1&C=3", "?a=%26b",
    "?q=%23frag", "?q=%25", "?q=%2525", "?q=a+b", "?q=a%20b", "?q=a b", "?Q=UPPER",
    "?x=\u00e9", "?x=%E9", "?x=%zz", "?x=%", "?%3D=1", "?a=1%26b=2", "?a=1;b=2",
    "?jsessionid=" + SID32, "?x=1&jsessionid=" + SID32 + "&y=2", "?JSESSIONID=" + SID32,
    "?jsessionid=" + SID32 + "X", "?jsessionid=" + SID32[:-1], "?a=1&jsessionid=" + SID32,
    "?PHPSESSID=" + SID32 + "&page=2", "?sid=" + SID32, "?xsid=" + SID32 + "&a",
    "?ASPSESSIONIDABCDEFGH=" + "ABCDEFGHIJKLMNOPQRSTUVWX", "?a=1&ASPSESSIONIDQQQQQQQQ=" + SID24 + "&b=2",
    "?cfid=123&cftoken=456", "?x=1&cfid=123&cftoken=456&y=2", "?CFID=1&CFTOKEN=2",
    "?cfid=&cftoken=1", "?cfid=1&cftoken=", "?cfid=1&cftoken=2&cfid=3&cftoken=4",
    "?jsessionid=" + SID32 + "&jsessionid=" + SID32, "?sid=" + SID32 + "&sid=" + SID32 + "&z",
    "?b=%41&a=%61", "?a=\t1", "?%00=1", "?a=1#x", "?" + "&".join(f"k{i % 7}=v{i}" for i in range(40)),
    "?a=1&b", "?b&a=1", "?ab&a=b", "?a=b&ab", "?a=&a", "?\u00e9=1&e=2",
]

FRAGMENTS = ["", "", "", "", "#", "#frag", "#a?b", "#/path", "#%20", "#\u00e9", "##", "#a#b"]

SPRINKLE = [
    "%", "/", ".", "..", "?", "#", "&", "=", ":", "@", "[", "]", "\\", " ", "\t", "\n", "\r",
    "\x0b", "\x0c", "\x00", "\x1f", "\x7f", "\u00e9", "\u3002", "%2", "%25", "%2e", "%2F",
    "%41", "%C3", "%FF", "www.", "http://", "//", ";", "+", "-", "0", "9", "~", "(", ")",
]

EDGE_CASES: List[Url] = [
    "", " ", "   ", "\t", "\n\r\t", "\x0b\x0c", "\x00", "-", "filedesc:x", "filedesc://a.arc",
    " filedesc:x", "FILEDESC:x", "filedes", "http://", "https://", "http://http://",
    "http://https://x", "http:///", "http:////", "http:///www.Example.com:8080/x",
    "http://:80/foo", "http://@/foo", "http://user@:80/foo", "http:foo", "http:", "HTTP:foo",
    "urn:x:y", "urn:ISBN:0-486-27557-4", "mailto:Foo@Bar.com", "dns:www.example.com",
    "dns:WWW.Example.com", "news:comp.lang.python", "ftp://ftp.example.com/pub/",
    "about:blank", "javascript:alert(1)", "data:text/plain,Hello%20World",
    "example.com", "www.example.com/path", "//example.com/x", "/relative/path",
    "?query=only", "#fragment-only", "x", "1", "1.2.3.4", "http://[::1]:80/",
    "http://[::1]abc:80/", "http://a[b]:80/", "http://x/?", "http://x/#?", "http://x?",
    "http://x/a?b&a=&a", "http://x:0/", "ftp://x:0/", "http://x:0080/", "https://x:443/",
    "HTTPS://x:443/", "https://x:80/", "http://x:443/", "http://x:65536/", "http://x:/",
    "http://x::/", "http://x:::80/", "http://www./", "http://www/", "http://www1.x/",
    "http://%77ww.example.com/", "http://4294967297/", "http://0x7f.1/",
    "http://example.com/" + "a" * 5000, "http://" + "a." * 2000 + "com/",
    "http://x/?" + "&".join(f"p{i}=v{i}" for i in range(500)),
    "http://x/?" + "&" * 300, "http://x/" + "%25" * 500 + "41", "http://x/" + "../" * 300,
    "http://x/" + "/(" + SID24 + ")" * 50 + "/a.aspx", "http://x/?" + "cfid=" * 200,
    "http://" + "1" * 4300 + "/", "http://" + "1" * 4301 + "/", "http://" + "0" * 4301 + "/",
    "http://x:" + "0" * 4299 + "80/", "http://x:" + "0" * 4301 + "80/",
    b"http://a\xff.b..c/", b"http://\xff\xfe.com/", b"http://ex\xc3\xa9.com/\xff?\xfe=\xfd",
    b"http://x/\x80", b"\xffhttp://x/", b"http://x\xc3/", b"http://\xe2\x82.com/",
    b"http://%C3%A9x%FF.com/", b"http://\xed\xa0\x80.com/",
]


def _assemble(rng: random.Random) -> str:
    scheme = rng.choice(SCHEMES)
    parts = [scheme]
    if rng.random() < 0.9:
        parts.append(rng.choice(USERINFO))
        parts.append(rng.choice(HOSTS))
        parts.append(rng.choice(PORTS))
    parts.append(rng.choice(PATHS))
    parts.append(rng.choice(QUERIES))
    parts.append(rng.choice(FRAGMENTS))
    return "".join(parts)


def _mutate(rng: random.Random, url: str) -> str:
    chars = list(url)
    for _ in range(rng.randint(1, 4)):
        op = rng.random()
        pos = rng.randint(0, len(chars))
        if op < 0.5:
            chars[pos:pos] = list(rng.choice(SPRINKLE))
        elif op < 0.7 and chars:
            del chars[min(pos, len(chars) - 1)]
        elif op < 0.85:
            chars = [c.swapcase() if rng.random() < 0.3 else c for c in chars]
        else:
            ws = rng.choice([" ", "\t", "\n", "\r", "\x0b", "\x0c", "  \t"])
            chars = list(ws) + chars + list(rng.choice([" ", "\n", "", "\r\n"]))
    return "".join(chars)


def _to_bytes(rng: random.Random, url: str) -> bytes:
    b = url.encode("utf-8", "surrogatepass")
    if rng.random() < 0.5:
        pos = rng.randint(0, len(b))
        b = b[:pos] + bytes([rng.choice([0x80, 0xC3, 0xE2, 0xFF, 0xFE, 0xED])]) + b[pos:]
    return b


def tricky_urls(count: int = 12000, seed: int = SEED) -> List[Url]:
    """``count`` generated URLs after the fixed edge cases; the same list for the same arguments."""
    rng = random.Random(seed)
    out: List[Url] = list(EDGE_CASES)
    # every host, port, path and query at least once, in a plain setting
    for host in HOSTS:
        out.append("http://" + host + "/")
    for port in PORTS:
        out.append("http://example.com" + port + "/p")
    for path in PATHS:
        out.append("http://example.com" + path)
    for query in QUERIES:
        out.append("http://example.com/p" + query)
    for scheme in SCHEMES:
        out.append(scheme + "www.Example.com/A?b=1")
    while len(out) < len(EDGE_CASES) + count:
        url = _assemble(rng)
        r = rng.random()
        if r < 0.35:
            url = _mutate(rng, url)
        if rng.random() < 0.1:
            out.append(_to_bytes(rng, url))
        else:
            out.append(url)
    return out


if __name__ == "__main__":  # pragma: no cover - a look at the corpus
    for u in tricky_urls(50):
        print(repr(u))
