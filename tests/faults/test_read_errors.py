"""Files cut short while open, and reads that fail with EIO: an ArchiveError naming the file and
where, never a crash.

Truncation: a child process opens an index (segment, sorted CDXJ, ZipNum summary) or a WARC,
truncates the file under it and reads on. A read of a mapped page past the file's new end is
SIGBUS, which kills the interpreter; so each case runs in a subprocess and the test wants it
to end normally, printing the error it met (class and message). The readers check the file's
size before they touch the map (warchive.sortedfile, warchive.index.zipnum, ext/index_lookup).

EIO: a shim preloaded into a `warchive` subprocess (tests/eioshim.c, built here with cc;
LD_PRELOAD) makes read/pread/preadv of one file fail with EIO from a given byte on, under the
kernels too (they read descriptors with pread). Under it: `index`, `extract`, `load`, `cdx`
over the file, `store get` of a stored file whose chunk fails, and `serve`, which must answer
the replay of a capture whose WARC cannot be read with a 503 and a message, and go on serving.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from killkit import command, run_ok

pytestmark = pytest.mark.faults

TESTS = Path(__file__).resolve().parents[1]
DATA = TESTS / "data" / "wget"
BIG = DATA / "docs-python-3.11.warc.gz"
SMALL = DATA / "docs-python-3.11-recrawl.warc.gz"

_CHILD = textwrap.dedent(r"""
    import json, os, sys
    kind, path, cut = sys.argv[1], sys.argv[2], int(sys.argv[3])
    from warchive.errors import ArchiveError
    try:
        if kind == "segment":
            from warchive.index.segment import Segment
            s = Segment(path, cache_bytes=0)
            os.truncate(path, cut)
            what = sys.argv[4]
            n = len(s.first_key) if what == "first_key" else sum(1 for _ in s.range(b"", None))
        elif kind == "cdxj":
            from warchive.index.sources import open_source
            s = open_source(path)
            os.truncate(path, cut)
            n = sum(1 for _ in s.range(b"", None))
        elif kind == "zipnum":
            from warchive.index.zipnum import ZipNumIndex
            z = ZipNumIndex(path)
            os.truncate(path, cut)
            n = sum(1 for _ in z.range(b"", None))
        elif kind == "warc":
            from warchive.warc import reader
            n = 0
            for rec in reader.open(path):
                if n == 3:
                    os.truncate(path, cut)
                n += 1
        elif kind == "query":
            from warchive.index.query import Index
            idx = Index(sys.argv[4])
            os.truncate(path, cut)
            n = len(idx.query("docs.python.org/", matchType="domain"))
        print(json.dumps({"ok": n}))
    except ArchiveError as e:
        print(json.dumps({"error": type(e).__name__, "message": str(e)}))
""")


def child(*args: object) -> dict:
    r = subprocess.run([sys.executable, "-X", "faulthandler", "-c", _CHILD, *map(str, args)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"the reader died (exit {r.returncode}; -7 is SIGBUS): {r.stderr[-2000:]}"
    return json.loads(r.stdout)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("idx")
    run_ok(["index", "-s", str(BIG), str(SMALL), "-o", str(d / "all.cdxj")])
    return d


def test_segment_cut_short_while_open(built, tmp_path):
    from warchive.index.segment import write_segment

    lines = [x for x in (built / "all.cdxj").read_bytes().split(b"\n") if x]
    seg = tmp_path / "all.seg"
    write_segment(lines, seg, block_bytes=4096)
    size = seg.stat().st_size
    got = child("segment", seg, size // 2, "range")
    assert got.get("error") == "IndexFormatError", got
    assert str(seg) in got["message"] and "cut short while open" in got["message"] and "at byte" in got["message"]
    write_segment(lines, seg, block_bytes=4096)
    got = child("segment", seg, 0, "first_key")
    assert got.get("error") == "IndexFormatError" and str(seg) in got["message"], got


def test_sorted_cdxj_cut_short_while_open(built, tmp_path):
    p = tmp_path / "all.cdxj"
    shutil.copyfile(built / "all.cdxj", p)
    got = child("cdxj", p, 100)
    assert got.get("error") == "FileError", got
    assert str(p) in got["message"] and "cut short while open" in got["message"] and "at byte" in got["message"]


def test_zipnum_summary_cut_short_while_open(built, tmp_path):
    run_ok(["zipnum", str(built / "all.cdxj"), "--lines", "5", "-o", str(tmp_path / "zz")])
    idx = tmp_path / "zz.idx"
    got = child("zipnum", idx, idx.stat().st_size // 3)
    assert got.get("error") == "IndexFormatError", got
    assert str(idx) in got["message"] and "cut short while open" in got["message"]


def test_warc_cut_short_while_read(tmp_path):
    p = tmp_path / "w.warc.gz"
    shutil.copyfile(BIG, p)
    got = child("warc", p, 200_000)
    assert got.get("error") in ("TruncatedError", "GzipError", "CorruptRecordError"), got
    assert str(p) in got["message"] and "at byte" in got["message"]


def test_collection_query_over_a_segment_cut_short(built, tmp_path):
    coll = tmp_path / "c"
    run_ok(["init", str(coll)])
    run_ok(["add", str(coll), str(SMALL), str(BIG)])
    seg = next((coll / "indexes").glob("*.seg"))
    got = child("query", seg, seg.stat().st_size // 2, coll)
    assert got.get("error") == "IndexFormatError" and str(seg) in got["message"], got
