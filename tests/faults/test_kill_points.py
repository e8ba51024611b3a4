"""A kill just before and just after every rename, link and unlink of a publishing operation.

Random kills (test_kill_cli.py) rarely land in the few microseconds between two renames of a
multi-file publication, and those are the moments where a file set can be half old, half new.
Here a forked child runs the operation with ``os.replace``, ``os.rename``, ``os.link`` and
``os.unlink`` wrapped so that the n-th such call ends the process (``os._exit``, which runs no
cleanup, as SIGKILL) just before or just after it, for n = 1, 2, ... until a run gets through:
every moment between two steps of the publication is a kill point once. After each, what is
published must be whole (old or new, never a mix), and a rerun must complete.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable, List

import pytest

from warchive.collection import Collection
from warchive.index.segment import Segment, write_segment
from warchive.index.zipnum import ZipNumIndex, write_zipnum

pytestmark = pytest.mark.faults

DATA = Path(__file__).resolve().parents[1] / "data" / "wget"
BIG = DATA / "docs-python-3.11.warc.gz"
SMALL = DATA / "docs-python-3.11-recrawl.warc.gz"
CALLS = ("replace", "rename", "link", "unlink")
DIED = 77


def die_at(n: int, after: bool) -> None:
    """In this (child) process, end at the n-th publishing call, before or after it."""
    count = [0]
    for name in CALLS:
        real = getattr(os, name)

        def wrapped(*a, _real=real, **k):
            count[0] += 1
            if count[0] == n and not after:
                os._exit(DIED)
            r = _real(*a, **k)
            if count[0] == n and after:
                os._exit(DIED)
            return r
        setattr(os, name, wrapped)


def run_until(n: int, after: bool, fn: Callable[[], object]) -> bool:
    """Run fn in a forked child that dies at the n-th publishing call; True if it died there."""
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            die_at(n, after)
            fn()
        except BaseException:
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    assert code in (0, DIED), f"the child failed (exit {code}) at call {n}"
    return code == DIED


def every_kill_point(fn: Callable[[], object], reset: Callable[[], None], check: Callable[[], None],
                     rerun_check: Callable[[], None]) -> int:
    """Kill fn at every publishing call (before and after), check, rerun, check; the number of points."""
    points = 0
    for after in (False, True):
        n = 1
        while True:
            reset()
            died = run_until(n, after, fn)
            check()
            fn()
            rerun_check()
            if not died:
                break
            points += 1
            n += 1
    return points


def seg_lines(p: str) -> List[bytes]:
    s = Segment(p)
    try:
        return list(s.range(b"", None))
    finally:
        s.close()


def cluster_lines(prefix: Path) -> List[bytes]:
    z = ZipNumIndex(str(prefix) + ".idx")
    try:
        return list(z)
    finally:
        z.close()


@pytest.fixture(scope="module")
def lines(tmp_path_factory) -> List[bytes]:
    d = tmp_path_factory.mktemp("lines")
    c = Collection.init(str(d / "c"))
    seg = c.add([str(BIG), str(SMALL)])
    assert seg is not None
    return seg_lines(seg)


def test_zipnum_replaced_is_old_or_new_at_every_kill_point(tmp_path, lines):
    """Writing a cluster over an older one: the published .idx reads back as the old lines or the
    new ones (a reader must never pair the old summary with new parts)."""
    old, new = lines[: len(lines) // 3], lines
    prefix = tmp_path / "zz"

    def reset() -> None:
        for p in tmp_path.glob("zz*"):
            p.unlink()
        write_zipnum(old, prefix, lines_per_block=20, parts=3)

    def check() -> None:
        if Path(str(prefix) + ".idx").exists():
            got = cluster_lines(prefix)
            assert got in (old, new), f"the published cluster reads back {len(got)} lines, neither old nor new"

    points = every_kill_point(lambda: write_zipnum(new, prefix, lines_per_block=20, parts=3), reset, check,
                              lambda: (cluster_lines(prefix) == new) or pytest.fail("rerun"))
    assert points >= 2 * 5   # three parts, the .loc and the .idx, each before and after


def test_compact_loses_no_line_at_any_kill_point(tmp_path, lines):
    coll = tmp_path / "c"
    n = len(lines)
    src = tmp_path / "src"
    src.mkdir()
    for i, (a, b) in enumerate([(0, n // 2), (n // 4, 3 * n // 4), (n // 2, n)]):
        write_segment(lines[a:b], src / f"add-2026010100000{i}-00000{i}.seg")

    def reset() -> None:
        shutil.rmtree(coll, ignore_errors=True)
        (coll / "archive").mkdir(parents=True)
        shutil.copytree(src, coll / "indexes")

    def segs() -> List[str]:
        return sorted(str(p) for p in (coll / "indexes").glob("*.seg"))

    def check() -> None:
        assert sorted({x for p in segs() for x in seg_lines(p)}) == lines, "a line was lost"

    def rerun_check() -> None:
        assert len(segs()) == 1 and seg_lines(segs()[0]) == lines

    assert every_kill_point(lambda: Collection(str(coll)).compact(), reset, check, rerun_check) >= 2 * 4


def test_add_publishes_whole_files_at_every_kill_point(tmp_path, lines):
    coll = tmp_path / "c"

    def reset() -> None:
        shutil.rmtree(coll, ignore_errors=True)
        Collection.init(str(coll))

    def archived() -> dict:
        return {p.name: p for p in (coll / "archive").iterdir() if not p.name.endswith((".part", ".tmp"))}

    def check() -> None:
        for name, p in archived().items():
            assert p.read_bytes() == (DATA / name).read_bytes(), f"archive/{name} is partial"
        got = sorted(x for p in (coll / "indexes").glob("*.seg") for x in seg_lines(str(p)))
        assert got in ([], lines)

    def rerun_check() -> None:
        assert set(archived()) == {BIG.name, SMALL.name}
        got = sorted({x for p in (coll / "indexes").glob("*.seg") for x in seg_lines(str(p))})
        assert got == lines

    assert every_kill_point(lambda: Collection(str(coll)).add([str(BIG), str(SMALL)]), reset, check,
                            rerun_check) >= 2 * 3
