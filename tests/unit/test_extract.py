"""`warchive extract` where warcio has nothing to compare with: wrong offsets, damaged records,
streams, usage errors. Each error is one line naming the file and the byte, exit status 1 (2 for a
usage error); tests/differential/test_extract_vs_warcio.py holds the output to warcio's."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from clibatch import run_batch
from warchive.errors import ArchiveError, NoRecordError, TruncatedError
from warchive.warc.extract import extract


def _lines(source, offset, part="record"):
    out: list = []
    extract(source, offset, part, out.append)
    return b"".join(out)


def test_wrong_offsets_are_errors_naming_file_and_byte(valid_archives):
    plain = valid_archives["get_pairs.warc"]
    gz = valid_archives["get_pairs.warc.gz"]
    second = plain.member_offsets[1]
    size = plain.member_offsets[-1]
    cases = [
        (plain.path, size, "past the end of the file"),
        (plain.path, size + 100, "past the end of the file"),
        (plain.path, second - 4, f"no record starts here (it is inside the record at byte 0; the next one "
                                 f"starts at byte {second})"),  # its CRLFCRLF
        (plain.path, size - 4, "no record here, only blank lines up to the end"),
        (plain.path, 2, f"no record starts here (it is inside the record at byte 0; the next one starts at "
                        f"byte {second})"),
        (gz.path, gz.member_offsets[1] + 1, f"no record starts here (it is inside the record at byte "
                                            f"{gz.member_offsets[1]}; the next one starts at byte "
                                            f"{gz.member_offsets[2]})"),
    ]
    argvs = [["extract", p, off] for p, off, _ in cases]
    for (p, off, problem), (rc, out, err) in zip(cases, run_batch(argvs)):
        assert rc == 1, (off, err)
        assert out == b""
        assert err.startswith(f"warchive: error: {p} at byte {off}: "), err
        assert problem in err and "--skip-errors" not in err, err
        assert err.count("\n") == 1
    with pytest.raises(NoRecordError) as e:
        _lines(plain.path, second - 4)
    assert (e.value.path, e.value.offset) == (str(plain.path), second - 4)


def test_a_damaged_record_is_an_error_after_what_could_be_read(broken_archives):
    cases = []
    for name in ("truncated_gzip.warc.gz", "truncated_gzip_header.warc.gz", "bad_crc.warc.gz",
                 "garbage_between_members.warc.gz"):
        bf = broken_archives[name]
        cases.append((bf.path, bf.bad_offset))
    for (p, off), (rc, out, err) in zip(cases, run_batch([["extract", p, off, "--payload"] for p, off in cases])):
        assert rc == 1, (p, err)
        assert err.startswith(f"warchive: error: {p} at byte "), err
        assert "--skip-errors" not in err, err
    bf = broken_archives["truncated_gzip.warc.gz"]   # the file ends inside the head of the record there
    with pytest.raises(TruncatedError) as e:
        _lines(bf.path, bf.bad_offset)
    assert e.value.offset == bf.bad_offset and "inside the head" in e.value.problem


def test_a_record_cut_in_its_content_is_written_as_far_as_it_goes(broken_archives):
    """The file ends inside the record's content: what there is of it is written (as warcio's
    extract writes it: tests/differential/test_extract_vs_warcio.py), with a truncated warning."""
    bf = broken_archives["truncated_plain.warc"]
    data = bf.path.read_bytes()
    [(rc, out, err)] = run_batch([["extract", bf.path, bf.bad_offset]])
    assert rc == 0 and out == data[bf.bad_offset:], err
    assert err.startswith(f"warchive: warning: {bf.path} at byte {bf.bad_offset}: record ends after 71 of its "
                          "107 content bytes"), err


def test_streams_read_forward(valid_archives):
    fx = valid_archives["example.arc.gz"]
    data = fx.path.read_bytes()
    off = fx.member_offsets[2]
    assert _lines(io.BytesIO(data), off) == _lines(fx.path, off)
    assert _lines(io.BytesIO(data[off:]), 0) == _lines(fx.path, off)   # a stream's offsets count from its start
    with pytest.raises(NoRecordError, match="past the end of the stream"):
        _lines(io.BytesIO(data), len(data) + 5)
    r = subprocess.run([sys.executable, "-m", "warchive", "extract", "-", str(len(data))], input=data,
                       capture_output=True, text=False, timeout=120)
    assert r.returncode == 1
    assert r.stderr.decode().startswith(f"warchive: error: <stdin> at byte {len(data)}: past the end of the stream")


def test_library_arguments():
    with pytest.raises(ValueError):
        extract("x.warc", 0, "body", print)
    with pytest.raises(ValueError):
        extract("x.warc", -1, "record", print)
    assert issubclass(NoRecordError, ArchiveError)


def test_usage_errors(valid_archives):
    p = valid_archives["get_pairs.warc"].path
    got = run_batch([["extract", p, "-5"], ["extract", p, "0", "--headers", "--payload"], ["extract", p, "x"],
                     ["extract", p], ["extract", p.parent / "missing.warc", "0"]])
    assert [rc for rc, _, _ in got] == [2, 2, 2, 2, 1]
    assert "usage: warchive extract" in got[0][2] and "OFFSET must not be negative" in got[0][2]
    assert "not allowed with argument" in got[1][2]
    assert "no such file" in got[4][2]


def test_zstd_frames_give_the_records_of_the_plain_file(valid_archives, tmp_path):
    """warcio reads no .warc.zst; a frame's record is printed as the same record of the plain file."""
    import warchive.warc
    from warchive.warc.recompress import recompress

    plain = valid_archives["kitchen_sink.warc"].path
    zst = tmp_path / "kitchen_sink.warc.zst"
    recompress(str(plain), str(zst), "zstd")
    with warchive.warc.open(zst) as a, warchive.warc.open(plain) as b:
        pairs = [(x.offset, y.offset) for x, y in zip(a, b)]
    assert len(pairs) == 124
    for x, y in pairs:
        for part in ("record", "headers", "payload"):
            assert _lines(zst, x, part) == _lines(plain, y, part), (x, part)


