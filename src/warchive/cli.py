"""The `warchive` command.

    warchive index WARC_OR_DIR... [-o OUT] [--cdx11] [--records TYPES] [--dir-root DIR]
                   [-p] [--sort] [-j N] [--verify] [--skip-errors]
    warchive --version

Errors in archives are reported as one line naming the file and the byte
offset (exit status 1); nothing half-written is left behind.
"""

from __future__ import annotations

import argparse
import sys
from typing import List, Optional

from . import __version__
from .errors import ArchiveError


def _version() -> str:
    from ._ext.gzip_members import inflate_libraries

    return f"warchive {__version__} (inflate: {inflate_libraries()})"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="warchive", description="Web archive engine: index and read WARC/ARC files.")
    p.add_argument("--version", action="version", version=_version())
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    ix = sub.add_parser("index", help="write a CDXJ (or CDX-11) index of WARC/ARC files",
                        description="Index WARC/ARC files (directories are walked) as cdxj-indexer does.")
    ix.add_argument("inputs", nargs="+", metavar="WARC_OR_DIR")
    ix.add_argument("-o", "--output", help="output file (default: standard output)")
    ix.add_argument("-11", "--cdx11", action="store_true", help="11-field CDX (N b a m s k r M S V g)")
    ix.add_argument("--records", help="record types to index, comma-separated, or 'all' "
                                      "(default: response,revisit,resource,metadata)")
    ix.add_argument("--dir-root", help="filenames relative to this directory (default: base names)")
    ix.add_argument("-p", "--post-append", action="store_true",
                    help="append POST/PUT request bodies to keys (__wb_method=post&...), as pywb looks them up")
    ix.add_argument("-s", "--sort", action="store_true", help="sort the output bytewise, dropping repeated lines")
    ix.add_argument("-j", "--jobs", type=int, default=1, help="index in N processes (default 1)")
    ix.add_argument("--verify", action="store_true",
                    help="inflate every gzip member and check its CRC, even where Wget's sl lengths allow skipping")
    ix.add_argument("--skip-errors", action="store_true",
                    help="report a damaged record on stderr and go on with the next one")
    return p


def cmd_index(args: argparse.Namespace) -> int:
    from .index.build import AtomicOutput, index_paths
    from .index.cdx import IndexOptions

    records = None
    if args.records:
        records = "all" if args.records == "all" else args.records.split(",")
    opts = IndexOptions(cdx11=args.cdx11, records=records, post_append=args.post_append, verify=args.verify,
                        skip_errors=args.skip_errors, dir_root=args.dir_root)
    out = AtomicOutput(args.output) if args.output else None
    write = out.write if out else sys.stdout.buffer.write
    try:
        total = index_paths(args.inputs, write, opts, jobs=max(1, args.jobs), sort=args.sort)
    except BaseException:
        if out:
            out.abort()
        raise
    if out:
        out.commit()
    else:
        sys.stdout.buffer.flush()
    if total.errors:
        print(f"warchive: {total.errors} damaged record(s) skipped, {total.records} read", file=sys.stderr)
        if total.records == 0:
            return 1  # not one record could be read
    return 0


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    if args.command is None:
        _parser().print_help()
        return 2
    try:
        if args.command == "index":
            return cmd_index(args)
    except ArchiveError as e:
        print(f"warchive: error: {e}", file=sys.stderr)
        return 1
    except FileNotFoundError as e:
        print(f"warchive: error: {e.filename}: no such file or directory", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    return 2


if __name__ == "__main__":
    sys.exit(main())
