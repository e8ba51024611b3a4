"""Deterministic WARC and ARC fixture writers for warchive's tests.

Every function writes one file into a given directory and returns what it
wrote: the same call always produces the same bytes (fixed record ids, fixed
dates, gzip headers with mtime 0, no randomness). Ordinary records go through
warcio's ``WARCWriter`` (one gzip member per record, as warcio writes them);
records warcio would normalise on the way out (odd status lines, raw Latin-1
header bytes, missing digests or lengths) and whole files warcio cannot write
(ARC, broken files, Wget ``sl`` members) are assembled by hand here.

This module is test data, not a second implementation: it must not import
warchive, and the expectations it records (record types, target URIs, byte
offsets of damage) come from how the bytes were built, never from a reader.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import json
import struct
import uuid
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

import urlgen

DATE = "2024-01-02T03:04:05Z"
ARC_DATE = "20240102030405"
_NS = uuid.UUID("6f1c5e0a-2b7d-4d8e-9a43-5b0c7d1e2f30")

HTML = (b"<!doctype html>\n<html><head><title>Example</title></head>\n"
        b"<body><p>Hello, archive.</p><a href=\"/next\">next</a></body></html>\n")


def rid(name: str) -> str:
    """A WARC-Record-ID fixed by ``name`` (uuid5), so files never change."""
    return f"<urn:uuid:{uuid.uuid5(_NS, name)}>"


def sha1_b32(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def png_1x1() -> bytes:
    """A valid 1x1 grey PNG built from its chunks (no binary blob in the repo)."""
    def chunk(tag: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + tag + data
                + struct.pack(">I", zlib.crc32(tag + data) & 0xFFFFFFFF))
    ihdr = struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0)
    idat = zlib.compress(b"\x00\x80", 9)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


# --------------------------------------------------------------------------- records

@dataclass
class Rec:
    """One record: how to make it, and what a reader must report for it.

    ``rtype`` and ``uri`` are the WARC-Type and WARC-Target-URI as warcio
    reports them (after its own fixes: ``<...>`` stripped, spaces as %20,
    undecodable bytes read as Latin-1).
    """
    rtype: str
    uri: Optional[str]
    make: Optional[Callable[[WARCWriter], object]] = None   # warcio-built
    raw: Optional[bytes] = None                             # exact uncompressed bytes
    version: str = "WARC/1.0"

    def plain(self) -> bytes:
        if self.raw is not None:
            return self.raw
        buf = io.BytesIO()
        w = WARCWriter(buf, gzip=False, warc_version=self.version)
        w.write_record(self.make(w))
        return buf.getvalue()

    def member(self) -> bytes:
        if self.raw is not None:
            return gzip_member(self.raw)
        buf = io.BytesIO()
        w = WARCWriter(buf, gzip=True, warc_version=self.version)
        w.write_record(self.make(w))
        return buf.getvalue()


def gzip_member(data: bytes, level: int = 9) -> bytes:
    """One gzip member the way warcio's GzippingWrapper writes it (mtime 0)."""
    c = zlib.compressobj(level, zlib.DEFLATED, zlib.MAX_WBITS + 16)
    return c.compress(data) + c.flush()


def _wh(rtype: str, name: str, uri: Optional[str] = None, date: str = DATE, **extra) -> dict:
    d = {"WARC-Type": rtype, "WARC-Record-ID": rid(name), "WARC-Date": date}
    if uri is not None:
        d["WARC-Target-URI"] = uri
    d.update(extra)
    return d


def w_http(rtype: str, name: str, uri: str, proto: str, statusline: str,
           headers: list, body: bytes = b"", version: str = "WARC/1.0",
           date: str = DATE, **extra) -> Rec:
    """A request/response/revisit with HTTP head, written by warcio.

    For a request, ``proto`` is the method and ``statusline`` is
    ``"/path HTTP/1.1"`` (warcio's StatusAndHeaders convention).
    """
    def make(w: WARCWriter):
        http = StatusAndHeaders(statusline, list(headers), protocol=proto)
        return w.create_warc_record(uri, rtype, payload=io.BytesIO(body), length=len(body),
                                    http_headers=http,
                                    warc_headers_dict=_wh(rtype, name, uri, date, **extra))
    return Rec(rtype, uri, make=make, version=version)


def w_block(rtype: str, name: str, uri: Optional[str], content_type: str, block: bytes,
            version: str = "WARC/1.0", date: str = DATE, **extra) -> Rec:
    """A record without HTTP head (resource, metadata, warcinfo, non-HTTP response)."""
    def make(w: WARCWriter):
        return w.create_warc_record(uri or "", rtype, payload=io.BytesIO(block), length=len(block),
                                    warc_content_type=content_type,
                                    warc_headers_dict=_wh(rtype, name, uri, date, **extra))
    return Rec(rtype, uri, make=make, version=version)


def raw_warc(headers: list, block: bytes, *, version: bytes = b"WARC/1.0",
             content_length: Optional[int] = None, digests: bool = True,
             http: bool = False) -> bytes:
    """Exact bytes of a WARC record, for what warcio's writer would normalise.

    ``headers`` are (name, value) pairs of str or bytes (bytes go out
    untouched). Content-Length (the real block length unless given) is
    appended; so are sha1 block and payload digests when ``digests``
    (payload = block after the HTTP head when ``http``).
    """
    def b(x):
        return x if isinstance(x, bytes) else x.encode("utf-8")
    hs = [(b(k), b(v)) for k, v in headers]
    if digests:
        payload = block.split(b"\r\n\r\n", 1)[1] if http and b"\r\n\r\n" in block else block
        hs.append((b"WARC-Block-Digest", sha1_b32(block).encode()))
        hs.append((b"WARC-Payload-Digest", sha1_b32(payload).encode()))
    cl = len(block) if content_length is None else content_length
    hs.append((b"Content-Length", str(cl).encode()))
    head = version + b"\r\n" + b"".join(k + b": " + v + b"\r\n" for k, v in hs) + b"\r\n"
    return head + block + b"\r\n\r\n"


def r_rec(rtype: str, name: str, uri, content_type, block: bytes, *, uri_as_read=None,
          version: bytes = b"WARC/1.0", date: str = DATE, digests: bool = True,
          http: Optional[bool] = None, extra: tuple = ()) -> Rec:
    """A hand-written record; ``uri`` may be bytes (written raw)."""
    hs = [("WARC-Type", rtype), ("WARC-Record-ID", rid(name)), ("WARC-Date", date)]
    if uri is not None:
        hs.append(("WARC-Target-URI", uri))
    hs.extend(extra)
    if content_type is not None:
        hs.append(("Content-Type", content_type))
    if http is None:
        http = rtype in ("request", "response", "revisit")
    raw = raw_warc(hs, block, version=version, digests=digests, http=http)
    if uri_as_read is None:
        uri_as_read = uri.decode("latin-1") if isinstance(uri, bytes) else uri
    return Rec(rtype, uri_as_read, raw=raw)


def http_bytes(first: bytes, headers: list, body: bytes = b"", eol: bytes = b"\r\n") -> bytes:
    def b(x):
        return x if isinstance(x, bytes) else x.encode("utf-8")
    return first + eol + b"".join(b(k) + b": " + b(v) + eol for k, v in headers) + eol + body


def pair(name: str, uri: str, method: str, path: str, req_headers: list, req_body: bytes,
         resp_headers: Optional[list] = None, resp_body: bytes = b'{"ok": true}\n',
         status: str = "200 OK", response_first: bool = False, link: bool = True) -> list:
    """A request and its response, linked as cdxj-indexer joins them.

    The second record's WARC-Concurrent-To names the first one's record id
    (request first by default; ``response_first`` is warcio's own order).
    """
    if resp_headers is None:
        resp_headers = [("Content-Type", "application/json"), ("Content-Length", str(len(resp_body)))]
    req_id, resp_id = name + "/request", name + "/response"
    req_extra, resp_extra = {}, {}
    if link:
        if response_first:
            req_extra["WARC-Concurrent-To"] = rid(resp_id)
        else:
            resp_extra["WARC-Concurrent-To"] = rid(req_id)
    req = w_http("request", req_id, uri, method, f"{path} HTTP/1.1", req_headers, req_body, **req_extra)
    resp = w_http("response", resp_id, uri, "HTTP/1.1", status, resp_headers, resp_body, **resp_extra)
    return [resp, req] if response_first else [req, resp]


def get_pair(name: str, uri: str, path: str, status: str = "200 OK", headers: Optional[list] = None,
             body: bytes = HTML, response_first: bool = False) -> list:
    host = uri.split("/")[2] if "://" in uri else "example.com"
    if headers is None:
        headers = [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body)))]
    return pair(name, uri, "GET", path, [("Host", host), ("User-Agent", "warchive-tests/1.0"),
                                         ("Accept", "*/*")], b"",
                headers, body, status, response_first)


def warcinfo(name: str, filename: str, version: str = "WARC/1.0") -> Rec:
    fields = (f"software: warchive-tests warcgen\r\nformat: WARC File Format {version[5:]}\r\n"
              f"isPartOf: warcgen\r\nhostname: fixtures.invalid\r\n").encode()
    return w_block("warcinfo", name, None, "application/warc-fields", fields,
                   version=version, **{"WARC-Filename": filename})


# --------------------------------------------------------------------------- record sets

def recs_get_pairs() -> list:
    """warcinfo; GET request+response pairs: 200 HTML, 404, 301 and 302 redirects,
    one pair in warcio's response-then-request order."""
    body404 = b"<html><body>Not Found</body></html>\n"
    return ([warcinfo("get/info", "get_pairs.warc.gz")]
            + get_pair("get/root", "http://example.com/", "/")
            + get_pair("get/404", "http://example.com/missing", "/missing", "404 Not Found",
                       [("Content-Type", "text/html"), ("Content-Length", str(len(body404)))], body404)
            + get_pair("get/301", "http://example.com/old", "/old", "301 Moved Permanently",
                       [("Location", "http://example.com/new"), ("Content-Length", "0")], b"")
            + get_pair("get/302", "http://www.example.com/login?next=%2Fhome", "/login?next=%2Fhome",
                       "302 Found", [("Location", "/home"), ("Content-Type", "text/html"),
                                     ("Content-Length", "0")], b"")
            + get_pair("get/css", "http://example.com/style.css", "/style.css", "200 OK",
                       [("Content-Type", "text/css"), ("Content-Length", "21")],
                       b"body { color: red; }\n", response_first=True))


def recs_chunked() -> list:
    """Responses with Transfer-Encoding: chunked, the raw chunked body kept as
    received (chunk extension, trailer, chunked+gzip, a body that is not
    really chunked)."""
    chunked = b"5\r\nHello\r\n8;ext=1\r\n, chunks\r\n0\r\n\r\n"
    trailer = b"4\r\nWiki\r\n5\r\npedia\r\n0\r\nX-Trailer: yes\r\n\r\n"
    gz = gzip.compress(HTML, mtime=0)
    gz_chunked = b"".join(b"%x\r\n" % len(gz[i:i + 40]) + gz[i:i + 40] + b"\r\n"
                          for i in range(0, len(gz), 40)) + b"0\r\n\r\n"
    fake = b"this body is not chunked at all\n"
    return (get_pair("chunk/plain", "http://example.com/chunked", "/chunked", "200 OK",
                     [("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")], chunked)
            + get_pair("chunk/trailer", "http://example.com/chunked-trailer", "/chunked-trailer", "200 OK",
                       [("Content-Type", "text/plain; charset=utf-8"),
                        ("Transfer-Encoding", "chunked")], trailer)
            + get_pair("chunk/gzip", "http://example.com/chunked-gzip", "/chunked-gzip", "200 OK",
                       [("Content-Type", "text/html"), ("Content-Encoding", "gzip"),
                        ("Transfer-Encoding", "chunked")], gz_chunked)
            + get_pair("chunk/fake", "http://example.com/not-chunked", "/not-chunked", "200 OK",
                       [("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")], fake))


