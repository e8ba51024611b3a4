"""`warchive add COLL FILE.wacz`: a WACZ's WARCs, index and pages put into a collection.

In this order, so that a failure leaves the collection as it was or with WARCs
only (never an index naming files that are not there):

1. every entry is checked against datapackage.json (SHA-256 and size; an entry
   not listed, or listed but missing, is refused, naming it), and the index
   entries against the limits across a WACZ's index (warchive.wacz.indexlines:
   a zip bomb is refused, naming the entry);
2. its WARCs are copied into COLL/archive/ under their names (an existing file
   of that name must hold the same bytes), each published by atomic rename;
3. its index lines become one new segment COLL/indexes/wacz-<time>-<random>.seg,
   when they can be trusted: every line parses, names a WARC of the WACZ, lies
   inside it, and the first line of each WARC finds a record where it says. An
   index that is absent or fails those checks is rebuilt from the WARCs instead.
   A line keyed otherwise than warchive keys its ``url`` (ArchiveWeb.page's
   percent-encoded query characters) gets warchive's key (warchive.wacz.keys),
   and the lines are sorted again: ``Added.rekeyed`` counts them. The lines are
   streamed from the WACZ and sorted in bounded memory (warchive.wacz.indexsegment);
4. its pages/pages.jsonl is kept as COLL/pages/<WACZ name>.jsonl.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from typing import Callable, Dict, Iterator, List, Optional, Tuple

from ..collection import Collection
from ..durable import AtomicOutput
from ..errors import ArchiveError, FileError
from ..warc.reader import ArchiveIterator
from .indexlines import IndexTooLarge
from .indexsegment import write_sorted
from .keys import Rekeyed
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
        seg, n, rekeyed, reason = _index_segment(wz, coll, os.path.abspath(wacz_path))
        pages = wz.pages()
    reindexed = seg is None
    if seg is None:
        seg = coll.add(placed, jobs=jobs)
        n = 0 if seg is None else -1
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


class _Untrusted(Exception):
    """The WACZ's index cannot be trusted (the message says why): its WARCs are indexed instead."""


def _index_segment(wz: WaczFile, coll: Collection, source: str) -> Tuple[Optional[str], int, int, str]:
    """The WACZ's index lines, checked and given warchive's keys, written sorted as a new
    segment of ``coll``: (its path, lines, keys recomputed, why). The path is None, and nothing
    is written, when there are none or they cannot be trusted; IndexTooLarge is raised."""
    seg = coll.new_segment_name("wacz")
    first: Dict[str, int] = {}
    rekeyed = Rekeyed(_checked_lines(wz, first))
    try:
        with AtomicOutput(seg) as out:
            n = write_sorted(rekeyed, out.write, source=source)
            if not n:
                raise _Untrusted("it has no index")
            _check_first_records(wz, first)
    except _Untrusted as why:
        return None, 0, 0, str(why)
    return seg, n, rekeyed.changed, "its index was checked"


def _checked_lines(wz: WaczFile, first: Dict[str, int]) -> Iterator[bytes]:
    """The WACZ's index lines, each one checked as it is read (CDXJ naming a WARC of the WACZ,
    inside it); ``first`` gets the first offset of each WARC. _Untrusted when a line fails, or
    the index cannot be read."""
    try:
        for _, lines in wz.index_lines():
            for line in lines:
                parts = line.split(b" ", 2)
                try:
                    f = json.loads(parts[2])
                    name, off, length = f["filename"], int(f["offset"]), int(f["length"])
                except (IndexError, ValueError, KeyError, TypeError):
                    raise _Untrusted(f"an index line is not CDXJ with filename, offset and length: "
                                     f"{line[:120]!r}") from None
                e = wz.warcs.get(name) if isinstance(name, str) else None
                if e is None:
                    raise _Untrusted(f"an index line names {name!r}, not a WARC of the WACZ")
                if off < 0 or length <= 0 or off + length > e.size:
                    raise _Untrusted(f"an index line points outside {name!r}: {line[:120]!r}")
                first.setdefault(name, off)
                yield line
    except IndexTooLarge:
        raise
    except (ArchiveError, OSError) as err:
        raise _Untrusted(f"its index cannot be read ({err})") from None


def _check_first_records(wz: WaczFile, first: Dict[str, int]) -> None:
    """A record starts where the index puts the first line of each WARC (_Untrusted if not)."""
    for name, off in first.items():
        e = wz.warcs[name]
        try:
            with ArchiveIterator(wz.path, offset=e.start + off, window=64 << 10) as it:
                rec = next(iter(it), None)
        except FileError as err:
            raise _Untrusted(f"no record at an offset its index gives for {name!r} ({err})") from None
        if rec is None or rec.offset != e.start + off:
            raise _Untrusted(f"no record at an offset its index gives for {name!r}")


__all__ = ["Added", "add_wacz"]
