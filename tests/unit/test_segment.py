"""Index segments: every range equals bisect over the sorted lines, every line comes back
byte for byte, and damage is an IndexFormatError naming the file and the block.

- Round trips (hypothesis) of generated CDXJ, CDX-11 and odd lines, mixed, at restart
  intervals 1, 16 and 128 and blocks of one line to 1 MiB, for every compression this
  build has: exact, prefix, host and domain ranges and arbitrary (start, stop) pairs
  against ``bisect`` on the sorted list.
- The lines warchive indexes from the Wget fixtures (CDXJ and CDX-11, every record) and
  Wget's own CDX files come back byte for byte, stored structured where they can be.
- Lines that almost parse (a leading zero, a lowercase digest, a field out of order, ...)
  are stored raw and still come back.
- A flipped byte anywhere, a truncated file, a wrong magic: IndexFormatError on open,
  or naming the damaged block on its first read. The block extents come from a small
  Python reader of the index written from docs/format.md, so the spec is checked too.
- Unsorted input fails with the first line out of order and leaves no file.

The default run is short; ``pytest -m slow tests/unit/test_segment.py`` runs the same
properties on many more examples.
"""

from __future__ import annotations

import base64
import bisect
import json
import os
import struct
import zlib
from pathlib import Path
from typing import List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from budget import examples

from warchive.errors import IndexFormatError, UnsortedInputError, UnsupportedFormatError
from warchive.index.segment import HAVE_ZSTD, Segment, SegmentWriter, build_segment, write_segment

ROOT = Path(__file__).resolve().parents[2]
WGET = ROOT / "tests" / "data" / "wget"
COMPRESSIONS = ["deflate", "none"] + (["zstd"] if HAVE_ZSTD else [])
MAGIC = b"\x89WASEG\r\n"

