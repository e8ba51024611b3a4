"""`warchive index`: a CDXJ (or CDX-11) index of WARC/ARC files, as cdxj-indexer writes it.

The command is ``index(args)`` and its options ``index_arguments(p)``
(warchive.cli.commands explains the registry). It has a module of its own so
that `warchive index` imports what indexing needs and none of the other
commands' modules.
"""

from __future__ import annotations

import sys
from argparse import ArgumentParser, Namespace
from typing import Callable, List, Optional

from .._ext.sysio import one_malloc_arena
from ..durable import AtomicOutput
from ..index.build import index_paths
from ..index.cdx import FileStats, IndexOptions, display_name, iter_inputs
from ..index.fields import index_fields, parse_fields
from ..surt import parse_options
from . import UsageError, paths
from .extras import needs

SKIP_EMPTY = "--skip-errors reports it and goes on"


def index_arguments(p: ArgumentParser) -> None:
    p.add_argument("inputs", nargs="+", metavar="WARC_OR_DIR",
                   help="WARC/ARC files ('-': standard input); directories are walked")
    p.add_argument("-o", "--output", metavar="OUT", help="output file, published when complete (default: standard output)")
    p.add_argument("-11", "--cdx11", action="store_true", help="11-field CDX (N b a m s k r M S V g)")
    p.add_argument("--records", metavar="TYPES", help="record types to index, comma-separated, or 'all' "
                                     "(default: response,revisit,resource,metadata)")
    p.add_argument("--dir-root", metavar="DIR", help="filenames relative to this directory (default: base names)")
    p.add_argument("-p", "--post-append", action="store_true",
                   help="append POST/PUT request bodies to keys (__wb_method=post&...), as pywb looks them up")
    p.add_argument("-s", "--sort", action="store_true", help="sort the output bytewise, dropping repeated lines")
    p.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                   help="index with N worker threads (default 1); gzip files with Wget's sl lengths are cut "
                        "into byte ranges; the output is the same as with -j 1")
    p.add_argument("--verify", action="store_true",
                   help="inflate every gzip member and check its CRC, even where Wget's sl lengths allow skipping")
    p.add_argument("--skip-errors", action="store_true",
                   help="report a damaged record on stderr and go on with the next one")
    p.add_argument("--strict", action="store_true",
                   help="fail on the first defect that is otherwise read past with a warning, as warcio does "
                        "(a wrong Content-Length, missing or extra blank lines, bytes that are no record)")
    p.add_argument("-f", "--fields", metavar="FIELDS",
                   help="instead of CDXJ, one JSON object per record (every type) with these fields, as "
                        "warcio index -f writes it: offset, length, filename, http:status, http:HEADER "
                        "(an HTTP header), WARC-HEADER (a WARC header), comma-separated; '-' reads "
                        "standard input")
    g = p.add_argument_group("on a Dask cluster (docs/cli.md, \"warchive index --scheduler\")")
    g.add_argument("--scheduler", metavar="ADDRESS", help="index on the Dask scheduler at ADDRESS (tcp://host:8786), "
                   "or on a new cluster of N worker processes here (local[:N]); the output is sorted, as with --sort")
    g.add_argument("--build", action="store_true", help="with --scheduler: write the index segment `warchive build` "
                   "writes of the sorted output")
    g.add_argument("--zipnum", action="store_true", help="with --scheduler: write the ZipNum cluster `warchive "
                   "zipnum` writes of the sorted output (OUT: a directory or prefix)")
    g.add_argument("--lines", type=int, default=3000, metavar="N", help="with --zipnum: lines per block (default 3000)")
    g.add_argument("--parts", type=int, default=1, metavar="N", help="with --zipnum: shard files (default 1)")
    g.add_argument("--ranges", type=int, metavar="N", help="with --scheduler: N key ranges (default: one per "
                   "--target-size of index lines)")
    g.add_argument("--target-size", metavar="SIZE", help="with --scheduler: index lines per key range (default 256M)")
    g.add_argument("--scratch", metavar="DIR", help="with --scheduler: where the runs and parts go, on storage every "
                   "worker sees (default OUT.warchive-scratch); a rerun after a crash reuses what is finished there")
    g.add_argument("--keep-scratch", action="store_true", help="with --scheduler: keep the scratch directory")
    p.add_argument("--surt-options", metavar="OPTS",
                   help="make the keys with these options of the surt package, comma-separated, each NAME "
                        "(true) or NAME=false; with_scheme,trailing_comma,host_massage=false gives Heritrix's "
                        "form http://(com,example,www,)/ (default: cdxj-indexer's keys)")


