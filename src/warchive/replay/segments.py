"""Segmented records: where the ``continuation`` records of a record cut over several WARC files are.

A record with ``WARC-Segment-Number: 1`` continues in the records whose
``WARC-Segment-Origin-ID`` is its record id, numbered 2, 3, ..., the last with
``WARC-Segment-Total-Length``. They are found in the record indexes, or else
among the records that follow it in its file and the next files by name (a
writer rolling over to a new file puts them there). This module reads record
heads only; the loader opens and checks the records it returns.
"""

from __future__ import annotations

import os
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from ..errors import SegmentNotFound
from ..index.cdx import ARCHIVE_EXTENSIONS
from ..index.rix import RecordIndex, unbracket
from ..warc.reader import open as open_warc
from .archives import OpenRecord, open_source, siblings

SEGMENT_SCAN_RECORDS = 16   # without a record index: records looked at per file for continuations
SEGMENT_SCAN_FILES = 4      # ... and files after the first segment's


class _Found(NamedTuple):
    filename: str
    offset: int
    last: bool      # it has WARC-Segment-Total-Length


def continuations(first: OpenRecord, record_indexes: Sequence[RecordIndex]) -> List[Tuple[str, int]]:
    """(filename, offset) of each continuation of ``first``, segment 2 first; [] when ``first`` is
    not the first segment of a segmented record; SegmentNotFound when one is missing."""
    rec = first.rec
    if (rec.headers.get("WARC-Segment-Number") or "").strip() != "1":
        return []
    origin = unbracket(rec.record_id) or ""
    found = _indexed(origin, record_indexes) or _scanned(first, origin)
    n = 2
    out = []
    while n in found:
        c = found[n]
        out.append((c.filename, c.offset))
        if c.last:
            return out
        n += 1
    raise SegmentNotFound(f"record <{origin}> ({first.filename}:{rec.offset}) is segmented and its segment "
                          f"{n} was not found (looked in the record index and the "
                          f"{SEGMENT_SCAN_RECORDS} records after it in up to {SEGMENT_SCAN_FILES} files)")


def _indexed(origin: str, record_indexes: Sequence[RecordIndex]) -> Dict[int, _Found]:
    found: Dict[int, _Found] = {}
    for r in record_indexes:
        for e in r.segments(origin):
            if e.segment is not None and e.segment >= 2:
                found.setdefault(e.segment, _Found(e.filename, e.offset, e.total_length is not None))
    return found


def _scanned(first: OpenRecord, origin: str) -> Dict[int, _Found]:
    """The continuations among the records after ``first`` in its file and the next files."""
    prefix = first.filename[: len(first.filename) - len(os.path.basename(first.filename))]
    paths = siblings(first.path, ARCHIVE_EXTENSIONS)   # its directory's files, or its store's
    files: List[Tuple[str, str, Optional[int]]] = [(first.path, first.filename, first.rec.offset)]
    if first.path in paths:
        files += [(p, prefix + os.path.basename(p), None) for p in paths[paths.index(first.path) + 1:]]
    found: Dict[int, _Found] = {}
    for path, fname, start in files[: SEGMENT_SCAN_FILES + 1]:
        with open_source(path) as src, open_warc(src, parse_http=False, offset=start, name=path) as it:
            for i, r in enumerate(it):
                if start is not None and i == 0:
                    continue
                if i > SEGMENT_SCAN_RECORDS:
                    break
                if r.type == "continuation" and unbracket(r.headers.get("WARC-Segment-Origin-ID")) == origin:
                    num = (r.headers.get("WARC-Segment-Number") or "").strip()
                    if num.isascii() and num.isdigit() and len(num) <= 18:   # (int() reads these)
                        last = r.headers.get("WARC-Segment-Total-Length") is not None
                        found.setdefault(int(num), _Found(fname, r.offset, last))
                        if last:
                            return found
    return found


__all__ = ["SEGMENT_SCAN_FILES", "SEGMENT_SCAN_RECORDS", "SegmentNotFound", "continuations"]
