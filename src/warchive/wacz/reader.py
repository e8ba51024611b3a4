"""A WACZ opened for reading: its package list, WARCs, indexes and pages, every read a byte range.

``WaczFile(blob)`` reads the ZIP directory (warchive.wacz.zipread, which
refuses hostile archives), ``datapackage.json`` and its digest. ``warcs``
maps each WARC's name as index lines give it (its path under ``archive/``) to
its stored entry; ``index_sources()`` are the WACZ's indexes as sources;
``record_bytes`` reads one record's bytes; ``verify_hashes`` checks every
entry against the package list. Opening reads only the end of the file, the
directory, the local headers and the small JSON entries.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from typing import Callable, Dict, List, Optional, Tuple, Union

from ..errors import IndexFormatError
from .datapackage import DIGEST, PACKAGE, Package, PackageError, read_package
from .indexes import CompressedIndex, PlainIndex
from .zipread import MAX_INFLATED, Blob, Entry, FileBlob, ZipDirectory

ARCHIVE, INDEXES, PAGES = "archive/", "indexes/", "pages/pages.jsonl"
WARC_EXTS = (".warc", ".warc.gz", ".arc", ".arc.gz", ".warc.zst")
HASH_CHUNK = 4 << 20

IndexSource = Union[PlainIndex, CompressedIndex]


class GzipIndex(PlainIndex):
    """An index.cdx.gz that no index.idx points into: a gzip'd CDXJ file, inflated whole."""

    def __init__(self, zd: ZipDirectory, name: str) -> None:
        raw, out = zd.read(name), []
        while raw:
            d = zlib.decompressobj(31)
            try:
                out.append(d.decompress(raw, MAX_INFLATED))
            except zlib.error as e:
                raise IndexFormatError(zd.path, None, f"{name} is not gzip: {e}") from None
            if d.unconsumed_tail:
                raise IndexFormatError(zd.path, None, f"{name} inflates to more than {MAX_INFLATED} bytes")
            raw = d.unused_data
        self.lines = sorted(ln for ln in b"".join(out).split(b"\n") if ln and not ln.startswith(b" CDX"))


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
    def index_sources(self) -> List[Tuple[str, IndexSource]]:
        """(entry name, source) of each index of the WACZ: compressed ones by their .idx, plain
        .cdx/.cdxj ones, and .cdx.gz files no .idx points into (read whole)."""
        names = sorted(n for n in self.zd.entries if n.startswith(INDEXES))
        out: List[Tuple[str, IndexSource]] = []
        for n in names:
            if n.endswith(".idx"):
                out.append((n, CompressedIndex(self.zd, n)))
        blocks = {s.data.name for _, s in out if isinstance(s, CompressedIndex)}
        for n in names:
            if n.endswith((".cdx", ".cdxj")):
                out.append((n, PlainIndex(self.zd, n)))
            elif n.endswith(".cdx.gz") and n not in blocks:
                out.append((n, GzipIndex(self.zd, n)))
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
    def verify_hashes(self, progress: Optional[Callable[[int], None]] = None) -> int:
        """Check every entry against datapackage.json (its hash and size), and that every entry
        but the package files is listed; a PackageError names the first that fails. Returns
        the bytes hashed."""
        res = self.package.resources
        done = 0
        for name, e in sorted(self.zd.entries.items(), key=lambda kv: kv[1].start):
            if name in (PACKAGE, DIGEST) or name.endswith("/"):
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
            if e.method == 0:
                pos = 0
                while pos < e.size:
                    chunk = self.zd.read_range(e, pos, min(HASH_CHUNK, e.size - pos))
                    h.update(chunk)
                    pos += len(chunk)
                    if progress is not None:
                        progress(len(chunk))
            else:
                h.update(self.zd.read(name))
            done += e.size
            if h.hexdigest() != want or (r.bytes >= 0 and r.bytes != e.size):
                raise PackageError(self.path, e.start, f"entry {name!r} does not match its {algo} hash "
                                   f"or size in {PACKAGE}", "the WACZ is damaged or was changed")
        for name in res:
            if name not in self.zd.entries:
                raise PackageError(self.path, None, f"{PACKAGE} lists {name!r}, which is not in the WACZ")
        return done


__all__ = ["ARCHIVE", "GzipIndex", "IndexSource", "PAGES", "WaczFile"]
