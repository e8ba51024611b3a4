"""warchive.warc.whole (one record read from its whole gzip member, as replay reads a capture)
against ArchiveIterator, the reader of record: wherever ``read_whole``/``parse_whole`` take a
record, it is the record the iterator reads there (heads, fields, type, lengths, payload bytes);
where they do not (None), the iterator's answer stands. Run over every generated fixture, valid
and broken, the Wget files, drawn records and records mutated byte by byte in their heads."""

from __future__ import annotations

import zlib
from pathlib import Path
from typing import Any, List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import warcgen
from budget import examples
from warchive.errors import ArchiveError
from warchive.replay.archives import Archives
from warchive.warc.reader import ArchiveIterator
from warchive.warc.whole import WholeRecord, parse_whole, read_whole


def view(rec: Any) -> Tuple[Any, ...]:
    """What a reader of one record sees of it."""
    http = rec.http
    return (rec.format, rec.type, rec.offset, rec.content_length, rec.target_uri, rec.record_id, rec.date,
            (rec.headers.protocol, rec.headers.statusline, list(rec.headers.fields), rec.headers.total_len),
            (http.protocol, http.statusline, list(http.fields), http.total_len) if http is not None else None,
            rec.payload.read())


def iterated(path: Path, offset: int) -> Optional[Tuple[Any, ...]]:
    """The iterator's first record at offset, or None when it has none there or raises."""
    try:
        with ArchiveIterator(str(path), offset=offset, on_defect=lambda d: None) as it:
            rec = next(iter(it), None)
            return view(rec) if rec is not None and rec.offset == offset else None
    except ArchiveError:
        return None


def members(path: Path) -> List[Tuple[int, int]]:
    """(offset, length) of each gzip member of a gzip file, as far as the file holds members."""
    data = path.read_bytes()
    out, pos = [], 0
    while pos < len(data) and data[pos:pos + 2] == b"\x1f\x8b":
        d = zlib.decompressobj(31)
        try:
            d.decompress(data[pos:])
        except zlib.error:
            break
        if not d.eof:
            break
        end = len(data) - len(d.unused_data)
        out.append((pos, end - pos))
        pos = end
    return out


def check_file(path: Path) -> Tuple[int, int]:
    """Every member of path: read whole, the same record as the iterator's, or None. Returns
    (members, taken)."""
    taken = 0
    spans = members(path)
    for offset, length in spans:
        try:
            whole = read_whole(str(path), offset, length)
        except ArchiveError:
            whole = None
        if whole is None:
            continue
        assert iterated(path, offset) == view(whole), (path.name, offset)
        taken += 1
    return len(spans), taken


def test_valid_fixtures_read_whole_as_iterated(valid_archives) -> None:
    total = taken = 0
    for fx in valid_archives.values():
        if str(fx.path).endswith(".gz"):
            n, t = check_file(fx.path)
            total += n
            taken += t
    # most members of the valid files are plain records (a fast path that never applies fails here)
    assert total > 1000 and taken > 0.9 * total, (total, taken)


def test_every_wget_record_is_read_whole(valid_archives) -> None:
    """Wget writes plain records, one a member: each one is taken, and is the iterator's."""
    for wid in ("wget/docs-python-3.11.warc.gz", "wget/docs-python-3.11-recrawl.warc.gz"):
        n, t = check_file(valid_archives[wid].path)
        assert n > 500 and t == n, (wid, n, t)


def test_broken_fixtures_read_whole_as_iterated(broken_archives) -> None:
    seen = 0
    for bf in broken_archives.values():
        if str(bf.path).endswith(".gz"):
            seen += check_file(bf.path)[0]
    assert seen > 100


