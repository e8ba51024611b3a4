"""Broken and hostile files: warchive reports them precisely and loses nothing before them.

For each file of ``warcgen.generate_broken`` (see its ``what``):
- ``expect == "raise"``: ``warchive.warc.open`` yields exactly the records
  before the damage (as warcio reads the undamaged prefix ``[0,
  bad_offset)``), then raises an ``ArchiveError`` child whose message names
  the path and ``at byte <bad_offset>``, where ``bad_offset`` is where the bad
  member/record starts, known from how the file was built; ``warchive index
  --skip-errors`` exits 0 (unless not one record could be read), writes the
  good records' lines as cdxj-indexer writes them for the undamaged prefix,
  and reports the bad record on stderr;
- ``expect == "recover"`` (a defect warcio reads past, or gives up on where the
  next record can still be found): the lenient reader yields every record the
  file was built with (``records``) and reports each defect once, at the byte
  it was built at (``defects``); with ``strict=True`` it raises at the first
  defect after yielding the records before it; ``warchive index`` exits 0
  with one warning per defect, ``warchive index --strict`` exits 1 naming
  the first (the lines themselves are diffed against cdxj-indexer's in
  tests/differential/test_cdxj_vs_cdxj_indexer.py);
- nothing crashes the interpreter or hangs: the reader runs in a subprocess
  with a timeout.

Records that share a gzip member (a whole-file gzip, or two records in one
member) are read by the reader (those in a shared member have ``length``
None), but the indexer cannot give them offsets: it reports the member and
leaves its records out (with --strict it fails there). An empty file holds
nothing: the reader yields no records and raises no error; ``warchive index``
given it by name fails naming it (exit 1, no output published), with
--skip-errors says so on stderr and exits 0 (docs/cli.md, "Paths").

The zero-length gzip member is a defect read past: every record is read. There
warchive must DIFFER from warcio: warcio counts the empty 20-byte member into
the next record (offset = the empty member, length + 20), and its own loader
cannot read a record at that offset (EOFError, see
test_why_zero_member_offsets_differ_from_warcio). warchive reports the member
that holds the record; cdxj-indexer's line for that record differs in
"offset" and "length" accordingly, and nowhere else.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import zlib

import pytest

from warcio.bufferedreaders import DecompressingBufferedReader
from warcio.recordloader import ArcWarcRecordLoader

TIMEOUT = 60

_CHILD = r"""
import json, sys
import warchive.warc as ww
from warchive.errors import ArchiveError
strict = sys.argv[1] == "strict"
results = []
for path in sys.argv[2:]:
    out = {"records": [], "error": None, "defects": []}
    try:
        with ww.open(path, strict=strict, on_defect=lambda d: out["defects"].append([d.offset, d.kind, str(d)])) \
                as reader:
            for rec in reader:
                off, t, u = rec.offset, rec.type, rec.target_uri
                out["records"].append([off, rec.length, t, u])
    except BaseException as e:
        out["error"] = {"type": type(e).__name__, "is_archive_error": isinstance(e, ArchiveError), "str": str(e)}
    results.append(out)
