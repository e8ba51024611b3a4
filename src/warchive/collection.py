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
