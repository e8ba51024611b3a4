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

A generation's file format (header, sorted key columns, heap) is
``digest_file``'s, which reads and writes one such file.
"""

from __future__ import annotations

import array
import fcntl
import os
import re
from contextlib import suppress
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Tuple, Union

import numpy as np

from ..durable import fsync_dir
from ..errors import IndexFormatError
from ..warc.digest import ALGORITHMS_BY_CODE, Digest, DigestError
from .digest_file import (MAX_ENTRY, SPAN_LEN_BITS, TAIL_SIZE, Generation, Original, decode_entry, empty_generation,
                          join_key, key_order, split_key, write_file)

__all__ = ["DigestError", "DigestIndex", "IndexStats", "Original", "date_micros", "digest_key", "digest_label"]

PathLike = Union[str, os.PathLike[str]]

FILE_PREFIX = "digests."
FILE_SUFFIX = ".wdx"
LOCK_NAME = "lock"

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
            self._gen = empty_generation()
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

    def _open_newest(self) -> Generation:
        for _attempt in range(5):
            gens = self._generations()
            if not gens:
                return empty_generation()
            num, path = gens[-1]
            try:
                g = Generation(path, self.verify)
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
            return decode_entry(spelled or digest_label(key), bytes(self._buf_heap[start:start + length]), "<memory>",
                          row)
        prefix, tail = split_key(key)
        i = self._gen.find(prefix, tail)
        if i < 0:
            return None
        return self._gen.entry(i, spelled or digest_label(key))

    def __contains__(self, digest: object) -> bool:
        return isinstance(digest, str) and self.get(digest) is not None

    def __len__(self) -> int:
        self._check_open()
        new = sum(1 for k in self._buf if self._gen.find(*split_key(k)) < 0)
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
            i = self._gen.find(*split_key(key))
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
                self._gen = Generation(path, False)
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
            i = g.find(*split_key(self._buf_keys[j]))
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
        order = key_order(pre, tails)
        pre, tails, when, spans = pre[order], tails[order], when[order], spans[order]
        gen = g.generation + 1
        final = os.path.join(self.path, f"{FILE_PREFIX}{gen:08d}{FILE_SUFFIX}")
        tmp = f"{final}.tmp{os.getpid()}"
        try:
            write_file(tmp, gen, pre, tails, when, spans, [g.heap, self._buf_heap])
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
            key = join_key(prefix, bytes(g.tails[i * TAIL_SIZE:(i + 1) * TAIL_SIZE]))
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
