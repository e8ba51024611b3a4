"""warchive.warc.content.decode_body: de-chunking and decoding bytes that are not (yet) a record."""

import gzip
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
