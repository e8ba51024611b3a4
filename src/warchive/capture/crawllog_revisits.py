"""Revisit records from crawl logs: each duplicate a crawl.log names becomes the warc/revisit it never got.

An archive that deduplicated before its crawler wrote revisit records (or
whose crawler wrote nothing for a duplicate: Heritrix's ``duplicate:digest``
without a record, warchive's ``--dedup skip``) keeps those captures only as
crawl.log lines. ``CrawllogRevisits(index_paths)``, with
``job.write(job.outcomes(read_duplicates(logs)), out_dir)``, finds each
duplicate's original in the collection's index by payload digest and writes
one identical-payload-digest revisit per duplicate, streaming: only the
lines whose original is at another URL wait, for one pass over the index (docs/cli.md,
"crawllog-revisits", is the user's account):

1. the line is a duplicate (warchive.capture.log_duplicates says which);
2. a revisit of that URL at that second with that digest already in the index:
   nothing to write ("archived"), so a second run writes nothing twice;
3. the original: a capture of the same URL with the same digest that is not a
   revisit, the latest at or before the duplicate (else the earliest after);
   then, for the rest, one pass over every index line finds captures with
   their digests at any URL (URL-agnostic, as Heritrix's and our dedup are),
   DeDuplicator's named origin file first where the line names one;
4. the original's record head, where its WARC file is in a collection's
   archive/, gives WARC-Refers-To-Date exactly and WARC-Refers-To (its
   record id); else the date is the index's 14-digit timestamp;
5. the revisit: WARC-Target-URI the line's URI, WARC-Date its fetch time,
   WARC-Payload-Digest its digest, WARC-Refers-To-Target-URI / -Date of the
   original, and no block (Content-Length 0: a crawl.log keeps no HTTP
   head; replay takes the original's, as pywb does for such revisits).

A line whose original is not found is ``unresolved`` with the reason, never
dropped. The WARCs go through warchive.warc.writer's directory form
(rolled over at ``max_size``); this module does not index them (the CLI does).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Set

from ..errors import ArchiveError
from ..index.query import Capture, Index, QueryError, parse_line
from ..index.sources import check_source_dir, index_dir_of, source_kind
from ..timestamps import timestamp_to_iso_date
from ..warc import open as open_warc
from ..warc.digest import Digest
from ..warc.writer import DEFAULT_MAX_SIZE, WarcWriter
from .log_duplicates import IDENTICAL, Duplicate

__all__ = ["ARCHIVED", "CrawllogRevisits", "OriginalRef", "Outcome", "UNRESOLVED", "WRITTEN"]

WRITTEN, ARCHIVED, UNRESOLVED = "written", "archived", "unresolved"
REVISIT_MIME = "warc/revisit"
MAX_CAPTURES = 10000         # captures of one URL read to find an original
_DIGEST_FIELD = re.compile(rb'"digest": ?"([^"]*)"')


@dataclass
class OriginalRef:
    """The capture a revisit refers to."""
    url: str
    timestamp: str               # 14 digits, from the index
    filename: str
    offset: Optional[int]
    how: str                     # "same URL" or "other URL"
    date: str = ""               # WARC-Refers-To-Date: its record's WARC-Date, or from timestamp
    record_id: Optional[str] = None


@dataclass
class Outcome:
    """What became of one duplicate line."""
    dup: Duplicate
    status: str                  # WRITTEN, ARCHIVED or UNRESOLVED
    reason: str = ""
    original: Optional[OriginalRef] = None
    written: Optional[Any] = None   # the revisit's warchive.warc.writer.Written


@dataclass
class _Cand:
    url: str
    timestamp: str
    filename: str
    offset: Optional[int]


def _candidate(c: Mapping[str, Any]) -> Optional[_Cand]:
    """An index capture that can be an original (not a revisit, in a file, 2xx or no status)."""
    fname = str(c.get("filename") or "-")
    status = str(c.get("status") or "-")
    if c.get("mime") == REVISIT_MIME or fname == "-" or not (status == "-" or status.startswith("2")):
        return None
    off = c.get("offset")
    return _Cand(str(c.get("url") or ""), str(c.get("timestamp") or ""), fname,
                 int(off) if off not in (None, "-", "") else None)


def _pick(cands: Sequence[_Cand], ts: str, origin_file: Optional[str] = None,
          origin_offset: Optional[int] = None) -> List[_Cand]:
    """``cands`` in the order to try them: DeDuplicator's origin (file and offset, then file),
    then the latest at or before ``ts``, then the earliest after it."""
    if len(cands) <= 1:
        return list(cands)
    before = sorted((c for c in cands if c.timestamp <= ts), key=lambda c: c.timestamp, reverse=True)
    after = sorted((c for c in cands if c.timestamp > ts), key=lambda c: c.timestamp)
    by_time = before + after
    if origin_file is None:
        return by_time

    def named(c: _Cand) -> int:
        if os.path.basename(c.filename) != origin_file:
            return 2
        return 0 if origin_offset is not None and c.offset == origin_offset else 1
    return sorted(by_time, key=named)     # stable: time order within each


def _check_index_path(path: str) -> None:
    """A collection directory, or an index file whose first line is an index line (an empty file
    or one of another kind would only make every duplicate unresolved)."""
    if not os.path.exists(path):
        raise FileNotFoundError(2, "no such collection or index file", path)
    if os.path.isdir(path):
        check_source_dir(path)
        return      # a collection (its index files are checked as they open)
    if source_kind(path) != "plain":
        return      # a segment, a ZipNum summary: checked as they open
    with open(path, "rb") as f:
        first = f.readline(1 << 20)
    if not first.strip():
        raise ArchiveError(f"{path}: empty, not an index (give the collection or its index files)")
    try:
        parse_line(first)
    except QueryError as e:
        raise ArchiveError(f"{path}: not a CDX(J) index (line 1: {e})") from None


class CrawllogRevisits:
    """Finds the originals of duplicate lines in the index of ``index_paths`` (collections or
    index files) and writes their revisits. ``archive_dirs``: where WARC files are looked for to
    read an original's head (default: each collection's archive/)."""

    def __init__(self, index_paths: Sequence[str], archive_dirs: Optional[Sequence[str]] = None) -> None:
        for p in index_paths:
            _check_index_path(p)
        self.index = Index(*index_paths)
        if archive_dirs is None:
            archive_dirs = [os.path.join(os.path.dirname(index_dir_of(p)), "archive")
                            for p in index_paths if os.path.isdir(p)]
        self.archive_dirs = [d for d in archive_dirs if os.path.isdir(d)]
        self.scanned_lines = 0

    def close(self) -> None:
        self.index.close()

    def __enter__(self) -> "CrawllogRevisits":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- finding originals
    def outcomes(self, dups: Iterable[Duplicate]) -> Iterator[Outcome]:
        """An Outcome per duplicate: ARCHIVED, UNRESOLVED (with the reason), or WRITTEN with its
        ``original`` (to be written). Those the line's own URL decides come at once, in order;
        the others after one pass over the index (so only they are held in memory)."""
        pending: List[Outcome] = []
        for d in dups:
            o = self._same_url(d)
            if o.status == UNRESOLVED and o.reason == "":
                pending.append(o)
            else:
                yield o
        if not pending:
            return
        by_digest = self._scan({o.dup.digest for o in pending if o.dup.digest is not None})
        for o in pending:
            d = o.dup
            found = by_digest.get(d.digest) if d.digest is not None else None
            ref = self._first_ref(_pick(found or [], d.timestamp, d.origin_file, d.origin_offset), d, "other URL")
            if ref is not None:
                o.original, o.status = ref, WRITTEN
            else:
                o.reason = (f"no capture with payload digest {d.digest} in the index (same URL or any "
                            f"other, {self.scanned_lines} index lines read)")
            yield o

    def resolve(self, dups: Iterable[Duplicate]) -> List[Outcome]:
        """``outcomes(dups)`` as a list."""
        return list(self.outcomes(dups))

    def _same_url(self, d: Duplicate) -> Outcome:
        """The outcome decided by the captures of the line's own URL; UNRESOLVED with no reason
        when only a look at other URLs can tell."""
        if d.kind != IDENTICAL:
            return Outcome(d, UNRESOLVED, "server-not-modified (a 304): it has no payload of its own, so no "
                                          "identical-payload revisit stands for it")
        dg = d.digest
        if dg is None:
            return Outcome(d, UNRESOLVED, f"no payload digest in field 10 ({d.entry.digest or '-'})")
        try:
            caps = self.index.query(d.entry.uri, matchType="exact", allowFuzzy="false", limit=str(MAX_CAPTURES))
        except QueryError as e:
            return Outcome(d, UNRESOLVED, f"the index cannot look the URI up: {e}")
        same = [c for c in caps if Digest.find(c.get("digest")) == dg]
        if any(c.get("mime") == REVISIT_MIME and c.timestamp == d.timestamp for c in same):
            return Outcome(d, ARCHIVED, "a revisit of this URL at this time with this digest is in the index")
        cands = [x for x in (_candidate(c) for c in same) if x is not None]
        ref = self._first_ref(_pick(cands, d.timestamp, d.origin_file, d.origin_offset), d, "same URL")
        if ref is None:
            return Outcome(d, UNRESOLVED)
        return Outcome(d, WRITTEN, original=ref)

    def _scan(self, wanted: Set[Digest]) -> Dict[Digest, List[_Cand]]:
        """One pass over every line of the index: the captures whose digest is wanted. The digest
        is found in the line before the line is parsed (most lines are not wanted)."""
        out: Dict[Digest, List[_Cand]] = {}
        spellings = {s for d in wanted for s in (d.base32, d.base32.rstrip("="), d.label, d.hex)}
        for s in self.index.engine.sources:
            for line in s.source.range(b"", None):
                self.scanned_lines += 1
                m = _DIGEST_FIELD.search(line)
                if m is None:
                    continue
                text = m.group(1).decode("ascii", "replace")
                if text not in spellings and text.split(":")[-1] not in spellings:
                    continue
                dg = Digest.find(text)
                if dg not in wanted:
                    continue
                try:
                    cand = _candidate(Capture(bytes(line)))
                except QueryError:
                    continue
                if cand is not None:
                    out.setdefault(dg, []).append(cand)
        return out

    def _first_ref(self, cands: Sequence[_Cand], d: Duplicate, how: str) -> Optional[OriginalRef]:
        for c in cands:
            ref = self._ref(c, d, how)
            if ref is not None:
                return ref
        return None

    def _ref(self, c: _Cand, d: Duplicate, how: str) -> Optional[OriginalRef]:
        """The reference to candidate ``c``: its record's WARC-Date and id when its file is in an
        archive directory (None when that record turns out not to be an original of ``d``)."""
        ref = OriginalRef(c.url, c.timestamp, c.filename, c.offset, how, timestamp_to_iso_date(c.timestamp))
        path = self._archive_path(c.filename)
        if path is None or c.offset is None:
            return ref
        try:
            with open_warc(path, offset=c.offset, parse_http=False) as records:
                rec = next(iter(records), None)
                if rec is None:
                    return None
                h = rec.headers
                if rec.type == "revisit" or Digest.find(h.get("WARC-Payload-Digest")) != d.digest:
                    return None
                ref.date = h.get("WARC-Date") or ref.date
                ref.record_id = h.get("WARC-Record-ID")
                ref.url = rec.target_uri or ref.url
        except (ArchiveError, OSError):
            return None
        return ref

    def _archive_path(self, filename: str) -> Optional[str]:
        if os.path.isabs(filename) or ".." in filename.replace("\\", "/").split("/"):
            return None
        for d in self.archive_dirs:
            p = os.path.join(d, filename)
            if os.path.isfile(p):
                return p
        return None

    # -- writing
    def write(self, outcomes: Iterable[Outcome], directory: str, *, prefix: str = "REVISITS",
              version: str = "1.1", max_size: int = DEFAULT_MAX_SIZE, fsync: bool = True,
              logs: Sequence[str] = (), on_outcome: Optional[Callable[[Outcome], Any]] = None) -> List[str]:
        """Write the revisit of every WRITTEN outcome into WARC files in ``directory`` (opened at
        the first), calling ``on_outcome`` with each outcome once done with it; the paths of the
        files written (none when there was nothing to write). When it raises (a bad crawl.log
        line, a full disk), the files it wrote are removed."""
        info = {"description": "identical-payload-digest revisits made from crawl.log duplicate lines "
                               "(warchive crawllog-revisits)",
                "crawl-log": [os.path.basename(p) for p in logs]}
        w: Optional[WarcWriter] = None
        try:
            for o in outcomes:
                ref, d = o.original, o.dup
                if o.status == WRITTEN and ref is not None and d.digest is not None:
                    if w is None:
                        w = WarcWriter(directory, prefix, version=version, max_size=max_size, warcinfo=info,
                                       fsync=fsync)
                    o.written = w.write_revisit(
                        d.entry.uri, None, payload_digest=d.digest.label, refers_to=ref.record_id,
                        refers_to_uri=ref.url, refers_to_date=ref.date, profile="identical-payload-digest",
                        date=_utc(d.when))
                if on_outcome is not None:
                    on_outcome(o)
        except BaseException:
            # a failed run leaves no WARC: unindexed, its revisits would be written again by the next run
            for path in (w.close() if w is not None else []):
                os.unlink(path)
            raise
        return w.close() if w is not None else []

def _utc(t: datetime) -> datetime:
    return t.astimezone(timezone.utc)

