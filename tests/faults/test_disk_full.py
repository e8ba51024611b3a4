"""A full disk: a clear error naming the file, nothing published partially, no temporary file
left behind, and once space is freed the same command completes.

Each test mounts a tmpfs of its own (root only: skipped otherwise, or where mount is refused),
fills it with a filler file until only ``free`` bytes are left, points the command's output at
it, checks the failure (exit status 1 and a message naming the file; an ArchiveError child
naming it for the library writer), deletes the filler and reruns. The expected outputs come
from an uninterrupted run on an ordinary directory.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Iterator, List

import pytest

from killkit import TEMP_SUFFIXES, run, run_ok
from warchive.errors import ArchiveError
from warchive.index.segment import Segment
from warchive.warc.check import check_file
from warchive.warc.recover import recover
from warchive.warc.writer import WarcWriter

pytestmark = pytest.mark.faults

DATA = Path(__file__).resolve().parents[1] / "data" / "wget"
BIG = DATA / "docs-python-3.11.warc.gz"
SMALL = DATA / "docs-python-3.11-recrawl.warc.gz"


class Full:
    """A small tmpfs at ``path``, filled but for ``free`` bytes by ``path/filler``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fill(self, free: int) -> None:
        st = os.statvfs(self.path)
        left = st.f_bavail * st.f_frsize - free
        with open(self.path / "filler", "wb") as f:
            f.write(b"\0" * max(left, 0))

    def free_space(self) -> None:
        (self.path / "filler").unlink()

    def files(self) -> List[str]:
        return sorted(str(p.relative_to(self.path)) for p in self.path.rglob("*") if p.is_file()
                      and p.name != "filler")

    def temp_files(self) -> List[str]:
        return [f for f in self.files() if f.endswith(TEMP_SUFFIXES)]


@pytest.fixture
def full(tmp_path) -> Iterator[Full]:
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"mount -t tmpfs refused: {r.stderr.strip()}")
    try:
        yield Full(mnt)
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def fails_naming(argv, name: Path) -> str:
    r = run(argv)
    assert r.returncode == 1, f"exit {r.returncode}: {r.stderr}"
    assert str(name) in r.stderr, f"the message does not name {name}: {r.stderr!r}"
    assert "Traceback" not in r.stderr
    return r.stderr


@pytest.mark.parametrize("free", [0, 64 << 10])
def test_index_output_on_a_full_disk(full, tmp_path, free):
    ref = tmp_path / "ref.cdxj"
    run_ok(["index", str(BIG), str(SMALL), "-o", str(ref)])
    out = full.path / "all.cdxj"
    full.fill(free)
    fails_naming(["index", str(BIG), str(SMALL), "-o", str(out)], out)
    assert full.files() == []          # nothing under the final name, no temporary file
    full.free_space()
    run_ok(["index", str(BIG), str(SMALL), "-o", str(out)])
    assert out.read_bytes() == ref.read_bytes()


def test_build_output_on_a_full_disk(full, tmp_path):
    src = tmp_path / "sorted.cdxj"
    run_ok(["index", "-s", str(BIG), str(SMALL), "-o", str(src)])
    ref = tmp_path / "ref.seg"
    run_ok(["build", str(src), "-o", str(ref)])
    out = full.path / "all.seg"
    full.fill(4096)
    fails_naming(["build", str(src), "-o", str(out)], out)
    assert full.files() == []
    full.free_space()
    run_ok(["build", str(src), "-o", str(out)])
    assert out.read_bytes() == ref.read_bytes()


