"""The CDX API query cases that warchive's query engine is compared on against pywb 2.10.

Each case is a dict of query parameters with the rule of docs/cdx-api.md it
exercises (``R<n>``), the index it runs on, and what pywb must answer at
least (status, empty or not), so that a case that stops meaning anything is
noticed (tests/unit/test_pywb_oracle.py runs them all through pywb).

The indexes (``build_indexes``) are made here, never committed:

``wget``
    both committed Wget crawls (tests/data/wget, 1,120 lines: 557 originals,
    556 revisits a few seconds later, resources and metadata), by
    ``python -m warchive index --sort``.
``timeline``
    ``timeline.warc.gz`` written below: one host family (example.com and its
    subdomains, www., https, a port) with captures spread over 2019-2022 at
    chosen seconds, identical digests, revisits before and after their
    originals, a URL-agnostic revisit, statuses 200/301/302/404/500 -- what
    from/to padding, closest, collapseTime, collapse, filters, matchType
    ranges and resolveRevisits need.
``revisits``
    warcgen's ``revisits`` set (every kind of revisit record at one timestamp).
``timeline_cdx11``
    ``timeline`` again as 11-field CDX (``--cdx11``), for merging CDX with CDXJ.
``zipnum``
    a ZipNum cluster (``.idx`` + ``.loc`` + two gzip shards, 16 lines a block)
    of wget + timeline, laid out as pywb and Common Crawl lay them out.

This module does not import warchive: the indexes come from its command line.
"""

from __future__ import annotations

import gzip
import io
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from warcio.statusandheaders import StatusAndHeaders

TESTS = Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))

import warcgen  # noqa: E402

WGET_DIR = TESTS / "data" / "wget"


# --------------------------------------------------------------------------- the timeline fixture

def _html(text: str) -> bytes:
    return f"<!doctype html>\n<html><body><p>{text}</p></body></html>\n".encode()


BODY_A = _html("version A")
BODY_B = _html("version B")


def _resp(name: str, uri: str, date: str, status: str = "200 OK", body: bytes = b"",
          ctype: Optional[str] = "text/html; charset=utf-8", extra_headers: Sequence = ()) -> warcgen.Rec:
    headers = ([("Content-Type", ctype)] if ctype else []) + list(extra_headers) + \
              [("Content-Length", str(len(body)))]
    return warcgen.w_http("response", "tl/" + name, uri, "HTTP/1.1", status, headers, body, date=date)


def _revisit(name: str, uri: str, date: str, body_of_original: bytes, refers_uri: str, refers_date: str,
             status: str = "200 OK") -> warcgen.Rec:
    digest = warcgen.sha1_b32(body_of_original)
    hdrs = [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body_of_original)))]

    def make(w):
        http = StatusAndHeaders(status, list(hdrs), protocol="HTTP/1.1")
        return w.create_revisit_record(uri, digest, refers_uri, refers_date, http_headers=http,
                                       warc_headers_dict=warcgen._wh("revisit", "tl/" + name, uri, date))
    return warcgen.Rec("revisit", uri, make=make)


def recs_timeline() -> list:
    """Captures of the example.com family at chosen times (see the module docstring)."""
    root, www, https = "http://example.com/", "http://www.example.com/", "https://example.com/"
    return [
        warcgen.warcinfo("tl/info", "timeline.warc.gz"),
        # http://example.com/: ten captures (with www. and https: the same SURT key)
        _resp("root-2019", root, "2019-03-04T05:06:07Z", body=BODY_A),
        _resp("root-2020a", root, "2020-01-01T00:00:00Z", body=BODY_B),
        _resp("root-https", https, "2020-01-01T00:00:00Z", body=_html("secure")),      # same key and second
        _resp("root-2020b", root, "2020-01-01T00:00:30Z", body=BODY_B),                 # same digest, not a revisit
        _resp("root-302", root, "2020-01-01T00:59:59Z", "302 Found", b"",
              extra_headers=[("Location", "http://example.com/home")]),
        _resp("root-www", www, "2020-03-01T00:00:00Z", body=_html("www")),
        _revisit("root-rv", root, "2020-06-15T12:00:00Z", BODY_B, root, "2020-01-01T00:00:00Z"),
        _resp("root-404", root, "2021-12-31T23:59:59Z", "404 Not Found", _html("gone")),
        _resp("root-2022", root, "2022-02-28T10:00:00Z", body=BODY_A),                  # digest of 2019 again
        _resp("root-500", root, "2022-02-28T10:30:00Z", "500 Internal Server Error", _html("oops")),
        # the path tree: prefix ranges with and without a trailing slash
        _resp("path-slash", "http://example.com/path/", "2020-07-07T07:07:07Z", body=_html("path/")),
        _resp("path-sub", "http://example.com/path/sub/a.html", "2020-07-08T08:08:08Z", body=_html("a")),
        _resp("path2", "http://example.com/path2", "2020-07-09T09:09:09Z", body=_html("path2")),
        _resp("path-q", "http://example.com/path?q=1", "2020-07-10T10:10:10Z", body=_html("path?q")),
        # queries: canonical argument order, fuzzy-matchable cache busters and versions
        _resp("page-args", "http://example.com/page?b=2&a=1", "2020-05-05T05:05:05Z", body=_html("args")),
        _resp("page-html", "http://example.com/page.html", "2020-05-05T05:05:06Z", body=_html("page")),
        _resp("page-bust", "http://example.com/page.html?_=1600000000000", "2020-05-05T05:05:07Z",
              body=_html("busted")),
        _resp("script", "http://example.com/script.js?v=42", "2020-05-06T00:00:00Z", body=b"var v = 42;\n",
              ctype="application/javascript"),
        _resp("api", "http://example.com/api/data.json", "2020-05-07T00:00:00Z", body=b'{"a": 1}\n',
              ctype="application/json"),
        _resp("img", "http://example.com/img.png", "2020-02-02T02:02:02Z", body=warcgen.png_1x1(), ctype="image/png"),
        _resp("moved", "http://example.com/old", "2020-04-04T04:04:04Z", "301 Moved Permanently", b"",
              extra_headers=[("Location", "http://example.com/new")]),
        _resp("cafe", "http://example.com/caf%C3%A9", "2020-04-05T00:00:00Z", body=_html("cafe")),
        # what pywb's own rules.yaml test rule (prefix com,example)/matched) rewrites "matched" to
        _resp("replaced", "http://example.com/replaced.html", "2020-04-06T00:00:00Z", body=_html("replaced")),
        _resp("replaced-bak", "http://example.com/replaced.html.bak", "2020-04-06T00:00:01Z",
              body=_html("replaced bak")),
        # a revisit older than its original: nothing to join it to
        _revisit("late-rv", "http://example.com/late", "2019-01-01T00:00:00Z", _html("late"),
                 "http://example.com/late", "2019-06-01T00:00:00Z"),
        _resp("late", "http://example.com/late", "2019-06-01T00:00:00Z", body=_html("late")),
        # other hosts of the domain, a port, and neighbours outside it
        _resp("sub", "http://sub.example.com/x", "2020-08-08T08:08:08Z", body=_html("sub")),
        _resp("deep", "http://deep.sub.example.com/y", "2020-08-09T09:09:09Z", body=_html("deep")),
        _revisit("mirror-rv", "http://mirror.example.com/copy", "2021-01-01T00:00:00Z", BODY_B,
                 root, "2020-01-01T00:00:00Z"),                                              # URL-agnostic
        _resp("port", "http://example.com:8080/port", "2020-09-09T09:09:09Z", body=_html("port")),
        _resp("org", "http://example.org/", "2020-10-10T10:10:10Z", body=_html("org")),
        _resp("dash", "http://example-shop.com/", "2020-10-11T10:10:10Z", body=_html("dash")),
        _resp("longer", "http://examples.com/", "2020-10-12T10:10:10Z", body=_html("examples")),
    ]


def write_timeline(directory) -> Path:
    return warcgen.write_warc(directory, "timeline", recs_timeline()).path


