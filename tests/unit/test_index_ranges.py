"""`warchive index -j N` cuts gzip files with Wget's `sl` members into byte ranges that the
workers index at the same time. A worker finds where its range begins by looking for something
that looks like a member start (find_member), which can be fooled by bytes inside a payload;
the ranges are then checked against each other (_Chain) and redone where the look was wrong.

Expected output: the one-process run (`jobs=1`, which never cuts a file), itself held to
cdxj-indexer 1.5.0 for the same file. Each file here is cut every few hundred bytes
(MIN_PIECE and FILE_TAIL made small), so that ranges begin inside records, inside stored
copies of other WARC files, and inside members without `sl`."""

from __future__ import annotations

import zlib
from pathlib import Path

import pytest

import warcgen
from warchive.errors import ArchiveError
from warchive.index import build
from warchive.index.build import Task, _dispatch_order, find_member, index_paths, plan
from warchive.index.cdx import IndexOptions
from warchive._ext.gzip_members import Reader

WGET = sorted((Path(__file__).resolve().parents[1] / "data" / "wget").glob("*.warc.gz"))


@pytest.fixture
def small_ranges(monkeypatch):
    monkeypatch.setattr(build, "MIN_PIECE", 700)
    monkeypatch.setattr(build, "FILE_TAIL", 1500)
    monkeypatch.setattr(build, "GUIDE", 1 << 30)   # every range MIN_PIECE long


def _index(paths, jobs, **kw):
    out = []
    messages = []
    opts = IndexOptions(report=messages.append, **kw)
    stats = index_paths([str(p) for p in paths], out.append, opts, jobs=jobs)
    return b"".join(out), messages, stats


def _members(recs, stored=(), no_sl=()):
    """Members of `recs`: Wget-style `sl` members, deflate level 0 (payload bytes verbatim) for
    the indexes in `stored`, plain gzip members without `sl` for those in `no_sl`."""
    out = []
    for k, r in enumerate(recs):
        raw = r.plain()
        if k in no_sl:
            out.append(warcgen.gzip_member(raw))
        else:
            out.append(warcgen.sl_member(raw, level=0 if k in stored else 6))
    return out


def _write(path: Path, members) -> list:
    offsets, pos = [], 0
    for m in members:
        offsets.append(pos)
        pos += len(m)
    path.write_bytes(b"".join(members))
    return offsets


def _pages(prefix: str, n: int) -> list:
    recs = []
    for k in range(n):
        body = (f"<html><body><p>{prefix} page {k}</p>" + "<a href='x'>link</a>" * (k % 7) + "</body></html>").encode()
        recs += warcgen.get_pair(f"{prefix}-{k}", f"http://example.com/{prefix}/{k}.html", f"/{prefix}/{k}.html",
                                 body=body)
    return recs


def _warc_inside(tmp_path: Path):
    """A WARC whose responses carry, stored (deflate level 0), whole `sl` WARC files: the bytes
    of their members sit verbatim in the outer file, chains of `sl` lengths and all."""
    inner = warcgen.write_skip_length(tmp_path).path.read_bytes()
    carrier = warcgen.get_pair("carrier", "http://example.com/archive.warc.gz", "/archive.warc.gz",
                               headers=[("Content-Type", "application/gzip"), ("Content-Length", str(len(inner)))],
                               body=inner)
    recs = _pages("a", 20) + carrier + _pages("b", 20) + carrier[:] + _pages("c", 5)
    stored = {k for k, r in enumerate(recs) if r.uri == "http://example.com/archive.warc.gz"}
    path = tmp_path / "inside.warc.gz"
    return path, _write(path, _members(recs, stored=stored))


def test_cut_files_index_as_one_process_does(tmp_path, small_ranges, cdxj_indexer):
    path, offsets = _warc_inside(tmp_path)
    tasks = plan([str(path)], IndexOptions(), 2)
    assert len(tasks) > 50, "the file was not cut into many ranges"
    # the look is fooled: some range begins at a member of a stored inner file, not of this one
    true_starts = set(offsets)
    r = Reader(str(path))
    found = [find_member(r, t.start, t.stop if t.stop is not None else path.stat().st_size) for t in tasks if t.find]
    assert any(f is not None and f not in true_starts for f in found), "no range began at a false member start"
    one, _, _ = _index([path], 1)
    assert one == cdxj_indexer([path], []).output
    for jobs in (2, 3):
        got, messages, stats = _index([path], jobs)
        assert got == one, f"-j {jobs}"
        assert messages == []
    # --verify inflates every member, stored ones included
    assert _index([path], 2, verify=True)[0] == one


