"""Sanity of the test data itself: the generated valid files read as intended
by warcio, and each broken file is broken exactly the way its doc says.

If these fail, every differential test built on the corpus is meaningless,
so they check the files against how they were built (offsets of members and
records, gzip framing, header bytes), not only against warcio.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import struct
import zlib

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

import warcgen


def _read_all(path):
    """[(offset, length, type, uri)] from warcio, and its stderr."""
    err = io.StringIO()
    out = []
    with open(path, "rb") as fh, contextlib.redirect_stderr(err):
        it = ArchiveIterator(fh, arc2warc=True)
        for rec in it:
            out.append((it.get_record_offset(), it.get_record_length(), rec.rec_type,
                        rec.rec_headers.get_header("WARC-Target-URI")))
    return out, err.getvalue()


def _members(data: bytes):
    """Split a gzip file into (offset, member bytes) by inflating (independent of warcgen)."""
    pos, out = 0, []
    while pos < len(data):
        d = zlib.decompressobj(31)
        d.decompress(data[pos:])
        assert d.eof, f"member at {pos} does not end"
        end = len(data) - len(d.unused_data)
        out.append((pos, data[pos:end]))
        pos = end
    return out


# --------------------------------------------------------------------------- valid files

def _generated_valid_ids():
    return warcgen.valid_names()


@pytest.mark.parametrize("fid", _generated_valid_ids())
def test_valid_file_reads_as_built(fid, valid_archives):
    fx = valid_archives[fid]
    got, err = _read_all(fx.path)
    assert [(t, u) for _, _, t, u in got] == fx.records, "record types / target URIs as built"
    assert "WARNING" not in err, err
    data = fx.path.read_bytes()
    if fx.path.name.endswith(".gz"):
        members = _members(data)
        assert len(members) == len(fx.records), "one gzip member per record"
        # offsets and lengths from the gzip framing, not from warcio
        assert [(o, l) for o, l, _, _ in got] == [(o, len(m)) for o, m in members]
        assert fx.member_offsets == [o for o, _ in members] + [len(data)]
    else:
        starts = fx.member_offsets
        # a plain record's length excludes its trailing CRLFCRLF
        assert [(o, l) for o, l, _, _ in got] == [(a, b - a - (1 if fid.endswith(".arc") else 4))
                                                  for a, b in zip(starts, starts[1:])]
        for a, b in zip(starts, starts[1:]):
            assert data[a:b].endswith(b"\n" if fid.endswith(".arc") else b"\r\n\r\n")


@pytest.mark.parametrize("base", [n[:-len(".warc.gz")] for n in warcgen.valid_names()
                                  if n.endswith(".warc.gz") and (n[:-3] in warcgen.valid_names())])
def test_gz_and_plain_hold_the_same_records(base, valid_archives):
    gz = valid_archives[base + ".warc.gz"].path.read_bytes()
    plain = valid_archives[base + ".warc"].path.read_bytes()
    assert gzip.decompress(gz) == plain


def test_arc_gz_inflates_to_arc(valid_archives):
    """Same records; only the filedesc:// line names its own file."""
    inflated = gzip.decompress(valid_archives["example.arc.gz"].path.read_bytes())
    assert inflated.startswith(b"filedesc://example.arc.gz 0.0.0.0 20240102030405 text/plain ")
    plain = valid_archives["example.arc"].path.read_bytes()
    assert inflated.replace(b"filedesc://example.arc.gz", b"filedesc://example.arc", 1) == plain


def test_expected_counts(valid_archives):
    """Spot checks of the catalogue against independent counts."""
    def types(fid):
        return [t for t, _ in valid_archives[fid].records]
    assert types("get_pairs.warc.gz").count("request") == 5 and types("get_pairs.warc.gz").count("response") == 5
    assert types("post_put.warc.gz").count("request") == 20
    assert types("revisits.warc.gz").count("revisit") == 6
    assert types("example.arc") == ["warcinfo"] + ["response"] * 4
    sink = types("kitchen_sink.warc.gz")
    assert len(sink) == sum(len(valid_archives[n + ".warc.gz"].records) for n in warcgen.RECORD_SETS)
    assert {"warcinfo", "request", "response", "revisit", "resource", "metadata"} <= set(sink)


