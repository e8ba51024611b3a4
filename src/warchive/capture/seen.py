"""The seen set: has the crawl met this URL before? Exact on disk (default), or a Bloom filter.

Both answer ``add(url) -> bool`` (True when the URL was new) over the canonical form
of ``warchive.surt`` (the SURT key; a URL without one, such as ``urn:``, is its own
key), persist in a directory or file, and reload on resume.

``ExactSeen`` never loses a URL and never calls a new URL seen: a 64-bit hash finds
candidates, and every candidate is verified against the full key kept on disk. Layout
(docs/format.md, "Seen set"), in a directory::

    keys        every key once, in the order added, each followed by "\\n"
    run-NNNNNN  sorted (hash, offset-in-keys) pairs: magic, counts, CRC, then 16-byte entries
    manifest    JSON: the runs, and how many bytes of ``keys`` they cover (atomic rename)

New keys wait in memory (a set, and their hashes and offsets) until ``buffer`` of them
are there; then they become a run. Runs are merged when more than ``max_runs`` exist.
Keys past what the runs cover are read back into memory on open, so a key written to
``keys`` survives a SIGKILL; a torn last line is cut off. A key reaches ``keys`` at
``sync()`` or when its run is written, never before: a crawler that queues each new URL
in the frontier (whose log is written at every call) never has the seen set ahead of
the frontier log (call ``frontier.sync()`` before ``seen.sync()``). Behind it, it is
after a kill: the keys added since the last ``sync()`` are lost, and a resumed crawl
adds the frontier's URLs (``Frontier.urls``) back.

``BloomSeen`` keeps a bit array sized for a ``capacity`` and a false-positive
rate ``fp_rate``: a URL it calls seen may be new (that URL is then not crawled) with
that probability while fewer than ``capacity`` URLs are in; it never calls a seen URL
new. It is saved whole by ``sync()`` (atomic rename).

This module must not fetch, queue or decide scope.
"""

from __future__ import annotations

import hashlib
import json
import math
import mmap
import os
import struct
import zlib
from array import array
from typing import Dict, Iterable, List, Optional, Protocol, Set, Tuple, Union

import numpy as np

from ..durable import fsync_dir
from ..errors import SeenFormatError
from ..surt import surt_or_url

__all__ = ["ExactSeen", "BloomSeen", "SeenSet", "SeenFormatError", "open_seen", "seen_key"]

PathLike = Union[str, os.PathLike[str]]

RUN_MAGIC = b"WASEENR1"
RUN_HEAD = struct.Struct("<8sQQI4x")          # magic, entries, covered bytes of keys, crc32 of entries
BLOOM_MAGIC = b"WABLOOM1"
BLOOM_HEAD = struct.Struct("<8sQQQQdI4x")     # magic, m bits, k, added, capacity, fp rate, crc32 of bits
MANIFEST_VERSION = 1
_MASK64 = (1 << 64) - 1


class SeenSet(Protocol):
    def add(self, url: Union[str, bytes]) -> bool: ...
    def add_many(self, urls: Iterable[Union[str, bytes]]) -> List[bool]: ...
    def __contains__(self, url: object) -> bool: ...
    def __len__(self) -> int: ...
    def sync(self) -> None: ...
    def close(self) -> None: ...


def seen_key(url: Union[str, bytes]) -> bytes:
    """The key a URL is remembered by: its SURT key (or the URL itself when it has none), as bytes."""
    k = surt_or_url(url)
    b = k.encode("utf-8", "surrogateescape") if isinstance(k, str) else k
    if b"\n" in b or b"\r" in b:
        b = b.replace(b"\r", b"%0D").replace(b"\n", b"%0A")
    return b


def _h64(key: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "little")


def _publish(path: str, data: bytes) -> None:
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fsync_dir(os.path.dirname(path) or ".")


