"""Giant payloads in small WARC files, made at test time (never committed): a response whose
``Content-Encoding: gzip`` body inflates about 1000 times (a gzip bomb), and a response whose
``Transfer-Encoding: chunked`` body is gigabytes of zeros in a gzip member of a few megabytes.

Nothing here holds a payload whole: the bomb is deflated from zeros fed a mebibyte at a time, and
a record is written into its gzip member as its pieces are made. The records carry no digests
(computing them would read the payload; replay does not check them).

    write_giants(directory, {"bomb": ("gzip", 1 << 30), "chunked": ("chunked", 512 << 20)})
"""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import BinaryIO, Dict, Iterator, Tuple

ZEROS = bytes(1 << 20)
DATE = "2024-01-02T03:04:05Z"
TS = "20240102030405"


def gzip_zeros(n: int) -> bytes:
    """A gzip stream of n zero bytes (level 9: about n / 1030 bytes)."""
    c = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS + 16)
    out = []
    while n > 0:
        out.append(c.compress(ZEROS[:min(n, len(ZEROS))]))
        n -= len(ZEROS)
    out.append(c.flush())
    return b"".join(out)


def chunked_zeros(n: int, chunk: int = 1 << 20) -> Iterator[bytes]:
    """The chunked transfer coding of n zero bytes, a chunk at a time."""
    while n > 0:
        k = min(n, chunk)
        yield b"%x\r\n" % k + ZEROS[:k] + b"\r\n"
        n -= k
    yield b"0\r\n\r\n"


def chunked_length(n: int, chunk: int = 1 << 20) -> int:
    full, last = divmod(n, chunk)
    size = full * (len(b"%x\r\n" % chunk) + chunk + 2)
    if last:
        size += len(b"%x\r\n" % last) + last + 2
    return size + 5


def write_record(fh: BinaryIO, uri: str, http_head: bytes, body: Iterator[bytes], body_length: int) -> None:
    """One response record as one gzip member (level 1), its payload written as ``body`` yields it."""
    block_length = len(http_head) + body_length
    head = (f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:{abs(hash(uri)) % 10**12:012d}-0000-0000-0000-000000000000>\r\n"
            f"WARC-Date: {DATE}\r\nWARC-Target-URI: {uri}\r\nContent-Type: application/http; msgtype=response\r\n"
            f"Content-Length: {block_length}\r\n\r\n").encode()
    c = zlib.compressobj(1, zlib.DEFLATED, zlib.MAX_WBITS + 16)
    fh.write(c.compress(head + http_head))
    written = 0
    for piece in body:
        fh.write(c.compress(piece))
        written += len(piece)
    assert written == body_length
    fh.write(c.compress(b"\r\n\r\n"))
    fh.write(c.flush())


def write_giants(directory: Path, giants: Dict[str, Tuple[str, int]], name: str = "giants") -> Path:
    """``name.warc.gz`` in ``directory`` with a response at ``http://example.com/NAME`` for each
    giant: ("gzip", n) a bomb of n zeros as its Content-Encoding, ("chunked", n) n zeros chunked.
    Also a small page at ``http://example.com/small``."""
    path = Path(directory) / f"{name}.warc.gz"
    with open(path, "wb") as fh:
        small = b"<p>small</p>"
        write_record(fh, "http://example.com/small", b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(small), iter([small]), len(small))
        for giant, (kind, n) in giants.items():
            uri = f"http://example.com/{giant}"
            if kind == "gzip":
                bomb = gzip_zeros(n)
                head = (b"HTTP/1.1 200 OK\r\nContent-Type: video/mp4\r\nContent-Encoding: gzip\r\n"
                        b"Content-Length: %d\r\n\r\n" % len(bomb))
                write_record(fh, uri, head, iter([bomb]), len(bomb))
            elif kind == "chunked":
                head = b"HTTP/1.1 200 OK\r\nContent-Type: video/mp4\r\nTransfer-Encoding: chunked\r\n\r\n"
                write_record(fh, uri, head, chunked_zeros(n), chunked_length(n))
            else:
                raise ValueError(kind)
    return path
