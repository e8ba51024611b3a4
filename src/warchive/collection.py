"""The on-disk layout of collections, the same as pywb's automatic collections.

    ROOT/                     (`warchive serve --root ROOT`)
      COLL/
        archive/              WARC/ARC files
        indexes/              index files: sorted .cdx/.cdxj, ZipNum clusters (.idx/.summary,
                              with their .loc and shards), warchive index segments

Every index file of `indexes/` is a source of the collection, named
`COLL/indexes/FILE` in the `source` field of captures, as pywb names them;
lookups merge all of them. A directory given where a collection is expected
is a collection if it has an `indexes/` directory, else its own files are
the index files.
"""

from __future__ import annotations

import os
from typing import List, Optional

from .errors import ArchiveError

INDEX_EXTS = (".cdx", ".cdxj")
ZIPNUM_EXTS = (".idx", ".summary")


class Collection:
    def __init__(self, path: str, name: Optional[str] = None) -> None:
        self.path = os.path.abspath(path)
        self.name = name or os.path.basename(self.path.rstrip("/"))
        idx = os.path.join(self.path, "indexes")
        self.index_dir = idx if os.path.isdir(idx) else self.path
        self.archive_dir = os.path.join(self.path, "archive")

    def index_files(self) -> List[str]:
        """The index files, in name order."""
        from .index.sources import is_segment

        out = []
        try:
            names = sorted(os.listdir(self.index_dir))
        except FileNotFoundError:
            raise ArchiveError(f"{self.path}: no such collection") from None
        for n in names:
            p = os.path.join(self.index_dir, n)
            if not os.path.isfile(p):
                continue
            if n.endswith(INDEX_EXTS + ZIPNUM_EXTS) or is_segment(p):
                out.append(p)
        return out

    def source_name(self, path: str) -> str:
        return f"{self.name}/indexes/{os.path.basename(path)}"


def new_segment_name(indexes: str, stem: str) -> str:
    """A path for a new index segment in the directory `indexes`: STEM-<UTC time>-<random>.seg
    (of one stem, segments made in different seconds sort in the order they were made)."""
    import time

    stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime())
    return os.path.join(indexes, f"{stem}-{stamp}-{os.urandom(3).hex()}.seg")


def add_warcs(coll_path: str, warcs: "list[str]", *, link: bool = False, jobs: int = 1,
              verify: bool = False) -> Optional[str]:
    """Put WARC/ARC files into a collection and index them as one new segment.

    The files are copied (hard-linked with `link`) into COLL/archive/ under their own
    names (an existing file of that name must be the same bytes); their captures go
    into a new segment COLL/indexes/add-<time>-<random>.seg. The index already there is
    not rewritten (`compact` merges segments later). Returns the segment's path (None
    when the files held nothing to index)."""
    import filecmp
    import shutil

    from .index.build import index_paths
    from .index.cdx import IndexOptions
    from .index.segment import write_segment
    from .index.sort import LineSorter

    os.makedirs(os.path.join(coll_path, "archive"), exist_ok=True)
    os.makedirs(os.path.join(coll_path, "indexes"), exist_ok=True)
    c = Collection(coll_path)
    placed = []
    for w in warcs:
        dst = os.path.join(c.archive_dir, os.path.basename(w))
        if os.path.exists(dst):
            if not filecmp.cmp(w, dst, shallow=False):
                raise ArchiveError(f"{dst} exists with other content; rename {w} before adding it")
        elif link:
            os.link(w, dst)
        else:
            tmp = dst + ".part"
            shutil.copyfile(w, tmp)
            os.replace(tmp, dst)
        placed.append(dst)
    lines: "list[bytes]" = []
    sorter = LineSorter()
    index_paths(placed, sorter.add, IndexOptions(verify=verify, dir_root=c.archive_dir), jobs=jobs)
    sorter.finish(lambda b: lines.extend(b.splitlines()))
    if not lines:
        return None
    seg = new_segment_name(c.index_dir, "add")
    write_segment(lines, seg, source=", ".join(placed))
    return seg


def compact(coll_path: str) -> Optional[str]:
    """Merge every segment of a collection into one (sorted, repeats dropped), then remove the
    merged ones. Readers holding an old segment keep reading it (an unlinked file stays
    readable while open); new readers see the merged one. Returns its path."""
    import heapq

    from .index.segment import Segment, write_segment

    c = Collection(coll_path)
    segs = [p for p in c.index_files() if p.endswith(".seg")]
    if len(segs) < 2:
        return segs[0] if segs else None
    opened = [Segment(p) for p in segs]
    try:
        merged = heapq.merge(*[s.range(b"", None) for s in opened])
        out = new_segment_name(c.index_dir, "compact")

        def unique():
            last = None
            for line in merged:
                if line != last:
                    yield line
                    last = line
        write_segment(unique(), out, source="compaction of " + ", ".join(os.path.basename(p) for p in segs))
    finally:
        for s in opened:
            s.close()
    for p in segs:
        os.unlink(p)
    return out