def recs_gzip_encoding() -> list:
    """Content-Encoding gzip and deflate bodies, and a body labelled gzip that is not."""
    gz = gzip.compress(HTML, mtime=0)
    dfl = zlib.compress(HTML, 9)
    return (get_pair("ce/gzip", "http://example.com/gzipped.html", "/gzipped.html", "200 OK",
                     [("Content-Type", "text/html; charset=utf-8"), ("Content-Encoding", "gzip"),
                      ("Content-Length", str(len(gz)))], gz)
            + get_pair("ce/deflate", "http://example.com/deflated.html", "/deflated.html", "200 OK",
                       [("Content-Type", "text/html"), ("Content-Encoding", "deflate"),
                        ("Content-Length", str(len(dfl)))], dfl)
            + get_pair("ce/liar", "http://example.com/not-gzipped.html", "/not-gzipped.html", "200 OK",
                       [("Content-Type", "text/html"), ("Content-Encoding", "gzip"),
                        ("Content-Length", str(len(HTML)))], HTML))


def _raw_resp(name: str, uri: str, http: bytes, **kw) -> Rec:
    return r_rec("response", name, uri, "application/http; msgtype=response", http, **kw)


def recs_odd_status() -> list:
    """Hand-written responses warcio's writer would normalise: status line
    without reason, double space, lowercase protocol and header names, LF-only
    head, non-numeric status, Content-Type with charset / uppercase / leading
    spaces / ';' only / empty / folded onto two lines, missing and duplicate
    Content-Type, a header line without colon."""
    body = b"<p>odd</p>\n"
    L = str(len(body)).encode()
    cases = [
        ("no-reason", b"HTTP/1.1 200\r\nContent-Type: text/html\r\nContent-Length: " + L + b"\r\n\r\n" + body),
        ("double-space", b"HTTP/1.0  200 OK\r\nContent-Type: text/html\r\n\r\n" + body),
        ("lowercase", b"http/1.1 200 ok\r\ncontent-type: text/html; charset=iso-8859-1\r\n"
                      b"content-length: " + L + b"\r\n\r\n" + body),
        ("lf-only", b"HTTP/1.1 200 OK\nContent-Type: text/plain\nContent-Length: " + L + b"\n\n" + body),
        ("status-word", b"HTTP/1.1 OK\r\nContent-Type: text/html\r\n\r\n" + body),
        ("ct-upper", b"HTTP/1.1 200 OK\r\nContent-Type: Text/HTML; Charset=UTF-8\r\n\r\n" + body),
        ("ct-spaces", b"HTTP/1.1 200 OK\r\nContent-Type:    text/plain  \r\n\r\n" + body),
        ("ct-space-semi", b"HTTP/1.1 200 OK\r\nContent-Type: text/html ;charset=utf-8\r\n\r\n" + body),
        ("ct-semi", b"HTTP/1.1 200 OK\r\nContent-Type: ;\r\n\r\n" + body),
        ("ct-empty", b"HTTP/1.1 200 OK\r\nContent-Type:\r\n\r\n" + body),
        ("ct-folded", b"HTTP/1.1 200 OK\r\nContent-Type: text/html;\r\n charset=utf-8\r\n\r\n" + body),
        ("ct-missing", b"HTTP/1.1 200 OK\r\nContent-Length: " + L + b"\r\n\r\n" + body),
        ("ct-duplicate", b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Type: text/html\r\n\r\n" + body),
        ("no-colon", b"HTTP/1.1 200 OK\r\nThis line has no colon\r\nContent-Type: text/css\r\n\r\n" + body),
        ("head-only", b"HTTP/1.1 204 No Content\r\n\r\n"),
        ("500", b"HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain\r\n\r\noops\n"),
    ]
    return [_raw_resp("odd/" + n, f"http://odd.example.com/{n}", h) for n, h in cases]


def _form(name, uri, path, ctype, body, method="POST", with_length=True, **kw):
    h = [("Host", uri.split("/")[2])]
    if ctype is not None:
        h.append(("Content-Type", ctype))
    if with_length:
        h.append(("Content-Length", str(len(body))))
    return pair(name, uri, method, path, h, body, **kw)


def recs_post_put() -> list:
    """POST and PUT request/response pairs for cdxj-indexer's ``-p``: form
    urlencoded (with + and %xx), multipart (text field and file upload, and
    one without boundary), JSON (nested, lists, duplicate keys, invalid,
    JSON lines), text/plain JSON and non-JSON, octet-stream binary, no
    Content-Type, no Content-Length, empty body, lowercase ``post``, a body
    longer than cdxj-indexer's 4096-character cap, response-then-request
    order, and a POST pair that is NOT linked (no WARC-Concurrent-To)."""
    bnd = "----warcgenBoundary7MA4YWxk"
    multipart = (f"--{bnd}\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHello + world & co\r\n"
                 f"--{bnd}\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"a.bin\"\r\n"
                 f"Content-Type: application/octet-stream\r\n\r\n").encode() + b"\x00\x01\xfe\xff bin" + (
                 f"\r\n--{bnd}--\r\n").encode()
    nested = json.dumps({"user": {"name": "Ann", "tags": ["a", "b"], "age": 30},
                         "items": [{"id": 1}, {"id": 2, "name": "dup"}], "ok": True, "none": None}).encode()
    dupkeys = b'{"a": 1, "a": 2, "b": {"a": 3}, "c": [{"a": 4}]}'
    big = ("q=" + "x" * 6000).encode()
    binary = bytes(range(256))
    u = "http://forms.example.com"
    return (
        _form("post/urlenc", u + "/submit", "/submit", "application/x-www-form-urlencoded; charset=UTF-8",
              b"name=J%C3%BCrgen+M&city=S%C3%A3o+Paulo&plus=%2B&amp=a%26b&empty=")
        + _form("post/urlenc-query", u + "/submit?lang=en", "/submit?lang=en",
                "application/x-www-form-urlencoded", b"a=1&b=two+words")
        + _form("post/multipart", u + "/upload", "/upload", f"multipart/form-data; boundary={bnd}", multipart)
        + _form("post/multipart-noboundary", u + "/upload2", "/upload2", "multipart/form-data", multipart)
        + _form("post/json", u + "/api", "/api", "application/json", nested)
        + _form("post/json-dupkeys", u + "/api/dup", "/api/dup", "application/json; charset=utf-8", dupkeys)
        + _form("post/json-invalid", u + "/api/bad", "/api/bad", "application/json", b"{not json")
        + _form("post/json-lines", u + "/api/lines", "/api/lines", "application/json",
                b'{"a": 1}\n{"b": 2}')
        + _form("post/text-json", u + "/text-json", "/text-json", "text/plain;charset=UTF-8", b'{"t": "yes"}')
        + _form("post/text-plain", u + "/text", "/text", "text/plain", b"just some text, not json")
        + _form("post/octet", u + "/bin", "/bin", "application/octet-stream", binary)
        + _form("post/no-ctype", u + "/noct", "/noct", None, b"a=1")
        + _form("post/no-length", u + "/nolen", "/nolen", "application/x-www-form-urlencoded",
                b"x=no+length", with_length=False)
        + _form("post/empty", u + "/empty", "/empty", "application/x-www-form-urlencoded", b"")
        + _form("post/lowercase", u + "/lower", "/lower", "application/x-www-form-urlencoded", b"low=1",
                method="post")
        + _form("post/big", u + "/big", "/big", "application/x-www-form-urlencoded", big)
        + _form("put/json", u + "/api/item/7", "/api/item/7", "application/json", b'{"id": 7, "v": [1, 2]}',
                method="PUT")
        + _form("put/octet", u + "/blob", "/blob", "application/octet-stream", b"\x89PNG\r\n",
                method="PUT", response_first=True)
        + _form("post/resp-first", u + "/rf", "/rf", "application/x-www-form-urlencoded", b"order=resp-first",
                response_first=True)
        + _form("post/unlinked", u + "/unlinked", "/unlinked", "application/x-www-form-urlencoded",
                b"linked=no", link=False)
    )


def recs_revisits() -> list:
    """Revisits: identical-payload-digest with HTTP headers, empty (no HTTP
    head, Content-Length 0), URL-agnostic (Refers-To-Target-URI elsewhere),
    Wget-style (only WARC-Refers-To), one without WARC-Payload-Digest, and a
    server-not-modified 304."""
    orig_uri = "http://example.com/page.html"
    orig = get_pair("rv/orig", orig_uri, "/page.html")
    digest = sha1_b32(HTML)
    hdrs = [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(HTML)))]

    def revisit(name, uri, http_headers, refers_uri=orig_uri, refers_date=DATE, digest_=digest):
        def make(w):
            http = StatusAndHeaders("200 OK", list(http_headers), protocol="HTTP/1.1") if http_headers else None
            r = w.create_revisit_record(uri, digest_, refers_uri, refers_date, http_headers=http,
                                        warc_headers_dict=_wh("revisit", name, uri))
            r.rec_headers.add_header("WARC-Refers-To", rid("rv/orig/response"))
            return r
        return Rec("revisit", uri, make=make)

    def make_plain(name, uri, extra, status="200 OK", with_http=True):
        def make(w):
            http = StatusAndHeaders(status, list(hdrs), protocol="HTTP/1.1") if with_http else None
            return w.create_warc_record(uri, "revisit", http_headers=http,
                                        warc_headers_dict=_wh("revisit", name, uri, **extra))
        return Rec("revisit", uri, make=make)

    profile = "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"
    return orig + [
        revisit("rv/http", orig_uri, hdrs),
        revisit("rv/empty", orig_uri, None),
        revisit("rv/agnostic", "http://mirror.example.org/copy.html", hdrs),
        make_plain("rv/wget", orig_uri, {"WARC-Refers-To": rid("rv/orig/response"), "WARC-Profile": profile,
                                         "WARC-Payload-Digest": digest}),
        make_plain("rv/nodigest", orig_uri, {"WARC-Refers-To": rid("rv/orig/response"),
                                             "WARC-Profile": profile}),
        make_plain("rv/304", orig_uri, {"WARC-Profile":
                                        "http://netpreserve.org/warc/1.0/revisit/server-not-modified"},
                   status="304 Not Modified"),
    ]


def recs_resource_metadata() -> list:
    """warcinfo, resource (text/plain, image/png, application/warc-fields),
    metadata (application/warc-fields — excluded by cdxj-indexer by default —
    and application/json), and a metadata record without Content-Type."""
    outlinks = b"outlink: http://example.com/next L a/@href\r\nvia: http://example.com/\r\n"
    return [
        warcinfo("res/info", "resource_metadata.warc.gz"),
        w_block("resource", "res/txt", "http://example.com/notes.txt", "text/plain; charset=utf-8",
                b"plain notes\n"),
        w_block("resource", "res/png", "http://example.com/pixel.png", "image/png", png_1x1()),
        w_block("resource", "res/fields", "http://example.com/fields", "application/warc-fields",
                b"a: b\r\n"),
        w_block("metadata", "res/meta-fields", "http://example.com/", "application/warc-fields", outlinks,
                **{"WARC-Concurrent-To": rid("get/root/response")}),
        w_block("metadata", "res/meta-json", "http://example.com/", "application/json",
                b'{"screenshot": false}'),
        r_rec("metadata", "res/meta-noct", "http://example.com/", None, b"no content type\n"),
    ]


