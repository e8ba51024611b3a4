"""The WARC files of captures: where they are, and one record opened at the offset an index names.

``Archives`` joins a capture's filename to each archive directory in turn
(pywb's archive paths) and refuses names that would leave them
(``check_filename``); ``Archives.open`` gives an ``OpenRecord``, whose payload
is readable until it is closed. A file still being written (``NAME.open``, as
the crawler's writer keeps it until it closes it as ``NAME``) is read under its
final name, so that captures are replayed while the crawl runs. WARCs stored in a zip (a WACZ
served as it is) are ``members``: a record is read at its entry's start plus its offset.

An archive path may also name a durable store (warchive.store): its directory (one holding
store.json), ``store://STORE`` or ``store://STORE/NAME`` (that one stored file). A filename not
found as a plain file in any directory is then read from the first store holding it under that
name (a stored name is a base name), by position from its verified chunks, one read of the
index's length per record (warchive.store.StoreFile). Stored files are kept open, a few at a
time (``STORE_FILES``), since a replayed page reads many records of the same few files.
This module never opens a file outside the directories and stores it is given and never writes.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import ArchiveError, ArchiveFileNotFound, RecordFormatError, UnsafeFilename
from ..store.layout import name_problem, store_url
from ..store.storefile import StoreFile
from ..store.urls import Stores, is_store_dir, is_store_url, split
from ..warc.reader import ArchiveIterator, Record
from ..warc.whole import WholeRecord, read_whole
from .handles import OpenFiles
from ..warc.source import Source

PathLike = Union[str, os.PathLike[str]]
# One record is read at an offset: a small first read (the reader's window grows when a record
# needs more), where iterating a file reads 1 MiB at a time.
RECORD_WINDOW = 64 * 1024
Member = Tuple[str, int, int]
OPEN_SUFFIX = ".open"   # a WARC file being written (warchive.warc.warcfile): NAME.open, then NAME
STORE_FILES = 16        # stored files kept open (each holds its chunk files' descriptors)
STORE_CACHE = 2 << 20   # fragment cache of each: a record is read in one piece, so little is read twice
PATHS_KEPT = 4096       # filenames whose paths are remembered (then all are looked up afresh)


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

    def __init__(self, it: Optional[ArchiveIterator], rec: Union[Record, WholeRecord], path: str,
                 filename: str) -> None:
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
    """Where the files of captures are: directories tried in order (pywb's archive paths), then
    stores (see the module docstring)."""

    def __init__(self, dirs: Sequence[PathLike], members: Optional[Mapping[str, Member]] = None) -> None:
        self.dirs: List[str] = []
        self.stores: List[Tuple[str, Optional[str]]] = []    # (store directory, only this name or None)
        for d in dirs:
            text = os.fspath(d)
            if is_store_url(text):
                root, only = split(text)
                self.stores.append((os.path.abspath(root), only))
            elif is_store_dir(text):
                self.stores.append((os.path.abspath(text), None))
            else:
                self.dirs.append(os.path.abspath(text))
        # WARCs stored in a zip (a WACZ): filename -> (zip path, where its data starts, its size)
        self.members: Mapping[str, Member] = members or {}
        self._stores = Stores()
        self._files: "OrderedDict[Tuple[str, str], StoreFile]" = OrderedDict()
        self._found: Dict[Tuple[str, str], str] = {}   # (store, filename) -> its store:// URL
        self._lock = threading.Lock()
        self._paths: Dict[str, str] = {}   # filename -> path() found (the same names, request after request)
        self._handles = OpenFiles()   # the files of the records read whole, kept open a while

    def close(self) -> None:
        """Close the files kept open (Archives can still be used: they are opened again)."""
        self._handles.close()

    def path(self, filename: str) -> str:
        """The file ``filename`` names in the first directory that has it, else
        ``store://STORE/NAME`` of the first store that holds it. Remembered (a few thousand
        names): ``open`` looks again when the file is gone from there (``forget``)."""
        found = self._paths.get(filename)
        if found is not None:
            return found
        p = self._find(filename)
        if len(self._paths) >= PATHS_KEPT:
            self._paths.clear()
        self._paths[filename] = p
        return p

    def forget(self, filename: str) -> None:
        """Look ``filename`` up again next time (its file was not where it was found)."""
        self._paths.pop(filename, None)

    def _find(self, filename: str) -> str:
        check_filename(filename)
        if not self.dirs and not self.stores:
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
        for root, only in self.stores:
            key = (root, filename)
            if key in self._found:   # a stored file stays (manifests never change): looked up once
                return self._found[key]
            if (only is None or only == filename) and not name_problem(filename) \
                    and self._stores.store(root).find_manifest(filename) is not None:
                url = self._found[key] = store_url(root, filename)
                return url
        where = [f"the archive directories {', '.join(self.dirs)}"] if self.dirs else []
        where += [f"the stores {', '.join(r for r, _ in self.stores)}"] if self.stores else []
        raise ArchiveFileNotFound(f"{filename}: not in {' or '.join(where)}")

    def _source(self, path: str) -> Source:
        """What the reader reads for a path ``path()`` gave: the path, or an open stored file."""
        if not is_store_url(path):
            return path
        root, name = split(path)
        assert name is not None
        key = (root, name)
        with self._lock:
            f = self._files.get(key)
            if f is not None:
                self._files.move_to_end(key)
                return f
        f = StoreFile(self._stores.store(root), name, STORE_CACHE)
        with self._lock:
            self._files[key] = f
            while len(self._files) > STORE_FILES:   # dropped, not closed: a record read may still use it
                self._files.popitem(last=False)
        return f

    def open(self, filename: str, offset: int, length: Optional[int] = None) -> OpenRecord:
        """The record that starts at byte ``offset`` of the file ``filename`` names; a
        CorruptRecordError when none starts there (the index does not match the file).
        ``length``: the record's, as its index line gives it: read in one piece of that size
        (a gzip member inflated whole); a wrong one costs time, not bytes."""
        if filename in self.members:
            return self._open_member(filename, offset, length)
        path = self.path(filename)
        if length is not None and not is_store_url(path):
            try:
                whole = read_whole(self._handles.get(path), offset, length)
            except (ArchiveError, OSError):   # the iterator below says what is wrong, as it says it
                whole = None
            if whole is not None:   # (the common case: one plain record, its member read in one piece)
                return OpenRecord(None, whole, path, filename)
        try:
            it = ArchiveIterator(self._source(path), offset=offset, window=RECORD_WINDOW, length=length, name=path)
        except FileNotFoundError:
            # gone from where it was found: the writer closed it (NAME.open renamed NAME)
            # between looking and opening, or it moved to another archive directory
            self.forget(filename)
            path = self.path(filename)
            it = ArchiveIterator(self._source(path), offset=offset, window=RECORD_WINDOW, length=length, name=path)
        try:
            rec = next(iter(it), None)
            if rec is None:
                raise RecordFormatError(path, offset, "no record starts here",
                                        "the index does not match the file: index it again")
            if rec.offset != offset:
                raise RecordFormatError(path, offset, f"the record found starts at byte {rec.offset}",
                                        "the index does not match the file: index it again")
        except BaseException:
            it.close()
            raise
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


def siblings(path: str, extensions: Tuple[str, ...]) -> List[str]:
    """The archive files (names ending in ``extensions``) beside ``path``, a path or
    ``store://STORE/NAME`` that ``Archives.path`` gave, in name order: its directory's, or its
    store's stored names (as ``store://`` URLs). ``open_source`` opens each."""
    if is_store_url(path):
        root, _ = split(path)
        return [store_url(root, n) for n in Stores().store(root).names() if n.endswith(extensions)]
    d = os.path.dirname(path)
    return [os.path.join(d, n) for n in sorted(os.listdir(d)) if n.endswith(extensions)]


@contextmanager
def open_source(path: str) -> Iterator[Source]:
    """What the reader reads for a path ``Archives.path`` or ``siblings`` gave (closed after)."""
    if not is_store_url(path):
        yield path
        return
    with Stores().open(path) as f:
        yield f


__all__ = ["ArchiveFileNotFound", "Archives", "OpenRecord", "RecordInfo", "UnsafeFilename", "check_filename",
           "open_source", "siblings"]
