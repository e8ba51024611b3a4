"""`warchive load`: one capture read back from the WARCs, revisits resolved.

The command is ``load(args)`` and its options ``load_arguments(p)`` (warchive.cli.commands
explains the registry). It is apart from `cdx` and `lookup` (cli/access.py), which read index
lines only, because the capture loader is replay's: those two need not import it.
"""

from __future__ import annotations

import sys
from argparse import ArgumentParser, Namespace
from typing import BinaryIO, Callable, Optional

from ..replay.load import CaptureLoader, capture_fields
from . import paths
from .access import check_sources
from .commands import UsageError


def load_arguments(p: ArgumentParser) -> None:
    p.add_argument("args", nargs="*", metavar="URL TIMESTAMP [SOURCE...]",
                   help="the URL, a timestamp (1 to 14 digits), then collections and index files "
                        "(default: the current directory)")
    p.add_argument("--cdx", metavar="LINE", help="an index line naming the capture (then every argument is a SOURCE)")
    p.add_argument("--archive", action="append", metavar="DIR",
                   help="directory of WARC files (repeatable; default: the collections' archive/)")
    p.add_argument("--decompress", action="store_true", help="undo the Content-Encoding too")
    p.add_argument("--raw", action="store_true", help="the payload as stored (still chunked)")
    p.add_argument("--headers-only", action="store_true", help="print the HTTP head only")
    p.add_argument("-o", "--output", help="write the body to this file (headers on standard output)")


def check_timestamp(ts: str) -> None:
    """TIMESTAMP is 1 to 14 ASCII digits (YYYYMMDDhhmmss or a prefix of it); anything else,
    which the closest-capture order would quietly read as some time, is a usage error."""
    if not (ts.isascii() and ts.isdigit() and 1 <= len(ts) <= 14):
        raise UsageError(f"TIMESTAMP must be 1 to 14 digits (YYYYMMDDhhmmss or a prefix of it), not {ts!r}")


def load(args: Namespace) -> int:
    """Print the capture of URL closest to TIMESTAMP (or the one an index line names): its HTTP
    head, then its payload de-chunked, revisits resolved to their original; the next-closest
    capture when one cannot be loaded, as pywb's replay falls back."""
    url = ts = ""
    if args.cdx:
        sources = args.args
    else:
        if len(args.args) < 2:
            raise UsageError("give URL TIMESTAMP [SOURCE...] or --cdx LINE [SOURCE...]")
        url, ts, sources = args.args[0], args.args[1], args.args[2:]
        check_timestamp(ts)
    sources = sources or ["."]
    check_sources(sources)
    for d in args.archive or ():
        paths.directory(d, "directory of WARC files")
    if args.output and not args.headers_only:
        paths.output_file(args.output)
    loader = CaptureLoader(sources, args.archive or None)
    body: Optional[BinaryIO] = None
    try:
        if args.cdx:
            cap = loader.load(capture_fields(args.cdx), dechunk=not args.raw, decompress=args.decompress)
        else:
            cap = loader.load_closest(url, ts, dechunk=not args.raw, decompress=args.decompress)
        with cap:
            if args.output and not args.headers_only:
                body = open(args.output, "wb")   # before the head is printed: an output refused prints nothing
            out = sys.stdout.buffer
            out.write(cap.headers.to_bytes() if cap.headers is not None else b"\r\n")
            if not args.headers_only:
                _copy(cap.payload, body.write if body is not None else out.write)
            out.flush()
    finally:
        if body is not None:
            body.close()
        loader.close()
    return 0


def _copy(stream: BinaryIO, write: Callable[[bytes], object]) -> None:
    while True:
        b = stream.read(1 << 20)
        if not b:
            return
        write(b)