print(json.dumps(results))
"""


def read_many_with_warchive(paths, strict=False, defects=None):
    """[(records, error)] from warchive's reader for each path, run in one child process
    (a crash or hang fails the test, not the session); with defects (a list), the defects
    reported for each path, [(offset, kind, message)], are appended to it."""
    res = subprocess.run([sys.executable, "-X", "faulthandler", "-c", _CHILD, "strict" if strict else "lenient",
                          *map(str, paths)], capture_output=True, timeout=TIMEOUT)
    err = res.stderr.decode("utf-8", "replace")
    assert res.returncode >= 0, f"reader process killed by signal {-res.returncode}:\n{err}"
    assert res.returncode == 0, f"reader process failed (exit {res.returncode}):\n{err}"
    got = json.loads(res.stdout)
    if defects is not None:
        defects.extend([[tuple(x) for x in d["defects"]] for d in got])
    return [([tuple(r) for r in d["records"]], d["error"]) for d in got]


def names_byte(text: str, offset: int) -> bool:
    """``at byte N`` with exactly this N (not a longer number starting with it)."""
    return re.search(rf"at byte {offset}(?!\d)", text) is not None


def read_with_warchive(path, strict=False, defects=None):
    return read_many_with_warchive([path], strict, defects)[0]


def _prefix_copy(bf, tmp_path):
    """The undamaged prefix, under the same file name (cdxj lines carry the name)."""
    d = tmp_path / "prefix"
    d.mkdir()
    p = d / bf.path.name
    p.write_bytes(bf.path.read_bytes()[:bf.bad_offset])
    return p


def _expected_good(bf, tmp_path, warcio_list):
    good = warcio_list(_prefix_copy(bf, tmp_path)) if bf.bad_offset else []
    assert [(t, u) for _, _, t, u in good] == bf.good_records
    return good


def _assert_error_names_place(error, bf):
    assert error is not None, f"{bf.id}: no error raised ({bf.what})"
    assert error["is_archive_error"], f"{bf.id}: raised {error['type']}, not an ArchiveError: {error['str']}"
    msg = error["str"]
    assert str(bf.path) in msg, f"{bf.id}: message does not name the file: {msg!r}"
    assert names_byte(msg, bf.bad_offset), f"{bf.id}: message must say 'at byte {bf.bad_offset}': {msg!r}"


def test_reader_stops_at_the_damage(broken_archive, tmp_path, warcio_list):
    bf = broken_archive
    said: list = []
    records, error = read_with_warchive(bf.path, defects=said)
    if bf.expect == "recover":
        assert error is None, f"{bf.id}: a defect read past is no error: {error}"
        assert records == bf.records, f"{bf.id}: {records}"
        assert [(o, k) for o, k, _ in said[0]] == bf.defects, f"{bf.id}: {said[0]}"
        for off, _, msg in said[0]:
            assert str(bf.path) in msg and names_byte(msg, off), msg
        return
    assert said == [[]], f"{bf.id}: {said}"
    if bf.expect == "empty":
        assert (records, error) == ([], None), f"{bf.id}: an empty file holds no records and no error"
        return
    if bf.expect == "shared_member":
        assert error is None, f"{bf.id}: records sharing a member are still readable: {error}"
        _assert_shared_member_listing(bf, records)
        return
    good = _expected_good(bf, tmp_path, warcio_list)
    if bf.expect == "raise_or_read" and error is None:
        assert records == warcio_list(bf.path), f"{bf.id}: read without error, so it must read as warcio does"
        return
    _assert_error_names_place(error, bf)
    assert records == good, f"{bf.id}: records before byte {bf.bad_offset} must be yielded intact"


def test_strict_reader_raises_at_the_first_defect(broken_archive, tmp_path, warcio_list):
    bf = broken_archive
    if bf.expect != "recover":
        return
    records, error = read_with_warchive(bf.path, strict=True)
    _assert_error_names_place(error, bf)
    assert records == [r for r in bf.records if r[0] < bf.bad_offset], f"{bf.id}: records before the defect"
    assert [(t, u) for _, _, t, u in records] == bf.good_records


def _assert_shared_member_listing(bf, records):
    """Types/URIs in file order, as built; offsets are member starts; only records alone in
    their member have a length (the member's size)."""
    import gzip as _gzip
    data = bf.path.read_bytes()
    members = list(zip(bf.offsets, bf.offsets[1:]))
    expected = []
    for start, end in members:
        plain = _gzip.decompress(data[start:end])
        n = plain.count(b"WARC/1.")
        for k in range(n):
            expected.append((start, (end - start) if n == 1 else None))
    assert [(o, n) for o, n, _, _ in records] == expected, f"{bf.id}: offsets/lengths {records}"
    assert len(records) == len(expected) >= 2


def _cdxj_lines_with_fixed_offset(output: bytes, old_off: int, new_off: int, shrink: int) -> bytes:
    """cdxj-indexer's lines with one record's offset/length moved to the member that holds it."""
    out = []
    for line in output.decode("utf-8").splitlines(keepends=True):
        key, ts, js = line.rstrip("\n").split(" ", 2)
        fields = json.loads(js)
        if fields.get("offset") == str(old_off):
            fields["offset"] = str(new_off)
            fields["length"] = str(int(fields["length"]) - shrink)
        out.append(f"{key} {ts} {json.dumps(fields)}\n")
    return "".join(out).encode("utf-8")


def test_index_skip_errors(broken_archive, tmp_path, cdxj_indexer, warchive_cli, output_diff):
    bf = broken_archive
    out = tmp_path / "out.cdxj"
    res = warchive_cli(["index", bf.path, "-o", out, "--records", "all", "--skip-errors"], timeout=TIMEOUT)
    err = res.stderr.decode("utf-8", "replace")
    got = out.read_bytes() if out.exists() else b""
    assert "Traceback" not in err, f"{bf.id}: --skip-errors must report, not crash:\n{err}"

    if bf.expect == "empty":
        assert res.returncode == 0 and got == b"", err
        assert str(bf.path) in err and "empty" in err, f"{bf.id}: the empty file must be reported:\n{err}"
        return
    if bf.expect == "recover":   # nothing to skip: as without --skip-errors (the lines: differential tests)
        assert res.returncode == 0, err
        assert err.count("warchive: warning: ") == len(bf.defects) and "skipped:" not in err, err
        if bf.id == "zero_length_member.warc.gz":
            peer = cdxj_indexer([bf.path], ["--records", "all"])
            assert peer.error is None
            nxt = bf.offsets[bf.offsets.index(bf.bad_offset) + 1]
            expected = _cdxj_lines_with_fixed_offset(peer.output, bf.bad_offset, nxt, nxt - bf.bad_offset)
            assert got == expected, output_diff(expected, got, bf.id)
        return
    if bf.expect == "shared_member":   # a defect read past: the shared member is left out
        assert res.returncode == 0 and "skipped:" not in err, err
        assert names_byte(err, bf.bad_offset) and "several records" in err, err
        return

    peer = cdxj_indexer([_prefix_copy(bf, tmp_path)], ["--records", "all"])
    assert peer.error is None
    good = peer.output
    if bf.expect == "raise_or_read" and res.returncode == 0 and "at byte" not in err:
        full = cdxj_indexer([bf.path], ["--records", "all"])
        assert got == full.output, output_diff(full.output, got, bf.id + " (read without error)")
        return
    assert str(bf.path) in err and names_byte(err, bf.bad_offset), \
        f"{bf.id}: stderr must report the bad record of {bf.path} 'at byte {bf.bad_offset}':\n{err}"
    if bf.good_records:
        assert res.returncode == 0, f"{bf.id}: records were read, so --skip-errors must exit 0:\n{err}"
    else:
        assert res.returncode != 0 or got, f"{bf.id}: not one record could be read, exit status must say so"
    assert got.startswith(good), output_diff(good, got[:len(good) + 200], bf.id + " (good records)")
    for line in got[len(good):].decode("utf-8").splitlines():   # anything recovered lies after the damage
        offset = int(json.loads(line.split(" ", 2)[2])["offset"])
        assert offset > bf.bad_offset, f"{bf.id}: line after the damage points before it: {line}"


@pytest.mark.parametrize("strict", [False, True], ids=["lenient", "strict"])
def test_index_without_skip_errors_fails_loudly(broken_archive, strict, tmp_path, warchive_cli):
    """Damage fails the run; a defect warcio reads past is read past with one warning per defect
    (naming the file and byte) and exit status 0, or with --strict fails the run at the first."""
    bf = broken_archive
    out = tmp_path / "out.cdxj"
    res = warchive_cli(["index", bf.path, "-o", out] + (["--strict"] if strict else []), timeout=TIMEOUT)
    err = res.stderr.decode("utf-8", "replace")
    assert res.returncode >= 0, f"{bf.id}: killed by signal {-res.returncode}"
    if bf.expect == "empty":   # named on the command line: an error naming it, nothing published
        assert res.returncode == 1 and str(bf.path) in err and "empty" in err, err
        assert "Traceback" not in err and not out.exists(), err
    elif bf.expect == "raise" or (strict and bf.expect in ("recover", "shared_member")):
        assert res.returncode != 0, f"{bf.id}: must fail without --skip-errors"
        assert str(bf.path) in err and names_byte(err, bf.bad_offset), err
        assert "warning:" not in err and not out.exists(), err
    elif bf.expect in ("recover", "shared_member"):
        assert res.returncode == 0, err
        warnings = [x for x in err.splitlines() if x.startswith("warchive: warning: ")]
        expected = bf.defects if bf.expect == "recover" else [(bf.bad_offset, "shared-member")]
        assert len(warnings) == len(expected), err
        for line, (off, _) in zip(warnings, expected):
            assert str(bf.path) in line and names_byte(line, off), line
    else:
        assert res.returncode == 0 or names_byte(err, bf.bad_offset), err


def test_why_zero_member_offsets_differ_from_warcio(broken_archives, warcio_list):
    """Documents the deliberate difference: warcio's offset for the record after an empty
    member cannot be loaded by warcio's own loader; the member's start can."""
    bf = broken_archives["zero_length_member.warc.gz"]
    listing = warcio_list(bf.path)
    warcio_off = listing[3][0]
    member_off = bf.offsets[bf.offsets.index(bf.bad_offset) + 1]
    assert warcio_off == bf.bad_offset != member_off

    def load(off):
        with open(bf.path, "rb") as fh:
            fh.seek(off)
            return ArcWarcRecordLoader().parse_record_stream(DecompressingBufferedReader(fh))

    try:
        load(warcio_off)
    except EOFError:
        pass
    else:
        raise AssertionError("warcio can now load at its own offset; revisit the documented difference")
    assert load(member_off).rec_headers.get_header("WARC-Target-URI") == listing[3][3]


def _cut_points(offsets, rng, n, plain):
    """n cut points: a few exact record boundaries, the rest anywhere inside records (for plain
    files never inside a record's trailing CRLFCRLF, where 'complete' is ambiguous; for gzip files
    not after the first byte, which is no gzip header yet)."""
    points = set(offsets[1:-1][:3])
    while len(points) < n:
        i = rng.randrange(len(offsets) - 1)
        lo, hi = offsets[i] + (1 if plain or i else 2), offsets[i + 1] - (5 if plain else 1)
        if hi > lo:
            points.add(rng.randrange(lo, hi))
    return sorted(points)


def _head_whole(start: bytes, arc: bool) -> bool:
    """Do these first bytes of a record (inflated) hold its whole head: a WARC head and its blank
    line (its CR is blank enough at the end of the file), an ARC record's line (a filedesc://
    record's version block is read as far as it goes)?"""
    return b"\n" in start if arc else b"\r\n\r\n" in start or start.endswith(b"\r\n\r")


@pytest.mark.parametrize("fid", ["kitchen_sink.warc.gz", "kitchen_sink.warc", "example.arc.gz", "example.arc"])
def test_truncated_anywhere(fid, valid_archives, tmp_path, warcio_list):
    """Cut a valid file at seeded random points. Read leniently, the whole records before the cut
    are yielded as warcio lists them, then the record the cut falls in, when its head is whole, as
    warcio reads it (its length running to the end of the file; an HTTP record with none of its
    content, which warcio reads no record of, is not yielded either), with one truncated defect at
    its start. A record cut inside its head is reported so too and not read (warcio reads some as
    records without type or URL and fails on others: docs/format.md, "Where we differ"); when it
    is the first, nothing of the file can be read, an error at byte 0. Read strictly, the error
    names the start of the record the cut falls in, after the records before it. A cut exactly on
    a boundary is no defect."""
    fx = valid_archives[fid]
    data = fx.path.read_bytes()
    offsets = fx.member_offsets
    full = warcio_list(fx.path)
    gz, arc = fid.endswith(".gz"), ".arc" in fid
    cuts = _cut_points(offsets, random.Random(20240102), 24, plain=not gz)
    paths = []
    for i, cut in enumerate(cuts):
        d = tmp_path / str(i)
        d.mkdir()
        (d / fx.path.name).write_bytes(data[:cut])
        paths.append(d / fx.path.name)
    said: list = []
    lenient = read_many_with_warchive(paths, defects=said)
    strict = read_many_with_warchive(paths, strict=True)
    for cut, path, (records, error), defects, (strict_records, strict_error) in zip(cuts, paths, lenient, said,
                                                                                      strict):
        whole = [r for r in full if r[0] < cut and offsets[offsets.index(r[0]) + 1] <= cut]
        label = f"{fid} cut at byte {cut}"
        if cut in offsets:   # a record boundary
            assert error is None and strict_error is None, f"{label}: {error or strict_error}"
            assert records == strict_records == whole and not defects, label
            continue
        start = max(o for o in offsets if o < cut)
        first = zlib.decompressobj(31).decompress(data[start:cut]) if gz else data[start:cut]
        expected = warcio_list(path) if _head_whole(first, arc) else whole
        assert expected[: len(whole)] == whole, f"{label}: {expected}"
        if not expected:   # nothing of the file can be read: no archive to read, as at bytes that are none
            assert error is not None and error["is_archive_error"] and names_byte(error["str"], 0), f"{label}: {error}"
            assert records == strict_records == [] and strict_error is not None, label
            continue
        assert error is None and records == expected, f"{label}: {records} != {expected} ({error})"
        assert [(o, k) for o, k, _ in defects] == [(start, "truncated")], f"{label}: {defects}"
        assert strict_error is not None and strict_error["is_archive_error"], f"{label}: {strict_error}"
        assert names_byte(strict_error["str"], start) and str(path) in strict_error["str"], strict_error["str"]
        assert strict_records == whole, f"{label}: records before the cut must be yielded intact"
