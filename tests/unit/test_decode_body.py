"""warchive.warc.content.decode_body: de-chunking and decoding bytes that are not (yet) a record."""

import gzip
import io
import zlib

from warchive.warc.content import decode_body

TEXT = b"<p>" + b"the payload " * 300 + b"</p>"


def chunk(data: bytes, n: int) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(data[i:i + n]), data[i:i + n]) for i in range(0, len(data), n)) + b"0\r\n\r\n"


def test_plain_passes_through():
    assert decode_body(TEXT) is TEXT


def test_chunked_and_encodings():
    assert decode_body(chunk(TEXT, 17), "chunked") == TEXT
    assert decode_body(chunk(TEXT, 17), "Chunked ") == TEXT
    z = gzip.compress(TEXT, mtime=0)
    assert decode_body(z, None, "gzip") == TEXT
    assert decode_body(chunk(z, 5), "chunked", "GZIP") == TEXT
    assert decode_body(zlib.compress(TEXT), None, "deflate") == TEXT
    raw = zlib.compressobj(wbits=-15)
    assert decode_body(raw.compress(TEXT) + raw.flush(), None, "deflate") == TEXT   # raw deflate, as some servers


def test_forgiving():
    assert decode_body(TEXT, "chunked") == TEXT                 # says chunked, is not: passed through
    assert decode_body(TEXT, None, "gzip") == TEXT              # says gzip, is not: passed through
    assert decode_body(TEXT, None, "x-unknown") == TEXT
    z = gzip.compress(TEXT, mtime=0)
    part = decode_body(z[:len(z) // 2], None, "gzip")           # truncated: what could be decoded
    assert TEXT.startswith(part) and 0 < len(part) < len(TEXT)
    c = chunk(TEXT, 100)
    assert TEXT.startswith(decode_body(c[:500], "chunked"))


def test_broken_chunks_as_warcio_reads_them():
    """warcio's ChunkedDataReader, on a chunk not followed by CRLF, passes the rest through from its
    size line on but drops the two bytes it read in place of the CRLF; and a body whose first
    blocks decode to nothing still counts as undecoded when a later block fails."""
    from warcio.bufferedreaders import ChunkedDataReader

    def warcio(body, encoding=None):
        return ChunkedDataReader(io.BytesIO(body), decomp_type=encoding).read()

    for body in (b"5\r\nHello\r\n5\r\nWorldXX3\r\nabc\r\n0\r\n\r\n", b"5\r\nHelloX", b"3\r\nabc\r\n0\r\nX\r\n"):
        assert decode_body(body, "chunked") == warcio(body), body
    z = gzip.compress(TEXT, mtime=0)
    broken = z[:8] + b"\r\n" + b"not gzip from here on" * 3    # its first chunk yields no bytes yet
    body = chunk(broken, 8)
    assert decode_body(body, "chunked", "gzip") == warcio(body, "gzip")
