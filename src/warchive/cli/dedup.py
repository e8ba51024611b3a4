"""`warchive dedup-index build|add|lookup|stats`: the payload digest index of writer-side dedup.

The command is ``dedup_index(args)`` and its options ``dedup_index_arguments(p)``
(warchive.cli.commands explains the registry).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from argparse import ArgumentParser, Namespace

from ..capture.dedup import CDX_SUFFIXES, DigestIndex, rebuild_index, seed
from ..capture.digest_index import FILE_PREFIX, FILE_SUFFIX
from ..errors import ArchiveError
from . import paths


def dedup_index_arguments(p: ArgumentParser) -> None:
    actions = p.add_subparsers(dest="dedup_command", metavar="ACTION", required=True)
    for name, what in (("build", "a new index from CDX(J) files and WARCs (replaces what DIR held)"),
                       ("add", "add the originals of CDX(J) files and WARCs to the index")):
        a = actions.add_parser(name, help=what, description=what)
        a.add_argument("dir", metavar="DIR", help="the digest index's directory")
        a.add_argument("sources", nargs="+", metavar="CDX_OR_WARC",
                       help=".cdx/.cdxj (.gz) files; WARC files or directories of them")
        a.add_argument("--skip-errors", action="store_true", help="count unreadable lines and WARCs, go on")
    lk = actions.add_parser("lookup", help="the original of each payload digest (JSON lines; exit 1 if one is "
                                           "missing)")
    lk.add_argument("dir", metavar="DIR", help="the digest index's directory")
    lk.add_argument("digests", nargs="+", metavar="DIGEST", help="sha1:BASE32 (or sha256:, blake3:, hex)")
    st = actions.add_parser("stats", help="entries, generation, file size; --verify checks every byte")
    st.add_argument("dir", metavar="DIR", help="the digest index's directory")
    st.add_argument("--verify", action="store_true", help="check the checksums and the key order too")


def dedup_index(args: Namespace) -> int:
    """The URL-agnostic payload digest index of writer-side dedup (docs/format.md, "Dedup digest
    index"): digest -> original URI, date, record id. build, add, lookup, stats."""
    if args.dedup_command in ("build", "add"):
        return _build_or_add(args)
    paths.directory(args.dir, "digest index directory")
    if not any(n.startswith(FILE_PREFIX) and n.endswith(FILE_SUFFIX) for n in os.listdir(args.dir)):
        raise ArchiveError(f"{args.dir}: no digest index in it (no {FILE_PREFIX}N{FILE_SUFFIX}; "
                           "warchive dedup-index build makes one)")
    verify = args.dedup_command == "stats" and args.verify
    with DigestIndex(args.dir, verify=verify, create=False) as ix:
        if args.dedup_command == "stats":
            st = ix.stats()
            print(f"generation {st.generation}\nentries {st.entries}\nfile {st.file or '-'}\n"
                  f"file bytes {st.file_bytes}\nheap bytes {st.heap_bytes}")
            for name, n in sorted(st.algorithms.items()):
                print(f"{name} {n}")
            return 0
        missing = 0
        for d in args.digests:
            o = ix.get(d)
            missing += o is None
            print(json.dumps({"digest": d, "original": None if o is None else
                              {"uri": o.uri, "date": o.date, "record_id": o.record_id}}))
        return 1 if missing else 0


def _build_or_add(args: Namespace) -> int:
    """build, add: the sources checked first; a directory this run made is removed when it fails."""
    if os.path.exists(args.dir) and not os.path.isdir(args.dir):
        raise ArchiveError(f"{args.dir}: a file, not a digest index's directory")
    for p in args.sources:
        if p.endswith(CDX_SUFFIXES) and not os.path.isdir(p):
            if not os.path.exists(p):
                raise FileNotFoundError(2, "no such file or directory", p)
        else:
            paths.archives([p], lenient=args.skip_errors, remedy="--skip-errors counts it and goes on")
    made = not os.path.exists(args.dir)
    try:
        if args.dedup_command == "build":
            path, stats = rebuild_index(args.dir, args.sources, skip_errors=args.skip_errors)
        else:
            with DigestIndex(args.dir) as ix:
                stats = seed(ix, args.sources, skip_errors=args.skip_errors)
                path = ix.flush() or "nothing new"
    except BaseException:
        if made:
            shutil.rmtree(args.dir, ignore_errors=True)
        raise
    ignored = ", ".join(f"{v} {k}" for k, v in sorted(stats.ignored.items())) or "none"
    print(f"{path}: {stats.read} read, {stats.added} added, {stats.known} already known; ignored: {ignored}",
          file=sys.stderr)
    return 0
