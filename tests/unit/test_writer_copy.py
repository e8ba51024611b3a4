"""WarcWriter.write_record: every record of every valid fixture copied, byte for byte.

The records compared are cut out of both files where warcio says they are
(its offsets and lengths) and inflated by zlib: the expected bytes are the
source file's own, never our reader's or writer's. ``warcio check`` and
``warchive check`` must accept every copy.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

import warchive.warc
from warchive.errors import ArchiveError, WriteError
from warchive.warc.writer import WarcWriter

WARCIO = Path(sys.executable).with_name("warcio")
CRLF2 = b"\r\n\r\n"


def units(path) -> list:
    """The records of a file as stored, uncompressed: (type, bytes from the version line to the
    end of the block), located by warcio; gzip members inflated by zlib."""
    data = Path(path).read_bytes()
    out = []
    with open(path, "rb") as f:
        it = WarcioIterator(f, no_record_parse=True)
        for rec in it:
            rtype = rec.rec_type
            it.read_to_end()
            off, n = it.get_record_offset(), it.get_record_length()
            raw = data[off:off + n]
            if raw[:2] == b"\x1f\x8b":
                d = zlib.decompressobj(31)
                raw = d.decompress(raw)
                assert d.eof and not d.unused_data, (path, off)   # one record, one member
                assert raw.endswith(CRLF2), (path, off)
                raw = raw[:-4]
            out.append((rtype, raw))
    return out


def warcio_check(path) -> subprocess.CompletedProcess:
    return subprocess.run([str(WARCIO), "check", "-v", str(path)], capture_output=True, text=True)


def warchive_check(path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "warchive", "check", str(path)], capture_output=True, text=True)


def copy_all(src, dst, check: bool = True, **kw) -> list:
    written = []
    with WarcWriter(dst, warcinfo=False, fsync=False, **kw) as out, warchive.warc.open(src) as records:
        for rec in records:
            written.append(out.write_record(rec, check_digests=check))
            assert out.bytes_written == os.path.getsize(str(dst) + ".open")
    return written


@pytest.mark.parametrize("compression", ["gzip", "none"])
def test_every_fixture_record_is_copied_byte_for_byte(tmp_path, valid_archive, compression):
    src = valid_archive.path
    dst = tmp_path / ("copy" + (".warc.gz" if compression == "gzip" else ".warc"))
    if ".arc" in src.name:
        with pytest.raises(WriteError, match="ARC record"):
            copy_all(src, dst)
        return
    if warcio_check(src).returncode != 0:     # a digest warcio rejects too: refused unless told
        with pytest.raises(WriteError, match="does not match"):
            copy_all(src, dst)
        os.remove(dst)       # the writer closed it on the way out: valid up to the record refused
        written = copy_all(src, dst, check=False)
    else:
        written = copy_all(src, dst)
    theirs, ours = units(src), units(dst)
    assert len(ours) == len(theirs) == len(written) > 0
    for (t_type, t_raw), (o_type, o_raw), w in zip(theirs, ours, written):
        assert o_type == t_type == w.type
        assert o_raw == t_raw, (src.name, w.offset)
    assert os.path.getsize(dst) == written[-1].offset + written[-1].length + (4 if compression == "none" else 0)
    verdicts = [re.sub(r"offset \d+ ", "", warcio_check(p).stdout.replace(str(p), "F")) for p in (src, dst)]
    assert verdicts[0] == verdicts[1]          # warcio judges each copied record as it judged the source's
    if warcio_check(src).returncode == 0:
        r = warcio_check(dst)
        assert r.returncode == 0, r.stdout + r.stderr
        r = warchive_check(dst)
        assert r.returncode == 0, r.stdout + r.stderr


def test_a_wrong_digest_raises_unless_told(tmp_path):
    src = tmp_path / "src.warc"
    with WarcWriter(src, warcinfo=False, fsync=False) as w:
        w.write_response("http://example.com/", b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
    data = src.read_bytes()
    src.write_bytes(data.replace(b"hello", b"jello"))    # same length: only the digests tell
    with WarcWriter(tmp_path / "a.warc", fsync=False) as out, warchive.warc.open(src) as records:
        rec = next(iter(records))
        with pytest.raises(WriteError) as e:
            out.write_record(rec)
    assert "WARC-Block-Digest" in str(e.value) and "src.warc" in str(e.value) and e.value.offset == 0
    assert "check_digests=False" in str(e.value)
    with WarcWriter(tmp_path / "b.warc", warcinfo=False, fsync=False) as out, warchive.warc.open(src) as records:
        for rec in records:
            out.write_record(rec, check_digests=False)
    assert (tmp_path / "b.warc").read_bytes() == src.read_bytes()     # copied as it is, damage and all


def test_a_record_whose_payload_was_read_is_refused(tmp_path):
    src = tmp_path / "src.warc.gz"
    with WarcWriter(src, fsync=False) as w:
        w.write_resource("http://example.com/r", b"resource", "text/plain")
    with WarcWriter(tmp_path / "a.warc", fsync=False) as out, warchive.warc.open(src) as records:
        for rec in records:
            rec.payload.read()
            with pytest.raises(ArchiveError, match="before reading its payload"):
                out.write_record(rec)


def test_a_non_http_response_under_an_http_uri_is_not_copied_unless_told(tmp_path):
    src = tmp_path / "src.warc"
    with WarcWriter(src, warcinfo=False, fsync=False) as w:     # told: the block is no HTTP message
        w.write_response("http://example.com/", b"<html>x", content_type="text/html", http=False)
    with WarcWriter(tmp_path / "a.warc", fsync=False) as out, warchive.warc.open(src) as records:
        with pytest.raises(WriteError, match="not an HTTP message"):
            out.write_record(next(iter(records)))
    with WarcWriter(tmp_path / "b.warc", warcinfo=False, fsync=False) as out, warchive.warc.open(src) as records:
        out.write_record(next(iter(records)), http=False)
    assert (tmp_path / "b.warc").read_bytes() == src.read_bytes()


def _split(raw: bytes):
    head, _, block = raw.partition(CRLF2)
    return head.split(b"\r\n"), block


def test_copies_agree_with_warcios_write_record(tmp_path, valid_archives):
    """warcio's ArchiveIterator + WARCWriter.write_record over the same Wget file: the same blocks
    and the same heads, but for what warcio rewrites in a record it copies (it takes the <...>
    off Wget's WARC-Target-URI and adds a WARC-Payload-Digest where there was none); ours are
    the source's, unchanged."""
    from warcio.warcwriter import WARCWriter

    src = valid_archives["wget/docs-python-3.11-recrawl.warc.gz"].path
    theirs = tmp_path / "warcio.warc"
    with open(src, "rb") as f, open(theirs, "wb") as out:
        ww = WARCWriter(out, gzip=False)
        for rec in WarcioIterator(f):
            ww.write_record(rec)
    ours = tmp_path / "ours.warc"
    copy_all(src, ours)
    mine, peer, source = units(ours), units(theirs), units(src)
    assert mine == source and len(peer) == len(mine)
    rewritten = 0
    for (m_type, m_raw), (p_type, p_raw) in zip(mine, peer):
        m_head, m_block = _split(m_raw)
        p_head, p_block = _split(p_raw)
        assert (m_type, m_block) == (p_type, p_block)
        added = [line for line in p_head if line.startswith(b"WARC-Payload-Digest: ")
                 and not any(x.startswith(b"WARC-Payload-Digest: ") for x in m_head)]
        p_head = [line for line in p_head if line not in added]
        m_head = [line.replace(b"WARC-Target-URI: <", b"WARC-Target-URI: ").rstrip(b">")
                  if line.startswith(b"WARC-Target-URI: <") else line for line in m_head]
        rewritten += bool(added) or m_raw != p_raw
        assert m_head == p_head
    assert rewritten > 0     # warcio does rewrite: the comparison has something to tell apart
