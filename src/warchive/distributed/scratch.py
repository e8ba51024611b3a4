"""Scratch files of a distributed index: published by rename, not fsynced, checked when reused.

Runs, parts and block pieces live only until the output is published, and
any of them can be computed again from the inputs, so (as Spark and Hadoop
treat shuffle files) they are not forced to disk: an fsync costs a few
milliseconds that the disk's journal serialises across every worker, and
most scratch files are removed before the kernel would write them back at
all. What a power loss can leave instead (a renamed file that is short or
zeroed) is caught when a rerun wants to reuse it: ``ScratchFile`` counts the
size and the CRC-32 of what it writes, the task's manifest records both
(warchive.distributed.manifest), and ``intact`` compares them with the file
before it is trusted. Final outputs do not come through here: they are
published with warchive.durable.AtomicOutput, fsync and all.
This module writes and checks files; it must not know what is in them.
"""

from __future__ import annotations

import io
import os
from typing import Any, BinaryIO, List, Optional

from isal.isal_zlib import crc32   # zlib's CRC-32, ~10x faster than zlib.crc32 here

from ..durable import temp_file
from ..errors import IndexFormatError, WriteError

__all__ = ["ScratchFile", "FileSlice", "intact", "publish_bytes"]

CHECK_CHUNK = 4 << 20


class ScratchFile:
    """A file written as NAME.<random>.tmp and renamed to NAME by ``commit`` (no fsync); its
    size and CRC-32 are counted as it is written. ``abort`` removes the temporary file."""

    def __init__(self, path: str, buffering: int = 1 << 20) -> None:
        self.path = path
        fd, self.tmp = temp_file(os.path.dirname(os.path.abspath(path)), os.path.basename(path) + ".", ".tmp")
        self.f: BinaryIO = os.fdopen(fd, "wb", buffering=buffering)
        self.size = 0
        self.crc = 0
        self.done = False

    def write(self, b: bytes) -> None:
        try:
            self.f.write(b)
        except OSError as e:
            raise WriteError(self.path, self.size, f"write failed: {e.strerror or e}",
                             "free space on the scratch disk and run the command again") from e
        self.size += len(b)
        self.crc = crc32(b, self.crc)

    def commit(self) -> None:
        try:
            self.f.close()
        except OSError as e:
            self.abort()
            raise WriteError(self.path, self.size, f"write failed: {e.strerror or e}",
                             "free space on the scratch disk and run the command again") from e
        os.chmod(self.tmp, 0o644)
        os.replace(self.tmp, self.path)
        self.done = True

    def abort(self) -> None:
        if self.done:
            return
        self.done = True
        try:
            self.f.close()
        except OSError:
            pass
        try:
            os.unlink(self.tmp)
        except OSError:
            pass

    def entry(self, directory: str) -> List[Any]:
        """[name relative to `directory`, size, CRC-32]: what a manifest records of this file."""
        return [os.path.relpath(self.path, directory), self.size, self.crc]

    def __enter__(self) -> "ScratchFile":
        return self

    def __exit__(self, et: object, ev: object, tb: object) -> None:
        if et is None:
            self.commit()
        else:
            self.abort()


class FileSlice:
    """Bytes [offset, offset + length) of a file, read front to back as a file is (``readinto``):
    one key range of a map task's run, as the merge reads it. The file is opened at the first
    read (a merge of more runs than it takes at once must not hold them all open)."""

    def __init__(self, path: str, offset: int, length: int) -> None:
        self.path = path
        self.name = f"{path} [{offset}:{offset + length}]"
        self.offset = offset
        self.left = length
        self.f: Optional[io.FileIO] = None

    def readinto(self, b: Any) -> int:
        n = min(len(b), self.left)
        if n <= 0:
            return 0
        if self.f is None:
            self.f = open(self.path, "rb", buffering=0)
            self.f.seek(self.offset)
        got = self.f.readinto(memoryview(b)[:n]) or 0
        if got == 0:
            raise IndexFormatError(self.path, None, f"the file ends {self.left} bytes before the range "
                                   f"{self.name} does; run the command again (the task that wrote it runs again)")
        self.left -= got
        return got

    def close(self) -> None:
        if self.f is not None:
            self.f.close()


def publish_bytes(path: str, data: bytes) -> List[Any]:
    """`data` as the scratch file `path`; its entry (relative to path's directory)."""
    with ScratchFile(path, buffering=0) as f:
        f.write(data)
    return f.entry(os.path.dirname(path))


def intact(path: str, size: int, crc: int) -> bool:
    """Whether the file at `path` has exactly `size` bytes with CRC-32 `crc`."""
    try:
        with open(path, "rb", buffering=0) as f:
            if os.fstat(f.fileno()).st_size != size:
                return False
            c = 0
            n = 0
            while True:
                chunk = f.read(CHECK_CHUNK)
                if not chunk:
                    break
                c = crc32(chunk, c)
                n += len(chunk)
    except OSError:
        return False
    return n == size and c == crc
