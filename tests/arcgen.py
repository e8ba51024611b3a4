"""ARC files for ``warchive recompress`` (ARC in, WARC out), one way of warcio's ARC-to-WARC
conversion per file.

Written byte by byte with warcgen.py's ``arc_record`` (``url ip date mime
length`` line, the content, LF), deterministic; provenance in
tests/data/README.md, "ARC files for recompress". ``differs`` names the WARC
header fields in which warchive's WARC record is meant to differ from the
one ``warcio recompress`` writes, and why (docs/cli.md, "warchive
recompress"); every other header field, and every HTTP header and payload
byte, is the same. Like warcgen.py this is test data: it must not import warchive.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List

from warcgen import ARC_VERSION_BLOCK, HTML, arc_record, arc_records, gzip_member, http_bytes


@dataclass
class ArcCase:
    name: str                 # file name
    what: str
    data: bytes
    differs: Dict[str, str] = field(default_factory=dict)   # WARC field -> why, for the records that differ
    path: Path = Path()


def _filedesc(name: str, body: bytes = b"") -> bytes:
    return arc_record(b"filedesc://" + name.encode(), b"0.0.0.0", b"text/plain", ARC_VERSION_BLOCK + body)


def _resp(url: bytes, http: bytes, date: bytes = b"20240102030405") -> bytes:
    return arc_record(url, b"192.0.2.7", b"text/html", http, date)


def cases() -> List[ArcCase]:
    v1 = b"".join(b for b, _, _ in arc_records("arc_v1.arc"))
    meta = (b'<?xml version="1.0"?>\n<arcmetadata><software>warchive-tests arcgen</software>'
            b"<operator>tests</operator></arcmetadata>\n")
    page = http_bytes(b"HTTP/1.0 200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(HTML)))], HTML)
    chunked = http_bytes(b"HTTP/1.1 200 OK", [("Content-Type", "text/plain"), ("Transfer-Encoding", "chunked")],
                         b"4\r\nARC \r\n7\r\nchunked\r\n0\r\n\r\n")
    lf_head = b"HTTP/1.0 200 OK\nContent-Type:text/plain\nX-Note:   spaced   \n\nLF-only head\n"
    latin1 = http_bytes(b"HTTP/1.0 200 OK", [(b"Content-Type", b"text/plain"),
                                             (b"Content-Disposition", b"attachment; filename=cr\xe8me.txt")],
                        b"latin-1 header bytes\n")
    rewritten = {"HTTP head": "warcio writes it again from its parsed fields (CRLF, one space after the colon, "
                              "values stripped, non-ASCII values percent-encoded as RFC 8187); warchive keeps its bytes",
                 "Content-Length": "the length of the block as stored",
                 "WARC-Block-Digest": "over the block as stored"}
    return [
        ArcCase("arc_v1.arc", "warcgen's ARC v1 file: filedesc:// header, 200/404/301 responses, a dns: record", v1),
        ArcCase("arc_v1.arc.gz", "the same, one gzip member per ARC record",
                b"".join(gzip_member(b) for b, _, _ in arc_records("arc_v1.arc.gz"))),
        ArcCase("arc_whole.arc.gz", "the ARC v1 file gzipped as a whole (one member): both tools inflate it first",
                gzip.compress(v1, mtime=0)),
        ArcCase("arc_filedesc_body.arc", "a filedesc:// record with an XML metadata body after its version "
                "block; dates of 12 and 17 digits",
                _filedesc("arc_filedesc_body.arc", meta)
                + _resp(b"http://arc.example.com/short-date", page, b"202401020304")
                + _resp(b"http://arc.example.com/long-date", page, b"20240102030405123")),
        ArcCase("arc_space_url.arc", "a URL with spaces (WARC-Target-URI with %20) and an empty record (length 0)",
                _filedesc("arc_space_url.arc") + _resp(b"http://arc.example.com/a b/c d.html", page)
                + _resp(b"http://arc.example.com/empty", b"")),
        ArcCase("arc_chunked.arc", "a chunked HTTP/1.1 response", _filedesc("arc_chunked.arc")
                + _resp(b"http://arc.example.com/chunked", chunked),
                {"WARC-Payload-Digest": "over the de-chunked entity body (WARC 1.1 6.3.2); warcio's over the "
                 "chunked bytes (webrecorder/warcio#74)"}),
        ArcCase("arc_odd_head.arc", "an HTTP head warcio writes again: LF-only lines, 'Name:value' without a "
                "space, a padded value", _filedesc("arc_odd_head.arc") + _resp(b"http://arc.example.com/lf", lf_head),
                rewritten),
        ArcCase("arc_latin1_head.arc", "a raw Latin-1 byte in an HTTP header value (warcio percent-encodes it)",
                _filedesc("arc_latin1_head.arc") + _resp(b"http://arc.example.com/latin1", latin1), rewritten),
    ]


def generate(directory) -> Dict[str, ArcCase]:
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    out = {}
    for c in cases():
        c.path = d / c.name
        c.path.write_bytes(c.data)
        out[c.name] = c
    return out


if __name__ == "__main__":  # pragma: no cover - `python tests/arcgen.py DIR` to look at the files
    import sys
    for n in generate(Path(sys.argv[1] if len(sys.argv) > 1 else "arcgen-out")):
        print(n)
