"""The duplicate lines of crawl logs: which crawl.log lines say "this payload was seen before".

A crawler that deduplicates by payload digest notes it in the annotations
(field 12) of the line; these notes are read as duplicates (docs/cli.md,
"warchive crawllog-revisits", lists them for users)::

    duplicate:digest                 Heritrix 3: the payload digest is in the content digest history
    warcRevisit:digest               Heritrix 3: and it wrote an identical-payload-digest revisit
    warcRevisit:uriAgnosticDigest    Heritrix 3: likewise, the original at another URL
    duplicate:"FILE,OFFSET[,TS]"     the DeDuplicator add-on (NetarchiveSuite): the original's file and offset
    duplicate                        the DeDuplicator add-on, without an origin
    duplicate:skipped                warchive (--dedup skip): written nowhere, the payload is elsewhere

and, as ``not-modified`` (a 304: no payload of its own, so no identical-payload
revisit can stand for it), ``duplicate:server-not-modified`` and
``warcRevisit:notModified``.

``read_duplicates(paths)`` yields a ``Duplicate`` per such line, with where
it was (file, line number) and the line as it was, so that a line left
unresolved can be listed as it stands. This module reads; it looks nothing up
and writes nothing.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Iterator, List, Optional, Sequence

from ..errors import ArchiveError
from ..warc.digest import Digest
from .crawl_log import CrawlLogEntry, CrawlLogError, parse_line

__all__ = ["Duplicate", "DuplicateStats", "IDENTICAL", "NOT_MODIFIED", "duplicate_kind", "lines_of",
           "read_duplicates"]

IDENTICAL = "identical-payload"
NOT_MODIFIED = "not-modified"

_IDENTICAL_NOTES = frozenset({"duplicate:digest", "warcRevisit:digest", "warcRevisit:uriAgnosticDigest",
                              "duplicate", "duplicate:skipped"})
_NOT_MODIFIED_NOTES = frozenset({"duplicate:server-not-modified", "warcRevisit:notModified"})
# DeDuplicator's origin: duplicate:"FILE,OFFSET" or duplicate:"FILE,OFFSET,TIMESTAMP" (commas inside quotes)
_ORIGIN = re.compile(r'(?:^|,)duplicate:"([^",]*),(\d+)(?:,(\d{14,17}))?"')


@dataclass
class Duplicate:
    """One duplicate line: where it is, the line, its entry, and what its annotations say."""
    path: str
    lineno: int
    line: str                       # as read, with its line feed
    entry: CrawlLogEntry
    kind: str                       # IDENTICAL or NOT_MODIFIED
    origin_file: Optional[str] = None     # DeDuplicator's duplicate:"FILE,OFFSET[,TS]"
    origin_offset: Optional[int] = None
    origin_timestamp: Optional[str] = None
    digest: Optional[Digest] = None       # the payload digest of field 10 (None when "-" or unreadable)

    def __post_init__(self) -> None:
        if self.digest is None:
            self.digest = Digest.find(self.entry.digest)

    @property
    def where(self) -> str:
        return f"{self.path}:{self.lineno}"

    @property
    def when(self) -> datetime:
        """When the payload was fetched: the fetch's begin (field 9), as Heritrix dates its records,
        or the log time (field 1) when the line has none."""
        t = self.entry.fetch_begin if self.entry.fetch_begin is not None else self.entry.logged
        return datetime.fromtimestamp(t or 0.0, tz=timezone.utc)

    @property
    def timestamp(self) -> str:
        """``when`` as a 14-digit timestamp, as an index line has it."""
        return self.when.strftime("%Y%m%d%H%M%S")


@dataclass
class DuplicateStats:
    lines: int = 0          # crawl.log lines read
    duplicates: int = 0     # of which duplicates
    bad: int = 0            # lines that are not crawl.log lines (skipped with skip_errors)


def duplicate_kind(entry: CrawlLogEntry) -> Optional[str]:
    """IDENTICAL, NOT_MODIFIED or None (not a duplicate) for the annotations of ``entry``."""
    notes = set(entry.annotations)
    if notes & _IDENTICAL_NOTES or _ORIGIN.search(",".join(entry.annotations)):
        return IDENTICAL
    if notes & _NOT_MODIFIED_NOTES:
        return NOT_MODIFIED
    return None


def _duplicate(path: str, lineno: int, line: str, entry: CrawlLogEntry) -> Optional[Duplicate]:
    kind = duplicate_kind(entry)
    if kind is None:
        return None
    d = Duplicate(path, lineno, line, entry, kind)
    m = _ORIGIN.search(",".join(entry.annotations))
    if m:
        d.origin_file, d.origin_offset, d.origin_timestamp = m.group(1), int(m.group(2)), m.group(3)
    return d


def read_duplicates(paths: Sequence[str], stats: Optional[DuplicateStats] = None,
                    skip_errors: bool = False) -> Iterator[Duplicate]:
    """The duplicate lines of the crawl logs ``paths``, in order. A line that is not a crawl.log
    line raises ``CrawlLogError`` naming the file and line (or is counted in ``stats.bad`` with
    ``skip_errors``); a last line without its line feed (a torn write) is a line like any other."""
    st = stats if stats is not None else DuplicateStats()
    for path in paths:
        if os.path.isdir(path):
            raise ArchiveError(f"{path}: a directory, not a crawl.log (give the crawl.log files inside it)")
        with open(path, encoding="utf-8", errors="surrogateescape", newline="\n") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                st.lines += 1
                try:
                    entry = parse_line(line)
                except CrawlLogError as e:
                    if skip_errors:
                        st.bad += 1
                        continue
                    err = CrawlLogError(f"{path} line {lineno}: {e.problem} (--skip-errors skips such lines)",
                                        line)
                    err.lineno = lineno
                    raise err from None
                d = _duplicate(path, lineno, line, entry)
                if d is not None:
                    st.duplicates += 1
                    yield d


def lines_of(dups: Sequence[Duplicate]) -> List[str]:
    """The lines of ``dups`` as they were read, each with its line feed."""
    return [d.line if d.line.endswith("\n") else d.line + "\n" for d in dups]