def test_post_pairs_are_linked_as_cdxj_indexer_expects(valid_archives):
    """Adjacent, same target URI, second record's WARC-Concurrent-To = first one's id."""
    linked = 0
    with open(valid_archives["post_put.warc"].path, "rb") as fh:
        recs = [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI"), r.rec_headers.get_header("WARC-Record-ID"),
                 r.rec_headers.get_header("WARC-Concurrent-To"),
                 r.http_headers.protocol if r.rec_type == "request" else None)
                for r in ArchiveIterator(fh)]
    for a, b in zip(recs[::2], recs[1::2]):
        assert a[1] == b[1]
        if b[3] == a[2]:
            linked += 1
            assert {a[0], b[0]} == {"request", "response"}
    assert linked == 19   # one pair is deliberately left unlinked
    methods = {r[4] for r in recs if r[4]}
    assert methods == {"POST", "PUT", "post"}
    firsts = [a[0] for a in recs[::2]]
    assert "response" in firsts and "request" in firsts   # both orders present


def test_generation_is_deterministic(tmp_path, valid_archives, broken_archives):
    again_valid = warcgen.generate_valid(tmp_path / "v")
    again_broken = warcgen.generate_broken(tmp_path / "b")
    for fid, fx in again_valid.items():
        assert fx.path.read_bytes() == valid_archives[fid].path.read_bytes(), fid
    for fid, bf in again_broken.items():
        assert bf.path.read_bytes() == broken_archives[fid].path.read_bytes(), fid


def test_raw_latin1_bytes_survive(valid_archives):
    data = valid_archives["unicode_urls.warc"].path.read_bytes()
    assert b"WARC-Target-URI: http://example.com/caf\xe9?q=\xfc\r\n" in data
    assert b"Content-Type: text/x-caf\xe9; charset=latin-1\r\n" in data
    assert b"WARC-Target-URI: <http://example.com/wget-style>\r\n" in data
    assert b"WARC-Target-URI: http://example.com/a b/c d.html?x=1 2\r\n" in data


def test_odd_status_lines_are_raw(valid_archives):
    data = valid_archives["odd_status.warc"].path.read_bytes()
    for line in (b"\r\n\r\nHTTP/1.1 200\r\n", b"\r\n\r\nHTTP/1.0  200 OK\r\n", b"\r\n\r\nhttp/1.1 200 ok\r\n",
                 b"\r\nContent-Type: ;\r\n", b"\r\nContent-Type: text/plain\r\nContent-Type: text/html\r\n"):
        assert line in data


def test_records_without_payload_digest(valid_archives):
    with open(valid_archives["no_payload_digest.warc"].path, "rb") as fh:
        assert all(r.rec_headers.get_header("WARC-Payload-Digest") is None for r in ArchiveIterator(fh))


def test_versions_and_fractional_dates(valid_archives):
    with open(valid_archives["versions.warc"].path, "rb") as fh:
        heads = [(r.rec_headers.protocol, r.rec_headers.get_header("WARC-Date")) for r in ArchiveIterator(fh)]
    assert ("WARC/1.1", "2024-01-02T03:04:05.123456Z") in heads
    assert ("WARC/1.0", "1999-12-31T23:59:59Z") in heads


def _sl_fields(member: bytes):
    """(comp_len, raw_len) from a member's FEXTRA `sl` subfield, parsed by hand (RFC 1952)."""
    assert member[:3] == b"\x1f\x8b\x08" and member[3] & 0x04, "FEXTRA flag set"
    xlen = struct.unpack("<H", member[10:12])[0]
    extra = member[12:12 + xlen]
    assert extra[:2] == b"sl" and struct.unpack("<H", extra[2:4])[0] == 8
    return struct.unpack("<II", extra[4:12])


