"""SIGKILL at random moments of the `warchive` commands that publish files: nothing published is ever
partial, a rerun completes and leaves what an uninterrupted run leaves.

Each command is run as a user runs it (``python -m warchive ...``, tests/killkit.py) and killed
at stratified random points of its run. What must hold after every kill:

- ``index -o``, ``build``, ``zipnum``, ``recompress``, ``wacz create`` (one output, published by
  rename): the output is absent, or byte for byte what stood there before (half the runs start
  with an older output in place), or byte for byte the uninterrupted run's output. A ZipNum
  cluster is several files: the cluster its ``.idx`` publishes reads back whole, as the old
  lines or the new ones, never a mix.
- ``add``: every file under its final name in ``archive/`` is the file added, byte for byte;
  the segments hold no line or every line of the uninterrupted run.
- ``compact``: no line of the collection is lost at any moment, and every segment opens.

And the rerun of the same command line exits 0 with the uninterrupted run's result (``add``: the
same distinct lines; a kill after the new segment was published makes the rerun add them again,
counted as ``added twice``; `compact` then merges the copies).

The other writers have kill tests of their own that run in process (forked children), where a
kill can land between two records: the WARC writer (tests/unit/test_writer_crash.py: 50 kills,
500 under -m slow), the crawler (tests/unit/test_resume_once.py: >= 50, 300 under -m slow),
`store put` and `store repair` (tests/unit/test_store_kill.py: 60 each, 400 each under -m slow).

Default run: WARCHIVE_KILLS (4) kills per command; -m slow: 50 per command.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import zipfile
from pathlib import Path
from typing import Dict, List, Optional

import pytest

import killkit
from killkit import run_ok, temp_files
from warchive.index.segment import Segment
from warchive.index.zipnum import ZipNumIndex

pytestmark = pytest.mark.faults

DATA = Path(__file__).resolve().parents[1] / "data" / "wget"
BIG = DATA / "docs-python-3.11.warc.gz"
SMALL = DATA / "docs-python-3.11-recrawl.warc.gz"
KILLS = int(os.environ.get("WARCHIVE_KILLS", "4"))
SLOW_KILLS = 50
TALLIES: List[killkit.Tally] = []


def seg_lines(path: Path) -> List[bytes]:
    s = Segment(str(path))
    try:
        return list(s.range(b"", None))
    finally:
        s.close()


def finals(d: Path) -> Dict[str, bytes]:
    """The files under final names in ``d`` (not temporary ones), by name."""
    return {p.name: p.read_bytes() for p in sorted(d.iterdir())
            if p.is_file() and not p.name.endswith(killkit.TEMP_SUFFIXES)}


@pytest.fixture(scope="module")
def sorted_cdxj(tmp_path_factory) -> Path:
    p = tmp_path_factory.mktemp("in") / "sorted.cdxj"
    run_ok(["index", "-s", str(BIG), str(SMALL), "-o", str(p)])
    return p


class OneOutput:
    """A command that writes one file (or a ZipNum cluster) into ``out``: after a kill, each
    final name holds the old bytes or the new ones; after the rerun, exactly the new ones."""

    def __init__(self, work: Path, argv_of, old_argv=None, check_cluster: Optional[str] = None,
                 same=None) -> None:
        self.work = work
        self.same = same or (lambda a, b: a == b)
        self.out = work / "out"
        self.ref_dir = work / "ref"
        self.ref_dir.mkdir(parents=True)
        self.check_cluster = check_cluster
        run_ok(argv_of(self.ref_dir))
        self.ref = finals(self.ref_dir)
        self.old: Dict[str, bytes] = {}
        if old_argv is not None:
            old_dir = work / "old"
            old_dir.mkdir()
            run_ok(old_argv(old_dir))
            self.old = finals(old_dir)
        self.argv = argv_of(self.out)
        self.runs = 0
        self.leftovers = 0

    def reset(self) -> None:
        shutil.rmtree(self.out, ignore_errors=True)
        self.out.mkdir()
        self.runs += 1
        if self.old and self.runs % 2 == 0:   # every other run replaces an older output
            for name, data in self.old.items():
                (self.out / name).write_bytes(data)

    def check_killed(self) -> None:
        got = finals(self.out)
        self.leftovers += len(temp_files(self.out))
        for name, data in got.items():
            assert self.same(data, self.ref.get(name)) or data == self.old.get(name), f"{name}: neither old nor new"
        if self.check_cluster is not None:
            self._check_cluster(got)

    def _check_cluster(self, got: Dict[str, bytes]) -> None:
        idx = self.out / f"{self.check_cluster}.idx"
        if not idx.exists():
            return       # no cluster published
        want = [got[idx.name] == self.ref[idx.name]]
        z = ZipNumIndex(str(idx))
        try:
            lines = list(z)
        finally:
            z.close()
        src = self.ref_lines if want[0] else self.old_lines
        assert lines == src, "the published .idx does not read back as the cluster it was written with"

    def check_done(self) -> None:
        got = finals(self.out)
        assert got.keys() >= self.ref.keys(), f"the rerun left no {sorted(self.ref.keys() - got.keys())}"
        for name, data in self.ref.items():
            assert self.same(got[name], data), f"{name}: the rerun's output differs from an uninterrupted run's"


class Add:
    """`warchive add COLL BIG SMALL` into a new collection."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.coll = work / "coll"
        ref = work / "ref"
        run_ok(["init", str(ref)])
        run_ok(["add", str(ref), str(BIG), str(SMALL)])
        self.ref = sorted(line for p in (ref / "indexes").glob("*.seg") for line in seg_lines(p))
        self.argv = ["add", str(self.coll), str(BIG), str(SMALL)]
        self.leftovers = 0
        self.twice = 0

    def reset(self) -> None:
        shutil.rmtree(self.coll, ignore_errors=True)
        (self.coll / "archive").mkdir(parents=True)
        (self.coll / "indexes").mkdir()

    def lines(self) -> List[bytes]:
        return sorted(line for p in (self.coll / "indexes").glob("*.seg") for line in seg_lines(p))

    def check_archive(self) -> None:
        for name, data in finals(self.coll / "archive").items():
            assert data == (DATA / name).read_bytes(), f"archive/{name} is not the file added"

    def check_killed(self) -> None:
        self.check_archive()
        self.leftovers += len(temp_files(self.coll))
        assert finals(self.coll / "indexes").keys() == {p.name for p in (self.coll / "indexes").glob("*.seg")}
        assert self.lines() in ([], self.ref), "the segments hold part of the added lines"

    def check_done(self) -> None:
        self.check_archive()
        assert set(finals(self.coll / "archive")) == {BIG.name, SMALL.name}
        lines = self.lines()
        if lines == sorted(self.ref * 2):
            self.twice += 1
        else:
            assert lines == self.ref, "the rerun's segments differ from an uninterrupted add's"


