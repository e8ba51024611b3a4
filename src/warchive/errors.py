"""The one exception root of warchive and its children.

Every error a user can meet while reading archives, indexing or looking up
captures is an ``ArchiveError``. Errors about a place in a file carry the path
and the byte offset, and their message says what to do about it. Every public
exception of the package is defined here (the modules that raise one import it
from here, and still answer to its name), so that ``from warchive.errors import
X`` finds any of them; docs/api.md, "Errors", lists them. This module must not
import anything from the rest of the package.
"""

from __future__ import annotations

import os
from typing import Optional, Sequence, Union

PathLike = Union[str, os.PathLike[str], None]


class ArchiveError(Exception):
    """Root of every error warchive raises on purpose."""


class FileError(ArchiveError):
    """Something is wrong at ``offset`` of the file ``path`` (None: a stream).

    ``problem`` says what; ``remedy`` is a short hint (what to run or check). Both are part of
    ``str()``: "PATH at byte OFFSET: PROBLEM (REMEDY)"."""

    def __init__(self, path: PathLike, offset: Optional[int], problem: str, remedy: str = "") -> None:
        self.path = os.fspath(path) if path is not None else None
        self.offset = offset
        self.problem = problem
        self.remedy = remedy
        where = self.path if self.path is not None else "<stream>"
        at = f" at byte {offset}" if offset is not None else ""
        msg = f"{where}{at}: {problem}"
        if remedy:
            msg += f" ({remedy})"
        super().__init__(msg)

    def __reduce__(self):  # keep path/offset when errors cross process boundaries
        return (type(self), (self.path, self.offset, self.problem, self.remedy))

    def restated(self, remedy: str, path: PathLike = None) -> "FileError":
        """The same error (class, offset, problem) with the remedy of the command that met it
        and, given ``path``, naming that file: readers suggest what ``warchive index`` can do,
        and a command without those options says what it can do instead."""
        return type(self)(self.path if path is None else path, self.offset, self.problem, remedy)


class CorruptRecordError(FileError):
    """A record or gzip member at ``offset`` in ``path`` cannot be read as it is."""


class GzipError(CorruptRecordError):
    """A gzip member is malformed: bad magic or flags, bad CRC or size, deflate error."""


class TruncatedError(CorruptRecordError):
    """The file ends inside a record or gzip member."""


class RecordFormatError(CorruptRecordError):
    """The bytes of a record do not form a WARC or ARC record (head, Content-Length, terminator)."""


class NoRecordError(FileError):
    """No record starts at ``offset`` of ``path``: the offset is past the end, or inside a record
    (a wrong offset, not damage)."""


class UnsupportedFormatError(ArchiveError):
    """The input is not a format warchive reads (or a needed library is missing)."""


class ReadError(FileError):
    """Reading ``path`` failed at ``offset`` (an I/O error: a failing disk, a lost network mount);
    ``errno`` is the system's error number."""

    def __init__(self, path: PathLike, offset: Optional[int], problem: str, remedy: str = "",
                 errno: Optional[int] = None) -> None:
        super().__init__(path, offset, problem, remedy)
        self.errno = errno

    @classmethod
    def of(cls, e: OSError, path: PathLike, offset: Optional[int]) -> "ReadError":
        """The ReadError of an OSError met reading ``path`` at ``offset``."""
        return cls(path, offset, f"read failed: {e.strerror or e}",
                   "the file cannot be read there: check the disk, or restore the file from a copy", e.errno)


class WriteError(FileError):
    """Writing an archive file failed at ``offset`` of ``path`` (disk full, file exists, ...)."""


class UrlError(ArchiveError, ValueError):
    """A URL cannot be canonicalized."""


class IndexFormatError(ArchiveError):
    """An index file (segment, ZipNum cluster, CDX file) is malformed at ``block``."""

    def __init__(self, path: PathLike, block: Optional[Union[int, str]], problem: str) -> None:
        self.path = os.fspath(path) if path is not None else None
        self.block = block
        self.problem = problem
        at = f" (block {block})" if block is not None else ""
        super().__init__(f"{self.path}{at}: {problem}")

    def __reduce__(self):
        return (type(self), (self.path, self.block, self.problem))


