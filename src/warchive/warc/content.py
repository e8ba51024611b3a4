"""The content of an HTTP record as a browser saw it: de-chunked and decoded.

``content_stream(record)`` undoes ``Transfer-Encoding: chunked`` and a gzip,
deflate or (when the brotli module is installed) br ``Content-Encoding``, with
warcio's forgiving rules: a body that claims to be chunked but is not is
passed through from the first bad chunk-size line on, and a body that claims
an encoding but does not decode on its first block is passed through as is.
``decoded_stream(raw, chunked=..., encoding=...)`` does the same for a stream
when the caller decides what to undo (the capture loader follows pywb's rules).
"""

from __future__ import annotations

import io
import zlib
from typing import Any, BinaryIO, Callable, Iterator, Optional

try:
    import brotli  # type: ignore[import-untyped, unused-ignore]
except ImportError:   # not a dependency of warchive: without it "br" bodies are passed through
    brotli = None


INFLATE_MAX = 256 * 1024   # the most one decompress call may give (see _Decoded._feed)


def _decoder(encoding: Optional[str]) -> Optional[Callable[[], object]]:
    if not encoding:
        return None
    encoding = encoding.lower()
    if encoding == "gzip":
        return lambda: zlib.decompressobj(16 + zlib.MAX_WBITS)
    if encoding == "deflate":
        return lambda: zlib.decompressobj()
    if encoding == "br" and brotli is not None:
        return lambda: brotli.Decompressor()
    return None


def decodes(encoding: Optional[str]) -> bool:
    """Is ``encoding`` a Content-Encoding this module undoes (gzip, deflate; br with brotli)?"""
    return _decoder(encoding) is not None


class _Decoded(io.RawIOBase):
    """Feeds raw blocks through a decompressor; on a first-block failure passes data through."""

    def __init__(self, blocks, encoding: Optional[str]) -> None:
        super().__init__()
        self._blocks = blocks
        self._make = _decoder(encoding)
        self._encoding = (encoding or "").lower()
        self._dec: Any = self._make() if self._make else None
        self._first = True
        self._buf = b""
        self._tail = b""     # input the decompressor has not consumed yet (INFLATE_MAX reached)
        self._drain = False  # brotli holds output past INFLATE_MAX: to be had with empty input
        self._eof = False

    def readable(self) -> bool:
        return True

    def _feed(self, data: bytes) -> bytes:
        if self._dec is None:
            return data
        try:
            if hasattr(self._dec, "decompress"):
                # at most INFLATE_MAX out of one call: a bomb (a block inflating 1000x) is read
                # piece by piece, the input not inflated yet kept for the next read
                out = self._dec.decompress(data, INFLATE_MAX)
                self._tail = self._dec.unconsumed_tail
            elif hasattr(self._dec, "can_accept_more_data"):   # brotli >= 1.2: bounded output too
                out = self._dec.process(data, output_buffer_limit=INFLATE_MAX)
                self._drain = not self._dec.can_accept_more_data()
            else:
                out = self._dec.process(data)
        except Exception:
            if self._first:
                if self._encoding == "deflate":  # raw deflate without zlib wrapper
                    self._encoding = "deflate_alt"
                    self._dec = zlib.decompressobj(-zlib.MAX_WBITS)
                    return self._feed(data)
                self._dec = None
                self._tail, self._drain = b"", False
                return data
            self._tail, self._drain = b"", False
            return b""
        if out:   # as warcio: a block counts as first until some bytes have come out
            self._first = False
        return out

    def read(self, n: Optional[int] = -1) -> bytes:
        if n is None:
            n = -1
        while not self._eof and (n < 0 or len(self._buf) < n):
            if self._drain:
                self._drain = False
                got = self._feed(b"")
                if not got:   # (never stuck: no output means no more is held)
                    self._drain = False
                self._buf += got
                continue
            if self._tail:
                block: Optional[bytes] = self._tail
                self._tail = b""
            else:
                block = next(self._blocks, None)
            if block is None:
                self._eof = True
                break
            if block:
                self._buf += self._feed(block)
        if n < 0:
            out, self._buf = self._buf, b""
        else:
            out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def readinto(self, b: Any) -> int:
        data = self.read(len(b))
        n = len(data)
        b[:n] = data
        return n


def _raw_blocks(stream: BinaryIO, size: int = 16384):
    while True:
        b = stream.read(size)
        if not b:
            return
        yield b


def _chunked_blocks(stream: BinaryIO):
    """Yield de-chunked blocks; on a malformed chunk, yield the rest raw (warcio's rule)."""
    reader = io.BufferedReader(stream, 16384)  # type: ignore[type-var]
    while True:
        line = reader.readline(64)
        if not line:
            return
        try:
            if line[-2:] != b"\r\n":
                raise ValueError
            size = int(line[:-2].split(b";")[0], 16)
            if size > 2**31:
                raise ValueError
        except ValueError:
            yield line
            yield from _raw_blocks(reader)
            return
        if size == 0:
            if reader.read(2) != b"\r\n":
                yield line
                yield from _raw_blocks(reader)
            return
        data = b""
        while len(data) < size:
            more = reader.read(size - len(data))
            if not more:
                yield data
                return
            data += more
        crlf = reader.read(2)
        if crlf != b"\r\n":   # warcio drops the two bytes it read in place of the CRLF
            yield line + data
            yield from _raw_blocks(reader)
            return
        yield data


def decoded_stream(raw: BinaryIO, *, chunked: bool, encoding: Optional[str]) -> io.RawIOBase:
    """``raw`` de-chunked when ``chunked``, and decoded when ``encoding`` is one that ``decodes``
    (another is left alone), by the forgiving rules above; wrap it in io.BufferedReader."""
    blocks: Iterator[bytes] = _chunked_blocks(raw) if chunked else _raw_blocks(raw)
    return _Decoded(blocks, encoding if decodes(encoding) else None)


def decode_body(body: bytes, transfer_encoding: Optional[str] = None,
                content_encoding: Optional[str] = None) -> bytes:
    """The entity body as a browser sees it: ``body`` (the bytes after an HTTP head, as they came
    off the wire) de-chunked when ``transfer_encoding`` is ``chunked`` and decoded by
    ``content_encoding``, with the same forgiving rules as ``content_stream``. A truncated body
    gives what could be decoded of it. The fetcher uses this for link extraction and digests."""
    if content_encoding and _decoder(content_encoding) is None:
        content_encoding = None
    chunked = (transfer_encoding or "").strip().lower() == "chunked"
    if not chunked and not content_encoding:
        return body
    raw = io.BytesIO(body)
    blocks = _chunked_blocks(raw) if chunked else _raw_blocks(raw)
    if not content_encoding:
        return b"".join(blocks)
    return _Decoded(blocks, content_encoding).read()


def content_stream(record: Any, decode: bool = True) -> io.RawIOBase:
    """De-chunked payload of ``record`` (a reader's ``Record`` or a ``WholeRecord``), decoded
    too unless ``decode`` is false (its raw payload when it has no HTTP head)."""
    payload = record.payload
    http = record.http
    if not http:
        return payload
    encoding = http.get("content-encoding") if decode else None
    if encoding and _decoder(encoding) is None:
        encoding = None
    if http.get("transfer-encoding") == "chunked":
        blocks = _chunked_blocks(payload)
    elif encoding:
        blocks = _raw_blocks(payload)
    else:
        return payload
    return _Decoded(blocks, encoding)
