"""The registry of `warchive` commands, the argument parser built from it, and the dispatch.

Each command is declared once, in ``COMMANDS``: its name, its one-line help
and the module of warchive.cli that declares its options and runs it. That
module has, for a command NAME (dashes as underscores), ``NAME_arguments(p)``
adding the options to an argparse parser and ``NAME(args)`` running it; its
docstring's first line is the command's description. Only the module of the
command being run is imported, so `warchive index` never imports the crawler.

Exit status: 0 done, 1 the command failed (an ArchiveError: one line naming
the file and byte offset), 2 a usage error (argparse's, or UsageError).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

from .. import __version__
from .._ext.gzip_members import inflate_libraries
from . import UsageError, run_command   # UsageError: the command modules import it from here


@dataclass(frozen=True)
class Command:
    name: str
    group: str       # the module of warchive.cli that declares and runs it
    help: str

    @property
    def function(self) -> str:
        return self.name.replace("-", "_")


COMMANDS: Tuple[Command, ...] = (
    Command("index", "index", "write a CDXJ (or CDX-11) index of WARC/ARC files, as cdxj-indexer does"),
    Command("sort", "indexes", "sort CDX/CDXJ files bytewise (external merge sort, bounded memory)"),
    Command("merge", "indexes", "merge sorted CDX/CDXJ files (an unsorted input is an error)"),
    Command("build", "indexes", "write an index segment from sorted CDX/CDXJ lines"),
    Command("zipnum", "indexes", "write a ZipNum cluster (pywb / Common Crawl) from sorted lines"),
    Command("record-index", "indexes", "index WARC record ids and payload digests (for revisits by id)"),
    Command("init", "collection", "make a new, empty collection (archive/ and indexes/), as pywb's wb-manager init"),
    Command("add", "collection", "put WARC files into a collection and index them as a new segment"),
    Command("compact", "collection", "merge a collection's index segments into one"),
    Command("cdx", "access", "answer a CDX API query over index files and collections"),
    Command("lookup", "access", "the captures of one URL (exact match)"),
    Command("load", "load", "print the capture closest to a time (or named by --cdx), revisits resolved"),
    Command("serve", "serve", "replay the collections under a root directory (or of a config) over HTTP, with the CDX API"),
    Command("extract", "extract", "print one record (its heads, its payload) as warcio extract does"),
    Command("check", "warcs", "verify every record's digests and structure (exit 1 on a problem)"),
    Command("recompress", "warcs", "rewrite a WARC (or an ARC, as WARC) with one gzip member (or zstd frame) per record"),
    Command("recover", "warcs", "truncate an .open WARC after its last whole record and rename it"),
    Command("crawl", "crawl", "crawl politely from seeds into a collection (WARCs, index segments, session)"),
    Command("robots", "robots", "check URLs against a robots.txt file (as Google reads it; --rfc: RFC 9309 strictly)"),
    Command("session", "session", "what a crawl session's journal says (tables)"),
    Command("dedup-index", "dedup", "build, extend and query the digest index of writer-side dedup"),
    Command("crawllog-revisits", "crawllog", "write the revisit records of a crawl.log's duplicate lines "
                                             "(originals found by digest in a collection)"),
    Command("store", "store", "the durable store: WARC/ARC files erasure-coded over volumes (init, put, get, "
                              "ls, stat, rm)"),
    Command("wacz", "wacz", "WACZ files: create one from a collection, validate one (import: warchive add COLL FILE.wacz)"),
)
BY_NAME = {c.name: c for c in COMMANDS}


def version() -> str:
    return f"warchive {__version__} (inflate: {inflate_libraries()})"


def parser(command: Optional[str] = "*") -> argparse.ArgumentParser:
    """The `warchive` parser: every command listed with its help; the options of `command` added
    from its module ("*": of every command, as docs and tests need; None: of none, for a
    command line that names no command)."""
    return _build(command)[0]


def _build(command: Optional[str]) -> Tuple[argparse.ArgumentParser, Dict[str, argparse.ArgumentParser]]:
    """The parser and the sub-parsers whose options were built, by command name."""
    p = argparse.ArgumentParser(prog="warchive", description="Web archive engine: index, look up, load, "
                                "check and crawl WARC/ARC files (docs/cli.md).")
    p.add_argument("--version", action="version", version=version())
    sub = p.add_subparsers(dest="command", metavar="COMMAND", prog="warchive")
    built: Dict[str, argparse.ArgumentParser] = {}
    for c in COMMANDS:
        if command != "*" and c.name != command:
            sub.add_parser(c.name, help=c.help, add_help=False)
            continue
        mod = importlib.import_module(f"{__package__}.{c.group}")
        run: Callable[[argparse.Namespace], int] = getattr(mod, c.function)
        sp = built[c.name] = sub.add_parser(c.name, help=c.help, description=_description(run, c))
        getattr(mod, c.function + "_arguments")(sp)
        sp.set_defaults(run=run)
    return p, built


def _description(run: Callable[..., int], c: Command) -> str:
    """The first paragraph of the command function's docstring."""
    doc = (run.__doc__ or "").strip()
    return " ".join(doc.split("\n\n", 1)[0].split()) if doc else c.help


def main(argv: List[str]) -> int:
    """Parse and run one command line (see the module docstring for the exit status)."""
    command = argv[0] if argv and argv[0] in BY_NAME else None
    p, built = _build(command)
    args, extra = p.parse_known_args(argv)
    if extra:
        built.get(args.command, p).error("unrecognized arguments: " + " ".join(extra))
    if args.command is None:
        p.print_help()
        return 2
    try:
        return run_command(args.run, args)
    except UsageError as e:
        sp = built[args.command]
        sp.print_usage(sys.stderr)
        print(f"{sp.prog}: error: {e}", file=sys.stderr)
        return 2
