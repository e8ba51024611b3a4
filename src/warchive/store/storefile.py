"""A stored file as a read-only, seekable binary file object: what replay and indexing read.

    with StoreFile(store, "crawl-00001.warc.gz") as f:
        f.seek(offset); head = f.read(4096)          # io.RawIOBase: read, readinto, seek, tell
        data = f.pread(length, offset)               # positional, does not move the position
        f.preadinto(buffer, offset)                  # the same into a buffer (what the kernels call)
        ArchiveIterator(f, offset=offset)            # warchive's reader takes it as any file

Every byte comes from verified fragments (warchive.store.fragments): a bad chunk is made up for
from parity on the fly, and what was made up for is in ``damage``; fewer than k good fragments of
a stripe raise StoreError. ``pread`` is safe to call from several threads at once. Recently read
fragments are cached (``cache_bytes``), so small sequential reads hash each fragment once.
The manifest is read once, at open: a stored file never changes.
"""

from __future__ import annotations

import io
import os
from typing import Any, List, Optional, Union

from .catalog import Store
from .fragments import DEFAULT_CACHE, Damage, FragmentReader
from .layout import store_url
from .manifest import Manifest


class StoreFile(io.RawIOBase):
    """Stored file ``name`` of ``store`` (a Store or a store's directory), read only."""

    def __init__(self, store: Union[Store, str], name: str, cache_bytes: int = DEFAULT_CACHE) -> None:
        super().__init__()
        self.store = store if isinstance(store, Store) else Store(os.fspath(store))
        self.manifest: Manifest = self.store.manifest(name)
        self.name = store_url(self.store.root, name)
        self.size = self.manifest.size
        self._reader = FragmentReader(self.store, self.manifest, cache_bytes)
        self._pos = 0

    @property
    def damage(self) -> List[Damage]:
        """The faults met so far that parity made up for."""
        return list(self._reader.damage)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        self._checkClosed()
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        self._checkClosed()
        if whence == io.SEEK_SET:
            pos = offset
        elif whence == io.SEEK_CUR:
            pos = self._pos + offset
        elif whence == io.SEEK_END:
            pos = self.size + offset
        else:
            raise ValueError(f"invalid whence ({whence})")
        if pos < 0:
            raise OSError(22, "negative seek position")   # as a regular file answers
        self._pos = pos
        return pos

    def pread(self, n: int, offset: int) -> bytes:
        """Up to ``n`` bytes at ``offset`` (fewer at the end of the file), position unchanged."""
        self._checkClosed()
        if n < 0 or offset < 0:
            raise ValueError("pread needs n >= 0 and offset >= 0")
        if offset >= self.size or n == 0:
            return b""
        return self._reader.read(offset, offset + n)

    def preadinto(self, b: Any, offset: int) -> int:
        """Fill ``b`` with the bytes at ``offset`` (fewer at the end of the file); how many.
        Position unchanged. The gzip and indexing kernels read a stored file through this, one
        window at a time, with no copy in between."""
        self._checkClosed()
        if offset < 0:
            raise ValueError("preadinto needs offset >= 0")
        view = memoryview(b).cast("B")
        end = min(offset + len(view), self.size)
        if end <= offset:
            return 0
        k = 0
        for piece in self._reader.pieces(offset, end):
            view[k: k + len(piece)] = piece
            k += len(piece)
        return k

    def readinto(self, b: Any) -> int:
        self._checkClosed()
        k = self.preadinto(b, self._pos)
        self._pos += k
        return k

    def read(self, size: Optional[int] = -1) -> bytes:
        self._checkClosed()
        if size is None or size < 0:
            size = max(self.size - self._pos, 0)
        data = self.pread(size, self._pos)
        self._pos += len(data)
        return data

    def readall(self) -> bytes:
        return self.read(-1)

    def close(self) -> None:
        if not self.closed:
            self._reader.close()
        super().close()
