"""Putting files on disk so that a crash never leaves one half-written under its final name.

``AtomicOutput`` writes a file under a temporary name in the destination
directory and renames it into place once it is complete and fsynced;
``fsync_dir`` puts a directory's new names on disk; ``temp_file`` creates a
file nobody else has. A write that fails (a full disk, an I/O error) is a
``WriteError`` naming the final path and the byte it got to, and leaves no
temporary file. Every layer that publishes files (index segments,
sorted runs, ZipNum clusters, record indexes, session sidecars, WARCs) uses
these. This module must not import anything from the rest of the package
but the kernels' system calls and the errors.
"""

from __future__ import annotations

import errno
import os
from typing import BinaryIO, Optional, Tuple, TypeVar

from ._ext.sysio import start_writeback
from .errors import WriteError

P = TypeVar("P", bound="Publisher")


def fsync_dir(path: str, strict: bool = True) -> None:
    """fsync the directory `path`. With strict=False a directory that cannot be opened or
    fsynced (some filesystems refuse) is let be: the data is on disk, only its name may not be."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        if strict:
            raise


def temp_file(directory: Optional[str], prefix: str, suffix: str) -> Tuple[int, str]:
    """A new file nobody else has (O_EXCL, mode 0600) in `directory` (default $TMPDIR or /tmp):
    its descriptor and path."""
    directory = directory or os.environ.get("TMPDIR") or "/tmp"
    while True:
        path = os.path.join(directory, f"{prefix}{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600), path
        except FileExistsError:
            continue


class Publisher:
    """An output that is either committed whole or aborted without a trace: ``with`` commits it
    when the block ends normally (and aborts it if the commit itself fails), aborts it when
    the block raises. Subclasses define ``commit`` and ``abort``."""

    def commit(self) -> None:
        raise NotImplementedError

    def abort(self) -> None:
        raise NotImplementedError

    def __enter__(self: P) -> P:
        return self

    def __exit__(self, et: object, ev: object, tb: object) -> None:
        if et is None:
            try:
                self.commit()
            except BaseException:
                self.abort()
                raise
        else:
            self.abort()


class AtomicOutput(Publisher):
    """A file written as NAME.<random>.tmp and renamed to NAME once complete and on disk
    (removed on failure): a reader never sees a NAME that is not whole.

        with AtomicOutput("index.seg") as out:    # committed at the end of the block,
            out.write(data)                       # removed if it raises

    Data goes to disk as it is written, so that the final fsync has little left to wait for:
    writeback of every 2 MiB is started without waiting (sync_file_range), or where that call
    does not exist every 8 MiB is fdatasync'ed. (Waiting for it cost `warchive index` 9-12 ms
    of the corpus run, on one core and on two.)"""

    START_EVERY = 2 << 20
    SYNC_EVERY = 8 << 20

    def __init__(self, path: str) -> None:
        self.path = path
        self.dir = os.path.dirname(os.path.abspath(path))
        fd, self.tmp = temp_file(self.dir, os.path.basename(path) + ".", ".tmp")
        self.f: BinaryIO = os.fdopen(fd, "wb", buffering=1 << 20)
        self._unsynced = 0
        self._written = 0
        self._async = True
        self._finished = False   # committed or aborted

    @property
    def closed(self) -> bool:
        """Committed or aborted."""
        return self._finished

    def write(self, b: bytes) -> None:
        try:
            self.f.write(b)
            self._unsynced += len(b)
            if self._unsynced >= (self.START_EVERY if self._async else self.SYNC_EVERY):
                self.f.flush()
                if self._async:
                    started = start_writeback(self.f.fileno(), self._written, self._unsynced)
                    if started is None:
                        self._async = False
                else:
                    os.fdatasync(self.f.fileno())
                self._written += self._unsynced
                self._unsynced = 0
        except OSError as e:
            raise self.failed(e) from e

    def failed(self, e: OSError) -> WriteError:
        """The WriteError of an OSError met while writing (the file is not published)."""
        remedy = "free space on its disk and run the command again" if e.errno == errno.ENOSPC else \
            "nothing was published; run the command again once the disk is sound"
        return WriteError(self.path, self._written + self._unsynced, f"write failed: {e.strerror or e}", remedy)

    def commit(self) -> None:
        """fsync, rename into place, fsync the directory."""
        try:
            self.f.flush()
            os.fsync(self.f.fileno())
            self.f.close()
        except OSError as e:
            raise self.failed(e) from e
        os.chmod(self.tmp, 0o644)
        os.replace(self.tmp, self.path)
        self._finished = True
        fsync_dir(self.dir, strict=False)   # the rename itself on disk

    def abort(self) -> None:
        """Remove the temporary file (nothing happens to one already committed or aborted)."""
        if self._finished:
            return
        self._finished = True
        try:
            self.f.close()     # flushes what is buffered: on a full disk that fails again
        except OSError:
            pass
        finally:
            try:
                os.unlink(self.tmp)
            except OSError:
                pass
