"""WACZ files whose index is hostile or large, made at test time (never committed).

Each is a whole WACZ (datapackage.json with every entry's SHA-256, its digest, pages, one small
WARC of one capture) around an index that one of these makes:

    entries_bomb(dir)    40 deflated indexes/index-NN.cdxj, each 250 MiB of 1,000-byte lines
                         (under the 256 MiB an entry may declare; 10 GiB together)
    members_bomb(dir)    a stored indexes/index.cdx.gz of 40 gzip members of 250 MiB of those lines
    short_lines(dir)     a deflated indexes/index.cdxj of 255 MiB of two-byte lines (134 million)
    large_index(dir, n)  a valid deflated indexes/index.cdxj of n CDXJ lines: the capture's own and
                         n - 1 of other URLs pointing at the same record

A repeated piece is deflated once and written as many times as it is repeated, its CRC-32
and SHA-256 combined as it goes, so nothing here holds or deflates an inflated size. The ZIP
is written by hand (local headers, central directory, end record; no ZIP64: every entry and
the file stay under 4 GiB) because Python's zipfile would deflate every copy again.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import struct
import zlib
from pathlib import Path
from typing import Iterable, List, Tuple

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

URL = "http://example.com/"
KEY = "com,example)/"
TS = "20240102030405"
BODY = b"<p>the one capture of the hostile WACZ</p>"
LINE = b"0" * 999 + b"\n"
DOS_TIME, DOS_DATE = 0, (2024 - 1980) << 9 | 1 << 5 | 2

# (name, method, CRC-32, inflated size, SHA-256 hex, stored pieces)
Entry = Tuple[str, int, int, int, str, List[bytes]]


@functools.lru_cache(maxsize=1)
def warc() -> Tuple[bytes, int]:
    """A gzipped WARC of one response for URL: (its bytes, the record's length), the same bytes
    each time."""
    out = io.BytesIO()
    http = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), ("Content-Length", str(len(BODY)))],
                            protocol="HTTP/1.1")
    w = WARCWriter(out, gzip=True)
    w.write_record(w.create_warc_record(URL, "response", payload=io.BytesIO(BODY), http_headers=http,
                                        warc_headers_dict={"WARC-Date": "2024-01-02T03:04:05Z",
                                                           "WARC-Record-ID": "<urn:uuid:00000000-0000-4000-8000-000000000001>"}))
    data = out.getvalue()
    return data, len(data)


def capture_line(key: str = KEY, url: str = URL) -> bytes:
    length = warc()[1]
    return (f"{key} {TS} " + json.dumps({"url": url, "mime": "text/html", "status": "200", "length": str(length),
                                          "offset": "0", "filename": "data.warc.gz"})).encode()


def repeated(piece: bytes, times: int, method: int) -> Entry:
    """An entry holding ``piece`` ``times`` times (deflated once when ``method`` is 8)."""
    crc, sha = 0, hashlib.sha256()
    for _ in range(times):
        crc = zlib.crc32(piece, crc)
        sha.update(piece)
    size = len(piece) * times
    if method == 0:
        return ("", 0, crc, size, sha.hexdigest(), [piece] * times)
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    stored = [c.compress(piece) for _ in range(times)] + [c.flush()]
    return ("", 8, crc, size, sha.hexdigest(), stored)


def deflated_lines(lines: Iterable[bytes]) -> Entry:
    """A deflated entry of ``lines`` (each given without its LF), deflated 4,096 lines at a time."""
    crc, sha, size = 0, hashlib.sha256(), 0
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    stored: List[bytes] = []
    it = iter(lines)
    while True:
        batch = [line for _, line in zip(range(4096), it)]
        if not batch:
            break
        text = b"\n".join(batch) + b"\n"
        crc, size = zlib.crc32(text, crc), size + len(text)
        sha.update(text)
        stored.append(c.compress(text))
    stored.append(c.flush())
    return ("", 8, crc, size, sha.hexdigest(), stored)


def named(name: str, e: Entry) -> Entry:
    return (name,) + e[1:]  # type: ignore[return-value]


def write_wacz(path: Path, indexes: List[Entry]) -> Path:
    """A WACZ at ``path``: the WARC, pages, the index entries given, datapackage.json and its digest."""
    data = warc()[0]
    pages = (b'{"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}\n'
             + json.dumps({"id": "1", "url": URL, "ts": "2024-01-02T03:04:05Z"}).encode() + b"\n")
    entries = [_whole("archive/data.warc.gz", data), _whole("pages/pages.jsonl", pages)] + indexes
    package = json.dumps({"profile": "data-package", "wacz_version": "1.1.1", "resources": [
        {"name": n.rsplit("/", 1)[-1], "path": n, "hash": "sha256:" + sha, "bytes": size}
        for n, _, _, size, sha, _ in entries]}, indent=1).encode()
    digest = json.dumps({"path": "datapackage.json", "hash": "sha256:" + hashlib.sha256(package).hexdigest()}).encode()
    _zip(path, entries + [_whole("datapackage.json", package), _whole("datapackage-digest.json", digest)])
    return path


def _whole(name: str, data: bytes) -> Entry:
    return (name, 0, zlib.crc32(data), len(data), hashlib.sha256(data).hexdigest(), [data])


def _zip(path: Path, entries: List[Entry]) -> None:
    central = []
    with open(path, "wb") as f:
        for name, method, crc, size, _, stored in entries:
            at = f.tell()
            nb = name.encode()
            csize = sum(len(p) for p in stored)
            f.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0x800, method, DOS_TIME, DOS_DATE, crc, csize,
                                size, len(nb), 0) + nb)
            for p in stored:
                f.write(p)
            central.append(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 3 << 8 | 20, 20, 0x800, method, DOS_TIME,
                                       DOS_DATE, crc, csize, size, len(nb), 0, 0, 0, 0, 0o100644 << 16, at) + nb)
        cd = f.tell()
        raw = b"".join(central)
        f.write(raw)
        f.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(central), len(central), len(raw), cd, 0))


# ---------------------------------------------------------------------------- the indexes

MIB = 1 << 20


def entries_bomb(directory: Path, entries: int = 40, size: int = 250 * MIB) -> Path:
    body = repeated(LINE * (MIB // len(LINE)), size // (MIB // len(LINE) * len(LINE)), 8)
    return write_wacz(Path(directory) / "entries.wacz",
                      [named(f"indexes/index-{i:02d}.cdxj", body) for i in range(entries)])


def members_bomb(directory: Path, members: int = 40, size: int = 250 * MIB) -> Path:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    piece = LINE * (MIB // len(LINE))
    member = b"".join([c.compress(piece) for _ in range(size // len(piece))] + [c.flush()])
    return write_wacz(Path(directory) / "members.wacz", [named("indexes/index.cdx.gz", repeated(member, members, 0))])


def short_lines(directory: Path, size: int = 255 * MIB) -> Path:
    return write_wacz(Path(directory) / "short.wacz",
                      [named("indexes/index.cdxj", repeated(b"0\n" * (MIB // 2), size // MIB, 8))])


def large_index(directory: Path, n: int) -> Path:
    """A valid WACZ whose deflated index.cdxj has ``n`` lines: the capture's line and n - 1 lines
    of URLs http://example.com/page/NNNNNNNN that point at the same record."""
    line = capture_line()
    rest = line[len(KEY) + len(TS) + 2:]

    def lines() -> Iterable[bytes]:
        yield line
        for i in range(n - 1):
            url = f"http://example.com/page/{i:08d}"
            yield (f"{KEY}page/{i:08d} {TS} ".encode()
                   + rest.replace(b'"url": "' + URL.encode() + b'"', b'"url": "' + url.encode() + b'"'))
    return write_wacz(Path(directory) / "large.wacz", [named("indexes/index.cdxj", deflated_lines(lines()))])