def recs_merge() -> list:
    """A second, small archive to merge with ``timeline``: a key that sorts before
    ``com,example)/page.html`` bytewise but after it as JSON text (``!`` < ``"``),
    a capture at the same key and second as two of timeline's, and one capture
    of a page timeline only has in other versions."""
    return [
        warcgen.warcinfo("mg/info", "merge.warc.gz"),
        _resp("mg-bang", "http://example.com/page.html!", "2020-05-05T05:05:06Z", body=_html("bang")),
        _resp("mg-root", "http://example.com/", "2020-01-01T00:00:00Z", body=_html("merge root"),
              ctype="text/plain"),
        _resp("mg-root-2023", "http://example.com/", "2023-03-03T03:03:03Z", body=BODY_B),
    ]


def write_merge(directory) -> Path:
    return warcgen.write_warc(directory, "merge", recs_merge()).path


# --------------------------------------------------------------------------- ZipNum

def write_zipnum(lines: Sequence[bytes], directory, name: str, lines_per_block: int = 16,
                 shards: int = 2) -> Path:
    """A ZipNum cluster of sorted ``lines`` (without line feeds), as pywb reads it.

    ``NAME-NN.cdx.gz``: each block of ``lines_per_block`` lines is one gzip
    member; blocks are dealt to ``shards`` shard files in order (the first
    shard gets the first blocks). ``NAME.idx``: one line a block,
    ``<urlkey> <timestamp>`` of its first line, TAB, part name, TAB, offset,
    TAB, compressed length, TAB, block number counted from 1. ``NAME.loc``:
    ``part<TAB>path`` (relative to the .loc). Returns the .idx path.
    """
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    blocks = [lines[i:i + lines_per_block] for i in range(0, len(lines), lines_per_block)]
    per_shard = -(-len(blocks) // shards)
    idx, loc = [], []
    n = 0
    for s in range(shards):
        part = f"{name}-{s:02d}"
        path = directory / f"{part}.cdx.gz"
        offset = 0
        with open(path, "wb") as fh:
            for block in blocks[s * per_shard:(s + 1) * per_shard]:
                member = gzip.compress(b"".join(line + b"\n" for line in block), 6, mtime=0)
                fh.write(member)
                n += 1
                key = b" ".join(block[0].split(b" ", 2)[:2])
                idx.append(b"%s\t%s\t%d\t%d\t%d\n" % (key, part.encode(), offset, len(member), n))
                offset += len(member)
        loc.append(f"{part}\t{path.name}\n")
    (directory / f"{name}.idx").write_bytes(b"".join(idx))
    (directory / f"{name}.loc").write_text("".join(loc))
    return directory / f"{name}.idx"


# --------------------------------------------------------------------------- building the indexes

def warchive_index(inputs: Sequence, out: Path, *args: str) -> Path:
    """``python -m warchive index --sort ARGS INPUTS -o OUT`` (the interpreter running the tests)."""
    cmd = [sys.executable, "-m", "warchive", "index", "--sort", *args, *map(str, inputs), "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, timeout=300)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr.decode(errors='replace')}")
    return out


def build_indexes(directory) -> Dict[str, Path]:
    """Write every index the cases use into ``directory``; returns {name: path} (see the docstring)."""
    d = Path(directory)
    warcs = d / "warcs"
    warcs.mkdir(parents=True, exist_ok=True)
    timeline = write_timeline(warcs)
    ix = {
        "wget": warchive_index(sorted(WGET_DIR.glob("*.warc.gz")), d / "wget.cdxj"),
        "timeline": warchive_index([timeline], d / "timeline.cdxj"),
        "revisits": warchive_index([warcgen.write_revisits(warcs).path], d / "revisits.cdxj"),
        "unicode": warchive_index([warcgen.write_unicode_urls(warcs).path], d / "unicode.cdxj"),
        "merge": warchive_index([write_merge(warcs)], d / "merge.cdxj"),
        "timeline_cdx11": warchive_index([timeline], d / "timeline.cdx", "--cdx11"),
        "wget_first": warchive_index([WGET_DIR / "docs-python-3.11.warc.gz"], d / "wget-first.cdxj"),
        "wget_recrawl": warchive_index([WGET_DIR / "docs-python-3.11-recrawl.warc.gz"], d / "wget-recrawl.cdxj"),
    }
    ix["timeline_copy"] = d / "timeline-copy.cdxj"
    ix["timeline_copy"].write_bytes(ix["timeline"].read_bytes())
    lines = sorted(set(ix["wget"].read_bytes().splitlines() + ix["timeline"].read_bytes().splitlines()))
    ix["zipnum"] = write_zipnum(lines, d / "zipnum", "cluster")
    return ix


# --------------------------------------------------------------------------- the cases

# Which indexes a case runs on (several: pywb merges them, R9).
SOURCE_SETS: Dict[str, List[str]] = {
    "wget": ["wget"],
    "timeline": ["timeline"],
    "revisits": ["revisits"],
    "unicode": ["unicode"],
    "cdx11": ["timeline_cdx11"],
    "merged": ["timeline", "merge", "revisits"],        # several CDXJ files
    "mixed": ["timeline", "timeline_cdx11"],            # the same captures as CDXJ and as CDX-11
    "twice": ["timeline", "timeline_copy"],             # identical lines in two files
    "wget_split": ["wget", "timeline"],                 # plain files, the ZipNum's lines
    "wget_pair": ["wget_first", "wget_recrawl"],        # revisits in one file, originals in the other
    "zipnum": ["zipnum"],
    "zipnum_plus": ["zipnum", "revisits"],              # ZipNum merged with a plain file
}


@dataclass
class Case:
    """One query and what pywb must answer at least (checked by test_pywb_oracle.py).

    status    the HTTP status
    lines     None: any number; an int: exactly that many LF; "some": a non-empty body
    contains  byte strings the body must hold; ``absent``: must not hold
    ctype     the Content-Type, when the case is about it
    differs   a rule of docs/cdx-api.md by which warchive deliberately answers
              otherwise (D1-D7, W1-W20): the differential test compares with that
              rule, and ``note`` says what warchive answers
    """
    id: str
    rules: Sequence[str]
    params: object                  # dict, or a raw query string (R2)
    sources: str = "timeline"
    layout: str = "auto"
    status: int = 200
    lines: object = "some"
    contains: Sequence[bytes] = ()
    absent: Sequence[bytes] = ()
    ctype: str = ""
    differs: str = ""
    note: str = ""

    def check(self, status: int, ctype: str, body: bytes) -> str:
        if status != self.status:
            return f"status {status}, expected {self.status}"
        if self.ctype and ctype != self.ctype:
            return f"Content-Type {ctype!r}, expected {self.ctype!r}"
        n = body.count(b"\n")
        if self.lines == "some" and not body:
            return "empty body, expected lines"
        if isinstance(self.lines, int) and n != self.lines:
            return f"{n} lines, expected {self.lines}"
        for c in self.contains:
            if c not in body:
                return f"{c!r} not in the body"
        for c in self.absent:
            if c in body:
                return f"{c!r} in the body"
        return ""


def C(id: str, rules, params, **kw) -> Case:
    return Case(id, rules.split() if isinstance(rules, str) else list(rules), params, **kw)


ROOT = "http://example.com/"
TXT = {"output": "text"}
NOF = {"allowFuzzy": "false"}          # so that "nothing" stays nothing (R50)
CDXJ, NDJSON, TEXT, LINK = "text/x-cdxj", "text/x-ndjson", "text/plain", "application/link-format"
ERR = "application/json; charset=utf-8"


def q(url=ROOT, **params) -> dict:
    return {"url": url, **params} if url is not None else params


CASES: List[Case] = [
    # ------------------------------------------------------------------ 1.1 the request (R1-R5)
    C("req-default", "R1 R55", q(), lines=10, ctype=CDXJ),
    C("req-raw-plus-is-space", "R2 R6", "url=http://example.com/+&fl=urlkey&output=text", lines=10,
      contains=[b"com,example)/\n"]),
    C("req-raw-encoded-url", "R2", "url=http%3A%2F%2Fexample.com%2F&fl=timestamp&output=text", lines=10),
    C("req-raw-encoded-question-mark", "R2 R6", "url=http://example.com/%3F&fl=urlkey&output=text", lines=10),
    C("req-raw-last-url-wins", "R2", "url=http://example.com/&url=http://example.com/late&fl=urlkey&output=text",
      lines=2, contains=[b"com,example)/late\n"]),
    C("req-raw-last-limit-wins", "R2 R47", "url=http://example.com/&limit=1&limit=3&fl=timestamp&output=text",
      lines=3),
    C("req-raw-empty-filter-dropped", "R2 R38", "url=http://example.com/&filter=&output=text", lines=10),
    C("req-raw-empty-fl-dropped", "R2 R60", "url=http://example.com/&fl=&output=json", lines=10,
      contains=[b'"filename": "timeline.warc.gz"']),
    C("req-raw-pair-without-value", "R2", "url=http://example.com/&resolveRevisits&output=json", lines=10,
      absent=[b"orig.length"]),
    C("req-mode-ignored", "R1", q(mode="list_sources"), lines=10, ctype=CDXJ),
    C("req-raw-bad-escape-elsewhere", "R1 D7", "url=http%3A%2F%2Fexample.com%2F&x=%zz&output=text", lines=0,
      differs="D7", note="warchive: the 10 captures of http://example.com/ (the url is decoded)"),
    C("req-unknown-param", "R5 W20", q(offset="2", gzip="false", showDupeCount="true"), lines=10),
    C("req-bool-maybe", "R3 R29", q(resolveRevisits="maybe", output="json"), lines=10,
      contains=[b'"orig.offset": "669"']),
    C("req-bool-off", "R3", q(resolveRevisits="off", output="json"), lines=10, absent=[b"orig.length"]),

    # ------------------------------------------------------------------ 1.2 url and matchType (R6-R12)
    C("url-no-scheme", "R6", q("example.com", **TXT), lines=10),
    C("url-www", "R6", q("www.example.com/", **TXT), lines=10),
    C("url-port-80", "R6", q("http://www.example.com:80/", **TXT), lines=10),
    C("url-https", "R6", q("https://example.com/", **TXT), lines=10),
    C("url-query-unsorted", "R6", q("http://example.com/page?b=2&a=1", **TXT), lines=1),
    C("url-query-sorted", "R6", q("http://example.com/page?a=1&b=2", **TXT), lines=1),
    C("url-fragment-dropped", "R6", q("http://example.com/page.html#top", **TXT), lines=1),
    C("url-uppercase", "R6", q("HTTP://EXAMPLE.COM/PAGE.HTML", **TXT), lines=1),
    C("url-percent-encoded", "R6", q("http://example.com/caf%C3%A9", **TXT), lines=1),
    C("url-unicode-path", "R6", q("http://example.com/café", **TXT), lines=1),
    C("url-port-with-scheme", "R6 R9", q("http://example.com:8080/port", **TXT), lines=1),
    C("url-port-without-scheme", "R6", q("example.com:8080/port", **TXT), lines=0),
    C("url-metadata-scheme", "R6 R10", q("metadata://gnu.org/software/wget/warc/MANIFEST.txt", **TXT),
      sources="wget", lines=2),
    C("url-missing", "R64 R63", q(None, output="text"), status=400, ctype=ERR, lines=0,
      contains=[b'{"message": "The \\"url\\" param is required"}']),
    C("url-raw-empty", "R2 R64", "url=", status=400, ctype=ERR, lines=0),
    C("url-bad-port", "R6 R65", q("http://example.com:99999/"), status=400, ctype=ERR, lines=0,
      contains=[b'{"message": "Invalid Url: http://example.com:99999/"}']),
    C("url-only-spaces", "R6 R65", q("   "), status=400, ctype=ERR, lines=0),
    C("match-exact-explicit", "R8 R9", q(matchType="exact", **TXT), lines=10),
    C("match-prefix-star", "R7 R8", q("http://example.com/*", fl="urlkey", **TXT), lines=26,
      contains=[b"com,example)/script.js?v=42\n"], absent=[b"com,example,sub)"]),
    C("match-prefix-explicit", "R7 R8", q("http://example.com/", matchType="prefix", fl="urlkey", **TXT),
      lines=26),
    C("match-prefix-path-slash", "R8 R9", q("http://example.com/path/*", fl="url", **TXT), lines=1,
      contains=[b"http://example.com/path/sub/a.html\n"]),
    C("match-prefix-path", "R8 R9", q("http://example.com/path*", fl="url", **TXT), lines=4,
      contains=[b"http://example.com/path/\n", b"http://example.com/path2\n", b"http://example.com/path?q=1\n"]),
    C("match-prefix-question-mark", "R8 R9", q("example.com/path?", matchType="prefix", fl="url", **TXT),
      lines=1, contains=[b"http://example.com/path?q=1\n"]),
    C("match-prefix-star-after-question-mark", "R7 R8", q("http://example.com/page.html?*", fl="url", **TXT),
      lines=1, contains=[b"?_=1600000000000"]),
    C("match-host", "R8 R9", q("example.com", matchType="host", fl="urlkey", **TXT), lines=26,
      absent=[b"com,example,", b"com,example:8080"]),
    C("match-host-of-a-path", "R8", q("http://example.com/path/sub/a.html", matchType="host", fl="urlkey", **TXT),
      lines=26),
    C("match-host-sub", "R8 R9", q("sub.example.com/", matchType="host", fl="urlkey", **TXT), lines=1),
    C("match-host-port", "R8 R9", q("http://example.com:8080/", matchType="host", fl="urlkey", **TXT), lines=1),
    C("match-domain-star", "R7 R9", q("*.example.com", fl="urlkey", **TXT), lines=29,
      contains=[b"com,example,sub,deep)/y\n", b"com,example,mirror)/copy\n"],
      absent=[b"com,example:8080", b"com,example-shop", b"com,examples)", b"org,example"]),
    C("match-domain-star-path-ignored", "R7 R8", q("*.example.com/path", fl="urlkey", **TXT), lines=29),
    C("match-domain-explicit", "R8 R9", q("example.com", matchType="domain", fl="urlkey", **TXT), lines=29),
    C("match-domain-sub", "R9", q("sub.example.com/", matchType="domain", fl="urlkey", **TXT), lines=2),
    C("match-domain-tld", "R8 R9", q("com", matchType="domain", fl="urlkey", **TXT), lines=32,
      contains=[b"com,example-shop)/", b"com,examples)/", b"com,example:8080)/port"], absent=[b"org,"]),
    C("match-domain-star-tld", "R7 R9", q("*.com", fl="urlkey", **TXT), lines=32),
    C("match-domain-port", "R8 R9", q("http://example.com:8080/", matchType="domain", fl="urlkey", **TXT),
      lines=1),
    C("match-star-kept-with-matchtype", "R7", q("*.example.com", matchType="exact", **TXT, **NOF), lines=0),
    C("match-trailing-star-kept", "R7", q("example.com/*", matchType="exact", **TXT, **NOF), lines=0),
    C("match-bogus", "R8 R65", q(matchType="bogus"), status=400, ctype=ERR, lines=0,
      contains=[b"Invalid match_type: bogus"]),
    C("match-case-sensitive", "R4 R65", q(matchType="Exact"), status=400, ctype=ERR, lines=0),
    C("match-wget-prefix", "R8", q("http://docs.python.org/3.11/library/*", fl="urlkey", **TXT),
      sources="wget", contains=[b"org,python,docs)/3.11/library/index.html\n"]),
    C("match-wget-domain", "R8", q("*.python.org", limit="5", fl="urlkey", **TXT), sources="wget", lines=5),

    # ------------------------------------------------------------------ 1.3 sources and merging (R13-R20)
    C("src-auto-fields", "R15 R16", q(output="json"), lines=10,
      contains=[b'"filename": "timeline.warc.gz", "source": "coll/indexes/timeline.cdxj", '
                b'"source-coll": "coll", "access": "allow"}\n']),
    C("src-config-one-file", "R16", q(output="json"), layout="config", lines=10,
      contains=[b'"source": "coll", "source-coll": "coll"}\n'], absent=[b'"access"']),
    C("src-config-directory", "R16", q(output="json"), sources="merged", layout="config",
      contains=[b'"source": "coll:timeline.cdxj"', b'"source": "coll:merge.cdxj"'], absent=[b'"access"']),
    C("src-nosource", "R15 R3", q(output="json", nosource="true"), lines=10,
      contains=[b'"filename": "timeline.warc.gz", "access": "allow"}'], absent=[b'"source"']),
    C("src-nosource-not-exactly-true", "R3 R15", q(output="json", nosource="1"), lines=10,
      contains=[b'"source": "coll/indexes/timeline.cdxj"']),
    C("src-config-nosource-raw-line", "R17 R57", q(nosource="true", **TXT), layout="config", lines=10,
      contains=[b'com,example)/ 20190304050607 {"url": "http://example.com/", "mime": "text/html", '
                b'"status": "200", "digest": "sha1:RRM5EVEEZMEEX5RCCT6JKY5EA4DN52BB", "length": "363", '
                b'"offset": "306", "filename": "timeline.warc.gz"}\n']),
    C("src-sources-none-config", "R18", q(sources="nothing", **TXT), layout="config", lines=0),
    C("src-sources-named-config", "R18", q(sources="coll", **TXT), layout="config", lines=10),
    C("src-sources-ignored-auto", "R18", q(sources="nothing", **TXT), lines=10),
    C("merge-json-order", "R19", q("http://example.com/page*", fl="urlkey,timestamp", **TXT), sources="merged",
      contains=[b"com,example)/page.html! 20200505050506\ncom,example)/page.html 20200505050506\n"]),
    C("merge-json-order-nosource", "R19", q("http://example.com/page*", fl="urlkey", nosource="true", **TXT),
      sources="merged", contains=[b"com,example)/page.html!\ncom,example)/page.html\n"]),
    C("merge-tie-by-fields", "R19", q(fl="timestamp,url,mime", to="202001", **{"from": "2020"}, **TXT),
      sources="merged", lines=5,
      contains=[b"20200101000000 http://example.com/ text/html\n20200101000000 http://example.com/ text/plain\n"
                b"20200101000000 https://example.com/ text/html\n"]),
    C("merge-merged-timeline", "R19 R20", q(fl="timestamp,source", **TXT), sources="merged", lines=12,
      contains=[b"20230303030303 coll/indexes/merge.cdxj\n"]),
    C("merge-cdx11-before-cdxj", "R19 R14", q(fl="digest", to="2019", **TXT), sources="mixed", lines=2,
      contains=[b"RRM5EVEEZMEEX5RCCT6JKY5EA4DN52BB\nsha1:RRM5EVEEZMEEX5RCCT6JKY5EA4DN52BB\n"]),
    C("merge-duplicates-by-source", "R19", q(fl="timestamp,source", to="2019", **TXT), sources="twice", lines=2,
      contains=[b"20190304050607 coll/indexes/timeline-copy.cdxj\n20190304050607 coll/indexes/timeline.cdxj\n"]),
    C("merge-duplicates-nosource", "R19", q(to="2019", nosource="true", output="json"), sources="twice", lines=2),
    C("merge-wget-split", "R19", q("*.python.org", limit="3", fl="urlkey", **TXT), sources="wget_split", lines=3),
    C("cdx11-text-raw", "R14 R17 R57", q(nosource="true", to="2019", **TXT), sources="cdx11", layout="config",
      lines=1, contains=[b"com,example)/ 20190304050607 http://example.com/ text/html 200 "
                         b"RRM5EVEEZMEEX5RCCT6JKY5EA4DN52BB - - 363 306 timeline.warc.gz\n"]),
    C("cdx11-cdxj-output", "R14 R56", q(to="2019"), sources="cdx11", lines=1,
      contains=[b'"digest": "RRM5EVEEZMEEX5RCCT6JKY5EA4DN52BB", "redirect": "-", "robotflags": "-", "length": "363"']),
    C("cdx11-json-output", "R14 R56", q(to="2019", output="json"), sources="cdx11", lines=1,
      contains=[b'{"urlkey": "com,example)/", "timestamp": "20190304050607", "url": "http://example.com/"']),

    # ------------------------------------------------------------------ 1.4 ZipNum (R21-R27)
    C("zip-exact", "R21 R22", q(fl="timestamp", **TXT), sources="zipnum", lines=10),
    C("zip-default-page-only", "R22", q("*.python.org", fl="urlkey", nosource="true", **TXT), sources="zipnum",
      lines=153),
    C("zip-page-0", "R22", q("*.python.org", page="0", fl="urlkey", **TXT), sources="zipnum", lines=153),
    C("zip-page-1", "R22", q("*.python.org", page="1", fl="urlkey", **TXT), sources="zipnum", lines=160),
    C("zip-last-page", "R22 R23", q("*.python.org", page="7", fl="urlkey", **TXT), sources="zipnum"),
    C("zip-page-too-big", "R24 R65", q("*.python.org", page="8"), sources="zipnum", status=400, ctype=ERR,
      lines=0, contains=[b"Page 8 invalid: First Page is 0, Last Page is 7"]),
    C("zip-page-negative", "R24", q("*.python.org", page="-1"), sources="zipnum", status=400, lines=0),
    C("zip-page-not-int", "R24 R65", q("*.python.org", page="abc"), sources="zipnum", status=400, lines=0,
      contains=[b"Invalid value for page= param: abc"]),
    C("zip-pagesize-not-int", "R24 R65", q("*.python.org", pageSize="abc"), sources="zipnum", status=400, lines=0,
      contains=[b"Invalid value for pageSize= param: abc"]),
    C("zip-pagesize-0-one-block", "R22", q("*.python.org", pageSize="0", fl="urlkey", **TXT), sources="zipnum",
      lines=9),
    C("zip-numpages-pagesize-0", "R23", q("*.python.org", showNumPages="true", pageSize="0"), sources="zipnum",
      lines=0, contains=[b'{"pages": 1, "pageSize": 0, "blocks": 0}']),
    C("zip-pagesize-negative", "R23 R24", q("*.python.org", pageSize="-1"), sources="zipnum", status=400,
      lines=0, contains=[b"Page 0 invalid: First Page is 0, Last Page is -70"]),
    C("zip-pagesize-1", "R22", q("*.python.org", pageSize="1", page="3", fl="urlkey", **TXT), sources="zipnum",
      lines=16),
    C("zip-numpages", "R23 R25", q("*.python.org", showNumPages="true"), sources="zipnum", lines=0, ctype=CDXJ,
      contains=[b'{"pages": 8, "pageSize": 10, "blocks": 71}']),
    C("zip-numpages-json", "R25 R61", q("*.python.org", showNumPages="true", output="json"), sources="zipnum",
      lines=0, ctype=NDJSON),
    C("zip-numpages-pagesize", "R23 R25", q("*.python.org", showNumPages="true", pageSize="3"), sources="zipnum",
      lines=0, contains=[b'{"pages": 24, "pageSize": 3, "blocks": 71}']),
    C("zip-numpages-one-block", "R23", q(showNumPages="true"), sources="zipnum", lines=0,
      contains=[b'{"pages": 1, "pageSize": 10, "blocks": 1}']),
    C("zip-numpages-none", "R23", q("http://zzz.invalid/", showNumPages="true"), sources="zipnum", lines=0,
      contains=[b'{"pages": 0, "pageSize": 10, "blocks": 0}']),
    C("zip-numpages-ignores-processing", "R25", q("*.python.org", showNumPages="true", limit="1",
                                                 filter="=status:999"), sources="zipnum", lines=0),
    C("zip-pagedindex-text", "R26", q("*.python.org", showPagedIndex="true", pageSize="2", page="1", **TXT),
      sources="zipnum", lines=2, contains=[b"\tcluster-00\t"]),
    C("zip-pagedindex-json", "R26", q("*.python.org", showPagedIndex="true", pageSize="2", page="1",
                                      output="json"), sources="zipnum", lines=2,
      contains=[b'"part": "cluster-00", "offset": ']),
    C("zip-pagedindex-cdxj", "R26 R67 D1", q("*.python.org", showPagedIndex="true"), sources="zipnum",
      status=500, lines=0, differs="D1", note="warchive: 400, showPagedIndex needs output=text or json"),
    C("zip-pagedindex-link", "R26 R67 D1", q("*.python.org", showPagedIndex="true", output="link"),
      sources="zipnum", status=500, lines=0, differs="D1", note="warchive: 400"),
    C("zip-limit-within-page", "R24 R49", q("*.python.org", page="1", limit="5", fl="urlkey", **TXT),
      sources="zipnum", lines=5),
    C("zip-filter-within-page", "R24", q("*.python.org", page="1", filter="=mime:warc/revisit", fl="mime", **TXT),
      sources="zipnum"),
    C("zip-resolve", "R29 R22", q("http://docs.python.org/3.11/index.html", resolveRevisits="true", output="json"),
      sources="zipnum", lines=2, contains=[b'"orig.filename": "docs-python-3.11.warc.gz"']),
    C("zip-plus-plain", "R19 R27", q("http://example.com/page.html", fl="timestamp,source", **TXT),
      sources="zipnum_plus", lines=7, contains=[b"20200505050506 coll/indexes/cluster.idx\n"]),
    C("zip-plus-plain-page-1", "R27 R24", q("http://example.com/page.html", page="1"), sources="zipnum_plus",
      status=400, lines=0),
    C("zip-plus-plain-numpages", "R27 R67 D3", q("http://example.com/page.html", showNumPages="true"),
      sources="zipnum_plus", status=500, lines=0, differs="D3", note="warchive: 400"),
    C("plain-numpages-unprocessed", "R27", q(showNumPages="true", limit="2", filter="=status:404", **TXT),
      lines=10),
    C("plain-pagedindex-ignored", "R27", q(showPagedIndex="true", limit="1", **TXT), lines=1),
    C("plain-page-ignored", "R27 R68", q(page="5", pageSize="abc", **TXT), lines=10),

    # ------------------------------------------------------------------ 1.6 resolveRevisits (R29-R31)
    C("rr-off", "R29", q(output="json"), lines=10, absent=[b"orig."]),
    C("rr-same-url", "R29", q(resolveRevisits="true", output="json", fl="timestamp,mime,status,orig.offset"),
      lines=10, contains=[b'{"timestamp": "20200615120000", "mime": "text/html", "status": "200", '
                          b'"orig.offset": "669"}', b'{"timestamp": "20190304050607", "mime": "text/html", '
                          b'"status": "200", "orig.offset": "-"}']),
    C("rr-field-order", "R29 R15", q(resolveRevisits="true", output="json", to="2019"), lines=1,
      contains=[b'"source-coll": "coll", "orig.length": "-", "orig.offset": "-", "orig.filename": "-", '
                b'"access": "allow"}']),
    C("rr-original-later", "R29", q("http://example.com/late", resolveRevisits="true", output="json"), lines=2,
      contains=[b'"mime": "warc/revisit"', b'"orig.length": "-", "orig.offset": "-", "orig.filename": "-"']),
    C("rr-url-agnostic-domain", "R30", q("*.example.com", resolveRevisits="true", filter="~urlkey:com,example,mirror",
                                         fl="urlkey,mime,orig.offset", output="json"), lines=1,
      contains=[b'"mime": "text/html", "orig.offset": "669"']),
    C("rr-url-agnostic-exact", "R30", q("http://mirror.example.com/copy", resolveRevisits="true", output="json"),
      lines=1, contains=[b'"mime": "warc/revisit"', b'"orig.offset": "-"']),
    C("rr-outside-time-range", "R28 R41 R29", q(resolveRevisits="true", fl="timestamp,orig.offset", to="2020",
                                                **{"from": "202006"}, **TXT), lines=1,
      contains=[b"20200615120000 669\n"]),
    C("rr-revisit-kinds", "R29", q("http://example.com/page.html", resolveRevisits="true", nosource="true",
                                   fl="mime,status,orig.offset", output="json"), sources="revisits", lines=6,
      contains=[b'{"mime": "text/html", "orig.offset": "348"}', b'{"mime": "warc/revisit", "status": "304", '
                b'"orig.offset": "-"}']),
    C("rr-empty-revisit-text", "R29 R57", q("http://example.com/page.html", resolveRevisits="true", **TXT),
      sources="revisits", lines=6, contains=[b" text/html sha1:OPXRAGCHQN4YCO4XKIAWRDFNG42WKLLF 387 1225 "]),
    C("rr-wget", "R29", q("http://docs.python.org/3.11/index.html", resolveRevisits="true", output="json"),
      sources="wget", lines=2, contains=[b'"orig.length": "3566", "orig.offset": "978", '
                                         b'"orig.filename": "docs-python-3.11.warc.gz"']),
    C("rr-across-files", "R20 R29", q("http://docs.python.org/3.11/index.html", resolveRevisits="true",
                                      output="json"), sources="wget_pair", lines=2,
      contains=[b'"source": "coll/indexes/wget-recrawl.cdxj", "source-coll": "coll", "orig.length": "3566"']),
    C("rr-wget-prefix", "R29", q("http://docs.python.org/3.11/library/*", resolveRevisits="true",
                                 filter="=mime:warc/revisit", **TXT, **NOF), sources="wget", lines=0),
    C("rr-digest-text-differs", "R30", q(resolveRevisits="true", fl="digest,orig.offset", **TXT),
      sources="mixed", lines=20, contains=[b"BSM63ZMQ6GJNINDTSJ5NV4WMEWACK3LQ 669\n",
                                           b"sha1:BSM63ZMQ6GJNINDTSJ5NV4WMEWACK3LQ 669\n"]),
    C("rr-14-fields", "R31 R57", q(resolveRevisits="true", nosource="true", **{"from": "202006"}, to="2020",
                                   **TXT), sources="cdx11", layout="config", lines=1,
      contains=[b"com,example)/ 20200615120000 http://example.com/ text/html 200 BSM63ZMQ6GJNINDTSJ5NV4WMEWACK3LQ"
                b" - - 390 2456 timeline.warc.gz 362 669 timeline.warc.gz\n"]),
    C("rr-15-fields-auto", "R31", q(resolveRevisits="true", nosource="true", to="2019", **TXT), sources="cdx11",
      lines=1, contains=[b" 363 306 timeline.warc.gz - - - allow\n"]),
    C("rr-cdx11-with-source", "R31 R15", q(resolveRevisits="true", to="2019", **TXT), sources="cdx11",
      layout="config", lines=1, contains=[b" 363 306 timeline.warc.gz coll coll - - -\n"]),

    # ------------------------------------------------------------------ 1.7 filter (R32-R38)
    C("flt-contains", "R32", q(filter="status:20", fl="status", **TXT), lines=7),
    C("flt-exact", "R32", q(filter="=status:200", fl="status", **TXT), lines=7),
    C("flt-exact-partial", "R32", q(filter="=status:20", **TXT, **NOF), lines=0),
    C("flt-regex-start", "R32", q(filter="~status:[34]", fl="status", **TXT), lines=2),
    C("flt-regex-not-full", "R32", q(filter="~status:0", **TXT, **NOF), lines=0),
    C("flt-regex-anchor-end", "R32", q("http://example.com/*", filter="~url:.*\\.png$", fl="url", **TXT), lines=1),
    C("flt-not-exact", "R32", q(filter="!=status:200", fl="status", **TXT), lines=3),
    C("flt-not-regex", "R32", q("http://example.com/*", filter="!~mime:text/", fl="mime", **TXT), lines=5),
    C("flt-not-contains", "R32", q(filter="!mime:html", fl="mime", **TXT), lines=1),
    C("flt-and", "R32", q(filter=["!=status:200", "!=status:302"], fl="status", **TXT), lines=2),
    C("flt-colon-in-expr", "R33", q(filter="=url:http://www.example.com/", fl="url", **TXT), lines=1),
    C("flt-manual-syntax", "R33", q(filter="status:!=200", **TXT, **NOF), lines=0),
    C("flt-alias-statuscode", "R34", q(filter="statuscode:404", fl="status", **TXT), lines=1),
    C("flt-alias-mimetype", "R34", q("http://example.com/*", filter="mimetype:png", **TXT), lines=1),
    C("flt-alias-m", "R34", q("http://example.com/*", filter="m:json", **TXT), lines=1),
    C("flt-alias-s-is-length", "R34", q(filter="s:363", fl="length", **TXT), lines=3),
    C("flt-alias-s-not-status", "R34", q(filter="=s:200", **TXT, **NOF), lines=0),
    C("flt-alias-l", "R34", q(filter="=l:363", **TXT), lines=3),
    C("flt-alias-o", "R34", q(filter="=o:306", **TXT), lines=1),
    C("flt-alias-d", "R34", q(filter="d:BSM63ZMQ", **TXT), lines=3),
    C("flt-alias-t", "R34", q(filter="t:2022", **TXT), lines=2),
    C("flt-alias-k", "R34", q("http://example.com/*", filter="=k:com,example)/late", **TXT), lines=2),
    C("flt-alias-f", "R34", q(filter="f:timeline", **TXT), lines=10),
    C("flt-alias-u", "R34", q(filter="u:https", **TXT), lines=1),
    C("flt-alias-original", "R34", q(filter="original:www", **TXT), lines=1),
    C("flt-missing-field", "R35", q(filter="nofield:x", **TXT, **NOF), lines=0),
    C("flt-missing-field-inverted", "R35", q(filter="!nofield:x", **TXT), lines=10),
    C("flt-missing-status-exact-empty", "R35", q("http://example.com/page.html", filter="=status:", **TXT),
      sources="revisits", lines=1),
    C("flt-whole-capture-json", "R36", q(filter=":https", fl="url", **TXT), lines=1),
    C("flt-whole-capture-json-keys", "R36", q(filter='~:{"urlkey": "com,example\\)/", "timestamp": "2019',
                                              **TXT), lines=1),
    C("flt-whole-capture-source", "R36 R37", q(filter=':"source": "coll/indexes/timeline.cdxj"', **TXT), lines=10),
    C("flt-whole-capture-raw-line", "R36 R17", q(filter=':/ 20190304050607 {"url"', nosource="true", **TXT),
      layout="config", lines=1),
    C("flt-whole-capture-cdx-values", "R36", q(filter=":363 306 timeline.warc.gz coll/indexes/timeline.cdx coll",
                                               **TXT), sources="cdx11", lines=1),
    C("flt-source-field", "R37", q(filter="=source:coll/indexes/merge.cdxj", fl="timestamp", **TXT),
      sources="merged", lines=2),
    C("flt-source-with-nosource", "R37", q(filter="source:coll", nosource="true", **TXT, **NOF), lines=0),
    C("flt-access-not-yet", "R37", q(filter="access:allow", **TXT, **NOF), lines=0),
    C("flt-resolved-mime", "R37 R29", q(filter="=mime:warc/revisit", resolveRevisits="true", **TXT, **NOF),
      lines=0),
    C("flt-unresolved-mime", "R37", q(filter="=mime:warc/revisit", **TXT), lines=1),
    C("flt-orig-field", "R37", q(filter="~orig.length:[0-9]", resolveRevisits="true", fl="timestamp", **TXT),
      lines=1),
    C("flt-content-type", "R38", q("http://example.com/*", content_type="image/png", fl="url", **TXT), lines=1),
    C("flt-content-type-replaces-filters", "R38", q(content_type="text/html", filter="=status:404", **TXT),
      lines=9),
    C("flt-bang-only", "R38", q(filter="!", **TXT, **NOF), lines=0),
    C("flt-bad-regex", "R38 R67 D1", q(filter="~status:("), status=500, lines=0, differs="D1",
      note="warchive: 400, filter is not a valid regular expression"),
    C("flt-wget-mime", "R32", q("*.python.org", filter="=mime:image/png", fl="url", **TXT), sources="wget",
      lines=8),

    # ------------------------------------------------------------------ 1.8 from/to (R39-R41)
    C("time-year", "R39", q(**{"from": "2020"}, to="2020", fl="timestamp", **TXT), lines=6),
    C("time-from-year", "R39", q(**{"from": "2022"}, **TXT), lines=2),
    C("time-to-year", "R39", q(to="2019", **TXT), lines=1),
    C("time-from-5-digits", "R39", q(**{"from": "20201"}, fl="timestamp", **TXT), lines=3),
    C("time-to-5-digits", "R39", q(to="20201", fl="timestamp", **TXT), lines=7),
    C("time-to-month", "R39", q(to="202002", fl="timestamp", **TXT), lines=5),
    C("time-to-day", "R39", q(to="20200101", fl="timestamp", **TXT), lines=5),
    C("time-to-hour", "R39", q(to="2020010100", fl="timestamp", **TXT), lines=5),
    C("time-to-minute", "R39", q(to="202001010000", fl="timestamp", **TXT), lines=4),
    C("time-full-inclusive", "R39", q(**{"from": "20200101000030"}, to="20200101005959", fl="timestamp", **TXT),
      lines=2),
    C("time-from-not-digits", "R40", q(**{"from": "2020-01"}, fl="timestamp", **TXT), lines=9),
    C("time-from-letters", "R40", q(**{"from": "abc"}, **TXT), lines=0),
    C("time-from-15-digits", "R40", q(**{"from": "202001010000001"}, fl="timestamp", **TXT), lines=7),
    C("time-from-after-to", "R40", q(**{"from": "2022"}, to="2020", **TXT), lines=0),
    C("time-from-ts", "R4 R39", q(from_ts="2022", **TXT), lines=2),
    C("time-from-wins", "R4", q(**{"from": "2022"}, from_ts="2019", **TXT), lines=2),
    C("time-wget", "R39", q("*.python.org", to="20261129183042", fl="timestamp", **TXT), sources="wget"),

    # ------------------------------------------------------------------ 1.9 collapseTime (R42)
    C("ct-year", "R42", q(collapseTime="4", fl="timestamp,status", **TXT), lines=7),
    C("ct-day-prefix-across-urls", "R42", q("http://example.com/page*", collapseTime="8", fl="url", **TXT),
      lines=1),
    C("ct-zero-status-only", "R42", q(collapseTime="0", fl="timestamp,status", **TXT), lines=6),
    C("ct-negative", "R42", q(collapseTime="-2", fl="timestamp", **TXT), lines=8),
    C("ct-hour", "R42", q(collapseTime="10", fl="timestamp", **TXT), lines=8),
    C("ct-not-int", "R42 R67 D1", q(collapseTime="abc"), status=500, lines=0, differs="D1",
      note="warchive: 400, collapseTime must be an integer"),
    C("ct-wget", "R42", q("*.python.org", collapseTime="12", fl="timestamp", limit="20", **TXT), sources="wget"),

    # ------------------------------------------------------------------ 1.10 closest/sort/limit (R43-R49)
    C("cl-ties-stable", "R43", q(closest="20200101000015", limit="3", fl="timestamp,url", **TXT), lines=3,
      contains=[b"20200101000000 http://example.com/\n20200101000000 https://example.com/\n20200101000030 "]),
    C("cl-partial-end-of-year", "R43", q(closest="2020", limit="3", fl="timestamp", **TXT), lines=3,
      contains=[b"20200615120000\n20200301000000\n20211231235959\n"]),
    C("cl-garbage-is-2999", "R43", q(closest="abc", limit="2", fl="timestamp", **TXT), lines=2,
      contains=[b"20220228103000\n20220228100000\n"]),
    C("cl-now", "R43 R28", q(closest="now", limit="1", fl="timestamp", **TXT), lines=1,
      contains=[b"20220228103000\n"]),
    C("cl-no-limit-all", "R43 R47", q(closest="20200615", fl="timestamp", **TXT), lines=10),
    C("cl-sort-closest-alone", "R44", q(sort="closest", limit="2", fl="timestamp", **TXT), lines=2,
      contains=[b"20190304050607\n"]),
    C("cl-sort-bogus", "R44", q(sort="bogus", limit="1", fl="timestamp", **TXT), lines=1,
      contains=[b"20190304050607\n"]),
    C("cl-wins-over-reverse", "R45", q(closest="20200101000015", sort="reverse", limit="1", fl="timestamp", **TXT),
      lines=1, contains=[b"20200101000000\n"]),
    C("cl-with-filter", "R43 R28", q(closest="20200101005959", filter="!=status:302", limit="1", fl="timestamp",
                                     **TXT), lines=1, contains=[b"20200101000030\n"]),
    C("cl-prefix", "R43", q("http://example.com/*", closest="20200505050506", limit="3", fl="url", **TXT), lines=3,
      contains=[b"http://example.com/page.html\n"]),
    C("rev-sort", "R46", q(sort="reverse", limit="3", fl="timestamp", **TXT), lines=3,
      contains=[b"20220228103000\n20220228100000\n20211231235959\n"]),
    C("rev-param", "R46 R3", q(reverse="1", limit="2", fl="timestamp", **TXT), lines=2,
      contains=[b"20220228103000\n"]),
    C("rev-param-false", "R46 R3", q(reverse="false", limit="1", fl="timestamp", **TXT), lines=1,
      contains=[b"20190304050607\n"]),
    C("rev-limit-1", "R46", q(sort="reverse", limit="1", fl="timestamp", **TXT), lines=1,
      contains=[b"20220228103000\n"]),
    C("rev-all", "R46 R47", q(sort="reverse", fl="timestamp", **TXT), lines=10),
    C("lim-2", "R47", q(limit="2", fl="timestamp", **TXT), lines=2),
    C("lim-plus", "R48", q(limit="+2", **TXT), lines=2),
    C("lim-space", "R48", q(limit=" 2", **TXT), lines=2),
    C("lim-0-all", "R48", q(limit="0", **TXT), lines=10),
    C("lim-0-reverse-nothing", "R48 R50", q(limit="0", sort="reverse", **TXT), lines=0),
    C("lim-0-closest-falls-back", "R48 R52", q(limit="0", closest="2020", fl="timestamp,is_fuzzy", **TXT),
      lines=10, contains=[b"20190304050607 1\n"]),
    C("lim-not-int", "R48 R67 D1", q(limit="abc"), status=500, lines=0, differs="D1",
      note="warchive: 400, limit must be an integer"),
    C("lim-float", "R48 R67 D1", q(limit="2.0"), status=500, lines=0, differs="D1", note="warchive: 400"),
    C("lim-wget-prefix", "R47", q("http://docs.python.org/3.11/*", limit="7", **TXT), sources="wget", lines=7),
    C("lim-after-collapse", "R49 R42", q(collapseTime="4", limit="3", fl="timestamp", **TXT), lines=3,
      contains=[b"20200101005959\n"]),

    # ------------------------------------------------------------------ 1.11 fuzzy (R50-R54)
    C("fz-cache-buster", "R50 R51 R53", q("http://example.com/page.html?_=1700000000000", output="json"), lines=2,
      contains=[b'"is_fuzzy": "1", "access": "allow"}']),
    C("fz-ext-with-scheme", "R51", q("http://example.com/page.html?foo=bar", fl="url", **TXT), lines=2),
    C("fz-ext-without-scheme", "R51", q("example.com/page.html?foo=bar", **TXT), lines=0),
    C("fz-script-version", "R51 R52", q("http://example.com/script.js?v=43", fl="url,is_fuzzy", **TXT), lines=1,
      contains=[b"http://example.com/script.js?v=42 1\n"]),
    C("fz-script-no-query", "R51 R52", q("http://example.com/script.js", fl="url", **TXT), lines=1),
    C("fz-utm", "R51 R52", q("example.com/page?b=2&a=1&utm_source=x", fl="urlkey", **TXT), lines=1),
    C("fz-cb", "R51 R52", q("example.com/api/data.json?cb=1", fl="urlkey", **TXT), lines=1),
    C("fz-buster-order-trap", "R51", q("example.com/page?a=1&b=2&_=123", **TXT), lines=0),
    C("fz-img-query", "R51", q("http://example.com/img.png?x=1", fl="url", **TXT), lines=1),
    C("fz-nothing", "R52", q("http://example.com/nothing", **TXT), lines=0),
    C("fz-filter-dropped", "R50 R52", q(filter="=status:999", fl="status,is_fuzzy", **TXT), lines=10,
      contains=[b"404 1\n"]),
    C("fz-disabled-false", "R53 R3", q(filter="=status:999", allowFuzzy="false", **TXT), lines=0),
    C("fz-disabled-0", "R53 R3", q(filter="=status:999", allowFuzzy="0", **TXT), lines=0),
    C("fz-enabled-other", "R53 R3", q(filter="=status:999", allowFuzzy="no", **TXT), lines=10),
    C("fz-keeps-limit", "R50", q(filter="=status:999", limit="2", **TXT), lines=2),
    C("fz-keeps-from", "R50", q(filter="=status:999", **{"from": "2022"}, **TXT), lines=2),
    C("fz-keeps-sort", "R50", q(filter="=status:999", sort="reverse", fl="timestamp", **TXT), lines=10,
      contains=[b"20220228103000\n20220228100000\n"]),
    C("fz-limit-before-test", "R50 R51", q(filter="=status:999", sort="reverse", limit="2", **TXT), lines=0),
    C("fz-drops-closest", "R50", q(filter="=status:999", closest="2022", limit="1", fl="timestamp", **TXT),
      lines=1, contains=[b"20190304050607\n"]),
    C("fz-keeps-resolve", "R50 R53 R15", q(filter="=status:999", resolveRevisits="true", output="json",
                                           **{"from": "202006"}, to="2020"), lines=1,
      contains=[b'"orig.filename": "timeline.warc.gz", "is_fuzzy": "1", "access": "allow"}']),
    C("fz-domain-query", "R50", q("example.com", matchType="domain", filter="~urlkey:com,example:", fl="urlkey",
                                  **TXT), lines=10, absent=[b"com,example)/late"]),
    C("fz-prefix-query", "R50", q("http://example.com/page.html?zzz*", fl="url", **TXT), lines=2),
    C("fz-not-prefix-of-slash", "R50", q("http://example.com/?zz=1", **TXT), lines=0),
    C("fz-wget", "R51", q("http://docs.python.org/3.11/index.html?highlight=x", fl="timestamp,is_fuzzy", **TXT),
      sources="wget", lines=2),
    C("fz-custom-rule", "R54 D4", q("http://example.com/matched.html", fl="url,is_fuzzy", **TXT), lines=2,
      contains=[b"http://example.com/replaced.html 1\n"], differs="D4",
      note="warchive without pywb's rules file: the generic rule, which finds nothing (0 lines)"),

    # ------------------------------------------------------------------ 1.12 output (R55-R62)
    C("out-cdxj", "R55 R56", q(output="cdxj", to="2019"), lines=1, ctype=CDXJ,
      contains=[b'com,example)/ 20190304050607 {"url": "http://example.com/", "mime": "text/html"']),
    C("out-json", "R55 R56", q(output="json", to="2019"), lines=1, ctype=NDJSON,
      contains=[b'{"urlkey": "com,example)/", "timestamp": "20190304050607", "url": "http://example.com/"']),
    C("out-text", "R55 R57", q(output="text", to="2019"), lines=1, ctype=TEXT,
      contains=[b"com,example)/ 20190304050607 http://example.com/ text/html 200 sha1:RRM5EVEEZMEEX5RCCT6JKY5EA4DN52BB"
                b" 363 306 timeline.warc.gz coll/indexes/timeline.cdxj coll allow\n"]),
    C("out-link", "R55 R58", q(output="link", to="2020010100"), lines=5, ctype=LINK,
      contains=[b'<http://example.com/>; rel="memento"; datetime="Mon, 04 Mar 2019 05:06:07 GMT"; '
                b'collection="coll",\n<http://example.com/>; rel="memento"; datetime="Wed, 01 Jan 2020 00:00:00 GMT";'
                b' collection="coll",\n<https://example.com/>',
                b'collection="coll"\n']),
    C("out-link-nosource", "R58", q(output="link", nosource="true", to="2019"), lines=1,
      contains=[b'datetime="Mon, 04 Mar 2019 05:06:07 GMT"\n']),
    C("out-link-ignores-fl", "R58 R60", q(output="link", fl="timestamp", to="2019"), lines=1,
      contains=[b"<http://example.com/>"]),
    C("out-link-config", "R58 R16", q(output="link", to="2019"), layout="config", lines=1,
      contains=[b'; collection="coll"\n']),
    C("out-memento-format", "R59", q(output="link", memento_format="{url}/{timestamp}", to="2019"), lines=1,
      contains=[b"<http://example.com//20190304050607>"]),
    C("out-memento-format-bad", "R59 R67 D1", q(output="link", memento_format="{foo}"), status=500, lines=0,
      differs="D1", note="warchive: 400"),
    C("out-bogus", "R55 R65", q(output="xml"), status=400, ctype=ERR, lines=0,
      contains=[b'{"message": "output=xml not supported"}']),
    C("out-case-sensitive", "R55", q(output="JSON"), status=400, lines=0),
    C("out-checked-before-url", "R55 R65", q(None, output="bogus"), status=400, lines=0,
      contains=[b"output=bogus not supported"]),
    C("out-url-before-matchtype", "R65", q("http://example.com:99999/", matchType="bogus"), status=400, lines=0,
      contains=[b"Invalid Url"]),
    C("out-empty-json", "R55", q("http://example.com/nothing", output="json", **NOF), lines=0, ctype=NDJSON),
    C("out-empty-link", "R55", q("http://example.com/nothing", output="link", **NOF), lines=0, ctype=LINK),
    C("out-empty-text", "R55", q("http://example.com/nothing", output="text", **NOF), lines=0, ctype=TEXT),
    C("fl-text-missing-dash", "R60", q(fl="timestamp,nope,status", to="2019", **TXT), lines=1,
      contains=[b"20190304050607 - 200\n"]),
    C("fl-json-only-present", "R60", q(fl="nope,status,timestamp", to="2019", output="json"), lines=1,
      contains=[b'{"status": "200", "timestamp": "20190304050607"}\n']),
    C("fl-cdxj-empty-object", "R60", q(fl="nope", to="2019"), lines=1,
      contains=[b"com,example)/ 20190304050607 {}\n"]),
    C("fl-cdxj-key-ts-always", "R60", q(fl="status", to="2019"), lines=1,
      contains=[b'com,example)/ 20190304050607 {"status": "200"}\n']),
    C("fl-no-aliases", "R60 R34", q(fl="statuscode,s,mimetype", to="2019", **TXT), lines=1,
      contains=[b"- - -\n"]),
    C("fl-fields-wins", "R4 R60", q(fields="timestamp", fl="status", to="2019", **TXT), lines=1,
      contains=[b"20190304050607\n"]),
    C("fl-added-fields", "R60 R15", q(fl="source,access,is_fuzzy", to="2019", **TXT), lines=1,
      contains=[b"coll/indexes/timeline.cdxj allow -\n"]),
    C("fl-orig", "R60 R29", q(fl="orig.offset", resolveRevisits="true", to="2019", output="json"), lines=1,
      contains=[b'{"orig.offset": "-"}\n']),
    C("out-text-missing-column", "R57", q("http://example.com/page.html", nosource="true", **TXT),
      sources="revisits", lines=6, contains=[b" warc/revisit 200 378 2467 revisits.warc.gz allow\n"]),
    C("out-unicode-url-json", "R14 R62", q("*.example", output="json", fl="url"), sources="unicode", lines=2,
      contains=[b'{"url": "http://b%C3%BCcher.example/stra%C3%9Fe%3Fq%3D%C3%BC"}']),
    C("out-unicode-text-utf8", "R62 R57", q("http://example.com/caf%C3%A9?q=%C3%BC", fl="mime", **TXT),
      sources="unicode", lines=1, contains=["text/x-café\n".encode()]),
    C("out-unicode-json-escaped", "R56 R62", q("http://example.com/caf%C3%A9?q=%C3%BC", fl="mime", output="json"),
      sources="unicode", lines=1, contains=[b'{"mime": "text/x-caf\\u00e9"}']),
    C("out-idn-query", "R6", q("http://bücher.example/", fl="url", **TXT), sources="unicode", lines=1,
      contains=[b"http://xn--bcher-kva.example/\n"]),

    # ------------------------------------------------------------------ 3. Wayback extras: pywb ignores them
    C("wb-collapse-digest", "W3 W4 R5", q(collapse="digest", fl="digest", **TXT), lines=10, differs="W3",
      note="warchive: 10 lines too: no two adjacent captures share a digest (https lies between the BSM6 ones)"),
    C("wb-collapse-digest-adjacent", "W3 W4", q(collapse="digest", filter="!~url:https", fl="timestamp", **TXT),
      lines=9, differs="W3", note="warchive: 8 lines, 20200101000030 (same digest as 20200101000000) dropped"),
    C("wb-collapse-timestamp-4", "W3 W4 R5", q(collapse="timestamp:4", fl="timestamp", **TXT), lines=10,
      differs="W3", note="warchive: 20190304050607 20200101000000 20211231235959 20220228100000"),
    C("wb-collapse-urlkey-prefix", "W3 W4", q("http://example.com/*", collapse="urlkey", fl="urlkey", **TXT),
      lines=26, differs="W3", note="warchive: one line per key, 16 lines"),
    C("wb-collapse-two", "W3 W7", q(collapse=["timestamp:6", "statuscode"], fl="timestamp,status", **TXT),
      lines=10, differs="W3"),
    C("wb-collapse-with-collapsetime", "W7 R42", q(collapse="digest", collapseTime="4", fl="timestamp", **TXT),
      lines=7, differs="W7"),
    C("wb-collapse-bad-n", "W5", q(collapse="digest:0"), lines=10, differs="W5", note="warchive: 400"),
    C("wb-collapse-reverse", "W6", q(collapse="timestamp:4", sort="reverse", fl="timestamp", **TXT), lines=10,
      differs="W6", note="warchive: 20220228100000 20211231235959 20200101000000 20190304050607"),
    C("wb-limit-negative", "W10 D2 R48", q(limit="-1", fl="timestamp", **TXT), lines=0, differs="W10",
      note="warchive: 20220228103000"),
    C("wb-limit-negative-3", "W10 D2", q(limit="-3", fl="timestamp", **TXT), lines=0, differs="W10",
      note="warchive: the 3 newest, oldest first"),
    C("wb-limit-negative-reverse", "W10 R48 R67", q(limit="-2", sort="reverse"), status=500, lines=0,
      differs="W10", note="warchive: 20200101000000 (http://, after https:// in reverse) then 20190304050607"),
    C("wb-limit-negative-prefix", "W10", q("http://example.com/*", limit="-2", fl="url", **TXT), lines=0,
      differs="W10", note="warchive: the last 2 lines of the prefix range"),
    C("wb-fastlatest", "W12", q(fastLatest="true", fl="timestamp", **TXT), lines=10, differs="W12",
      note="warchive: limit=-1, 20220228103000"),
    C("wb-fastlatest-limit", "W12", q(fastLatest="true", limit="-2", fl="timestamp", **TXT), lines=0,
      differs="W12", note="warchive: 20220228100000 20220228103000"),
    C("wb-fastlatest-closest", "W12", q(fastLatest="true", closest="2020", limit="1", **TXT), lines=1,
      differs="W12", note="warchive: 400"),
    C("wb-show-resume-key", "W13 W14", q(showResumeKey="true", limit="3", fl="timestamp", **TXT), lines=3,
      differs="W14", note="warchive: 3 lines, an empty line, com%2Cexample%29%2F+20200101000000%212"),
    C("wb-show-resume-key-complete", "W14", q(showResumeKey="true", limit="20", fl="timestamp", **TXT), lines=10),
    C("wb-resume-key", "W13 W15", q(resumeKey="com%2Cexample%29%2F+20200101000000%21", fl="timestamp", **TXT),
      lines=10, differs="W15", note="warchive: the 7 captures after 20200101000000"),
    C("wb-resume-key-k", "W13 W15", q(resumeKey="com,example)/ 20200101000000!1", fl="url", **TXT), lines=10,
      differs="W15", note="warchive: https://example.com/ at 20200101000000 and the 7 after"),
    C("wb-resume-key-json", "W14", q(showResumeKey="true", limit="1", output="json"), lines=1, differs="W14",
      note='warchive: a second line {"resumeKey": "com%2Cexample%29%2F+20190304050607%211"}'),
    C("wb-resume-key-link", "W14", q(showResumeKey="true", output="link"), lines=10, differs="W14",
      note="warchive: 400"),
    C("wb-resume-key-reverse", "W17", q(resumeKey="com,example)/ 2020!", sort="reverse", **TXT), lines=10,
      differs="W17", note="warchive: 400"),
    C("wb-resume-key-bogus", "W15", q(resumeKey="nonsense", **TXT), lines=10, differs="W15", note="warchive: 400"),
    C("wb-offset-ignored", "W20 R5", q(offset="3", fl="timestamp", **TXT), lines=10),
]