def index(args: Namespace) -> int:
    """Index WARC/ARC files (directories are walked; '-' is standard input) as cdxj-indexer does.

    Defects warcio reads past are read past too, each with one warning on stderr (with --strict
    the first is an error). An empty file named on the command line is an error (with
    --skip-errors, as an empty file under a directory, a warning). The output is written as OUT.<random>.tmp and renamed when
    complete; exit status 1 when an input is damaged (the message names the file and byte
    offset) or when --skip-errors could read not one record; exit status 2, before
    anything is read, for an unknown --surt-options name or value (one line)."""
    if args.fields is not None:
        return _fields(args)
    surt_options = None
    if args.surt_options:
        try:
            surt_options = parse_options(args.surt_options)
        except ValueError as e:
            print(f"warchive index: error: --surt-options: {e}", file=sys.stderr)
            return 2
    records = None
    if args.records:
        records = "all" if args.records == "all" else args.records.split(",")
    opts = IndexOptions(cdx11=args.cdx11, records=records, post_append=args.post_append, verify=args.verify,
                        skip_errors=args.skip_errors, dir_root=args.dir_root, strict=args.strict,
                        surt_options=surt_options or None)
    paths.archives(args.inputs, lenient=args.skip_errors, remedy=SKIP_EMPTY)
    if getattr(args, "scheduler", None):
        # imported only here: Dask distributed takes 1.2-1.6 s to import (warchive.cli.scheduled)
        with needs("distributed", "--scheduler"):
            from . import scheduled

        return scheduled.run(args, opts)
    for attr, option in _ONLY_SCHEDULED:
        if getattr(args, attr, None):
            raise UsageError(f"{option} needs --scheduler (on one machine: warchive build / warchive zipnum)")
    if args.output:
        paths.output_file(args.output)
    jobs = max(1, args.jobs)
    if jobs > 1:  # worker threads: one malloc arena for all (this process is ours alone)
        one_malloc_arena()
    if args.output:
        with AtomicOutput(args.output) as out:
            total = index_paths(args.inputs, out.write, opts, jobs=jobs, sort=args.sort)
    else:
        total = index_paths(args.inputs, sys.stdout.buffer.write, opts, jobs=jobs, sort=args.sort)
        sys.stdout.buffer.flush()
    _say_defects(total)
    if total.errors:
        print(f"warchive: {total.errors} damaged record(s) skipped, {total.records} read", file=sys.stderr)
        if total.records == 0:
            return 1  # not one record could be read
    return 0


_ONLY_SCHEDULED = (("build", "--build"), ("zipnum", "--zipnum"), ("ranges", "--ranges"),
                   ("target_size", "--target-size"), ("scratch", "--scratch"), ("keep_scratch", "--keep-scratch"))

_NOT_WITH_FIELDS = (("cdx11", "--cdx11"), ("post_append", "--post-append"), ("sort", "--sort"),
                    ("surt_options", "--surt-options"))   # --fields writes no keys


def _fields(args: Namespace) -> int:
    """--fields: warcio index -f's JSON lines (warchive.index.fields), file after file."""
    for attr, option in _NOT_WITH_FIELDS:
        if getattr(args, attr):
            raise UsageError(f"{option} does not go with --fields")
    if args.jobs != 1:
        raise UsageError("--jobs does not go with --fields")
    fields = parse_fields(args.fields)
    types = None if args.records in (None, "all") else args.records.split(",")
    opts = IndexOptions(verify=args.verify, skip_errors=args.skip_errors, strict=args.strict)
    paths.archives(args.inputs, lenient=args.skip_errors, remedy=SKIP_EMPTY)
    if args.output:
        paths.output_file(args.output)
    total = FileStats()
    if args.output:
        with AtomicOutput(args.output) as out:
            _fields_of(args.inputs, fields, types, opts, args.dir_root, out.write, total)
    else:
        _fields_of(args.inputs, fields, types, opts, args.dir_root, sys.stdout.buffer.write, total)
        sys.stdout.buffer.flush()
    _say_defects(total)
    if total.errors:
        print(f"warchive: {total.errors} damaged record(s) skipped, {total.records} read", file=sys.stderr)
        if total.records == 0:
            return 1
    return 0


def _fields_of(inputs: List[str], fields: List[str], types: Optional[List[str]], opts: IndexOptions,
               dir_root: Optional[str], write: Callable[[bytes], object], total: FileStats) -> None:
    for path in iter_inputs(inputs):
        if path == "-":
            s = index_fields(sys.stdin.buffer, fields, write, "-", types, opts)
        else:
            s = index_fields(path, fields, write, display_name(path, dir_root), types, opts)
        total.records += s.records
        total.errors += s.errors
        total.defects += s.defects


def _say_defects(total: FileStats) -> None:
    if total.defects:
        print(f"warchive: {total.defects} defect(s) read past (see the warnings above; --strict makes them "
              "errors)", file=sys.stderr)
