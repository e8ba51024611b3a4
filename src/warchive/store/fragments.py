"""Reading a stored file's bytes from its chunks: every fragment checked before use, a bad one
replaced by decoding from the others.

``FragmentReader(store, manifest)`` keeps the chunk files of one stored file open and answers
``pieces(start, end)``: the file's bytes [start, end) as a list of buffers. For each stripe the
range touches it reads only the data fragments holding those bytes (one pread each), checks each
against the manifest's BLAKE3 hash, and serves their payloads as they are (the code is systematic:
warchive.store.codec), with no decode. When one of them is missing, short, or fails its hash, it
reads more fragments of that stripe (data first, then parity) until it has k good ones and decodes
the stripe with pyeclib; with fewer than k good fragments it raises StoreError naming the file,
the stripe and every bad chunk with what is wrong with it.

Every fault met is kept in ``damage`` (one ``Damage`` per stripe and chunk), so that a caller can
say that a read was served from parity and scrub/repair can use the same reader (``fragment``
reads one checked fragment; ``stripe`` decodes a whole stripe). Recently read fragments (and
decoded stripes) are cached, ``cache_bytes`` at most, so a reader reading a record a few KiB at a
time reads and hashes each fragment once. Safe to share between threads (pread; a lock around the
cache).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple, Union

from ..errors import StoreError
from .catalog import Store
from .codec import fragment_digest
from .layout import store_url
from .manifest import Manifest

Buffer = Union[bytes, memoryview]
DEFAULT_CACHE = 16 << 20


@dataclass(frozen=True)
class Damage:
    stripe: int
    index: int         # chunk / fragment index
    volume: int
    path: str          # the chunk file
    problem: str       # "missing", "truncated ...", "hash mismatch", an OSError, a volume problem

    def __str__(self) -> str:
        return f"chunk {self.index} on volume {self.volume} ({self.path}): {self.problem}"


class FragmentReader:
    """Verified reads of the stored file of ``manifest``."""

    def __init__(self, store: Store, manifest: Manifest, cache_bytes: int = DEFAULT_CACHE) -> None:
        self.store, self.manifest = store, manifest
        self.codec = store.codec
        if (self.codec.name, self.codec.k, self.codec.m) != (manifest.codec, manifest.k, manifest.m) \
                or self.codec.header_size != manifest.header_size:
            self.codec = type(store.codec)(manifest.codec, manifest.k, manifest.m)
        if self.codec.header_size != manifest.header_size:
            raise StoreError(store_url(store.root, manifest.name), None, f"the manifest's fragment header is "
                             f"{manifest.header_size} bytes, this pyeclib writes {self.codec.header_size}")
        self.url = store_url(store.root, manifest.name)
        self.damage: List[Damage] = []
        self._bad: Dict[Tuple[int, int], Damage] = {}
        self._fds: Dict[int, Union[int, str]] = {}     # chunk index -> fd, or why it cannot be opened
        self._cache: "OrderedDict[Tuple[int, int], bytes]" = OrderedDict()   # (stripe, index or -1: decoded)
        self._cached = 0
        self._cache_max = cache_bytes
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            for fd in self._fds.values():
                if isinstance(fd, int):
                    os.close(fd)
            self._fds = {}
            self._cache.clear()
            self._cached = 0

    def __enter__(self) -> "FragmentReader":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---------------------------------------------------------------- one fragment
    def _fd(self, index: int) -> Union[int, str]:
        fd = self._fds.get(index)
        if fd is None:
            vol = self.manifest.chunks[index].volume
            problem = self.store.volume_problem(vol)
            if problem:
                fd = f"volume unavailable: {problem}"
            else:
                try:
                    fd = os.open(self.store.chunk_path(self.manifest, index), os.O_RDONLY)
                except FileNotFoundError:
                    fd = "missing"
                except OSError as e:
                    fd = e.strerror or str(e)
            with self._lock:
                if index in self._fds:   # another thread opened it meanwhile
                    if isinstance(fd, int):
                        os.close(fd)
                    fd = self._fds[index]
                else:
                    self._fds[index] = fd
        return fd

    def _fault(self, s: int, i: int, problem: str) -> None:
        d = Damage(s, i, self.manifest.chunks[i].volume, self.store.chunk_path(self.manifest, i), problem)
        with self._lock:
            if (s, i) not in self._bad:
                self._bad[(s, i)] = d
                self.damage.append(d)

    def fragment(self, s: int, i: int) -> Optional[bytes]:
        """Fragment i of stripe s as the manifest says it is, or None (the fault is in ``damage``)."""
        if (s, i) in self._bad:
            return None
        got = self._cache_get((s, i))
        if got is not None:
            return got
        fd = self._fd(i)
        if isinstance(fd, str):
            self._fault(s, i, fd)
            return None
        want = self.manifest.fragment_length(s)
        try:
            data = os.pread(fd, want, self.manifest.fragment_offset(s))
        except OSError as e:
            self._fault(s, i, e.strerror or str(e))
            return None
        if len(data) != want:
            self._fault(s, i, f"truncated ({len(data)} of the {want} bytes of stripe {s})")
            return None
        if fragment_digest(data) != self.manifest.stripes[s][i]:
            self._fault(s, i, "hash mismatch (the fragment's bytes are not those stored)")
            return None
        self._cache_put((s, i), data)
        return data

    # ---------------------------------------------------------------- stripes and ranges
    def stripe(self, s: int, have: Optional[Dict[int, bytes]] = None) -> bytes:
        """The whole of stripe s decoded from k good fragments (``have``: good ones already read)."""
        got = self._cache_get((s, -1))
        if got is not None:
            return got
        man = self.manifest
        good = dict(have or {})
        for i in range(man.n):
            if len(good) >= man.k:
                break
            if i not in good:
                f = self.fragment(s, i)
                if f is not None:
                    good[i] = f
        if len(good) < man.k:
            bad = [self._bad[(s, i)] for i in range(man.n) if (s, i) in self._bad]
            start = man.stripe_start(s)
            raise StoreError(self.url, start, f"stripe {s} (file bytes {start}-{start + man.stripe_size(s) - 1}) "
                             f"has {len(good)} good fragments of the {man.k} needed; bad: "
                             + "; ".join(str(d) for d in bad), "the file cannot be read there")
        data = self.codec.decode(good, man.stripe_size(s))
        self._cache_put((s, -1), data)
        return data

    def stripe_pieces(self, s: int, lo: int, hi: int) -> List[Buffer]:
        """Bytes [lo, hi) of stripe s (offsets inside the stripe)."""
        man = self.manifest
        p = man.payload_size(s)
        h = man.header_size
        have: Dict[int, bytes] = {}
        for j in range(lo // p, (hi - 1) // p + 1):
            f = self.fragment(s, j)
            if f is None:
                return [memoryview(self.stripe(s, have))[lo:hi]]
            have[j] = f
        out: List[Buffer] = []
        for j, f in have.items():
            a = max(lo - j * p, 0)
            b = min(hi - j * p, p)
            out.append(memoryview(f)[h + a: h + b])
        return out

    def pieces(self, start: int, end: int) -> List[Buffer]:
        """The file's bytes [start, end) (clipped to the file) as buffers, in order."""
        man = self.manifest
        end = min(end, man.size)
        out: List[Buffer] = []
        for s in man.stripes_for(start, end):
            base = man.stripe_start(s)
            out.extend(self.stripe_pieces(s, max(start - base, 0), min(end - base, man.stripe_size(s))))
        return out

    def read(self, start: int, end: int) -> bytes:
        """The file's bytes [start, end) (clipped to the file)."""
        return b"".join(self.pieces(start, end))

    # ---------------------------------------------------------------- cache
    def _cache_get(self, key: Tuple[int, int]) -> Optional[bytes]:
        with self._lock:
            got = self._cache.get(key)
            if got is not None:
                self._cache.move_to_end(key)
            return got

    def _cache_put(self, key: Tuple[int, int], data: bytes) -> None:
        if len(data) > self._cache_max:
            return
        with self._lock:
            if key in self._cache:
                return
            self._cache[key] = data
            self._cached += len(data)
            while self._cached > self._cache_max:
                _, old = self._cache.popitem(last=False)
                self._cached -= len(old)