class UnsortedInputError(IndexFormatError):
    """An input that must be sorted (bytewise, as ``LC_ALL=C sort``) is not: line ``lineno`` (or,
    when lines were not counted, as in a binary search, the line at byte ``offset``) sorts before
    a line above it. ``line`` and ``previous`` are the two lines (bytes)."""

    def __init__(self, path: PathLike, lineno: Optional[int], line: bytes, previous: bytes,
                 offset: Optional[int] = None) -> None:
        self.lineno = lineno
        self.offset = offset
        self.line = line
        self.previous = previous
        which = f"line {lineno}" if lineno is not None else f"the line at byte {offset}"
        above = "the line above it" if lineno is not None else "a line above it"
        ArchiveError.__init__(
            self,
            f"{os.fspath(path) if path is not None else '<stream>'}: {which} is out of order: "
            f"{_clip(line)!r} sorts before {above} {_clip(previous)!r} "
            "(sort it first: warchive sort)")
        self.path = os.fspath(path) if path is not None else None
        self.block = None
        self.problem = f"{which} is out of order"

    def __reduce__(self):
        return (type(self), (self.path, self.lineno, self.line, self.previous, self.offset))


class LineTooLongError(IndexFormatError):
    """A line of an index file is longer than ``limit`` bytes (warchive.boundedlines.MAX_LINE): the
    line at byte ``offset`` of ``path`` (of its inflated lines when the file is compressed), or the
    line holding that byte when ``inside`` (a search does not look back for its start); line
    ``lineno`` when it was counted. It is refused before it is read whole."""

    def __init__(self, path: PathLike, offset: int, limit: int, lineno: Optional[int] = None,
                 inside: bool = False) -> None:
        if lineno is not None:
            which = f"line {lineno} (at byte {offset})"
        else:
            which = f"the line {'holding' if inside else 'at'} byte {offset}"
        super().__init__(path, None, f"{which} is longer than {limit} bytes, the most an index line may hold "
                                     "(a damaged file, or not an index: remove that line)")
        self.offset = offset
        self.limit = limit
        self.lineno = lineno
        self.inside = inside

    def __reduce__(self):
        return (type(self), (self.path, self.offset, self.limit, self.lineno, self.inside))


def _clip(b: bytes, n: int = 200) -> bytes:
    return b if len(b) <= n else b[:n] + b"..."


class CaptureNotFound(ArchiveError, LookupError):
    """No capture matches a lookup (or a revisit's original is missing)."""


class CaptureUnavailable(CaptureNotFound):
    """Captures match a lookup but none of them loads, and reading one failed (a ReadError: an
    I/O error, which may pass). Replay answers 503, as pywb answers "503 Archive Not Available";
    captures that are damaged or missing for good are a CaptureNotFound (404)."""


class SessionFormatError(CorruptRecordError):
    """A session journal (warchive.capture.session) holds a line that is not an entry, or is
    not a journal at all (no version line), at ``offset`` in ``path``."""


class SessionLockedError(ArchiveError):
    """A session journal is being written by another live process (its pid file says which)."""

    def __init__(self, path: PathLike, pid: int) -> None:
        self.path = os.fspath(path) if path is not None else None
        self.pid = pid
        super().__init__(f"{self.path}: the session is being written by process {pid} "
                         "(stop it first, or open anyway with force=True / --force)")

    def __reduce__(self):
        return (type(self), (self.path, self.pid))


class StoreError(FileError):
    """Something is wrong with the durable store at ``path`` (its store.json, a manifest, a chunk
    file, or a stored name): a directory that is not a store, a manifest that does not parse, a
    stripe with fewer than k good fragments, a name already stored with other bytes, ..."""


# --------------------------------------------------------------------------- warc files


class DigestError(ArchiveError, ValueError):
    """A digest that is not ``label:value`` of a known algorithm (sha1, sha256, blake3) in
    base32, base16 or base64, nor a bare SHA-1."""


# --------------------------------------------------------------------------- queries


