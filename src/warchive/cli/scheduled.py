"""`warchive index --scheduler ADDRESS|local[:N]`: the index built on a Dask cluster.

Run by warchive.cli.index when --scheduler is given (and only then imported:
Dask distributed takes 1.2-1.6 s to import here, five times a whole
`warchive index` of the benchmark corpus). The output is what the same
command without --scheduler writes with --sort (CDXJ), or what `warchive
build` (--build) or `warchive zipnum` (--zipnum, --lines, --parts) write of
that; warchive.distributed does the work.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Optional, Tuple

from distributed import Client, LocalCluster

from ..distributed import DEFAULT_TARGET_BYTES, Display, index, local_cluster, summary_line
from ..index.cdx import IndexOptions
from . import UsageError


def _cluster(address: str) -> Tuple[Client, Optional[LocalCluster]]:
    """A client of the scheduler at `address`, or of a new LocalCluster for local[:N]."""
    if address == "local" or address.startswith("local:"):
        n_text = address.partition(":")[2]
        try:
            n = int(n_text) if n_text else (os.cpu_count() or 1)
        except ValueError:
            raise UsageError(f"--scheduler {address}: N must be a number of worker processes") from None
        if n < 1:
            raise UsageError("--scheduler local:N needs N >= 1")
        cluster = local_cluster(n)
        return Client(cluster), cluster
    return Client(address), None


def _size(text: str) -> int:
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    t = text.strip().lower().rstrip("b")
    mult = units.get(t[-1:], 1)
    try:
        return int(float(t[:-1] if t[-1:] in units else t) * mult)
    except (ValueError, OverflowError):   # (OverflowError: inf, or digits past a float)
        raise UsageError(f"--target-size {text}: a size such as 256M or 1G") from None


def run(args: Any, opts: IndexOptions) -> int:
    """Index on the cluster; one summary line on stderr at the end (live progress on a terminal)."""
    if not args.output:
        raise UsageError("--scheduler needs -o OUT (the output is written by the workers)")
    if args.build and args.zipnum:
        raise UsageError("--build and --zipnum do not go together")
    if args.jobs != 1:
        raise UsageError("--jobs does not go with --scheduler (each worker process indexes one task at a time)")
    if "-" in args.inputs:
        raise UsageError("standard input cannot be indexed with --scheduler")
    kind = "segment" if args.build else "zipnum" if args.zipnum else "cdxj"
    target = _size(args.target_size) if args.target_size else DEFAULT_TARGET_BYTES
    client, cluster = _cluster(args.scheduler)
    try:
        s = index(args.inputs, args.output, client, kind=kind, options=opts, ranges=args.ranges, target_bytes=target,
                  scratch=args.scratch, keep_scratch=args.keep_scratch, zipnum_lines=args.lines,
                  zipnum_parts=args.parts, display=Display(sys.stderr))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    print(summary_line(s), file=sys.stderr)
    if s["errors"]:
        print(f"warchive: {s['errors']} damaged record(s) skipped, {s['records']} read", file=sys.stderr)
        if s["records"] == 0:
            return 1
    return 0
