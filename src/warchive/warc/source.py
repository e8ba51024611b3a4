"""What an archive is read from: a path, a seekable file, a random-access object that is no file
(``RandomAccess``: a stored file of the durable store, warchive.store.StoreFile), or a stream (a
pipe, standard input, a FIFO, any object with ``read``), and the byte reader made for it.

Files are read with pread (the gzip kernel's Reader over the descriptor, or ZstFrames),
so that payloads can be skipped; a random-access object is read the same way through its
``pread`` (or ``preadinto``), the kernel calling back into Python for each window it fills. A stream can only be read forward: it is wrapped so that
its first bytes can be looked at (to tell gzip, zstd and plain apart) and then read again,
and handed to the same readers, which then never seek (no `sl` skipping: every member is
inflated). Offsets on a stream count from its first byte read.

This module does not parse records.
"""

from __future__ import annotations

import errno
import io
import os
import stat
from typing import Any, BinaryIO, Optional, Protocol, Union

from .._ext.gzip_members import FORMAT_ZSTD, Reader
from .zst import ZSTD_MAGIC, ZstFrames, skippable_magic



class RandomAccess(Protocol):
    """A file read by position that has no descriptor: ``size`` bytes, ``pread(n, offset)``
    (up to n bytes, fewer only at the end). warchive.store.StoreFile is one; so is any object
    with these two (and, for Zstandard files, ``seek`` and ``read``)."""

    @property
    def size(self) -> int: ...

    def pread(self, n: int, offset: int) -> bytes: ...


Source = Union[str, bytes, "os.PathLike[str]", BinaryIO, RandomAccess]
ByteReader = Union[Reader, ZstFrames]


class StreamSource(io.RawIOBase):
    """A forward-only stream whose first bytes can be looked at (``peek``) before it is read."""

    def __init__(self, raw: Any, name: Optional[str] = None, own: bool = False) -> None:
        super().__init__()
        self._raw = raw
        self._head = b""
        self._own = own
        self.name = name if name is not None else _name_of(raw)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def peek(self, n: int) -> bytes:
        while len(self._head) < n:
            b = self._raw.read(n - len(self._head))
            if not b:
                break
            self._head += b
        return self._head[:n]

    def readinto(self, b: Any) -> int:
        if self._head:
            k = min(len(b), len(self._head))
            b[:k] = self._head[:k]
            self._head = self._head[k:]
            return k
        readinto = getattr(self._raw, "readinto", None)
        if readinto is not None:
            return readinto(b) or 0
        data = self._raw.read(len(b))
        b[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if self._own:
            self._raw.close()
        super().close()


class ForwardWindow:
    """``read_at(off, n)`` over a stream read forward, keeping the last ``history`` bytes
    before the offset last asked for (going back further fails with ESPIPE)."""

    def __init__(self, f: Any, history: int = 1 << 20) -> None:
        self._f = f
        self._buf = bytearray()
        self._base = 0
        self._history = history
        self.name = getattr(f, "name", None)

    @property
    def floor(self) -> int:
        return self._base

    def read_at(self, off: int, n: int) -> bytes:
        if off < self._base:
            raise OSError(errno.ESPIPE, "Illegal seek (a stream cannot go back)", self.name)
        while self._base + len(self._buf) < off + n:
            b = self._f.read(max(1 << 16, off + n - self._base - len(self._buf)))
            if not b:
                break
            self._buf += b
        cut = off - self._history - self._base
        if cut > 0:
            del self._buf[:cut]
            self._base += cut
        i = off - self._base
        return bytes(self._buf[i : i + n])


def _name_of(f: Any) -> Optional[str]:
    name = getattr(f, "name", None)
    return name if isinstance(name, str) else None


def is_random_access(f: Any) -> bool:
    """A source read by position (see RandomAccess): ``pread`` and an int ``size``. (Attribute
    looks rather than isinstance of the runtime Protocol, which costs 20 us a record opened.)"""
    return hasattr(f, "pread") and type(getattr(f, "size", None)) is int


def _has_fd(f: Any) -> bool:
    """A file object read with pread: seekable, with a descriptor of a regular file."""
    try:
        return bool(f.seekable()) and stat.S_ISREG(os.fstat(f.fileno()).st_mode)
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return False


WINDOW = 1 << 20   # the kernel Reader's first buffer; it grows as a read needs


def open_reader(source: Source, offset: Optional[int] = None, verify: bool = False,
                window: int = WINDOW, length: Optional[int] = None) -> ByteReader:
    """The byte reader of source: the gzip kernel's Reader (gzip and plain) or ZstFrames (zstd).
    ``window``: the first read of a file (1 MiB for iterating; a single record at an offset,
    as replay opens one, is read faster with a small one: the window grows when it must).
    ``length``: how long the record at ``offset`` is, when an index says: a file is then read
    in one piece of that length and a gzip member inflated whole (a wrong length costs time only)."""
    if isinstance(source, (str, bytes, os.PathLike)):
        path = os.fsdecode(os.fspath(source))
        if stat.S_ISREG(os.stat(path).st_mode):
            r = Reader(path, offset=offset, verify=verify, window=window, length=length or 0)
            if r.format == FORMAT_ZSTD:
                r.close()
                return ZstFrames(path, offset=offset)
            return r
        # a FIFO, /dev/stdin, a character device: a stream
        return _stream_reader(StreamSource(io.FileIO(path, "rb"), name=path, own=True), offset, verify)
    if is_random_access(source) or _has_fd(source):   # the kernel reads by a descriptor when there is one
        r = Reader(source, offset=offset, verify=verify, window=window, length=length or 0)
        if r.format == FORMAT_ZSTD:
            r.close()
            return ZstFrames(source, offset=offset)
        return r
    if isinstance(source, io.IOBase) and _seekable(source):   # (io.BytesIO): from offset, or from
        if offset is None:                                     # where it is; offsets count from its start
            offset = source.tell()
        else:
            source.seek(offset)
    return _stream_reader(StreamSource(source), offset, verify)


def _seekable(source: Any) -> bool:
    try:
        return bool(source.seekable())
    except (AttributeError, OSError, ValueError):
        return False


def _stream_reader(s: StreamSource, offset: Optional[int], verify: bool) -> ByteReader:
    magic = s.peek(4)
    if len(magic) == 4 and (magic == ZSTD_MAGIC or skippable_magic(magic)):
        return ZstFrames(ForwardWindow(s), offset=offset)
    return Reader(s, offset=offset, verify=verify)
