"""ZipNum clusters: write then read equals bisect over the lines; the bytes Common Crawl's
writer makes; pywb reads what we write (and we read what pywb reads); damaged clusters fail
with IndexFormatError naming the file and the block."""

from __future__ import annotations

import bisect
import gzip
import json
import os
import random
import zlib
from pathlib import Path
from typing import List, Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from warchive.errors import IndexFormatError, UnsortedInputError
from warchive.index.zipnum import ZipNumIndex, summary_key, write_zipnum


def expected(lines: List[bytes], start: bytes, stop: Optional[bytes]) -> List[bytes]:
    lo = bisect.bisect_left(lines, start)
    hi = len(lines) if stop is None else bisect.bisect_left(lines, stop)
    return lines[lo:max(lo, hi)]


def cdxj(rng: random.Random, i: int) -> bytes:
    host = rng.choice(["com,example", "com,example,www", "org,iana", "org,iana,www", "de,spiegel"])
    path = "/".join(rng.choice(["a", "b", "c", "index.html", "x?y=1"]) for _ in range(rng.randint(0, 3)))
    ts = f"20{rng.randint(10, 24)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{rng.randint(0, 235959):06d}"
    host_dots = ".".join(reversed(host.split(",")))
    rec = {"url": f"https://{host_dots}/{path}", "mime": "text/html", "status": "200",
           "digest": f"sha1:{rng.getrandbits(160):040X}", "length": str(rng.randint(300, 9000)),
           "offset": str(i), "filename": "x.warc.gz"}
    return f"{host})/{path} {ts} {json.dumps(rec)}".encode()


def corpus(n: int, seed: int = 1) -> List[bytes]:
    rng = random.Random(seed)
    return sorted(set(cdxj(rng, i) for i in range(n)))


# --- round trips -----------------------------------------------------------------

# lines with spaces (so keys are "a b" pairs, often prefixes of each other), no tab or LF
line_st = st.binary(min_size=1, max_size=10).map(
    lambda b: bytes(b" ab\x00\xff,)/"[x % 8] for x in b)).filter(lambda b: not b.startswith(b" CDX "))
probe_st = st.binary(max_size=8).map(lambda b: bytes(b" ab\x00\xff,)/"[x % 8] for x in b))


@settings(max_examples=300, deadline=None)
@given(st.lists(line_st, max_size=80), st.sampled_from([1, 2, 3, 7, 3000]), st.sampled_from([1, 2, 3]),
       st.lists(st.tuples(probe_st, st.one_of(st.none(), probe_st)), min_size=1, max_size=8))
def test_range_is_bisect(tmp_path_factory, lines, per_block, parts, probes):
    lines = sorted(lines)            # repeats kept: a cluster may hold a line twice
    d = tmp_path_factory.mktemp("zn")
    c = write_zipnum(lines, d / "idx", lines_per_block=per_block, parts=parts, threads=1)
    assert c.lines == len(lines)
    with ZipNumIndex(c.idx) as z:
        assert list(z) == lines
        assert z.verify() == len(lines)
        for start, stop in probes:
            assert list(z.range(start, stop)) == expected(lines, start, stop), (start, stop)
            # every block holding a line of the range is among blocks()
            numbers = {b.number for b in z.blocks(start, stop)}
            for b in z.blocks():
                if any(start <= x and (stop is None or x < stop) for x in z.read_block(b)):
                    assert b.number in numbers


def test_round_trip_cdxj_gz_source_parts(tmp_path):
    lines = corpus(20_000)
    src = tmp_path / "in.cdxj.gz"
    src.write_bytes(gzip.compress(b" CDX N b a m s k r M S V g\n" + b"".join(x + b"\n" for x in lines)))
    c = write_zipnum(src, str(tmp_path / "out") + "/", lines_per_block=500, parts=4)
    assert [os.path.basename(p) for p in c.parts] == [f"cdx-{i:05d}.gz" for i in range(4)]
    sizes = [os.path.getsize(p) for p in c.parts]
    assert max(sizes) < 1.5 * min(sizes)       # parts of about equal size
    assert (c.lines, c.blocks) == (20_000, 40)
    with ZipNumIndex(c.idx) as z:
        assert z.num_blocks == 40
        assert list(z) == lines                 # the header line is left out
        assert z.count_lines() == 20_000
        for key in (b"com,example)/", b"org,iana)/a", b"de,spiegel)/x?y=1 ", b"zz"):
            stop = key[:-1] + bytes([key[-1] + 1])
            assert list(z.range(key, stop)) == expected(lines, key, stop)


def test_isal_compressor(tmp_path):
    lines = corpus(5_000, seed=8)
    c = write_zipnum(lines, str(tmp_path / "zn") + "/", compressor="isal", lines_per_block=700)
    with ZipNumIndex(c.idx) as z:
        assert list(z) == lines and z.verify() == 5_000
    with pytest.raises(ValueError):
        write_zipnum(lines, str(tmp_path / "zn2") + "/", compressor="lzma")