class QueryError(ArchiveError, ValueError):
    """A bad query, or an index line the query cannot read: answered with `status` and
    {"message": ...} (R63-R66, D1)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


# --------------------------------------------------------------------------- loading captures and replay


class CaptureLineError(ArchiveError, ValueError):
    """An index line or capture that cannot name a record (no offset, bad number...)."""


class ArchiveFileNotFound(CaptureNotFound):
    """The WARC file a capture names is in none of the archive directories."""


class UnsafeFilename(ArchiveError, ValueError):
    """A capture's filename is absolute or climbs out of the archive directories (``..``)."""


class OriginalNotFound(CaptureNotFound):
    """A revisit's original (the record holding its payload) was not found. ``looked`` lists
    each place looked at and what came of it."""

    def __init__(self, what: str, looked: Sequence[str]) -> None:
        self.what = what
        self.looked = list(looked)
        tried = "; ".join(f"({i}) {s}" for i, s in enumerate(self.looked, 1)) or "nothing to look up"
        super().__init__(f"{what}: its original was not found. Looked for: {tried}. "
                         "load_closest(url, timestamp, index) serves the next-closest capture instead")


class SegmentNotFound(CaptureNotFound):
    """A continuation record of a segmented record is missing."""


class SelfRedirect(CaptureNotFound):
    """A 3xx capture whose Location is the URL asked for (replaying it would loop; pywb skips it)."""


class ArchivalUrlError(ArchiveError, ValueError):
    """An archival URL (or a part given to build one) is not one: empty, not text, a bad
    timestamp or modifier. The server answers it with 400."""


class MementoError(ArchiveError, ValueError):
    """An Accept-Datetime that names no datetime: the server answers it with 400."""


class ConfigError(ArchiveError, ValueError):
    """A replay configuration that cannot be used (the message names the file and the key)."""


class CollectionUnavailable(ArchiveError):
    """A collection whose index cannot be opened (the message names it and says why)."""


# --------------------------------------------------------------------------- crawling


class CrawlError(ArchiveError):
    """A crawl that cannot start or resume (the message says which file and what to do)."""


class CrawlLogError(ArchiveError, ValueError):
    """A line that is not a crawl.log line (``line`` and ``lineno`` say which)."""

    def __init__(self, problem: str, line: str = "", lineno: Optional[int] = None) -> None:
        self.problem, self.line, self.lineno = problem, line, lineno
        at = f"line {lineno}: " if lineno is not None else ""
        super().__init__(f"{at}{problem}: {line[:200]!r}")


class FrontierFormatError(CorruptRecordError):
    """A frontier snapshot or log is damaged at ``offset`` of ``path``."""


class SeenFormatError(CorruptRecordError):
    """A seen-set file (run, manifest, Bloom filter) is damaged at ``offset`` of ``path``."""


class ScreenshotError(ArchiveError):
    """A page could not be rendered (timeout, navigation error, browser crash)."""

    def __init__(self, url: str, problem: str, remedy: str = "") -> None:
        self.url = url
        self.problem = problem
        super().__init__(f"{url}: {problem}" + (f" ({remedy})" if remedy else ""))

    def __reduce__(self):
        return (type(self), (self.url, self.problem))


class BrowserUnavailable(ArchiveError):
    """Playwright or the chromium executable is missing."""


# --------------------------------------------------------------------------- wacz files


class ZipFormatError(FileError):
    """A ZIP file, or one of its entries, is malformed or lies about itself."""


class UnsafeZipEntry(ZipFormatError):
    """An entry whose name or type would leave the directory it is extracted to (``..``,
    absolute, symlink) or that repeats another entry's name."""


class CompressedEntry(ZipFormatError):
    """An entry is deflated where WACZ needs it stored, to read its records by byte range."""


class PackageError(FileError):
    """datapackage.json (or its digest) is missing, malformed, or disagrees with the archive."""


class IndexTooLarge(FileError):
    """The index entries of a WACZ hold more than a WACZ's index may (``MAX_INDEX_BYTES``,
    ``MAX_INDEX_LINES`` together, ``MAX_LINE`` a line, ``MAX_INDEX_ENTRIES`` entries): a zip
    bomb, or more than warchive reads of one WACZ. The message names the entry where the limit
    was passed."""


class PagesError(ArchiveError):
    """A pages.jsonl file is not a list of pages."""
