"""The WARC writer: every record type, both versions, three compressions, read back by warcio.

Expected values come from warcio (its reader, its de-chunking content
stream), zlib/zstandard (the stored bytes), hashlib and the WARC spec, never
from our own output.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import io
import os
import re
import struct
import subprocess
import sys
import zlib

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

from warchive.errors import ArchiveError
from warchive.warc.check import check_file
from warchive.warc.recover import recover
from warchive.warc.recompress import recompress
from warchive.warc.writer import HybridPolicy, RecordBuilder, WarcWriter

REQ = b"GET /a HTTP/1.1\r\nHost: example.com\r\nUser-Agent: t\r\n\r\n"
RESP = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 11\r\n\r\nhello world"
CHUNKED = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
           b"5\r\nhello\r\n6;ext=1\r\n world\r\n0\r\n\r\n")
NAME_RE = re.compile(r"^TEST-(\d{17})-(\d{5})-([^-]+)\.warc(\.gz|\.zst)?$")


def b32sha1(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def plain_bytes(path: str) -> bytes:
    """The uncompressed file: gzip members and zstd frames inflated by zlib / zstandard."""
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        return gzip.decompress(data)
    if data[:4] in (b"\x28\xb5\x2f\xfd", b"\x5d\x2a\x4d\x18"):
        out = []
        pos = 0
        dict_data = None
        while pos < len(data):
            magic, = struct.unpack("<I", data[pos:pos + 4])
            if magic == 0x184D2A5D:
                size, = struct.unpack("<I", data[pos + 4:pos + 8])
                dict_data = zstandard.ZstdCompressionDict(
                    zstandard.ZstdDecompressor().decompress(data[pos + 8:pos + 8 + size]))
                pos += 8 + size
                continue
            d = zstandard.ZstdDecompressor(dict_data=dict_data).decompressobj()
            out.append(d.decompress(data[pos:]))
            pos = len(data) - len(d.unused_data)
        return b"".join(out)
    return data


def warcio_records(path: str):
    """(type, rec_headers list, http headers or None, raw block bytes, de-chunked payload) per record."""
    out = []
    with io.BytesIO(plain_bytes(path)) as f:
        for rec in WarcioIterator(f, no_record_parse=False):
            http = rec.http_headers.headers if rec.http_headers else None
            content = rec.content_stream().read()
            out.append((rec.rec_type, rec.rec_headers.headers, http, content))
    return out


def write_all_types(d, compression: str, version: str, **kw):
    reports = []
    with WarcWriter(d, "TEST", compression=compression, version=version, on_record=reports.append,
                    warcinfo={"operator": "Test Operator", "robots": "obey", "dedup": "revisit"}, **kw) as w:
        req, resp = w.write_exchange("http://example.com/a", REQ, RESP, ip="192.0.2.1")
        creq, cresp = w.write_exchange("http://example.com/c", REQ, CHUNKED)
        w.write_revisit("http://example.com/b", RESP, payload_digest=resp.payload_digest, refers_to=resp.record_id,
                        refers_to_uri=resp.target_uri, refers_to_date=resp.date)
        w.write_revisit("http://example.com/a", b"HTTP/1.1 304 Not Modified\r\nETag: x\r\n\r\n", payload_digest=None,
                        profile="server-not-modified", refers_to=resp.record_id, refers_to_uri=resp.target_uri,
                        refers_to_date=resp.date)
        w.write_metadata("http://example.com/a", b"outlink: http://example.com/b\r\n", refers_to=resp.record_id)
        w.write_resource("http://example.com/r.txt", b"resource body", "text/plain")
        w.write_conversion("http://example.com/r.txt", b"converted", "text/plain", refers_to=resp.record_id)
        w.write_response("dns:example.com", b"20260101000000\nexample.com. 300 IN A 192.0.2.1\n",
                         content_type="text/dns")
    return reports, w.closed_files


@pytest.mark.parametrize("compression", ["gzip", "none", "zstd", "gzip-threads"])
@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_every_record_type_round_trips(tmp_path, monkeypatch, compression, version):
    kw = {}
    if compression == "gzip-threads":   # blocks deflated by the worker, heads in stored blocks
        monkeypatch.setattr(WarcWriter, "THREAD_MIN", 0)
        compression, kw = "gzip", {"threads": 1}
    reports, files = write_all_types(tmp_path, compression, version, **kw)
    assert len(files) == 1
    path = files[0]
    m = NAME_RE.match(os.path.basename(path))
    assert m, path
    assert m.group(4) == {"gzip": ".gz", "zstd": ".zst", "none": None}[compression]
    assert not list(tmp_path.glob("*.open"))
    recs = warcio_records(path)
    assert [r[0] for r in recs] == ["warcinfo", "response", "request", "response", "request", "revisit", "revisit",
                                    "metadata", "resource", "conversion", "response"]
    assert [r.type for r in reports] == [r[0] for r in recs]
    date_re = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d" + (r"\.\d{6}Z$" if version == "1.1" else "Z$")
    ids = set()
    for rtype, rh, http, content in recs:
        h = dict(rh)
        assert re.match(date_re, h["WARC-Date"]), h["WARC-Date"]
        assert re.match(r"^<urn:uuid:[0-9a-f-]{36}>$", h["WARC-Record-ID"])
        ids.add(h["WARC-Record-ID"])
        assert int(h["Content-Length"]) >= 0
        assert h["WARC-Block-Digest"].startswith("sha1:")
    assert len(ids) == len(recs)
    info = recs[0]
    assert dict(info[1])["Content-Type"] == "application/warc-fields"
    assert dict(info[1])["WARC-Filename"] == os.path.basename(path)
    fields = dict(line.split(": ", 1) for line in info[3].decode().split("\r\n") if line)
    assert fields["software"] == "warchive/0.1.0" and fields["operator"] == "Test Operator"
    assert fields["robots"] == "obey" and fields["digest-algorithm"] == "sha1" and fields["dedup"] == "revisit"
    # request and response point at each other
    resp_h, req_h = dict(recs[1][1]), dict(recs[2][1])
    assert resp_h["Content-Type"] == "application/http; msgtype=response"
    assert req_h["Content-Type"] == "application/http; msgtype=request"
    assert req_h["WARC-Concurrent-To"] == resp_h["WARC-Record-ID"]
    assert resp_h["WARC-Concurrent-To"] == req_h["WARC-Record-ID"]
    assert resp_h["WARC-Date"] == req_h["WARC-Date"] and resp_h["WARC-IP-Address"] == "192.0.2.1"
    assert resp_h["WARC-Payload-Digest"] == b32sha1(b"hello world")
    # chunked: the block keeps the chunks, the payload digest is over the de-chunked body (warcio de-chunks it)
    assert recs[3][3] == b"hello world"
    assert dict(recs[3][1])["WARC-Payload-Digest"] == b32sha1(recs[3][3])
    # revisits: head only, the original's digest and links, the profile of the version
    rv = dict(recs[5][1])
    assert rv["WARC-Payload-Digest"] == resp_h["WARC-Payload-Digest"]
    assert rv["WARC-Refers-To"] == resp_h["WARC-Record-ID"]
    assert rv["WARC-Refers-To-Target-URI"] == "http://example.com/a"
    assert rv["WARC-Refers-To-Date"] == resp_h["WARC-Date"]
    assert rv["WARC-Profile"] == f"http://netpreserve.org/warc/{version}/revisit/identical-payload-digest"
    assert int(rv["Content-Length"]) == RESP.index(b"\r\n\r\n") + 4 and recs[5][3] == b""
    assert dict(recs[6][1])["WARC-Profile"].endswith(f"/warc/{version}/revisit/server-not-modified")
    assert dict(recs[7][1])["Content-Type"] == "application/warc-fields"
    assert dict(recs[7][1])["WARC-Refers-To"] == resp_h["WARC-Record-ID"]
    assert recs[8][3] == b"resource body" and dict(recs[8][1])["Content-Type"] == "text/plain"
    assert dict(recs[9][1])["WARC-Type"] == "conversion"
    assert dict(recs[10][1])["Content-Type"] == "text/dns"
    # block digests: over the block exactly as stored (warcio keeps it in raw_stream)
    for rtype, rh, _http, _c in recs:
        assert dict(rh)["WARC-Block-Digest"].startswith("sha1:")
    assert check_file(path).ok


def test_write_exchange_returns_in_argument_order(tmp_path):
    """``write_exchange(uri, request, response)`` returns ``(request, response)``."""
    with WarcWriter(str(tmp_path / "x.warc.gz")) as w:
        req, resp = w.write_exchange("http://example.com/a", REQ, RESP)
    assert (req.type, resp.type) == ("request", "response")
    assert req.headers.get("WARC-Concurrent-To") == resp.record_id


@pytest.mark.parametrize("compression", ["gzip", "none", "zstd"])
def test_reported_offsets_are_warcios(tmp_path, compression):
    reports, files = write_all_types(tmp_path, compression, "1.1")
    path = files[0]
    if compression == "zstd":
        data = open(path, "rb").read()
        for r in reports:  # each report is exactly one whole frame holding one record
            frame = data[r.offset:r.offset + r.length]
            d = zstandard.ZstdDecompressor().decompressobj()
            rec = d.decompress(frame)
            assert d.eof and not d.unused_data and rec.startswith(b"WARC/1.1\r\n") and rec.endswith(b"\r\n\r\n")
        assert reports[-1].offset + reports[-1].length == len(data)
        return
    with open(path, "rb") as f:
        it = WarcioIterator(f)
        theirs = []
        for rec in it:
            rec.content_stream().read()
            theirs.append((it.get_record_offset(), rec.rec_headers.get_header("WARC-Record-ID")))
            it.read_to_end()
            theirs[-1] = theirs[-1] + (it.get_record_length(),)
    assert [(r.offset, r.record_id, r.length) for r in reports] == theirs


@pytest.mark.parametrize("threads", [0, 1])
def test_gzip_members_carry_sl(tmp_path, monkeypatch, threads):
    monkeypatch.setattr(WarcWriter, "THREAD_MIN", 0)   # every response/request through the worker
    reports, files = write_all_types(tmp_path, "gzip", "1.1", threads=threads)
    data = open(files[0], "rb").read()
    for r in reports:
        member = data[r.offset:r.offset + r.length]
        assert member[:4] == b"\x1f\x8b\x08\x04"
        xlen, = struct.unpack("<H", member[10:12])
        extra = member[12:12 + xlen]
        assert extra[:4] == b"sl\x08\x00"
        clen, ulen = struct.unpack("<II", extra[4:12])
        d = zlib.decompressobj(31)
        inflated = d.decompress(member)
        assert d.eof and d.unused_data == b""
        assert clen == len(member) == r.length and ulen == len(inflated) == r.uncompressed_length
        if threads and r.type in ("response", "request"):   # the head went in one stored block
            head_len = inflated.index(b"\r\n\r\n") + 4
            assert member[24] == 0 and struct.unpack("<HH", member[25:29]) == (head_len, head_len ^ 0xFFFF)


@pytest.mark.parametrize("digest", ["sha256", "blake3"])
def test_other_digests(tmp_path, digest):
    import blake3

    reports, files = write_all_types(tmp_path, "gzip", "1.1", digest=digest)
    h = (lambda b: hashlib.sha256(b).digest()) if digest == "sha256" else (lambda b: blake3.blake3(b).digest())
    resp = reports[1]
    assert resp.payload_digest == digest + ":" + base64.b32encode(h(b"hello world")).decode()
    assert reports[3].payload_digest == digest + ":" + base64.b32encode(h(b"hello world")).decode()
    assert check_file(files[0]).ok


def test_dechunk_drops_framing_extensions_and_trailers():
    from warchive.warc.digest import dechunk

    body = b"5\r\nhello\r\n6;name=v\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n"
    assert b"".join(dechunk(body)) == b"hello world"
    assert b"".join(dechunk(b"3\nabc\n0\n\n")) == b"abc"                # bare LF framing
    assert dechunk(b"5\r\nhel") is None                                # cut short: not well chunked
    assert dechunk(b"zz\r\nhello\r\n0\r\n\r\n") is None
    assert dechunk(b"5\r\nhelloXX0\r\n\r\n") is None


def test_versions_and_bad_arguments(tmp_path):
    with pytest.raises(ArchiveError):
        RecordBuilder("0.18")
    with pytest.raises(ArchiveError):
        RecordBuilder(digest="md5")
    b = RecordBuilder("WARC/1.0")
    with pytest.raises(ArchiveError):
        b.response("http://x/", b"HTTP/1.1 200 OK\r\n\r\n", extra=[("X-Bad", "a\r\nb")])
    with pytest.raises(ArchiveError):
        b.revisit("http://x/", b"HTTP/1.1 200 OK\r\n\r\n", payload_digest=None)
    with pytest.raises(ArchiveError):
        b.response("ftp://x/", b"data")  # not http: needs a content type
    with WarcWriter(tmp_path, "P", version="1.1") as w:
        with pytest.raises(ArchiveError):
            w.write(b.resource("http://x/", b"x", "text/plain"))  # a 1.0 record in a 1.1 file


def test_open_then_renamed_and_rolled_over(tmp_path):
    body = os.urandom(30_000)
    msg = b"HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n" + body
    seen = []
    w = WarcWriter(tmp_path, "TEST", max_size=100_000, on_record=seen.append)
    w.write_response("http://example.com/1", msg)
    assert [os.path.basename(p) for p in w.current_files] == [seen[0].filename + ".open"]
    assert os.listdir(tmp_path) == [seen[0].filename + ".open"]
    for i in range(2, 10):
        w.write_response(f"http://example.com/{i}", msg)
    files = w.close()
    assert len(files) >= 3 and sorted(os.listdir(tmp_path)) == sorted(os.path.basename(f) for f in files)
    serials = []
    for f in files:
        m = NAME_RE.match(os.path.basename(f))
        assert m
        serials.append(int(m.group(2)))
        size = os.path.getsize(f)
        recs = warcio_records(f)
        assert recs[0][0] == "warcinfo"
        assert size <= 100_000 or len(recs) == 2   # one record alone may pass the limit
    assert serials == list(range(len(files)))
    assert [r.filename for r in seen if r.type == "response"] == \
        [os.path.basename(f) for f in files for r in warcio_records(f) if r[0] == "response"]


def test_hybrid_media_go_to_a_plain_file(tmp_path):
    png = os.urandom(100_000)
    img = b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n" + png
    svg = b"HTTP/1.1 200 OK\r\nContent-Type: image/svg+xml\r\n\r\n" + b"<svg/>" * 20_000
    small = b"HTTP/1.1 200 OK\r\nContent-Type: image/png\r\n\r\n" + png[:100]
    with WarcWriter(tmp_path, "TEST", hybrid=HybridPolicy(min_size=10_000)) as w:
        a = w.write_response("http://example.com/a.png", img)
        b = w.write_response("http://example.com/b.svg", svg)
        c = w.write_response("http://example.com/c.png", small)
        d = w.write_resource("http://example.com/d.jpg", png, "image/jpeg")
    assert a.filename.endswith(".warc") and d.filename == a.filename
    assert b.filename.endswith(".warc.gz") and c.filename == b.filename
    media = [f for f in w.closed_files if f.endswith(".warc")][0]
    data = open(media, "rb").read()
    assert data[a.offset:].startswith(b"WARC/1.1\r\n") and png in data  # stored as it is: ranges are cheap
    assert [r[0] for r in warcio_records(media)] == ["warcinfo", "response", "resource"]


chunk_sizes = st.lists(st.integers(min_value=1, max_value=300), min_size=0, max_size=8)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.binary(max_size=2000), sizes=chunk_sizes, chunked=st.booleans(),
       names=st.lists(st.from_regex(r"X-[A-Za-z0-9]{1,12}", fullmatch=True), max_size=4, unique_by=str.lower),
       values=st.lists(st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF, blacklist_characters="\x7f"),
                               max_size=30), min_size=4, max_size=4),
       compression=st.sampled_from(["gzip", "none", "zstd", "gzip-threads"]))
def test_random_bodies_and_headers(tmp_path_factory, body, sizes, chunked, names, values, compression):
    d = tmp_path_factory.mktemp("h")
    threads = 0
    if compression == "gzip-threads":
        compression, threads = "gzip", 1
    head = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
    if chunked:
        pieces, pos = [], 0
        for s in sizes:
            if pos >= len(body):
                break
            part = body[pos:pos + s]
            pieces.append(b"%x\r\n" % len(part) + part + b"\r\n")
            pos += len(part)
        if pos < len(body):
            pieces.append(b"%x\r\n" % (len(body) - pos) + body[pos:] + b"\r\n")
        msg = head + b"Transfer-Encoding: chunked\r\n\r\n" + b"".join(pieces) + b"0\r\n\r\n"
    else:
        msg = head + b"Content-Length: %d\r\n\r\n" % len(body) + body
    extra = [(n, v.strip() or "v") for n, v in zip(names, values)]
    with WarcWriter(d, "H", compression=compression, threads=threads) as w:
        w.THREAD_MIN = 0
        r = w.write_response("http://example.com/x", msg, extra=extra)
    recs = warcio_records(w.closed_files[0])
    rtype, rh, http, content = recs[1]
    assert content == body                                   # warcio's de-chunking
    assert r.payload_digest == b32sha1(body)
    got = dict(rh)
    for n, v in extra:
        assert got[n] == v
    raw = plain_bytes(w.closed_files[0])
    assert msg in raw                                        # the block is the message as received
    assert got["WARC-Block-Digest"] == b32sha1(msg)


# --------------------------------------------------------------------------- index lines from reports

@pytest.mark.parametrize("compression", ["gzip", "none", "zstd"])
def test_report_lines_equal_warchive_index(tmp_path, compression):
    from warchive.index.cdx import written_record_line

    reports, files = write_all_types(tmp_path, compression, "1.1")
    lines = b"".join(filter(None, (written_record_line(r) for r in reports)))
    out = subprocess.run([sys.executable, "-m", "warchive", "index", files[0]], capture_output=True, check=True)
    assert lines == out.stdout
    lines11 = b"".join(filter(None, (written_record_line(r, cdx11=True, records="all") for r in reports)))
    out11 = subprocess.run([sys.executable, "-m", "warchive", "index", "-11", "--records", "all", files[0]],
                           capture_output=True, check=True)
    assert b" CDX N b a m s k r M S V g\n" + lines11 == out11.stdout


# --------------------------------------------------------------------------- check, recover, recompress

def test_check_finds_damage(tmp_path):
    reports, files = write_all_types(tmp_path, "none", "1.1")
    good = open(files[0], "rb").read()
    body_at = good.index(b"hello world")
    bad = bytearray(good)
    bad[body_at] ^= 1
    p = tmp_path / "bad.warc"
    p.write_bytes(bytes(bad))
    res = check_file(str(p))
    assert not res.ok
    rec_off = reports[1].offset
    assert {f.offset for f in res.problems} == {rec_off}
    msgs = " ".join(f.message for f in res.problems)
    assert "WARC-Block-Digest" in msgs and "WARC-Payload-Digest" in msgs
    r = subprocess.run([sys.executable, "-m", "warchive", "check", str(p)], capture_output=True, text=True)
    assert r.returncode == 1 and f"bad.warc at byte {rec_off}" in r.stderr
    r = subprocess.run([sys.executable, "-m", "warchive", "check", files[0]], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_check_finds_bad_crc_and_truncation(tmp_path):
    reports, files = write_all_types(tmp_path, "gzip", "1.1")
    data = open(files[0], "rb").read()
    r = reports[3]
    bad = bytearray(data)
    bad[r.offset + r.length - 6] ^= 0xFF       # the CRC-32 of the fourth member
    (tmp_path / "crc.warc.gz").write_bytes(bytes(bad))
    res = check_file(str(tmp_path / "crc.warc.gz"))
    assert not res.ok and res.problems[0].offset == r.offset
    (tmp_path / "cut.warc.gz").write_bytes(data[: r.offset + r.length // 2])
    res = check_file(str(tmp_path / "cut.warc.gz"))
    assert not res.ok and res.problems[0].offset == r.offset and res.records == 3


def test_check_names_chunked_payload_digests_as_a_producer_defect(tmp_path):
    from warcio.warcwriter import WARCWriter
    from warcio.statusandheaders import StatusAndHeaders

    p = tmp_path / "warcio.warc.gz"
    with open(p, "wb") as f:
        ww = WARCWriter(f, gzip=True)
        head, body = CHUNKED.split(b"\r\n\r\n", 1)
        lines = head.decode().split("\r\n")
        http = StatusAndHeaders(lines[0].split(" ", 1)[1], [tuple(x.split(": ", 1)) for x in lines[1:]],
                                protocol="HTTP/1.1")
        ww.write_record(ww.create_warc_record("http://example.com/", "response", payload=io.BytesIO(body),
                                              http_headers=http, length=len(body)))
    res = check_file(str(p))
    assert res.ok and not res.warnings and [f.defect for f in res.defects] == ["chunked-payload-digest"]
    strict = check_file(str(p), strict=True)
    assert not strict.ok and [f.defect for f in strict.problems] == ["chunked-payload-digest"]


@pytest.mark.parametrize("compression", ["gzip", "none", "zstd"])
def test_recover_cuts_the_torn_record(tmp_path, compression):
    reports = []
    w = WarcWriter(tmp_path, "TEST", compression=compression, on_record=reports.append)
    for i in range(5):
        w.write_response(f"http://example.com/{i}", RESP)
    open_path = w.current_files[0]
    data = open(open_path, "rb").read()
    last = reports[-1]
    os.close(w._main.file.fd)  # the process "dies": no close, no rename
    with open(open_path, "wb") as f:
        f.write(data[: last.offset + last.length // 2])
    dry = recover(open_path, dry_run=True)
    assert (dry.records, dry.size) == (5, last.offset) and os.path.exists(open_path)
    r = subprocess.run([sys.executable, "-m", "warchive", "recover", open_path], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    final = open_path[: -len(".open")]
    assert not os.path.exists(open_path) and os.path.getsize(final) == last.offset
    assert [x[0] for x in warcio_records(final)] == ["warcinfo"] + ["response"] * 4
    assert check_file(final).ok


def _warcio_plain(tmp_path, n=4) -> bytes:
    from warcio.warcwriter import WARCWriter
    from warcio.statusandheaders import StatusAndHeaders

    buf = io.BytesIO()
    ww = WARCWriter(buf, gzip=False)
    for i in range(n):
        http = StatusAndHeaders("200 OK", [("Content-Type", "text/plain")], protocol="HTTP/1.0")
        body = (b"body %d " % i) * 50
        ww.write_record(ww.create_warc_record(f"http://example.com/{i}", "response", payload=io.BytesIO(body),
                                              http_headers=http, length=len(body)))
    return buf.getvalue()


@pytest.mark.parametrize("shape", ["whole-file-gzip", "plain", "members-split"])
def test_recompress(tmp_path, shape):
    plain = _warcio_plain(tmp_path)
    src = tmp_path / "in.warc.gz"
    if shape == "whole-file-gzip":
        src.write_bytes(gzip.compress(plain))
    elif shape == "plain":
        src.write_bytes(plain)
    else:  # one record's bytes cut across two gzip members
        cut = len(plain) // 3
        src.write_bytes(gzip.compress(plain[:cut]) + gzip.compress(plain[cut:]))
    out = tmp_path / "out.warc.gz"
    r = subprocess.run([sys.executable, "-m", "warchive", "recompress", str(src), str(out)], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert gzip.decompress(out.read_bytes()) == plain       # every byte kept
    with open(out, "rb") as f:
        it = WarcioIterator(f)
        offsets = []
        for rec in it:
            offsets.append(it.get_record_offset())
            it.read_to_end()
    data = out.read_bytes()
    members = [m.start() for m in re.finditer(b"\x1f\x8b\x08\x04", data)]
    assert offsets == members and len(offsets) == 4         # one member per record
    assert check_file(str(out)).ok
    assert not [p for p in os.listdir(tmp_path) if ".tmp" in p]


def test_partial_writes_are_completed(tmp_path, monkeypatch):
    real = os.writev
    calls = []

    def short_writev(fd, bufs):   # the kernel takes at most 100 bytes per call
        calls.append(1)
        flat = b"".join(bytes(b) for b in bufs)
        return real(fd, [flat[:100]])

    monkeypatch.setattr(os, "writev", short_writev)
    reports, files = write_all_types(tmp_path, "gzip", "1.1")
    monkeypatch.setattr(os, "writev", real)
    assert len(calls) > len(reports)
    assert [r[0] for r in warcio_records(files[0])][:3] == ["warcinfo", "response", "request"]
    assert check_file(files[0]).ok


def test_a_failed_write_is_cut_off(tmp_path, monkeypatch):
    real = os.writev
    w = WarcWriter(tmp_path, "TEST", compression="none")
    ok = w.write_response("http://example.com/1", RESP)

    def failing(fd, bufs):   # half the record goes out, then the disk is full
        flat = b"".join(bytes(b) for b in bufs)
        real(fd, [flat[: len(flat) // 2]])
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "writev", failing)
    with pytest.raises(ArchiveError) as e:
        w.write_response("http://example.com/2", RESP)
    assert "No space left" in str(e.value) and ok.filename in str(e.value)
    monkeypatch.setattr(os, "writev", real)
    w.write_response("http://example.com/3", RESP)
    files = w.close()
    recs = warcio_records(files[0])
    assert [dict(r[1]).get("WARC-Target-URI") for r in recs] == [None, "http://example.com/1", "http://example.com/3"]
    assert check_file(files[0]).ok


def test_zstd_with_a_dictionary(tmp_path):
    samples = [b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nServer: test\r\n\r\n<html><body>page %d %s</body></html>"
               % (i, b"lorem ipsum " * (i % 7)) for i in range(400)]
    dictionary = zstandard.train_dictionary(4096, samples).as_bytes()
    reports = []
    with WarcWriter(tmp_path, "TEST", compression="zstd", zstd_dict=dictionary, on_record=reports.append) as w:
        for i, msg in enumerate(samples[:50]):
            w.write_response(f"http://example.com/{i}", msg)
    path = w.closed_files[0]
    data = open(path, "rb").read()
    magic, size = struct.unpack("<II", data[:8])
    assert magic == 0x184D2A5D and reports[0].offset == 8 + size            # the dictionary comes first
    assert zstandard.ZstdDecompressor().decompress(data[8:8 + size]) == dictionary
    d = zstandard.ZstdDecompressor(dict_data=zstandard.ZstdCompressionDict(dictionary))
    for r, msg in zip(reports[1:], samples):
        rec = d.decompressobj().decompress(data[r.offset:r.offset + r.length])
        assert rec.endswith(msg + b"\r\n\r\n")
    recs = warcio_records(path)
    assert [r[3] for r in recs[1:]] == [m.split(b"\r\n\r\n", 1)[1] for m in samples[:50]]
    assert check_file(path).ok
    with pytest.raises(ArchiveError):
        WarcWriter(tmp_path, "X", compression="gzip", zstd_dict=dictionary)


def test_writeback_is_started_as_the_file_grows(tmp_path, monkeypatch):
    import warchive.warc.warcfile as warcfile_mod

    calls = []
    real = os.posix_fadvise
    monkeypatch.setattr(warcfile_mod, "WRITEBACK_EVERY", 2000)
    monkeypatch.setattr(os, "posix_fadvise", lambda fd, off, n, advice: (calls.append((off, n)), real(fd, off, n, advice)))
    body = os.urandom(3000)
    with WarcWriter(tmp_path, "TEST", compression="none") as w:
        for i in range(5):
            w.write_response(f"http://example.com/{i}", RESP[:-11] + body)
    assert len(calls) >= 4 and all(a + n == b for (a, n), (b, _) in zip(calls, calls[1:]))   # contiguous ranges
    assert [r[0] for r in warcio_records(w.closed_files[0])] == ["warcinfo"] + ["response"] * 5
    calls.clear()
    with WarcWriter(tmp_path / "nosync", "TEST", compression="none", fsync=False) as w:
        w.write_response("http://example.com/", RESP[:-11] + body)
    assert calls == []