class Compact:
    """`warchive compact COLL` of four segments with overlapping lines."""

    def __init__(self, work: Path, lines: List[bytes]) -> None:
        self.work = work
        self.coll = work / "coll"
        self.src = work / "segs"
        self.src.mkdir(parents=True)
        n = len(lines)
        cuts = [(0, n // 2), (n // 4, 3 * n // 4), (n // 2, n), (0, n)]   # every line in 2-3 segments
        for i, (a, b) in enumerate(cuts):
            (self.src / f"part{i}.cdxj").write_bytes(b"".join(x + b"\n" for x in lines[a:b]))
            run_ok(["build", str(self.src / f"part{i}.cdxj"), "-o", str(self.src / f"add-2026010100000{i}-00000{i}.seg")])
        self.ref = lines
        self.argv = ["compact", str(self.coll)]
        self.leftovers = 0

    def reset(self) -> None:
        shutil.rmtree(self.coll, ignore_errors=True)
        (self.coll / "archive").mkdir(parents=True)
        (self.coll / "indexes").mkdir()
        for p in self.src.glob("*.seg"):
            shutil.copyfile(p, self.coll / "indexes" / p.name)

    def check_killed(self) -> None:
        self.leftovers += len(temp_files(self.coll))
        segs = sorted((self.coll / "indexes").glob("*.seg"))
        assert sorted(set(x for p in segs for x in seg_lines(p))) == self.ref, "a line of the collection was lost"

    def check_done(self) -> None:
        segs = sorted((self.coll / "indexes").glob("*.seg"))
        assert len(segs) == 1 and seg_lines(segs[0]) == self.ref, "the rerun did not leave one merged segment"


def same_wacz(a: bytes, b: Optional[bytes]) -> bool:
    """Two WACZ files hold the same entries, byte for byte but for the time they were made (the
    datapackage's "created", the zip entries' times), and the first is valid."""
    if b is None:
        return False
    ea, eb = wacz_entries(a), wacz_entries(b)
    return ea == eb

def wacz_entries(data: bytes) -> Dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        assert z.testzip() is None
        out = {i.filename: z.read(i) for i in z.infolist() if i.filename != "datapackage-digest.json"}
    package = json.loads(out["datapackage.json"])
    package.pop("created")
    out["datapackage.json"] = json.dumps(package, sort_keys=True).encode()
    return out


def make_cases(name: str, work: Path, sorted_cdxj: Path):
    lines = [x.rstrip(b"\n") for x in sorted_cdxj.read_bytes().splitlines(keepends=True)]
    half = work / "half.cdxj"
    if not half.exists():
        work.mkdir(parents=True, exist_ok=True)
        half.write_bytes(b"".join(x + b"\n" for x in lines[: len(lines) // 2]))
    coll = work / "wacz-coll"
    if name == "index -o":
        return OneOutput(work / name, lambda d: ["index", str(BIG), str(SMALL), "-o", str(d / "all.cdxj")],
                         lambda d: ["index", str(SMALL), "-o", str(d / "all.cdxj")])
    if name == "index -s -j 2 --verify -o":
        return OneOutput(work / name, lambda d: ["index", "-s", "-j", "2", "--verify", str(BIG), str(SMALL),
                                                 "-o", str(d / "all.cdxj")])
    if name == "build":
        return OneOutput(work / name, lambda d: ["build", str(sorted_cdxj), "-o", str(d / "all.seg")],
                         lambda d: ["build", str(half), "-o", str(d / "all.seg")])
    if name == "zipnum":
        c = OneOutput(work / name, lambda d: ["zipnum", str(sorted_cdxj), "--lines", "20", "--parts", "3",
                                             "-o", str(d / "zz")],
                      lambda d: ["zipnum", str(half), "--lines", "20", "--parts", "3", "-o", str(d / "zz")],
                      check_cluster="zz")
        c.ref_lines, c.old_lines = lines, lines[: len(lines) // 2]   # type: ignore[attr-defined]
        return c
    if name == "recompress":
        return OneOutput(work / name, lambda d: ["recompress", str(SMALL), str(d / "r.warc.gz")],
                         lambda d: ["recompress", "--zstd", str(SMALL), str(d / "r.warc.gz")])
    if name == "wacz create":
        if not coll.exists():
            run_ok(["init", str(coll)])
            run_ok(["add", str(coll), str(SMALL)])
        return OneOutput(work / name, lambda d: ["wacz", "create", str(coll), "-o", str(d / "c.wacz")],
                         same=same_wacz)
    if name == "add":
        return Add(work / name)
    if name == "compact":
        return Compact(work / name, lines)
    raise KeyError(name)


COMMANDS = ["index -o", "index -s -j 2 --verify -o", "build", "zipnum", "recompress", "wacz create", "add", "compact"]


def kill_command(name: str, tmp_path: Path, sorted_cdxj: Path, kills: int, seed: int) -> killkit.Tally:
    case = make_cases(name, tmp_path, sorted_cdxj)
    run_time = killkit.duration(case.argv, case.reset)
    tally = killkit.kill_runs(name, case, kills, seed, run_time)
    tally.leftovers = case.leftovers
    if isinstance(case, Add):
        tally.notes["added twice"] = case.twice
    TALLIES.append(tally)
    print(tally.line())
    return tally


@pytest.mark.parametrize("name", COMMANDS)
def test_killed_command_publishes_nothing_partial(name, tmp_path, sorted_cdxj):
    t = kill_command(name, tmp_path, sorted_cdxj, KILLS, seed=COMMANDS.index(name) + 1)
    assert t.kills == KILLS, t.line()


@pytest.mark.slow
@pytest.mark.parametrize("name", COMMANDS)
def test_killed_command_many_times(name, tmp_path, sorted_cdxj):
    t = kill_command(name, tmp_path, sorted_cdxj, SLOW_KILLS, seed=1000 + COMMANDS.index(name))
    assert t.kills == SLOW_KILLS, t.line()
