"""`warchive recompress`: ARC in, WARC out; every error names the input file (the records as warcio
writes them: tests/differential/test_recompress_vs_warcio.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from warchive.warc.check import check_file
from warchive.warc.reader import ArchiveIterator
from warchive.warc.recompress import recompress


def run(*argv) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "warchive", "recompress", *map(str, argv)], capture_output=True,
                          text=True, errors="replace")


@pytest.mark.parametrize("name", ["example.arc", "example.arc.gz"])
def test_arc_becomes_warc(valid_archives, tmp_path, name):
    fx = valid_archives[name]
    out = tmp_path / "out.warc.gz"
    assert recompress(str(fx.path), str(out)) == len(fx.records)
    with ArchiveIterator(str(out)) as it:
        got = [(r.format, r.type, r.target_uri, r.headers.protocol) for r in it]
    assert got == [("warc", t, u, "WARC/1.0") for t, u in fx.records]
    res = check_file(str(out), strict=True)
    assert res.ok and not res.warnings, res.problems


def _cut(bf) -> bool:
    """Does the file end inside a record (a defect the reader reads past, recompress refuses)?"""
    return any(kind == "truncated" for _, kind in bf.defects)


def _damaged(broken_archives, valid_archives, tmp_path) -> dict:
    files = {fid: b.path for fid, b in broken_archives.items()
             if (b.expect != "recover" or _cut(b)) and fid not in ("empty.warc.gz", "control_bytes_header.warc")}
    arc = valid_archives["example.arc"].path.read_bytes()
    (tmp_path / "cut.arc").write_bytes(arc[: len(arc) - 40])
    gz = valid_archives["example.arc.gz"].path.read_bytes()
    (tmp_path / "cut.arc.gz").write_bytes(gz[: len(gz) - 30])
    files.update({"cut.arc": tmp_path / "cut.arc", "cut.arc.gz": tmp_path / "cut.arc.gz"})
    return files


def test_every_error_names_the_input(broken_archives, valid_archives, tmp_path):
    outdir = tmp_path / "out"
    outdir.mkdir()
    refused = 0
    damaged = _damaged(broken_archives, valid_archives, tmp_path)
    for fid, path in damaged.items():
        out = outdir / "out.warc.gz"
        r = run(path, out)
        if fid in ("single_member.warc.gz", "two_records_one_member.warc.gz"):
            assert r.returncode == 0, r.stderr      # what recompress is for
            out.unlink()
            continue
        refused += 1
        assert r.returncode == 1, (fid, r.stdout)
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"warchive: error: {path}"), (fid, r.stderr)
        assert ".recompress-" not in r.stderr and "--skip-errors" not in r.stderr, r.stderr
        assert "warchive check says what is damaged" in r.stderr
        assert os.listdir(outdir) == [], fid        # nothing published, no temporary file left
    assert refused == len(damaged) - 2 >= 11


def test_an_error_in_the_inflated_whole_says_where(broken_archives, tmp_path):
    path = broken_archives["not_a_warc_gz.warc.gz"].path
    r = run(path, tmp_path / "out.warc.gz")
    assert r.returncode == 1
    assert r.stderr.startswith(f"warchive: error: {path}: at byte 0 of its inflated bytes: not a WARC or ARC record")


def test_defects_are_read_past_with_a_warning_each(broken_archives, tmp_path):
    """A file with defects warcio reads past is recompressed whole (every record it was built with),
    one warning per defect naming the input and the byte; the output has no defect left."""
    for fid, b in broken_archives.items():
        if b.expect != "recover" or _cut(b):
            continue
        out = tmp_path / (fid + ".out.warc.gz")
        r = run(b.path, out)
        assert r.returncode == 0, (fid, r.stderr)
        warnings = r.stderr.splitlines()
        assert len(warnings) == len(b.defects), (fid, r.stderr)
        for line, (off, _) in zip(warnings, b.defects):
            assert line.startswith(f"warchive: warning: {b.path} at byte {off}: "), (fid, line)
        with ArchiveIterator(str(out), strict=True) as it:
            got = [(rec.type, rec.target_uri) for rec in it]
        assert got == [(t, u) for _, _, t, u in b.records], fid
        res = check_file(str(out))
        assert not [f for f in res.problems if "Digest" not in f.message], (fid, res.problems)