def test_skip_length_fields_correct(valid_archives):
    fx = valid_archives["kitchen_sink_sl.warc.gz"]
    data = fx.path.read_bytes()
    members = _members(data)
    assert len(members) == len(fx.records)
    for off, m in members:
        comp, raw = _sl_fields(m)
        assert comp == len(m)
        assert raw == len(zlib.decompress(m, 31)) == struct.unpack("<I", m[-4:])[0]
    assert gzip.decompress(data) == valid_archives["kitchen_sink.warc"].path.read_bytes()


def test_skip_length_fields_stale(valid_archives):
    fx = valid_archives["kitchen_sink_sl_stale.warc.gz"]
    data = fx.path.read_bytes()
    for off, m in _members(data):
        comp, raw = _sl_fields(m)
        assert comp != len(m)
        assert raw != len(zlib.decompress(m, 31))
    assert gzip.decompress(data) == valid_archives["kitchen_sink.warc"].path.read_bytes()


def test_wget_fixture_has_sl_members(valid_archives):
    """The committed Wget file uses the same `sl` layout we generate."""
    data = valid_archives["wget/docs-python-3.11-recrawl.warc.gz"].path.read_bytes()
    for off, m in _members(data)[:20]:
        comp, raw = _sl_fields(m)
        assert (comp, raw) == (len(m), len(zlib.decompress(m, 31)))


# --------------------------------------------------------------------------- broken files

def test_broken_prefix_is_a_valid_archive(broken_archive, tmp_path):
    """Bytes before bad_offset hold exactly the good records, readable by warcio without complaint."""
    bf = broken_archive
    prefix = tmp_path / bf.path.name
    prefix.write_bytes(bf.path.read_bytes()[:bf.bad_offset])
    got, err = _read_all(prefix)
    assert [(t, u) for _, _, t, u in got] == bf.good_records
    assert "WARNING" not in err
    assert bf.expect in ("raise", "recover", "raise_or_read", "shared_member", "empty")
    assert bf.what


def _member_at(bf, i=0):
    data = bf.path.read_bytes()
    return data, data[bf.bad_offset:]


def test_truncated_gzip(broken_archives):
    bf = broken_archives["truncated_gzip.warc.gz"]
    data, tail = _member_at(bf)
    assert tail[:2] == b"\x1f\x8b"
    d = zlib.decompressobj(31)
    d.decompress(tail)
    assert not d.eof and not d.unused_data, "the file ends inside the member"
    got, _ = _read_all(bf.path)        # warcio silently drops the cut record
    assert len(got) == len(bf.good_records)


def test_truncated_gzip_header(broken_archives):
    bf = broken_archives["truncated_gzip_header.warc.gz"]
    data, tail = _member_at(bf)
    assert tail == b"\x1f\x8b\x08\x00\x00"


def test_bad_crc(broken_archives):
    bf = broken_archives["bad_crc.warc.gz"]
    data, tail = _member_at(bf)
    end = bf.offsets[bf.offsets.index(bf.bad_offset) + 1]
    member = data[bf.bad_offset:end]
    with pytest.raises(zlib.error, match="incorrect data check"):
        zlib.decompress(member, 31)
    raw = zlib.decompressobj(-15).decompress(member[10:])   # the deflate stream itself is fine
    assert raw.startswith(b"WARC/1.0\r\n")
    with pytest.raises(ArchiveLoadFailed):
        _read_all(bf.path)


def test_garbage_between_members(broken_archives):
    bf = broken_archives["garbage_between_members.warc.gz"]
    data, tail = _member_at(bf)
    assert tail.startswith(warcgen.GARBAGE)
    after = tail[len(warcgen.GARBAGE):]
    assert after[:2] == b"\x1f\x8b" and zlib.decompress(_members(after)[0][1], 31).startswith(b"WARC/1.0")
    with pytest.raises(ArchiveLoadFailed):
        _read_all(bf.path)


