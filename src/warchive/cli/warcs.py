"""`warchive check`, `recompress`, `recover`: keeping WARC files sound.

Each command is a function ``NAME(args)`` and its options ``NAME_arguments(p)``
(warchive.cli.commands explains the registry).
"""

from __future__ import annotations

import sys
from argparse import ArgumentParser, Namespace

from ..store.urls import is_store_url, open_url
from ..warc.check import check_file, defect_summary
from ..warc.recover import recover as recover_file
from ..warc.recompress import recompress as recompress_file
from . import paths
from .commands import UsageError


def check_arguments(p: ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="WARC", help="WARC/ARC files (plain, gzip, zstd); '-' reads standard "
                                                          "input")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="print every warning and producer defect, and a line per file")
    p.add_argument("--strict", action="store_true",
                   help="known producer defects (Wget's revisit block digests, payload digests over "
                        "chunked bodies) are problems too")


def check(args: Namespace) -> int:
    """Inflate every member, check CRCs, the structure of every record, WARC-Block-Digest over the
    block and WARC-Payload-Digest over the de-chunked payload wherever they are present; exit
    status 1 when a file has a problem (with --strict, a known producer defect too), is empty
    or is missing."""
    paths.archives(args.inputs, walks=False)
    status = 0
    for path in args.inputs:
        if is_store_url(path):   # store://STORE/NAME: a stored file, read from its chunks
            with open_url(path) as stored:
                res = check_file(path, strict=args.strict, source=stored)
        else:
            res = check_file(path, strict=args.strict, source=sys.stdin.buffer if path == "-" else None)
        for f in res.problems:
            print(f"warchive: check: {f}", file=sys.stderr)
        if args.verbose:
            for f in sorted(res.defects + res.warnings, key=lambda f: f.offset or 0):
                print(f"warchive: warning: {f}", file=sys.stderr)
            print(f"{path}: {res.records} records, {len(res.problems)} problems, "
                  f"{len(res.defects)} producer defects, {len(res.warnings)} warnings")
        else:
            for line in defect_summary(res):
                print(f"warchive: warning: {line}", file=sys.stderr)
        if res.problems:
            status = 1
    return status


def recompress_arguments(p: ArgumentParser) -> None:
    p.add_argument("input", metavar="IN", help="a WARC or ARC file (any compression, members of several records "
                                               "too); ARC records are written as WARC records, as warcio does")
    p.add_argument("output", metavar="OUT", help="the file to write (published when complete)")
    p.add_argument("--zstd", action="store_true", help="write .warc.zst frames instead of gzip members")
    p.add_argument("--level", type=int, metavar="N", help="compression level (ISA-L 0-3, default 2; zstd 1-22, default 3)")


def recompress(args: Namespace) -> int:
    """Rewrite a WARC (or an ARC, as WARC) with one gzip member (or zstd frame) per record, as warcio
    recompress does, so that every record has an offset of its own. Defects warcio reads past are
    read past too, with one warning each on stderr; the records are written whole and sound."""
    paths.archives([args.input], walks=False)
    paths.output_file(args.output)
    n = recompress_file(args.input, args.output, "zstd" if args.zstd else "gzip", args.level,
                        on_defect=lambda d: print(f"warchive: warning: {d}", file=sys.stderr))
    print(f"{n} records recompressed into {args.output}")
    return 0


def recover_arguments(p: ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="FILE.open", help="files a killed writer left open")
    p.add_argument("-n", "--dry-run", action="store_true", help="only say what would be cut")
    p.add_argument("-o", "--output", help="name of the recovered file (one input; default: the name without .open)")


def recover(args: Namespace) -> int:
    """Cut a killed writer's .open file after its last whole record and rename it without .open."""
    if args.output and len(args.inputs) != 1:
        raise UsageError("--output names the result of one input file")
    if args.output:
        paths.output_file(args.output)
    for path in args.inputs:
        r = recover_file(path, output=args.output, dry_run=args.dry_run)
        verb = "would keep" if args.dry_run else "kept"
        print(f"{r.path}: {verb} {r.records} records ({r.size} bytes), cut {r.cut} bytes")
    return 0
