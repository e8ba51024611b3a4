"""Fuzz harnesses for the parsers of bytes held in memory: chunked bodies, ARC heads, CDX query
strings, HTML and CSS rewriting.

Each is a function of one ``bytes`` input, registered in tests/fuzz/harnesses.py (which says
what may escape: ArchiveError children). Where the API promises more than "no other
exception", the harness checks it, so a wrong answer is a finding too:

- chunked: ``decode_body`` of a chunked body equals what ``decoded_stream`` (the record
  payload path) yields for the same bytes, and un-chunked bodies come back unchanged.
- arc: ``parse_arc``'s head ends inside its buffer and its length is never negative; the
  record iterator reads the bytes as an ARC file (a filedesc record put in front).
- cdx_query: ``Index.answer`` of any query string over a small index answers (200, 400 or
  404, a body of bytes), never raises: a bad parameter is a 400 answer.
- html, css: the rewriters give bytes, the same however the input is cut into two chunks
  (their documented property).
"""

from __future__ import annotations

import io
import os
import tempfile
from typing import Optional

import atheris

from warchive.index.query import Index
from warchive.replay import css, html
from warchive.replay.urls import UrlRewriter
from warchive.warc import reader
from warchive.warc.arc import parse_arc
from warchive.warc.content import decode_body, decoded_stream

MAX_RECORDS = 64
ENCODINGS = (None, "gzip", "deflate", "br", "identity", "x-bogus")
PAGE = "20131010mp_/http://example.com/dir/page.html"
NOW = "20240101000000"
ARC_FILEDESC = (b"filedesc://fuzz.arc 0.0.0.0 20240102030405 text/plain 76\n"
                b"1 0 Fuzz\nURL IP-address Archive-date Content-type Archive-length\n\n")

# the index the query harness asks: CDXJ lines of two URLs, captures at several times, a revisit
CDXJ_LINES = [
    b'com,example)/ 20200101000000 {"url": "http://example.com/", "mime": "text/html", "status": "200", '
    b'"digest": "sha1:AAAA", "length": "100", "offset": "0", "filename": "a.warc.gz"}',
    b'com,example)/ 20210101000000 {"url": "http://example.com/", "mime": "warc/revisit", "status": "-", '
    b'"digest": "sha1:AAAA", "length": "50", "offset": "100", "filename": "a.warc.gz"}',
    b'com,example)/a?b=1 20200102030405 {"url": "http://example.com/a?b=1", "mime": "text/css", '
    b'"status": "404", "digest": "sha1:BBBB", "length": "5", "offset": "150", "filename": "b.warc"}',
    b'org,example,www)/x 20190101000000 {"url": "https://www.example.org/x", "mime": "image/png", '
    b'"status": "301", "digest": "sha1:CCCC", "length": "7", "offset": "9", "filename": "c.warc.gz"}',
]
_TMP = tempfile.mkdtemp(prefix="warchive-fuzz-q-")
_CDXJ = os.path.join(_TMP, "index.cdxj")
with open(_CDXJ, "wb") as _f:
    _f.write(b"\n".join(CDXJ_LINES) + b"\n")
_INDEX: Optional[Index] = None


def fuzz_chunked(data: bytes) -> None:
    """A chunked body (then Content-Encoding picked by the first byte) as the fetcher decodes it."""
    if not data:
        return
    enc = ENCODINGS[data[0] % len(ENCODINGS)]
    body = data[1:]
    got = decode_body(body, "chunked", enc)
    if not isinstance(got, bytes):
        raise AssertionError(f"decode_body gave {type(got).__name__}")
    streamed = io.BufferedReader(decoded_stream(io.BytesIO(body), chunked=True, encoding=enc)).read()
    if streamed != got:
        raise AssertionError(f"decode_body {got[:80]!r} != decoded_stream {streamed[:80]!r}")
    if decode_body(body, None, None) != body or decode_body(body, " Identity ", None) != body:
        raise AssertionError("a body with no encoding changed")


def fuzz_arc(data: bytes) -> None:
    """parse_arc on the bytes, then the record iterator over them after a filedesc record."""
    head = parse_arc(data)
    if head is not None:
        if not 0 < head.end <= len(data) and data:
            raise AssertionError(f"head end {head.end} outside the buffer of {len(data)} bytes")
        if head.length < 0:
            raise AssertionError(f"negative length {head.length}")
        head.headers.get("WARC-Target-URI")
    n = 0
    for rec in reader.open(io.BytesIO(ARC_FILEDESC + data)):
        rec.payload.read(1 << 16)
        n += 1
        if n >= MAX_RECORDS:
            break


def _index() -> Index:
    global _INDEX
    if _INDEX is None:
        _INDEX = Index(_CDXJ)
        _INDEX.engine.now = lambda: NOW     # closest/fuzzy queries do not depend on the clock
    return _INDEX


def fuzz_cdx_query(data: bytes) -> None:
    """A CDX server query string answered over CDXJ_LINES: an answer, whatever the string."""
    qs = data.decode("utf-8", "surrogateescape")
    a = _index().answer(qs)
    if a.status not in (200, 400, 404):
        raise AssertionError(f"status {a.status} for {qs[:200]!r}")
    for chunk in a.body:
        if not isinstance(chunk, bytes):
            raise AssertionError(f"a body chunk of type {type(chunk).__name__}")


def _two_ways(rewrite: bytes, feed: object, body: bytes, cut: int) -> None:
    if not isinstance(rewrite, bytes):
        raise AssertionError(f"rewrite gave {type(rewrite).__name__}")
    r = feed
    out = r.feed(body[:cut]) + r.feed(body[cut:]) + r.close()   # type: ignore[attr-defined]
    if out != rewrite:
        raise AssertionError(f"cut at {cut}: {out[:120]!r} != {rewrite[:120]!r}")


def fuzz_html(data: bytes) -> None:
    """HTML rewriting (scripts on or off, a charset or none) whole, and cut in two."""
    fdp = atheris.FuzzedDataProvider(data)
    scripts = fdp.ConsumeBool()
    encoding = (None, "utf-8", "windows-1252", "utf-16", "shift_jis")[fdp.ConsumeIntInRange(0, 4)]
    cut = fdp.ConsumeIntInRange(0, 1 << 16)
    body = fdp.ConsumeBytes(fdp.remaining_bytes())
    rw = UrlRewriter(PAGE, "/coll/")
    whole = html.rewrite(body, rw, encoding=encoding, scripts=scripts)
    _two_ways(whole, html.HtmlRewriter(UrlRewriter(PAGE, "/coll/"), encoding=encoding, scripts=scripts),
              body, min(cut, len(body)))


def fuzz_css(data: bytes) -> None:
    """CSS rewriting whole, and cut in two."""
    fdp = atheris.FuzzedDataProvider(data)
    cut = fdp.ConsumeIntInRange(0, 1 << 16)
    body = fdp.ConsumeBytes(fdp.remaining_bytes())
    whole = css.rewrite(body, UrlRewriter(PAGE, "/coll/"))
    _two_ways(whole, css.CssRewriter(UrlRewriter(PAGE, "/coll/")), body, min(cut, len(body)))