def test_zero_length_member(broken_archives):
    bf = broken_archives["zero_length_member.warc.gz"]
    data = bf.path.read_bytes()
    members = _members(data)
    empty = [(o, m) for o, m in members if zlib.decompress(m, 31) == b""]
    assert [(o, len(m)) for o, m in empty] == [(bf.bad_offset, 20)]
    got, _ = _read_all(bf.path)
    assert len(got) == 5
    # warcio counts the empty member into the next record: offset = empty member, length + 20
    nxt = bf.bad_offset + 20
    nxt_len = [len(m) for o, m in members if o == nxt][0]
    assert got[3][:2] == (bf.bad_offset, 20 + nxt_len)


def test_two_records_one_member(broken_archives):
    bf = broken_archives["two_records_one_member.warc.gz"]
    data = bf.path.read_bytes()
    members = dict(_members(data))
    inner = zlib.decompress(members[bf.bad_offset], 31)
    assert inner.count(b"WARC/1.0\r\nWARC-Type: ") == 2
    with pytest.raises(ArchiveLoadFailed, match="non-chunked gzip"):
        _read_all(bf.path)


def test_single_member(broken_archives):
    bf = broken_archives["single_member.warc.gz"]
    data = bf.path.read_bytes()
    assert len(_members(data)) == 1
    assert zlib.decompress(data, 31).count(b"WARC/1.0\r\nWARC-Type: ") == 5
    with pytest.raises(ArchiveLoadFailed, match="non-chunked gzip"):
        _read_all(bf.path)


def test_plain_record_in_gz(broken_archives):
    bf = broken_archives["plain_record_in_gz.warc.gz"]
    data, tail = _member_at(bf)
    assert tail.startswith(b"WARC/1.0\r\nWARC-Type: response\r\n")
    with pytest.raises(ArchiveLoadFailed):
        _read_all(bf.path)


def _declared_and_actual(bf):
    data = bf.path.read_bytes()
    rec = data[bf.bad_offset:]
    head, rest = rec.split(b"\r\n\r\n", 1)
    declared = int([ln for ln in head.split(b"\r\n") if ln.startswith(b"Content-Length:")][0].split(b":")[1])
    nxt = rest.find(b"\r\n\r\nWARC/1.0\r\n")
    return declared, (nxt if nxt >= 0 else None), rest


def test_content_length_short(broken_archives):
    bf = broken_archives["content_length_short.warc"]
    declared, actual, _ = _declared_and_actual(bf)
    assert declared == actual - 10
    got, err = _read_all(bf.path)          # warcio only warns, and reads on
    assert "Content-Length is invalid" in err


def test_content_length_long(broken_archives):
    bf = broken_archives["content_length_long.warc"]
    declared, actual, _ = _declared_and_actual(bf)
    assert declared == actual + 30
    with pytest.raises(ArchiveLoadFailed):
        _read_all(bf.path)


def test_truncated_plain(broken_archives):
    bf = broken_archives["truncated_plain.warc"]
    declared, actual, rest = _declared_and_actual(bf)
    assert actual is None and len(rest) < declared, "the file ends inside the block"


def test_control_bytes_header(broken_archives):
    bf = broken_archives["control_bytes_header.warc"]
    data = bf.path.read_bytes()
    head = data[bf.bad_offset:].split(b"\r\n\r\n", 1)[0]
    assert b"\x00" in head and b"\x85" in head
    with pytest.raises(UnicodeDecodeError):
        head.decode("utf-8")
    got, _ = _read_all(bf.path)          # warcio reads it, decoding the line as Latin-1
    assert got[2][3] == "http://broken.example.com/\x00\x85\x9f\xff"


def test_empty(broken_archives):
    bf = broken_archives["empty.warc.gz"]
    assert bf.path.stat().st_size == 0
    assert _read_all(bf.path)[0] == []     # warcio: no records, no error


@pytest.mark.parametrize("fid", ["not_a_warc.warc", "not_a_warc_gz.warc.gz"])
def test_not_a_warc(fid, broken_archives):
    bf = broken_archives[fid]
    data = bf.path.read_bytes()
    if fid.endswith(".gz"):
        data = gzip.decompress(data)
    assert data == warcgen.NOT_A_WARC
    with pytest.raises(ArchiveLoadFailed, match="Unknown archive format"):
        _read_all(bf.path)
