"""Collections: WARC files and their index, laid out on disk as pywb's automatic collections.

    ROOT/                     (`warchive serve --root ROOT`)
      COLL/
        archive/              WARC/ARC files
        indexes/              index files: sorted .cdx/.cdxj, ZipNum clusters (.idx/.summary,
                              with their .loc and shards), warchive index segments (.seg)
        crawls/ID/            crawl sessions (warchive crawl)

Every index file of `indexes/` is a source of the collection, named
`COLL/indexes/FILE` in the `source` field of captures, as pywb names them;
lookups merge all of them (warchive.index.sources knows the layout, so that
the query engine reads collections without this module). A directory given
where a collection is expected is a collection if it has an `indexes/`
directory, else its own files are the index files.

Adding WARCs writes one new segment and never rewrites the index there;
``merge_segments`` (what `warchive compact` and the crawler run) merges
segments into one.
"""

from __future__ import annotations

import filecmp
import heapq
import os
import time
from typing import Iterable, Iterator, List, Optional, Sequence

from .durable import AtomicOutput
from .errors import ArchiveError
from .index.build import Path, Paths, index_paths, path_list
from .index.cdx import IndexOptions
from .index.segment import Segment, write_segment
from .index.sort import LineSorter
from .index.sources import SEGMENT_EXT, collection_name, index_dir_of, index_files, source_name

__all__ = ["Collection", "add_warcs", "compact", "new_segment_name"]


class Collection:
    """A collection directory: where its files are, and the operations that change its index."""

    def __init__(self, path: Path, name: Optional[str] = None) -> None:
        self.path = os.path.abspath(path)
        self.name = name or collection_name(self.path)
        self.index_dir = index_dir_of(self.path)
        self.archive_dir = os.path.join(self.path, "archive")

    @classmethod
    def init(cls, path: Path) -> "Collection":
        """Make a new, empty collection at `path` (archive/ and indexes/), as pywb's `wb-manager
        init` does; an existing file or directory there is an ArchiveError."""
        if os.path.lexists(path):
            raise ArchiveError(f"{path} exists already (warchive add puts files into an existing collection)")
        os.makedirs(os.path.join(path, "archive"))
        os.makedirs(os.path.join(path, "indexes"))
        return cls(path)

    def index_files(self) -> List[str]:
        """The index files, in name order."""
        return index_files(self.path)

    def segments(self) -> List[str]:
        """The index segments, in name order."""
        return [p for p in self.index_files() if p.endswith(SEGMENT_EXT)]

    def source_name(self, path: str) -> str:
        return source_name(self.name, path)

    def new_segment_name(self, stem: str) -> str:
        return new_segment_name(self.index_dir, stem)

    def add(self, warcs: Paths, *, link: bool = False, jobs: int = 1,
            verify: bool = False) -> Optional[str]:
        """Put WARC/ARC files (one path, str or PathLike, or an iterable of them) into the
        collection and index them as one new segment.

        The files are copied (hard-linked with `link`) into COLL/archive/ under their own
        names (an existing file of that name must be the same bytes); their captures go
        into a new segment COLL/indexes/add-<time>-<random>.seg, keyed as pywb's `wb-manager add`
        keys them (POST and PUT captures with their request bodies, `__wb_method=...`, so that
        replay finds them). The index already there is not rewritten (`compact` merges segments
        later). Returns the segment's path (None
        when the files held nothing to index).

        The files are indexed where they are (their base names are the filenames of the lines)
        and placed only then: a file that is missing, damaged or clashes is an error before
        anything is copied."""
        warcs = path_list(warcs)
        for w in warcs:
            self._clash(w)
        lines: List[bytes] = []
        sorter = LineSorter()
        index_paths(warcs, sorter.add, IndexOptions(verify=verify, post_append=True), jobs=jobs)
        sorter.finish(lambda b: lines.extend(b.splitlines()))
        os.makedirs(self.archive_dir, exist_ok=True)
        os.makedirs(os.path.join(self.path, "indexes"), exist_ok=True)
        self.index_dir = index_dir_of(self.path)
        placed = [self._place(w, link) for w in warcs]
        if not lines:
            return None
        seg = self.new_segment_name("add")
        write_segment(lines, seg, source=", ".join(placed))
        return seg

    def _clash(self, warc: str) -> None:
        """An ArchiveError if COLL/archive/ holds a file of this name with other bytes."""
        dst = os.path.join(self.archive_dir, os.path.basename(warc))
        if os.path.exists(dst) and not filecmp.cmp(warc, dst, shallow=False):
            raise ArchiveError(f"{dst} exists with other content; rename {warc} before adding it")

    def _place(self, warc: str, link: bool) -> str:
        dst = os.path.join(self.archive_dir, os.path.basename(warc))
        if os.path.exists(dst):
            self._clash(warc)
        elif link:
            os.link(warc, dst)
        else:
            copy_file(warc, dst)
        return dst

    def merge_segments(self, segments: Sequence[str], stem: str, source: str) -> Optional[str]:
        """Merge `segments` of this collection into one new segment STEM-<time>-<random>.seg
        (sorted, repeated lines once), then remove them. Readers holding an old segment keep
        reading it (an unlinked file stays readable while open); new readers see the merged
        one. Returns its path; with fewer than two segments nothing is merged and the one
        segment (or None) is returned."""
        segments = list(segments)
        if len(segments) < 2:
            return segments[0] if segments else None
        out = self.new_segment_name(stem)
        opened = [Segment(p) for p in segments]
        try:
            write_segment(_unique(heapq.merge(*[s.range(b"", None) for s in opened])), out, source=source)
        finally:
            for s in opened:
                s.close()
        for p in segments:
            os.unlink(p)
        return out

    def compact(self) -> Optional[str]:
        """Merge every segment of the collection into one; returns its path."""
        segs = self.segments()
        return self.merge_segments(segs, "compact",
                                   "compaction of " + ", ".join(os.path.basename(p) for p in segs))


def copy_file(src: str, dst: str) -> None:
    """Copy ``src`` to ``dst`` through a temporary file renamed when complete and on disk: a full
    disk is a WriteError naming ``dst``, and leaves nothing behind."""
    with open(src, "rb") as f, AtomicOutput(dst) as out:
        while True:
            chunk = f.read(1 << 20)
            if not chunk:
                break
            out.write(chunk)


def _unique(lines: Iterable[bytes]) -> Iterator[bytes]:
    last = None
    for line in lines:
        if line != last:
            yield line
            last = line


def new_segment_name(indexes: str, stem: str) -> str:
    """A path for a new index segment in the directory `indexes`: STEM-<UTC time>-<random>.seg
    (of one stem, segments made in different seconds sort in the order they were made)."""
    stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime())
    return os.path.join(indexes, f"{stem}-{stamp}-{os.urandom(3).hex()}{SEGMENT_EXT}")


def add_warcs(coll_path: Path, warcs: Paths, *, link: bool = False, jobs: int = 1,
              verify: bool = False) -> Optional[str]:
    """``Collection(coll_path).add(warcs, ...)``: the new segment's path, or None."""
    return Collection(coll_path).add(warcs, link=link, jobs=jobs, verify=verify)


def compact(coll_path: Path) -> Optional[str]:
    """``Collection(coll_path).compact()``: the merged segment's path."""
    return Collection(coll_path).compact()
