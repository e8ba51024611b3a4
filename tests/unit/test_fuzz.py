"""Fuzz every kernel: gzip_members, warc_headers, cdx_lines (and surt through the indexer).

The properties hold for any input, not only for the fixtures:

- A damaged archive (bytes flipped, inserted, deleted, truncated; gzip
  members duplicated, swapped, dropped, emptied or merged; `sl` fields, gzip
  header flags, XLEN and FNAME corrupted; garbage between members; a record's
  bytes edited inside a valid member) is read record by record: the records
  before the damage are those of the undamaged file, every yielded payload
  can be read, and the only exceptions are ArchiveError children.
- The indexer (kernel + reference for what it declines) and the pure Python
  reference write the same lines and raise the same error class at the same
  byte, by default, with verify=True, with cdx11=True and with other record
  selections; on damaged files and on generated records with odd heads.
- warc_headers.parse_head, whenever it does not decline, equals
  parse_head_py; the buffers it gets end (or start) at a PROT_NONE page, so
  an over-read faults even without a sanitizer.
- gzip_members.Reader inflates, finds member ends and fails as a small Python
  model of RFC 1952 says (zlib for the deflate data): skip mode trusts an
  `sl` field only when the model finds it consistent, verify mode and streams
  never do, and where both modes finish a member they agree on its end.

The default run does a few hundred examples per property (about 12 s in
all); the ``slow`` versions run the same properties on many more
(``pytest -m slow tests/unit/test_fuzz.py``; WARCHIVE_FUZZ_SCALE multiplies
their counts). Examples are derandomized; WARCHIVE_FUZZ_SEED picks another
sequence. A hang is turned into a traceback and exit by faulthandler; the
input being tried is then the file named in the test's tmp directory
(``fuzz-*``). Under a sanitizer build (CMake option WARCHIVE_SANITIZE) these
tests are the proof that no kernel reads or writes out of bounds.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import hashlib
import io
import json
import logging
import mmap
import os
import random
import struct
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional, Tuple
from unittest import mock

import pytest
from hypothesis import HealthCheck, event, given, note, seed, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

import warcgen
import warchive.warc as ww
from warchive._ext import gzip_members
from warchive._ext import warc_headers
from warchive.errors import ArchiveError, GzipError, TruncatedError
from warchive.index import cdx as cdx_mod
from warchive.index.cdx import FileStats, IndexOptions, _index_python, index_file
from warchive.warc import source as source_mod
from warchive.warc.headers import parse_head, parse_head_py

TESTS = Path(__file__).resolve().parents[1]
WGET = TESTS / "data" / "wget"

SCALE = float(os.environ.get("WARCHIVE_FUZZ_SCALE", "1"))
HANG_SECONDS = 120

# No example database: runs are reproducible from the code alone (derandomized, or the given seed).
_common = dict(deadline=None, database=None, print_blob=True,
               derandomize=not os.environ.get("WARCHIVE_FUZZ_SEED"),
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                      HealthCheck.filter_too_much])


def fast(n: int):
    """Settings of the default run."""
    return settings(max_examples=n, **_common)


def slow(n: int):
    """Settings of the `slow` run (n scaled by WARCHIVE_FUZZ_SCALE)."""
    return settings(max_examples=max(1, int(n * SCALE)), **_common)


def _seeded(fn):
    s = os.environ.get("WARCHIVE_FUZZ_SEED")
    return seed(int(s))(fn) if s else fn


def _event(what: str) -> None:
    if currently_in_test_context():  # the checks also run in plain tests
        event(what)


def _note(what: str) -> None:
    if currently_in_test_context():
        note(what)


@contextlib.contextmanager
def watchdog(seconds: int = HANG_SECONDS):
    """Dump every thread's traceback and exit if one example takes this long (a hang in C)."""
    faulthandler.dump_traceback_later(seconds, exit=True)
    try:
        yield
    finally:
        faulthandler.cancel_dump_traceback_later()


@pytest.fixture(autouse=True, scope="module")
def _quiet_warnings():
    """Empty gzip members are logged as warnings; thousands of them are noise here."""
    log = logging.getLogger("warchive.warc")
    old = log.level
    log.setLevel(logging.ERROR)
    yield
    log.setLevel(old)


# --------------------------------------------------------------------------- seeds

@dataclass
class Seed:
    """An undamaged archive as chunks (one gzip member, or one plain record, each) and how it reads."""
    name: str
    chunks: List[bytes]
    gz: bool
    suffix: str
    records: list = field(default_factory=list)   # signatures of its records (see read_records)
    extents: list = field(default_factory=list)   # where each record's bytes end (next record or EOF)

    @property
    def data(self) -> bytes:
        return b"".join(self.chunks)


def _wget_slice(name: str, first: int, last: int) -> List[bytes]:
    """The first `first` members and the last `last` members of a Wget file (whole members, `sl` kept)."""
    r = gzip_members.Reader(str(WGET / name))
    spans, off = [], 0
    while r.member_begin(off):
        end = r.member_finish()
        spans.append((off, end))
        off = end
    pick = spans[:first] + (spans[-last:] if last else [])
    return [r.read_at(a, b - a) for a, b in pick]


def _sl_members(chunks: List[bytes]) -> List[bytes]:
    return [warcgen.sl_member(zlib.decompress(m, 31)) for m in chunks]


def _build_seeds(d: Path) -> dict:
    base = warcgen._base_recs()
    arc = warcgen.arc_records("fuzz.arc")
    seeds = {
        "gz": Seed("gz", [r.member() for r in base], True, ".warc.gz"),
        "plain": Seed("plain", [r.plain() for r in base], False, ".warc"),
        "sl": Seed("sl", _sl_members([r.member() for r in base]), True, ".warc.gz"),
        "arc_gz": Seed("arc_gz", [warcgen.gzip_member(b) for b, _, _ in arc], True, ".arc.gz"),
        "arc": Seed("arc", [b for b, _, _ in arc], False, ".arc"),
        "wget": Seed("wget", _wget_slice("docs-python-3.11.warc.gz", 7, 2), True, ".warc.gz"),
        "wget_revisits": Seed("wget_revisits", _wget_slice("docs-python-3.11-recrawl.warc.gz", 7, 0), True,
                              ".warc.gz"),
    }
    sink = warcgen.recs_kitchen_sink()
    seeds["sink_gz"] = Seed("sink_gz", [r.member() for r in sink], True, ".warc.gz")
    seeds["sink_plain"] = Seed("sink_plain", [r.plain() for r in sink], False, ".warc")
    for s in seeds.values():
        path = d / ("seed-" + s.name + s.suffix)
        path.write_bytes(s.data)
        recs, err = read_records(str(path), verify=True)
        assert err is None, (s.name, err)
        s.records = recs
        offs = [r[0] for r in recs] + [len(s.data)]
        s.extents = offs[1:]
    return seeds


class Seeds(dict):
    def __repr__(self) -> str:  # hypothesis prints the arguments of a failing example
        return f"<seeds {sorted(self)}>"


@pytest.fixture(scope="module")
def seeds(tmp_path_factory) -> dict:
    return Seeds(_build_seeds(tmp_path_factory.mktemp("fuzz-seeds")))


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """Where each example's input is written (the last one stays there after a hang)."""
    return tmp_path_factory.mktemp("fuzz-work")


SMALL_SEEDS = ["gz", "plain", "sl", "arc_gz", "arc", "wget", "wget_revisits"]
ALL_SEEDS = SMALL_SEEDS + ["sink_gz", "sink_plain"]


# --------------------------------------------------------------------------- reading records

def read_records(src, verify: bool = False, types=None) -> Tuple[list, Optional[tuple]]:
    """Signatures of the records read from src, then (error class, offset) or None.

    Every yielded payload is read; anything but an ArchiveError propagates."""
    recs = []
    try:
        with ww.open(src, verify=verify, types=types) as it:
            for rec in it:
                body = rec.payload.read()
                http = None if rec.http is None else (rec.http.protocol, rec.http.statusline,
                                                      tuple(rec.http.fields))
                fields = tuple(f for f in rec.headers.fields  # ARC records get a random record id
                               if rec.format != "arc" or f[0] != "WARC-Record-ID")
                recs.append((rec.offset, rec.length, rec.type, rec.target_uri, fields, http, len(body),
                             hashlib.sha1(body).hexdigest()))
    except ArchiveError as e:
        return recs, (type(e).__name__, getattr(e, "offset", None))
    return recs, None


