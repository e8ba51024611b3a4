"""`warchive init`, `add`, `compact`: making and changing a collection's archive and index.

Each command is a function ``NAME(args)`` and its options ``NAME_arguments(p)``
(warchive.cli.commands explains the registry).
"""

from __future__ import annotations

import sys
from argparse import ArgumentParser, Namespace

from ..collection import Collection
from ..errors import FileError, WriteError
from ..wacz.ingest import add_wacz
from . import paths


def init_arguments(p: ArgumentParser) -> None:
    p.add_argument("coll", metavar="COLL", help="the collection directory to make (e.g. collections/web)")


def init(args: Namespace) -> int:
    """Make a new, empty collection in pywb's layout: COLL/archive/ for WARC files and
    COLL/indexes/ for their index. An existing COLL is an error.

    Prints the collection's path."""
    c = Collection.init(args.coll)
    print(c.path, file=sys.stderr)
    return 0


def add_arguments(p: ArgumentParser) -> None:
    p.add_argument("coll", metavar="COLL", help="the collection (warchive init makes a new one)")
    p.add_argument("warcs", nargs="+", metavar="WARC", help="WARC/ARC files to put into COLL/archive/, or WACZ files "
                   "(NAME.wacz) to import: hashes checked, WARCs into archive/, their index as a segment, pages kept")
    p.add_argument("--link", action="store_true", help="hard-link the files instead of copying them")
    p.add_argument("-j", "--jobs", type=int, default=1, help="index with N worker threads (default 1)")


def add(args: Namespace) -> int:
    """Put WARC files into a collection (copied into COLL/archive/, or hard-linked) and index them
    as one new segment of COLL/indexes/; the index already there is not rewritten. COLL must
    exist (`warchive init` makes it, as pywb's wb-manager init); a file that is missing, empty
    or damaged is an error, and then nothing is copied.

    Prints the new segment's path (or "nothing to index")."""
    paths.collection(args.coll)
    paths.archives(args.warcs, walks=False)
    waczs = [w for w in args.warcs if w.endswith(".wacz")]
    warcs = [w for w in args.warcs if not w.endswith(".wacz")]
    for w in waczs:
        got = add_wacz(args.coll, w, jobs=max(1, args.jobs))
        how = f"re-indexed: {got.reason}" if got.reindexed else f"{got.lines} index lines kept"
        print(f"{w}: {len(got.warcs)} WARC files, {how}; {got.segment or 'nothing to index'}"
              + (f"; pages in {got.pages}" if got.pages else ""), file=sys.stderr)
        if got.rekeyed:
            print(f"{w}: {got.rekeyed} of {got.lines} index keys recomputed from their url (they were not "
                  "warchive's SURT keys, e.g. percent-encoded query characters)", file=sys.stderr)
    if warcs:
        try:
            seg = Collection(args.coll).add(warcs, link=args.link, jobs=max(1, args.jobs))
        except WriteError:       # a full disk: its remedy says so
            raise
        except FileError as e:   # the reader's remedy names index's options
            raise e.restated("nothing was added; warchive check says what is wrong with the file") from None
        print(seg or "nothing to index", file=sys.stderr)
    return 0


def compact_arguments(p: ArgumentParser) -> None:
    p.add_argument("coll", metavar="COLL", help="collection directory")


def compact(args: Namespace) -> int:
    """Merge a collection's index segments into one (readers of the old ones keep reading them).

    Prints the merged segment's path (or "no segments")."""
    paths.collection(args.coll)
    seg = Collection(args.coll).compact()
    print(seg or "no segments", file=sys.stderr)
    return 0
