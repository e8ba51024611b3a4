"""Fuzz harnesses for the file formats read from disk: index segments, ZipNum clusters, session
journals, WACZ/ZIP files and store manifests.

Each harness writes its input to a file in one temporary directory (on /dev/shm when there
is one: a million inputs must not wear a disk), opens it as the format's reader does and
reads everything it offers. Registered in tests/fuzz/harnesses.py (what may escape:
ArchiveError children). Formats sealed by checksums would keep the fuzzer at their first
check, so for them the first input byte may ask the harness to seal the mutated bytes
again (segment: every block CRC, the index CRC, the footer CRC; manifest: its sha256
``checksum``), and the reader's checks behind the seal are reached too.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import struct
import tempfile
import zlib
from typing import Any, List, Optional, Tuple

from warchive.capture.session.reader import read_session
from warchive.errors import ArchiveError
from warchive.index.segment import Segment
from warchive.index.zipnum import ZipNumIndex
from warchive.store.jsonfile import canonical
from warchive.store.manifest import parse_manifest
from warchive.wacz.reader import WaczFile
from warchive.wacz.zipread import ZipDirectory

_SHM = "/dev/shm"
TMP = tempfile.mkdtemp(prefix="warchive-fuzz-", dir=_SHM if os.path.isdir(_SHM) else None)
atexit.register(shutil.rmtree, TMP, True)

SEP = b"\n=====\n"      # splits a ZipNum input: summary, SEP, part bytes
MAX_LINES = 4096        # lines read of a segment or cluster: bounds the work of one input
MAX_ENTRY = 1 << 20     # bytes of a ZIP entry read whole


def _file(name: str, data: bytes) -> str:
    path = os.path.join(TMP, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


# ------------------------------------------------------------------ index segments

def _varint(b: bytes, p: int) -> Tuple[int, int]:
    v = shift = 0
    for _ in range(10):
        if p >= len(b):
            raise ValueError("varint past the end")
        c = b[p]
        p += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, p
    raise ValueError("varint too long")


def reseal_segment(data: bytes) -> bytes:
    """The segment bytes with every CRC-32 made right again (docs/format.md, "Index segments"),
    as far as the footer and index still describe the file; else the bytes unchanged."""
    if len(data) < 16 + 48:
        return data
    buf = bytearray(data)
    foot = len(buf) - 48
    ioff, ilen = struct.unpack_from("<QQ", buf, foot)
    if ioff + ilen != foot or ioff < 16:
        return data
    try:
        count, p = _varint(buf, ioff)
        at = 16
        for _ in range(min(count, 1 << 16)):
            _, p = _varint(buf, p)
            unshared, p = _varint(buf, p)
            p += unshared
            disk, p = _varint(buf, p)
            _, p = _varint(buf, p)
            if p + 4 > foot or at + disk > ioff:
                return data
            struct.pack_into("<I", buf, p, zlib.crc32(buf[at:at + disk]))
            p += 4
            at += disk
    except ValueError:
        return data
    struct.pack_into("<I", buf, foot + 28, zlib.crc32(buf[ioff:foot]))
    struct.pack_into("<I", buf, foot + 36, zlib.crc32(buf[foot:foot + 36]))
    return bytes(buf)


def fuzz_segment(data: bytes) -> None:
    """An index segment opened and read: every line, its blocks, lookups and ranges, verify."""
    if not data:
        return
    body = reseal_segment(data[1:]) if data[0] & 1 else data[1:]
    with Segment(_file("f.seg", body)) as seg:
        n, first, last = len(seg), seg.first_key, seg.last_key
        keys: List[bytes] = [b"", b"com,", first or b"", last or b""]
        for sep, _ in seg.blocks():
            keys.append(sep)
        for i in range(min(seg.block_count, 64)):
            seg.block_lines(i)
        got = 0
        for line in seg:
            got += 1
            if got >= MAX_LINES:
                break
        if got < MAX_LINES and got != n:
            raise AssertionError(f"the segment says {n} lines and yields {got}")
        for k in keys[:16]:
            seg.lookup(k.split(b" ")[0])
            seg.range_list(k, None, 32)
        seg.verify()


# ------------------------------------------------------------------ ZipNum clusters

def fuzz_zipnum(data: bytes) -> None:
    """A ZipNum cluster (summary SEP part): its blocks, every line, a few ranges, verify."""
    idx, _, part = data.partition(SEP)
    _file("cluster-00000.gz", part)
    _file("cluster.loc", b"cluster-00000.gz\tcluster-00000.gz\n")
    with ZipNumIndex(_file("cluster.idx", idx), os.path.join(TMP, "cluster.loc")) as z:
        z.num_blocks
        keys = [b.key for _, b in zip(range(64), z.blocks(b"", None))]
        got = 0
        for _ in z:
            got += 1
            if got >= MAX_LINES:
                break
        for k in keys[:8] + [b"", b"com,", b"\xff"]:
            for _, _line in zip(range(32), z.range(k, k + b"\xff")):
                pass
        z.verify()


# ------------------------------------------------------------------ session journals

def fuzz_journal(data: bytes) -> None:
    """A crawl session journal read whole (strict, then skipping damage) and asked everything."""
    path = _file("journal", data)
    for skip in (False, True):
        s = read_session(path, skip_errors=skip)
        s.version, s.positions, s.sessions, s.seeds, s.config, s.software, s.writer_pid
        list(s.all_fields())
        s.groups()
        for i in range(min(len(s), 256)):
            s.entry(i)
            s.fields(i)
        urls = s.urls()[:64]
        for u in urls:
            s.record(u)
            s.lookup(u)
            s.lookup_all(u)
            s.keys_of(u)
        for _, _rec in zip(range(256), s.records()):
            pass
        s.failed(), s.skipped()


# ------------------------------------------------------------------ WACZ / ZIP

class MemBlob:
    """Bytes read by range, as a Blob (warchive.wacz.zipread)."""

    def __init__(self, data: bytes) -> None:
        self.name = "fuzz.wacz"
        self.data = data
        self.size = len(data)

    def read(self, offset: int, n: int) -> bytes:
        return self.data[offset:offset + n]


def fuzz_wacz(data: bytes) -> None:
    """The ZIP directory and every entry (read whole, and by range when stored), then the WACZ:
    package, indexes, pages, hashes."""
    zd = ZipDirectory(MemBlob(data))
    for name, e in list(zd.entries.items())[:64]:
        if e.method == 0:
            zd.read_range(e, 0, min(e.size, 64))
        try:
            zd.read(name, MAX_ENTRY)
        except ArchiveError:   # an entry refused: the WACZ below must still open or refuse
            pass
    with WaczFile(MemBlob(data)) as w:
        for _, src in w.index_sources():
            for _, _line in zip(range(64), src.range(b"", None) if hasattr(src, "range") else ()):
                pass
        w.pages()
        w.members()
        w.verify_hashes()


# ------------------------------------------------------------------ store manifests

def reseal_manifest(data: bytes) -> Optional[bytes]:
    """The manifest JSON with its checksum computed again (None: not a JSON object)."""
    try:
        body: Any = json.loads(data)
    except (ValueError, RecursionError):
        return None
    if not isinstance(body, dict):
        return None
    body.pop("checksum", None)
    try:
        body["checksum"] = hashlib.sha256(canonical(body)).hexdigest()
        return canonical(body)
    except (TypeError, ValueError, RecursionError):
        return None


def fuzz_manifest(data: bytes) -> None:
    """A store manifest parsed (sealed again when the first byte is odd), then its geometry."""
    if not data:
        return
    body = data[1:]
    if data[0] & 1:
        body = reseal_manifest(body) or body
    m = parse_manifest(body, "fuzz/manifest.json")
    for s in range(min(m.stripe_count, 64)):
        m.stripe_start(s), m.stripe_size(s), m.payload_size(s), m.fragment_length(s), m.fragment_offset(s)
    m.stripes_for(0, m.size)
    if parse_manifest(m.to_json(), "again") != m:
        raise AssertionError("a manifest does not read back as itself")