def first_difference(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n if len(a) != len(b) else len(a) + 1
    lo, hi = 0, n  # a[:lo] == b[:lo], a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


# --------------------------------------------------------------------------- mutations

# A position: ("abs", k) anywhere (k modulo the size), ("start", i, d) d bytes after the start of chunk i,
# ("end", i, d) d bytes after its end (d <= 0: inside, the trailer of a member).
positions = st.one_of(
    st.tuples(st.just("abs"), st.integers(0, 1 << 24)),
    st.tuples(st.just("start"), st.integers(0, 63), st.integers(0, 48)),
    st.tuples(st.just("end"), st.integers(0, 63), st.integers(-12, 2)),
)

ODD = [b"\x00", b"\r", b"\n", b"\r\n", b"\r\n\r\n", b" ", b"\t", b"\xff", b"\x1f\x8b\x08", b"\x1f\x8b",
       b"WARC/1.0\r\n", b"\x0b", b"\x85", b"\xc2\xa0", b"\xa0", b"0", b"9", b":", b"<", b"%"]
small_bytes = st.one_of(st.sampled_from(ODD), st.binary(min_size=1, max_size=24))
u32 = st.one_of(st.integers(0, 0xFFFFFFFF), st.sampled_from([0, 1, 10, 20, 0xFFFFFFFF, 0x7FFFFFFF]))

byte_ops = st.one_of(
    st.tuples(st.just("flip"), positions, st.integers(1, 255)),
    st.tuples(st.just("set"), positions, st.integers(0, 255)),
    st.tuples(st.just("ins"), positions, small_bytes),
    st.tuples(st.just("del"), positions, st.integers(1, 64)),
    st.tuples(st.just("trunc"), positions),
)
chunk_ops = st.one_of(
    st.tuples(st.just("dup"), st.integers(0, 63)),
    st.tuples(st.just("swap"), st.integers(0, 63), st.integers(0, 63)),
    st.tuples(st.just("drop"), st.integers(0, 63)),
    st.tuples(st.just("garbage"), st.integers(0, 64), small_bytes),
    st.tuples(st.just("empty"), st.integers(0, 64), st.booleans()),
    st.tuples(st.just("merge"), st.integers(0, 63)),
    st.tuples(st.just("sl"), st.integers(0, 63), st.sampled_from(["clen", "ulen", "both"]),
              st.one_of(st.tuples(st.just("delta"), st.integers(-40, 40)), st.tuples(st.just("value"), u32))),
    st.tuples(st.just("flg"), st.integers(0, 63), st.integers(0, 255)),
    st.tuples(st.just("xlen"), st.integers(0, 63), st.integers(0, 0xFFFF)),
    st.tuples(st.just("fname"), st.integers(0, 63), st.binary(max_size=40), st.booleans()),
    st.tuples(st.just("inner"), st.integers(0, 63), byte_ops, st.sampled_from(["keep", "fix", "none"])),
    st.tuples(st.just("clen"), st.integers(0, 63), st.integers(-6, 6), st.sampled_from(["keep", "fix", "none"])),
)
mutations = st.lists(st.one_of(byte_ops, chunk_ops), min_size=1, max_size=3)


def _resolve(p, data_len: int, bounds: List[int]) -> int:
    if data_len == 0:
        return 0
    if p[0] == "abs":
        return p[1] % (data_len + 1)
    n = len(bounds) - 1
    if n <= 0:
        return 0
    i = p[1] % n
    at = bounds[i] + p[2] if p[0] == "start" else bounds[i + 1] + p[2]
    return min(max(at, 0), data_len)


def _bounds(chunks: List[bytes]) -> List[int]:
    out, pos = [0], 0
    for c in chunks:
        pos += len(c)
        out.append(pos)
    return out


def apply_bytes(data: bytes, op, bounds: List[int]) -> bytes:
    kind = op[0]
    at = _resolve(op[1], len(data), bounds)
    if kind == "flip":
        if at >= len(data):
            return data
        return data[:at] + bytes([data[at] ^ op[2]]) + data[at + 1:]
    if kind == "set":
        if at >= len(data):
            return data
        return data[:at] + bytes([op[2]]) + data[at + 1:]
    if kind == "ins":
        return data[:at] + op[2] + data[at:]
    if kind == "del":
        return data[:at] + data[at + op[2]:]
    if kind == "trunc":
        return data[:at]
    raise AssertionError(op)


def _gz_parts(m: bytes):
    """(header, deflate data + trailer) of a well-formed member, or None."""
    if len(m) < 18 or m[:3] != b"\x1f\x8b\x08":
        return None
    flg, pos = m[3], 10
    try:
        if flg & 4:
            pos += 2 + struct.unpack_from("<H", m, 10)[0]
        if flg & 8:
            pos = m.index(b"\0", pos) + 1
        if flg & 16:
            pos = m.index(b"\0", pos) + 1
    except (ValueError, struct.error):
        return None
    if flg & 2:
        pos += 2
    return (m[:pos], m[pos:]) if pos <= len(m) else None


def _sl_offset(m: bytes) -> Optional[int]:
    """Offset of the 8 value bytes of the `sl` subfield in member m."""
    if len(m) < 12 or m[:2] != b"\x1f\x8b" or not m[3] & 4:
        return None
    xlen = struct.unpack_from("<H", m, 10)[0]
    x, xend = 12, min(12 + xlen, len(m))
    while x + 4 <= xend:
        slen = struct.unpack_from("<H", m, x + 2)[0]
        if m[x:x + 2] == b"sl" and slen == 8 and x + 12 <= xend:
            return x + 4
        x += 4 + slen
    return None


def _inflate(m: bytes) -> Optional[bytes]:
    try:
        return zlib.decompress(m, 31)
    except zlib.error:
        return None


def _rewrap(old: bytes, payload: bytes, sl_mode: str) -> bytes:
    """payload in a new member: with a correct `sl` ("fix"), the old member's `sl` values ("keep"), or none."""
    had = _sl_offset(old)
    if sl_mode == "none" or had is None:
        return warcgen.gzip_member(payload, 6)
    if sl_mode == "fix":
        return warcgen.sl_member(payload)
    return warcgen.sl_member(payload, lengths=struct.unpack_from("<II", old, had))


def apply_chunks(chunks: List[bytes], op, gz: bool) -> List[bytes]:
    kind, n = op[0], len(chunks)
    out = list(chunks)
    if kind == "garbage":
        i = op[1] % (n + 1)
        return out[:i] + [op[2]] + out[i:]
    if kind == "empty":
        i = op[1] % (n + 1)
        empty = warcgen.sl_member(b"") if op[2] else warcgen.gzip_member(b"")
        return out[:i] + [empty if gz else b"\r\n"] + out[i:]
    if n == 0:
        return out
    i = op[1] % n
    m = out[i]
    if kind == "dup":
        return out[:i + 1] + [m] + out[i + 1:]
    if kind == "swap":
        j = op[2] % n
        out[i], out[j] = out[j], out[i]
        return out
    if kind == "drop":
        return out[:i] + out[i + 1:]
    if kind == "merge":
        if i + 1 >= n:
            return out
        if not gz:
            return out[:i] + [out[i] + out[i + 1]] + out[i + 2:]
        a, b = _inflate(out[i]), _inflate(out[i + 1])
        if a is None or b is None:
            return out
        return out[:i] + [_rewrap(out[i], a + b, "fix")] + out[i + 2:]
    if kind == "inner" or kind == "clen":
        payload = _inflate(m) if gz else m
        if payload is None:
            return out
        if kind == "inner":
            payload = apply_bytes(payload, op[2], [0, len(payload)])
        else:
            payload = _shift_content_length(payload, op[2])
        out[i] = _rewrap(m, payload, op[3]) if gz else payload
        return out
    if not gz:
        return out
    b = bytearray(m)
    if kind == "sl":
        at = _sl_offset(m)
        if at is None:
            return out
        clen, ulen = struct.unpack_from("<II", b, at)
        how, v = op[3]
        def new(x):
            return (x + v) & 0xFFFFFFFF if how == "delta" else v
        if op[2] in ("clen", "both"):
            clen = new(clen)
        if op[2] in ("ulen", "both"):
            ulen = new(ulen)
        struct.pack_into("<II", b, at, clen, ulen)
    elif kind == "flg" and len(b) > 3:
        b[3] = op[2]
    elif kind == "xlen" and len(b) > 11 and b[3] & 4:
        struct.pack_into("<H", b, 10, op[2])
    elif kind == "fname":
        parts = _gz_parts(m)
        if parts is None or b[3] & 8:
            return out
        head, rest = parts
        fname_at = 10 + (2 + struct.unpack_from("<H", m, 10)[0] if m[3] & 4 else 0)
        name = op[2].replace(b"\0", b"x") + (b"\0" if op[3] else b"")
        b = bytearray(head[:fname_at] + name + head[fname_at:] + rest)
        b[3] |= 8
    out[i] = bytes(b)
    return out


def _shift_content_length(rec: bytes, delta: int) -> bytes:
    head, sep, rest = rec.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    for k, line in enumerate(lines):
        if line.lower().startswith(b"content-length:"):
            try:
                lines[k] = b"Content-Length: " + str(max(0, int(line.split(b":", 1)[1]) + delta)).encode()
            except ValueError:
                pass
            break
    return b"\r\n".join(lines) + sep + rest


def mutate(s: Seed, ops) -> bytes:
    """The seed's bytes after ops: chunk (member/record) operations first, then byte operations."""
    chunks = list(s.chunks)
    for op in ops:
        if op[0] not in BYTE_OPS:
            chunks = apply_chunks(chunks, op, s.gz)
    data, bounds = b"".join(chunks), _bounds(chunks)
    for op in ops:
        if op[0] in BYTE_OPS:
            data = apply_bytes(data, op, bounds)
    return data


BYTE_OPS = ("flip", "set", "ins", "del", "trunc")


def write_case(work: Path, s: Seed, data: bytes) -> str:
    path = work / ("fuzz-" + s.name + s.suffix)
    path.write_bytes(data)
    return str(path)


# --------------------------------------------------------------------------- 1. reading damaged archives

def expected_prefix(s: Seed, data: bytes) -> list:
    """Records of the seed that lie wholly before the first changed byte."""
    d = first_difference(s.data, data)
    return [r for r, end in zip(s.records, s.extents) if end <= d]


@contextlib.contextmanager
def windows(w: Optional[int]):
    """Make the reader and the indexer kernel use a window of w bytes (None: their default)."""
    if w is None:
        yield
        return
    real_reader, real_ix = gzip_members.Reader, cdx_mod.cdx_lines.LineIndexer

    def reader(source, offset=None, verify=False, window=None, length=0):   # the window asked for is overridden
        return real_reader(source, offset=offset, verify=verify, window=w, length=length)

    class _Ix:
        OK, EOF, SLOW = cdx_mod.cdx_lines.OK, cdx_mod.cdx_lines.EOF, cdx_mod.cdx_lines.SLOW

        @staticmethod
        def LineIndexer(*a, **kw):
            return real_ix(*a, **dict(kw, window=w))   # (the window asked for, if any, overridden)

    with mock.patch.object(source_mod, "Reader", reader), \
            mock.patch.object(cdx_mod, "cdx_lines", _Ix):
        yield


window_sizes = st.one_of(st.none(), st.sampled_from([1, 7, 64, 333, 4096]))


def check_reader(seeds, work, name, ops, w):
    s = seeds[name]
    data = mutate(s, ops)
    path = write_case(work, s, data)
    want = expected_prefix(s, data)
    _note(f"{len(data)} bytes; the first {len(want)} records must be read as in the seed")
    with watchdog(), windows(w):
        results = {
            "path": read_records(path),
            "path verify": read_records(path, verify=True),
            "stream": read_records(io.BytesIO(data)),
        }
    for mode, (recs, err) in results.items():
        _note(f"{mode}: {len(recs)} records, error {err}")
        assert recs[:len(want)] == want, mode
    # verify mode and a stream never trust `sl`: they read the same
    assert results["path verify"] == results["stream"]
    _event("error" if results["path"][1] else "no error")


@fast(800)
@given(name=st.sampled_from(SMALL_SEEDS), ops=mutations, w=window_sizes)
def test_reader_on_damaged_archives(seeds, work, name, ops, w):
    check_reader(seeds, work, name, ops, w)


@pytest.mark.slow
@_seeded
@slow(25000)
@given(name=st.sampled_from(ALL_SEEDS), ops=mutations, w=window_sizes)
def test_reader_on_damaged_archives_slow(seeds, work, name, ops, w):
    check_reader(seeds, work, name, ops, w)


# --------------------------------------------------------------------------- 2. kernel indexer vs reference

def _quiet(msg: str) -> None:
    pass


def run_index(fn) -> Tuple[bytes, Optional[tuple]]:
    out: List[bytes] = []
    try:
        fn(out.append)
    except ArchiveError as e:
        return b"".join(out), (type(e).__name__, getattr(e, "offset", None))
    return b"".join(out), None


def index_both(path: str, opts: IndexOptions, said: Optional[Tuple[List[str], List[str]]] = None):
    """(lines, error) of the kernel path and of the pure Python path; with said, the messages
    each reported (warnings about defects, skipped records) go into its two lists."""
    name = os.path.basename(path)
    stats: List[FileStats] = []
    k_opts, p_opts = (opts, opts) if said is None else (opts.copy(report=said[0].append),
                                                        opts.copy(report=said[1].append))
    kernel = run_index(lambda w: stats.append(index_file(path, w, k_opts)))
    if stats and stats[0].records > stats[0].slow:
        _event("the kernel read records itself")
    python = run_index(lambda w: _index_python(path, w, p_opts, name, FileStats()))
    return kernel, python


index_modes = st.fixed_dictionaries({
    "verify": st.booleans(),
    "strict": st.booleans(),
    "cdx11": st.booleans(),
    "records": st.sampled_from([None, None, "all", ("request", "response"), ("revisit",), ("warcinfo", "metadata"),
                                cdx_mod.DEFAULT_RECORDS]),
})


WARC_VERSIONS = (b"warc/1.1", b"warc/1.0", b"warc/0.17", b"warc/0.18")


def quick_type(head: bytes) -> Optional[bytes]:
    """The record type the kernel reads from a member's first 64 bytes (version line, then WARC-Type)."""
    nl = head.find(b"\n")
    if nl < 0 or not head[:nl].rstrip(b"\r ").lower().startswith(WARC_VERSIONS):
        return None
    rest = head[nl + 1:]
    nl2 = rest.find(b"\n")
    if nl2 < 0 or rest[:10].lower() != b"warc-type:":
        return None
    t = rest[10:nl2].lstrip(b" ").rstrip(b"\r ")
    return t if all(0x20 < c < 0x7F for c in t) else None


def skipped_unread(path: str, off: int, records) -> Optional[int]:
    """End of the member at off when the indexer skips it without reading its record (verify off):
    a type it does not index, told by the first 64 bytes, and a consistent `sl` field. Else None."""
    if records == "all":
        return None
    r = gzip_members.Reader(path)
    try:
        if not r.member_begin(off):
            return None
        t = quick_type(r.member_head(64))
        wanted = cdx_mod.DEFAULT_RECORDS if records is None else tuple(records)
        if t is None or t.decode() in wanted:
            return None
        end = r.member_finish()
        return end if r.member_trusted else None
    except ArchiveError:
        return None
    finally:
        r.close()


def python_from(path: str, opts: IndexOptions, offset: int) -> Tuple[bytes, Optional[tuple]]:
    """The reference's lines for the records from offset on (as _index_python, which starts at 0),
    offset being where a record ended: bytes there that are no record are a defect, as they are to
    the kernel path there."""
    def run(write):
        with ww.open(path, verify=opts.verify, strict=opts.strict, on_defect=lambda d: None) as it:
            it.seek(offset, resync=True)
            for line in cdx_mod._plain_lines(it, os.path.basename(path), opts):
                write(line)
    return run_index(run)


def trusted_end(path: str, off: int) -> Optional[int]:
    """End of the member at off when skip mode trusts its `sl` field (its CRC is then never checked)."""
    r = gzip_members.Reader(path)
    try:
        if not r.member_begin(off):
            return None
        end = r.member_finish()
        return end if r.member_trusted else None
    except ArchiveError:
        return None
    finally:
        r.close()


def line_offset(line: bytes, cdx11: bool) -> int:
    if cdx11:
        return int(line.split(b" ")[-2])
    return int(json.loads(line.split(b" ", 2)[2])["offset"])


def check_index(path: str, mode: dict):
    opts = IndexOptions(report=_quiet, **mode)
    said: Tuple[List[str], List[str]] = ([], [])
    with watchdog():
        (k_lines, k_err), (p_lines, p_err) = index_both(path, opts, said)
        documented = False
        # Two documented differences (docs/format.md, "Wget's sl extra field"), both without verify:
        # - a record that is not indexed is skipped on a consistent `sl` without being read;
        # - a member whose `sl` is consistent is not inflated to its end, so its CRC-32 and ISIZE are
        #   checked only when the heads read reach its end; the reference reads more of a member
        #   (1 KiB first, the kernel 832 bytes) and may see a mismatch the kernel does not.
        # Where the reference fails on such a member, go on after it as the kernel does (dropping the
        # kernel's line for the member in the second case: the reference cannot make it).
        while (k_lines, k_err) != (p_lines, p_err) and not opts.verify and p_err is not None \
                and p_err[1] is not None:
            end = skipped_unread(path, p_err[1], opts.records)
            if end is not None:
                _event("documented: an unindexed record skipped unread on sl")
            elif p_err[0] in ("GzipError", "TruncatedError") and (end := trusted_end(path, p_err[1])) is not None:
                _event("documented: a member trusted on sl, its CRC-32 unchecked")
                k_lines = b"".join(x for x in k_lines.splitlines(keepends=True)
                                   if line_offset(x, opts.cdx11) != p_err[1])
            else:
                break
            documented = True
            more, p_err = python_from(path, opts, end)
            p_lines += more
    _note(f"kernel: {k_err}, python: {p_err}")
    _note(f"kernel said {said[0]}, python said {said[1]}")
    assert k_err == p_err
    assert len(set(said[0])) == len(said[0])   # each defect once
    if not documented:
        if opts.verify:   # the same defects, in the same order, by both paths
            assert said[0] == said[1]
        else:             # ... less those of records the kernel skipped unread on `sl` (documented)
            rest = iter(said[1])
            assert all(any(m == n for n in rest) for m in said[0]), "kernel's messages not in the reference's"
    if said[0]:
        _event("defects reported")
    assert k_lines.decode("utf-8", "replace").splitlines() == p_lines.decode("utf-8", "replace").splitlines()
    assert k_lines == p_lines


@fast(600)
@given(name=st.sampled_from(SMALL_SEEDS), ops=mutations, mode=index_modes, w=window_sizes)
def test_indexer_agrees_with_reference_on_damaged_archives(seeds, work, name, ops, mode, w):
    s = seeds[name]
    path = write_case(work, s, mutate(s, ops))
    with windows(w):
        check_index(path, mode)


@pytest.mark.slow
@_seeded
@slow(20000)
@given(name=st.sampled_from(ALL_SEEDS), ops=mutations, mode=index_modes, w=window_sizes)
def test_indexer_agrees_with_reference_on_damaged_archives_slow(seeds, work, name, ops, mode, w):
    s = seeds[name]
    path = write_case(work, s, mutate(s, ops))
    with windows(w):
        check_index(path, mode)


# --------------------------------------------------------------------------- 3. warc_headers.parse_head

PAGE = mmap.PAGESIZE
_libc = ctypes.CDLL(None, use_errno=True)
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]


