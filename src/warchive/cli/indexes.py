"""`warchive sort`, `merge`, `build`, `zipnum`, `record-index`: working with index files.

Each command is a function ``NAME(args)`` and its options ``NAME_arguments(p)``
(warchive.cli.commands explains the registry).
"""

from __future__ import annotations

import os
from argparse import ArgumentParser, ArgumentTypeError, Namespace
from typing import Sequence

from ..errors import ArchiveError, FileError
from ..index.rix import write_record_index
from ..index.segment import build_segment
from ..index.sort import merge_files, sort_files
from ..index.sources import check_index_file
from ..index.zipnum import write_zipnum
from . import paths


def _positive(text: str) -> int:
    """An option's value that must be a whole number above 0."""
    n = int(text)
    if n < 1:
        raise ArgumentTypeError(f"must be 1 or more, not {n}")
    return n


def _index_inputs(inputs: Sequence[str]) -> None:
    """CDX(J) files given to read: each exists, is a file (an empty one is an empty index) and
    begins with an index line."""
    for p in inputs:
        if p != "-" and os.path.isdir(p):
            raise ArchiveError(f"{p}: a directory, not a CDX or CDXJ file")
        check_index_file(p)


def sort_arguments(p: ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="IN", help="CDX/CDXJ files (plain, gzip or zstd; '-' for stdin)")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="output file ('-' for standard output)")
    p.add_argument("--mem", type=int, default=256, metavar="MB", help="memory for the sort buffers (default 256)")
    p.add_argument("--tmpdir", metavar="DIR", help="where runs go (default: $TMPDIR)")


def sort(args: Namespace) -> int:
    """Sort CDX/CDXJ lines bytewise (as LC_ALL=C sort -u) with bounded memory, identical lines once."""
    _index_inputs(args.inputs)
    paths.output_file(args.output)
    if args.tmpdir is not None:
        paths.directory(args.tmpdir, "directory for the sort's runs")
    sort_files(args.inputs, args.output, mem_limit=args.mem << 20, tmpdir=args.tmpdir)
    return 0


def merge_arguments(p: ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="IN", help="sorted CDX/CDXJ files")
    p.add_argument("-o", "--output", required=True, help="output file ('-' for standard output)")


def merge(args: Namespace) -> int:
    """Merge sorted CDX/CDXJ files, identical lines once; an input line out of order is an error
    naming the file and line."""
    _index_inputs(args.inputs)
    paths.output_file(args.output)
    merge_files(args.inputs, args.output)
    return 0


def build_arguments(p: ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="IN", help="sorted CDX/CDXJ files ('-' for stdin); several are merged")
    p.add_argument("-o", "--output", required=True, metavar="OUT.seg", help="the index segment to write")


def build(args: Namespace) -> int:
    """Write sorted CDX/CDXJ lines as an index segment (docs/format.md, "Index segments")."""
    _index_inputs(args.inputs)
    paths.output_file(args.output)
    build_segment(args.inputs, args.output)
    return 0


def zipnum_arguments(p: ArgumentParser) -> None:
    p.add_argument("input", metavar="IN", help="a sorted CDX/CDXJ file ('-' for standard input)")
    p.add_argument("-o", "--output", required=True, help="directory, or prefix P (P.idx, P.loc, shards)")
    p.add_argument("--lines", type=_positive, default=3000, metavar="N", help="lines per block (default 3000)")
    p.add_argument("--parts", type=_positive, default=1, metavar="N", help="number of shard files (default 1)")


def zipnum(args: Namespace) -> int:
    """Write a ZipNum cluster (.idx summary, .loc, gzip shards) as pywb and Common Crawl read it."""
    _index_inputs([args.input])
    if not args.output.endswith(os.sep) and not os.path.isdir(args.output):
        paths.output_file(args.output)    # a prefix: its directory must exist
    write_zipnum(args.input, args.output, lines_per_block=args.lines, parts=args.parts)
    return 0


def record_index_arguments(p: ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="WARC_OR_DIR", help="WARC files; directories are walked")
    p.add_argument("-o", "--output", required=True, metavar="FILE.rix", help="the record index to write")
    p.add_argument("--dir-root", metavar="DIR", help="filenames relative to this directory, as `warchive index --dir-root`")


def record_index(args: Namespace) -> int:
    """Index WARC record ids, payload digests and segment continuations (docs/format.md, "Record
    indexes"): what resolves revisits by WARC-Refers-To and URL-agnostic digests."""
    paths.archives(args.inputs)
    paths.output_file(args.output)
    try:
        write_record_index(args.inputs, args.output, dir_root=args.dir_root)
    except FileError as e:   # the reader's remedy names index's options
        raise e.restated("warchive check says what is wrong with the file") from None
    return 0
