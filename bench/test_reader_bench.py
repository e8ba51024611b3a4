"""Benchmark of the record reader: warchive.warc iteration beside warcio and FastWARC.

Each reader walks every record of the files, once without touching payloads
and once reading them, and returns per file the (type, offset) of each
record and, when reading, the payload bytes.  Both are asserted against
warcio's table (made once, untimed).  warcio has no payload-reading variant
here: its iterator inflates everything anyway.  Not part of the
default test run:

    pytest bench/test_reader_bench.py
    WARCHIVE_CORPUS=corpus pytest bench/test_reader_bench.py
"""

from __future__ import annotations

from typing import Dict, List, Tuple

import pytest
from fastwarc.warc import ArchiveIterator as FastwarcIterator
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

import warchive.warc

pytestmark = pytest.mark.benchmark(group="reader")

Found = Dict[str, Tuple[List[Tuple[str, int]], int]]


def _warchive(paths: List[str], payload: bool) -> Found:
    out = {}
    for p in paths:
        recs, body = [], 0
        with warchive.warc.open(p) as records:
            for rec in records:
                recs.append((rec.type, rec.offset))
                if payload:
                    body += len(rec.payload.read())
        out[p] = (recs, body)
    return out


def _fastwarc(paths: List[str], payload: bool) -> Found:
    out = {}
    for p in paths:
        recs, body = [], 0
        for rec in FastwarcIterator(p):
            recs.append((rec.headers.get("WARC-Type"), rec.stream_pos))
            if payload:
                body += len(rec.reader.read())
        out[p] = (recs, body)
    return out


def _warcio(paths: List[str]) -> Found:
    out = {}
    for p in paths:
        recs = []
        with open(p, "rb") as fh:
            it = WarcioIterator(fh)
            for rec in it:
                recs.append((rec.rec_type, it.get_record_offset()))
        out[p] = (recs, 0)
    return out


@pytest.fixture(scope="module")
def expected(warcio_records) -> Found:
    """Per file: warcio's [(type, offset)] and its payload bytes."""
    return {p: ([(t, off) for t, off, _, _ in rows], sum(size for *_, size in rows))
            for p, rows in warcio_records.items()}


def _records_only(expected: Found) -> Found:
    return {p: (recs, 0) for p, (recs, _) in expected.items()}


def test_warchive_records(run, warc_paths, expected):
    assert run(lambda: _warchive(warc_paths, False)) == _records_only(expected)


def test_warchive_payloads(run, warc_paths, expected):
    assert run(lambda: _warchive(warc_paths, True)) == expected


def test_fastwarc_records(run, warc_paths, expected):
    assert run(lambda: _fastwarc(warc_paths, False)) == _records_only(expected)


def test_fastwarc_payloads(run, warc_paths, expected):
    assert run(lambda: _fastwarc(warc_paths, True)) == expected


def test_warcio_records(run, warc_paths, expected):
    assert run(lambda: _warcio(warc_paths)) == _records_only(expected)
