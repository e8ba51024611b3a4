"""`warchive extract`: print one record of a WARC/ARC file, as `warcio extract` prints it.

The command is ``extract(args)`` and its options ``extract_arguments(p)``
(warchive.cli.commands explains the registry); warchive.warc.extract makes the bytes.
"""

from __future__ import annotations

import sys
from argparse import ArgumentParser, Namespace
from contextlib import ExitStack

from ..store.urls import is_store_url, open_url
from ..warc.extract import Source, extract as extract_record
from .commands import UsageError


def extract_arguments(p: ArgumentParser) -> None:
    p.add_argument("input", metavar="FILE", help="a WARC/ARC file (plain, gzip, zstd); '-' reads standard input, "
                                                 "forward only")
    p.add_argument("offset", type=int, metavar="OFFSET",
                   help="byte offset of the record: of its gzip member, or of its first line in a plain file "
                        "(the offset `warchive index` gives)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--headers", action="store_true",
                       help="print only the WARC (or ARC) head and the HTTP head")
    which.add_argument("--payload", action="store_true",
                       help="print only the payload, de-chunked and decoded (gzip, deflate, br) as a browser "
                            "saw it; the whole block of a record without an HTTP head")


def extract(args: Namespace) -> int:
    """Print the record that starts at byte OFFSET of FILE exactly as `warcio extract` prints it: the
    WARC head, the HTTP head and the rest of the block as stored (--headers: the heads only;
    --payload: the payload as a browser saw it).

    The heads are printed as warcio writes them again (UTF-8, CRLF, WARC-Target-URI without <>); an
    ARC record with its ARC fields. Exit status 1 when no record starts at OFFSET or the record is
    damaged (the message names the file and byte offset)."""
    if args.offset < 0:
        raise UsageError("OFFSET must not be negative")
    part = "headers" if args.headers else "payload" if args.payload else "record"
    out = sys.stdout.buffer
    with ExitStack() as opened:
        if is_store_url(args.input):   # store://STORE/NAME: a stored file, read from its chunks
            source: Source = opened.enter_context(open_url(args.input))
        else:
            source = sys.stdin.buffer if args.input == "-" else args.input
        extract_record(source, args.offset, part, out.write,
                       on_defect=lambda d: print(f"warchive: warning: {d}", file=sys.stderr))
    out.flush()
    return 0
