"""The WARC files of captures: where they are, and one record opened at the offset an index names.

``Archives`` joins a capture's filename to each archive directory in turn
(pywb's archive paths) and refuses names that would leave them
(``check_filename``); ``Archives.open`` gives an ``OpenRecord``, whose payload
is readable until it is closed. A file still being written (``NAME.open``, as
the crawler's writer keeps it until it closes it as ``NAME``) is read under its
final name, so that captures are replayed while the crawl runs. WARCs stored in a zip (a WACZ
served as it is) are ``members``: a record is read at its entry's start plus its offset. This module
never opens a file outside the directories it is given and never writes.
"""

from __future__ import annotations

import os
import re
from contextlib import ExitStack
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence, Tuple, Union

from ..errors import ArchiveError, CaptureNotFound, RecordFormatError
from ..warc.reader import ArchiveIterator, Record

PathLike = Union[str, os.PathLike[str]]
# One record is read at an offset: a small first read (the reader's window grows when a record
# needs more), where iterating a file reads 1 MiB at a time.
RECORD_WINDOW = 64 * 1024
Member = Tuple[str, int, int]
OPEN_SUFFIX = ".open"   # a WARC file being written (warchive.warc.warcfile): NAME.open, then NAME


class ArchiveFileNotFound(CaptureNotFound):
    """The WARC file a capture names is in none of the archive directories."""


class UnsafeFilename(ArchiveError, ValueError):
    """A capture's filename is absolute or climbs out of the archive directories (``..``)."""


def check_filename(filename: str) -> str:
    """A capture's filename, refused (UnsafeFilename) unless it is a relative path that stays
    inside the directory it is joined to."""
    if not filename or "\0" in filename:
        raise UnsafeFilename(f"filename {filename!r} names no file")
    if "://" in filename:
        raise UnsafeFilename(f"filename {filename!r} is a URL; only files of the archive directories are read")
    if filename.startswith(("/", "\\")) or os.path.isabs(filename) or re.match(r"^[A-Za-z]:", filename):
        raise UnsafeFilename(f"filename {filename!r} is absolute; index lines name files relative to the "
                             "collection's archive directory")
    if ".." in re.split(r"[/\\]", filename):
        raise UnsafeFilename(f"filename {filename!r} climbs out of the archive directory ('..')")
    return filename


@dataclass
class RecordInfo:
    """One record a load used: ``role`` is "headers", "payload", "headers+payload" or "segment"."""
    role: str
    filename: str
    path: str
    offset: int
    type: Optional[str]
    record_id: Optional[str]
    target_uri: Optional[str]
    date: Optional[str]


class OpenRecord:
    """A record and the iterator it lives in (its payload is readable until close())."""

    __slots__ = ("it", "rec", "path", "filename")

    def __init__(self, it: ArchiveIterator, rec: Record, path: str, filename: str) -> None:
        self.it: Optional[ArchiveIterator] = it
        self.rec = rec
        self.path = path
        self.filename = filename

    def info(self, role: str) -> RecordInfo:
        r = self.rec
        return RecordInfo(role, self.filename, self.path, r.offset, r.type, r.record_id, r.target_uri, r.date)

    def close(self) -> None:
        if self.it is not None:
            it, self.it = self.it, None
            it.close()


class Archives:
    """Where the files of captures are: directories tried in order (pywb's archive paths)."""

    def __init__(self, dirs: Sequence[PathLike], members: Optional[Mapping[str, Member]] = None) -> None:
        self.dirs = [os.path.abspath(os.fspath(d)) for d in dirs]
        # WARCs stored in a zip (a WACZ): filename -> (zip path, where its data starts, its size)
        self.members: Mapping[str, Member] = members or {}

    def path(self, filename: str) -> str:
        """The file ``filename`` names in the first directory that has it."""
        check_filename(filename)
        if not self.dirs:
            raise ArchiveFileNotFound(f"{filename}: no archive directory to look in (give archive_paths, "
                                      "or open the index on a collection)")
        for d in self.dirs:
            p = os.path.normpath(os.path.join(d, filename))
            if not p.startswith(d.rstrip(os.sep) + os.sep):
                raise UnsafeFilename(f"filename {filename!r} leaves the archive directory {d}")
            if os.path.isfile(p):
                return p
            if os.path.isfile(p + OPEN_SUFFIX):   # still being written
                return p + OPEN_SUFFIX
            if os.path.isfile(p):   # closed (renamed) between the two looks
                return p
        raise ArchiveFileNotFound(f"{filename}: not in the archive directories {', '.join(self.dirs)}")

    def open(self, filename: str, offset: int, length: Optional[int] = None) -> OpenRecord:
        """The record that starts at byte ``offset`` of the file ``filename`` names; a
        CorruptRecordError when none starts there (the index does not match the file).
        ``length``: the record's, as its index line gives it: read in one piece of that size
        (a gzip member inflated whole); a wrong one costs time, not bytes."""
        if filename in self.members:
            return self._open_member(filename, offset, length)
        path = self.path(filename)
        with ExitStack() as on_error:
            try:
                it = ArchiveIterator(path, offset=offset, window=RECORD_WINDOW, length=length)
            except FileNotFoundError:
                if not path.endswith(OPEN_SUFFIX):
                    raise
                # the writer closed it (NAME.open renamed NAME) between looking and opening
                path = self.path(filename)
                it = ArchiveIterator(path, offset=offset, window=RECORD_WINDOW, length=length)
            on_error.enter_context(it)
            rec = next(iter(it), None)
            if rec is None:
                raise RecordFormatError(path, offset, "no record starts here",
                                        "the index does not match the file: index it again")
            if rec.offset != offset:
                raise RecordFormatError(path, offset, f"the record found starts at byte {rec.offset}",
                                        "the index does not match the file: index it again")
            on_error.pop_all()
        return OpenRecord(it, rec, path, filename)

    def _open_member(self, filename: str, offset: int, length: Optional[int]) -> OpenRecord:
        """A record of a WARC stored in a zip: at its data's start + ``offset`` of the zip file."""
        path, start, size = self.members[filename]
        if not 0 <= offset < size or (length is not None and offset + length > size):
            raise RecordFormatError(path, start + offset, f"offset {offset} (+{length}) is outside {filename} "
                                    f"({size} bytes) in the zip", "the index does not match the archive")
        it = ArchiveIterator(path, offset=start + offset, window=RECORD_WINDOW, length=length)
        rec = next(iter(it), None)
        if rec is None or rec.offset != start + offset:
            it.close()
            raise RecordFormatError(path, start + offset, f"no record starts at byte {offset} of {filename}",
                                    "the index does not match the archive")
        return OpenRecord(it, rec, path, filename)


__all__ = ["ArchiveFileNotFound", "Archives", "OpenRecord", "RecordInfo", "UnsafeFilename", "check_filename"]
