"""Kernel gzip_write: raw deflate parts and the C worker the WARC writer deflates blocks in.

The oracle is zlib's inflate: every stream we make must inflate to exactly the input, parts
made separately must concatenate into one stream (only the last one final), and a non-final
part must not end the stream."""

import os
import zlib

import pytest
from hypothesis import given, settings, strategies as st

from warchive._ext.gzip_write import DeflateWorker, Deflater
from warchive.errors import ArchiveError

TEXT = b"".join(b"<p>line %d of a page, with some repeated words words words</p>\n" % i for i in range(3000))


def inflate(data: bytes) -> bytes:
    d = zlib.decompressobj(-15)
    out = d.decompress(data) + d.flush()
    assert d.eof, "the stream has no final block"
    assert d.unused_data == b"", "bytes after the final block"
    return out


@pytest.mark.parametrize("level", [0, 1, 2, 3])
@pytest.mark.parametrize("data", [b"", b"x", TEXT, os.urandom(200_000)], ids=["empty", "one", "text", "random"])
def test_final_part_inflates_to_the_input(level, data):
    out = Deflater(level).part(data, True, b"\r\n\r\n")
    assert inflate(out) == data + b"\r\n\r\n"
    if data is TEXT:
        assert len(out) < len(data) // 3     # it did compress


@given(st.binary(max_size=70_000), st.binary(max_size=70_000), st.integers(0, 3))
@settings(max_examples=60, deadline=None)
def test_parts_concatenate_into_one_stream(a, b, level):
    first = Deflater(level).part(a, False)
    d = zlib.decompressobj(-15)
    assert d.decompress(first) == a and not d.eof     # sync-flushed, not final
    assert inflate(first + Deflater(level).part(b, True)) == a + b


def test_bad_level():
    with pytest.raises(ValueError):
        Deflater(4)
    with pytest.raises(ValueError):
        DeflateWorker(-1)


@given(st.lists(st.binary(max_size=50_000), max_size=8))
@settings(max_examples=30, deadline=None)
def test_worker_results_inflate_to_their_inputs(blocks):
    w = DeflateWorker(2, 100)
    try:
        for blk in blocks:
            w.post(blk, b"\r\n\r\n")
            assert w.busy
            assert inflate(w.result()) == blk + b"\r\n\r\n"
            assert not w.busy
    finally:
        w.close()


def test_worker_one_job_at_a_time_and_buffers_kept_alive():
    w = DeflateWorker(1, 0)      # no spinning: every job wakes the sleeping thread
    w.post(bytes(TEXT))          # the only reference to the data is the worker's
    with pytest.raises(ArchiveError):
        w.post(b"second")
    assert inflate(w.result()) == TEXT
    with pytest.raises(ArchiveError):
        w.result()
    w.close()
    w.close()                    # twice is harmless


def test_worker_after_sleeping():
    import time

    w = DeflateWorker(2, 50)
    for _ in range(3):
        time.sleep(0.01)         # longer than the spin: the worker sleeps and must be woken
        w.post(TEXT)
        assert inflate(w.result()) == TEXT
    w.close()
