"""`warchive crawllog-revisits`: the revisit records of a crawl log's duplicate lines, as a collection.

The command is ``crawllog_revisits(args)`` and its options
``crawllog_revisits_arguments(p)`` (warchive.cli.commands explains the
registry). warchive.capture.crawllog_revisits finds the originals and writes
the records; this module lays out OUT (a collection: archive/ and indexes/),
indexes the WARCs, lists the unresolved lines and, with --add, adds the WARCs
to the collection of --index.
"""

from __future__ import annotations

import os
import sys
import time
from argparse import ArgumentParser, Namespace
from typing import Optional, Sequence

from ..capture.crawllog_revisits import ARCHIVED, UNRESOLVED, WRITTEN, CrawllogRevisits, Outcome
from ..capture.log_duplicates import DuplicateStats, lines_of, read_duplicates
from ..collection import Collection
from ..durable import AtomicOutput
from ..errors import ArchiveError
from ..index.build import index_paths
from ..index.cdx import IndexOptions
from ..index.sort import LineSorter
from ..warc.writer import DEFAULT_MAX_SIZE
from . import paths
from .commands import UsageError

UNRESOLVED_NAME = "unresolved.crawl.log"


def crawllog_revisits_arguments(p: ArgumentParser) -> None:
    p.add_argument("logs", nargs="+", metavar="CRAWL_LOG", help="Heritrix-format crawl.log files")
    p.add_argument("--index", action="append", required=True, metavar="COLL",
                   help="the collection (or index file) holding the originals; repeatable")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="the collection to write: OUT/archive/ the WARCs, OUT/indexes/ their CDXJ index")
    p.add_argument("--add", action="store_true",
                   help="also put the WARCs into the --index collection (one new segment), so that it "
                        "replays the revisits alone")
    p.add_argument("--max-size", type=int, default=DEFAULT_MAX_SIZE, metavar="BYTES",
                   help=f"start a new WARC file before one would pass this size (default {DEFAULT_MAX_SIZE:,})")
    p.add_argument("--warc-version", choices=("1.0", "1.1"), default="1.1",
                   help="the WARC version of the records (default 1.1, as warchive crawl writes)")
    p.add_argument("--prefix", default="REVISITS", help="WARC file name prefix (default REVISITS)")
    p.add_argument("--archive", action="append", metavar="DIR",
                   help="where the originals' WARC files are (repeatable; default: the collections' archive/)")
    p.add_argument("--skip-errors", action="store_true", help="count lines that are not crawl.log lines, go on")
    p.add_argument("--no-fsync", action="store_true", help="do not fsync the WARC files (tests)")


def crawllog_revisits(args: Namespace) -> int:
    """Write a warc/revisit record (identical-payload-digest, no HTTP head) for every duplicate
    line of Heritrix-format crawl logs (duplicate:digest and the other notes docs/cli.md lists),
    its original found in the --index collection by payload digest, at the same URL or any other.

    OUT becomes a collection of the revisits: OUT/archive/ the WARCs (rolled over at --max-size),
    OUT/indexes/ their CDXJ index. `warchive load URL TIMESTAMP COLL OUT` (or, after --add, COLL
    alone) resolves each. A revisit already in the index is not written again. Lines without an
    original are printed on stderr with the reason and kept as they were in
    OUT/unresolved.crawl.log; exit status 1 when there was one."""
    if args.add and (len(args.index) != 1 or not os.path.isdir(args.index[0])):
        raise UsageError("--add needs one --index, a collection directory")
    if os.path.exists(args.output) and not os.path.isdir(args.output):
        raise ArchiveError(f"{args.output}: exists and is not a directory (-o names the collection to write)")
    for d in args.archive or ():
        paths.directory(d, "directory of WARC files")
    for log in args.logs:
        if not os.path.exists(log):
            raise FileNotFoundError(2, "no such crawl.log", log)
        if not os.path.isfile(log):
            raise ArchiveError(f"{log}: not a file (give the crawl.log files)")
        if os.path.getsize(log) == 0:
            raise ArchiveError(f"{log}: empty, not a crawl.log")
    stats = DuplicateStats()
    tally = _Tally(args.output)
    try:
        with CrawllogRevisits(args.index, args.archive) as job:
            archive = os.path.join(args.output, "archive")
            warcs = job.write(job.outcomes(read_duplicates(args.logs, stats, skip_errors=args.skip_errors)),
                              archive, prefix=args.prefix, version=args.warc_version, max_size=args.max_size,
                              fsync=not args.no_fsync, logs=args.logs, on_outcome=tally.add)
    except BaseException:
        tally.abort()
        raise
    tally.finish()
    index = _index(warcs, args.output, archive) if warcs else None
    if args.add and warcs:
        seg = Collection(args.index[0]).add(warcs)
        print(f"added to {args.index[0]}: {seg}", file=sys.stderr)
    _summary(tally, stats, warcs, index, args.output)
    return 1 if tally.counts[UNRESOLVED] else 0

