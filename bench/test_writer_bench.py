"""Benchmark of the WARC writer: warchive.warc.writer beside warcio's WARCWriter, per-record gzip.

The responses of the bench files (exact HTTP messages) are written as
response records into a temporary directory. Each benchmark returns what it
wrote; the asserts compare it with warcio's reading of it (every block equal
to its message, in order; the offsets and lengths the writer reported equal
warcio's) before a time means anything. Not part of the default test run:

    pytest bench/test_writer_bench.py
    WARCHIVE_CORPUS=corpus pytest bench/test_writer_bench.py
"""

from __future__ import annotations

import io
import os
import shutil
import tempfile
from typing import List, Tuple

import pytest
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

import warchive.warc
from warchive.warc.writer import WarcWriter

pytestmark = pytest.mark.benchmark(group="writer")

LIMIT = 200 << 20  # bytes of messages taken from the bench files


@pytest.fixture(scope="module")
def messages(warc_paths) -> List[Tuple[str, str, bytes]]:
    out, total = [], 0
    for p in warc_paths:
        with warchive.warc.open(p, types={"response"}) as records:
            for rec in records:
                if rec.target_uri and rec.target_uri.startswith("http"):
                    msg = rec.block().read()
                    out.append((rec.target_uri, rec.date, msg))
                    total += len(msg)
                    if total > LIMIT:
                        return out
    return out


@pytest.fixture
def outdir():
    d = tempfile.mkdtemp(prefix="wbench-")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def _warchive(messages, d: str, compression: str = "gzip"):
    shutil.rmtree(d, ignore_errors=True)
    reports = []
    with WarcWriter(d, "BENCH", compression=compression, host="bench", on_record=reports.append) as w:
        for uri, date, msg in messages:
            w.write_response(uri, msg, date=date)
    return w.closed_files, reports


def _warcio(messages, d: str) -> str:
    from warcio.warcwriter import WARCWriter

    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, "warcio.warc.gz")
    with open(path, "wb") as f:
        w = WARCWriter(f, gzip=True)
        for uri, date, msg in messages:
            w.write_record(w.create_warc_record(uri, "response", payload=io.BytesIO(msg), length=len(msg),
                                                warc_headers_dict={"WARC-Date": date}))
    return path


def _read_back(path: str):
    """warcio's view: (offset, length, type) per record."""
    out = []
    with open(path, "rb") as f:
        it = WarcioIterator(f)
        for rec in it:
            rec.content_stream().read()
            off = it.get_record_offset()
            it.read_to_end()
            out.append((off, it.get_record_length(), rec.rec_type))
    return out


@pytest.mark.parametrize("compression", ["gzip", "zstd", "none"])
def test_warchive_writer(run, messages, outdir, compression):
    files, reports = run(lambda: _warchive(messages, outdir, compression))
    responses = [r for r in reports if r.type == "response"]
    assert len(responses) == len(messages)
    got = []
    for f in files:
        with warchive.warc.open(f, types={"response"}) as records:
            for rec in records:
                block = rec.block().read()      # before rec.length, which finishes the record
                got.append((rec.offset, rec.length, block))
    assert [(r.offset, r.length) for r in responses] == [(o, n) for o, n, _ in got]
    assert [b for _, _, b in got] == [m for _, _, m in messages]
    if compression != "zstd":
        theirs = [(o, n) for o, n, t in _read_back(files[0]) if t == "response"]
        assert theirs == [(r.offset, r.length) for r in responses if r.filename == os.path.basename(files[0])]


def test_warcio_writer(run, messages, outdir):
    path = run(lambda: _warcio(messages, outdir))
    assert sum(1 for r in _read_back(path) if r[2] == "response") == len(messages)
