"""Where index lines come from: sorted CDX/CDXJ files, index segments, ZipNum clusters, collections.

Every source answers ``range(start, stop)``: its lines (bytes, without the
line feed) that are bytewise >= start and < stop (stop None: to the end), in
sorted order. ``open_source(path)`` picks the kind by looking at the file;
``MergedSource`` merges several sources as one (as pywb merges the indexes of
a collection). Sources never parse lines: that is the query engine's job; but a
file opened as sorted CDX(J) lines must begin as such lines do (``KEY TIMESTAMP``,
``check_index_head``), so that a WARC, an image or a text file given as an index
is an error naming it rather than an index that answers nothing; and a line
longer than ``MAX_LINE`` met by a search is an error naming the file
(``LineTooLongError``), never read whole.
"""

from __future__ import annotations

import heapq
import os
from typing import Iterable, Iterator, List, Optional, Protocol, Sequence

from ..boundedlines import MAX_LINE
from ..errors import ArchiveError, IndexFormatError
from ..sortedfile import SortedFile
from .segment import Segment
from .sort import open_input
from .zipnum import ZipNumIndex


class Source(Protocol):
    def range(self, start: bytes, stop: Optional[bytes]) -> Iterator[bytes]: ...

    def close(self) -> None: ...


class MergedSource:
    """Several sources as one: their ranges merged in order (duplicates kept, as pywb keeps them)."""

    def __init__(self, sources: Sequence[Source]) -> None:
        self.sources = list(sources)

    def range(self, start: bytes, stop: Optional[bytes]) -> Iterator[bytes]:
        its = [s.range(start, stop) for s in self.sources]
        if len(its) == 1:
            return its[0]
        return heapq.merge(*its)

    def close(self) -> None:
        for s in self.sources:
            s.close()


INDEX_EXTS = (".cdx", ".cdxj")          # sorted plain-text indexes
ZIPNUM_EXTS = (".idx", ".summary")      # ZipNum cluster summaries
SEGMENT_EXT = ".seg"                    # warchive index segments


def is_segment(path: str) -> bool:
    """Is this a warchive index segment (by its name: NAME.seg)?"""
    return path.endswith(SEGMENT_EXT)


def source_kind(path: str) -> str:
    """"zipnum", "segment" or "plain"."""
    if path.endswith(ZIPNUM_EXTS):
        return "zipnum"
    if is_segment(path):
        return "segment"
    return "plain"


# --------------------------------------------------------------------------- collections

def collection_name(path: str) -> str:
    """A collection's name: its directory's name."""
    return os.path.basename(os.path.abspath(path).rstrip("/"))


def index_dir_of(path: str) -> str:
    """Where a collection keeps its index files: COLL/indexes/, or the directory itself when it
    has no indexes/ (a directory of loose index files)."""
    idx = os.path.join(os.path.abspath(path), "indexes")
    return idx if os.path.isdir(idx) else os.path.abspath(path)


def index_files(path: str) -> List[str]:
    """The index files of a collection (sorted .cdx/.cdxj, ZipNum summaries, segments), in name
    order; a collection that does not exist raises ArchiveError."""
    directory = index_dir_of(path)
    try:
        names = sorted(os.listdir(directory))
    except FileNotFoundError:
        raise ArchiveError(f"{os.path.abspath(path)}: no such collection") from None
    out = []
    for n in names:
        p = os.path.join(directory, n)
        if os.path.isfile(p) and n.endswith(INDEX_EXTS + ZIPNUM_EXTS + (SEGMENT_EXT,)):
            out.append(p)
    return out


def check_source_dir(path: str) -> None:
    """A directory given where a collection or index files are expected must be a collection
    (``archive/`` or ``indexes/`` in it) or hold index files: an ArchiveError naming it
    otherwise (a directory of something else would answer nothing, as if nothing was there)."""
    if any(os.path.isdir(os.path.join(path, d)) for d in ("archive", "indexes")) or index_files(path):
        return
    raise ArchiveError(f"{path}: not a collection (no archive/ or indexes/ in it) and no index files in it")


def source_name(collection: str, path: str) -> str:
    """The `source` field pywb gives captures from an index file of a collection: COLL/indexes/FILE."""
    return f"{collection}/indexes/{os.path.basename(path)}"


HEAD = 1 << 16   # bytes read to find a file's first line


def looks_like_index_line(line: bytes) -> bool:
    """Does ``line`` begin as CDXJ and CDX lines do (a key, a space, a timestamp of 1 to 17
    digits, then a space or the end), or is it a CDX legend line (`` CDX N b a ...``)?"""
    if line.startswith(b" CDX "):
        return True
    parts = line.split(b" ", 2)
    return len(parts) >= 2 and bool(parts[0]) and 1 <= len(parts[1]) <= 17 and parts[1].isdigit()


def check_index_head(path: str, head: bytes) -> None:
    """An IndexFormatError naming ``path`` unless the first non-empty line of ``head`` (the
    file's first bytes, inflated) looks like an index line; an empty file passes (an index of
    nothing)."""
    for line in head.split(b"\n"):
        if not line.strip(b"\r"):
            continue
        if not looks_like_index_line(line):
            raise IndexFormatError(path, None, f"not a CDX or CDXJ index: its first line {line[:60]!r} is no "
                                               "index line (KEY TIMESTAMP ...)")
        return


def check_index_file(path: str) -> None:
    """``check_index_head`` on the start of a CDX(J) file (plain, gzip or zstd; '-' passes: standard
    input is read once, by the command)."""
    if path == "-":
        return
    with open_input(path) as f:
        head = f.read(HEAD)
    check_index_head(path, head)


def open_source(path: str) -> Source:
    """A source for a path: ZipNum summary (.idx/.summary), index segment, or sorted CDX(J) file."""
    kind = source_kind(path)
    if kind == "zipnum":
        return ZipNumIndex(path)
    if kind == "segment":
        return Segment(path)
    with open(path, "rb") as f:
        head = f.read(HEAD)
    if head[:2] == b"\x1f\x8b":
        raise IndexFormatError(path, None, "a gzip file is not a searchable index: sort it into a plain "
                                           "CDXJ file, a ZipNum cluster or an index segment")
    check_index_head(path, head)
    return SortedFile(path, max_line=MAX_LINE)


def open_sources(paths: Iterable[str]) -> Source:
    srcs: List[Source] = [open_source(p) for p in paths]
    return srcs[0] if len(srcs) == 1 else MergedSource(srcs)
