"""Benchmark of kernel cdx_lines: LineIndexer (skip-length and verify) beside cdxj-indexer's Python API.

The reference is cdxj-indexer 1.5.0's CDXJ output for each file, made once
and untimed.  The kernel alone (`LineIndexer`) leaves a few records to the
Python path (status SLOW: here Wget's resource/metadata records without a
payload digest, which must be hashed); the bench steps over them with
warcio's record table and asserts that the kernel wrote exactly the
reference lines of every other record.  `index_file` (the kernel with its
Python fallback, what `warchive index` runs) must equal the reference byte
for byte, and so must cdxj-indexer when it is timed.  Not part of the
default test run:

    pytest bench/test_cdx_lines_bench.py
    WARCHIVE_CORPUS=corpus pytest bench/test_cdx_lines_bench.py
"""

from __future__ import annotations

import io
import json
import os
from typing import Dict, List, Set, Tuple

import pytest
from cdxj_indexer.main import CDXJIndexer

from warchive._ext.cdx_lines import EOF, SLOW, LineIndexer
from warchive.index.cdx import IndexOptions, index_file

pytestmark = pytest.mark.benchmark(group="cdx lines")


def _cdxj_indexer(paths: List[str]) -> Dict[str, bytes]:
    out = {}
    for p in paths:
        buf = io.StringIO()
        CDXJIndexer(output=buf, inputs=[p]).process_all()
        out[p] = buf.getvalue().encode("utf-8")
    return out


@pytest.fixture(scope="module")
def reference(warc_paths) -> Dict[str, bytes]:
    return _cdxj_indexer(warc_paths)


@pytest.fixture(scope="module")
def next_record(warcio_records) -> Dict[str, Dict[int, int]]:
    """Per file: record offset -> offset of the record after it (where to resume after SLOW)."""
    return {p: {off: off + length for _, off, length, _ in rows} for p, rows in warcio_records.items()}


def _kernel(paths: List[str], verify: bool, resume: Dict[str, Dict[int, int]]) -> Dict[str, Tuple[bytes, Set[int]]]:
    out = {}
    for p in paths:
        ix = LineIndexer(p, json.dumps(os.path.basename(p))[1:-1].encode(), verify=verify)
        chunks, slow = [], set()
        while True:
            rc, chunk = ix.run()
            chunks.append(chunk)
            if rc == EOF:
                break
            if rc == SLOW:
                slow.add(ix.pos)
                ix.pos = resume[p][ix.pos]
        out[p] = (b"".join(chunks), slow)
    return out


def _without(lines: bytes, offsets: Set[int]) -> bytes:
    """The reference lines minus those of the records at these offsets."""
    keep = [ln for ln in lines.splitlines(keepends=True)
            if int(json.loads(ln.split(b" ", 2)[2])["offset"]) not in offsets]
    return b"".join(keep)


def _check_kernel(result, reference) -> None:
    for p, (lines, slow) in result.items():
        n = reference[p].count(b"\n")
        assert len(slow) <= max(16, n // 100), f"{p}: {len(slow)} of {n} records left to Python"
        assert lines == _without(reference[p], slow), f"{p}: kernel lines differ from cdxj-indexer's"


def _index_file(paths: List[str], verify: bool) -> Dict[str, bytes]:
    out = {}
    for p in paths:
        buf = io.BytesIO()
        index_file(p, buf.write, IndexOptions(verify=verify))
        out[p] = buf.getvalue()
    return out


def test_line_indexer_skip_length(run, warc_paths, reference, next_record):
    _check_kernel(run(lambda: _kernel(warc_paths, False, next_record)), reference)


def test_line_indexer_verify(run, warc_paths, reference, next_record):
    _check_kernel(run(lambda: _kernel(warc_paths, True, next_record)), reference)


def test_index_file_skip_length(run, warc_paths, reference):
    assert run(lambda: _index_file(warc_paths, False)) == reference


def test_index_file_verify(run, warc_paths, reference):
    assert run(lambda: _index_file(warc_paths, True)) == reference


def test_baseline_cdxj_indexer(benchmark, warc_paths, reference):
    # seconds per call even on the fixtures: three rounds, not pytest-benchmark's calibration
    assert benchmark.pedantic(lambda: _cdxj_indexer(warc_paths), rounds=3, iterations=1) == reference
