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
    "zipnum": ["zipnum"],
    "zipnum_plus": ["zipnum", "revisits"],              # ZipNum merged with a plain file
}


@dataclass
class Case:
    """One query. ``expect``: what pywb must answer at least (checked by test_pywb_oracle.py).

    status      the HTTP status
    lines       None: any number; an int: exactly that many lines; "some": at least one
    contains    substrings the body must hold (bytes)
    differs     a rule of docs/cdx-api.md saying warchive deliberately answers otherwise
                (the differential test compares with that rule, not with pywb)
    """
    id: str
    rules: Sequence[str]
    params: dict
    sources: str = "timeline"
    layout: str = "auto"
    status: int = 200
    lines: object = "some"
    contains: Sequence[bytes] = ()
    differs: str = ""

    def check(self, status: int, ctype: str, body: bytes) -> str:
        if status != self.status:
            return f"status {status}, expected {self.status}"
        n = body.count(b"\n")
        if self.lines == "some" and not body:
            return "empty body, expected lines"
        if isinstance(self.lines, int) and n != self.lines:
            return f"{n} lines, expected {self.lines}"
        for c in self.contains:
            if c not in body:
                return f"{c!r} not in the body"
        return ""


def C(id: str, rules, params: dict, **kw) -> Case:
    return Case(id, [rules] if isinstance(rules, str) else list(rules), params, **kw)


CASES: List[Case] = []