def recs_no_payload_digest() -> list:
    """Records without WARC-Payload-Digest (cdxj-indexer computes one):
    response, chunked response, empty-payload response, resource, metadata,
    and a POST request (indexed with --records all)."""
    resp = http_bytes(b"HTTP/1.1 200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(HTML)))], HTML)
    chunked = http_bytes(b"HTTP/1.1 200 OK", [("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")],
                         b"6\r\nchunky\r\n0\r\n\r\n")
    empty = http_bytes(b"HTTP/1.1 200 OK", [("Content-Type", "text/plain"), ("Content-Length", "0")])
    req = http_bytes(b"POST /nd HTTP/1.1", [("Host", "nodigest.example.com"), ("Content-Length", "3"),
                                            ("Content-Type", "application/x-www-form-urlencoded")], b"a=1")
    u = "http://nodigest.example.com"
    return [
        r_rec("response", "nd/resp", u + "/", "application/http; msgtype=response", resp, digests=False),
        r_rec("response", "nd/chunked", u + "/chunked", "application/http; msgtype=response", chunked,
              digests=False),
        r_rec("response", "nd/empty", u + "/empty", "application/http; msgtype=response", empty, digests=False),
        r_rec("resource", "nd/res", u + "/r.txt", "text/plain", b"resource without digest\n", digests=False),
        r_rec("metadata", "nd/meta", u + "/", "application/json", b'{"m": 1}', digests=False),
        r_rec("request", "nd/req", u + "/nd", "application/http; msgtype=request", req, digests=False),
        r_rec("response", "nd/req-resp", u + "/nd", "application/http; msgtype=response", resp, digests=False,
              extra=(("WARC-Concurrent-To", rid("nd/req")),)),
    ]


def recs_versions() -> list:
    """WARC/1.1 with fractional-second WARC-Date (6, 3 and 1 digits), WARC/1.0."""
    out = [warcinfo("ver/info", "versions.warc.gz", version="WARC/1.1")]
    for i, date in enumerate(["2024-01-02T03:04:05.123456Z", "2024-01-02T03:04:05.250Z",
                              "2024-12-31T23:59:59.9Z"]):
        out += [w_http("response", f"ver/11-{i}", f"http://v11.example.com/{i}", "HTTP/1.1", "200 OK",
                       [("Content-Type", "text/plain"), ("Content-Length", "3")], b"v11",
                       version="WARC/1.1", date=date)]
    out += [w_http("response", "ver/10", "http://v10.example.com/", "HTTP/1.1", "200 OK",
                   [("Content-Type", "text/plain"), ("Content-Length", "3")], b"v10",
                   version="WARC/1.0", date="1999-12-31T23:59:59Z")]
    return out


def recs_non_http() -> list:
    """Target URIs that are not http(s): dns: response, ftp: resource and
    response, urn: resource, whois: response."""
    dns = b"20240102030405\nexample.com.\t300\tIN\tA\t93.184.216.34\n"
    return [
        w_block("response", "nh/dns", "dns:example.com", "text/dns", dns),
        w_block("resource", "nh/ftp-res", "ftp://ftp.example.com/pub/README", "text/plain", b"ftp readme\n"),
        w_block("response", "nh/ftp-resp", "ftp://ftp.example.com/pub/data.bin", "application/octet-stream",
                b"\x00\x01\x02"),
        w_block("resource", "nh/urn", "urn:x-warcgen:test:1", "text/plain", b"urn resource\n"),
        w_block("response", "nh/whois", "whois://whois.example.net/example.com", "text/plain",
                b"Domain Name: EXAMPLE.COM\n"),
    ]


def recs_unicode_urls() -> list:
    """IDN host (Unicode and punycode), UTF-8 path and query, percent-encoded,
    a URI with spaces (warcio reads it with %20), Wget's ``<...>`` brackets,
    raw Latin-1 (non-UTF-8) bytes in WARC-Target-URI and in HTTP headers."""
    body = b"<p>unicode</p>\n"
    hdr = [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body)))]
    latin_http = http_bytes(b"HTTP/1.1 302 Found",
                            [(b"Location", b"http://example.com/caf\xe9/menu"),
                             (b"Content-Type", b"text/x-caf\xe9; charset=latin-1"),
                             (b"X-Note", b"na\xefve \xa9 2024")], body)
    return (
        get_pair("uni/idn", "http://bücher.example/straße?q=ü", "/stra%C3%9Fe?q=%C3%BC", headers=hdr, body=body)
        + get_pair("uni/puny", "http://xn--bcher-kva.example/", "/", headers=hdr, body=body)
        + get_pair("uni/path", "http://example.com/日本/ümlaut?q=naïve&x=日本", "/x", headers=hdr, body=body)
        + get_pair("uni/pct", "http://example.com/%E6%97%A5%E6%9C%AC/%C3%BC?q=%C3%A9&sp=a%20b", "/x",
                   headers=hdr, body=body)
        + [
            r_rec("response", "uni/space", "http://example.com/a b/c d.html?x=1 2",
                  "application/http; msgtype=response", http_bytes(b"HTTP/1.1 200 OK", hdr, body),
                  uri_as_read="http://example.com/a%20b/c%20d.html?x=1%202"),
            r_rec("response", "uni/angle", "<http://example.com/wget-style>",
                  "application/http; msgtype=response", http_bytes(b"HTTP/1.1 200 OK", hdr, body),
                  uri_as_read="http://example.com/wget-style"),
            r_rec("response", "uni/latin1", b"http://example.com/caf\xe9?q=\xfc",
                  "application/http; msgtype=response", latin_http),
        ]
    )


RECORD_SETS = {
    "get_pairs": recs_get_pairs,
    "chunked": recs_chunked,
    "gzip_encoding": recs_gzip_encoding,
    "odd_status": recs_odd_status,
    "post_put": recs_post_put,
    "revisits": recs_revisits,
    "resource_metadata": recs_resource_metadata,
    "no_payload_digest": recs_no_payload_digest,
    "versions": recs_versions,
    "non_http": recs_non_http,
    "unicode_urls": recs_unicode_urls,
}


def recs_kitchen_sink() -> list:
    """Every record set above in one file, revisits last: cdxj-indexer's
    --cdx11 crashes on a revisit without WARC-Payload-Digest, and with those
    two at the very end its partial output still covers everything else."""
    order = [n for n in RECORD_SETS if n != "revisits"] + ["revisits"]
    return [r for n in order for r in RECORD_SETS[n]()]


# --------------------------------------------------------------------------- valid files

@dataclass
class Fixture:
    """A valid archive and the records (WARC-Type, target URI) it holds, in order."""
    path: Path
    what: str
    records: list = field(default_factory=list)   # [(rtype, uri)]
    member_offsets: Optional[list] = None          # start of each gzip member / record, and the file size
    id: str = ""                                   # the name tests know it by (file name, or wget/NAME)


def _write(path: Path, chunks: list) -> list:
    offsets, pos = [], 0
    with open(path, "wb") as fh:
        for c in chunks:
            offsets.append(pos)
            fh.write(c)
            pos += len(c)
    return offsets + [pos]


def write_warc(directory, name: str, recs: list, gz: bool = True, what: str = "") -> Fixture:
    """Write ``recs`` as ``name.warc.gz`` (a member per record) or ``name.warc``."""
    path = Path(directory) / (name + (".warc.gz" if gz else ".warc"))
    chunks = [r.member() if gz else r.plain() for r in recs]
    offs = _write(path, chunks)
    return Fixture(path, what, [(r.rtype, r.uri) for r in recs], offs)


def _set_writer(set_name: str):
    make = RECORD_SETS[set_name]

    def writer(directory, gz: bool = True) -> Fixture:
        return write_warc(directory, set_name, make(), gz, (make.__doc__ or "").strip())
    writer.__name__ = f"write_{set_name}"
    writer.__doc__ = make.__doc__
    return writer


write_get_pairs = _set_writer("get_pairs")
write_chunked = _set_writer("chunked")
write_gzip_encoding = _set_writer("gzip_encoding")
write_odd_status = _set_writer("odd_status")
write_post_put = _set_writer("post_put")
write_revisits = _set_writer("revisits")
write_resource_metadata = _set_writer("resource_metadata")
write_no_payload_digest = _set_writer("no_payload_digest")
write_versions = _set_writer("versions")
write_non_http = _set_writer("non_http")
write_unicode_urls = _set_writer("unicode_urls")


def write_kitchen_sink(directory, gz: bool = True) -> Fixture:
    return write_warc(directory, "kitchen_sink", recs_kitchen_sink(), gz, recs_kitchen_sink.__doc__.strip())


# --------------------------------------------------------------------------- folded head values

FOLD = b"\r\n\t"        # a value moved onto a continuation line (``Name:`` CRLF TAB value)
ONE_LINE = b"   "         # the same value on the field's own line, as many bytes after the colon


def _fold(head: bytes, names: tuple, how: bytes) -> bytes:
    """The lines ``Name: value`` of head (CRLF lines) whose name is in names, written
    ``Name:`` how ``value``."""
    out = []
    for line in head.split(b"\r\n"):
        name, sep, value = line.partition(b": ")
        if sep and name.decode("latin-1") in names:
            line = name + b":" + how + value
        out.append(line)
    return b"\r\n".join(out)


def _fold_warc_head(rec: bytes, names: tuple, how: bytes) -> bytes:
    i = rec.index(b"\r\n\r\n")
    return _fold(rec[:i], names, how) + rec[i:]


def folded_records(how: bytes = FOLD) -> list:
    """WARC/0.17-1.0 records whose values sit on a continuation line from an empty first line
    (``WARC-Type:`` CRLF TAB ``metadata``), as some writers of those versions folded them, in
    the WARC head and the HTTP head; with how=ONE_LINE the same records with each such value
    on its field's own line after three spaces: the same length, the same offsets (warcio
    strips a value's leading white space on its first line, not on a continuation line).
    The raw bytes of a response, a POST request and its response, a metadata record (WARC/0.17)
    and a resource whose value spans two continuation lines (WARC/0.18)."""
    warc_names = ("WARC-Type", "WARC-Record-ID", "WARC-Date", "WARC-Target-URI", "Content-Length",
                  "WARC-Concurrent-To", "Content-Type")
    page = _fold(http_bytes(b"HTTP/1.1 200 OK", [("Content-Type", "text/html; charset=utf-8"),
                                                 ("Content-Length", str(len(HTML)))], HTML), ("Content-Type",), how)
    body = b"q=folded+heads&lang=en"
    post = _fold(http_bytes(b"POST /search HTTP/1.1", [("Host", "fold.example.com"),
                                                       ("Content-Type", "application/x-www-form-urlencoded"),
                                                       ("Content-Length", str(len(body)))], body),
                 ("Content-Type",), how)
    answer = http_bytes(b"HTTP/1.1 200 OK", [("Content-Type", "application/json")], b'{"hits": 2}\n')
    note = b"X-Note: first part\r\n\tsecond part"
    recs = [
        r_rec("response", "fold/page", "http://fold.example.com/", "application/http; msgtype=response", page),
        r_rec("request", "fold/post", "http://fold.example.com/search", "application/http; msgtype=request", post),
        r_rec("response", "fold/answer", "http://fold.example.com/search", "application/http; msgtype=response",
              answer, extra=(("WARC-Concurrent-To", rid("fold/post")),)),
        r_rec("metadata", "fold/meta", "http://fold.example.com/", "text/plain", b"via: folded heads\n",
              version=b"WARC/0.17"),
        r_rec("resource", "fold/notes", "http://fold.example.com/notes.txt", "text/plain", b"notes\n",
              version=b"WARC/0.18", extra=(("X-Note", "NOTE"),)),
    ]
    out = [_fold_warc_head(r.plain(), warc_names + ("X-Note",), how) for r in recs]
    out[-1] = out[-1].replace(b"NOTE", note[len(b"X-Note: "):])   # (folded on: a second continuation line)
    return out