class Guarded:
    """Bytes placed right before (or right after) a PROT_NONE page: reading past them faults."""

    def __init__(self, size: int = 1 << 16) -> None:
        self.n = -(-size // PAGE) * PAGE
        self.mm = mmap.mmap(-1, self.n + 2 * PAGE)
        self.addr = ctypes.addressof(ctypes.c_char.from_buffer(self.mm))
        for at in (self.addr, self.addr + PAGE + self.n):
            if _libc.mprotect(at, PAGE, 0) != 0:
                raise OSError(ctypes.get_errno(), "mprotect")

    def view(self, data: bytes, at_end: bool = True) -> memoryview:
        assert len(data) <= self.n
        start = PAGE + (self.n - len(data) if at_end else 0)
        self.mm[start:start + len(data)] = data
        return memoryview(self.mm)[start:start + len(data)]


_guarded: List[Guarded] = []


def guarded(data: bytes, at_end: bool = True) -> memoryview:
    if not _guarded:
        _guarded.append(Guarded())
    return _guarded[0].view(data, at_end)


# Pieces of head lines: mostly what heads are made of, plus every byte whose meaning depends on
# decoding (controls, CR alone, DEL, C1 controls, NBSP in Latin-1 and in UTF-8, other Unicode spaces,
# invalid UTF-8).
HEAD_PIECES = [
    b"WARC/1.0", b"WARC/1.1", b"warc/0.17", b"HTTP/1.1 200 OK", b"HTTP/1.0", b"GET / HTTP/1.1", b"WARC-Type",
    b"WARC-Target-URI", b"Content-Length", b"Content-Type", b"WARC-Date", b"WARC-Payload-Digest", b"X-Odd",
    b": ", b":", b" :", b"::", b"response", b"text/html; charset=utf-8", b"http://example.com/a b",
    b"<http://example.com/>", b"2024-01-02T03:04:05Z", b"123", b"0",
    b" ", b"  ", b"\t", b"\r", b"\r\r", b"\x00", b"\x01", b"\x0b", b"\x0c", b"\x1c", b"\x1f", b"\x7f",
    b"\x80", b"\x85", b"\xa0", b"\xc2\xa0", b"\xc2\x85", b"\xe2\x80\xa8", b"\xe3\x80\x80", b"\xe2\x80\x83",
    b"\xc3\xa9", b"\xe9", b"\xff", b"\xed\xa0\x80", b"\xf0\x9f\x98\x80", b"\xc3", b"\xf4\x90\x80\x80",
]
CLEAN_PIECES = HEAD_PIECES[:HEAD_PIECES.index(b" ") + 3]  # printable ASCII, spaces and tabs
EOLS = [b"\r\n", b"\r\n", b"\n", b"\r\r\n", b" \r\n", b"\t\n", b"\xa0\n", b"\xc2\xa0\r\n", b"\x0b\n", b""]
CLEAN_EOLS = [b"\r\n", b"\n", b" \r\n", b"\t\n", b" \t \n"]
BLANKISH = [b"", b" ", b"\t", b"\r", b"\xa0", b"\xc2\xa0", b"\x0b", b"\x0c", b"\x1c", b"\x85", b"\xc2\x85",
            b"\xe2\x80\xa8", b" \xa0 ", b"\x00"]


def _line(pieces):
    return st.lists(st.sampled_from(pieces), max_size=6).map(b"".join)


def _field(pieces):
    return st.tuples(st.sampled_from(HEAD_PIECES[5:16]), st.sampled_from([b": ", b":", b" :\t", b""]),
                     _line(pieces)).map(b"".join)


def _lines(pieces, blank):
    line = _line(pieces)
    cont = st.tuples(st.sampled_from([b" ", b"\t", b"  \t"]), line).map(b"".join)
    return line, st.one_of(_field(pieces), _field(pieces), _field(pieces), cont, line, st.sampled_from(blank))


_HEAD_LINES = {0: _lines(HEAD_PIECES, BLANKISH), 1: _lines(CLEAN_PIECES, [b"", b" ", b"\t"])}
_FIRST = st.sampled_from([b"WARC/1.0", b"HTTP/1.1 200 OK", b"GET / HTTP/1.1", b""])
_ODD = HEAD_PIECES[HEAD_PIECES.index(b"\r"):] + BLANKISH


@st.composite
def heads(draw) -> bytes:
    """Mostly-valid heads: printable lines, sometimes with one odd byte or line, or odd everywhere."""
    clean = draw(st.integers(0, 2))  # 0: odd everywhere, 1: one odd thing, 2: clean
    line, any_line = _HEAD_LINES[min(clean, 1)]
    eols = st.sampled_from(EOLS if clean == 0 else CLEAN_EOLS)
    lines = [draw(st.one_of(_FIRST, line))] + draw(st.lists(any_line, max_size=8))
    buf = b"".join(x + draw(eols) for x in lines)
    if clean == 1 and buf:  # one odd byte sequence anywhere
        at = draw(st.integers(0, len(buf)))
        buf = buf[:at] + draw(st.sampled_from(_ODD)) + buf[at:]
    if draw(st.booleans()):
        buf += draw(st.sampled_from([b"\r\n", b"\n", b"\r\n\r\n"]))
        buf += draw(st.binary(max_size=16))  # what follows the head (a body)
    if draw(st.integers(0, 3)) == 0:
        buf = buf[:draw(st.integers(0, len(buf)))]
    return buf


def check_parse_head(buf: bytes, final: bool, pad: bytes):
    for at_end in (True, False):
        got = warc_headers.parse_head(guarded(buf, at_end), final)
        ref = parse_head_py(buf, 0, len(buf), final)
        if got is None:
            _event("declined")
            continue
        if got is False:
            assert ref is None
            _event("need more")
            continue
        _event("parsed")
        assert ref is not None
        assert got == (ref.status, ref.fields, ref.end, ref.total_len)
    # the wrapper (kernel, else reference) on a slice of a bigger buffer
    whole = pad + buf + pad
    h = parse_head(whole, len(pad), len(pad) + len(buf), final)
    ref = parse_head_py(whole, len(pad), len(pad) + len(buf), final)
    assert (h is None) == (ref is None)
    if h is not None:
        assert (h.status, h.fields, h.end, h.total_len) == (ref.status, ref.fields, ref.end, ref.total_len)


@fast(1000)
@given(buf=heads(), final=st.booleans(), pad=st.binary(max_size=4))
def test_parse_head_kernel_equals_reference(buf, final, pad):
    check_parse_head(buf, final, pad)


@pytest.mark.slow
@_seeded
@slow(100000)
@given(buf=heads(), final=st.booleans(), pad=st.binary(max_size=4))
def test_parse_head_kernel_equals_reference_slow(buf, final, pad):
    check_parse_head(buf, final, pad)


@fast(300)
@given(buf=st.binary(max_size=300), final=st.booleans())
def test_parse_head_on_random_bytes(buf, final):
    check_parse_head(buf, final, b"")


# --------------------------------------------------------------------------- 4. generated records, odd heads

def _cased(name: bytes):
    return st.sampled_from([name, name.lower(), name.upper()])


URIS = [b"http://example.com/", b"https://www.Example.com:443/a/./b/../c?b=2&a=1#f", b"<http://example.com/x>",
        b"http://example.com/a b", b"<http://example.com/sp ace>", b"http://b\xc3\xbccher.example/",
        b"http://xn--bcher-kva.example/", b"dns:example.com", b"ftp://example.com/f", b"example.com/nohost",
        b"http://[::1]:8080/", b"http://x/\"q\"\\b", b"http://x/%zz%41", b"mailto:A@B.com", b"urn:x:y", b"",
        b"http://x:99999/", b"http://0177.0.0.1/", b"filedesc://x.arc", b"<>", b"http:", b"HTTP://X/",
        b"http://www12.example.com/?jsessionid=0123456789abcdef0123456789abcdef", b"http://x/\xe9"]
DATES = [b"2024-01-02T03:04:05Z", b"2024-01-02T03:04:05.123456Z", b"2024-02-29T00:00:00Z",
         b"2023-02-29T00:00:00Z", b"2024-13-01T00:00:00Z", b"2024-01-02T03:04:05", b"2024-01-02",
         b"20240102030405", b"0999-01-01T00:00:00Z", b"2024-01-02T24:00:00Z", b"2024-01-02T03:04:60Z",
         b"2024-01-02 03:04:05Z", b"2024-01-02T03:04:05.Z", b"", b"2024-1-2T3:4:5Z", b"9999-12-31T23:59:59Z",
         b"2024-01-02T03:04:05.1234567890Z", b"x"]
WTYPES = [b"response", b"response", b"request", b"revisit", b"resource", b"metadata", b"warcinfo", b"conversion",
          b"Response", b"", b"odd type"]
CTYPES = [b"application/http; msgtype=response", b"application/warc-fields", b"text/plain", b"",
          b"text/html;charset=utf-8", b" image/png ", b"text/html charset", b"a\"b\\c", b"\xe9t\xe9"]
DIGESTS = [b"sha1:AAAABBBBCCCCDDDDEEEEFFFFGGGGHHHH", b"", b"sha1:AB CD", b"md5:x:y", b"sha1:", b"\"q\""]
STATUS_LINES = [b"HTTP/1.1 200 OK", b"HTTP/1.0 404 Not Found", b"HTTP/1.1  301  Moved", b"HTTP/1.1", b"",
                b"GET /x HTTP/1.1", b"POST /form HTTP/1.1", b"200 OK", b"HTTP/1.1 200", b" HTTP/1.1 200 OK",
                b"HTTP/1.1 2\xe900 OK"]
HTTP_CTYPES = [b"text/html", b"text/html; charset=utf-8", b"", b" text/plain", b"a;b c", b"\xc3\xa9/x",
               b"application/x-www-form-urlencoded"]
SEPS = [b": ", b":", b" : ", b":\t", b":  "]


@st.composite
def warc_records(draw) -> bytes:
    rtype = draw(st.sampled_from(WTYPES))
    fields = [(b"WARC-Type", rtype)] if draw(st.integers(0, 9)) else []
    if draw(st.integers(0, 7)):
        fields.append((b"WARC-Target-URI", draw(st.sampled_from(URIS))))
        if draw(st.integers(0, 9)) == 0:
            fields.append((b"WARC-Target-URI", draw(st.sampled_from(URIS))))
    if draw(st.integers(0, 9)):
        fields.append((b"WARC-Date", draw(st.sampled_from(DATES))))
    if draw(st.integers(0, 2)):
        fields.append((b"Content-Type", draw(st.sampled_from(CTYPES))))
    for _ in range(draw(st.integers(0, 2))):
        fields.append((b"WARC-Payload-Digest", draw(st.sampled_from(DIGESTS))))
    if draw(st.booleans()):
        fields.append((b"WARC-Record-ID", b"<urn:uuid:00000000-0000-0000-0000-000000000000>"))
    http = draw(st.booleans()) if rtype in (b"response", b"request", b"revisit") else draw(st.integers(0, 9)) == 0
    if http:
        eol = draw(st.sampled_from([b"\r\n", b"\r\n", b"\n"]))
        hfields = []
        if draw(st.integers(0, 3)):
            hfields.append((b"Content-Type", draw(st.sampled_from(HTTP_CTYPES))))
        if draw(st.booleans()):
            hfields.append((b"Server", b"fuzz"))
        block = (draw(st.sampled_from(STATUS_LINES)) + eol
                 + b"".join(draw(_cased(k)) + draw(st.sampled_from(SEPS)) + v + eol for k, v in hfields)
                 + draw(st.sampled_from([eol, eol, b""])) + draw(st.binary(max_size=40)))
    else:
        block = draw(st.one_of(st.binary(max_size=60), st.just(b"software: fuzz\r\nformat: WARC\r\n")))
    if draw(st.integers(0, 4)) == 0:
        block = b""
    clen = draw(st.sampled_from([b"=", b"=", b"=", b"=", b"-1", b"+1", b" =", b"0=", b"+=", b"x", b"99999999999",
                                 b"-", None]))
    if clen is not None:
        n = len(block)
        value = {b"=": str(n), b"-1": str(max(0, n - 1)), b"+1": str(n + 1), b" =": f" {n} ", b"0=": f"0{n}",
                 b"+=": f"+{n}", b"-": f"-{n}"}.get(clen, clen.decode()).encode()
        fields.insert(draw(st.integers(0, len(fields))), (b"Content-Length", value))
    fields = draw(st.permutations(fields)) if draw(st.integers(0, 3)) == 0 else fields
    lines = [draw(_cased(k)) + draw(st.sampled_from(SEPS)) + v for k, v in fields]
    if lines and draw(st.integers(0, 5)) == 0:  # one odd thing in one line
        k = draw(st.integers(0, len(lines) - 1))
        at = draw(st.integers(0, len(lines[k])))
        lines[k] = lines[k][:at] + draw(st.sampled_from(_ODD + [b"\r\n ", b"\n\t", b"\r\nX-No-Colon"])) + lines[k][at:]
    version = draw(st.sampled_from([b"WARC/1.0", b"WARC/1.0", b"WARC/1.1", b"WARC/0.17", b"warc/1.0", b"WARC/1.0 ",
                                    b"WARC/2.0", b"WARC/1.0\t"]))
    eol = draw(st.sampled_from([b"\r\n", b"\r\n", b"\n"]))
    return version + eol + b"".join(x + eol for x in lines) + eol + block + b"\r\n\r\n"


def pack(recs: List[bytes], how: str) -> bytes:
    if how == "plain":
        return b"".join(recs)
    if how == "gz":
        return b"".join(warcgen.gzip_member(r, 6) for r in recs)
    if how == "sl":
        return b"".join(warcgen.sl_member(r) for r in recs)
    # sl fields with the right compressed length but an uncompressed length the head agrees with only if lucky
    return b"".join(warcgen.sl_member(r, lengths=(len(warcgen.sl_member(r)), len(r) + 4)) for r in recs)


def check_generated(work: Path, recs: List[bytes], how: str, mode: dict):
    data = pack(recs, how)
    path = work / ("fuzz-generated" + (".warc" if how == "plain" else ".warc.gz"))
    path.write_bytes(data)
    check_index(str(path), mode)
    with watchdog():
        a, b = read_records(str(path), verify=True), read_records(io.BytesIO(data))
        read_records(str(path))
    assert a == b


@fast(300)
@given(recs=st.lists(warc_records(), min_size=1, max_size=5), how=st.sampled_from(["plain", "gz", "sl", "sl_bad"]),
       mode=index_modes)
def test_indexer_agrees_with_reference_on_generated_records(work, recs, how, mode):
    check_generated(work, recs, how, mode)


@pytest.mark.slow
@_seeded
@slow(20000)
@given(recs=st.lists(warc_records(), min_size=1, max_size=5), how=st.sampled_from(["plain", "gz", "sl", "sl_bad"]),
       mode=index_modes)
def test_indexer_agrees_with_reference_on_generated_records_slow(work, recs, how, mode):
    check_generated(work, recs, how, mode)


# --------------------------------------------------------------------------- 5. gzip_members.Reader vs a model

HEADER_MAX = 64 * 1024
_WORDS = [b"the ", b"archive ", b"<p>", b"</p>\n", b"WARC/1.0\r\n", b"Content-Length: ", b"0123456789", b"\r\n",
          b"gzip ", b"member ", b"\x00\xff", b"http://example.com/"]
_rng = random.Random(1952)
TEXT = b"".join(_rng.choice(_WORDS) for _ in range(220000))[:1 << 20]   # compressible, 1 MiB


@dataclass
class Member:
    """What RFC 1952 (and the `sl` rule of docs/format.md) says about the bytes at one offset."""
    status: str                        # "eof", "bad header", "ok"
    error: Optional[str] = None        # error class for a bad header or bad body
    hlen: int = 0
    sl: Optional[Tuple[int, int]] = None
    body_ok: bool = False
    payload: bytes = b""               # whole payload when body_ok, else what inflates before the damage
    end: int = -1                      # member end when body_ok
    sl_consistent: bool = False        # skip mode may trust `sl` (file input, verify off)


def model_member(data: bytes, off: int) -> Member:
    p = data[off:off + HEADER_MAX]
    n = len(p)
    if n == 0:
        return Member("eof")

    def trunc():
        return Member("bad header", "GzipError" if n >= HEADER_MAX else "TruncatedError")
    if n < 10:
        return Member("bad header", "TruncatedError")
    if p[0] != 0x1F or p[1] != 0x8B or p[2] != 8 or p[3] & 0xE0:
        return Member("bad header", "GzipError")
    flg, pos, sl = p[3], 10, None
    if flg & 4:
        if pos + 2 > n:
            return trunc()
        xlen = p[pos] | p[pos + 1] << 8
        pos += 2
        if pos + xlen > n:
            return trunc()
        x, xend = pos, pos + xlen
        while x + 4 <= xend:
            slen = p[x + 2] | p[x + 3] << 8
            if x + 4 + slen > xend:
                break
            if p[x:x + 2] == b"sl" and slen == 8:
                sl = struct.unpack_from("<II", p, x + 4)
            x += 4 + slen
        pos = xend
    for bit in (8, 16):
        if flg & bit:
            z = p.find(b"\0", pos)
            if z < 0:
                return trunc()
            pos = z + 1
    if flg & 2:
        pos += 2
    if pos > n:
        return trunc()
    m = Member("ok", hlen=pos, sl=sl)
    if sl is not None and sl[0] >= pos + 10:
        end = off + sl[0]
        rest = len(data) - (end - 8)
        m.sl_consistent = (rest >= 8 and struct.unpack_from("<I", data, end - 4)[0] == sl[1]
                           and (rest == 8 or (rest >= 11 and data[end:end + 3] == b"\x1f\x8b\x08")))
    d = zlib.decompressobj(-15)
    out, i, step = [], off + pos, 512
    try:
        while not d.eof and i < len(data):
            out.append(d.decompress(data[i:i + step]))
            i += step
    except zlib.error:
        m.error, m.payload = "GzipError", b"".join(out)
        return m
    m.payload = b"".join(out)
    if not d.eof:
        m.error = "TruncatedError"
        return m
    tend = min(i, len(data)) - len(d.unused_data)
    trailer = data[tend:tend + 8]
    if len(trailer) < 8:
        m.error = "TruncatedError"
    elif struct.unpack("<II", trailer) != (zlib.crc32(m.payload), len(m.payload) & 0xFFFFFFFF):
        m.error = "GzipError"
    else:
        m.body_ok, m.end = True, tend + 8
    return m


@st.composite
def gz_members(draw) -> bytes:
    size = draw(st.one_of(st.integers(0, 300), st.integers(0, 5000),
                          st.sampled_from([65535, 65536, 65537, 262143, 262145, 300000]),
                          st.integers(60000, 140000)))
    if draw(st.booleans()):
        at = draw(st.integers(0, len(TEXT) - size))
        payload = TEXT[at:at + size]
    else:
        payload = random.Random(draw(st.integers(0, 1 << 30))).randbytes(min(size, 70000))
    c = zlib.compressobj(draw(st.sampled_from([0, 1, 6, 9])), zlib.DEFLATED, -15)
    deflated = c.compress(payload) + c.flush()
    sub = []
    sl = draw(st.sampled_from(["none", "right", "right", "clen", "ulen", "random", "two"]))
    if sl != "none":
        sub.append(b"sl\x08\x00" + b"\0" * 8)
    sub += draw(st.lists(st.tuples(st.sampled_from([b"AB", b"sl", b"\0\0"]), st.binary(max_size=12))
                         .map(lambda t: t[0] + struct.pack("<H", len(t[1])) + t[1]), max_size=2))
    if sl == "two":
        sub.append(b"sl\x08\x00" + b"\0" * 8)
    flg = draw(st.integers(0, 31)) | (4 if sl != "none" else 0)
    head = bytearray(b"\x1f\x8b\x08" + bytes([flg]) + b"\0\0\0\0\0\x03")
    sl_at = []
    if flg & 4:
        extra = b"".join(sub)
        head += struct.pack("<H", len(extra))
        x = len(head)
        for s_ in sub:
            if s_[:2] == b"sl" and len(s_) == 12:
                sl_at.append(x + 4)
            x += len(s_)
        head += extra
    if flg & 8:
        head += draw(st.binary(max_size=20)).replace(b"\0", b"n") + b"\0"
    if flg & 16:
        head += draw(st.binary(max_size=20)).replace(b"\0", b"c") + b"\0"
    if flg & 2:
        head += struct.pack("<H", zlib.crc32(bytes(head)) & 0xFFFF)
    total = len(head) + len(deflated) + 8
    values = {"right": (total, len(payload)), "two": (total, len(payload)),
              "clen": (total + draw(st.integers(-30, 30)), len(payload)),
              "ulen": (total, len(payload) + draw(st.integers(-3, 3))),
              "random": (draw(u32), draw(u32))}.get(sl)
    for at in sl_at if values is not None else ():  # (a random subfield may be an `sl` by chance)
        struct.pack_into("<II", head, at, values[0] & 0xFFFFFFFF, values[1] & 0xFFFFFFFF)
    return bytes(head) + deflated + struct.pack("<II", zlib.crc32(payload), len(payload) & 0xFFFFFFFF)


@st.composite
def gz_streams(draw) -> bytes:
    members = draw(st.lists(gz_members(), min_size=1, max_size=4))
    if draw(st.integers(0, 3)) == 0:
        k = draw(st.integers(0, len(members)))
        members.insert(k, draw(small_bytes))
    data, bounds = b"".join(members), _bounds(members)
    for op in draw(st.lists(byte_ops, max_size=2)):
        data = apply_bytes(data, op, bounds)
    return data


# what to do with each member: read its head, read forward, then finish (or inflate it whole)
member_plans = st.tuples(
    st.one_of(st.just(0), st.integers(1, 2000), st.integers(60000, 70000)),           # head bytes
    st.lists(st.tuples(st.integers(0, 70000), st.integers(1, 300000)), max_size=3),   # (gap, n) reads
    st.one_of(st.none(), st.integers(0, 2 ** 20)),                                    # None: finish; else whole(keep)
    st.one_of(st.none(), st.integers(1, 70000)),                                      # read [0, n) after the end
)


def _source(kind: str, data: bytes, path: str):
    if kind == "path":
        return path
    if kind == "stream":
        return io.BytesIO(data)
    return open(path, "rb")  # a file object with a descriptor: read with pread


def walk(data: bytes, path: str, kind: str, verify: bool, plans, window) -> List[Tuple[int, int]]:
    """Go member by member as the model says; return [(offset, end)] of the members finished."""
    src = _source(kind, data, path)
    kw = {} if window is None else {"window": window}
    r = gzip_members.Reader(src, verify=verify, **kw)
    ends: List[Tuple[int, int]] = []
    off = 0
    try:
        for k in range(8):
            head_n, reads, whole, after = plans[k % len(plans)]
            m = model_member(data, off)
            _note(f"{kind} verify={verify}: member at {off}: {m.status} {m.error} sl={m.sl} "
                 f"consistent={m.sl_consistent} end={m.end}")
            try:
                began = r.member_begin(off)
            except (GzipError, TruncatedError) as e:
                assert m.status == "bad header" and type(e).__name__ == m.error, e
                return ends
            if m.status == "eof":
                assert began is False
                return ends
            assert m.status == "ok" and began is True
            assert r.member_sl == m.sl
            try:
                if head_n:
                    got = r.member_head(head_n)
                    _check_bytes(m, got, 0, head_n, exact=True)
                pos = 0
                for gap, n in reads:
                    pos += gap
                    got = r.member_read(pos, n)
                    _check_bytes(m, got, pos, n, exact=True)
                    pos += len(got)
                end = r.member_finish() if whole is None else r.member_whole(whole)
            except (GzipError, TruncatedError) as e:
                assert m.error is not None, e
                if m.body_ok:  # never: a sound member raises nothing
                    raise
                assert type(e).__name__ == m.error, (e, m.error)
                _event(f"member error {m.error}")
                return ends
            if r.member_trusted:
                assert m.sl_consistent and not verify and kind != "stream" and whole is None
                assert end == off + m.sl[0]
                _event("sl trusted")
            else:
                assert m.body_ok, f"member at {off} ended at {end} but {m.error}"
                assert end == m.end
                if after is not None:  # only the bytes kept by finish/whole (its head) are certain
                    try:
                        _check_bytes(m, r.member_read(0, after), 0, after, exact=False)
                    except GzipError as e:  # the member streamed past 0 and cannot go back
                        assert e.problem == "stream went backwards", e
            if r.member_trusted and m.body_ok and after is not None:
                _check_bytes(m, r.member_read(0, after), 0, after, exact=True)
            ends.append((off, end))
            off = end
    finally:
        r.close()
        if kind == "fileobj":
            src.close()
    return ends


def _check_bytes(m: Member, got: bytes, pos: int, n: int, exact: bool):
    """got must be the member's payload at pos (all n bytes, or up to its end, when exact)."""
    assert len(got) <= n
    if m.body_ok:
        want = m.payload[pos:pos + n]
        assert got == want if exact else want.startswith(got)
    else:  # only what inflates before the damage is known
        k = max(0, min(len(got), len(m.payload) - pos))
        assert got[:k] == m.payload[pos:pos + k]


def check_gzip_reader(work: Path, data: bytes, plans, window):
    path = str(work / "fuzz-members.gz")
    Path(path).write_bytes(data)
    with watchdog():
        skip = walk(data, path, "path", False, plans, window)
        verify = walk(data, path, "path", True, plans, window)
        walk(data, path, "stream", False, plans, window)
        walk(data, path, "fileobj", False, plans, window)
    # where both modes finished the same member, they agree on its end
    for (a, ea), (b, eb) in zip(skip, verify):
        if a != b:
            break
        assert ea == eb, f"member at {a}: skip mode ends it at {ea}, verify mode at {eb}"


@fast(200)
@given(data=gz_streams(), plans=st.lists(member_plans, min_size=1, max_size=3),
       window=st.sampled_from([None, None, 1, 100, 4096, 65536]))
def test_gzip_reader_against_model(work, data, plans, window):
    check_gzip_reader(work, data, plans, window)


@pytest.mark.slow
@_seeded
@slow(20000)
@given(data=gz_streams(), plans=st.lists(member_plans, min_size=1, max_size=3),
       window=st.sampled_from([None, None, 1, 100, 4096, 65536]))
def test_gzip_reader_against_model_slow(work, data, plans, window):
    check_gzip_reader(work, data, plans, window)


# --------------------------------------------------------------------------- what the fuzzers found

def test_head_longer_than_64k_then_whole_keeps_the_crc(tmp_path):
    """member_head(n > 64 KiB) left a lazy zlib CRC that member_whole(keep < n) then dropped: a false
    'CRC-32 mismatch' on a sound member."""
    payload = TEXT[:300000]
    path = tmp_path / "m.gz"
    path.write_bytes(warcgen.gzip_member(payload))
    r = gzip_members.Reader(str(path))
    r.member_begin(0)
    assert r.member_head(100000) == payload[:100000]
    assert r.member_whole(10) == path.stat().st_size


def test_reading_after_a_trusted_finish(tmp_path):
    """After member_finish trusted `sl`, member_read/member_head gave b'' instead of the member's bytes."""
    payload = TEXT[:5000]
    path = tmp_path / "m.gz"
    path.write_bytes(warcgen.sl_member(payload))
    r = gzip_members.Reader(str(path))
    r.member_begin(0)
    assert r.member_finish() == path.stat().st_size and r.member_trusted
    assert r.member_read(100, 50) == payload[100:150]
    assert r.member_head(200) == payload[:200]
    assert r.member_finish() == path.stat().st_size


def test_a_window_of_zero_bytes_does_not_hang(tmp_path):
    path = tmp_path / "m.gz"
    path.write_bytes(warcgen.gzip_member(b"x"))
    with watchdog(30):
        r = gzip_members.Reader(str(path), window=0)
        assert r.member_begin(0) and r.member_whole() == path.stat().st_size


def test_streams_read_wget_members(seeds):
    """Read forward from a stream, a Wget member failed with OSError 'Illegal seek': the member was
    restarted from its start (to switch engines), ISA-L's read-ahead was read back from before the
    window, and a wrong `sl` compressed length made the reader go back to the member's start."""
    s = seeds["wget"]
    assert read_records(io.BytesIO(s.data)) == (s.records, None)
    r = gzip_members.Reader(io.BytesIO(s.data))
    assert not r.seekable
    off = s.extents[1]  # a response of 13 KiB
    assert r.member_begin(off)
    r.member_read(0, 1024)
    assert len(r.member_read(600, 1 << 20)) > 10000
    assert r.member_finish() == s.extents[2]
    base = warcgen._base_recs()
    members = [warcgen.sl_member(x.plain()) for x in base]
    members[1] = warcgen.sl_member(base[1].plain(), lengths=(len(members[1]) + 5, len(base[1].plain())))
    assert read_records(io.BytesIO(b"".join(members)))[1] is None


def test_the_default_record_list_given_explicitly_is_the_default(seeds, work):
    """records=('response', 'revisit', 'resource', 'metadata') is cdxj-indexer's default and keeps its
    rule for application/warc-fields records; the kernel indexed them."""
    s = seeds["sink_gz"]
    path = write_case(work, s, s.data)
    check_index(path, {"verify": False, "cdx11": False, "records": cdx_mod.DEFAULT_RECORDS})
    lines: List[bytes] = []
    index_file(path, lines.append, IndexOptions(records=list(cdx_mod.DEFAULT_RECORDS)))
    default: List[bytes] = []
    index_file(path, default.append, IndexOptions())
    assert b"".join(lines) == b"".join(default)


def test_shared_member_of_unindexed_records_is_refused_by_both_paths(seeds, work):
    """A gzip member holding the warcinfo and the request (both not indexed): the kernel path and
    the pure Python path both report it once and go on, or with strict both refuse it."""
    s = seeds["gz"]
    data = mutate(s, [("merge", 0)])
    path = write_case(work, s, data)
    said: Tuple[List[str], List[str]] = ([], [])
    (k_lines, k_err), (p_lines, p_err) = index_both(path, IndexOptions(report=_quiet), said)
    assert k_err == p_err is None and k_lines == p_lines
    assert said[0] == said[1] and len(said[0]) == 1 and "at byte 0: this gzip member holds several" in said[0][0]
    (k_lines, k_err), (p_lines, p_err) = index_both(path, IndexOptions(report=_quiet, strict=True))
    assert k_err == p_err == ("RecordFormatError", 0)


@pytest.mark.xfail(strict=True, reason="documented limit of trusting `sl` for records that are not indexed "
                                       "(docs/format.md): a crafted `sl` can cover the next member")
def test_skip_mode_and_verify_agree_on_a_crafted_sl(tmp_path):
    """A request member whose `sl` claims the request and the response after it (and the response's
    ISIZE) is consistent by every check skip mode makes; the indexer then drops the response."""
    base = warcgen._base_recs()
    info, req, resp = (x.plain() for x in base[:3])
    b = warcgen.sl_member(resp)
    a = warcgen.sl_member(req, lengths=(len(warcgen.sl_member(req)) + len(b), len(resp)))
    path = tmp_path / "crafted.warc.gz"
    path.write_bytes(warcgen.sl_member(info) + a + b)
    lines = {}
    for verify in (False, True):
        out: List[bytes] = []
        index_file(str(path), out.append, IndexOptions(verify=verify))
        lines[verify] = b"".join(out)
    assert lines[False] == lines[True]


# any order of calls, as a careless caller would make them: only ArchiveError/OSError, and whatever
# bytes come back are the member's (reading before a streamed position may fail, never lie)
reader_calls = st.lists(st.one_of(
    st.tuples(st.just("member_begin"), st.integers(-2, 1 << 20)),
    st.tuples(st.just("member_head"), st.integers(0, 1 << 18)),
    st.tuples(st.just("member_read"), st.integers(0, 1 << 18), st.integers(0, 1 << 18)),
    st.tuples(st.just("member_finish")),
    st.tuples(st.just("member_whole"), st.integers(0, 1 << 18)),
    st.tuples(st.just("read_at"), st.integers(-2, 1 << 20), st.integers(0, 1 << 17)),
    st.tuples(st.just("at_end"), st.integers(-2, 1 << 20)),
), max_size=12)


def check_reader_calls(work: Path, data: bytes, calls, kind: str, verify: bool, window):
    path = str(work / "fuzz-calls.gz")
    Path(path).write_bytes(data)
    src = _source(kind, data, path)
    kw = {} if window is None else {"window": window}
    with watchdog():
        r = gzip_members.Reader(src, verify=verify, **kw)
        m: Optional[Member] = None
        for call in calls:
            name, args = call[0], list(call[1:])
            if name in ("member_begin", "read_at", "at_end") and data and args[0] >= 0:
                args[0] %= len(data) + 2  # mostly inside the input
            try:
                got = getattr(r, name)(*args)
            except (ArchiveError, OSError) as e:
                _event(f"{name}: {type(e).__name__}")
                if name == "member_begin":
                    m = None
                continue
            except OverflowError:  # a negative offset for an unsigned parameter: the caller's mistake
                continue
            if name == "member_begin":
                m = model_member(data, args[0]) if got else None
            elif name == "read_at":
                assert got == data[args[0]:args[0] + args[1]]
            elif name in ("member_head", "member_read") and m is not None and m.status == "ok":
                pos = 0 if name == "member_head" else args[0]
                _check_bytes(m, got, pos, args[-1], exact=False)
            elif name in ("member_finish", "member_whole") and m is not None and m.body_ok and not r.member_trusted:
                assert got == m.end
        r.close()
    if kind == "fileobj":
        src.close()


@fast(150)
@given(data=gz_streams(), calls=reader_calls, kind=st.sampled_from(["path", "stream", "fileobj"]),
       verify=st.booleans(), window=st.sampled_from([None, 1, 100, 4096]))
def test_gzip_reader_calls_in_any_order(work, data, calls, kind, verify, window):
    check_reader_calls(work, data, calls, kind, verify, window)


@pytest.mark.slow
@_seeded
@slow(20000)
@given(data=gz_streams(), calls=reader_calls, kind=st.sampled_from(["path", "stream", "fileobj"]),
       verify=st.booleans(), window=st.sampled_from([None, 1, 100, 4096]))
def test_gzip_reader_calls_in_any_order_slow(work, data, calls, kind, verify, window):
    check_reader_calls(work, data, calls, kind, verify, window)


# --------------------------------------------------------------------------- 2b. --skip-errors

def check_skip_errors(path: str, cdx11: bool):
    """With skip_errors and verify (no `sl` shortcut: both read every record), the kernel path and the
    reference skip the same damaged records, report as many, and write the same lines."""
    reports: dict = {"kernel": [], "python": []}

    def opts(who):
        return IndexOptions(report=reports[who].append, skip_errors=True, verify=True, cdx11=cdx11)
    name = os.path.basename(path)
    with watchdog():
        kernel = run_index(lambda w: index_file(path, w, opts("kernel")))
        python = run_index(lambda w: _index_python(path, w, opts("python"), name, FileStats()))
    assert kernel == python
    assert len(reports["kernel"]) == len(reports["python"]), reports
    _event(f"{min(len(reports['kernel']), 3)} reports")


@fast(300)
@given(name=st.sampled_from(SMALL_SEEDS), ops=mutations, cdx11=st.booleans())
def test_indexer_skips_errors_as_the_reference(seeds, work, name, ops, cdx11):
    s = seeds[name]
    check_skip_errors(write_case(work, s, mutate(s, ops)), cdx11)


@pytest.mark.slow
@_seeded
@slow(10000)
@given(name=st.sampled_from(ALL_SEEDS), ops=mutations, cdx11=st.booleans())
def test_indexer_skips_errors_as_the_reference_slow(seeds, work, name, ops, cdx11):
    s = seeds[name]
    check_skip_errors(write_case(work, s, mutate(s, ops)), cdx11)


def test_streams_skip_forward_to_the_right_byte(tmp_path):
    """A stream asked for bytes past what it has read drops what it read on the way but keeps the
    bytes at and after the offset asked for (dropping those too would give wrong bytes)."""
    data = bytes(range(256)) * 40
    r = gzip_members.Reader(io.BytesIO(data), window=64)
    assert r.read_at(5, 3) == data[5:8]
    assert r.read_at(9000, 4) == data[9000:9004]
    assert r.read_at(9100, 1000) == data[9100:10100]
    big = warcgen.r_rec("resource", "big", "http://example.com/big", "text/plain", b"x" * 3_000_000,
                        http=False).plain()
    plain = big + warcgen._base_recs()[2].plain()
    path = tmp_path / "big.warc"
    path.write_bytes(plain)
    assert read_records(io.BytesIO(plain), types={"response"}) == read_records(str(path), types={"response"})
