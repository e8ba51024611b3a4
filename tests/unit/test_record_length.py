"""A record's length from its index line (``ArchiveIterator(..., length=N)``, the gzip kernel's
``Reader(length=N)``) changes how a record is read (one read of N bytes, the member inflated
whole by libdeflate), never what is read: every record of the fixtures reads the same with its
true length, a wrong one or none, a damaged member fails the same way, and one cut short by the
end of the file reads the same as far as it goes."""

from __future__ import annotations

import gzip
import os
import struct
import zlib
from pathlib import Path
from typing import Any, List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import warcgen
from warchive.errors import ArchiveError
from warchive.warc.reader import ArchiveIterator


def read_one(path: Path, offset: int, length: Optional[int]) -> Tuple[Any, ...]:
    """What reading the record at offset gives: its head, payload, the next record's offset and
    the defects found, or the error."""
    found: list = []
    try:
        with ArchiveIterator(str(path), offset=offset, length=length, on_defect=found.append) as it:
            rec = next(iter(it), None)
            if rec is None:
                return ("none",)
            http = rec.http
            head = (rec.type, rec.offset, rec.target_uri, list(rec.headers.fields),
                    (http.statusline, list(http.fields)) if http else None)
            payload = rec.payload.read()
            it_next = next(iter(it), None)
            return ("ok", head, payload, it_next.offset if it_next is not None else None, [str(d) for d in found])
    except ArchiveError as e:
        return ("error", type(e).__name__, str(e))


def lengths_to_try(true_len: int) -> List[Optional[int]]:
    return [None, true_len, true_len - 1, true_len + 3, max(1, true_len // 2), 1, 10 ** 7]


def check_file(path: Path, offsets: List[int]) -> int:
    """Every record start of path reads the same under every length; how many were read."""
    n = 0
    for start, end in zip(offsets, offsets[1:]):
        want = read_one(path, start, None)
        for length in lengths_to_try(end - start):
            got = read_one(path, start, length)
            assert got == want, (path.name, start, length)
        n += 1
    return n


def member(payload: bytes, level: int = 6) -> bytes:
    c = zlib.compressobj(level, zlib.DEFLATED, 31)
    return c.compress(payload) + c.flush()


def warc_record(uri: str, body: bytes, ctype: str = "application/octet-stream") -> bytes:
    http = b"HTTP/1.1 200 OK\r\nContent-Type: " + ctype.encode() + b"\r\nContent-Length: " + \
        str(len(body)).encode() + b"\r\n\r\n" + body
    head = (f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {uri}\r\n"
            f"WARC-Date: 2024-01-02T03:04:05Z\r\nWARC-Record-ID: <urn:uuid:{abs(hash(uri)):032x}>\r\n"
            f"Content-Type: application/http; msgtype=response\r\nContent-Length: {len(http)}\r\n\r\n").encode()
    return head + http + b"\r\n\r\n"


def write_members(path: Path, records: List[bytes], level: int = 6) -> List[int]:
    offsets, pos = [], 0
    with open(path, "wb") as f:
        for r in records:
            m = member(r, level)
            offsets.append(pos)
            f.write(m)
            pos += len(m)
    return offsets + [pos]


def test_fixtures_read_the_same_under_any_length(tmp_path: Path) -> None:
    fixtures = [warcgen.write_kitchen_sink(tmp_path), warcgen.write_kitchen_sink(tmp_path / "plain", gz=False)
                if (tmp_path / "plain").mkdir() is None else None,
                warcgen.write_skip_length(tmp_path), warcgen.write_stale_skip_length(tmp_path)]
    total = 0
    for fx in fixtures:
        assert fx is not None and fx.member_offsets
        total += check_file(fx.path, fx.member_offsets)
    assert total > 40


def test_payload_sizes_around_the_kernel_limits(tmp_path: Path) -> None:
    """Heads past 64 KiB (zlib's head window), output past the 8x first guess and past 4 MiB
    (libdeflate's limit: streamed instead), input past 2 MiB, incompressible and empty bodies."""
    rnd = os.urandom
    bodies = [b"", b"x", rnd(70_000), b"\0" * 200_000, b"\0" * (5 << 20), rnd(3 << 20),
              b"<p>" * 30_000 + rnd(1000)]
    recs = [warc_record(f"http://example.com/{i}", b) for i, b in enumerate(bodies)]
    path = tmp_path / "sizes.warc.gz"
    offsets = write_members(path, recs)
    assert check_file(path, offsets) == len(bodies)
    # and the bodies are the ones written
    for (start, end), body in zip(zip(offsets, offsets[1:]), bodies):
        got = read_one(path, start, end - start)
        assert got[0] == "ok" and got[2] == body


def damaged(tmp_path: Path, name: str, how) -> Tuple[Path, List[int]]:
    recs = [warc_record(f"http://example.com/{i}", os.urandom(3000) + b"a" * 5000) for i in range(3)]
    path = tmp_path / name
    offsets = write_members(path, recs)
    data = bytearray(path.read_bytes())
    data = how(data, offsets)
    path.write_bytes(bytes(data))
    return path, offsets


def flip_deflate_byte(data: bytearray, offsets: List[int]) -> bytearray:
    data[offsets[1] + 200] ^= 0x55
    return data


def bad_crc(data: bytearray, offsets: List[int]) -> bytearray:
    data[offsets[2] - 8] ^= 0xFF
    return data


def bad_isize(data: bytearray, offsets: List[int]) -> bytearray:
    end = offsets[2]
    (isize,) = struct.unpack("<I", data[end - 4:end])
    data[end - 4:end] = struct.pack("<I", isize + 1)
    return data


def truncate(data: bytearray, offsets: List[int]) -> bytearray:
    return data[: offsets[2] - 30]


@pytest.mark.parametrize("how", [flip_deflate_byte, bad_crc, bad_isize, truncate])
def test_damaged_members_fail_the_same_way(tmp_path: Path, how) -> None:
    """A corrupt member fails the same way under any length; a member the file ends inside reads
    the same, as far as it goes, with the same truncated defect."""
    path, offsets = damaged(tmp_path, how.__name__ + ".warc.gz", how)
    true_len = offsets[2] - offsets[1]
    want = read_one(path, offsets[1], None)
    if how is truncate:
        assert want[0] == "ok" and len(want[4]) == 1 and "the file ends there" in want[4][0], want
    else:
        assert want[0] == "error", want    # the damage is seen (else this test proves nothing)
    for length in lengths_to_try(true_len):
        assert read_one(path, offsets[1], length) == want, length


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bodies=st.lists(st.one_of(st.binary(max_size=3000), st.integers(0, 300_000).map(lambda n: b"ab" * n)),
                       min_size=1, max_size=4),
       level=st.sampled_from([0, 1, 6, 9]), nudge=st.integers(-40, 40))
def test_drawn_files(tmp_path: Path, bodies: List[bytes], level: int, nudge: int) -> None:
    recs = [warc_record(f"http://example.com/{i}", b) for i, b in enumerate(bodies)]
    path = tmp_path / "drawn.warc.gz"
    offsets = write_members(path, recs, level)
    for start, end in zip(offsets, offsets[1:]):
        want = read_one(path, start, None)
        assert want[0] == "ok"
        assert read_one(path, start, end - start) == want
        assert read_one(path, start, max(1, end - start + nudge)) == want
    assert gzip.decompress(path.read_bytes()) == b"".join(recs)
