"""The index of a crawl, written as it goes: a new segment of the collection per closed WARC file and per period.

The crawler hands over every record the WARC writer reports (``add``); its CDXJ
line is buffered and written as a new index segment (``COLL/indexes/crawl-*.seg``)
when the WARC file rolls over, every ``index_every`` seconds (``flush``) and at the
end, when this run's segments are merged into one (``merge``), so that a long crawl
leaves one segment, not thousands. On resume, the killed run's recovered WARC files
are indexed (``add_files``) without a line that a segment holds already. This module
writes index segments; it must not write WARC records.
"""

from __future__ import annotations

import os
from typing import Callable, List, Optional, Sequence, Set

from ..collection import Collection, new_segment_name
from ..index.build import index_paths
from ..index.cdx import IndexOptions, written_record_line
from ..index.segment import Segment, write_segment
from ..warc.writer import Written

__all__ = ["CrawlIndex"]


class CrawlIndex:
    """The segments one run of a crawl session writes into the collection `collection` (its
    index directory `index_dir`). `source` names the run in each segment's ``source`` ("crawl
    SESSION"); `on_segment` is called with each new segment."""

    def __init__(self, collection: str, index_dir: str, source: str,
                 on_segment: Optional[Callable[[str], None]] = None) -> None:
        self.collection = collection
        self.index_dir = index_dir
        self.source = source
        self.on_segment = on_segment
        self.segments: List[str] = []     # index segments this run wrote
        self._lines: List[bytes] = []
        self._file: Optional[str] = None

    def add(self, w: Written) -> Optional[str]:
        """Buffer the index line of a record just written. When it is the first record of a new WARC
        file, the previous file was just closed: its lines are written first, and its name returned."""
        closed = None
        if self._file is not None and w.filename != self._file:
            closed = self._file
            self.flush(f"rollover of {closed}")
        self._file = w.filename
        line = written_record_line(w)
        if line:
            self._lines.append(line.rstrip(b"\n"))
        return closed

    def flush(self, why: str = "periodic") -> Optional[str]:
        """Write the buffered index lines as a new segment of the collection (None when there are none)."""
        lines, self._lines = self._lines, []
        return self._write(lines, why)

    def add_files(self, paths: Sequence[str], archive_dir: str) -> Optional[str]:
        """Index WARC files of `archive_dir` (recovered after a kill) into a new segment, leaving out
        the lines some segment of the collection holds already."""
        chunks: List[bytes] = []
        index_paths(list(paths), chunks.append, IndexOptions(dir_root=archive_dir))
        lines = b"".join(chunks).splitlines()
        names = [os.path.basename(p).encode() for p in paths]
        have: Set[bytes] = set()
        for seg in sorted(os.listdir(self.index_dir)):
            if not seg.endswith(".seg"):
                continue
            s = Segment(os.path.join(self.index_dir, seg))
            try:
                for line in s.range(b"", None):
                    if any(n in line for n in names):
                        have.add(bytes(line))
            finally:
                s.close()
        return self._write([ln for ln in lines if ln not in have], "recovered " + ", ".join(
            os.path.basename(p) for p in paths))

    def _write(self, lines: List[bytes], why: str) -> Optional[str]:
        if not lines:
            return None
        path = new_segment_name(self.index_dir, "crawl")
        write_segment(sorted(set(lines)), path, source=f"{self.source} ({why})")
        self.segments.append(path)
        if self.on_segment is not None:
            self.on_segment(path)
        return path

    def merge(self) -> None:
        """This run's segments (one per rollover and per period) merged into one."""
        parts = [p for p in self.segments if os.path.exists(p)]
        if len(parts) < 2:
            return
        out = Collection(self.collection).merge_segments(parts, "crawl",
                                                         f"{self.source} (merge of {len(parts)} segments)")
        self.segments = [out] if out is not None else []
