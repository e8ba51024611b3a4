"""`warchive wacz validate`: is a file a WACZ 1.1.1 that replay tools can read by range?

Checked, in order (the first failure is reported and the rest skipped, as a
damaged archive makes later checks meaningless):

- the ZIP structure (warchive.wacz.zipread refuses hostile and lying archives);
- datapackage.json parses, names safe paths, matches datapackage-digest.json;
- the required parts: at least one WARC under archive/, an index under
  indexes/, pages/pages.jsonl (JSON lines with url and ts on every page);
- WARCs and compressed index blocks are stored, not deflated;
- every entry's SHA-256 and size match datapackage.json, every entry is listed,
  and the index entries stay within the limits across a WACZ's index
  (warchive.wacz.indexlines: a zip bomb is refused, naming the entry);
- every index line points at a readable record: one starts at its offset
  inside its WARC's entry, and its length stays inside the entry. The lines are
  streamed (a compressed index's blocks read through its summary, each block's
  digest checked), never held.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import List, Optional

from ..errors import ArchiveError
from ..warc.reader import ArchiveIterator
from .indexes import CompressedIndex
from .indexlines import IndexBudget, entry_lines
from .pages import check_pages
from .reader import PAGES, WaczFile
from .zipread import STORED


@dataclass
class Report:
    path: str
    ok: bool = False
    problem: Optional[str] = None
    warcs: int = 0
    lines: int = 0
    pages: int = 0
    checked: List[str] = field(default_factory=list)


def validate(path: str, *, records: bool = True) -> Report:
    """Check the WACZ at ``path``; ``records``: also open the record of every index line."""
    rep = Report(path)
    try:
        with WaczFile(path) as wz:
            rep.checked.append("zip structure, datapackage.json and its digest")
            if wz.package.version is None:
                raise ArchiveError("datapackage.json has no wacz_version")
            if not wz.warcs:
                raise ArchiveError("no WARC file under archive/")
            for e in wz.warcs.values():
                if e.method != STORED:
                    raise ArchiveError(f"entry {e.name} is deflated: WARCs must be stored to be read by range")
            parts = wz.index_parts()
            if not parts:
                raise ArchiveError("no index under indexes/ (index.cdxj, or index.idx with index.cdx.gz)")
            pages = wz.pages()
            if pages is None:
                raise ArchiveError(f"no {PAGES}")
            rep.pages = check_pages(PAGES, pages)
            rep.warcs = len(wz.warcs)
            rep.checked.append("required parts, stored WARCs")
            wz.verify_hashes()
            rep.checked.append("sha256 of every entry")
            budget = IndexBudget(wz.path)
            for part in parts:
                lines = CompressedIndex(wz.zd, part.name, budget=budget).range(b"", None) if part.summarized \
                    else entry_lines(wz.zd, part, budget)
                for line in lines:
                    rep.lines += 1
                    if records:
                        _check_line(wz, line)
            if records:
                rep.checked.append("a record at every index line")
    except (ArchiveError, OSError) as e:
        rep.problem = str(e)
        return rep
    rep.ok = True
    return rep


def _check_line(wz: WaczFile, line: bytes) -> None:
    parts = line.split(b" ", 2)
    try:
        f = json.loads(parts[2])
        name, off = f["filename"], int(f["offset"])
        length = int(f["length"]) if "length" in f else None
    except (IndexError, ValueError, KeyError, TypeError):
        raise ArchiveError(f"index line {line[:200]!r} is not CDXJ with filename and offset") from None
    e = wz.warc_entry(name)
    if off < 0 or off >= e.size or (length is not None and off + length > e.size):
        raise ArchiveError(f"index line {line[:200]!r} points outside {e.name} ({e.size} bytes)")
    with ArchiveIterator(wz.path, offset=e.start + off, window=64 << 10, length=length) as it:
        rec = next(iter(it), None)
    if rec is None or rec.offset != e.start + off:
        raise ArchiveError(f"no record at byte {off} of {e.name}, where index line {line[:200]!r} points")


__all__ = ["Report", "validate"]