def _index(warcs: Sequence[str], out: str, archive: str) -> str:
    """The CDXJ index of the WARCs written, as OUT/indexes/revisits-<time>-<random>.cdxj (the
    lines cdxj-indexer writes, sorted)."""
    indexes = os.path.join(out, "indexes")
    os.makedirs(indexes, exist_ok=True)
    path = os.path.join(indexes, f"revisits-{time.strftime('%Y%m%d%H%M%S', time.gmtime())}-"
                                 f"{os.urandom(3).hex()}.cdxj")
    sorter = LineSorter()
    index_paths(list(warcs), sorter.add, IndexOptions(dir_root=archive))
    with AtomicOutput(path) as f:
        sorter.finish(f.write)
    return path


class _Tally:
    """Counts the outcomes; prints each unresolved line's reason and keeps the line as it was in
    OUT/unresolved.crawl.log (published whole at the end, removed when a run leaves none)."""

    def __init__(self, out: str) -> None:
        self.out = out
        self.path = os.path.join(out, UNRESOLVED_NAME)
        self.counts = {WRITTEN: 0, ARCHIVED: 0, UNRESOLVED: 0}
        self.other_url = 0
        self._file: Optional[AtomicOutput] = None

    def add(self, o: Outcome) -> None:
        self.counts[o.status] += 1
        if o.status == WRITTEN and o.original is not None and o.original.how != "same URL":
            self.other_url += 1
        if o.status != UNRESOLVED:
            return
        print(f"{o.dup.where}: {o.dup.entry.uri}: not written: {o.reason}", file=sys.stderr)
        if self._file is None:
            os.makedirs(self.out, exist_ok=True)
            self._file = AtomicOutput(self.path)
        self._file.write(lines_of([o.dup])[0].encode("utf-8", "surrogateescape"))

    def finish(self) -> None:
        if self._file is not None:
            self._file.commit()
        elif os.path.exists(self.path):
            os.unlink(self.path)      # it described an earlier run

    def abort(self) -> None:
        if self._file is not None:
            self._file.abort()


def _summary(tally: _Tally, stats: DuplicateStats, warcs: Sequence[str], index: object, out: str) -> None:
    n = tally.counts
    bad = f", {stats.bad} bad lines skipped" if stats.bad else ""
    where = f" in {len(warcs)} WARC file(s), indexed in {index}" if warcs else ""
    listed = f" (listed in {tally.path})" if n[UNRESOLVED] else ""
    print(f"{stats.lines} lines, {stats.duplicates} duplicates{bad}: {n[WRITTEN]} revisits written "
          f"({tally.other_url} of an original at another URL){where}; {n[ARCHIVED]} already in the index; "
          f"{n[UNRESOLVED]} unresolved{listed}", file=sys.stderr)
