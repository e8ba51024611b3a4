"""Benchmark of kernel gzip_members: member heads only, whole members, and isal.igzip beside them.

Each benchmark walks every gzip member of the files and asserts what it found
against a table made once by another implementation (isal_zlib, member by
member): the member offsets, and for the full inflates the inflated size.
Not part of the default test run:

    pytest bench/test_gzip_members_bench.py                       # Wget fixtures
    WARCHIVE_CORPUS=corpus pytest bench/test_gzip_members_bench.py
"""

from __future__ import annotations

from typing import Dict, List, Tuple

import isal.igzip
import pytest
from isal import isal_zlib

from warchive._ext.gzip_members import Reader

HEAD = 1024        # about what the indexer inflates of a record: WARC head + HTTP head
CHUNK = 64 << 10

pytestmark = pytest.mark.benchmark(group="gzip members")


def _member_table(path: str) -> Tuple[List[int], int]:
    """(start offset of every member, total inflated bytes), by isal_zlib one member at a time."""
    with open(path, "rb") as f:
        data = memoryview(f.read())
    starts, raw, pos = [], 0, 0
    while pos < len(data):
        starts.append(pos)
        d = isal_zlib.decompressobj(16 + isal_zlib.MAX_WBITS)
        p = pos
        while not d.eof:
            chunk = data[p:p + CHUNK]
            assert chunk, f"{path}: member at {pos} is truncated"
            raw += len(d.decompress(chunk))
            p += len(chunk)
        pos = p - len(d.unused_data)
    return starts, raw


@pytest.fixture(scope="module")
def members(warc_paths) -> Dict[str, Tuple[List[int], int]]:
    return {p: _member_table(p) for p in warc_paths}


def _heads_only(paths: List[str]) -> Dict[str, List[int]]:
    """Inflate HEAD bytes of each member, then jump to the next one on Wget's `sl` length."""
    found = {}
    for p in paths:
        r = Reader(p)
        starts, off = [], 0
        try:
            while r.member_begin(off):
                starts.append(off)
                if r.member_head(HEAD)[:5] != b"WARC/":
                    raise AssertionError(f"{p}: member at {off} does not start with a WARC record")
                off = r.member_finish()
        finally:
            r.close()
        found[p] = starts
    return found


def _full(paths: List[str], whole: bool) -> Dict[str, Tuple[List[int], int]]:
    """Inflate every member and check CRC-32/ISIZE: streaming (member_finish, verify) or at once (member_whole)."""
    found = {}
    for p in paths:
        r = Reader(p, verify=True)
        starts, off, raw = [], 0, 0
        try:
            while r.member_begin(off):
                starts.append(off)
                off = r.member_whole() if whole else r.member_finish()
                raw += r.member_produced
        finally:
            r.close()
        found[p] = (starts, raw)
    return found


def _igzip(paths: List[str]) -> Dict[str, int]:
    """The baseline: isal.igzip streaming decompression of each file, 1 MiB reads."""
    raw = {}
    for p in paths:
        n = 0
        with isal.igzip.open(p) as f:
            while True:
                b = f.read(1 << 20)
                if not b:
                    break
                n += len(b)
        raw[p] = n
    return raw


def test_heads_only(run, warc_paths, members):
    found = run(lambda: _heads_only(warc_paths))
    assert found == {p: starts for p, (starts, _) in members.items()}


def test_full_inflate_streaming(run, warc_paths, members):
    assert run(lambda: _full(warc_paths, whole=False)) == members


def test_full_inflate_whole_members(run, warc_paths, members):
    assert run(lambda: _full(warc_paths, whole=True)) == members


def test_baseline_isal_igzip(run, warc_paths, members):
    assert run(lambda: _igzip(warc_paths)) == {p: raw for p, (_, raw) in members.items()}