# --------------------------------------------------------------------------- ARC

ARC_VERSION_BLOCK = b"1 0 warcgen\nURL IP-address Archive-date Content-type Archive-length\n"


def arc_record(url: bytes, ip: bytes, ctype: bytes, content: bytes, date: bytes = ARC_DATE.encode()) -> bytes:
    """``url ip-address archive-date content-type length`` line, content, LF."""
    return b" ".join([url, ip, date, ctype, str(len(content)).encode()]) + b"\n" + content + b"\n"


def arc_records(name: str) -> list:
    """(bytes, rtype, uri) of an ARC v1 file: the filedesc:// header record
    (version block) read by warcio as ``warcinfo`` without target URI, HTTP
    responses (200, 404, 301), and a dns: record."""
    def resp(status, headers, body):
        return http_bytes(b"HTTP/1.0 " + status, headers, body)
    page = resp(b"200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(HTML)))], HTML)
    nf = resp(b"404 Not Found", [("Content-Type", "text/html; charset=iso-8859-1")], b"<h1>404</h1>\n")
    mv = resp(b"301 Moved Permanently", [("Location", "http://arc.example.com/new"),
                                         ("Content-Type", "text/html")], b"")
    dns = b"20240102030405\narc.example.com.\t300\tIN\tA\t192.0.2.7\n"
    return [
        (arc_record(b"filedesc://" + name.encode(), b"0.0.0.0", b"text/plain", ARC_VERSION_BLOCK),
         "warcinfo", None),
        (arc_record(b"http://arc.example.com/", b"192.0.2.7", b"text/html", page), "response",
         "http://arc.example.com/"),
        (arc_record(b"http://arc.example.com/missing", b"192.0.2.7", b"text/html", nf), "response",
         "http://arc.example.com/missing"),
        (arc_record(b"http://arc.example.com/old", b"192.0.2.7", b"text/html", mv), "response",
         "http://arc.example.com/old"),
        (arc_record(b"dns:arc.example.com", b"192.0.2.1", b"text/dns", dns), "response", "dns:arc.example.com"),
    ]


def write_arc(directory, gz: bool = True) -> Fixture:
    """ARC v1 file (``.arc`` or ``.arc.gz`` with a gzip member per record)."""
    name = "example.arc" + (".gz" if gz else "")
    recs = arc_records(name)
    path = Path(directory) / name
    offs = _write(path, [gzip_member(b) if gz else b for b, _, _ in recs])
    return Fixture(path, arc_records.__doc__.strip(), [(t, u) for _, t, u in recs], offs)


SPACE_URLS = [   # (as written on the ARC line, as warcio presents it)
    (b"http://arc.example.com/index.cfm?FuseAction=Email&EmailTitle=Examples From The Live Web&IsPopUp=False",
     "http://arc.example.com/index.cfm?FuseAction=Email&EmailTitle=Examples%20From%20The%20Live%20Web&IsPopUp=False"),
    (b"http://arc.example.com/a b/c  d.html", "http://arc.example.com/a%20b/c%20%20d.html"),
    (b"http://arc.example.com/q?x=1 2 3 4 5", "http://arc.example.com/q?x=1%202%203%204%205"),
    (b"http://arc.example.com/plain", "http://arc.example.com/plain"),
]


def arc_space_records(name: str) -> list:
    """(bytes, rtype, uri) of an ARC v1 file whose URLs hold spaces, as IA's crawlers wrote the
    URLs of forms (``... Examples From The Live Web&IsPopUp=False 93.184.216.119 ...``): the
    fields are the last four of the line, split from the right, the URL the rest; one URL holds
    five words, as many as a line has fields; one holds none."""
    page = http_bytes(b"HTTP/1.1 200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(HTML)))], HTML)
    out = [(arc_record(b"filedesc://" + name.encode(), b"0.0.0.0", b"text/plain", ARC_VERSION_BLOCK), "warcinfo", None)]
    for k, (written, read) in enumerate(SPACE_URLS):
        out.append((arc_record(written, b"93.184.216.119", b"text/html", page, (b"2014021605022%d" % k)),
                    "response", read))
    return out


def write_arc_spaces(directory, gz: bool = True) -> Fixture:
    """ARC v1 file of URLs with spaces (``arc_space_records``), plain or a gzip member per record."""
    name = "arc_spaces.arc" + (".gz" if gz else "")
    recs = arc_space_records(name)
    path = Path(directory) / name
    offs = _write(path, [gzip_member(b) if gz else b for b, _, _ in recs])
    return Fixture(path, arc_space_records.__doc__.strip(), [(t, u) for _, t, u in recs], offs)


# --------------------------------------------------------------------------- gzip members, Wget `sl`

def split_members(data: bytes) -> list:
    """Split a multi-member gzip byte string into its members (by inflating)."""
    out, pos = [], 0
    while pos < len(data):
        d = zlib.decompressobj(zlib.MAX_WBITS + 16)
        d.decompress(data[pos:])
        if not d.eof:
            raise ValueError(f"gzip member at byte {pos} does not end")
        end = len(data) - len(d.unused_data)
        out.append(data[pos:end])
        pos = end
    return out


def sl_member(payload: bytes, level: int = 6, lengths: Optional[tuple] = None) -> bytes:
    """A gzip member carrying Wget's FEXTRA subfield ``sl``.

    Layout (RFC 1952 with FLG.FEXTRA):
      1f 8b 08 04 | MTIME=0 (4) | XFL=00 | OS=03 | XLEN=12 (2, LE)
      's' 'l' | LEN=8 (2, LE) | compressed member length (4, LE) | uncompressed length (4, LE)
      deflate data | CRC32 (4, LE) | ISIZE (4, LE)
    The compressed length counts the whole member, header and trailer
    included. ``lengths`` overrides the two values (to write stale ones).
    """
    c = zlib.compressobj(level, zlib.DEFLATED, -zlib.MAX_WBITS)
    deflated = c.compress(payload) + c.flush()
    total = 10 + 2 + 12 + len(deflated) + 8
    comp_len, raw_len = lengths if lengths is not None else (total, len(payload))
    extra = b"sl" + struct.pack("<HII", 8, comp_len & 0xFFFFFFFF, raw_len & 0xFFFFFFFF)
    head = b"\x1f\x8b\x08\x04" + b"\x00\x00\x00\x00" + b"\x00\x03" + struct.pack("<H", len(extra)) + extra
    trailer = struct.pack("<II", zlib.crc32(payload) & 0xFFFFFFFF, len(payload) & 0xFFFFFFFF)
    return head + deflated + trailer


def add_wget_skip_length(src, dst, stale: bool = False) -> Fixture:
    """Rewrite any ``.warc.gz`` so that every member carries an ``sl`` field.

    Each member is inflated and deflated again (zlib level 6, as Wget). With
    ``stale``, every ``sl`` holds wrong values: the compressed length of the
    source member (before recompression, so it no longer matches; nudged by 7
    where it happens to match) and the uncompressed length plus 13.
    """
    members = split_members(Path(src).read_bytes())
    out = []
    for m in members:
        payload = zlib.decompress(m, zlib.MAX_WBITS + 16)
        good = sl_member(payload)
        if stale:
            wrong = len(m) if len(m) != len(good) else len(m) + 7
            good = sl_member(payload, lengths=(wrong, len(payload) + 13))
        out.append(good)
    path = Path(dst)
    offs = _write(path, out)
    return Fixture(path, "", [], offs)


def write_skip_length(directory) -> Fixture:
    """kitchen_sink with correct Wget ``sl`` extra fields in every member."""
    base = write_warc(directory, "_kitchen_sink_for_sl", recs_kitchen_sink(), True)
    fx = add_wget_skip_length(base.path, Path(directory) / "kitchen_sink_sl.warc.gz")
    base.path.unlink()
    fx.records, fx.what = base.records, "kitchen_sink, every member with a correct Wget `sl` extra field"
    return fx


def write_stale_skip_length(directory) -> Fixture:
    """kitchen_sink whose ``sl`` fields are all WRONG (stale lengths): readers
    that trust them mis-split members; they must fall back to inflating."""
    base = write_warc(directory, "_kitchen_sink_for_sl_stale", recs_kitchen_sink(), True)
    fx = add_wget_skip_length(base.path, Path(directory) / "kitchen_sink_sl_stale.warc.gz", stale=True)
    base.path.unlink()
    fx.records, fx.what = base.records, "kitchen_sink with stale (wrong) Wget `sl` lengths in every member"
    return fx


# --------------------------------------------------------------------------- broken files

@dataclass
class BrokenFile:
    """A deliberately broken file.

    ``bad_offset`` is the start of the first bad gzip member or record (where
    an error must point); bytes ``[0, bad_offset)`` form a valid archive of
    the good records before it. ``expect`` is ``"raise"`` (reading must raise
    an ArchiveError naming ``bad_offset``), ``"recover"`` (a defect warcio
    reads past, or gives up on where the next record can still be found: a
    lenient reader yields ``records`` and reports ``defects``, a strict one
    raises at ``bad_offset``), ``"raise_or_read"`` (either is acceptable; see
    ``what``), ``"shared_member"`` (records share a gzip member: the reader
    yields them all, those in a shared member with ``length`` None; the
    indexer cannot give them offsets: it reports the member at ``bad_offset``
    and leaves its records out, or raises there with --strict) or ``"empty"``
    (nothing to read: no records, no error; the indexer says so on stderr and
    writes nothing).
    """
    path: Path
    what: str
    bad_offset: int
    expect: str = "raise"
    good_records: list = field(default_factory=list)   # [(rtype, uri)] before bad_offset
    offsets: list = field(default_factory=list)        # start of every chunk written, then the file size
    id: str = ""
    records: list = field(default_factory=list)        # "recover": [(offset, length, rtype, uri)] of every record
    defects: list = field(default_factory=list)        # "recover": [(offset, kind)] of every defect, in file order
    injected: str = ""                                 # "recover": the defect class (see DEFECT_CLASSES)


def _base_recs() -> list:
    """warcinfo, a GET request/response pair, a 404 response, a resource: five small records."""
    body404 = b"<html><body>Not Found</body></html>\n"
    return ([warcinfo("bad/info", "broken.warc.gz")]
            + get_pair("bad/root", "http://broken.example.com/", "/")
            + [w_http("response", "bad/404", "http://broken.example.com/missing", "HTTP/1.1", "404 Not Found",
                      [("Content-Type", "text/html"), ("Content-Length", str(len(body404)))], body404),
               w_block("resource", "bad/res", "http://broken.example.com/notes.txt", "text/plain",
                       b"resource after the damage\n")])


def _broken_gz(directory, name, what, chunks_fn, bad_index, expect="raise", ext=".warc.gz") -> BrokenFile:
    recs = _base_recs()
    members = [r.member() for r in recs]
    chunks = chunks_fn(members, recs)
    path = Path(directory) / (name + ext)
    offs = _write(path, chunks)
    return BrokenFile(path, what, offs[bad_index], expect, [(r.rtype, r.uri) for r in recs[:bad_index]], offs)


def _cut_before_record(directory, name: str, what: str, cut_member: Callable[[bytes], bytes]) -> BrokenFile:
    """The three records before the 404 response whole, then its gzip member cut (cut_member)
    before any of the record can be read (warcio reads none of it; a lenient reader reports a
    truncated record at the member and nothing after it)."""
    bf = _broken_gz(directory, name, what, lambda m, r: m[:3] + [cut_member(m[3])], 3, expect="recover")
    bf.records = [(o, e - o, t, u) for o, e, (t, u) in zip(bf.offsets, bf.offsets[1:], bf.good_records)]
    bf.defects = [(bf.bad_offset, "truncated")]
    bf.injected = "cut_head"
    return bf


def write_truncated_gzip(directory) -> BrokenFile:
    """Cut in the middle of the 4th member (the 404 response): the file ends inside deflate data,
    whose inflated part ends inside the record's WARC head."""
    return _cut_before_record(directory, "truncated_gzip", write_truncated_gzip.__doc__, lambda m: m[:len(m) // 2])


def write_truncated_gzip_header(directory) -> BrokenFile:
    """The file ends 5 bytes into the 4th member's 10-byte gzip header."""
    return _cut_before_record(directory, "truncated_gzip_header", write_truncated_gzip_header.__doc__,
                              lambda m: m[:5])


def write_bad_crc(directory) -> BrokenFile:
    """The 3rd member (the 200 response) has its CRC32 trailer inverted; it inflates fine otherwise."""
    def chunks(m, r):
        bad = bytearray(m[2])
        for i in range(len(bad) - 8, len(bad) - 4):
            bad[i] ^= 0xFF
        return m[:2] + [bytes(bad)] + m[3:]
    return _broken_gz(directory, "bad_crc", write_bad_crc.__doc__, chunks, 2)


GARBAGE = b"\x00\x00GARBAGE between members \xde\xad\xbe\xef\n" * 3


def write_garbage_between_members(directory) -> BrokenFile:
    """93 bytes of garbage (NULs, text, 0xdeadbeef; not gzip, not WARC) between the 3rd and 4th members;
    ``bad_offset`` is the first garbage byte. warcio gives up there; a lenient reader reads on at the
    next member."""
    return _defective(directory, "garbage_between_members", write_garbage_between_members.__doc__,
                      warc_pieces(_base_recs()), True, "garbage", 2, 4, ".warc.gz")


def write_zero_length_member(directory) -> BrokenFile:
    """A gzip member that inflates to 0 bytes between the 3rd and 4th records.
    warcio reads every record; it counts the empty member into the NEXT
    record (offset = the empty member's start, length includes its 20 bytes).
    ``bad_offset`` is the empty member's start; a lenient reader reports it
    and reads every record at the member that holds it."""
    return _defective(directory, "zero_length_member", write_zero_length_member.__doc__,
                      warc_pieces(_base_recs()), True, "empty_member", 2, 1, ".warc.gz")


def write_two_records_one_member(directory) -> BrokenFile:
    """The 2nd gzip member holds two records (request and 200 response); the
    others hold one. warcio yields the request, then raises 'non-chunked gzip'."""
    return _broken_gz(directory, "two_records_one_member", write_two_records_one_member.__doc__,
                      lambda m, r: [m[0], gzip_member(r[1].plain() + r[2].plain()), m[3], m[4]], 1,
                      expect="shared_member")


def write_single_member(directory) -> BrokenFile:
    """All five records in ONE gzip member (``gzip file.warc``): not seekable per record."""
    return _broken_gz(directory, "single_member", write_single_member.__doc__,
                      lambda m, r: [gzip_member(b"".join(x.plain() for x in r))], 0, expect="shared_member")


def write_plain_record_in_gz(directory) -> BrokenFile:
    """A .warc.gz whose 3rd record is written uncompressed between gzip members (warcio reads it,
    then gives up at the next member)."""
    return _defective(directory, "plain_record_in_gz", write_plain_record_in_gz.__doc__,
                      warc_pieces(_base_recs()), True, "plain_in_gz", 2, 1, ".warc.gz")


def _broken_plain(directory, name, what, mutate, bad_index, expect="raise") -> BrokenFile:
    recs = _base_recs()
    plains = [r.plain() for r in recs]
    chunks = mutate(plains)
    path = Path(directory) / (name + ".warc")
    offs = _write(path, chunks)
    return BrokenFile(path, what, offs[bad_index], expect, [(r.rtype, r.uri) for r in recs[:bad_index]], offs)


def _set_content_length(rec: bytes, delta: int) -> bytes:
    head, rest = rec.split(b"\r\n\r\n", 1)
    lines = head.split(b"\r\n")
    for i, line in enumerate(lines):
        if line.lower().startswith(b"content-length:"):
            lines[i] = b"Content-Length: " + str(int(line.split(b":")[1]) + delta).encode()
    return b"\r\n".join(lines) + b"\r\n\r\n" + rest


def write_content_length_short(directory) -> BrokenFile:
    """Plain WARC; the 3rd record's (200 response) Content-Length is 10 bytes too short (warcio warns,
    skips the one line left over and reads on)."""
    return _defective(directory, "content_length_short", write_content_length_short.__doc__,
                      warc_pieces(_base_recs()), False, "cl_short", 2, 10, ".warc")


def write_content_length_long(directory) -> BrokenFile:
    """Plain WARC; the 3rd record's Content-Length is 30 bytes too long (it
    swallows its CRLFCRLF and the next record's first line; warcio gives up)."""
    return _defective(directory, "content_length_long", write_content_length_long.__doc__,
                      warc_pieces(_base_recs()), False, "cl_long", 2, 30, ".warc")


def write_truncated_plain(directory) -> BrokenFile:
    """Plain WARC cut in the middle of the 4th record's block (71 of the 404 response's 107
    content bytes left): warcio reads the record up to the end of the file."""
    return _defective(directory, "truncated_plain", write_truncated_plain.__doc__, warc_pieces(_base_recs()),
                      False, "cut", 3, 71, ".warc")


def write_control_bytes_header(directory) -> BrokenFile:
    """Plain WARC whose 3rd record has header bytes that are neither UTF-8 nor
    printable Latin-1: NUL, C1 controls 0x80-0x9f and 0xff in WARC-Target-URI
    and in an HTTP header name and value. warcio reads it (it falls back to
    Latin-1 per line), so a reader may read it as warcio does or raise
    (``raise_or_read``)."""
    body = b"<p>control bytes</p>\n"
    http = http_bytes(b"HTTP/1.1 200 OK", [(b"Content-Type", b"text/html"),
                                           (b"X-\x00\x85Bad", b"\x9b\x00\xff\x81"),
                                           (b"Content-Length", str(len(body)).encode())], body)
    bad = r_rec("response", "bad/ctl", b"http://broken.example.com/\x00\x85\x9f\xff", "application/http; msgtype=response",
                http)
    recs = _base_recs()
    recs = recs[:2] + [bad] + recs[3:]
    path = Path(directory) / "control_bytes_header.warc"
    offs = _write(path, [r.plain() for r in recs])
    return BrokenFile(path, write_control_bytes_header.__doc__, offs[2], "raise_or_read",
                      [(r.rtype, r.uri) for r in recs[:2]], offs)


def write_empty(directory) -> BrokenFile:
    """An empty file (0 bytes) named .warc.gz: nothing to read. Like warcio, the reader yields
    no records and raises nothing; the indexer reports the empty file on stderr."""
    path = Path(directory) / "empty.warc.gz"
    path.write_bytes(b"")
    return BrokenFile(path, write_empty.__doc__, 0, "empty", [])


NOT_A_WARC = b"<!doctype html>\n<html><body>I am a web page, not a WARC file.</body></html>\n"


def write_not_a_warc(directory) -> BrokenFile:
    """An HTML page saved as ``.warc``: neither WARC nor ARC from byte 0."""
    path = Path(directory) / "not_a_warc.warc"
    path.write_bytes(NOT_A_WARC)
    return BrokenFile(path, write_not_a_warc.__doc__, 0, "raise", [])


def write_not_a_warc_gz(directory) -> BrokenFile:
    """A valid gzip member holding an HTML page, named ``.warc.gz``."""
    path = Path(directory) / "not_a_warc_gz.warc.gz"
    path.write_bytes(gzip_member(NOT_A_WARC))
    return BrokenFile(path, write_not_a_warc_gz.__doc__, 0, "raise", [])


# --------------------------------------------------------------------------- defects, injected

class Piece:
    """One record as bytes to rearrange: ``head`` (the WARC head with its blank line, or the
    ARC first line), ``block`` (what the length counts: for an ARC filedesc record that is
    the version block too), ``sep`` (what follows: CRLFCRLF, or LF for ARC)."""

    def __init__(self, head: bytes, block: bytes, sep: bytes, rtype: str, uri: Optional[str], arc: bool) -> None:
        self.head, self.block, self.sep = head, block, sep
        self.rtype, self.uri, self.arc = rtype, uri, arc

    @property
    def declared(self) -> bytes:
        if self.arc:
            return self.head.rstrip(b"\r\n").rsplit(b" ", 1)[1]
        for line in self.head.split(b"\r\n"):
            if line.lower().startswith(b"content-length:"):
                return line.split(b":", 1)[1].strip()
        raise ValueError("no Content-Length")

    def with_length(self, value: bytes) -> "Piece":
        """The same record with its length field set to value (the block unchanged)."""
        if self.arc:
            line = self.head.rstrip(b"\r\n").rsplit(b" ", 1)[0] + b" " + value + b"\n"
            return Piece(line, self.block, self.sep, self.rtype, self.uri, True)
        lines = self.head.split(b"\r\n")
        for k, line in enumerate(lines):
            if line.lower().startswith(b"content-length:"):
                lines[k] = b"Content-Length: " + value
        return Piece(b"\r\n".join(lines), self.block, self.sep, self.rtype, self.uri, False)

    @property
    def filedesc(self) -> bool:
        return self.arc and self.head.startswith(b"filedesc://")

    @property
    def version_block(self) -> int:
        """Bytes of an ARC filedesc record's version block (its first two lines), else 0."""
        return len(b"".join(self.block.split(b"\n", 2)[:2])) + 2 if self.filedesc else 0

    def read_length(self) -> int:
        """The content length as warcio reads it: the length field (less the version block of
        an ARC filedesc record); 0 when it is no number or negative."""
        try:
            n = int(self.declared)
        except ValueError:
            return 0
        return max(n - self.version_block, 0)

    def record_length(self) -> int:
        """warcio's length of the record in a plain file: its head (with an ARC version block)
        and its content as read, without the separator."""
        return len(self.head) + self.version_block + self.read_length()

    def plain(self) -> bytes:
        return self.head + self.block + self.sep


def warc_pieces(recs: list) -> list:
    out = []
    for r in recs:
        p = r.plain()
        i = p.index(b"\r\n\r\n") + 4
        assert p.endswith(b"\r\n\r\n")
        out.append(Piece(p[:i], p[i:-4], b"\r\n\r\n", r.rtype, r.uri, False))
    return out


def arc_pieces(records: list) -> list:
    """Pieces of arc_records(): (bytes, rtype, uri) with bytes = line + content + LF."""
    out = []
    for b, t, u in records:
        nl = b.index(b"\n") + 1
        out.append(Piece(b[:nl], b[nl:-1], b"\n", t, u, True))
    return out


# Lines that are no record. warcio takes a line of five space-separated fields, where it parses the
# next record, for an ARC record's first line (see text_records): [2] of GARBAGE_LINES has one, and so
# have TEXT_LINES but the first (GARBAGE_LINES[3:], GARBAGE_BYTES[5:]).
TEXT_LINES = [b"a line of four\n",
                 b"a line of text of five words or more\n",                 # the next record's first line is eaten
                 b"one two three four 12\ntwelve bytes\n\n",               # a length that is a number
                 b"http://example.com/page 93.184.216.34 2024 text/html 5\nhello\n",   # a URL, a short date
                 b"first of two lines of five words\nconsumed\nthe second line of five words\nconsumed too\n",
                 b"<p>one line of five words</p>\nconsumed\nthen a line of four\n",   # warcio gives up after it
                 b"<http://example.com/x> 93.184.216.34 20240102030405 text/html 0\n\n",   # <...> taken off
                 b"caf\xe9 au lait, pas cher\r\n\r\n"]                       # Latin-1
GARBAGE_LINES = [b"garbage line between records\r\n", b"\x00\x01\x02 binary junk \xff\xfe\n",
                 b"<html>a page saved in the middle</html>\n<p>and more of it</p>\n"] + TEXT_LINES
GARBAGE_BYTES = GARBAGE_LINES[:3] + [b"\x00" * 64, GARBAGE] + TEXT_LINES

# The defect classes: name -> (files it applies to: "plain", "gz" or both, what it does)
DEFECT_CLASSES = {
    "cl_short": ("plain gz", "the length field K bytes too small (the last K bytes of the block, not all blank, "
                             "are left over)"),
    "cl_long": ("plain gz", "the length field K bytes too big (plain: it eats the separator and, for K beyond "
                            "it, the start of the next record's head; gzip: it runs past the member's end)"),
    "cl_invalid": ("plain gz", "Content-Length 'abc' (read as 0: the block is left over); WARC only"),
    "sep_missing": ("plain gz", "no separator after the record"),
    "sep_lf": ("plain gz", "LF LF instead of CRLFCRLF; WARC only"),
    "sep_extra": ("plain gz", "one blank line more after the separator"),
    "garbage": ("plain gz", "bytes that are no record after the record (GARBAGE_LINES / GARBAGE_BYTES [K]); "
                            "warcio reads text records out of their lines of five fields (text_records)"),
    "text_member": ("gz", "a gzip member holding GARBAGE_LINES[K] after the record (warcio reads a text record "
                          "out of its first line when that has five fields)"),
    "empty_member": ("gz", "an empty gzip member after the record"),
    "blank_member": ("gz", "a gzip member holding only CRLF after the record"),
    "plain_in_gz": ("gz", "the record written uncompressed between the members"),
    "split": ("gz", "the record's head in one member, its block and separator in the next (read across them)"),
    "arc_version_block": ("plain gz", "the filedesc:// length one byte short of its version block "
                                      "(IA's ARC writers); ARC, the first record only"),
    "filedesc_fields": ("plain gz", "the filedesc:// line written `filedesc:// - - - LENGTH`: no file name, "
                                    "address, date or type (warcio reads it as the version block all the same); "
                                    "ARC, the first record only"),
    "cut": ("plain gz", "the file ends inside the record's content, the record the last (plain: K of its "
                        "content bytes left; gzip: its member without its last K bytes, of which its head and "
                        "some of its content inflate; warcio reads it up to the end of the file)"),
}


def _next_head_room(pieces: list, i: int) -> int:
    """How far into the next record's head a Content-Length too big may end so that the lines
    after it are still lines of that record (its head, or for ARC its content), no record."""
    nxt = pieces[i + 1]
    if nxt.arc:   # inside its first line, before the LF; its content must begin with no record
        ok = bool(nxt.block.strip()) and not nxt.block.startswith((b"http:", b"https:", b"WARC/", b"filedesc:"))
        return len(nxt.head) - 1 if ok else 0
    last = nxt.head[:-4].rsplit(b"\r\n", 1)[-1]   # before its last header line
    return len(nxt.head) - 4 - len(last)


def defect_applies(pieces: list, gz: bool, kind: str, i: int, k: int = 1) -> bool:
    """Can defect kind be injected at record i (with amount k) so that it reads as its class says?"""
    if kind not in DEFECT_CLASSES or ("gz" if gz else "plain") not in DEFECT_CLASSES[kind][0].split():
        return False
    p = pieces[i]
    last = i == len(pieces) - 1
    if kind in ("cl_short", "cl_long", "cl_invalid") and p.filedesc:
        return False   # its length is arc_version_block's business
    if kind == "cl_short":   # (what is left over must not begin with the separator: the record would end there)
        return 1 <= k <= len(p.block) and bool(p.block[-k:].strip()) and not p.block[-k:].startswith(p.sep)
    if kind == "cl_long":
        if gz:
            return k >= 1
        return not last and 1 <= k < len(p.sep) + _next_head_room(pieces, i)
    if kind in ("cl_invalid", "sep_lf"):
        return not p.arc and (kind == "sep_lf" or not p.block or p.block[:1] not in b" \t\r\n")
    if kind == "plain_in_gz":
        return i >= 1
    if kind == "split":   # (warcio reads a text record out of a rest beginning with a line of five fields)
        return (bool(p.block.strip()) and not p.block.lstrip().startswith((b"WARC/", b"http:", b"https:"))
                and _five_fields(_line_at(p.block, 0)) is None)
    if kind == "arc_version_block":
        return p.arc and p.head.startswith(b"filedesc://") and i == 0
    if kind == "filedesc_fields":
        return p.filedesc and i == 0
    if kind == "cut":
        if p.filedesc:
            return False
        if not gz:
            return 1 <= k < len(p.block)
        member = gzip_member(p.plain())
        return 1 <= k < len(member) and len(inflated_prefix(member[: len(member) - k])) > len(p.head)
    if kind == "garbage":
        return 0 <= k < len(GARBAGE_LINES if not gz else GARBAGE_BYTES)
    if kind == "text_member":
        return 0 <= k < len(GARBAGE_LINES)
    return True


class Unmodelled(ValueError):
    """Bytes whose reading by warcio text_records does not model (a text record running into a record)."""


def inflated_prefix(data: bytes) -> bytes:
    """What inflates of the beginning of a gzip member (zlib, as warcio inflates it)."""
    return zlib.decompressobj(31).decompress(data)


def _warcio_uri(uri: str) -> str:
    """WARC-Target-URI as warcio presents it: <...> taken off, spaces as %20."""
    if uri.startswith("<") and uri.endswith(">"):
        uri = uri[1:-1]
    return uri.replace(" ", "%20")


def _warcio_length(field: str) -> int:
    """An ARC length field as warcio reads it: int(), 0 when that fails or is negative."""
    try:
        return max(int(field), 0)
    except ValueError:
        return 0


def _line_at(data: bytes, p: int) -> bytes:
    nl = data.find(b"\n", p)
    return data[p: nl + 1] if nl >= 0 else data[p:]


def _five_fields(line: bytes) -> Optional[list]:
    """The five fields warcio's ARC head parser splits a line into, or None."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        text = line.decode("latin-1")
    parts = text.rstrip().rsplit(" ", 4)
    return parts if len(parts) == 5 else None


def text_records(data: bytes, pos: int, stop: int, gz: bool = False) -> list:
    """The text records warcio reads out of data[pos:stop], lines that are no record, from pos
    on, a place where it parses the next record (after a record and its separator): blank lines
    skipped, a line of five space-separated fields (split from the right, once decoded and
    right-stripped) is an ARC head: URL, IP, date, type, length (0 when no number, or
    negative); the length's bytes are its content, and the line after them is read as its
    separator whatever it is, then blank lines. The first line of fewer or more fields (where
    warcio gives up), or reaching stop, ends them. [(offset, length, "response", uri)], the
    length running to the end of the line after the content; length None: warcio reads no
    record there (an http(s) URL, a length, and the file ends after the line: its HTTP head
    parser meets the end), and nothing after it."""
    out = []
    p = pos
    while True:
        while p < stop and not _line_at(data, p).rstrip():
            p += len(_line_at(data, p))
        if p >= stop:
            if gz and out and p == stop < len(data) and _five_fields(_line_at(data, p)) is not None:
                raise Unmodelled("warcio reads the next gzip member's compressed bytes as a text record")
            return out
        line = _line_at(data, p)
        parts = _five_fields(line)
        if parts is None:
            return out
        if parts[0].startswith("filedesc://"):
            raise Unmodelled("a filedesc:// line: warcio reads two more lines into its head")
        n = _warcio_length(parts[4])
        end = p + len(line) + n
        if end > stop and stop < len(data):
            raise Unmodelled(f"the text record at {p} runs into the record at {stop}")
        end = min(end, len(data))
        uri = _warcio_uri(parts[0])
        if n and uri.startswith(("http:", "https:")) and p + len(line) == len(data):
            out.append((p, None, "response", uri))
            return out
        out.append((p, end - p, "response", uri))
        q = end + len(_line_at(data, end))   # its separator line, whatever it is
        if q > stop:   # the next record's first line: warcio gives up after it, the reader finds it again
            while q < len(data) and not _line_at(data, q).rstrip():
                q += len(_line_at(data, q))
            if q < len(data) and _five_fields(_line_at(data, q)) is not None:
                raise Unmodelled(f"warcio reads on inside the record (or gzip member) at {stop}")
            return out
        p = q


def inject_defect(pieces: list, gz: bool, kind: str, i: int, k: int = 1, garbage: Optional[bytes] = None) -> tuple:
    """The bytes of pieces (plain or a gzip member each) with defect kind injected at record i,
    and what a lenient reader must find, from how they were built: (data, records, defects,
    offsets) with records [(offset, length, rtype, uri)] (length None: the member's size) and
    defects [(offset, kind)]. ``garbage``: the bytes of a garbage defect instead of
    GARBAGE_LINES / GARBAGE_BYTES[k]. Where warcio parses the next record after the defect
    (in a plain file: after record i; in a gzip file: the garbage between members) the
    text records it reads (text_records) are records too, each a text-record defect; raises
    Unmodelled for bytes whose reading it cannot tell."""
    assert garbage is not None or defect_applies(pieces, gz, kind, i, k), (kind, i, k)
    chunks: list = []   # (bytes, (rtype, uri, length or None) or None, defect kind or None)
    written = pieces[i]  # record i as written

    def rec(p: Piece, data: bytes, defect: Optional[str] = None, plain: bool = False) -> None:
        length = p.record_length() if (not gz or plain) else None
        chunks.append((data, (p.rtype, p.uri, length), defect))

    for j, p in enumerate(pieces):
        if j > i and kind == "cut":   # the file ends inside record i
            break
        if j != i:
            rec(p, gzip_member(p.plain()) if gz else p.plain())
            continue
        wrap = gzip_member if gz else (lambda b: b)
        if kind == "cl_short":
            q = written = p.with_length(str(int(p.declared) - k).encode())
            rec(q, wrap(q.plain()), "content-length")
        elif kind == "cl_long":
            q = written = p.with_length(str(int(p.declared) + k).encode())
            rec(q, wrap(q.plain()), "content-length" if gz or k > len(p.sep) else "separator")
        elif kind == "cl_invalid":
            q = written = p.with_length(b"abc")
            rec(q, wrap(q.plain()), "content-length")
        elif kind == "sep_missing":
            rec(p, wrap(p.head + p.block), "separator")
        elif kind == "sep_lf":
            rec(p, wrap(p.head + p.block + b"\n\n"), "separator")
        elif kind == "sep_extra":
            extra = b"\n" if p.arc else b"\r\n"
            if gz:
                rec(p, gzip_member(p.plain() + extra), "separator")
            else:
                rec(p, p.plain())
                chunks.append((extra, None, "blank-lines"))
        elif kind == "garbage":
            rec(p, wrap(p.plain()))
            chunks.append((garbage if garbage is not None else (GARBAGE_BYTES if gz else GARBAGE_LINES)[k],
                           None, "garbage"))
        elif kind == "text_member":
            rec(p, gzip_member(p.plain()))
            text = garbage if garbage is not None else GARBAGE_LINES[k]
            parts = _five_fields(_line_at(text, 0))
            if parts is None:
                chunks.append((gzip_member(text), None, "garbage"))
            elif (_warcio_uri(parts[0]).startswith(("http:", "https:")) and text == _line_at(text, 0)
                  and _warcio_length(parts[4]) > 0):   # its content is missing: warcio reads no record, and
                raise Unmodelled("counts the member into the next record's (as an empty member)")
            else:   # the text record is the member's only record: the rest of it is read as its own
                chunks.append((gzip_member(text), ("response", _warcio_uri(parts[0]), None), "text-record"))
        elif kind in ("empty_member", "blank_member"):
            rec(p, gzip_member(p.plain()))
            chunks.append((gzip_member(b"" if kind == "empty_member" else b"\r\n"), None, "empty-member"))
        elif kind == "plain_in_gz":
            rec(p, p.plain(), "plain-record", plain=True)
        elif kind == "split":   # one chunk: the record's length covers both members
            rec(p, gzip_member(p.head) + gzip_member(p.block + p.sep), "split-record")
        elif kind == "arc_version_block":
            q = written = p.with_length(str(p.version_block - 1).encode())
            rec(q, wrap(q.plain()), "arc-version-block")
        elif kind == "filedesc_fields":
            q = Piece(b"filedesc:// - - - " + p.declared + b"\n", p.block, p.sep, p.rtype, p.uri, True)
            rec(q, wrap(q.plain()), "filedesc-fields")
        elif kind == "cut":   # its length runs to the end of the file
            cut = gzip_member(p.plain())[:-k] if gz else p.head + p.block[:k]
            chunks.append((cut, (p.rtype, p.uri, len(cut)), "truncated"))
    data, pos = b"", 0
    records, defects, offsets = [], [], []
    at = 0   # where record i starts
    for b, r, d in chunks:
        offsets.append(pos)
        if r is not None:
            if len(records) == i:
                at = pos
            records.append((pos, r[2] if r[2] is not None else len(b), r[0], r[1]))
        if d is not None:
            defects.append((pos, d))
        data += b
        pos += len(b)
    texts = _texts_after(data, records, defects, offsets, gz, kind, i, at, written)
    records = sorted(records + [t for t in texts if t[1] is not None])
    defects = sorted(defects + [(o, "text-record") for o, *_ in texts])
    return data, records, defects, offsets + [pos]


def _texts_after(data: bytes, records: list, defects: list, offsets: list, gz: bool, kind: str, i: int, at: int,
                 written: Piece) -> list:
    """The text records warcio reads after the defect injected at record i (at offset at, as
    written): in a plain file from where record i's content ends as warcio reads it (and the
    line after it, its separator), in a gzip file from the garbage between members; a garbage
    defect whose first line is one is a text-record defect instead (removed from defects)."""
    if kind == "cut":   # nothing follows it
        return []
    stops = [o for o, *_ in records if o > at] + [len(data)]
    if kind == "garbage":
        g = next(o for o, d in defects if d == "garbage")
        n = offsets.index(g) + 1
        stop = offsets[n] if n < len(offsets) else len(data)
        texts = text_records(data, g, stop, gz) if gz else text_records(data, g, stops[0])
        if texts:
            if texts[0][0] != g:
                raise Unmodelled("blank lines before the first text record")
            defects.remove((g, "garbage"))
        return texts
    end = len(written.head) + written.version_block + written.read_length()
    if gz:   # in a member: the reader reads no record in the rest of a member (warcio's offsets there are none)
        if kind == "plain_in_gz":   # after it warcio reads the next member as text, from its first line
            nxt = offsets[offsets.index(at) + 1] if at != offsets[-1] else len(data)
            if nxt < len(data) and _five_fields(_line_at(data, nxt)) is not None:
                raise Unmodelled("warcio reads the next gzip member's compressed bytes as a text record")
            return []
        if kind == "split":
            return []
        member = zlib.decompressobj(31).decompress(data[at:])
        if kind == "text_member":
            member = zlib.decompressobj(31).decompress(data[offsets[offsets.index(at) + 1]:])
            first = _line_at(member, 0)
            parts = _five_fields(first)
            end = len(first) + _warcio_length(parts[4]) if parts is not None else len(member)
        if _reads_on_in_member(member, end):
            raise Unmodelled("warcio reads text records in a gzip member and on past its end")
        return []
    end += at
    return text_records(data, end + len(_line_at(data, end)), stops[0])


def _reads_on_in_member(member: bytes, end: int) -> bool:
    """Does warcio, after a record whose content ends at ``end`` of a gzip member's data, read
    text records out of the rest of the member and go on past its end, not giving up? (Its
    offsets of the records after are then off too: docs/format.md, "Where we differ".)"""
    if end >= len(member):
        return False
    q = end + len(_line_at(member, end))
    texts = text_records(member, q, len(member), True)
    if not texts:
        return False
    o, n = texts[-1][0], texts[-1][1]
    if n is None:
        return True
    e = o + n
    q = e + len(_line_at(member, e))
    while q < len(member) and not _line_at(member, q).rstrip():
        q += len(_line_at(member, q))
    return q >= len(member)


def _defective(directory, name: str, what: str, pieces: list, gz: bool, kind: str, i: int, k: int = 1,
               ext: str = "") -> BrokenFile:
    data, records, defects, offsets = inject_defect(pieces, gz, kind, i, k)
    path = Path(directory) / (name + ext)
    path.write_bytes(data)
    bad = defects[0][0]
    return BrokenFile(path, what, bad, "recover", [(t, u) for o, _, t, u in records if o < bad], offsets,
                      records=records, defects=defects, injected=kind)


def _warc_defect(name: str, gz: bool, kind: str, i: int, k: int, what: str):
    def writer(directory) -> BrokenFile:
        return _defective(directory, name, what, warc_pieces(_base_recs()), gz, kind, i, k,
                          ".warc.gz" if gz else ".warc")
    writer.__name__ = "write_" + name + ("_gz" if gz else "")
    writer.__doc__ = what
    return writer


def _arc_defect(name: str, gz: bool, kind: str, i: int, k: int, what: str, records=arc_records):
    def writer(directory) -> BrokenFile:
        return _defective(directory, name, what, arc_pieces(records(name + ".arc")), gz, kind, i, k,
                          ".arc.gz" if gz else ".arc")
    writer.__name__ = "write_" + name + ("_arc_gz" if gz else "_arc")
    writer.__doc__ = what
    return writer


# name, files (p: plain, g: gzip), class, record, amount, what
DEFECTIVE_WARCS = [
    ("content_length_short_lines", "p", "cl_short", 2, 100,
     "the 200 response's Content-Length 100 too small: two lines of HTML are left over (warcio gives up)"),
    ("content_length_slightly_long", "p", "cl_long", 2, 2,
     "the 200 response's Content-Length 2 too big: it eats the CRLF of its separator (warcio reads on silently)"),
    ("content_length_invalid", "pg", "cl_invalid", 3, 1, "the 404 response's Content-Length is 'abc'"),
    ("content_length_short_member", "g", "cl_short", 2, 10, "the 200 response's Content-Length 10 too small "
                                                            "in its member (warcio warns and reads on)"),
    ("content_length_long_member", "g", "cl_long", 2, 30, "the 200 response's Content-Length 30 too big: "
                                                          "it runs past its gzip member (warcio is silent)"),
    ("no_separator", "pg", "sep_missing", 1, 1, "the request not followed by CRLFCRLF"),
    ("lf_separator", "pg", "sep_lf", 1, 1, "the request followed by LF LF instead of CRLFCRLF"),
    ("extra_blank_line", "pg", "sep_extra", 1, 1, "one CRLF more after the request's CRLFCRLF"),
    ("garbage_between_records", "p", "garbage", 1, 2, "two lines of HTML between the request and the response "
                                                      "(warcio reads a text record out of the first)"),
    ("text_between_members", "g", "garbage", 1, 9, "four lines of text between the request's gzip member and the "
                                                   "response's (warcio reads text records out of two)"),
    ("text_member", "g", "text_member", 1, 2, "a gzip member holding two lines of HTML after the request "
                                              "(warcio reads a text record out of the first)"),
    ("trailing_garbage", "pg", "garbage", 4, 1, "junk bytes after the last record"),
    ("blank_member", "g", "blank_member", 1, 1, "a gzip member holding only CRLF after the request"),
    ("split_record", "g", "split", 2, 1, "the 200 response's head in one gzip member, the rest in the next "
                                         "(warcio gives up; the record is read across both)"),
    ("truncated_member", "g", "cut", 3, 30, "the file ends inside the 404 response's gzip member, 30 bytes short "
                                            "of its end (warcio reads what inflates, up to the end of the file)"),
]
DEFECTIVE_ARCS = [
    ("ia_version_block", "pg", "arc_version_block", 0, 1,
     "ARC whose filedesc:// length is one byte short of its version block, as IA's ARC writers wrote them"),
    ("arc_length_short", "pg", "cl_short", 2, 10, "the 404 record's length 10 too small (warcio warns, reads on)"),
    ("arc_length_long", "p", "cl_long", 2, 1, "the 404 record's length 1 too big: it eats its LF (warcio gives up)"),
    ("arc_length_long_member", "g", "cl_long", 2, 20, "the 404 record's length 20 too big: past its member"),
    ("arc_no_separator", "pg", "sep_missing", 1, 1, "the 200 record not followed by LF"),
    ("arc_garbage", "p", "garbage", 1, 0, "a line that is no record between two ARC records"),
    ("arc_text_line", "p", "garbage", 1, 5, "a line of five words, the last a length, and its bytes between two "
                                            "ARC records (warcio reads a text record out of it)"),
    ("arc_filedesc_dashes", "pg", "filedesc_fields", 0, 1, "an ARC file whose filedesc:// line is `filedesc:// - - - "
                                                           "68`: no name, address, date or type"),
    ("arc_truncated", "pg", "cut", 2, 20, "the file ends inside the 404 record's content (plain: 20 bytes of it "
                                          "left; gzip: its member 20 bytes short)"),
]


# the same, of arc_space_records (URLs with spaces)
DEFECTIVE_SPACE_ARCS = [
    ("arc_spaces_version_block", "pg", "arc_version_block", 0, 1,
     "URLs with spaces after a filedesc:// length one byte short of its version block (IA's ARC writers)"),
    ("arc_spaces_no_separator", "pg", "sep_missing", 2, 1, "the record of a URL with two spaces in a row not "
                                                          "followed by LF: the next line, a URL of five words, "
                                                          "right after it"),
    ("arc_spaces_truncated", "pg", "cut", 1, 40, "the file ends inside the content of the record whose URL holds "
                                                  "the words of a form (plain: 40 bytes of it left; gzip: its "
                                                  "member 40 bytes short)"),
]


def _no_lf(directory, gz: bool) -> BrokenFile:
    """ARC records of URLs with spaces (arc_space_records) with no LF after any record: each
    record's line right after the content of the one before (warcio takes that line for the
    record's separator and gives up; a lenient reader reads on at it)."""
    recs = arc_space_records("arc_spaces_no_lf.arc")
    chunks = [b[:-1] for b, _, _ in recs]
    path = Path(directory) / ("arc_spaces_no_lf.arc" + (".gz" if gz else ""))
    offs = _write(path, [gzip_member(c) if gz else c for c in chunks])
    pieces = arc_pieces(recs)
    records = [(o, (e - o) if gz else p.record_length(), t, u)
               for o, e, p, (_, t, u) in zip(offs, offs[1:], pieces, recs)]
    return BrokenFile(path, _no_lf.__doc__, 0, "recover", [], offs, records=records,
                      defects=[(o, "separator") for o in offs[:-1]], injected="sep_missing")


def write_arc_spaces_no_lf(directory) -> BrokenFile:
    return _no_lf(directory, False)


def write_arc_spaces_no_lf_gz(directory) -> BrokenFile:
    return _no_lf(directory, True)


def write_ia_space_url_cut(directory) -> BrokenFile:
    """An ARC file as the Internet Archive's writer left one: a filedesc:// length one byte short
    of its version block, then one record whose URL holds the words of a form, and the file ends
    12 bytes short of that record's content (warcio reads it up to the end of the file)."""
    recs = arc_space_records("ia_space_url_cut.arc")
    pieces = arc_pieces(recs[:2])
    fd = pieces[0].with_length(str(pieces[0].version_block - 1).encode())
    cut = pieces[1].head + pieces[1].block[:-12]
    chunks = [fd.plain(), cut]
    path = Path(directory) / "ia_space_url_cut.arc"
    offs = _write(path, chunks)
    records = [(0, fd.record_length(), "warcinfo", None), (offs[1], len(cut), "response", recs[1][2])]
    return BrokenFile(path, write_ia_space_url_cut.__doc__, 0, "recover", [], offs, records=records,
                      defects=[(0, "arc-version-block"), (offs[1], "truncated")], injected="cut")


def write_arc_bad_lengths(directory) -> BrokenFile:
    """ARC whose records have no content and lengths that are no lengths: -1 (the filedesc:// record
    too) and 'abc', dates of 18 digits (as pywb's test files have them). warcio reads all three
    as records of no content."""
    vb = b"1 0 warcgen\nURL IP-address Archive-date Content-type Archive-length\n"
    chunks = [b"filedesc://arc_bad_lengths.arc 127.0.0.1 20140301000000 text/plain -1\n" + vb + b"\n",
              b"http://example.com/ 93.184.216.119 201404010000000000 text/html -1\n\n",
              b"http://example.com/ 93.184.216.119 201404010000000000 text/html abc\n"]
    path = Path(directory) / "arc_bad_lengths.arc"
    offs = _write(path, chunks)
    records = [(offs[0], len(chunks[0]) - 1, "warcinfo", None),
               (offs[1], len(chunks[1]) - 1, "response", "http://example.com/"),
               (offs[2], len(chunks[2]), "response", "http://example.com/")]
    defects = [(offs[0], "content-length"), (offs[1], "content-length"), (offs[2], "content-length")]
    return BrokenFile(path, write_arc_bad_lengths.__doc__, 0, "recover", [], offs, records=records,
                      defects=defects, injected="cl_invalid")


def _lf_only(directory, gz: bool) -> BrokenFile:
    """A WARC written with LF alone: every head line ends with LF, and every record is followed
    by LF LF, as pywb's sample_archive/warcs/example-extra.warc is (warcio reads it silently)."""
    chunks, meta = [], []
    for p in warc_pieces(_base_recs()):
        head = p.head.replace(b"\r\n", b"\n")
        data = head + p.block + b"\n\n"
        chunks.append(gzip_member(data) if gz else data)
        meta.append((p.rtype, p.uri, len(head) + len(p.block)))
    path = Path(directory) / ("lf_only.warc" + (".gz" if gz else ""))
    offs = _write(path, chunks)
    records = [(o, n if not gz else e - o, t, u) for o, e, (t, u, n) in zip(offs, offs[1:], meta)]
    return BrokenFile(path, _lf_only.__doc__, 0, "recover", [], offs, records=records,
                      defects=[(o, "separator") for o in offs[:-1]], injected="sep_lf")


def write_lf_only(directory) -> BrokenFile:
    return _lf_only(directory, False)


def write_lf_only_gz(directory) -> BrokenFile:
    return _lf_only(directory, True)


def _defective_writers() -> list:
    out = []
    for name, files, kind, i, k, what in DEFECTIVE_WARCS:
        out += [_warc_defect(name, f == "g", kind, i, k, what) for f in files]
    for name, files, kind, i, k, what in DEFECTIVE_ARCS:
        out += [_arc_defect(name, f == "g", kind, i, k, what) for f in files]
    for name, files, kind, i, k, what in DEFECTIVE_SPACE_ARCS:
        out += [_arc_defect(name, f == "g", kind, i, k, what, arc_space_records) for f in files]
    return out + [write_arc_bad_lengths, write_lf_only, write_lf_only_gz, write_arc_spaces_no_lf,
                  write_arc_spaces_no_lf_gz, write_ia_space_url_cut]


def _defective_names() -> list:
    out = []
    for table, exts in ((DEFECTIVE_WARCS, (".warc", ".warc.gz")), (DEFECTIVE_ARCS, (".arc", ".arc.gz")),
                        (DEFECTIVE_SPACE_ARCS, (".arc", ".arc.gz"))):
        for name, files, *_ in table:
            out += [name + (exts[1] if f == "g" else exts[0]) for f in files]
    return out + ["arc_bad_lengths.arc", "lf_only.warc", "lf_only.warc.gz", "arc_spaces_no_lf.arc",
                  "arc_spaces_no_lf.arc.gz", "ia_space_url_cut.arc"]


# --------------------------------------------------------------------------- catalogue

VALID_SET_WRITERS = [write_get_pairs, write_chunked, write_gzip_encoding, write_odd_status, write_post_put,
                     write_revisits, write_resource_metadata, write_no_payload_digest, write_versions,
                     write_non_http, write_unicode_urls, write_kitchen_sink]

BROKEN_WRITERS = [write_truncated_gzip, write_truncated_gzip_header, write_bad_crc,
                  write_garbage_between_members, write_zero_length_member, write_two_records_one_member,
                  write_single_member, write_plain_record_in_gz, write_content_length_short,
                  write_content_length_long, write_truncated_plain, write_control_bytes_header,
                  write_empty, write_not_a_warc, write_not_a_warc_gz] + _defective_writers()


def valid_names() -> list:
    """File names of every generated valid fixture (known before generating)."""
    names = []
    for w in VALID_SET_WRITERS:
        base = w.__name__[len("write_"):]
        names += [base + ".warc.gz", base + ".warc"]
    return names + ["example.arc.gz", "example.arc", "arc_spaces.arc.gz", "arc_spaces.arc", "kitchen_sink_sl.warc.gz",
                    "kitchen_sink_sl_stale.warc.gz"]


def broken_names() -> list:
    return ["truncated_gzip.warc.gz", "truncated_gzip_header.warc.gz", "bad_crc.warc.gz",
            "garbage_between_members.warc.gz", "zero_length_member.warc.gz", "two_records_one_member.warc.gz",
            "single_member.warc.gz", "plain_record_in_gz.warc.gz", "content_length_short.warc",
            "content_length_long.warc", "truncated_plain.warc", "control_bytes_header.warc",
            "empty.warc.gz", "not_a_warc.warc", "not_a_warc_gz.warc.gz"] + _defective_names()


def recover_names() -> list:
    """The broken files with defects a lenient reader reads past (``expect == "recover"``)."""
    return ["truncated_gzip.warc.gz", "truncated_gzip_header.warc.gz", "truncated_plain.warc",
            "garbage_between_members.warc.gz", "zero_length_member.warc.gz", "plain_record_in_gz.warc.gz",
            "content_length_short.warc", "content_length_long.warc"] + _defective_names()


# --------------------------------------------------------------------------- URLs for SURT options

SURT_OPTION_URLS = [   # each SURT option changes the key of at least one of these
    "http://www.Example.com:80/A/(S(abcdefghijklmnopqrstuvwx))/Default.aspx/?B=%E9&a=1"
    "&JSESSIONID=0123456789abcdefABCDEF0123456789#frag",
    "HTTPS://WWW2.Ex%41m%7Fple.ORG:443/",
    "http://www.1.2.3.4:8080/x//y/../Z/?",
    "http://192.168.0.1/a?cfid=1&cftoken=2",
    "dns:www.Example.com",
    "mailto:Foo@Example.COM?Subject=Hi&A=b",
    "http://example.com?b=2&A=1",
    "http://www.example.com/#x?",
    "http://B\u00fccher.example/\u00c4/(abcdefghijklmnopqrstuvwx)/P.aspx?sid=0123456789abcdefABCDEF0123456789",
    "http://[2001:DB8::1]:80/Index.html?",
    "http://a%7Fb.example/",
    "http://www.example.com/",
]


def surt_option_urls() -> list:
    """SURT_OPTION_URLS, then urlgen's fixed cases and 300 drawn URLs, each once, that a WARC
    header can carry as they are (no whitespace or control characters)."""
    out, seen = [], set()
    for u in SURT_OPTION_URLS + urlgen.tricky_urls(count=300, seed=20261201):
        if isinstance(u, str) and u and u not in seen and all(0x20 < ord(c) != 0x7F for c in u):
            seen.add(u)
            out.append(u)
    return out


def write_surt_urls(directory, gz: bool = True) -> Fixture:
    """One response per URL of surt_option_urls() (not in valid_names(): only the tests of
    index --surt-options read it)."""
    body = b"<p>surt</p>\n"
    hdr = [("Content-Type", "text/html"), ("Content-Length", str(len(body)))]
    recs = [w_http("response", f"surt/{k}", u, "HTTP/1.1", "200 OK", hdr, body)
            for k, u in enumerate(surt_option_urls())]
    return write_warc(directory, "surt_urls", recs, gz,
                      what="a response per URL that some SURT option keys differently")


def generate_valid(directory) -> dict:
    """Write every valid fixture into ``directory``; {file name: Fixture}."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    out = {}
    for w in VALID_SET_WRITERS:
        for gz in (True, False):
            fx = w(d, gz)
            out[fx.path.name] = fx
    for gz in (True, False):
        for w in (write_arc, write_arc_spaces):
            fx = w(d, gz)
            out[fx.path.name] = fx
    for w in (write_skip_length, write_stale_skip_length):
        fx = w(d)
        out[fx.path.name] = fx
    assert sorted(out) == sorted(valid_names()), sorted(set(out) ^ set(valid_names()))
    return out


def generate_broken(directory) -> dict:
    """Write every broken fixture into ``directory``; {file name: BrokenFile}."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    out = {}
    for w in BROKEN_WRITERS:
        bf = w(d)
        bf.what = " ".join((bf.what or "").split())
        out[bf.path.name] = bf
    assert sorted(out) == sorted(broken_names()), sorted(set(out) ^ set(broken_names()))
    return out


if __name__ == "__main__":  # pragma: no cover - `python tests/warcgen.py DIR` to look at the files
    import sys
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "warcgen-out")
    for n in generate_valid(target / "valid"):
        print("valid ", n)
    for n, b in generate_broken(target / "broken").items():
        print("broken", n, b.bad_offset, b.expect)