def _warcio_starts(path) -> set:
    """The offsets of the records warcio's ArchiveIterator reads in the whole file."""
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as f:
        it = ArchiveIterator(f, arc2warc=False)
        return {it.get_record_offset() for _ in it}


def _five_fields(data: bytes, off: int) -> bool:
    """Is the line at off one warcio takes for an ARC head (five space-separated fields)?"""
    line = data[off: data.find(b"\n", off) + 1 or len(data)]
    return len(line.decode("latin-1").rstrip().rsplit(" ", 4)) == 5


@pytest.mark.parametrize("name", ["get_pairs.warc", "get_pairs.warc.gz", "example.arc", "example.arc.gz",
                                  "resource_metadata.warc", "arc_text_line.arc"])
def test_only_record_starts_are_accepted(name, valid_archives, broken_archives):
    """At every offset of the file, a file and the same bytes as a stream: the offsets warcio's
    iterator reads records at print a record; every other one is refused with NoRecordError
    naming the byte and the next record warcio reads. Inside a record, lines of five words (a
    warcinfo field, a CSS rule, the rest of an ARC line) are where a lenient reader would see a
    record; arc_text_line.arc has a line of text between records that warcio reads as one."""
    path = (valid_archives.get(name) or broken_archives[name]).path
    data = path.read_bytes()
    starts = _warcio_starts(path)
    assert len(starts) >= 5
    for source in ("file", "stream"):
        accepted = set()
        for off in range(len(data)):
            src = path if source == "file" else io.BytesIO(data)
            try:
                extract(src, off, "headers", lambda b: None, on_defect=lambda d: None)
            except NoRecordError as e:
                assert (e.path, e.offset) == ((str(path), off) if source == "file" else (None, off))
                nxt = min((s for s in starts if s > off), default=None)
                if nxt is not None:
                    assert f"the next one starts at byte {nxt})" in e.problem, (source, off, str(e))
                else:
                    assert "next one" not in e.problem, (source, off, str(e))
            else:
                accepted.add(off)
        assert accepted == starts, (source, sorted(accepted ^ starts)[:10])


def test_an_offset_inside_a_record_exits_1_naming_the_next_record(valid_archives):
    """On the command line: exit status 1, one line naming the file, the byte and the next record,
    at the offsets inside records whose line has the five fields warcio reads as an ARC head."""
    plain = valid_archives["get_pairs.warc"].path
    data = plain.read_bytes()
    starts = sorted(_warcio_starts(plain))
    inside = [off for off in range(1, len(data)) if off not in starts and data[off - 1:off] == b"\n"
              and data[off:off + 1].strip() and _five_fields(data, off)]
    assert inside   # a warcinfo field (`format: WARC File Format 1.0`), a CSS rule
    for off, (rc, out, err) in zip(inside, run_batch([["extract", str(plain), str(off)] for off in inside])):
        nxt = min(s for s in starts if s > off)
        assert (rc, out) == (1, b""), (off, err)
        assert err.startswith(f"warchive: error: {plain} at byte {off}: no record starts here"), err
        assert f"the next one starts at byte {nxt})" in err and err.count("\n") == 1, err
