"""A WACZ opened for reading: its package list, WARCs, indexes and pages, every read a byte range.

``WaczFile(blob)`` reads the ZIP directory (warchive.wacz.zipread, which
refuses hostile archives), ``datapackage.json`` and its digest. ``warcs``
maps each WARC's name as index lines give it (its path under ``archive/``) to
its stored entry; ``index_lines()`` streams the lines of the WACZ's indexes and
``index_sources()`` gives them as sources, both within warchive.wacz.indexlines'
limits across all its index entries; ``record_bytes`` reads one record's bytes;
``verify_hashes`` checks every entry against the package list, a piece at a
time. Opening reads only the end of the file, the directory, the local headers
and the small JSON entries.
"""

from __future__ import annotations

import hashlib
from typing import Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union

from ..errors import IndexFormatError
from ..index.segment import Segment
from .datapackage import DIGEST, PACKAGE, Package, PackageError, read_package
from .indexes import CompressedIndex
from .indexlines import INDEXES, IndexBudget, IndexPart, entry_lines, gunzip, index_parts
from .indexsegment import spooled
from .zipread import Blob, Entry, FileBlob, ZipDirectory

ARCHIVE, PAGES = "archive/", "pages/pages.jsonl"
WARC_EXTS = (".warc", ".warc.gz", ".arc", ".arc.gz", ".warc.zst")
HASH_CHUNK = 1 << 20

IndexSource = Union[CompressedIndex, Segment]


class WaczFile:
    """A WACZ read by range from ``source`` (a path, or a Blob such as an HTTP range reader)."""

    def __init__(self, source: Union[str, Blob]) -> None:
        self.blob: Blob = FileBlob(source) if isinstance(source, str) else source
        self.path = self.blob.name
        try:
            self.zd = ZipDirectory(self.blob)
            if PACKAGE not in self.zd.entries:
                raise PackageError(self.path, None, f"no {PACKAGE}", "not a WACZ (a plain ZIP file?)")
            digest = self.zd.read(DIGEST) if DIGEST in self.zd.entries else None
            self.package: Package = read_package(self.path, self.zd.read(PACKAGE), digest)
        except BaseException:
            self.close()
            raise
        self.warcs: Dict[str, Entry] = {n[len(ARCHIVE):]: e for n, e in self.zd.entries.items()
                                        if n.startswith(ARCHIVE) and n.endswith(WARC_EXTS)}

    def close(self) -> None:
        close = getattr(self.blob, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> "WaczFile":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- what it holds
    def index_parts(self, budget: Optional[IndexBudget] = None) -> List[IndexPart]:
        """The indexes of the WACZ (warchive.wacz.indexlines): compressed ones by their summary,
        plain .cdx/.cdxj ones, and .cdx.gz files no summary names."""
        return index_parts(self.zd, budget if budget is not None else IndexBudget(self.path))

    def index_lines(self) -> Iterator[Tuple[IndexPart, Iterator[bytes]]]:
        """Each index of the WACZ and a stream of its lines, all counted against one
        IndexBudget (IndexTooLarge past its limits); each stream is to be read before the next."""
        budget = IndexBudget(self.path)
        for part in self.index_parts(budget):
            yield part, entry_lines(self.zd, part, budget)

    def index_sources(self) -> List[Tuple[str, IndexSource]]:
        """(entry name, source) of each index of the WACZ: a compressed one read by range through
        its summary, any other sorted into a segment in a temporary directory (its lines
        streamed, within the limits across the WACZ's index)."""
        budget = IndexBudget(self.path)
        out: List[Tuple[str, IndexSource]] = []
        try:
            for part in self.index_parts(budget):
                if part.name != part.data:
                    out.append((part.name, CompressedIndex(self.zd, part.name, budget=budget)))
                else:
                    out.append((part.name, spooled(entry_lines(self.zd, part, budget), source=part.name)))
        except BaseException:
            for _, src in out:
                src.close()
            raise
        return out

    def pages(self) -> Optional[bytes]:
        return self.zd.read(PAGES) if PAGES in self.zd.entries else None

    def members(self) -> Dict[str, Tuple[str, int, int]]:
        """Each WARC's name -> (path of the WACZ, where its data starts, its size): what
        warchive.replay.archives.Archives reads records of stored entries by."""
        return {n: (self.path, e.start, e.size) for n, e in self.warcs.items()}

    def warc_entry(self, filename: str) -> Entry:
        e = self.warcs.get(filename)
        if e is None:
            raise IndexFormatError(self.path, None, f"an index line names {filename!r}, which is not in "
                                   f"{ARCHIVE} of the WACZ")
        return e

    def record_bytes(self, filename: str, offset: int, length: int) -> bytes:
        """The ``length`` bytes of the record at ``offset`` of WARC ``filename`` (one range read)."""
        e = self.warc_entry(filename)
        self.zd.stored(e.name)
        return self.zd.read_range(e, offset, length)

    # -- integrity
    def verify_hashes(self, progress: Optional[Callable[[int], None]] = None, only: str = "") -> int:
        """Check every entry (``only``: every entry whose name starts with it) against
        datapackage.json (its hash and size), and that every entry but the package files is
        listed; a PackageError names the first that fails. Each entry is read a piece at a time;
        those under indexes/ are counted as they are hashed, inflated (their gzip members too),
        against the limits across a WACZ's index (IndexTooLarge): a bomb is refused before anything
        reads its lines. Returns the bytes hashed."""
        res = self.package.resources
        budget = IndexBudget(self.path)
        budget.declared(self.zd)
        done = 0
        for name, e in sorted(self.zd.entries.items(), key=lambda kv: kv[1].start):
            if name in (PACKAGE, DIGEST) or name.endswith("/") or not name.startswith(only):
                continue
            r = res.get(name)
            if r is None:
                raise PackageError(self.path, e.header, f"entry {name!r} is not listed in {PACKAGE}",
                                   "an entry added after the package was sealed")
            algo, _, want = r.hash.partition(":")
            try:
                h = hashlib.new(algo)
            except ValueError:
                raise PackageError(self.path, e.header, f"{PACKAGE}: unknown hash {algo!r} for {name!r}") from None
            pieces = _hashed(self.zd.chunks(name, HASH_CHUNK), h, progress)
            if name.startswith(INDEXES):
                pieces = budget.watch(name, gunzip(self.path, name, pieces) if name.endswith(".gz") else pieces)
            for _ in pieces:
                pass
            done += e.size
            if h.hexdigest() != want or (r.bytes >= 0 and r.bytes != e.size):
                raise PackageError(self.path, e.start, f"entry {name!r} does not match its {algo} hash "
                                   f"or size in {PACKAGE}", "the WACZ is damaged or was changed")
        for name in res:
            if name.startswith(only) and name not in self.zd.entries:
                raise PackageError(self.path, None, f"{PACKAGE} lists {name!r}, which is not in the WACZ")
        return done


def _hashed(pieces: Iterable[bytes], h: "hashlib._Hash", progress: Optional[Callable[[int], None]]) -> Iterator[bytes]:
    for piece in pieces:
        h.update(piece)
        if progress is not None:
            progress(len(piece))
        yield piece


__all__ = ["ARCHIVE", "INDEXES", "IndexSource", "PAGES", "WaczFile"]
