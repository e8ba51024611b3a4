"""The URL-agnostic digest index of dedup: payload digest -> the capture that first held it.

A ``DigestIndex`` is a directory holding one immutable generation file (the
digests of earlier crawls, opened by mmap) and, in memory, the digests added
since it was opened. ``flush()`` merges the two into a new generation, written
beside the old one and published by an atomic rename, so a reader sees the
old generation or the new one, never a mixture, and a killed process loses at
most what it had not flushed. The earliest capture of a payload stays its
original: adding a later capture of a known digest changes nothing, adding an
earlier one replaces it (equal times: the one added first stays).

This module stores and finds; what to do about a duplicate is
``warchive.capture.dedup``'s business. It never reads WARC files.

Why numpy over mmap and not mmap-ninja: a generation must be one file (one
rename publishes it) with a checked header and checksums; mmap-ninja keeps
each array as a directory of files with no checksum and no version.

Layout of a generation (``digests.<generation>.wdx``; docs/format.md, "Dedup
digest index", says the same). Integers little-endian; CRC-32 is zlib's.

    header   128 bytes
      0   8  magic            89 57 41 44 44 58 0d 0a  ("\\x89WADDX\\r\\n")
      8   4  version          1
     12   4  flags            0
     16   8  count N          entries
     24   8  heap size H      bytes
     32   8  generation       1, 2, ... (also in the file name)
     40   8  created          microseconds since 1970 (UTC)
     48  20  CRC-32 of the sections prefixes, tails, when, spans, heap (4 bytes each)
     68  56  zero
    124   4  CRC-32 of header bytes 0..123
    prefixes  N x u64   the first 8 bytes of each digest read big-endian, ascending
    tails     N x 25 B  algorithm id (1 sha1, 2 sha256, 3 blake3), then the digest's
                        bytes after the first 8, zero-padded to 24; entries with equal
                        prefixes are ordered by tail (so by (prefix, tail) bytewise)
    (zero bytes to the next multiple of 8)
    when      N x i64   capture time, microseconds since 1970 (earliest wins on merge)
    spans     N x u64   heap offset << 24 | length (length < 16 MiB)
    heap      H bytes   per entry, UTF-8: target URI, NUL, WARC-Date, NUL, WARC-Record-ID
                        (the heap is in insertion order; the spans find each entry)

Every section starts where the previous one ends (tails padded to 8); the
file ends exactly after the heap. Opening checks the magic, version, header
CRC and file size; with ``verify=True`` (the default: about 0.1 s per GB)
also the section CRCs, the order of the keys and that every span lies in the
heap. Any failure is an ``IndexFormatError`` naming the file.
"""

from __future__ import annotations

import array
import fcntl
import mmap
import os
import re
import struct
import time
from contextlib import suppress
from dataclasses import dataclass
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple, Union

import numpy as np

from ..durable import fsync_dir
from ..errors import IndexFormatError
from ..warc.digest import ALGORITHMS_BY_CODE, Digest, DigestError

try:
    from isal.isal_zlib import crc32 as _crc32
except ImportError:  # pragma: no cover - isal is a dependency
    from zlib import crc32 as _crc32

PathLike = Union[str, "os.PathLike[str]"]

MAGIC = b"\x89WADDX\r\n"
VERSION = 1
HEADER_SIZE = 128
TAIL_SIZE = 25
SPAN_LEN_BITS = 24
MAX_ENTRY = (1 << SPAN_LEN_BITS) - 1
FILE_PREFIX = "digests."
FILE_SUFFIX = ".wdx"
LOCK_NAME = "lock"

_HEADER = struct.Struct("<8sIIQQQq5I")        # bytes 0..67
_NON_DIGIT = re.compile(r"[^0-9]+")


# --------------------------------------------------------------------------- digests

def digest_key(digest: str) -> bytes:
    """A digest in any spelling (``Digest.parse``: no label means sha1, as CDX files write it)
    -> the index key: the algorithm's code byte + the digest's bytes. DigestError when it
    is not one."""
    return Digest.parse(digest).key


