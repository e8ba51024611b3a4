"""What the commands check of the paths a user gives them, before anything is read or written.

docs/cli.md, "Paths", states the rules: a WARC/ARC file named on the command line that is
empty is an error (with --skip-errors, or found while walking a directory, a warning); a
directory where a file is expected, or a file where a directory is, is an error naming it
(except where the command takes a directory: a collection, a crawl's directory, a directory
walked for its WARCs); an output whose directory does not exist is an error before the work
starts. Each check raises an ArchiveError child (or FileNotFoundError) whose message names
the path as given, which warchive.cli.run_command prints as one line (exit status 1).

It reads nothing but file metadata and names (``store://`` URLs are warchive.store.urls's).
"""

from __future__ import annotations

import errno
import os
from typing import Iterable

from ..errors import ArchiveError, FileError
from ..store.urls import is_store_url

__all__ = ["archives", "collection", "directory", "output_file"]


def archives(paths: Iterable[str], *, walks: bool = True, lenient: bool = False, remedy: str = "") -> None:
    """WARC/ARC files given by name: each exists, is no empty file (unless ``lenient``: the
    command reports it and goes on; ``remedy``: the option that makes it so) and, unless the
    command ``walks`` directories, no directory. '-' (standard input) and ``store://`` URLs (the
    store names a missing store or name itself) pass."""
    for p in paths:
        if p == "-" or is_store_url(p):
            continue
        if not os.path.exists(p):
            raise FileNotFoundError(2, "no such file or directory", p)
        if os.path.isdir(p):
            if not walks:
                raise ArchiveError(f"{p}: a directory, not a WARC or ARC file")
        elif not lenient and os.path.isfile(p) and os.path.getsize(p) == 0:
            raise FileError(p, None, "empty file: no WARC or ARC record in it", remedy)


def collection(path: str) -> None:
    """An existing collection: a directory with ``archive/`` or ``indexes/`` in it (as `warchive
    init` and `warchive crawl` make it)."""
    if not os.path.exists(path):
        raise ArchiveError(f"{path}: no such collection (warchive init {path} makes one)")
    if not os.path.isdir(path):
        raise ArchiveError(f"{path}: not a collection, a file (a collection is a directory)")
    if not any(os.path.isdir(os.path.join(path, d)) for d in ("archive", "indexes")):
        raise ArchiveError(f"{path}: not a collection (no archive/ or indexes/ in it; warchive init makes one)")


def directory(path: str, what: str = "directory") -> None:
    """An existing directory (``what`` names it in the message); a ``store://`` URL passes."""
    if is_store_url(path):
        return
    if not os.path.exists(path):
        raise FileNotFoundError(2, f"no such {what}", path)
    if not os.path.isdir(path):
        raise ArchiveError(f"{path}: a file, not a {what}")


def output_file(path: str) -> None:
    """A file to write: not a directory, in a directory that exists ('-': standard output)."""
    if path == "-":
        return
    if os.path.isdir(path):
        raise ArchiveError(f"{path}: a directory (give the name of the file to write)")
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.exists(parent) and not os.path.isdir(parent):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)
    if not os.path.isdir(parent):
        raise ArchiveError(f"{path}: its directory {os.path.dirname(path) or parent} does not exist")
