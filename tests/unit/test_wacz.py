"""WACZ reading and writing: hostile zips refused (naming file and entry), ZIP64, range-only reading over
HTTP as ReplayWeb.page reads a WACZ from a static host, and `warchive serve` of a .wacz."""

import io
import json
import os
import stat
import struct
import threading
import urllib.request
import zipfile
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from warchive.collection import Collection
from warchive.replay.collections import Collections
from warchive.wacz import CompressedEntry, UnsafeZipEntry, WaczFile, ZipFormatError, create_wacz, validate
from warchive.wacz.create import collection_lines
from warchive.wacz.zipread import FileBlob, ZipDirectory
from warchive.wacz.zipwrite import ZipWriter
from warchive.surt import surt
from warchive.warc.reader import ArchiveIterator

WGET = Path(__file__).resolve().parents[1] / "data" / "wget"
WARC = WGET / "docs-python-3.11.warc.gz"


@pytest.fixture(scope="module")
def coll(tmp_path_factory):
    c = Collection.init(str(tmp_path_factory.mktemp("wz") / "web"))
    c.add([str(WARC)])
    return c


@pytest.fixture(scope="module")
def wacz_pair(coll, tmp_path_factory):
    d = tmp_path_factory.mktemp("out")
    plain, comp = d / "plain.wacz", d / "comp.wacz"
    create_wacz(coll.path, str(plain))
    create_wacz(coll.path, str(comp), compress_over=0, lines_per_block=64)
    return plain, comp


# --------------------------------------------------------------------------- writing

@pytest.mark.parametrize("z64", [False, True])
def test_zip_writer_read_by_python_zipfile(tmp_path, z64):
    p = tmp_path / "x.zip"
    with ZipWriter(str(p), force_zip64=z64) as w:
        w.add_bytes("a.txt", b"hello")
        w.add_file("archive/w.warc.gz", str(WARC))
    with zipfile.ZipFile(p) as z:
        assert z.testzip() is None
        assert z.read("archive/w.warc.gz") == WARC.read_bytes()
        assert all(i.compress_type == zipfile.ZIP_STORED for i in z.infolist())
        zip64_extra = any(struct.unpack_from("<H", i.extra)[0] == 1 for i in z.infolist() if i.extra)
        assert zip64_extra == z64
    zd = ZipDirectory(FileBlob(str(p)))
    assert zd.read("a.txt") == b"hello"


def test_failed_write_leaves_nothing(tmp_path):
    p = tmp_path / "x.zip"
    with pytest.raises(RuntimeError):
        with ZipWriter(str(p)) as w:
            w.add_bytes("a", b"1")
            raise RuntimeError("boom")
    assert os.listdir(tmp_path) == []


# --------------------------------------------------------------------------- hostile zips

def _zip(path, entries):
    with zipfile.ZipFile(path, "w") as z:
        for info, data in entries:
            z.writestr(info, data)
    return path


def _info(name, method=zipfile.ZIP_STORED):
    i = zipfile.ZipInfo(name, (2026, 12, 1, 0, 0, 0))
    i.compress_type = method
    return i


def _patch(path, old, new, count=-1):
    b = Path(path).read_bytes()
    assert old in b
    Path(path).write_bytes(b.replace(old, new, count) if count > 0 else b.replace(old, new))


def _refused(path, cls, entry):
    with pytest.raises(cls) as e:
        ZipDirectory(FileBlob(str(path)))
    assert str(path) in str(e.value) and repr(entry)[1:-1] in str(e.value)
    return e.value


@pytest.mark.parametrize("name", ["../evil.txt", "a/../../evil.txt", "/etc/evil", "C:/evil", "a\\..\\evil"])
def test_zip_slip_names_refused(tmp_path, name):
    p = _zip(tmp_path / "x.zip", [(_info("placeholder_name_" + "x" * (len(name) - 17) if len(name) > 17
                                         else "p" * len(name)), b"x")])
    _patch(p, ("placeholder_name_" + "x" * (len(name) - 17) if len(name) > 17 else "p" * len(name)).encode(),
           name.encode())
    _refused(p, UnsafeZipEntry, name)


def test_symlink_refused(tmp_path):
    i = _info("link")
    i.create_system = 3
    i.external_attr = (stat.S_IFLNK | 0o777) << 16
    p = _zip(tmp_path / "x.zip", [(i, b"/etc/passwd")])
    _refused(p, UnsafeZipEntry, "link")


