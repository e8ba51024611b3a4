"""`warchive wacz create` and `warchive wacz validate`: WACZ files out of collections, and checks of them.

The command is ``wacz(args)`` and its options ``wacz_arguments(p)``
(warchive.cli.commands explains the registry). Importing a WACZ is `warchive
add COLL FILE.wacz` (warchive.cli.collection).
"""

from __future__ import annotations

import os
import sys
from argparse import ArgumentParser, Namespace
from typing import Callable, Optional

from ..collection import Collection
from ..wacz.create import create_wacz, warc_files
from ..wacz.validate import validate
from . import paths


class Bar:
    """A one-line progress display on stderr (a terminal only), refreshed every 1% of ``total`` bytes."""

    def __init__(self, total: int, what: str) -> None:
        self.total, self.done, self.shown, self.what = max(total, 1), 0, -1, what

    def __call__(self, n: int) -> None:
        self.done += n
        pct = self.done * 100 // self.total
        if pct != self.shown:
            self.shown = pct
            sys.stderr.write(f"\r{self.what}: {pct:3d}% of {self.total / 1e6:.1f} MB")
            sys.stderr.flush()

    def end(self) -> None:
        if self.shown >= 0:
            sys.stderr.write("\n")


def progress_bar(total: int, what: str, big: int = 64 << 20) -> Optional[Bar]:
    """A Bar when stderr is a terminal and the work is big enough to wait for."""
    return Bar(total, what) if sys.stderr.isatty() and total >= big else None


def wacz_arguments(p: ArgumentParser) -> None:
    actions = p.add_subparsers(dest="wacz_command", metavar="ACTION", required=True,
                               help="create (a WACZ from a collection) or validate (a WACZ file)")
    a = actions.add_parser("create", help="package a collection as a WACZ 1.1.1 file (ReplayWeb.page, pywb, py-wacz)")
    a.add_argument("coll", metavar="COLL", help="the collection directory (archive/ and indexes/)")
    a.add_argument("-o", "--output", required=True, metavar="FILE.wacz", help="the WACZ to write (published when complete)")
    a.add_argument("--pages", default="auto", metavar="auto|FILE",
                   help="pages/pages.jsonl: 'auto' (default) lists the HTML captures answered 200; or a pages.jsonl to copy")
    a.add_argument("--title", help="the package's title (datapackage.json)")
    a.add_argument("--description", help="the package's description (datapackage.json)")
    a.add_argument("--signing-url", metavar="URL", help="an authsign server that signs datapackage-digest.json")
    a = actions.add_parser("validate", help="check a WACZ: structure, hashes, and a record at every index line")
    a.add_argument("file", metavar="FILE.wacz")
    a.add_argument("--no-records", action="store_true", help="do not open the record of every index line")


def wacz(args: Namespace) -> int:
    """WACZ files: create one from a collection (WARCs stored, index, pages, datapackage), validate one.
    `warchive add COLL FILE.wacz` imports one; `warchive serve` serves ROOT/NAME.wacz as collection NAME."""
    if args.wacz_command == "create":
        paths.collection(args.coll)
        paths.output_file(args.output)
        coll = Collection(args.coll)
        total = sum(os.path.getsize(os.path.join(coll.archive_dir, w)) for w in warc_files(coll))
        bar = progress_bar(total, "wacz create")
        progress: Optional[Callable[[int], None]] = bar
        made = create_wacz(args.coll, args.output, pages=None if args.pages == "auto" else args.pages,
                           title=args.title, description=args.description, signing_url=args.signing_url,
                           progress=progress)
        if bar is not None:
            bar.end()
        print(f"{made.path}: {made.warcs} WARC files, {made.lines} index lines "
              f"({'compressed' if made.compressed else 'plain'}), {made.pages} pages, {made.bytes} bytes",
              file=sys.stderr)
        return 0
    rep = validate(args.file, records=not args.no_records)
    if not rep.ok:
        print(f"{args.file}: invalid: {rep.problem}", file=sys.stderr)
        return 1
    print(f"{args.file}: valid WACZ: {rep.warcs} WARC files, {rep.lines} index lines, {rep.pages} pages "
          f"({'; '.join(rep.checked)})", file=sys.stderr)
    return 0


__all__ = ["wacz", "wacz_arguments"]