def test_prefix_names_and_empty(tmp_path):
    c = write_zipnum([b"a 1 x", b"b 2 y"], tmp_path / "coll" / "index.idx")
    assert c.idx == str(tmp_path / "coll" / "index.idx")
    assert c.loc == str(tmp_path / "coll" / "index.loc")
    assert [os.path.basename(p) for p in c.parts] == ["index-00000.cdx.gz"]
    e = write_zipnum([], tmp_path / "empty")
    assert (e.lines, e.blocks, e.parts) == (0, 0, [])
    with ZipNumIndex(e.idx) as z:
        assert list(z.range(b"", None)) == [] and list(z.blocks()) == [] and z.num_blocks == 0


def test_summary_key():
    assert summary_key(b"com,example)/ 20200101000000 {}") == b"com,example)/ 20200101000000"
    assert summary_key(b"com,example)/ 20200101000000") == b"com,example)/ 20200101000000"
    assert summary_key(b"nospace") == b"nospace"


# --- the bytes of Common Crawl's writer (webarchive-indexing's ZipNumClusterJob) ---------

def cc_cluster(lines: List[bytes], n: int, d: Path) -> None:
    """A cluster built by hand the way Common Crawl's job builds one: blocks of n lines,
    each '\\n'.join(lines) + '\\n' deflated by zlib level 6 into a gzip member; summary lines
    'urlkey timestamp<TAB>part<TAB>offset<TAB>length<TAB>count' with count from 1; a .loc of
    'part<TAB>path' lines."""
    d.mkdir()
    part, idx, off = bytearray(), [], 0
    for i in range(0, len(lines), n):
        block = lines[i:i + n]
        z = zlib.compressobj(6, zlib.DEFLATED, zlib.MAX_WBITS + 16)
        data = z.compress(b"\n".join(block) + b"\n") + z.flush()
        key = b" ".join(block[0].split(b" ", 2)[0:2])
        idx.append(b"%s\tcdx-00000.gz\t%d\t%d\t%d\n" % (key, off, len(data), i // n + 1))
        part += data
        off += len(data)
    (d / "cdx-00000.gz").write_bytes(bytes(part))
    (d / "cluster.idx").write_bytes(b"".join(idx))
    (d / "cluster.loc").write_bytes(b"cdx-00000.gz\tcdx-00000.gz\n")


def test_bytes_equal_common_crawl_writer(tmp_path):
    lines = corpus(7_000, seed=5)
    cc_cluster(lines, 3000, tmp_path / "cc")
    ours = write_zipnum(lines, str(tmp_path / "ours") + "/")
    for name in ("cluster.idx", "cluster.loc", "cdx-00000.gz"):
        assert (tmp_path / "ours" / name).read_bytes() == (tmp_path / "cc" / name).read_bytes(), name


def test_reads_common_crawl_layout_without_loc(tmp_path):
    """Common Crawl publishes cluster.idx and cdx-*.gz, no .loc: parts are found beside the .idx."""
    lines = corpus(5_000, seed=2)
    cc_cluster(lines, 1000, tmp_path / "cc")
    os.unlink(tmp_path / "cc" / "cluster.loc")
    with ZipNumIndex(tmp_path / "cc" / "cluster.idx") as z:
        assert list(z) == lines and z.verify() == 5_000


def test_reads_pywb_sample_layout(tmp_path):
    """pywb's sample cluster: zipnum-sample.idx naming part 'zipnum', zipnum-sample.loc mapping it
    to a path relative to the .loc ('./...'); several locations are tried in turn."""
    lines = corpus(4_000, seed=3)
    cc_cluster(lines, 3000, tmp_path / "build")
    (tmp_path / "data").mkdir()
    os.rename(tmp_path / "build" / "cdx-00000.gz", tmp_path / "data" / "zipnum-sample.cdx.gz")
    idx = (tmp_path / "build" / "cluster.idx").read_bytes().replace(b"\tcdx-00000.gz\t", b"\tzipnum\t")
    (tmp_path / "zipnum-sample.idx").write_bytes(idx)
    (tmp_path / "zipnum-sample.loc").write_bytes(
        b"zipnum\t./missing/zipnum-sample.cdx.gz\t./data/zipnum-sample.cdx.gz\n")
    with ZipNumIndex(tmp_path / "zipnum-sample.idx") as z:
        assert list(z.range(b"org,iana)/", b"org,iana)0")) == expected(lines, b"org,iana)/", b"org,iana)0")
        assert [b.part for b in z.blocks()] == ["zipnum", "zipnum"]


# --- pywb reads what we write: tests/differential/test_cdx_vs_pywb.py (pywb in its own venv) ---------------

# --- damaged clusters -------------------------------------------------------------------

@pytest.fixture
def cluster(tmp_path):
    lines = corpus(3_000, seed=9)
    c = write_zipnum(lines, str(tmp_path / "zn") + "/", lines_per_block=500)
    return c, lines


def _rewrite_idx(c, fn):
    with open(c.idx, "rb") as f:
        rows = [r.rstrip(b"\n").split(b"\t") for r in f]
    fn(rows)
    with open(c.idx, "wb") as f:
        f.write(b"".join(b"\t".join(r) + b"\n" for r in rows))


@pytest.mark.parametrize("damage,match", [
    (lambda rows: rows[2].__setitem__(slice(2, None), []), r"cluster.idx \(block None\)|fields, needs 4"),
    (lambda rows: rows[2].__setitem__(2, b"12x"), r"cluster.idx \(block 3\).*not numbers"),
    (lambda rows: rows[2].__setitem__(4, b"three"), r"block number b'three' is not a number"),
    (lambda rows: rows[2].__setitem__(2, str(int(rows[2][2]) + 10).encode()), r"cdx-00000.gz \(block 3\)"),
    (lambda rows: rows[2].__setitem__(3, str(int(rows[2][3]) + int(rows[3][3])).encode()),
     r"\(block 3\).*bytes follow its gzip member"),
    (lambda rows: rows[2].__setitem__(3, str(int(rows[2][3]) - 9).encode()), r"\(block 3\).*ends inside"),
    (lambda rows: rows[2].__setitem__(slice(2, 4), rows[3][2:4]), r"\(block 3\).*not with its summary key"),
    (lambda rows: rows[2].__setitem__(1, b"cdx-00009.gz"), r"cluster.loc \(block 3\).*not in the .loc"),
    (lambda rows: rows[5].__setitem__(3, b"99999999"), r"\(block 6\).*runs past the end"),
])
def test_damaged_summary(cluster, damage, match):
    c, lines = cluster
    _rewrite_idx(c, damage)
    with ZipNumIndex(c.idx) as z, pytest.raises(IndexFormatError, match=match):
        list(z)


def test_damaged_part_and_loc(cluster, tmp_path):
    c, lines = cluster
    part = Path(c.parts[0])
    data = bytearray(part.read_bytes())
    with ZipNumIndex(c.idx) as z:
        blk = list(z.blocks())[1]
    data[blk.offset + blk.length // 2] ^= 0x55
    part.write_bytes(bytes(data))
    with ZipNumIndex(c.idx) as z, pytest.raises(IndexFormatError, match=r"cdx-00000.gz \(block 2\)"):
        list(z)
    part.write_bytes(bytes(data[:blk.offset + 10]))
    with ZipNumIndex(c.idx) as z, pytest.raises(IndexFormatError, match=r"\(block 2\).*runs past the end"):
        list(z)
    part.unlink()
    with ZipNumIndex(c.idx) as z, pytest.raises(IndexFormatError, match=r"\(block 1\).*part file .* missing"):
        list(z)
    Path(c.loc).write_bytes(b"cdx-00000.gz\n")
    with pytest.raises(IndexFormatError, match=r"cluster.loc.*line 1 is not"):
        ZipNumIndex(c.idx)
    Path(c.loc).write_bytes(b"cdx-00000.gz\thttps://example.com/cdx-00000.gz\n")
    with ZipNumIndex(c.idx) as z, pytest.raises(IndexFormatError, match="remote part locations"):
        list(z)


def test_verify_finds_unsorted_summary(cluster):
    c, _ = cluster
    def move(rows):  # a 4-column summary (pywb reads those too) with a block out of place
        rows.insert(1, rows.pop(3))
        for r in rows:
            del r[4]
    _rewrite_idx(c, move)
    with ZipNumIndex(c.idx) as z, pytest.raises(IndexFormatError, match="sorts before the key above"):
        z.verify()


def test_writer_rejects_unsorted_and_publishes_nothing(tmp_path):
    with pytest.raises(UnsortedInputError) as ei:
        write_zipnum([b"a 1", b"c 1", b"b 1"], str(tmp_path / "zn") + "/", lines_per_block=1)
    assert ei.value.lineno == 3
    assert os.listdir(tmp_path / "zn") == []
    with pytest.raises(IndexFormatError, match="holds a tab"):
        write_zipnum([b"a\tb 1"], str(tmp_path / "zn") + "/")
    assert os.listdir(tmp_path / "zn") == []


def test_writer_names_the_unsorted_line_of_a_file(tmp_path):
    lines = corpus(20_000, seed=11)           # about 5 MB: the bad line is in the second read
    bad = 16_000
    body = [b" CDX N b a m s k r M S V g", b""] + lines[:bad] + [lines[bad + 1], lines[bad]] + lines[bad + 2:]
    src = tmp_path / "in.cdxj"
    src.write_bytes(b"\n".join(body) + b"\n")
    with pytest.raises(UnsortedInputError) as ei:
        write_zipnum(src, str(tmp_path / "zn") + "/")
    assert (ei.value.lineno, ei.value.line) == (bad + 4, lines[bad])
    assert os.listdir(tmp_path / "zn") == []
