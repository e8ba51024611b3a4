"""Putting a directory's entries on disk: after a file is created or renamed into a directory,
the directory itself must be fsynced for the new name to survive a crash."""

from __future__ import annotations

import os


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