def digest_label(key: bytes) -> str:
    """The index key -> ``algorithm:BASE32`` (padded, as the writer labels digests)."""
    return Digest.from_key(key).label



def _split_key(key: bytes) -> Tuple[int, bytes]:
    body = key[1:]
    prefix = int.from_bytes(body[:8], "big")
    tail = key[:1] + body[8:]
    return prefix, tail + b"\0" * (TAIL_SIZE - len(tail))


def _join_key(prefix: int, tail: bytes) -> bytes:
    size = ALGORITHMS_BY_CODE[tail[0]].size
    return tail[:1] + prefix.to_bytes(8, "big") + tail[1:size - 7]


def _days(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil)."""
    if not (1 <= m <= 12 and 1 <= d <= 31):
        raise ValueError("not a date")
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def date_micros(date: str) -> int:
    """A WARC-Date or a 14-digit (or longer) timestamp -> microseconds since 1970 (UTC).
    Unparseable dates sort last (a capture with a usable date is preferred as original)."""
    if len(date) >= 20 and date[4] == "-" and date[10] == "T" and date[-1] == "Z" and date[13] == ":":
        try:    # the usual WARC-Date, read by slicing
            frac = date[19:-1]
            if frac and not (frac[0] == "." and frac[1:].isdigit()):
                raise ValueError(frac)
            secs = _days(int(date[0:4]), int(date[5:7]), int(date[8:10])) * 86400 + \
                int(date[11:13]) * 3600 + int(date[14:16]) * 60 + int(date[17:19])
            return secs * 1_000_000 + (int((frac[1:] + "000000")[:6]) if frac else 0)
        except ValueError:
            pass
    nums = [n for n in _NON_DIGIT.split(date) if n]
    if len(nums) == 1 and len(nums[0]) >= 4:           # 14-digit timestamp, maybe longer
        d = nums[0]
        nums = [d[0:4], d[4:6] or "1", d[6:8] or "1", d[8:10] or "0", d[10:12] or "0", d[12:14] or "0",
                d[14:20]]
    try:
        y, mo, dd = int(nums[0]), int(nums[1]), int(nums[2])
        hh, mi, ss = (int(n) for n in (nums[3:6] + ["0", "0", "0"])[:3])
        frac = (nums[6] + "000000")[:6] if len(nums) > 6 and nums[6] else "0"
        if not (0 <= hh < 24 and 0 <= mi < 60 and 0 <= ss <= 60):
            raise ValueError("not a time")
        secs = _days(y, mo, dd) * 86400 + hh * 3600 + mi * 60 + ss
        return secs * 1_000_000 + int(frac)
    except (ValueError, IndexError, OverflowError):
        return (1 << 63) - 1


def _iso_of_timestamp(ts: str) -> str:
    d = (ts + "00000101000000"[len(ts):]) if len(ts) < 14 else ts
    iso = f"{d[0:4]}-{d[4:6]}-{d[6:8]}T{d[8:10]}:{d[10:12]}:{d[12:14]}"
    return iso + (f".{d[14:20]}Z" if len(d) > 14 else "Z")


# --------------------------------------------------------------------------- what an entry says

class Original(NamedTuple):
    """The capture that holds a payload: what a revisit refers to. (A named tuple: one is made
    for every lookup that hits, and a tuple is made 5x faster than a frozen dataclass.)"""

    digest: str                   # algorithm:BASE32, as it was asked for or added
    uri: str                      # WARC-Target-URI
    date: str                     # WARC-Date (WARC-Refers-To-Date of a revisit)
    record_id: Optional[str]      # WARC-Record-ID with its <...>, or None when unknown (CDXJ seeds)

    def _heap_bytes(self) -> bytes:
        parts = (self.uri, self.date, self.record_id or "")
        for p in parts:
            if "\0" in p:
                raise ValueError(f"NUL in a digest index entry: {p!r}")
        return "\0".join(parts).encode("utf-8")


def _entry(digest: str, raw: bytes, path: str, where: int) -> Original:
    try:
        uri, date, rid = raw.decode("utf-8").split("\0")
    except (UnicodeDecodeError, ValueError):
        raise IndexFormatError(path, "heap", f"entry {where} is not URI NUL date NUL record-id "
                                             "(damaged file: rebuild it with `warchive dedup-index build`)") from None
    return Original(digest, uri, date, rid or None)


# --------------------------------------------------------------------------- one generation (read side)

def _layout(n: int, heap: int) -> Tuple[int, int, int, int, int, int]:
    """Start of prefixes, tails, when, spans, heap, and the file size."""
    p = HEADER_SIZE
    t = p + 8 * n
    w = t + TAIL_SIZE * n
    w += -w % 8
    s = w + 8 * n
    h = s + 8 * n
    return p, t, w, s, h, h + heap


class _Generation:
    """One generation file, mapped; the arrays are views of the map."""

    def __init__(self, path: str, verify: bool) -> None:
        self.path = path
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < HEADER_SIZE:
                raise IndexFormatError(path, "header", f"{size} bytes, shorter than the {HEADER_SIZE}-byte "
                                                       "header (truncated: delete it or rebuild the index)")
            head = f.read(HEADER_SIZE)
            self._check_header(head, size)
            self.mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) if size else None
        n, hs = self.count, self.heap_size
        p, t, w, s, h, _ = _layout(n, hs)
        buf = self.mm
        self.prefixes = np.frombuffer(buf, "<u8", n, p) if n else np.zeros(0, "<u8")   # type: ignore[arg-type]
        self.tails = memoryview(buf)[t:t + TAIL_SIZE * n] if n else memoryview(b"")  # type: ignore[arg-type]
        self.when = np.frombuffer(buf, "<i8", n, w) if n else np.zeros(0, "<i8")  # type: ignore[arg-type]
        self.spans = np.frombuffer(buf, "<u8", n, s) if n else np.zeros(0, "<u8")  # type: ignore[arg-type]
        self.heap = memoryview(buf)[h:h + hs] if n else memoryview(b"")  # type: ignore[arg-type]
        if verify:
            self.verify()

    def _check_header(self, head: bytes, size: int) -> None:
        path = self.path
        (magic, version, flags, n, heap, gen, created, *crcs) = _HEADER.unpack_from(head)
        if magic != MAGIC:
            raise IndexFormatError(path, "header", f"not a dedup digest index (magic {magic!r})")
        if struct.unpack_from("<I", head, 124)[0] != _crc32(head[:124]):
            raise IndexFormatError(path, "header", "header CRC mismatch (damaged: rebuild the index)")
        if version != VERSION:
            raise IndexFormatError(path, "header", f"format version {version}; this warchive reads version "
                                                   f"{VERSION} (upgrade warchive, or rebuild the index)")
        if n >= 1 << 40 or heap >= 1 << 48:
            raise IndexFormatError(path, "header", f"impossible sizes: {n} entries, {heap} heap bytes")
        want = _layout(n, heap)[5]
        if size != want:
            raise IndexFormatError(path, "header", f"{size} bytes, {want} expected for {n} entries and "
                                                   f"{heap} heap bytes (truncated or appended to: rebuild)")
        self.count, self.heap_size, self.generation, self.created, self.crcs = n, heap, gen, created, crcs
        self.flags = flags

    def verify(self) -> None:
        """Check the section CRCs, the key order and the spans (IndexFormatError if wrong)."""
        path, n = self.path, self.count
        names = ("prefixes", "tails", "when", "spans", "heap")
        sections = (self.prefixes, self.tails, self.when, self.spans, self.heap)
        for name, sec, crc in zip(names, sections, self.crcs):
            if _crc32(sec) != crc:
                raise IndexFormatError(path, name, f"CRC mismatch in the {name} section "
                                                   "(damaged: rebuild with `warchive dedup-index build`)")
        if n == 0:
            return
        _, t, w, _, _, _ = _layout(n, self.heap_size)
        if self.mm is not None and any(self.mm[t + TAIL_SIZE * n:w]):
            raise IndexFormatError(path, "tails", "the padding after the tails is not zero (damaged)")
        pre = self.prefixes
        d = pre[1:] >= pre[:-1]
        if not bool(d.all()):
            i = int(np.argmin(d)) + 1
            raise IndexFormatError(path, "prefixes", f"entry {i} is out of order")
        tails = np.frombuffer(self.tails, "u1").reshape(n, TAIL_SIZE)
        for j in (np.flatnonzero(pre[1:] == pre[:-1]) + 1).tolist():
            if bytes(tails[j]) <= bytes(tails[j - 1]):
                raise IndexFormatError(path, "tails", f"entry {j} repeats or precedes the key before it")
        algo = tails[:, 0]
        if not bool(np.isin(algo, np.array(list(ALGORITHMS_BY_CODE), "u1")).all()):
            raise IndexFormatError(path, "tails", "unknown digest algorithm id")
        ends = (self.spans >> np.uint64(SPAN_LEN_BITS)) + (self.spans & np.uint64(MAX_ENTRY))
        if int(ends.max()) > self.heap_size:
            raise IndexFormatError(path, "spans", "an entry points past the end of the heap")

    def find(self, prefix: int, tail: bytes) -> int:
        """Row of (prefix, tail), or -1."""
        pre = self.prefixes
        i = int(pre.searchsorted(np.uint64(prefix)))
        n = self.count
        tails = self.tails
        while i < n and int(pre[i]) == prefix:
            t = tails[i * TAIL_SIZE:(i + 1) * TAIL_SIZE]
            if t == tail:
                return i
            i += 1
        return -1

    def entry(self, row: int, digest: str) -> Original:
        span = int(self.spans[row])
        start, length = span >> SPAN_LEN_BITS, span & MAX_ENTRY
        if start + length > self.heap_size:
            raise IndexFormatError(self.path, "spans", f"entry {row} points past the end of the heap")
        return _entry(digest, bytes(self.heap[start:start + length]), self.path, row)

    def close(self) -> None:
        for name in ("prefixes", "when", "spans"):
            setattr(self, name, np.zeros(0, "<u8"))
        self.tails.release()
        self.heap.release()
        if self.mm is not None:
            try:
                self.mm.close()
            except BufferError:   # a caller still holds a view; the map goes with it
                pass
            self.mm = None


def _empty_generation() -> _Generation:
    g = _Generation.__new__(_Generation)
    g.path, g.mm, g.count, g.heap_size, g.generation, g.created, g.flags = "", None, 0, 0, 0, 0, 0
    g.crcs = [0] * 5
    g.prefixes, g.when, g.spans = np.zeros(0, "<u8"), np.zeros(0, "<i8"), np.zeros(0, "<u8")
    g.tails, g.heap = memoryview(b""), memoryview(b"")
    return g


# --------------------------------------------------------------------------- the index

@dataclass
class IndexStats:
    path: str
    generation: int
    entries: int           # on disk
    pending: int           # added since open, not yet flushed
    file: Optional[str]
    file_bytes: int
    heap_bytes: int
    algorithms: Dict[str, int]


class DigestIndex:
    """Payload digest -> ``Original``, persisted in directory ``path`` (created if absent).

    ``get(digest)`` / ``digest in index`` / ``len(index)``; ``add(...)`` puts a capture in the
    in-memory buffer (answered at once); ``flush()`` publishes a new generation. Not
    thread-safe; several processes may flush into one directory (a lock serialises them and
    each merges into the newest generation). ``with DigestIndex(p) as ix:`` flushes on a
    clean exit."""

    def __init__(self, path: PathLike, *, verify: bool = True, create: bool = True, fresh: bool = False) -> None:
        self.path = os.fspath(path)
        self.verify = verify
        if not os.path.isdir(self.path):
            if not create:
                raise IndexFormatError(self.path, None, "no such digest index directory")
            os.makedirs(self.path, exist_ok=True)
        # fresh: start empty; the next flush publishes only what was added (replacing the index)
        self._fresh = fresh
        if fresh:
            self._gen = _empty_generation()
            gens = self._generations()
            self._gen.generation = gens[-1][0] if gens else 0
        else:
            self._gen = self._open_newest()
        self._closed = False
        self._reset_buffer()

    # -- files
    def _generations(self) -> List[Tuple[int, str]]:
        out = []
        for name in os.listdir(self.path):
            if name.startswith(FILE_PREFIX) and name.endswith(FILE_SUFFIX):
                num = name[len(FILE_PREFIX):-len(FILE_SUFFIX)]
                if num.isdigit():
                    out.append((int(num), os.path.join(self.path, name)))
        return sorted(out)

    def _open_newest(self) -> _Generation:
        for _attempt in range(5):
            gens = self._generations()
            if not gens:
                return _empty_generation()
            num, path = gens[-1]
            try:
                g = _Generation(path, self.verify)
            except FileNotFoundError:   # replaced by a concurrent flush between listdir and open
                continue
            if g.generation != num:
                g.close()
                raise IndexFormatError(path, "header", f"says generation {g.generation}, its name {num}")
            return g
        raise IndexFormatError(self.path, None, "generations keep changing while opening (another process "
                                                "is flushing in a loop?)")

    def _reset_buffer(self) -> None:
        self._buf: Dict[bytes, int] = {}          # key -> row of the buffer columns
        self._buf_keys: List[bytes] = []
        self._buf_when = array.array("q")
        self._buf_span = array.array("Q")
        self._buf_heap = bytearray()

    def _check_open(self) -> None:
        if self._closed:
            raise ValueError("I/O operation on a closed DigestIndex")

    # -- lookups
    def get(self, digest: str) -> Optional[Original]:
        """The original of a payload digest (``sha1:BASE32``...), or None; its ``digest`` is
        spelled as asked. A malformed digest raises DigestError."""
        return self.get_key(digest_key(digest), digest.strip())

    def get_key(self, key: bytes, spelled: Optional[str] = None) -> Optional[Original]:
        """The original of an index key (``digest_key``); ``spelled`` names the digest in the
        answer (default: ``digest_label(key)``)."""
        if self._closed:
            self._check_open()
        row = self._buf.get(key)
        if row is not None:
            span = self._buf_span[row]
            start, length = span >> SPAN_LEN_BITS, span & MAX_ENTRY
            return _entry(spelled or digest_label(key), bytes(self._buf_heap[start:start + length]), "<memory>",
                          row)
        prefix, tail = _split_key(key)
        i = self._gen.find(prefix, tail)
        if i < 0:
            return None
        return self._gen.entry(i, spelled or digest_label(key))

    def __contains__(self, digest: object) -> bool:
        return isinstance(digest, str) and self.get(digest) is not None

    def __len__(self) -> int:
        self._check_open()
        new = sum(1 for k in self._buf if self._gen.find(*_split_key(k)) < 0)
        return self._gen.count + new

    @property
    def pending(self) -> int:
        """Entries added (or replaced) since the last flush."""
        return len(self._buf)

    # -- adding
    def add(self, digest: str, uri: str, date: str, record_id: Optional[str] = None) -> Original:
        """Record that the capture of ``uri`` at ``date`` (a WARC-Date or a 14-digit timestamp)
        holds the payload ``digest``; returns the original that stays (the earliest capture)."""
        key = digest_key(digest)
        rid = record_id.strip() if record_id else None
        if rid and not rid.startswith("<"):
            rid = "<" + rid + ">"
        date = date.strip()
        if date.isdigit():     # a CDX timestamp: a revisit's WARC-Refers-To-Date must be W3C ISO 8601
            date = _iso_of_timestamp(date)
        new = Original(digest.strip(), uri, date, rid)
        return self._add(key, new, date_micros(date))

    def _add(self, key: bytes, new: Original, when: int) -> Original:
        self._check_open()
        row = self._buf.get(key)
        if row is not None:
            if self._buf_when[row] <= when:
                return self.get_key(key, new.digest)  # type: ignore[return-value]
        else:
            i = self._gen.find(*_split_key(key))
            if i >= 0 and int(self._gen.when[i]) <= when:
                return self._gen.entry(i, new.digest)
        raw = new._heap_bytes()
        if len(raw) > MAX_ENTRY:
            raise ValueError(f"digest index entry of {len(raw)} bytes (URI too long?)")
        span = (len(self._buf_heap) << SPAN_LEN_BITS) | len(raw)
        self._buf_heap += raw
        if row is None:
            self._buf[key] = len(self._buf_keys)
            self._buf_keys.append(key)
            self._buf_when.append(when)
            self._buf_span.append(span)
        else:
            self._buf_when[row] = when
            self._buf_span[row] = span
        return new

    # -- publishing
    def flush(self) -> Optional[str]:
        """Merge what was added into a new generation and publish it (atomic rename); returns
        its path, or None when nothing was added. Older generations are removed."""
        self._check_open()
        if not self._buf and not self._fresh:
            return None
        with open(os.path.join(self.path, LOCK_NAME), "a+b") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            try:
                newest = self._generations()
                if self._fresh:
                    self._gen.generation = max(self._gen.generation, newest[-1][0] if newest else 0)
                elif newest and newest[-1][0] != self._gen.generation:
                    self._gen.close()               # someone else flushed: merge into theirs
                    self._gen = self._open_newest()
                self._remove_orphans()
                path = self._write_generation()
                old = self._gen
                self._gen = _Generation(path, False)
                old.close()
                for num, p in self._generations():
                    if num < self._gen.generation:
                        with suppress(FileNotFoundError):
                            os.unlink(p)
            finally:
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
        self._reset_buffer()
        self._fresh = False
        return path

    def _remove_orphans(self) -> None:
        """Delete ``.tmp<pid>`` files of writers that died before their rename (under the lock)."""
        for name in os.listdir(self.path):
            head, sep, pid = name.rpartition(FILE_SUFFIX + ".tmp")
            if not (sep and head.startswith(FILE_PREFIX) and pid.isdigit()):
                continue
            try:
                os.kill(int(pid), 0)
                continue                    # its writer lives (it cannot be writing: we hold the lock)
            except ProcessLookupError:
                pass
            except (PermissionError, OverflowError):
                continue
            with suppress(FileNotFoundError):
                os.unlink(os.path.join(self.path, name))

    def _buffer_arrays(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        n = len(self._buf_keys)
        full = np.frombuffer(b"".join(k.ljust(33, b"\0") for k in self._buf_keys), "u1").reshape(n, 33)
        pre = np.ascontiguousarray(full[:, 1:9]).view(">u8").reshape(n).astype("<u8")
        tails = np.concatenate([full[:, :1], full[:, 9:33]], axis=1)
        return (pre, tails, np.frombuffer(self._buf_when, "<i8").copy(),
                np.frombuffer(self._buf_span, "<u8").copy())

    def _write_generation(self) -> str:
        g = self._gen
        bpre, btails, bwhen, bspan = self._buffer_arrays()
        # disk rows that a buffer entry replaces (an earlier capture), or buffer rows that lose
        keep_buf = np.ones(len(bpre), bool)
        drop_disk: List[int] = []
        maybe = np.zeros(0, np.intp)
        if g.count:
            at = np.minimum(g.prefixes.searchsorted(bpre), g.count - 1)
            maybe = np.flatnonzero(g.prefixes[at] == bpre)
        for j in maybe:
            i = g.find(*_split_key(self._buf_keys[j]))
            if i >= 0:
                if int(g.when[i]) <= int(bwhen[j]):
                    keep_buf[j] = False
                else:
                    drop_disk.append(i)
        dtails = np.frombuffer(g.tails, "u1").reshape(g.count, TAIL_SIZE)
        keep_disk = np.ones(g.count, bool)
        keep_disk[drop_disk] = False
        heap_base = np.uint64(g.heap_size << SPAN_LEN_BITS)
        pre = np.concatenate([g.prefixes[keep_disk], bpre[keep_buf]])
        tails = np.concatenate([dtails[keep_disk], btails[keep_buf]])
        when = np.concatenate([g.when[keep_disk], bwhen[keep_buf]])
        spans = np.concatenate([g.spans[keep_disk], bspan[keep_buf] + heap_base])
        order = _key_order(pre, tails)
        pre, tails, when, spans = pre[order], tails[order], when[order], spans[order]
        gen = g.generation + 1
        final = os.path.join(self.path, f"{FILE_PREFIX}{gen:08d}{FILE_SUFFIX}")
        tmp = f"{final}.tmp{os.getpid()}"
        try:
            _write_file(tmp, gen, pre, tails, when, spans, [g.heap, self._buf_heap])
            os.replace(tmp, final)
        except BaseException:
            with suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        fsync_dir(self.path)
        return final

    # -- life
    def stats(self) -> IndexStats:
        self._check_open()
        g = self._gen
        algos: Dict[str, int] = {}
        if g.count:
            ids, counts = np.unique(np.frombuffer(g.tails, "u1")[::TAIL_SIZE], return_counts=True)
            for i, c in zip(ids, counts):
                alg = ALGORITHMS_BY_CODE.get(int(i))
                algos[alg.name if alg is not None else f"id{int(i)}"] = int(c)
        return IndexStats(self.path, g.generation, g.count, len(self._buf), g.path or None,
                          os.path.getsize(g.path) if g.path else 0, g.heap_size, algos)

    def items(self) -> Iterator[Original]:
        """Every entry on disk (in key order), then the pending ones."""
        self._check_open()
        g = self._gen
        for i in range(g.count):
            prefix = int(g.prefixes[i])
            key = _join_key(prefix, bytes(g.tails[i * TAIL_SIZE:(i + 1) * TAIL_SIZE]))
            if key not in self._buf:
                yield g.entry(i, digest_label(key))
        for key in self._buf_keys:
            yield self.get_key(key)  # type: ignore[misc]

    def close(self, flush: bool = False) -> None:
        if self._closed:
            return
        if flush:
            self.flush()
        self._gen.close()
        self._closed = True

    def __enter__(self) -> "DigestIndex":
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        self.close(flush=exc_type is None)


def _key_order(pre: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """Indices sorting by (prefix, tail bytes): a sort on the prefix, then the rare runs of
    equal prefixes sorted by their tails."""
    order = np.argsort(pre, kind="stable")
    sp = pre[order]
    ties = np.flatnonzero(sp[1:] == sp[:-1])
    if len(ties):
        starts = ties[np.r_[True, ties[1:] != ties[:-1] + 1]]
        for s in starts:
            e = s + 1
            while e < len(sp) and sp[e] == sp[s]:
                e += 1
            run = order[s:e]
            order[s:e] = sorted(run, key=lambda r: bytes(tails[r]))
    return order


def _write_file(path: str, gen: int, pre: np.ndarray, tails: np.ndarray, when: np.ndarray, spans: np.ndarray,
                heaps: List[Union[memoryview, bytearray]]) -> None:
    n = len(pre)
    heap_size = sum(len(h) for h in heaps)
    p, t, w, s, h, end = _layout(n, heap_size)
    secs = [np.ascontiguousarray(a, dt).reshape(-1).view("u1").data
            for a, dt in ((pre, "<u8"), (tails, "u1"), (when, "<i8"), (spans, "<u8"))]
    crcs = [_crc32(a) for a in secs]
    heap_crc = 0
    for hp in heaps:
        heap_crc = _crc32(hp, heap_crc)
    crcs.append(heap_crc)
    head = bytearray(HEADER_SIZE)
    _HEADER.pack_into(head, 0, MAGIC, VERSION, 0, n, heap_size, gen, int(time.time() * 1e6), *crcs)
    struct.pack_into("<I", head, 124, _crc32(bytes(head[:124])))
    with open(path, "wb") as f:
        f.write(head)
        f.write(secs[0])
        f.write(secs[1])
        f.write(b"\0" * (w - (t + TAIL_SIZE * n)))
        f.write(secs[2])
        f.write(secs[3])
        for hp in heaps:
            f.write(hp)
        if f.tell() != end:  # pragma: no cover - a bug in the layout, not bad input
            raise AssertionError(f"wrote {f.tell()} bytes, layout says {end}")
        f.flush()
        os.fsync(f.fileno())
