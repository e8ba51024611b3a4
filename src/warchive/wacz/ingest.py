"""`warchive add COLL FILE.wacz`: a WACZ's WARCs, index and pages put into a collection.

In this order, so that a failure leaves the collection as it was or with WARCs
only (never an index naming files that are not there):

1. every entry is checked against datapackage.json (SHA-256 and size; an entry
   not listed, or listed but missing, is refused, naming it);
2. its WARCs are copied into COLL/archive/ under their names (an existing file
   of that name must hold the same bytes), each published by atomic rename;
3. its index lines become one new segment COLL/indexes/wacz-<time>-<random>.seg,
   when they can be trusted: every line parses, names a WARC of the WACZ, lies
   inside it, and the first line of each WARC finds a record where it says. An
   index that is absent or fails those checks is rebuilt from the WARCs instead.
   A line keyed otherwise than warchive keys its ``url`` (ArchiveWeb.page's
   percent-encoded query characters) gets warchive's key (warchive.wacz.keys),
   and the lines are sorted again: ``Added.rekeyed`` counts them;
4. its pages/pages.jsonl is kept as COLL/pages/<WACZ name>.jsonl.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional

from ..collection import Collection
from ..durable import AtomicOutput
from ..errors import ArchiveError, FileError
from ..index.segment import write_segment
from ..warc.reader import ArchiveIterator
from .keys import own_lines
from .reader import WaczFile
from .zipread import Entry

COPY_CHUNK = 4 << 20


@dataclass
class Added:
    segment: Optional[str]
    warcs: List[str]
    lines: int
    reindexed: bool
    rekeyed: int   # index lines whose key was recomputed from their url
    reason: str
    pages: Optional[str]


def add_wacz(coll_path: str, wacz_path: str, *, progress: Optional[Callable[[int], None]] = None,
             jobs: int = 1) -> Added:
    """Import the WACZ at ``wacz_path`` into the collection at ``coll_path`` (see the module docstring)."""
    os.makedirs(os.path.join(coll_path, "archive"), exist_ok=True)
    os.makedirs(os.path.join(coll_path, "indexes"), exist_ok=True)
    coll = Collection(coll_path)   # (after indexes/ exists: it is where segments go)
    with WaczFile(wacz_path) as wz:
        wz.verify_hashes(progress)
        placed = [_place(wz, name, e, coll.archive_dir) for name, e in sorted(wz.warcs.items())]
        lines, reason = _trusted_lines(wz)
        pages = wz.pages()
    reindexed = lines is None
    rekeyed = 0
    if lines is None:
        seg = coll.add(placed, jobs=jobs)
        n = 0 if seg is None else -1
    else:
        lines, rekeyed = own_lines(lines)
        lines.sort()
        seg = coll.new_segment_name("wacz") if lines else None
        if seg is not None:
            write_segment(lines, seg, source=os.path.abspath(wacz_path))
        n = len(lines)
    kept = None
    if pages is not None:
        pdir = os.path.join(coll.path, "pages")
        os.makedirs(pdir, exist_ok=True)
        kept = os.path.join(pdir, os.path.basename(wacz_path).rsplit(".", 1)[0] + ".jsonl")
        with AtomicOutput(kept) as out:
            out.write(pages)
    return Added(seg, placed, n, reindexed, rekeyed, reason, kept)


def _place(wz: WaczFile, name: str, e: Entry, archive_dir: str) -> str:
    """Copy stored entry ``e`` to ARCHIVE/name; an existing file there must hold the same bytes."""
    dst = os.path.normpath(os.path.join(archive_dir, name))
    if not dst.startswith(os.path.abspath(archive_dir) + os.sep):
        raise ArchiveError(f"{wz.path}: entry archive/{name} would leave {archive_dir}")
    wz.zd.stored(e.name)
    if os.path.exists(dst):
        if os.path.getsize(dst) != e.size or _sha256_file(dst) != _sha256_entry(wz, e):
            raise ArchiveError(f"{dst} exists with other content than entry {e.name} of {wz.path}; "
                               "rename one of them before adding")
        return dst
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    with AtomicOutput(dst) as out:
        pos = 0
        while pos < e.size:
            chunk = wz.zd.read_range(e, pos, min(COPY_CHUNK, e.size - pos))
            out.write(chunk)
            pos += len(chunk)
    return dst


def _sha256_file(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(COPY_CHUNK), b""):
            h.update(chunk)
    return h.hexdigest()


def _sha256_entry(wz: WaczFile, e: Entry) -> str:
    h, pos = hashlib.sha256(), 0
    while pos < e.size:
        chunk = wz.zd.read_range(e, pos, min(COPY_CHUNK, e.size - pos))
        h.update(chunk)
        pos += len(chunk)
    return h.hexdigest()


def _trusted_lines(wz: WaczFile) -> "tuple[Optional[List[bytes]], str]":
    """The WACZ's index lines, or (None, why) when there are none or they cannot be trusted."""
    try:
        sources = wz.index_sources()
        lines: List[bytes] = []
        for _, s in sources:
            lines.extend(s.range(b"", None))
    except (ArchiveError, OSError) as err:
        return None, f"its index cannot be read ({err})"
    if not lines:
        return None, "it has no index"
    first: Dict[str, int] = {}
    for line in lines:
        parts = line.split(b" ", 2)
        try:
            f = json.loads(parts[2])
            name, off, length = f["filename"], int(f["offset"]), int(f["length"])
        except (IndexError, ValueError, KeyError, TypeError):
            return None, f"an index line is not CDXJ with filename, offset and length: {line[:120]!r}"
        e = wz.warcs.get(name)
        if e is None:
            return None, f"an index line names {name!r}, not a WARC of the WACZ"
        if off < 0 or length <= 0 or off + length > e.size:
            return None, f"an index line points outside {name!r}: {line[:120]!r}"
        first.setdefault(name, off)
    for name, off in first.items():
        e = wz.warcs[name]
        try:
            with ArchiveIterator(wz.path, offset=e.start + off, window=64 << 10) as it:
                rec = next(iter(it), None)
        except FileError as err:
            return None, f"no record at an offset its index gives for {name!r} ({err})"
        if rec is None or rec.offset != e.start + off:
            return None, f"no record at an offset its index gives for {name!r}"
    return lines, "its index was checked"


__all__ = ["Added", "add_wacz"]
