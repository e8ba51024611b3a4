"""One generation file of the dedup digest index, ``digests.<generation>.wdx``: its layout, reader, writer.

The layout (docs/format.md, "Dedup digest index", says the same). Integers
little-endian; CRC-32 is zlib's.

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

A key is the algorithm's code byte and the digest's bytes (``warchive.warc.digest.Digest.key``);
the file keeps it split as a u64 prefix (the digest's first 8 bytes) and a 25-byte tail
(``split_key``, ``join_key``). This module reads and writes one file; publishing
generations and merging them is ``digest_index``'s.
"""

from __future__ import annotations

import mmap
import os
import struct
import time
from typing import List, NamedTuple, Optional, Tuple, Union

import numpy as np

from ..errors import IndexFormatError
from ..warc.digest import ALGORITHMS_BY_CODE

try:
    from isal.isal_zlib import crc32 as _crc32
except ImportError:  # pragma: no cover - isal is a dependency
    from zlib import crc32 as _crc32

__all__ = ["Generation", "Original", "MAGIC", "VERSION", "HEADER_SIZE", "TAIL_SIZE", "SPAN_LEN_BITS", "MAX_ENTRY",
           "decode_entry", "empty_generation", "join_key", "key_order", "split_key", "write_file"]

MAGIC = b"\x89WADDX\r\n"
VERSION = 1
HEADER_SIZE = 128
TAIL_SIZE = 25
SPAN_LEN_BITS = 24
MAX_ENTRY = (1 << SPAN_LEN_BITS) - 1

_HEADER = struct.Struct("<8sIIQQQq5I")        # bytes 0..67


def split_key(key: bytes) -> Tuple[int, bytes]:
    """An index key as the file keeps it: (prefix, tail padded to TAIL_SIZE)."""
    body = key[1:]
    prefix = int.from_bytes(body[:8], "big")
    tail = key[:1] + body[8:]
    return prefix, tail + b"\0" * (TAIL_SIZE - len(tail))


def join_key(prefix: int, tail: bytes) -> bytes:
    """The index key of a (prefix, tail) row."""
    size = ALGORITHMS_BY_CODE[tail[0]].size
    return tail[:1] + prefix.to_bytes(8, "big") + tail[1:size - 7]


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


def decode_entry(digest: str, raw: bytes, path: str, where: int) -> Original:
    """The heap bytes of entry `where` (URI NUL date NUL record id) as the Original of `digest`."""
    try:
        uri, date, rid = raw.decode("utf-8").split("\0")
    except (UnicodeDecodeError, ValueError):
        raise IndexFormatError(path, "heap", f"entry {where} is not URI NUL date NUL record-id "
                                             "(damaged file: rebuild it with `warchive dedup-index build`)") from None
    return Original(digest, uri, date, rid or None)


# --------------------------------------------------------------------------- reading

def layout(n: int, heap: int) -> Tuple[int, int, int, int, int, int]:
    """Start of prefixes, tails, when, spans, heap, and the file size."""
    p = HEADER_SIZE
    t = p + 8 * n
    w = t + TAIL_SIZE * n
    w += -w % 8
    s = w + 8 * n
    h = s + 8 * n
    return p, t, w, s, h, h + heap


class Generation:
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
        p, t, w, s, h, _ = layout(n, hs)
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
        want = layout(n, heap)[5]
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
        _, t, w, _, _, _ = layout(n, self.heap_size)
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
        return decode_entry(digest, bytes(self.heap[start:start + length]), self.path, row)

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


def empty_generation() -> Generation:
    g = Generation.__new__(Generation)
    g.path, g.mm, g.count, g.heap_size, g.generation, g.created, g.flags = "", None, 0, 0, 0, 0, 0
    g.crcs = [0] * 5
    g.prefixes, g.when, g.spans = np.zeros(0, "<u8"), np.zeros(0, "<i8"), np.zeros(0, "<u8")
    g.tails, g.heap = memoryview(b""), memoryview(b"")
    return g


# --------------------------------------------------------------------------- writing

def key_order(pre: np.ndarray, tails: np.ndarray) -> np.ndarray:
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


def write_file(path: str, gen: int, pre: np.ndarray, tails: np.ndarray, when: np.ndarray, spans: np.ndarray,
                heaps: List[Union[memoryview, bytearray]]) -> None:
    n = len(pre)
    heap_size = sum(len(h) for h in heaps)
    p, t, w, s, h, end = layout(n, heap_size)
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
