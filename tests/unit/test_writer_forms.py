"""WarcWriter's targets (a directory, one file, a file object), its bodies (bytes, str, binary
files, iterables), WriteError for non-HTTP blocks under http(s) URIs, and bytes_written.

Files are read back by warcio (and judged by ``warcio check``); expected bodies and sizes come
from the inputs and the file system, not from our reader.
"""

from __future__ import annotations

import hashlib
import base64
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

from warchive.errors import ArchiveError, WriteError
from warchive.warc.writer import WarcWriter, target_kind

WARCIO = Path(sys.executable).with_name("warcio")
RESP = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello"
REQ = b"GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"


def warcio_read(f) -> list:
    """(type, target URI, payload as warcio de-chunks it) of every record."""
    out = []
    for rec in WarcioIterator(f):
        out.append((rec.rec_type, rec.rec_headers.get_header("WARC-Target-URI"), rec.content_stream().read()))
    return out


def warcio_ok(path) -> bool:
    r = subprocess.run([str(WARCIO), "check", str(path)], capture_output=True, text=True)
    return r.returncode == 0 and not r.stdout.strip()


def b32(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


# --------------------------------------------------------------------------- targets

@pytest.mark.parametrize("name,magic", [("one.warc.gz", b"\x1f\x8b"), ("one.warc.zst", b"\x28\xb5\x2f\xfd"),
                                        ("one.warc", b"WARC/1.1")])
def test_a_path_with_a_warc_suffix_is_one_file(tmp_path, name, magic):
    path = tmp_path / name
    with WarcWriter(path, fsync=False) as w:
        assert w.kind == "file" and os.listdir(tmp_path) == [name + ".open"]   # published on close only
        w.write_exchange("http://example.com/", REQ, RESP)
    assert os.listdir(tmp_path) == [name] and w.closed_files == [str(path)]
    data = path.read_bytes()
    assert data.startswith(magic)
    if name.endswith(".zst"):
        assert subprocess.run([sys.executable, "-m", "warchive", "check", str(path)]).returncode == 0
        return
    with open(path, "rb") as f:
        recs = warcio_read(f)
    assert [r[0] for r in recs] == ["warcinfo", "response", "request"]
    assert recs[1][2] == b"hello"
    assert warcio_ok(path)


def test_the_warcinfo_names_the_file_or_is_left_out(tmp_path):
    with WarcWriter(tmp_path / "a.warc", fsync=False, warcinfo={"operator": "Jane"}) as w:
        pass
    data = (tmp_path / "a.warc").read_bytes()
    assert b"WARC-Filename: a.warc\r\n" in data and b"operator: Jane\r\n" in data
    with WarcWriter(tmp_path / "b.warc", fsync=False, warcinfo=False) as w:
        w.write_resource("urn:x:1", b"x", "text/plain")
    with open(tmp_path / "b.warc", "rb") as f:
        assert [r[0] for r in warcio_read(f)] == ["resource"]


def test_the_rule_for_paths(tmp_path):
    assert target_kind(tmp_path / "new-dir") == "directory"
    assert target_kind(tmp_path / "x.WARC.GZ") == "file"
    (tmp_path / "d.warc.gz").mkdir()
    with pytest.raises(WriteError, match="is a directory, but its name is a WARC file's"):
        WarcWriter(tmp_path / "d.warc.gz")
    with WarcWriter.to_directory(tmp_path / "d.warc.gz", "P", fsync=False) as w:    # said explicitly
        w.write_resource("urn:x:1", b"x", "text/plain")
    assert [p.name.startswith("P-") for p in (tmp_path / "d.warc.gz").iterdir()] == [True]
    (tmp_path / "plain.txt").write_bytes(b"")
    with pytest.raises(WriteError, match="exists and is not a directory"):
        WarcWriter(tmp_path / "plain.txt")
    (tmp_path / "taken.warc").write_bytes(b"")
    with pytest.raises(WriteError, match="exists already"):
        WarcWriter(tmp_path / "taken.warc")
    with WarcWriter.to_file(tmp_path / "any-name.bin", compression="none", fsync=False) as w:
        w.write_resource("urn:x:1", b"x", "text/plain")
    assert (tmp_path / "any-name.bin").read_bytes().startswith(b"WARC/1.1\r\n")
    with pytest.raises(ArchiveError, match="the name says gzip"):
        WarcWriter(tmp_path / "x.warc.gz", compression="zstd")
    for kw in ({"max_size": 10}, {"prefix": "P"}):
        with pytest.raises(ArchiveError, match="for a directory of files"):
            WarcWriter(tmp_path / "y.warc.gz", **kw)
    assert not (tmp_path / "y.warc.gz.open").exists() and not (tmp_path / "x.warc.gz.open").exists()
    with WarcWriter(tmp_path / "z.warc", fsync=False) as w, pytest.raises(ArchiveError, match="roll over"):
        w.roll_over()


def test_a_directory_rolls_over_and_names_files_as_before(tmp_path):
    with WarcWriter(tmp_path / "crawl", "TEST", max_size=3000, fsync=False) as w:
        assert w.kind == "directory" and w.bytes_written == 0 and w.file_sizes == {}
        for i in range(6):
            w.write_response(f"http://example.com/{i}", RESP + os.urandom(900))
    assert len(w.closed_files) >= 2
    assert all(os.path.basename(p).startswith("TEST-") and p.endswith(".warc.gz") for p in w.closed_files)
    assert w.file_sizes == {p: os.path.getsize(p) for p in w.closed_files}
    assert w.bytes_written == sum(os.path.getsize(p) for p in w.closed_files)


@pytest.mark.parametrize("compression", ["gzip", "none"])
def test_a_file_object_is_appended_to_and_left_open(tmp_path, compression):
    path = tmp_path / "obj.warc"
    with open(path, "wb") as f:
        f.write(b"")
        w = WarcWriter(f, compression=compression)
        assert w.kind == "stream" and w.path == str(path)
        req, resp = w.write_exchange("http://example.com/", REQ, RESP)
        assert resp.filename == "obj.warc" and resp.offset == w.file_sizes[str(path)] - resp.length - req.length \
            - (8 if compression == "none" else 0)
        w.close()
        assert not f.closed
        f.write(b"")
    assert os.listdir(tmp_path) == ["obj.warc"]                   # nothing renamed
    assert path.stat().st_size == w.bytes_written
    with open(path, "rb") as f:
        assert [r[0] for r in warcio_read(f)] == ["warcinfo", "response", "request"]
    assert warcio_ok(path)


def test_a_file_object_after_other_bytes_reports_file_offsets(tmp_path):
    buf = io.BytesIO()
    with WarcWriter(buf, compression="none", warcinfo=False) as first:
        a = first.write_resource("urn:x:1", b"one", "text/plain")
    with WarcWriter(buf, compression="none", warcinfo=False) as second:
        b = second.write_resource("urn:x:2", b"two", "text/plain")
    buf.seek(0)
    it = WarcioIterator(buf)
    offsets = []
    for rec in it:
        rec.content_stream().read()
        offsets.append(it.get_record_offset())
    assert offsets == [a.offset, b.offset] and b.offset == first.bytes_written > 0
    assert b.filename == "" and second.file_sizes == {"": second.bytes_written}


def test_a_text_file_object_is_refused(tmp_path):
    with open(tmp_path / "t.warc", "w") as f, pytest.raises(WriteError, match="binary mode"):
        WarcWriter(f)


# --------------------------------------------------------------------------- bodies

def test_bodies_as_str_files_and_iterables(tmp_path):
    text = "Grüße, 世界 \U0001F600"
    src = tmp_path / "body.bin"
    src.write_bytes(b"from a file " * 1000)

    def gen():
        yield b"HTTP/1.1 200 OK\r\n"
        yield bytearray(b"Content-Length: 3\r\n\r\n")
        yield memoryview(b"abc")

    path = tmp_path / "bodies.warc.gz"
    with WarcWriter(path, fsync=False) as w, open(src, "rb") as body:
        r1 = w.write_resource("https://example.com/t.txt", text, "text/plain; charset=utf-8")
        r2 = w.write_resource("https://example.com/f.bin", body, "application/octet-stream")
        r3 = w.write_response("https://example.com/g", gen())
        r4 = w.write_metadata("https://example.com/g", ["outlink: https://example.com/h\r\n"][0],
                              refers_to=r3.record_id)
        r5 = w.write_response("https://example.com/l", [b"HTTP/1.1 200 OK\r\n\r\n", b"x"])
    with open(path, "rb") as f:
        recs = warcio_read(f)
    assert recs[1][2] == text.encode("utf-8") and r1.payload_digest == b32(text.encode("utf-8"))
    assert recs[2][2] == src.read_bytes() and r2.payload_digest == b32(src.read_bytes())
    assert recs[3][2] == b"abc" and r3.payload_digest == b32(b"abc")
    assert recs[4][2] == b"outlink: https://example.com/h\r\n" and r4.type == "metadata"
    assert recs[5][2] == b"x" and r5.block_digest == b32(b"HTTP/1.1 200 OK\r\n\r\nx")
    assert warcio_ok(path)


def test_bad_bodies(tmp_path):
    with WarcWriter(tmp_path / "x.warc", fsync=False) as w:
        with pytest.raises(ArchiveError, match="binary mode"):
            w.write_resource("urn:x:1", io.StringIO("text"), "text/plain")
        with pytest.raises(ArchiveError, match="yields bytes, not str"):
            w.write_resource("urn:x:1", iter(["a", "b"]), "text/plain")
        with pytest.raises(ArchiveError, match="not int"):
            w.write_resource("urn:x:1", 42, "text/plain")   # type: ignore[arg-type]


# --------------------------------------------------------------------------- HTTP blocks

@pytest.mark.parametrize("call", [
    lambda w: w.write_response("http://example.com/", b"<html>hello</html>"),
    lambda w: w.write_response("https://example.com/", "just text"),
    lambda w: w.write_request("http://example.com/", b"Host: example.com\r\n\r\n"),
    lambda w: w.write_request("http://example.com/", RESP),               # a response is no request
    lambda w: w.write_revisit("http://example.com/", b"<html>", payload_digest="sha1:" + "A" * 32),
    lambda w: w.write_exchange("http://example.com/", REQ, b"hello"),
    lambda w: w.write_response("http://example.com/", b"hello", content_type="text/plain"),
])
def test_a_non_http_block_under_an_http_uri_raises(tmp_path, call):
    path = tmp_path / "x.warc"
    with WarcWriter(path, fsync=False) as w:
        size = w.bytes_written
        with pytest.raises(WriteError) as e:
            call(w)
        assert w.bytes_written == size                  # nothing written
    assert str(path) in str(e.value) and "http=False" in str(e.value)
    assert warcio_ok(path)


def test_http_false_writes_the_block_as_given(tmp_path):
    path = tmp_path / "x.warc"
    with WarcWriter(path, fsync=False) as w:
        r = w.write_response("http://example.com/", b"<html>hello</html>", content_type="text/html", http=False)
        with pytest.raises(ArchiveError, match="needs a content_type"):
            w.write_response("http://example.com/", b"<html>", http=False)
        # odd but real status lines are HTTP messages (archived as received)
        w.write_response("http://example.com/odd", b"http/1.1 200 ok\r\n\r\nx")
        w.write_response("http://example.com/word", b"HTTP/1.1 OK\nContent-Type: text/plain\n\nx")
        w.write_revisit("http://example.com/", None, payload_digest="sha1:" + "A" * 32)
        w.write_response("dns:example.com", b"20240101000000\nexample.com. 300 IN A 192.0.2.1\n",
                         content_type="text/dns")
    assert r.payload_digest is None and r.headers.get("Content-Type") == "text/html"
    assert subprocess.run([sys.executable, "-m", "warchive", "check", str(path)]).returncode == 0


# --------------------------------------------------------------------------- sizes

@pytest.mark.parametrize("compression", ["gzip", "zstd", "none"])
def test_bytes_written_is_the_size_on_disk_after_every_record(tmp_path, compression):
    path = tmp_path / ("s.warc" + {"gzip": ".gz", "zstd": ".zst", "none": ""}[compression])
    sizes = []
    w = WarcWriter(path, fsync=False, on_record=lambda r: sizes.append(os.path.getsize(str(path) + ".open")))
    assert w.bytes_written == os.path.getsize(str(path) + ".open") > 0        # its warcinfo
    for i in range(20):
        w.write_exchange(f"http://example.com/{i}", REQ, RESP + os.urandom(i * 100))
        assert w.bytes_written == os.path.getsize(str(path) + ".open") == w.file_sizes[str(path)]
    assert w.current_files == [str(path) + ".open"]
    w.close()
    assert w.bytes_written == path.stat().st_size and w.file_sizes == {str(path): path.stat().st_size}
    assert len(sizes) == 41 and sizes == sorted(sizes)


def test_bytes_written_of_a_buffered_file_object_after_flush(tmp_path):
    path = tmp_path / "b.warc.gz"
    with open(path, "wb", buffering=1 << 20) as f:
        w = WarcWriter(f)
        for i in range(5):
            w.write_response(f"http://example.com/{i}", RESP)
            f.flush()
            assert w.bytes_written == path.stat().st_size
        w.close()
    assert warcio_ok(path)
