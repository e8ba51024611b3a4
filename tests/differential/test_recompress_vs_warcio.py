"""`warchive recompress` of ARC files against `warcio recompress` 1.8.1: the same WARC records.

Both outputs are read with warcio. Record by record: the same WARC-Type,
and every WARC header byte for byte (the head as stored, fields in the same
order) once record ids are set aside — warcio's and ours are random
urn:uuid ids —, but for the fields an ARC case of tests/arcgen.py names in
``differs``, with why: a payload digest over the de-chunked body (warcio
digests the chunked one), and, where warcio writes an HTTP head again from
its parsed fields, our block keeps the bytes as stored (so Content-Length
and WARC-Block-Digest follow them). The HTTP heads as warcio parses them,
and every payload byte, are the same. Our output has one gzip member per
record, and `warchive check --strict` and `warcio check` pass it (warcio
failing only the de-chunked payload digests of webrecorder/warcio#74).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import re
import subprocess
import sys
import zlib

import pytest

import arcgen
from warcgen import split_members

CASES = arcgen.cases()


@pytest.fixture(scope="module")
def arcs(tmp_path_factory):
    return arcgen.generate(tmp_path_factory.mktemp("arcgen"))


def run(*argv) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *map(str, argv)], capture_output=True, text=True, errors="replace")


def records(path) -> list:
    """[(raw WARC head with the record id blanked, parsed HTTP head or None, payload bytes)] by warcio."""
    from warcio.archiveiterator import ArchiveIterator
    heads = [zlib.decompress(m, zlib.MAX_WBITS + 16).split(b"\r\n\r\n", 1)[0]
             for m in split_members(open(path, "rb").read())]
    out = []
    with open(path, "rb") as f:
        for head, rec in zip(heads, ArchiveIterator(f)):
            rid = rec.rec_headers.get_header("WARC-Record-ID")
            assert re.fullmatch(r"<urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}>", rid)
            http = rec.http_headers
            out.append((head.replace(rid.encode(), b"<ID>"), (http.protocol, http.statusline, http.headers)
                        if http else None, rec.raw_stream.read()))
    assert len(out) == len(heads)
    return out


def _fields(head: bytes) -> dict:
    return dict(line.split(": ", 1) for line in head.decode("utf-8").split("\r\n")[1:])


def _sha1(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def _dechunk(body: bytes) -> bytes:
    from warcio.bufferedreaders import ChunkedDataReader
    return ChunkedDataReader(io.BytesIO(body)).read()


def _member_starts(path) -> list:
    starts, pos = [], 0
    for m in split_members(open(path, "rb").read()):
        starts.append(pos)
        pos += len(m)
    return starts


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_same_records_as_warcio(case, arcs, tmp_path):
    from warcio.archiveiterator import ArchiveIterator
    src = arcs[case.name].path
    theirs, ours = tmp_path / "warcio.warc.gz", tmp_path / "warchive.warc.gz"
    r = run("warcio.cli", "recompress", src, theirs)
    assert r.returncode == 0 and ("No Errors Found!" in r.stdout or "Fixed!" in r.stdout), r.stdout + r.stderr
    r = run("warchive", "recompress", src, ours)
    assert r.returncode == 0, r.stderr
    a, b = records(theirs), records(ours)
    assert len(a) == len(b) == int(r.stdout.split()[0])
    dechunked = []          # our payload digests that warcio's checker will fail (webrecorder/warcio#74)
    for (head_a, http_a, payload_a), (head_b, http_b, payload_b) in zip(a, b):
        fa, fb = _fields(head_a), _fields(head_b)
        assert list(fa) == list(fb)                            # the same fields in the same order
        differ = {k for k in fa if fa[k] != fb[k]}
        assert differ <= set(case.differs), (differ, fa, fb)
        if not differ:
            assert head_a == head_b                            # byte for byte
        assert payload_a == payload_b
        if "HTTP head" not in case.differs:
            assert http_a == http_b
        elif http_a:
            assert http_a[:2] == http_b[:2]                    # protocol and status line
        if "WARC-Payload-Digest" in differ:                    # warcio's: the chunked body; ours: de-chunked
            assert fa["WARC-Payload-Digest"] == _sha1(payload_b)
            assert fb["WARC-Payload-Digest"] == _sha1(_dechunk(payload_b))
            dechunked.append(fb["WARC-Payload-Digest"])
    with open(ours, "rb") as f:                                # one gzip member per record
        it = ArchiveIterator(f)
        assert [it.get_record_offset() for _ in it] == _member_starts(ours)
    assert run("warchive", "check", "--strict", ours).returncode == 0
    check = run("warcio.cli", "check", ours)
    failures = [x.strip() for x in check.stdout.splitlines() if "failed" in x]
    assert failures == ["payload digest failed " + d for d in dechunked], check.stdout


def test_blocks_are_the_arc_content_as_stored(arcs, tmp_path):
    """Where warcio writes an HTTP head again, our block is the ARC record's content byte for byte."""
    for case in CASES:
        if "HTTP head" not in case.differs:
            continue
        out = tmp_path / (case.name + ".warc.gz")
        assert run("warchive", "recompress", arcs[case.name].path, out).returncode == 0
        head, rest = zlib.decompress(split_members(out.read_bytes())[1], zlib.MAX_WBITS + 16).split(b"\r\n\r\n", 1)
        block = rest[:-4]
        assert case.data.count(b"\n" + block + b"\n") == 1
        assert _fields(head)["WARC-Block-Digest"] == _sha1(block)
        assert _fields(head)["Content-Length"] == str(len(block))


def test_gzipped_arcs_give_the_plain_ones_records(arcs, tmp_path):
    """The ARC file gzipped whole (read inflated) or a member per record gives the plain file's records."""
    strip = re.compile(rb"<urn:uuid:[0-9a-f-]+>")
    out = {}
    for name in ("arc_v1.arc", "arc_whole.arc.gz", "arc_v1.arc.gz"):
        assert run("warchive", "recompress", arcs[name].path, tmp_path / (name + ".warc.gz")).returncode == 0
        out[name] = strip.sub(b"<ID>", gzip.decompress((tmp_path / (name + ".warc.gz")).read_bytes()))
    assert out["arc_whole.arc.gz"] == out["arc_v1.arc"]           # the same ARC bytes, gzipped whole
    assert out["arc_v1.arc.gz"] == out["arc_v1.arc"].replace(b"WARC-Filename: arc_v1.arc", b"WARC-Filename: arc_v1.arc.gz")
