"""Index sources: a sorted CDX(J) file searched in place answers ranges as bisect over its lines."""

from __future__ import annotations

import bisect

from hypothesis import given, settings
from hypothesis import strategies as st

from warchive.index.sources import MergedSource
from warchive.sortedfile import SortedFile

# index lines start with a key, never with a control character or a space (the header line sorts first)
line_bytes = st.binary(min_size=0, max_size=12).map(lambda b: b.replace(b"\n", b"")).filter(
    lambda b: b and b[0] > 0x20)


def _write(tmp_path, name, lines, header=False):
    p = tmp_path / name
    body = b"".join(line + b"\n" for line in lines)
    p.write_bytes((b" CDX N b a m s k r M S V g\n" if header else b"") + body)
    return str(p)


def _expected(lines, start, stop):
    lo = bisect.bisect_left(lines, start)
    hi = len(lines) if stop is None else bisect.bisect_left(lines, stop)
    return lines[lo:max(lo, hi)]


@settings(max_examples=200, deadline=None)
@given(st.lists(line_bytes, max_size=60), st.binary(max_size=6), st.one_of(st.none(), st.binary(max_size=6)),
       st.booleans())
def test_cdx_file_range_is_bisect(tmp_path_factory, lines, start, stop, header):
    lines = sorted(lines)  # duplicates kept: a file may hold the same line twice
    path = _write(tmp_path_factory.mktemp("cdx"), "x.cdxj", lines, header)
    with SortedFile(path) as f:
        assert list(f.range(start, stop)) == _expected(lines, start, stop)


def test_cdx_file_empty_and_no_final_newline(tmp_path):
    empty = tmp_path / "e.cdxj"
    empty.write_bytes(b"")
    with SortedFile(str(empty)) as f:
        assert list(f.range(b"", None)) == []
    p = tmp_path / "n.cdxj"
    p.write_bytes(b"a 1\nb 2\nc 3")
    with SortedFile(str(p)) as f:
        assert list(f.range(b"b", None)) == [b"b 2", b"c 3"]
        assert list(f.range(b"b", b"c")) == [b"b 2"]


def test_merged_sources_merge_in_order(tmp_path):
    a = sorted([b"a 1", b"c 1", b"e 1"])
    b = sorted([b"b 1", b"c 1", b"d 1"])
    srcs = MergedSource([SortedFile(_write(tmp_path, "a", a)), SortedFile(_write(tmp_path, "b", b))])
    assert list(srcs.range(b"b", b"e")) == [b"b 1", b"c 1", b"c 1", b"d 1"]
    srcs.close()