def test_duplicate_names_refused(tmp_path):
    with pytest.warns(UserWarning):
        p = _zip(tmp_path / "x.zip", [(_info("a.txt"), b"1"), (_info("a.txt"), b"2")])
    _refused(p, UnsafeZipEntry, "a.txt")


def test_zip_bomb_that_lies_about_its_size(tmp_path):
    data = b"\0" * (4 << 20)
    p = _zip(tmp_path / "x.zip", [(_info("bomb.json", zipfile.ZIP_DEFLATED), data)])
    # declare 1,000 bytes in both headers (little-endian 4<<20 = 00 00 40 00)
    _patch(p, struct.pack("<I", len(data)), struct.pack("<I", 1000))
    zd = ZipDirectory(FileBlob(str(p)))
    with pytest.raises(ZipFormatError) as e:
        zd.read("bomb.json")
    assert "bomb.json" in str(e.value) and "more than" in str(e.value)


def test_entry_bigger_than_allowed_refused_before_inflating(tmp_path):
    p = _zip(tmp_path / "x.zip", [(_info("big.json", zipfile.ZIP_DEFLATED), b"\0" * (1 << 20))])
    with pytest.raises(ZipFormatError, match="big.json"):
        ZipDirectory(FileBlob(str(p))).read("big.json", max_size=1000)


def test_local_header_that_disagrees_refused(tmp_path):
    p = _zip(tmp_path / "x.zip", [(_info("a.txt"), b"hello"), (_info("b.txt"), b"world")])
    b = bytearray(Path(p).read_bytes())
    b[30] = ord("z")   # the local header's name of the first entry: "z.txt"
    Path(p).write_bytes(bytes(b))
    _refused(p, ZipFormatError, "a.txt")


def test_size_that_lies_into_the_directory_refused(tmp_path):
    p = _zip(tmp_path / "x.zip", [(_info("a.txt"), b"hello")])
    _patch(p, struct.pack("<II", 5, 5), struct.pack("<II", 500, 500))   # both headers: 500 bytes
    _refused(p, ZipFormatError, "a.txt")


def test_overlapping_entries_refused(tmp_path):
    p = _zip(tmp_path / "x.zip", [(_info("a.txt"), b"A" * 100), (_info("b.txt"), b"B" * 100)])
    raw = bytearray(Path(p).read_bytes())
    # the second central directory record points into the first entry's data, where a forged
    # local header names b.txt: a reader that does not check layout reads overlapping bytes
    zd_plain = zipfile.ZipFile(p)
    b_info = zd_plain.getinfo("b.txt")
    forged = raw[b_info.header_offset: b_info.header_offset + 30 + 5]
    raw[40:40 + len(forged)] = forged
    cd = raw.rfind(b"PK\x01\x02")
    struct.pack_into("<I", raw, cd + 42, 40)
    Path(p).write_bytes(bytes(raw))
    _refused(p, ZipFormatError, "b.txt")


def test_deflated_warc_refused_for_range_reads(tmp_path, coll):
    good = tmp_path / "good.wacz"
    create_wacz(coll.path, str(good))
    bad = tmp_path / "bad.wacz"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(bad, "w") as dst:
        for info in src.infolist():
            out = _info(info.filename, zipfile.ZIP_DEFLATED if info.filename.startswith("archive/")
                        else zipfile.ZIP_STORED)
            dst.writestr(out, src.read(info))
    with WaczFile(str(bad)) as wz:
        with pytest.raises(CompressedEntry, match="archive/docs-python-3.11.warc.gz"):
            wz.record_bytes("docs-python-3.11.warc.gz", 0, 100)
    rep = validate(str(bad))
    assert not rep.ok and "deflated" in rep.problem


def test_not_a_zip(tmp_path):
    p = tmp_path / "x.wacz"
    p.write_bytes(b"WARC/1.0\r\n" * 100)
    _refused(p, ZipFormatError, "end-of-central-directory")


def test_end_signature_too_near_the_end(tmp_path):
    # "PK\x05\x06" in the last 21 bytes (the wacz fuzz harness's crasher): a ZipFormatError, not struct.error
    p = tmp_path / "x.wacz"
    with ZipWriter(str(p)) as w:
        w.add_bytes("a.txt", b"hello")
    p.write_bytes(p.read_bytes() + b"PK\x05\x06" + b"\x00" * 10)
    _refused(p, ZipFormatError, "end-of-central-directory")


# --------------------------------------------------------------------------- range-only reading