def test_unusual_records_are_left_to_the_iterator(tmp_path: Path) -> None:
    """Each of these differs from a plain record in one way the iterator reads (or reports)
    otherwise; each is declined."""
    good = warc_record(b"http://example.com/a", b"hello")
    assert parse_whole(good, 0) is not None   # (else the others prove nothing)
    cases = {
        "blank line first": b"\r\n" + good,
        "no end of head": good.replace(b"\r\n\r\nHTTP/1.1", b"\r\nHTTP/1.1", 1),
        "Content-Length short": good.replace(b"Content-Length: 43\r\n", b"Content-Length: 40\r\n", 1),
        "Content-Length long": good.replace(b"Content-Length: 43\r\n", b"Content-Length: 50\r\n", 1),
        "Content-Length not a number": good.replace(b"Content-Length: 43\r\n", b"Content-Length: x\r\n", 1),
        "no Content-Length": good.replace(b"Content-Length: 43\r\n", b"", 1),
        "no separator": good[:-4] + b"\n\n\n\n",
        "two records": good + good,
        "segmented": good.replace(b"WARC-Type", b"WARC-Segment-Number: 1\r\nWARC-Type", 1),
        "lower-case version": b"warc/1.0" + good[8:],
        "unknown version": b"WARC/2.0" + good[8:],
        "ARC": b"http://example.com/ 1.2.3.4 20200101000000 text/html 5\nhello\n",
    }
    for name, data in cases.items():
        assert parse_whole(data, 0) is None, name


def warc_record(uri: bytes, body: bytes, rtype: bytes = b"response") -> bytes:
    http = b"HTTP/1.1 200 OK\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    assert len(http) == 43 or body != b"hello"
    return (b"WARC/1.0\r\nWARC-Type: " + rtype + b"\r\nWARC-Target-URI: " + uri +
            b"\r\nWARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-000000000001>\r\n"
            b"WARC-Date: 2024-01-02T03:04:05Z\r\nContent-Length: " + str(len(http)).encode() + b"\r\n\r\n" +
            http + b"\r\n\r\n")


def one_member_file(path: Path, data: bytes) -> int:
    c = zlib.compressobj(6, zlib.DEFLATED, 31)
    m = c.compress(data) + c.flush()
    path.write_bytes(m)
    return len(m)


# bytes that change how a head reads: line ends, folding, separators, digits, odd characters
TOKENS = [b"\r\n", b"\n", b"\r", b" ", b"\t", b":", b": ", b"0", b"9", b"-1", b"+", b"WARC/1.0", b"HTTP/1.1 ",
          b"Content-Length: ", b"WARC-Type: revisit", b"http://", b"<", b">", b"\xff", b"\xc3\xa9", b"\x00", b"_"]


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.binary(max_size=2000), rtype=st.sampled_from([b"response", b"request", b"resource", b"revisit",
                                                              b"metadata"]),
       edits=st.lists(st.tuples(st.integers(0, 400), st.integers(0, 3), st.sampled_from(TOKENS)), max_size=4),
       scheme=st.sampled_from([b"http://example.com/", b"https://example.com/x", b"dns:example.com", b"<http://e.com/>"]))
def test_drawn_and_mutated_records(tmp_path: Path, body: bytes, rtype: bytes, edits: list, scheme: bytes) -> None:
    """A record with edits in its first 400 bytes (heads): parsed whole, it is what the iterator
    reads of the same bytes in one member."""
    data = bytearray(warc_record(scheme, body, rtype))
    for at, cut, token in edits:
        at = min(at, len(data))
        data[at:at + cut] = token
    data = bytes(data)
    path = tmp_path / "one.warc.gz"
    length = one_member_file(path, data)
    whole = parse_whole(data, 0)
    by_file = read_whole(str(path), 0, length)
    assert (whole is None) == (by_file is None)
    if whole is not None:
        seen = view(whole)   # (a payload stream is read once)
        assert by_file is not None and view(by_file) == seen
        assert iterated(path, 0) == seen


def test_archives_open_takes_the_whole_path_only_with_the_true_length(tmp_path: Path) -> None:
    path = tmp_path / "a.warc.gz"
    length = one_member_file(path, warc_record(b"http://example.com/a", b"hello"))
    arch = Archives([str(tmp_path)])
    for given_length, whole in ((length, True), (length + 3, False), (None, False)):
        o = arch.open("a.warc.gz", 0, given_length)
        try:
            assert isinstance(o.rec, WholeRecord) == whole, given_length
            assert o.rec.payload.read() == b"hello"
            assert o.info("payload").record_id == "<urn:uuid:00000000-0000-0000-0000-000000000001>"
        finally:
            o.close()
