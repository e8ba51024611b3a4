"""Zstandard WARC files (.warc.zst, IIPC "Zstandard Compression for WARC Files 1.0").

The .warc.zst files are made here from the records of a Wget .warc.gz: one
frame per record, with no dictionary, with a raw dictionary frame and with a
zstd-compressed dictionary frame, plus a skippable extension frame between
records. Expected values come from how the file was built (frame offsets and
sizes) and from warcio / cdxj-indexer reading the same records as .warc.gz.
"""

from __future__ import annotations

import gzip
import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import zstandard
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

import warchive.warc as ww
from warchive.errors import ArchiveError

SRC = Path(__file__).resolve().parents[1] / "data" / "wget" / "docs-python-3.11-recrawl.warc.gz"


def _records_plain(path: Path, limit: int = 200) -> list:
    """Decompressed bytes of each gzip member (one record each) of a Wget file."""
    data = path.read_bytes()
    out, pos = [], 0
    while pos < len(data) and len(out) < limit:
        d = __import__("zlib").decompressobj(31)
        out.append(d.decompress(data[pos:]))
        pos = len(data) - len(d.unused_data)
    return out


def _write_zst(path: Path, records: list, mode: str) -> list:
    """Write records as frames; return [(offset, size)] of each record's frame."""
    zdict = None
    head = b""
    if mode in ("dict", "zdict"):
        zdict = zstandard.train_dictionary(16 * 1024, records * 4 if len(records) < 50 else records)
        raw = zdict.as_bytes()
        if mode == "zdict":
            raw = zstandard.ZstdCompressor().compress(raw)
        head = struct.pack("<II", 0x184D2A5D, len(raw)) + raw
    cctx = zstandard.ZstdCompressor(level=3, dict_data=zdict) if zdict else zstandard.ZstdCompressor(level=3)
    frames, spans, pos = [head], [], len(head)
    for i, rec in enumerate(records):
        if i == 3:  # an extension (skippable) frame between records is ignored
            ext = struct.pack("<II", 0x184D2A51, 5) + b"hello"
            frames.append(ext)
            pos += len(ext)
        f = cctx.compress(rec)
        frames.append(f)
        spans.append((pos, len(f)))
        pos += len(f)
    path.write_bytes(b"".join(frames))
    return spans


@pytest.fixture(scope="module")
def records():
    return _records_plain(SRC, 120)


@pytest.mark.parametrize("mode", ["plain", "dict", "zdict"])
def test_zst_records_and_offsets(tmp_path, records, mode):
    path = tmp_path / f"recrawl-{mode}.warc.zst"
    spans = _write_zst(path, records, mode)
    gz = tmp_path / "same.warc.gz"
    gz.write_bytes(b"".join(gzip.compress(r) for r in records))
    with open(gz, "rb") as fh:
        expected = [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI"), r.content_stream().read())
                    for r in WarcioIterator(fh)]
    got, where = [], []
    with ww.open(path) as it:
        for rec in it:
            got.append((rec.type, rec.target_uri, rec.payload.read()))
            where.append((rec.offset, rec.length))
    assert where == spans
    assert [(t, u) for t, u, _ in got] == [(t, u) for t, u, _ in expected]
    assert [p for _, _, p in got] == [p for _, _, p in expected]


def test_zst_index_matches_cdxj_indexer_fields(tmp_path, records):
    """Same lines as cdxj-indexer gives for the .warc.gz, except offset/length (frames) and filename."""
    path = tmp_path / "r.warc.zst"
    spans = _write_zst(path, records, "dict")
    gz = tmp_path / "r.warc.gz"
    gz.write_bytes(b"".join(gzip.compress(r) for r in records))
    peer = subprocess.run([sys.executable, "-m", "cdxj_indexer.main", str(gz)], capture_output=True, check=True).stdout
    ours = subprocess.run([sys.executable, "-m", "warchive", "index", str(path)], capture_output=True, check=True).stdout
    gz_offsets = []
    pos = 0
    for r in records:
        gz_offsets.append(pos)
        pos += len(gzip.compress(r))
    by_gz_offset = dict(zip(gz_offsets, spans))
    exp_lines = []
    for line in peer.splitlines():
        key, ts, js = line.split(b" ", 2)
        f = json.loads(js)
        off, size = by_gz_offset[int(f["offset"])]
        f["offset"], f["length"], f["filename"] = str(off), str(size), "r.warc.zst"
        exp_lines.append(key + b" " + ts + b" " + json.dumps(f).encode())
    assert ours.splitlines() == exp_lines


def test_zst_truncated_frame(tmp_path, records):
    path = tmp_path / "cut.warc.zst"
    spans = _write_zst(path, records[:6], "plain")
    data = path.read_bytes()
    off, size = spans[4]
    path.write_bytes(data[: off + size // 2])
    got, said = [], []
    with ww.open(path, on_defect=said.append) as it:   # a file cut short: a defect, as in a gzip file
        for rec in it:
            got.append(rec.offset)
    assert got == [o for o, _ in spans[:4]] and [(d.offset, d.kind) for d in said] == [(off, "truncated")]
    assert "Zstandard frame" in said[0].problem
    got = []
    with pytest.raises(ArchiveError) as e:
        with ww.open(path, strict=True) as it:
            for rec in it:
                got.append(rec.offset)
    assert got == [o for o, _ in spans[:4]]
    assert f"at byte {off}" in str(e.value) and str(path) in str(e.value)