class RangeHandler(BaseHTTPRequestHandler):
    """A static file host answering only Range requests (206), as ReplayWeb.page uses one."""

    def do_GET(self):
        data = self.server.data
        rng = self.headers.get("Range", "")
        if not rng.startswith("bytes="):
            self.send_response(400)
            self.end_headers()
            return
        a, _, b = rng[6:].partition("-")
        start, end = int(a), min(int(b), len(data) - 1)
        body = data[start:end + 1]
        self.server.fetched += len(body)
        self.server.requests += 1
        self.send_response(206)
        self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.server.data)))
        self.end_headers()

    def log_message(self, *a):
        pass


class HttpBlob:
    def __init__(self, url):
        self.name = url
        with urllib.request.urlopen(urllib.request.Request(url, method="HEAD")) as r:
            self.size = int(r.headers["Content-Length"])

    def read(self, offset, n):
        if n == 0:
            return b""
        req = urllib.request.Request(self.name, headers={"Range": f"bytes={offset}-{offset + n - 1}"})
        with urllib.request.urlopen(req) as r:
            assert r.status == 206
            return r.read()


@pytest.mark.parametrize("which", ["plain", "compressed"])
def test_range_only_reading(wacz_pair, which, coll):
    path = wacz_pair[0 if which == "plain" else 1]
    srv = ThreadingHTTPServer(("127.0.0.1", 0), RangeHandler)
    srv.data, srv.fetched, srv.requests = path.read_bytes(), 0, 0
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        wz = WaczFile(HttpBlob(f"http://127.0.0.1:{srv.server_port}/{path.name}"))
        pages = [json.loads(x) for x in wz.pages().decode().splitlines()[1:]]
        sources = wz.index_sources()
        want = {ln for ln in collection_lines(coll)}
        for page in pages[:5]:
            key_start = None
            key = surt(page["url"]).encode() + b" "
            for _, src in sources:
                for line in src.range(key, key[:-1] + b"!"):
                    assert line in want
                    f = json.loads(line.split(b" ", 2)[2])
                    if f["url"] == page["url"]:
                        key_start = f
            assert key_start is not None, page
            raw = wz.record_bytes(key_start["filename"], int(key_start["offset"]), int(key_start["length"]))
            rec = next(iter(ArchiveIterator(io.BytesIO(raw))))
            assert rec.target_uri == page["url"] and rec.type == "response"
        size = len(srv.data)
        print(f"\n{which}: {srv.fetched} bytes fetched in {srv.requests} range requests of a {size}-byte WACZ")
        # the end of the zip, its directory, datapackage.json, pages.jsonl, the index (plain: whole;
        # compressed: its summary and one block a page) and five records: a small part of the file
        assert srv.fetched < size / (20 if which == "compressed" else 10)
    finally:
        srv.shutdown()
        srv.server_close()


# --------------------------------------------------------------------------- serve

def test_serve_a_wacz_as_a_collection(wacz_pair, tmp_path, coll):
    root = tmp_path / "root"
    root.mkdir()
    os.link(wacz_pair[1], root / "docs.wacz")
    cs = Collections(str(root))
    try:
        assert cs.names() == ["docs"]
        s = cs.get("docs")
        lines = s.engine.answer("url=docs.python.org/3.11/*&output=json&limit=20").read().splitlines()
        assert len(lines) == 20
        for raw in lines:
            cap = json.loads(raw)
            lc = s.loader.load(cap)
            try:
                assert lc.status == int(cap["status"])
                body = lc.read()
                if cap["mime"] == "text/html":
                    assert b"<" in body[:2000]
            finally:
                lc.close()
    finally:
        cs.close()


def test_cli_create_validate_add(coll, tmp_path):
    from warchive.cli import main
    out = tmp_path / "c.wacz"
    assert main(["wacz", "create", coll.path, "-o", str(out), "--title", "T"]) == 0
    assert main(["wacz", "validate", str(out)]) == 0
    assert main(["add", str(tmp_path / "new"), str(out)]) == 1   # (warchive init first, as wb-manager's)
    assert main(["init", str(tmp_path / "new")]) == 0 and main(["init", str(tmp_path / "new2")]) == 0
    assert main(["add", str(tmp_path / "new"), str(out)]) == 0
    assert collection_lines(Collection(str(tmp_path / "new"))) == collection_lines(coll)
    b = bytearray(out.read_bytes())
    b[200] ^= 0xFF     # a byte of the WARC: its hash no longer matches
    out.write_bytes(bytes(b))
    assert main(["wacz", "validate", str(out)]) == 1
    assert main(["add", str(tmp_path / "new2"), str(out)]) == 1