def test_members_without_sl_between_ranges(tmp_path, small_ranges):
    """find_member only knows members with `sl`; ranges that begin on others are redone."""
    recs = _pages("m", 60)
    path = tmp_path / "mixed.warc.gz"
    _write(path, _members(recs, no_sl={k for k in range(len(recs)) if k % 3 == 1}))
    one, _, _ = _index([path], 1)
    assert one.count(b"\n") == 60   # the responses
    assert _index([path], 2)[0] == one


def test_one_big_record_over_many_ranges(tmp_path, small_ranges):
    big = zlib.compress(bytes(range(256)) * 400, 0)   # incompressible enough: members of ~100 KB
    recs = _pages("p", 4) + warcgen.get_pair(
        "big", "http://example.com/big.bin", "/big.bin",
        headers=[("Content-Type", "application/octet-stream"), ("Content-Length", str(len(big)))],
        body=big) + _pages("q", 4)
    path = tmp_path / "big.warc.gz"
    _write(path, _members(recs, stored={9}))   # the response
    tasks = plan([str(path)], IndexOptions(), 2)
    assert len(tasks) > 20
    one, _, _ = _index([path], 1)
    assert b"big.bin" in one
    assert _index([path], 2)[0] == one


@pytest.mark.parametrize("wget", WGET, ids=[p.name for p in WGET])
def test_wget_files_cut_small(wget, small_ranges):
    one, _, stats1 = _index([wget], 1)
    got, _, stats2 = _index([wget], 2)
    assert got == one
    assert (stats2.records, stats2.lines) == (stats1.records, stats1.lines)


def test_a_damaged_member_in_a_later_range(tmp_path, small_ranges):
    recs = _pages("d", 40)
    members = _members(recs)
    bad = 55
    m = bytearray(members[bad])
    m[-8] ^= 0xFF                                    # CRC-32 of the member
    members[bad] = bytes(m)
    path = tmp_path / "damaged.warc.gz"
    offsets = _write(path, members)
    with pytest.raises(ArchiveError) as e1:
        _index([path], 1, verify=True)
    with pytest.raises(ArchiveError) as e2:
        _index([path], 2, verify=True)
    assert type(e2.value) is type(e1.value) and e2.value.offset == e1.value.offset == offsets[bad]
    one = _index([path], 1, verify=True, skip_errors=True)
    two = _index([path], 2, verify=True, skip_errors=True)
    assert two[0] == one[0] and two[1] == one[1] and len(one[1]) == 1
    assert two[2].errors == one[2].errors == 1


def test_dispatch_order_takes_each_files_last_range_first():
    def t(path, find):
        return Task(path, path, 0, None, find=find)
    tasks = [t("a", False), t("a", True), t("a", True), t("b", False), t("c", False), t("c", True)]
    assert _dispatch_order(tasks) == [2, 0, 1, 3, 5, 4]


def test_plan_covers_each_file_once(tmp_path, small_ranges):
    path, _ = _warc_inside(tmp_path)
    size = path.stat().st_size
    tasks = plan([str(path), str(WGET[0])], IndexOptions(), 2)
    mine = [t for t in tasks if t.path == str(path)]
    assert mine[0].start == 0 and not mine[0].find and all(t.find for t in mine[1:])
    assert all(a.stop == b.start for a, b in zip(mine, mine[1:])) and mine[-1].stop is None
    assert mine[-1].start == size - build.FILE_TAIL
    assert all(t.cost == build.MIN_PIECE for t in mine[:-2])


def test_plan_guided_ranges_shrink(tmp_path, monkeypatch):
    monkeypatch.setattr(build, "MIN_PIECE", 700)
    monkeypatch.setattr(build, "FILE_TAIL", 1500)
    path, _ = _warc_inside(tmp_path)
    mine = plan([str(path)], IndexOptions(), 2)
    sizes = [t.cost for t in mine[:-2]]
    assert len(mine) > 5 and sizes == sorted(sizes, reverse=True) and sizes[0] > 4 * sizes[-1]
    assert plan([str(path)], IndexOptions(), 1)[0].stop is None and len(plan([str(path)], IndexOptions(), 1)) == 1
    assert len(plan([str(path)], IndexOptions(post_append=True), 2)) == 1   # -p pairs records: never cut
