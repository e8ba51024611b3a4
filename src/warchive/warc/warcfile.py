"""One WARC file being written: created as ``NAME.open``, renamed ``NAME`` once whole and on disk.

A record arrives encoded (warchive.warc.encode) and goes to the kernel in one
``writev``, so a killed process leaves the file valid up to its last complete
record; a write that fails is cut off again. ``close()`` fsyncs the file,
renames it and fsyncs the directory, so a file named without ``.open`` is
complete; ``warchive recover`` (warchive.warc.recover.recover) cuts a torn tail
off an ``.open`` file. ``Written`` says where a record went. This module does
not name files, roll them over or build records (warchive.warc.writer does).
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from typing import Any, List, Optional

from ..durable import fsync_dir
from ..errors import ArchiveError, WriteError
from .headers import Headers
from .record import HeaderFields

WRITEBACK_EVERY = 32 << 20   # with fsync on close: start the kernel's writeback every 32 MiB written


@dataclass
class Written(HeaderFields):
    """Where a record went: ``filename`` (final base name), ``offset``, ``length`` as warcio reports
    them, and the record's heads (``headers`` WARC fields, ``http`` HTTP head or None); the header
    fields ``record_id``, ``date``, ``target_uri``, ``payload_digest``, ``block_digest``
    (warchive.warc.record.HeaderFields). warchive.index.cdx.written_record_line makes its index
    line (a LocatedRecord)."""

    filename: str
    path: str                       # final path of the file (it is NAME.open until closed)
    offset: int
    length: int
    type: str
    headers: Headers
    http: Optional[Headers]
    uncompressed_length: int

    @property
    def source(self) -> Optional[str]:
        """None: errors about a record just written name no file (it is still NAME.open)."""
        return None

    @property
    def payload(self) -> io.RawIOBase:
        """Not kept: the block stays with the writer's caller."""
        raise ArchiveError(f"record {self.record_id} was written without a WARC-Payload-Digest: "
                           "its index line needs the closed file (warchive index)")


def write_all(fd: int, pieces: List[Any], path: str, offset: int) -> int:
    """Write pieces with one writev (more only if the kernel takes part of them); bytes written."""
    total = 0
    for p in pieces:
        total += len(p)
    done = 0
    try:
        done = os.writev(fd, pieces)
        if done == total:
            return total
        views = [memoryview(p).cast("B") for p in pieces]
        n = done
        while True:
            while views and n >= len(views[0]):
                n -= len(views[0])
                views.pop(0)
            if views and n:
                views[0] = views[0][n:]
            if done >= total:
                return total
            n = os.writev(fd, views)
            done += n
    except OSError as e:
        raise WriteError(path, offset + done, f"write failed: {e.strerror or e}",
                         "the file is valid up to the last complete record; warchive recover it") from e


class WarcFile:
    """One output file being written: ``NAME.open`` until ``close()`` renames it ``NAME``."""

    def __init__(self, directory: str, name: str, preamble: bytes = b"") -> None:
        self.directory = directory
        self.name = name
        self.path = os.path.join(directory, name)
        self.open_path = self.path + ".open"
        if os.path.exists(self.path):
            raise WriteError(self.path, None, "the file exists already", "choose another prefix or directory")
        try:
            self.fd = os.open(self.open_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                              0o644)
        except OSError as e:
            raise WriteError(self.open_path, None, f"cannot create: {e.strerror or e}",
                             "remove the stale .open file (warchive recover) or choose another prefix") from e
        self.size = 0
        self.records = 0
        self.broken = False
        self.writeback = False  # set by the writer when it fsyncs on close
        self._clean = 0
        if preamble:
            self.size += write_all(self.fd, [preamble], self.open_path, 0)

    def write(self, pieces: List[Any]) -> int:
        """Append one encoded record; its offset. A failed write is cut off again, so the file
        stays whole; if even that fails, the file is left as NAME.open when closed."""
        off = self.size
        try:
            self.size += write_all(self.fd, pieces, self.open_path, off)
            if self.writeback and self.size - self._clean >= WRITEBACK_EVERY:
                self._start_writeback()
        except WriteError:
            try:
                os.ftruncate(self.fd, off)
                os.lseek(self.fd, off, os.SEEK_SET)
            except OSError:
                self.broken = True
            raise
        self.records += 1
        return off

    def _start_writeback(self) -> None:
        """Have the kernel start writing what was written so far (POSIX_FADV_DONTNEED starts the
        writeback of dirty pages without waiting, as sync_file_range would), so the fsync at
        close waits for the tail only; the file's pages then leave the page cache."""
        try:
            os.posix_fadvise(self.fd, self._clean, self.size - self._clean, os.POSIX_FADV_DONTNEED)
        except (AttributeError, OSError):
            self.writeback = False
        self._clean = self.size

    def close(self, fsync: bool = True) -> str:
        """fsync, rename NAME.open to NAME, fsync the directory; the final path."""
        if self.fd < 0:
            return self.path
        try:
            if fsync:
                os.fsync(self.fd)
        finally:
            os.close(self.fd)
            self.fd = -1
        if self.broken:  # a torn record could not be cut off: never make it look complete
            return self.open_path
        os.rename(self.open_path, self.path)
        if fsync:
            fsync_dir(self.directory, strict=False)
        return self.path

