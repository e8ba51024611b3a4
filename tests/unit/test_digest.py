"""warchive.warc.digest: the streaming de-chunker against ``dechunk``, and the algorithms only checked."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warchive.warc.digest import ALGORITHMS, CHECKED, Dechunker, Digest, DigestError, dechunk


def _feed(body: bytes, cuts: list):
    d = Dechunker()
    pieces = []
    last = 0
    for c in sorted(set(cuts)) + [len(body)]:
        pieces += [bytes(p) for p in d.feed(body[last:c])]
        last = c
    return b"".join(pieces), d.ok


def _chunked(draw_chunks, ext: bool, lf: bool, trailer: bytes) -> bytes:
    eol = b"\n" if lf else b"\r\n"
    out = b""
    for c in draw_chunks:
        out += b"%x" % len(c) + (b";name=value" if ext else b"") + eol + c + eol
    return out + b"0" + eol + trailer + eol


chunk_lists = st.lists(st.binary(min_size=1, max_size=300), max_size=6)


@settings(max_examples=300, deadline=None)
@given(chunks=chunk_lists, ext=st.booleans(), lf=st.booleans(), trailer=st.sampled_from([b"", b"X-T: 1\r\n"]),
       cuts=st.lists(st.integers(0, 2000), max_size=8),
       cut_at=st.none() | st.integers(0, 2000),
       junk=st.none() | st.tuples(st.integers(0, 2000), st.binary(min_size=1, max_size=3)))
def test_dechunker_is_dechunk_piece_by_piece(chunks, ext, lf, trailer, cuts, cut_at, junk):
    body = _chunked(chunks, ext, lf, trailer)
    if junk is not None:      # a few bytes overwritten anywhere
        at = junk[0] % len(body)
        body = body[:at] + junk[1] + body[at + len(junk[1]):]
    if cut_at is not None:    # the body cut short
        body = body[: cut_at % (len(body) + 1)]
    whole = dechunk(body)
    got, ok = _feed(body, [c % (len(body) + 1) for c in cuts])
    if whole is None:
        assert ok is not True
    else:
        assert ok is True and got == b"".join(bytes(p) for p in whole)


@pytest.mark.parametrize("body", [b"", b"5\r\nhel", b"5\r\nhello", b"5\r\nhello\r\n", b"x" * 2000,
                                  b"5\r\nhelloXX0\r\n\r\n", b"-5\r\nhello\r\n0\r\n\r\n", b"0x5\r\nhello\r\n0\r\n\r\n"])
def test_dechunker_refuses_what_dechunk_refuses(body):
    assert dechunk(body) is None
    assert _feed(body, list(range(len(body))))[1] is not True


def test_only_checked_algorithms_have_no_key():
    for name, size in (("md5", 16), ("sha224", 28), ("sha384", 48), ("sha512", 64)):
        assert name not in ALGORITHMS and CHECKED[name].size == size
        raw = hashlib.new(name, b"x").digest()
        d = Digest.parse(f"{name}:{raw.hex()}", table=CHECKED)
        assert d.raw == raw and Digest.parse(d.label, table=CHECKED) == d
        with pytest.raises(DigestError):
            Digest.parse(d.label)          # the default table: what warchive writes and keys
        with pytest.raises(DigestError):
            d.key
    assert Digest.parse("md5:" + hashlib.md5(b"").hexdigest(), table=CHECKED).is_empty