class _Run:
    """One sorted run, mmap'd: ``h`` (uint64 hashes, sorted) and ``off`` (offsets into ``keys``)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.name = os.path.basename(path)
        with open(path, "rb") as f:
            head = f.read(RUN_HEAD.size)
            if len(head) < RUN_HEAD.size:
                raise SeenFormatError(path, 0, "run file shorter than its header", "delete the seen directory "
                                      "and rebuild it from the session journal")
            magic, n, covered, crc = RUN_HEAD.unpack(head)
            if magic != RUN_MAGIC:
                raise SeenFormatError(path, 0, f"not a seen-set run (magic {magic!r})")
            size = os.fstat(f.fileno()).st_size
            if size != RUN_HEAD.size + 16 * n:
                raise SeenFormatError(path, size, f"run holds {size} bytes, its header says {n} entries")
            self.n = n
            self.covered = covered
            if n:
                self._mm: Optional[mmap.mmap] = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
                body = memoryview(self._mm)[RUN_HEAD.size:]
                if zlib.crc32(body) != crc:
                    body.release()
                    raise SeenFormatError(path, RUN_HEAD.size, "run entries fail their CRC")
                a = np.frombuffer(self._mm, dtype="<u8", offset=RUN_HEAD.size).reshape(n, 2)
                body.release()
            else:
                self._mm = None
                a = np.zeros((0, 2), dtype="<u8")
        self.h = a[:, 0]
        self.off = a[:, 1]

    @staticmethod
    def write(path: str, hashes: np.ndarray, offsets: np.ndarray, covered: int) -> None:
        order = np.argsort(hashes, kind="stable")
        a = np.empty((len(hashes), 2), dtype="<u8")
        a[:, 0] = hashes[order]
        a[:, 1] = offsets[order]
        body = a.tobytes()
        _publish(path, RUN_HEAD.pack(RUN_MAGIC, len(hashes), covered, zlib.crc32(body)) + body)

    def close(self) -> None:
        self.h = self.off = np.zeros(0, dtype="<u8")
        if self._mm is not None:
            try:
                self._mm.close()
            except BufferError:  # a view is still alive somewhere; the GC closes it
                pass
            self._mm = None


class ExactSeen:
    """The exact on-disk seen set in directory ``path`` (created if absent, reloaded if present)."""

    def __init__(self, path: PathLike, *, buffer: int = 1 << 17, max_runs: int = 8) -> None:
        self.path = os.fspath(path)
        self.buffer = buffer
        self.max_runs = max_runs
        os.makedirs(self.path, exist_ok=True)
        self._keys_path = os.path.join(self.path, "keys")
        self._manifest = os.path.join(self.path, "manifest")
        self._runs: List[_Run] = []
        self._serial = 0
        self._buf: Set[bytes] = set()
        self._buf_h = array("Q")
        self._buf_off = array("Q")
        self._pending = bytearray()    # keys not yet written to ``keys``
        self._written = 0              # bytes of ``keys`` on disk
        self._count = 0
        self._flush_due = False
        self._keys_mm: Optional[mmap.mmap] = None
        self._keys_mm_len = 0
        self._load()
        self._kf = open(self._keys_path, "ab")

    # -- open / reload

    def _load(self) -> None:
        covered = 0
        if os.path.exists(self._manifest):
            try:
                with open(self._manifest, "rb") as f:
                    man = json.loads(f.read())
                names = man["runs"]
                covered = int(man["covered"])
                if man.get("version") != MANIFEST_VERSION:
                    raise SeenFormatError(self._manifest, 0, f"manifest version {man.get('version')} is not "
                                          f"{MANIFEST_VERSION}", "upgrade warchive")
            except (ValueError, KeyError, TypeError) as e:
                raise SeenFormatError(self._manifest, 0, f"manifest is not valid: {e}") from None
            for name in names:
                run = _Run(os.path.join(self.path, name))
                self._runs.append(run)
                self._serial = max(self._serial, int(name.rsplit("-", 1)[1]))
            self._count = sum(r.n for r in self._runs)
        for name in os.listdir(self.path):  # runs a crash left out of the manifest
            if name.startswith("run-") and name not in {r.name for r in self._runs}:
                os.unlink(os.path.join(self.path, name))
        size = os.path.getsize(self._keys_path) if os.path.exists(self._keys_path) else 0
        if size < covered:
            raise SeenFormatError(self._keys_path, size, f"keys file is {size} bytes but the runs cover {covered}",
                                  "the seen directory was damaged; rebuild it from the session journal")
        if size > covered:
            with open(self._keys_path, "rb") as f:
                f.seek(covered)
                tail = f.read()
            end = tail.rfind(b"\n") + 1
            if end < len(tail):  # a torn last key: cut it off
                with open(self._keys_path, "r+b") as f:
                    f.truncate(covered + end)
                size = covered + end
            pos = covered
            for key in tail[:end].split(b"\n")[:-1]:
                if key not in self._buf:
                    self._buf.add(key)
                    self._buf_h.append(_h64(key))
                    self._buf_off.append(pos)
                    self._count += 1
                pos += len(key) + 1
        self._written = size

    # -- lookups

    def _key_at(self, off: int) -> bytes:
        if self._keys_mm is None or off >= self._keys_mm_len:
            self._kf.flush()
            if self._keys_mm is not None:
                self._keys_mm.close()
            with open(self._keys_path, "rb") as f:
                self._keys_mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            self._keys_mm_len = len(self._keys_mm)
        end = self._keys_mm.find(b"\n", off)
        return self._keys_mm[off:end]

    def _in_runs(self, key: bytes, h: int) -> bool:
        hv = np.uint64(h)
        for run in self._runs:
            hs = run.h
            i = int(np.searchsorted(hs, hv))
            while i < run.n and hs[i] == hv:
                if self._key_at(int(run.off[i])) == key:
                    return True
                i += 1
        return False

    def __contains__(self, url: object) -> bool:
        if not isinstance(url, (str, bytes)):
            return False
        key = seen_key(url)
        return key in self._buf or self._in_runs(key, _h64(key))

    def _insert(self, key: bytes, h: int) -> None:
        self._buf.add(key)
        self._buf_h.append(h)
        self._buf_off.append(self._written + len(self._pending))
        self._pending += key + b"\n"
        self._count += 1
        if len(self._buf) >= self.buffer:
            self._flush_due = True

    def add(self, url: Union[str, bytes]) -> bool:
        """Remember ``url``; True if it was not seen before."""
        if self._flush_due:
            self._flush_run()
        key = seen_key(url)
        if key in self._buf:
            return False
        h = _h64(key)
        if self._runs and self._in_runs(key, h):
            return False
        self._insert(key, h)
        return True

    def add_many(self, urls: Iterable[Union[str, bytes]]) -> List[bool]:
        """``add`` for each URL, with the on-disk runs searched once for the whole batch."""
        if self._flush_due:
            self._flush_run()
        keys = [seen_key(u) for u in urls]
        hashes = [_h64(k) for k in keys]
        found = [False] * len(keys)
        if self._runs and keys:
            hv = np.array(hashes, dtype=np.uint64)
            for run in self._runs:
                if not run.n:
                    continue
                idx = np.searchsorted(run.h, hv)
                hit = np.nonzero(run.h[np.minimum(idx, run.n - 1)] == hv)[0]
                for j in hit.tolist():
                    if found[j]:
                        continue
                    i = int(idx[j])
                    while i < run.n and run.h[i] == hv[j]:
                        if self._key_at(int(run.off[i])) == keys[j]:
                            found[j] = True
                            break
                        i += 1
        out = []
        for key, h, f in zip(keys, hashes, found):
            if f or key in self._buf:
                out.append(False)
            else:
                self._insert(key, h)
                out.append(True)
        return out

    def __len__(self) -> int:
        return self._count

    # -- persistence

    def _write_pending(self) -> None:
        if self._pending:
            self._kf.write(self._pending)
            self._kf.flush()
            self._written += len(self._pending)
            self._pending = bytearray()

    def _flush_run(self) -> None:
        self._flush_due = False
        if not self._buf:
            return
        self._write_pending()
        os.fsync(self._kf.fileno())
        self._serial += 1
        name = f"run-{self._serial:06d}"
        _Run.write(os.path.join(self.path, name), np.frombuffer(self._buf_h, dtype=np.uint64),
                   np.frombuffer(self._buf_off, dtype=np.uint64), self._written)
        self._runs.append(_Run(os.path.join(self.path, name)))
        self._buf = set()
        self._buf_h = array("Q")
        self._buf_off = array("Q")
        if len(self._runs) > self.max_runs:
            self._merge_runs()
        self._write_manifest()

    def _merge_runs(self) -> None:
        h = np.concatenate([r.h for r in self._runs])
        off = np.concatenate([r.off for r in self._runs])
        covered = max(r.covered for r in self._runs)
        self._serial += 1
        name = f"run-{self._serial:06d}"
        _Run.write(os.path.join(self.path, name), h, off, covered)
        old = self._runs
        self._runs = [_Run(os.path.join(self.path, name))]
        self._write_manifest()
        for r in old:
            r.close()
            os.unlink(r.path)

    def _write_manifest(self) -> None:
        covered = max((r.covered for r in self._runs), default=0)
        man = {"version": MANIFEST_VERSION, "runs": [r.name for r in self._runs], "covered": covered,
               "entries": sum(r.n for r in self._runs)}
        _publish(self._manifest, json.dumps(man).encode() + b"\n")

    def sync(self) -> None:
        """Write the keys held in memory to ``keys`` and fsync it (they now survive a power cut)."""
        self._write_pending()
        os.fsync(self._kf.fileno())

    def checkpoint(self) -> None:
        """``sync``, and turn the keys held in memory into a run (a faster reopen)."""
        self._flush_run()
        self.sync()

    def close(self) -> None:
        if self._kf.closed:
            return
        self.sync()
        if self._keys_mm is not None:
            self._keys_mm.close()
            self._keys_mm = None
        for r in self._runs:
            r.close()
        self._kf.close()

    def __enter__(self) -> "ExactSeen":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def bloom_size(capacity: int, fp_rate: float) -> Tuple[int, int]:
    """Bits ``m`` and hash count ``k`` for ``capacity`` keys at false-positive rate ``fp_rate``."""
    if capacity < 1 or not 0 < fp_rate < 1:
        raise ValueError("capacity must be >= 1 and 0 < fp_rate < 1")
    m = int(math.ceil(-capacity * math.log(fp_rate) / (math.log(2) ** 2)))
    m = (m + 7) // 8 * 8
    k = max(1, int(round(m / capacity * math.log(2))))
    return m, k


class BloomSeen:
    """A Bloom filter seen set in file ``path`` (loaded if it exists, else sized for ``capacity``/``fp_rate``)."""

    def __init__(self, path: Optional[PathLike] = None, *, capacity: int = 10_000_000, fp_rate: float = 1e-4) -> None:
        self.path = os.fspath(path) if path is not None else None
        if self.path is not None and os.path.exists(self.path):
            self._load(self.path)
        else:
            self.m, self.k = bloom_size(capacity, fp_rate)
            self.capacity = capacity
            self.fp_rate = fp_rate
            self.count = 0
            self.bits = np.zeros(self.m // 8, dtype=np.uint8)
        self._mv = memoryview(self.bits.data)

    def _load(self, path: str) -> None:
        with open(path, "rb") as f:
            head = f.read(BLOOM_HEAD.size)
            if len(head) < BLOOM_HEAD.size:
                raise SeenFormatError(path, 0, "Bloom filter file shorter than its header")
            magic, m, k, count, capacity, fp, crc = BLOOM_HEAD.unpack(head)
            if magic != BLOOM_MAGIC:
                raise SeenFormatError(path, 0, f"not a warchive Bloom filter (magic {magic!r})")
            data = f.read()
        if m % 8 or len(data) != m // 8 or not 0 < k < 64:
            raise SeenFormatError(path, BLOOM_HEAD.size, f"{len(data)} bytes of bits, header says {m} bits, k={k}")
        if zlib.crc32(data) != crc:
            raise SeenFormatError(path, BLOOM_HEAD.size, "bits fail their CRC", "the filter cannot be trusted: "
                                  "start a new one (URLs already crawled may be fetched again)")
        self.m, self.k, self.count, self.capacity, self.fp_rate = m, k, count, capacity, fp
        self.bits = np.frombuffer(bytearray(data), dtype=np.uint8)

    def _indexes(self, key: bytes) -> List[int]:
        d = hashlib.blake2b(key, digest_size=16).digest()
        h1 = int.from_bytes(d[:8], "little")
        h2 = int.from_bytes(d[8:], "little") | 1
        m = self.m
        return [((h1 + i * h2) & _MASK64) % m for i in range(self.k)]

    def add(self, url: Union[str, bytes]) -> bool:
        """Remember ``url``; True if it was (certainly) new, False if it was (probably) seen."""
        mv = self._mv
        new = False
        for i in self._indexes(seen_key(url)):
            byte, bit = i >> 3, 1 << (i & 7)
            v = mv[byte]
            if not v & bit:
                mv[byte] = v | bit
                new = True
        if new:
            self.count += 1
        return new

    def add_many(self, urls: Iterable[Union[str, bytes]]) -> List[bool]:
        """``add`` for each URL, the bit arithmetic done by numpy for the whole batch.

        A key repeated within the batch is new at most once; otherwise every key is tested against
        the bits as they were before the batch (so a batch makes no false positive among its own keys).
        """
        keys = [seen_key(u) for u in urls]
        if len(keys) > 65536:   # bound the index matrices (k x 8 bytes per key)
            out: List[bool] = []
            for i in range(0, len(keys), 65536):
                out.extend(self._add_keys(keys[i:i + 65536]))
            return out
        return self._add_keys(keys)

    def _add_keys(self, keys: List[bytes]) -> List[bool]:
        if not keys:
            return []
        digests = b"".join(hashlib.blake2b(k, digest_size=16).digest() for k in keys)
        h = np.frombuffer(digests, dtype="<u8").reshape(-1, 2)
        h1, h2 = h[:, 0], h[:, 1] | np.uint64(1)
        j = np.arange(self.k, dtype=np.uint64)
        with np.errstate(over="ignore"):
            idx = (h1[:, None] + j[None, :] * h2[:, None]) % np.uint64(self.m)   # uint64 wraps: mod 2^64
        byte = (idx >> np.uint64(3)).astype(np.intp)
        bit = (np.uint8(1) << (idx & np.uint64(7)).astype(np.uint8)).astype(np.uint8)
        new = ~np.all(self.bits[byte] & bit, axis=1)
        first: Dict[bytes, int] = {}
        for i, k in enumerate(keys):
            if k in first:
                new[i] = False
            else:
                first[k] = i
        np.bitwise_or.at(self.bits, byte.ravel(), bit.ravel())
        self.count += int(new.sum())
        return new.tolist()

    def __contains__(self, url: object) -> bool:
        if not isinstance(url, (str, bytes)):
            return False
        mv = self._mv
        return all(mv[i >> 3] & (1 << (i & 7)) for i in self._indexes(seen_key(url)))

    def __len__(self) -> int:
        return self.count

    def current_fp_rate(self) -> float:
        """The false-positive rate now, for ``count`` keys: (1 - e^(-k n / m))^k."""
        return float((1.0 - math.exp(-self.k * self.count / self.m)) ** self.k)

    def save(self, path: Optional[PathLike] = None) -> None:
        target = os.fspath(path) if path is not None else self.path
        if target is None:
            raise ValueError("no path to save the Bloom filter to")
        data = self.bits.tobytes()
        _publish(target, BLOOM_HEAD.pack(BLOOM_MAGIC, self.m, self.k, self.count, self.capacity, self.fp_rate,
                                         zlib.crc32(data)) + data)

    def sync(self) -> None:
        if self.path is not None:
            self.save()

    def close(self) -> None:
        self.sync()

    def __enter__(self) -> "BloomSeen":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_seen(path: PathLike, kind: str = "exact", **kw: object) -> Union[ExactSeen, BloomSeen]:
    """``ExactSeen(path)`` (kind "exact") or ``BloomSeen(path)`` (kind "bloom"; capacity=, fp_rate=)."""
    if kind == "exact":
        return ExactSeen(path, **kw)  # type: ignore[arg-type]
    if kind == "bloom":
        return BloomSeen(path, **kw)  # type: ignore[arg-type]
    raise ValueError(f"seen set kind {kind!r}: 'exact' or 'bloom'")