def test_add_to_a_collection_on_a_full_disk(full, tmp_path):
    coll = full.path / "coll"
    run_ok(["init", str(coll)])
    full.fill(1 << 20)             # room for SMALL (0.6 MB), not for BIG (8.8 MB)
    err = fails_naming(["add", str(coll), str(SMALL), str(BIG)], coll / "archive" / BIG.name)
    assert "no space" in err.lower() and "free space" in err and "warchive check" not in err
    assert full.temp_files() == []
    assert [f for f in full.files() if f.startswith("coll/indexes/")] == []   # no segment
    for f in full.files():             # what was placed is whole
        assert (full.path / f).read_bytes() == (DATA / Path(f).name).read_bytes()
    full.free_space()
    run_ok(["add", str(coll), str(SMALL), str(BIG)])
    ref = tmp_path / "ref"
    run_ok(["init", str(ref)])
    run_ok(["add", str(ref), str(SMALL), str(BIG)])
    assert sorted(p.name for p in (coll / "archive").iterdir()) == sorted([SMALL.name, BIG.name])
    assert seg_lines(coll) == seg_lines(ref) != []


def seg_lines(coll: Path) -> List[bytes]:
    out: List[bytes] = []
    for p in sorted((coll / "indexes").glob("*.seg")):
        s = Segment(str(p))
        out += s.range(b"", None)
        s.close()
    return sorted(out)


def test_wacz_create_on_a_full_disk(full, tmp_path):
    coll = tmp_path / "coll"
    run_ok(["init", str(coll)])
    run_ok(["add", str(coll), str(SMALL), str(BIG)])
    out = full.path / "c.wacz"
    full.fill(2 << 20)
    fails_naming(["wacz", "create", str(coll), "-o", str(out)], out)
    assert full.files() == []
    full.free_space()
    run_ok(["wacz", "create", str(coll), "-o", str(out)])
    run_ok(["wacz", "validate", str(out)])


def test_recompress_on_a_full_disk(full, tmp_path):
    ref = tmp_path / "r.warc.gz"
    run_ok(["recompress", str(BIG), str(ref)])
    out = full.path / "r.warc.gz"
    full.fill(1 << 20)
    fails_naming(["recompress", str(BIG), str(out)], out)
    assert full.files() == []
    full.free_space()
    run_ok(["recompress", str(BIG), str(out)])
    assert out.read_bytes() == ref.read_bytes()


def test_store_put_on_a_full_disk(full, tmp_path):
    vols = [str(full.path / f"v{i}") for i in range(6)]
    store = full.path / "S"
    run_ok(["store", "init", str(store), "--volumes", *vols, "--fragment-size", "64K"])
    full.fill(1 << 20)
    r = run(["store", "put", str(store), str(BIG)])
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert BIG.name in r.stderr and "no space" in r.stderr.lower(), r.stderr
    assert run_ok(["store", "ls", str(store)]).stdout.strip() == ""     # not stored: no manifest
    assert full.temp_files() == []
    full.free_space()
    run_ok(["store", "put", str(store), str(BIG)])
    got = tmp_path / "got"
    run_ok(["store", "get", str(store), BIG.name, "-o", str(got)])
    assert got.read_bytes() == BIG.read_bytes()


def test_warc_writer_on_a_full_disk(full):
    d = full.path / "w"
    d.mkdir()
    full.fill(256 << 10)
    body = os.urandom(40_000)    # does not compress: the disk fills after a few records
    msg = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    written = 0
    with pytest.raises(ArchiveError) as e:
        w = WarcWriter(str(d), "FULL", max_size=100 << 20)
        try:
            for i in range(100):
                w.write_exchange(f"http://example.com/{i}", b"GET / HTTP/1.1\r\n\r\n", msg)
                written += 1
        finally:
            try:
                w.close()
            except ArchiveError:
                pass
    assert 0 < written < 100
    names = [p.name for p in d.iterdir()]
    assert len(names) == 1 and names[0] in str(e.value), (names, str(e.value))
    assert "no space" in str(e.value).lower()
    # the failed record was cut off again, so the file closed is whole: every record written
    # (a request and a response each, after a warcinfo record) and nothing of the failed one;
    # where even the cut failed it stays .open, and `recover` publishes its whole records
    full.free_space()
    path = str(d / names[0])
    if names[0].endswith(".open"):
        path = recover(path).path
    res = check_file(path)
    assert res.ok and res.records >= 2 * written + 1, (res.records, written)