FAST = settings(max_examples=40, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SLOW = settings(max_examples=examples(1500), deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ---------------------------------------------------------------- helpers

def build(lines, path, **kw) -> dict:
    with open(path, "wb") as f:
        w = SegmentWriter(f.write, **kw)
        w.extend(lines)
        return w.finish()


def ref_range(lines: List[bytes], start: bytes, stop: Optional[bytes]) -> List[bytes]:
    a = bisect.bisect_left(lines, start)
    b = len(lines) if stop is None else bisect.bisect_left(lines, stop)
    return lines[a:max(a, b)]


def key_of(line: bytes) -> bytes:
    return line.split(b" ", 1)[0]


def queries(lines: List[bytes], extra: List[bytes]) -> List[Tuple[bytes, Optional[bytes]]]:
    """Exact, prefix, host and domain ranges (as the CDX API asks them) of the keys in lines."""
    out: List[Tuple[bytes, Optional[bytes]]] = [(b"", None), (b"", b"")]
    for k in {key_of(x) for x in lines} | set(extra):
        out.append((k + b" ", k + b"!"))                      # exact
        for n in (1, len(k) // 2, len(k)):
            p = k[:n]
            out.append((p, p[:-1] + bytes([p[-1] + 1]) if p and p[-1] < 255 else None))  # prefix
        host = k.split(b")", 1)[0]
        out.append((host + b")/", host + b")0"))              # host
        dom = host.rsplit(b",", 1)[0] if b"," in host else host
        out.append((dom, dom + b"-"))                         # domain (com,example and below)
        out.append((dom + b",", dom + b"-"))
    return out


def check_segment(path, lines: List[bytes], extra: List[bytes] = (), cache_bytes: Optional[int] = None):
    kw = {} if cache_bytes is None else {"cache_bytes": cache_bytes}
    with Segment(path, **kw) as seg:
        assert len(seg) == len(lines)
        assert list(seg) == lines
        assert seg.first_key == (lines[0] if lines else None)
        assert seg.last_key == (lines[-1] if lines else None)
        blocks = seg.blocks()
        assert sum(n for _, n in blocks) == len(lines)
        got = []
        for i, (first, n) in enumerate(blocks):
            page = seg.block_lines(i)
            assert len(page) == n and page[0].startswith(first)
            got += page
        assert got == lines
        for start, stop in queries(lines, list(extra)):
            want = ref_range(lines, start, stop)
            assert seg.range_list(start, stop) == want, (start, stop)
            assert list(seg.range(start, stop)) == want, (start, stop)
            if stop is not None and start.endswith(b" ") and stop == start[:-1] + b"!":
                assert seg.lookup(start[:-1]) == want
        assert seg.verify() == len(lines)


# ---------------------------------------------------------------- generated lines

LABELS = [b"com", b"org", b"example", b"ex", b"a", b"b", b"www", b"x-y"]
PATHS = [b"/", b"/a", b"/a/b", b"/a/b.html", b"/A/b", b"/a?x=1&y=2", b"/%7Euser", b"/a/", b"/b/c/d.png"]
MIMES = ["text/html", "image/png", "warc/revisit", "application/json", "text/css"]
FILES = ["a.warc.gz", "b.warc.gz", "crawl-2020.warc.gz", "dir/c.warc"]


@st.composite
def surt_keys(draw) -> bytes:
    host = draw(st.lists(st.sampled_from(LABELS), min_size=1, max_size=4))
    port = draw(st.sampled_from([b"", b"", b":8080"]))
    return b",".join(host) + port + b")" + draw(st.sampled_from(PATHS))


def url_for(key: bytes, draw) -> str:
    host, path = key.split(b")", 1)
    name = b".".join(reversed(host.split(b","))).decode()
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return "http://" + name + path.decode()
    if kind == 1:
        return "https://www." + name + path.decode() + "/"
    if kind == 2:
        return "http://" + name.upper() + path.decode().upper()
    if kind == 3:
        return "http://www2." + name + ":80" + path.decode() + "#frag"
    if kind == 4:
        return draw(st.text(min_size=0, max_size=30))
    return "http://" + name + path.decode() + "?é=\"1\""


def digest(draw) -> str:
    raw = draw(st.binary(min_size=20, max_size=20))
    kind = draw(st.integers(0, 9))
    b32 = base64.b32encode(raw).decode()
    if kind == 0:
        return "sha256:" + base64.b32encode(raw + raw[:12]).decode()
    if kind == 1:
        return "sha1:" + b32.lower()
    if kind == 2:
        return b32
    return "sha1:" + b32


@st.composite
def cdxj_lines(draw, key=None) -> bytes:
    key = key if key is not None else draw(surt_keys())
    ts = draw(st.sampled_from(["20200101000000", "20200101000001", "20211231235959", "19960101000000"]) |
              st.from_regex(r"\A[0-9]{14}\Z"))
    fields = {}
    if draw(st.integers(0, 9)):
        fields["url"] = url_for(key, draw)
    if draw(st.integers(0, 9)):
        fields["mime"] = draw(st.sampled_from(MIMES))
    if draw(st.integers(0, 3)):
        fields["status"] = draw(st.sampled_from(["200", "404", "301", "-"]))
    if draw(st.integers(0, 9)):
        fields["digest"] = digest(draw)
    if draw(st.integers(0, 9)):
        fields["length"] = str(draw(st.integers(0, 10**6) | st.integers(0, 10**18 - 1)))
    if draw(st.integers(0, 9)):
        fields["offset"] = str(draw(st.integers(0, 10**9) | st.integers(0, 10**18 - 1)))
    if draw(st.integers(0, 9)):
        fields["filename"] = draw(st.sampled_from(FILES))
    if not draw(st.integers(0, 15)):
        fields["requestBody"] = "a=1"
    if not draw(st.integers(0, 15)):
        fields["length"] = "0" + fields.get("length", "1")
    return key + b" " + ts.encode() + b" " + json.dumps(fields).encode()


@st.composite
def cdx11_lines(draw) -> bytes:
    key = draw(surt_keys())
    cols = [key, b"20200101000000" if draw(st.booleans()) else b"20210101000000",
            url_for(key, draw).encode("utf-8", "replace").replace(b" ", b"%20").replace(b"\n", b"%0A") or b"-",
            draw(st.sampled_from([b"text/html", b"-", b"image/png"])),
            draw(st.sampled_from([b"200", b"-"])),
            digest(draw).encode().split(b":")[-1],
            b"-", b"-",
            str(draw(st.integers(0, 10**6))).encode(),
            str(draw(st.integers(0, 10**9))).encode(),
            draw(st.sampled_from(FILES)).encode()]
    if not draw(st.integers(0, 10)):
        cols.append(b"extra")
    return b" ".join(c if c else b"-" for c in cols)


odd_lines = st.one_of(
    st.binary(max_size=60).map(lambda b: b.replace(b"\n", b"")),
    st.just(b" CDX N b a m s k r M S V g"),
    st.just(b""),
    surt_keys().map(lambda k: k + b" 2020 {}"),
    surt_keys().map(lambda k: k + b" 20200101000000 {}"),
    surt_keys().map(lambda k: k + b" 20200101000000 {\"url\": \"x\"} "),
    surt_keys().map(lambda k: k + b" 20200101000000 {\"mime\": \"a\", \"url\": \"x\"}"),
    cdxj_lines().map(lambda x: x.replace(b"\": \"", b"\":\"", 1)),
)


@st.composite
def line_sets(draw) -> List[bytes]:
    n = draw(st.integers(0, 120))
    keys = draw(st.lists(surt_keys(), min_size=1, max_size=12))
    lines = []
    for _ in range(n):
        kind = draw(st.integers(0, 9))
        if kind < 6:
            lines.append(draw(cdxj_lines(key=draw(st.sampled_from(keys)))))
        elif kind < 8:
            lines.append(draw(cdx11_lines()))
        else:
            lines.append(draw(odd_lines))
    if lines and draw(st.booleans()):
        lines += draw(st.lists(st.sampled_from(lines), max_size=5))   # duplicates
    return sorted(lines)


layouts = st.one_of(
    st.builds(dict, block_lines=st.sampled_from([1, 2, 3, 7, 50]), block_bytes=st.just(0)),
    st.builds(dict, block_bytes=st.sampled_from([1, 100, 1000, 4096, 65536, 1 << 20])),
)


def round_trip(tmp, lines, layout, restart, compression, extra):
    path = tmp / "seg"
    stats = build(lines, path, restart_interval=restart, compression=compression, **layout)
    assert stats["lines"] == len(lines)
    assert stats["structured"] + stats["raw"] == len(lines)
    assert stats["raw_blocks"] == 0
    assert stats["bytes"] == os.path.getsize(path)
    check_segment(path, lines, extra)
    with Segment(path, cache_bytes=1) as seg:    # a cache that holds one block at a time
        for start, stop in queries(lines, list(extra))[:40]:
            assert seg.range_list(start, stop) == ref_range(lines, start, stop)


@pytest.fixture(scope="module")
def tmp(tmp_path_factory):
    return tmp_path_factory.mktemp("segments")


@pytest.mark.parametrize("restart", [1, 16, 128])
@FAST
@given(lines=line_sets(), layout=layouts, compression=st.sampled_from(COMPRESSIONS),
       extra=st.lists(surt_keys() | st.binary(max_size=8), max_size=4))
def test_round_trip(tmp, restart, lines, layout, compression, extra):
    round_trip(tmp, lines, layout, restart, compression, extra)


@pytest.mark.slow
@pytest.mark.parametrize("restart", [1, 16, 128])
@SLOW
@given(lines=line_sets(), layout=layouts, compression=st.sampled_from(COMPRESSIONS),
       extra=st.lists(surt_keys() | st.binary(max_size=8), max_size=4))
def test_round_trip_slow(tmp, restart, lines, layout, compression, extra):
    round_trip(tmp, lines, layout, restart, compression, extra)


@FAST
@given(lines=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=80),
       starts=st.lists(st.tuples(st.binary(max_size=6), st.none() | st.binary(max_size=6)), max_size=20),
       restart=st.sampled_from([1, 16, 128]), block_bytes=st.sampled_from([1, 64, 1 << 20]))
def test_any_bytes_any_range(tmp, lines, starts, restart, block_bytes):
    lines.sort()
    path = tmp / "bin"
    build(lines, path, restart_interval=restart, block_bytes=block_bytes)
    with Segment(path) as seg:
        assert list(seg) == lines
        for start, stop in starts:
            assert seg.range_list(start, stop) == ref_range(lines, start, stop)
            assert seg.range_list(start, stop, limit=2) == ref_range(lines, start, stop)[:2]


# ---------------------------------------------------------------- real lines

@pytest.fixture(scope="module")
def wget_lines():
    from warchive.index.build import index_paths
    from warchive.index.cdx import IndexOptions

    out = {}
    paths = sorted(str(p) for p in WGET.glob("*.warc.gz"))
    for name, opts in (("cdxj", IndexOptions(records="all")), ("cdx11", IndexOptions(cdx11=True))):
        chunks: List[bytes] = []
        index_paths(paths, chunks.append, opts, sort=True)
        out[name] = b"".join(chunks).split(b"\n")[:-1]
    wget_cdx = []
    for p in sorted(WGET.glob("*.cdx")):
        wget_cdx += p.read_bytes().split(b"\n")
    out["wget-cdx"] = sorted(set(line for line in wget_cdx if line))
    return out


@pytest.mark.parametrize("kind", ["cdxj", "cdx11", "wget-cdx"])
@pytest.mark.parametrize("compression", COMPRESSIONS)
def test_wget_fixture_lines(tmp, wget_lines, kind, compression):
    lines = wget_lines[kind]
    assert len(lines) > 500
    path = tmp / f"wget-{kind}-{compression}.seg"
    stats = write_segment(lines, path, compression=compression, block_bytes=16 << 10)
    if kind == "cdxj":
        assert stats["raw"] == 0       # everything cdxj-indexer writes is stored structured
    if kind == "cdx11":
        assert stats["raw"] == 1       # the " CDX ..." legend
    if compression != COMPRESSIONS[-1]:   # the codec is not what ranges depend on: check them once
        with Segment(path) as seg:
            assert list(seg) == lines and seg.verify() == len(lines)
        return
    check_segment(path, lines, [b"org,python,docs)/3.11", b"org,python,docs)/3.11/index.html"])


def test_build_segment_merges_files(tmp, wget_lines):
    lines = wget_lines["cdxj"]
    a, b = tmp / "a.cdxj", tmp / "b.cdxj"
    a.write_bytes(b"".join(x + b"\n" for x in lines[::2]))
    b.write_bytes(b"".join(x + b"\n" for x in lines[1::2]))
    build_segment([a, b], tmp / "merged.seg")
    build_segment([a], tmp / "one.seg")
    with Segment(tmp / "merged.seg") as seg:
        assert list(seg) == lines
    with Segment(tmp / "one.seg") as seg:
        assert list(seg) == lines[::2]


# ---------------------------------------------------------------- escapes

NEAR_MISSES = [
    b'com,x)/ 20200101000000 {"url": "http://x/", "length": "012"}',
    b'com,x)/ 20200101000000 {"url": "http://x/", "offset": "-1"}',
    b'com,x)/ 20200101000000 {"url": "http://x/", "offset": "1234567890123456789"}',
    b'com,x)/ 20200101000000 {"url": "http://x/", "offset": "123456789012345678"}',
    b'com,x)/ 20200101000000 {"digest": "sha1:abcdefghijklmnopqrstuvwxyz234567"}',
    b'com,x)/ 20200101000000 {"digest": "sha1:ABCDEFGHIJKLMNOPQRSTUVWXYZ23456"}',
    b'com,x)/ 20200101000000 {"digest": "sha1:ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"}',
    b'com,x)/ 20200101000000 {"digest": "sha1:ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"}',
    b'com,x)/ 20200101000000 {"mime": "a", "url": "b"}',
    b'com,x)/ 20200101000000 {"url": "a", "url": "b"}',
    b'com,x)/ 20200101000000 {"url": "http://x/\\"a\\\\", "mime": "\\u00e9"}',
    b'com,x)/ 20200101000000 {"url": "a"} ',
    b'com,x)/ 20200101000000 {"url": "a",  "mime": "b"}',
    b'com,x)/ 20200101000000 {"url": "a"}}',
    b'com,x)/ 20200101000000 {"url": "a\\"}',
    b'com,x)/ 20200101000000 {"url": "a", "requestBody": "x=1", "method": "POST"}',
    b'com,x)/ 2020010100000 {"url": "a"}',
    b'com,x)/ 202001010000000 {"url": "a"}',
    b'com,x)/ 20200101000000  {"url": "a"}',
    b'com,x)/ 20200101000000',
    b'com,x)/ 20200101000000 ',
    b'com,x)/ 20200101000000 {',
    b'com,x)/ 20200101000000 {}',
    b'com,x)/a 20200101000000 http://x/a text/html 200 ABCDEFGHIJKLMNOPQRSTUVWXYZ234567 - - 10 20 f.warc.gz',
    b'com,x)/a 20200101000000 http://x/a text/html 200 ABCDEFGHIJKLMNOPQRSTUVWXYZ234567 - - 10 20 f.warc.gz x',
    b'com,x)/a 20200101000000 http://x/a text/html 200 - - - - - -',
    b'com,x)/a 20200101000000 - - - - - - - - -',
    b'com,x)/a 20200101000000 http://x/a text/html 200 abc - - 10 020 f.warc.gz',
    b'com,x)/a 20200101000000 http://x/a  text/html 200 abc - - 10 20 f.warc.gz',
    b'nokey 20200101000000 {"url": "http://nokey/"}',
    b'com,x)/ 20200101000000 {"url": ""}',
    b'com,x)/ 20200101000000 {"url": "://"}',
    b'com,x) 20200101000000 {"url": "http://x"}',
    b'\xff\x00\x01 binary',
    b'x' * 100000,
    b'  ',
    b'',
]


@pytest.mark.parametrize("restart", [1, 3, 16])
def test_near_misses_round_trip(tmp, restart):
    lines = sorted(NEAR_MISSES)
    path = tmp / "near.seg"
    stats = build(lines, path, restart_interval=restart, block_lines=9, block_bytes=0)
    assert stats["structured"] > 5 and stats["raw"] > 10
    check_segment(path, lines, [b"com,x)/", b"com,x)/a"])


def test_lines_and_line_feeds(tmp):
    path = tmp / "lf.seg"
    with open(path, "wb") as f:
        w = SegmentWriter(f.write)
        w.add(b"a\n")
        w.add(bytearray(b"b"))
        w.add(memoryview(b"c\n"))
        with pytest.raises(ValueError, match="line feed"):
            w.add(b"d\ne")
        w.finish()
        with pytest.raises(ValueError):
            w.add(b"z")
    with Segment(path) as seg:
        assert list(seg) == [b"a", b"b", b"c"]


def test_empty_segment(tmp):
    path = tmp / "empty.seg"
    stats = write_segment([], path)
    assert stats["lines"] == 0 and stats["blocks"] == 0
    with Segment(path) as seg:
        assert len(seg) == 0 and list(seg) == [] and seg.blocks() == []
        assert seg.first_key is None and seg.lookup(b"com,x)/") == []
        assert seg.range_list(b"", None) == []


# ---------------------------------------------------------------- order and lifetime

def test_unsorted_input_names_the_line(tmp):
    path = tmp / "unsorted.seg"
    lines = [b"com,a)/ 1", b"com,b)/ 2", b"com,b)/ 2", b"com,a)/ 3", b"com,c)/ 4"]
    with pytest.raises(UnsortedInputError) as e:
        write_segment(lines, path, source="in.cdxj")
    assert e.value.lineno == 4
    assert e.value.line == b"com,a)/ 3" and e.value.previous == b"com,b)/ 2"
    assert "in.cdxj" in str(e.value) and "line 4" in str(e.value)
    assert isinstance(e.value, IndexFormatError)
    assert not path.exists()
    assert not [p for p in tmp.iterdir() if p.name.startswith("unsorted.seg")]


def test_unsorted_across_blocks(tmp):
    lines = [b"%05d" % i for i in range(1000)]
    lines[700], lines[701] = lines[701], lines[700]
    with pytest.raises(UnsortedInputError) as e:
        write_segment(lines, tmp / "u2.seg", block_lines=10, block_bytes=0)
    assert e.value.lineno == 702


def test_closed_segment_raises(tmp):
    lines = [b"%05d x" % i for i in range(500)]
    path = tmp / "closed.seg"
    build(lines, path, block_lines=10, block_bytes=0)
    seg = Segment(path)
    it = seg.range(b"00100")
    assert next(it) == b"00100 x"
    seg.close()
    assert seg.closed
    for call in (lambda: next(it), lambda: seg.range(b""), lambda: seg.lookup(b"1"), lambda: len(seg),
                 lambda: seg.blocks(), lambda: seg.first_key, lambda: seg.block_lines(0), lambda: seg.verify()):
        with pytest.raises(ValueError, match="closed"):
            call()
    seg.close()   # twice is fine
    del it


def test_bad_arguments(tmp):
    with pytest.raises(ValueError):
        SegmentWriter(lambda b: None, compression="lz4")
    with pytest.raises(ValueError):
        SegmentWriter(lambda b: None, restart_interval=0)
    with pytest.raises(ValueError):
        SegmentWriter(lambda b: None, block_lines=0, block_bytes=0)
    path = tmp / "args.seg"
    build([b"a", b"b"], path)
    with Segment(path) as seg:
        with pytest.raises(TypeError):
            seg.lookup(12)
        with pytest.raises(IndexError):
            seg.block_lines(5)
        assert seg.lookup("a") == [] and seg.range_list("a") == [b"a", b"b"]


# ---------------------------------------------------------------- damage

def read_varint(buf: bytes, pos: int) -> Tuple[int, int]:
    v = shift = 0
    while True:
        c = buf[pos]
        pos += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, pos


def block_extents(data: bytes) -> List[Tuple[int, int]]:
    """[(offset, end)] of every block, read as docs/format.md says."""
    assert data[:8] == MAGIC and data[-8:] == MAGIC
    footer = data[-48:]
    index_off, index_len, nlines, nblocks, index_crc, version, comp, zero, footer_crc = \
        struct.unpack("<QQQIIHBBI", footer[:40])
    assert version == 1 and zero == 0 and zlib.crc32(footer[:36]) == footer_crc
    index = data[index_off:index_off + index_len]
    assert zlib.crc32(index) == index_crc and index_off + index_len + 48 == len(data)
    n, pos = read_varint(index, 0)
    assert n == nblocks
    out, off, total = [], 16, 0
    for _ in range(n):
        _shared, pos = read_varint(index, pos)
        unshared, pos = read_varint(index, pos)
        pos += unshared
        disk, pos = read_varint(index, pos)
        lines, pos = read_varint(index, pos)
        crc, = struct.unpack_from("<I", index, pos)
        pos += 4
        block = data[off:off + disk]
        assert zlib.crc32(block) == crc
        bpos = clen = 0
        for _ in range(7):      # meta + six streams: (ulen, clen) each
            ulen, bpos = read_varint(block, bpos)
            c, bpos = read_varint(block, bpos)
            assert (ulen == 0) == (c == 0)
            clen += c
        assert (disk - bpos - clen) % 20 == 0   # then the digests
        out.append((off, off + disk))
        off += disk
        total += lines
    assert off == index_off and total == nlines
    return out


@pytest.fixture(scope="module", params=COMPRESSIONS)
def damaged_base(request, tmp_path_factory, wget_lines):
    lines = wget_lines["cdxj"][:400] + [b"zz odd line", b"zz odd line 2"]
    path = tmp_path_factory.mktemp("damage") / f"base-{request.param}.seg"
    build(lines, path, block_bytes=8192, compression=request.param)
    data = path.read_bytes()
    return data, block_extents(data), lines


def read_all(path) -> None:
    with Segment(path) as seg:
        seg.verify()
        list(seg)


def check_flip(tmp, data, extents, pos, mask):
    bad = bytearray(data)
    bad[pos] ^= mask
    path = tmp / "flipped.seg"
    path.write_bytes(bytes(bad))
    owner = next((i for i, (a, b) in enumerate(extents) if a <= pos < b), None)
    if owner is None:   # header, index or footer: refused on open
        with pytest.raises(IndexFormatError) as e:
            Segment(path)
    else:               # the block: refused when it is first read, naming it
        seg = Segment(path)
        with pytest.raises(IndexFormatError) as e:
            list(seg)
        assert e.value.block == owner
        with pytest.raises(IndexFormatError) as e2:
            seg.verify()
        assert e2.value.block == owner
        with pytest.raises(IndexFormatError):
            seg.verify()   # and again: a bad block is never cached
        seg.close()
    assert str(path) in str(e.value)


@FAST
@given(data=st.data())
def test_flipped_byte_is_found(tmp, damaged_base, data):
    base, extents, _ = damaged_base
    pos = data.draw(st.integers(0, len(base) - 1) | st.sampled_from([0, 7, 8, 12, 15, 16, len(base) - 1,
                                                                      len(base) - 48, len(base) - 12]))
    check_flip(tmp, base, extents, pos, data.draw(st.integers(1, 255)))


@pytest.mark.slow
def test_every_flipped_byte_is_found(tmp, damaged_base):
    base, extents, _ = damaged_base
    for pos in range(len(base)):
        check_flip(tmp, base, extents, pos, 0x55 if pos % 2 else 0x01)


def test_truncated_file(tmp, damaged_base):
    base, _, _ = damaged_base
    path = tmp / "cut.seg"
    for n in list(range(0, 80)) + list(range(len(base) - 80, len(base))) + list(range(80, len(base), 997)):
        path.write_bytes(base[:n])
        with pytest.raises(IndexFormatError) as e:
            Segment(path)
        assert str(path) in str(e.value)


def test_wrong_magic_and_version(tmp, damaged_base):
    base, _, lines = damaged_base
    path = tmp / "magic.seg"
    path.write_bytes(b"\x89WASEH\r\n" + base[8:])
    with pytest.raises(IndexFormatError, match="magic"):
        Segment(path)
    path.write_bytes(lines[0] + b"\n" + lines[1] + b"\n" * 100)   # a CDXJ file is not a segment
    with pytest.raises(IndexFormatError, match="magic"):
        Segment(path)
    v2 = bytearray(base)
    v2[8] = 2
    footer = v2[-48:]
    footer[32] = 2
    footer[36:40] = struct.pack("<I", zlib.crc32(bytes(footer[:36])))
    v2[-48:] = footer
    path.write_bytes(bytes(v2))
    with pytest.raises(IndexFormatError, match="version"):
        Segment(path)
    path.write_bytes(b"")
    with pytest.raises(IndexFormatError, match="empty"):
        Segment(path)


def test_compression_byte(tmp):
    """A footer that says zstd over blocks that are not: damage on first read where zstd is
    built in, a missing library (UnsupportedFormatError) on open where it is not; an unknown
    compression: refused on open."""
    path = tmp / "comp.seg"
    build([b"a 1", b"b 2"], path, compression="none")
    data = bytearray(path.read_bytes())
    for comp, exc in ((2, IndexFormatError if HAVE_ZSTD else UnsupportedFormatError), (3, IndexFormatError)):
        footer = data[-48:]
        footer[34] = comp
        footer[36:40] = struct.pack("<I", zlib.crc32(bytes(footer[:36])))
        path.write_bytes(bytes(data[:-48] + footer))
        with pytest.raises(exc) as e:
            list(Segment(path))
        assert str(path) in str(e.value)
        if comp == 2 and not HAVE_ZSTD:
            assert "libzstd" in str(e.value)


def test_good_copy_still_reads(tmp, damaged_base):
    base, extents, lines = damaged_base
    path = tmp / "good.seg"
    path.write_bytes(base)
    assert len(extents) > 5
    with Segment(path) as seg:
        assert list(seg) == lines and seg.verify() == len(lines)
