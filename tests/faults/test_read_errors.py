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
import re
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
            defects = []
            for rec in reader.open(path, on_defect=lambda d: defects.append(str(d))):
                if n == 3:
                    os.truncate(path, cut)
                n += 1
            if defects:
                print(json.dumps({"ok": n, "defects": defects}))
                sys.exit(0)
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
    """A WARC cut short under the reader reads as a file cut short: the records before the cut,
    then one truncated defect naming the file and the byte of the record it falls in."""
    p = tmp_path / "w.warc.gz"
    shutil.copyfile(BIG, p)
    got = child("warc", p, 200_000)
    assert "error" not in got and 3 < got["ok"] and len(got["defects"]) == 1, got
    assert re.match(rf"{re.escape(str(p))} at byte \d+: .*the file ends", got["defects"][0]), got


def test_collection_query_over_a_segment_cut_short(built, tmp_path):
    coll = tmp_path / "c"
    run_ok(["init", str(coll)])
    run_ok(["add", str(coll), str(SMALL), str(BIG)])
    seg = next((coll / "indexes").glob("*.seg"))
    got = child("query", seg, seg.stat().st_size // 2, coll)
    assert got.get("error") == "IndexFormatError" and str(seg) in got["message"], got


# ------------------------------------------------------------------------------------------- EIO

@pytest.fixture(scope="module")
def shim(tmp_path_factory) -> Path:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler to build the EIO shim (tests/eioshim.c)")
    out = tmp_path_factory.mktemp("shim") / "eioshim.so"
    r = subprocess.run([cc, "-shared", "-fPIC", "-O1", "-o", str(out), str(TESTS / "eioshim.c"), "-ldl"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"the EIO shim does not build: {r.stderr[-500:]}")
    return out


def eio_env(shim: Path, paths, start: int) -> dict:
    env = dict(os.environ)
    env.update(LD_PRELOAD=str(shim), WARCHIVE_EIO_PATHS=":".join(str(p) for p in paths),
               WARCHIVE_EIO_FROM=str(start), PYTHONFAULTHANDLER="1")
    return env


def under_eio(shim: Path, paths, start: int, argv) -> subprocess.CompletedProcess:
    return subprocess.run(command(argv), capture_output=True, text=True, timeout=120, env=eio_env(shim, paths, start))


def fails_at(r: subprocess.CompletedProcess, path: Path) -> int:
    """The byte offset a failed command's message names for ``path`` (exit 1, no traceback)."""
    assert r.returncode == 1, f"exit {r.returncode}: {r.stderr[-2000:]}"
    assert "Traceback" not in r.stderr and "Fatal Python error" not in r.stderr, r.stderr[-2000:]
    assert "Input/output error" in r.stderr, r.stderr
    m = re.search(re.escape(str(path)) + r" at byte (\d+)", r.stderr)
    assert m, f"the message does not name {path} and a byte: {r.stderr!r}"
    return int(m.group(1))


@pytest.fixture(scope="module")
def copies(tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("eio")
    out = {}
    for p in (BIG, SMALL):
        shutil.copyfile(p, d / p.name)
        out[p.name] = d / p.name
    lines = run_ok(["index", str(out[BIG.name])]).stdout.splitlines()
    out["lines"] = [(int(json.loads(x.split(" ", 2)[2])["offset"]), x) for x in lines]
    return out


@pytest.mark.parametrize("flags", [[], ["--verify"], ["-j", "2"]])
def test_index_of_a_file_that_fails_to_read(shim, copies, flags):
    big = copies[BIG.name]
    at = fails_at(under_eio(shim, [big], 3_000_000, ["index", *flags, str(big)]), big)
    assert 0 <= at <= 3_000_000 + (1 << 20)   # the failing read began at most a read window before


def test_extract_of_a_record_that_fails_to_read(shim, copies):
    big = copies[BIG.name]
    off = next(o for o, _ in copies["lines"] if o > 3_000_000)
    at = fails_at(under_eio(shim, [big], off + 100, ["extract", str(big), str(off)]), big)
    assert off <= at <= off + 100
    assert under_eio(shim, [big], off + 100, ["extract", str(big), str(copies["lines"][0][0])]).returncode == 0


def test_load_and_cdx_of_a_collection_whose_warc_fails(shim, copies, tmp_path):
    coll = tmp_path / "c"
    run_ok(["init", str(coll)])
    run_ok(["add", str(coll), str(BIG)])
    warc = coll / "archive" / BIG.name
    off, line = next((o, x) for o, x in copies["lines"] if o > 3_000_000 and '"status": "200"' in x)
    fields = json.loads(line.split(" ", 2)[2])
    r = under_eio(shim, [warc], 0, ["load", fields["url"], line.split(" ")[1], str(coll)])
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert str(warc) in r.stderr and "Input/output error" in r.stderr and "could be loaded" in r.stderr
    # the index is read as it is (mapped, not through read calls): cdx answers
    r = under_eio(shim, [warc], 0, ["cdx", str(coll), "--url", fields["url"]])
    assert r.returncode == 0 and fields["url"] in r.stdout, r.stderr


def test_store_get_reads_around_chunks_that_fail(shim, tmp_path):
    from storekit import make_store
    from warchive.store import put

    store = make_store(tmp_path, fragment_size=4096)
    put(store, str(SMALL))
    man = store.manifest(SMALL.name)
    chunks = [store.chunk_path(man, i) for i in range(man.n)]
    out = tmp_path / "got"
    r = under_eio(shim, chunks[:man.m], 20_000, ["store", "get", store.root, SMALL.name, "-o", str(out)])
    assert r.returncode == 0, r.stderr
    assert out.read_bytes() == SMALL.read_bytes()
    assert "Input/output error" in r.stderr and all(c in r.stderr for c in chunks[:man.m]), r.stderr
    out.unlink()
    r = under_eio(shim, chunks[:man.m + 1], 20_000, ["store", "get", store.root, SMALL.name, "-o", str(out)])
    assert r.returncode == 1 and "Traceback" not in r.stderr and not out.exists(), r.stderr
    assert "stripe" in r.stderr and chunks[man.m] in r.stderr, r.stderr


def test_replay_of_a_capture_whose_warc_fails_is_503(shim, copies, tmp_path):
    root = tmp_path / "root"
    coll = root / "web"
    run_ok(["init", str(coll)])
    run_ok(["add", str(coll), str(BIG), str(SMALL)])
    warc = coll / "archive" / BIG.name
    line = next(x for o, x in copies["lines"] if '"status": "200"' in x and '"mime": "text/html"' in x)
    url, ts = json.loads(line.split(" ", 2)[2])["url"], line.split(" ")[1]
    proc = subprocess.Popen(command(["serve", "--root", str(root), "--port", "0", "--no-access-log"]),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env=eio_env(shim, [warc], 0))
    try:
        first = proc.stderr.readline()
        m = re.match(r"warchive serve: (http://127\.0\.0\.1:\d+/) ", first)
        assert m, first
        base = m.group(1)

        def get(path: str):
            for _ in range(100):
                try:
                    with urllib.request.urlopen(base + path, timeout=10) as resp:
                        return resp.status, resp.read()
                except urllib.error.HTTPError as e:
                    return e.code, e.read()
                except OSError:
                    time.sleep(0.05)
            pytest.fail("the server did not answer")

        status, body = get(f"web/{ts}id_/{url}")
        assert status == 503, (status, body[:300])
        assert b"Input/output error" in body and b"could be loaded" in body
        assert get("")[0] == 200                                # and it goes on serving
        status, body = get(f"web/cdx?url={url}&output=json")
        assert status == 200 and url.encode() in body
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.communicate(timeout=20)
