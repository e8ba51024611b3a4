"""The `warchive` command.

    warchive index WARC_OR_DIR... [-o OUT] [--cdx11] [--records TYPES] [--dir-root DIR]
                   [-p] [--sort] [-j N] [--verify] [--skip-errors]
    warchive sort IN... -o OUT            sort CDX(J) lines bytewise, bounded memory
    warchive merge IN... -o OUT           merge sorted CDX(J) files (refuses unsorted input)
    warchive build IN.cdxj... -o OUT.seg  write an index segment
    warchive zipnum IN.cdxj -o DIR        write a ZipNum cluster
    warchive add COLL WARC...             put WARCs into a collection, indexed as a new segment
    warchive compact COLL                 merge a collection's segments into one
    warchive cdx SOURCE... --url U [--PARAM VALUE]...   the CDX API's answer, as the server gives it
    warchive lookup URL [SOURCE...]       the captures of one URL
    warchive load URL TIMESTAMP [SOURCE...] | --cdx LINE  a capture, revisits resolved
    warchive record-index WARC_OR_DIR... -o FILE.rix     record ids and digests -> records
    warchive serve [--root DIR] [--port N]               the CDX API over HTTP
    warchive session show|failed|skipped|stats FILE [URL]  what a crawl session's journal says
    warchive dedup-index build|add|lookup|stats DIR ...  the digest index of writer-side dedup
    warchive check WARC... [-v]           verify digests and structure of every record
    warchive recompress IN OUT [--zstd]   one gzip member (or zstd frame) per record, atomically
    warchive recover FILE.open... [-n]    cut a killed writer's file after its last whole record
    warchive robots FILE --agent NAME URL...             is each URL allowed by this robots.txt?
    warchive crawl SEEDS... -o COLL [options] | --resume SESSION_OR_COLL [--retry-failed]
                                          crawl politely into a collection, indexed as it goes
    warchive --version

Errors in archives are reported as one line naming the file and the byte
offset (exit status 1); nothing half-written is left behind.
"""

from __future__ import annotations

import os
import sys
TYPE_CHECKING = False   # typing is not imported at run time: `warchive index` is timed with its start-up
if TYPE_CHECKING:
    from typing import List, Optional
    import argparse

from . import __version__
from .errors import ArchiveError


def _version() -> str:
    from ._ext.gzip_members import inflate_libraries

    return f"warchive {__version__} (inflate: {inflate_libraries()})"


def _terminal_columns() -> int:
    """shutil.get_terminal_size().columns without importing shutil (and bz2, lzma with it)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        out = sys.__stdout__
        try:
            columns = os.get_terminal_size(out.fileno()).columns if out is not None else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


def _formatter_class():
    """argparse's help formatter, given the width argparse would find: argparse makes one
    for every add_argument, and finding the width its way imports shutil (3 ms of start-up)."""
    import argparse

    class _Formatter(argparse.HelpFormatter):
        def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                     width: Optional[int] = None) -> None:
            super().__init__(prog, indent_increment, max_help_position,
                             width if width is not None else _terminal_columns() - 2)

    return _Formatter


class _Unbuilt:
    """The parser of a command that is not being run: its arguments are not built
    (every call is accepted and ignored), which keeps start-up short."""

    def __getattr__(self, name: str):
        return self._ignore

    def _ignore(self, *args, **kwargs):
        return self


class _Commands:
    """The sub-parsers action, building only the command named by `only` (every command
    when None): a run of `warchive index` does not pay for the twenty other parsers."""

    def __init__(self, sub, only: Optional[str], formatter) -> None:
        self.sub = sub
        self.only = only
        self.built = False
        self.formatter = formatter

    def builds(self, name: str) -> bool:
        return self.only is None or self.only == name

    def add_parser(self, name: str, **kwargs):
        if not self.builds(name):
            return _Unbuilt()
        self.built = True
        kwargs.setdefault("formatter_class", self.formatter)
        return self.sub.add_parser(name, **kwargs)


def _parser(only: Optional[str] = None) -> argparse.ArgumentParser:
    """The `warchive` parser; with `only`, just that command (all of them when it names none,
    so that the error lists them)."""
    import argparse

    formatter = _formatter_class()
    p = argparse.ArgumentParser(prog="warchive", description="Web archive engine: index and read WARC/ARC files.",
                                formatter_class=formatter)
    p.add_argument("--version", action="version", version=_version())
    sub = _Commands(p.add_subparsers(dest="command", metavar="COMMAND", prog="warchive"), only, formatter)

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
    ix.add_argument("-j", "--jobs", type=int, default=1,
                    help="index with N worker threads (default 1); gzip files with Wget's sl lengths are cut "
                         "into byte ranges; the output is the same as with -j 1")
    ix.add_argument("--verify", action="store_true",
                    help="inflate every gzip member and check its CRC, even where Wget's sl lengths allow skipping")
    ix.add_argument("--skip-errors", action="store_true",
                    help="report a damaged record on stderr and go on with the next one")
    so = sub.add_parser("sort", help="sort CDX/CDXJ files bytewise (external merge sort, bounded memory)")
    so.add_argument("inputs", nargs="+", metavar="IN")
    so.add_argument("-o", "--output", required=True, help="output file ('-' for standard output)")
    so.add_argument("--mem", type=int, default=256, metavar="MB", help="memory for the sort buffers (default 256)")
    so.add_argument("--tmpdir", help="where runs go (default: $TMPDIR)")

    me = sub.add_parser("merge", help="merge sorted CDX/CDXJ files (an unsorted input is an error)")
    me.add_argument("inputs", nargs="+", metavar="IN")
    me.add_argument("-o", "--output", required=True)

    bu = sub.add_parser("build", help="write an index segment from sorted CDX/CDXJ lines")
    bu.add_argument("inputs", nargs="+", metavar="IN")
    bu.add_argument("-o", "--output", required=True, metavar="OUT.seg")

    zn = sub.add_parser("zipnum", help="write a ZipNum cluster (pywb / Common Crawl) from sorted lines")
    zn.add_argument("input", metavar="IN")
    zn.add_argument("-o", "--output", required=True, help="directory, or prefix P (P.idx, P.loc, shards)")
    zn.add_argument("--lines", type=int, default=3000, help="lines per block (default 3000)")
    zn.add_argument("--parts", type=int, default=1, help="number of shard files (default 1)")

    ad = sub.add_parser("add", help="put WARC files into a collection and index them as a new segment")
    ad.add_argument("coll", metavar="COLL", help="collection directory (created if absent)")
    ad.add_argument("warcs", nargs="+", metavar="WARC")
    ad.add_argument("--link", action="store_true", help="hard-link the files instead of copying them")
    ad.add_argument("-j", "--jobs", type=int, default=1)

    cp = sub.add_parser("compact", help="merge a collection's index segments into one")
    cp.add_argument("coll", metavar="COLL")

    cd = sub.add_parser("cdx", help="answer a CDX API query over index files and collections")
    cd.add_argument("sources", nargs="+", metavar="SOURCE",
                    help="collection directories, segments, ZipNum .idx files, sorted .cdx/.cdxj files")
    cd.add_argument("--coll", default="cdx", help="collection name for loose index files (default cdx)")

    lk = sub.add_parser("lookup", help="the captures of one URL (exact match)")
    lk.add_argument("url")
    lk.add_argument("sources", nargs="*", metavar="SOURCE", help="default: the current directory as a collection")

    ld = sub.add_parser("load", help="print the capture closest to a time (or named by --cdx), revisits resolved")
    ld.add_argument("args", nargs="*", metavar="URL TIMESTAMP [SOURCE...]")
    ld.add_argument("--cdx", help="an index line naming the capture (then every argument is a SOURCE)")
    ld.add_argument("--archive", action="append", help="directory of WARC files (default: the collections' archive/)")
    ld.add_argument("--decompress", action="store_true", help="undo the Content-Encoding too")
    ld.add_argument("--raw", action="store_true", help="the payload as stored (still chunked)")
    ld.add_argument("--headers-only", action="store_true")
    ld.add_argument("-o", "--output", help="write the body to this file (headers on standard output)")

    ri = sub.add_parser("record-index", help="index WARC record ids and payload digests (for revisits by id)")
    ri.add_argument("inputs", nargs="+", metavar="WARC_OR_DIR")
    ri.add_argument("-o", "--output", required=True, metavar="FILE.rix")
    ri.add_argument("--dir-root")

    sv = sub.add_parser("serve", help="serve the CDX API of the collections under a root directory")
    sv.add_argument("--root", default="collections", help="directory of collections (default ./collections)")
    sv.add_argument("--host", default="127.0.0.1")
    sv.add_argument("--port", type=int, default=8080)
    _session_parsers(sub)
    _dedup_index_parser(sub)
    _writer_parsers(sub)
    _robots_parser(sub)
    _crawl_parser(sub)
    if only is not None and not sub.built:
        return _parser()
    return p


_CRAWL_HELP = "crawl from seeds into a collection (WARCs, index segments, session)"


def _crawl_parser(sub: _Commands) -> None:
    if not sub.builds("crawl"):
        return
    from .capture.crawl_config import CrawlConfig   # not .crawler: `warchive --help` builds this parser

    d = CrawlConfig(seeds=[])
    cr = sub.add_parser("crawl", help=_CRAWL_HELP,
                        description="Crawl politely from SEEDS into the collection COLL: WARC files in COLL/archive, "
                                    "index segments in COLL/indexes as it goes, the session (journal, crawl.log, "
                                    "frontier, seen set) in COLL/crawls/ID. Ctrl-C stops cleanly; --resume continues "
                                    "(also after a kill).")
    cr.add_argument("seeds", nargs="*", metavar="SEED")
    cr.add_argument("-o", "--output", metavar="COLL", help="collection directory (created if absent)")
    cr.add_argument("--resume", metavar="SESSION", help="continue a session (its directory, or a collection: "
                                                        "its latest crawl) with the settings it was started with")
    cr.add_argument("--retry-failed", action="store_true", help="with --resume: fetch the failed URLs again")
    g = cr.add_argument_group("politeness")
    g.add_argument("--delay-factor", type=float, default=d.delay_factor,
                   help=f"delay = factor x last fetch time (default {d.delay_factor})")
    g.add_argument("--min-delay", type=float, default=d.min_delay, help=f"seconds (default {d.min_delay})")
    g.add_argument("--max-delay", type=float, default=d.max_delay, help=f"seconds (default {d.max_delay})")
    g.add_argument("--crawl-delay-cap", type=float, default=d.crawl_delay_cap,
                   help=f"robots Crawl-delay honoured up to this (default {d.crawl_delay_cap:g} s)")
    g.add_argument("--no-politeness", action="store_true", help="no delays at all (your own servers only)")
    g = cr.add_argument_group("scope")
    g.add_argument("--scope", choices=("prefix", "host", "domain"), default=d.scope,
                   help="what the seeds admit: their SURT prefixes (default), their hosts, their domains")
    g.add_argument("--include", action="append", default=[], metavar="REGEX", help="also accept matching URLs")
    g.add_argument("--exclude", action="append", default=[], metavar="REGEX", help="reject matching URLs")
    g.add_argument("--max-hops", type=int, default=d.max_hops, help=f"hops from a seed (default {d.max_hops})")
    g.add_argument("--max-trans-hops", type=int, default=d.max_trans_hops,
                   help=f"embeds this many hops off scope (default {d.max_trans_hops})")
    g = cr.add_argument_group("robots, dedup, WARC")
    g.add_argument("--robots", choices=("obey", "robotsTxtOnly", "ignore"), default=d.robots)
    g.add_argument("--dedup", choices=("revisit", "write", "skip"), default=d.dedup,
                   help="identical payloads: revisit records (default), write in full, or write nothing")
    g.add_argument("--dedup-min-size", type=int, default=d.dedup_min_size, metavar="BYTES")
    g.add_argument("--digest", choices=("sha1", "sha256", "blake3"), default=d.digest)
    g.add_argument("--warc-max-size", type=int, default=d.warc_max_size, metavar="BYTES")
    g.add_argument("--compression", choices=("gzip", "zstd", "none"), default=d.compression)
    g.add_argument("--prefix", default=d.prefix, help="WARC file name prefix")
    g.add_argument("--no-fsync", action="store_true", help="do not fsync closed WARC files (tests)")
    g = cr.add_argument_group("fetching")
    g.add_argument("--user-agent", default=d.user_agent)
    g.add_argument("--from", dest="from_", metavar="EMAIL", help="the From header: who to write to")
    g.add_argument("-c", "--concurrency", type=int, default=d.concurrency, help=f"fetches at once ({d.concurrency})")
    g.add_argument("--resolve", action="append", default=[], metavar="HOST=IP",
                   help="send HOST (or *.DOMAIN) to IP instead of asking DNS (tests, local crawls)")
    g.add_argument("--port-map", action="append", default=[], metavar="PORT=PORT",
                   help="connect to the second port for URLs of the first (a test server on 80=8123)")
    g.add_argument("--timeout", type=float, default=d.read_timeout, help="read timeout in seconds")
    g.add_argument("--max-size", type=int, default=d.max_size, metavar="BYTES", help="body bytes kept per URL")
    g.add_argument("--max-retries", type=int, default=d.max_retries,
                   help=f"attempts after a network failure, 429 or 503 (default {d.max_retries})")
    g = cr.add_argument_group("bookkeeping")
    g.add_argument("--seen", choices=("exact", "bloom"), default=d.seen)
    g.add_argument("--max-urls", type=int, help="queue at most this many URLs")
    g.add_argument("--revisit-after", type=float, metavar="SECONDS",
                   help="fetch each URL again after this long (conditional: a 304 becomes a revisit)")
    g.add_argument("--revisits", type=int, default=1, help="how many times (with --revisit-after)")
    g.add_argument("--index-every", type=float, default=d.index_every, metavar="SECONDS",
                   help=f"write an index segment this often while crawling (default {d.index_every:g})")
    g.add_argument("--screenshots", action="store_true", help="render each HTML page in chromium and store a PNG")
    g.add_argument("-q", "--quiet", action="store_true", help="no progress display and no summary")


def _robots_parser(sub: _Commands) -> None:
    ro = sub.add_parser("robots", help="check URLs against a robots.txt file (RFC 9309)",
                        description="Print 'allowed' or 'disallowed' for each URL, as a crawler with the "
                                    "given user agent reads the robots.txt FILE (RFC 9309).")
    ro.add_argument("file", metavar="FILE", help="the robots.txt file ('-' for standard input)")
    ro.add_argument("urls", nargs="+", metavar="URL", help="absolute URLs or paths (/dir/page.html)")
    ro.add_argument("-a", "--agent", required=True, metavar="NAME",
                    help="the crawler's product token or user-agent string (matched case-insensitively)")
    ro.add_argument("-v", "--explain", action="store_true",
                    help="also print the URL and the rule that decided (tab-separated)")


def _session_parsers(sub: _Commands) -> None:
    se = sub.add_parser("session", help="what a crawl session's journal says (tables)",
                        description="Read a session journal (warchive.capture.session_db) and print tables.")
    ss = se.add_subparsers(dest="session_command", metavar="ACTION", required=True)
    for name, help_ in (("show", "every URL (or one URL, any of its redirect chain) with its chain and records"),
                        ("failed", "URLs whose last attempt failed, with reason and time (what --retry-failed takes)"),
                        ("skipped", "dedup skip decisions and other deliberate skips, with what they duplicate"),
                        ("stats", "counts by state, status, MIME type and host; bytes; duration")):
        a = ss.add_parser(name, help=help_, description=help_)
        a.add_argument("file", metavar="FILE")
        if name == "show":
            a.add_argument("url", nargs="?", metavar="URL")
        if name == "stats":
            a.add_argument("--top", type=int, default=10, help="rows per table (default 10)")
            a.add_argument("--json", action="store_true", help="the counts as one JSON object")
        a.add_argument("--skip-errors", action="store_true",
                       help="skip damaged lines in the middle of the journal (with a warning) instead of stopping")


def _dedup_index_parser(sub: _Commands) -> None:
    di = sub.add_parser("dedup-index", help="build, extend and query the digest index of writer-side dedup",
                        description="The URL-agnostic payload digest index (docs/format.md, "
                                    "'Dedup digest index'): digest -> original URI, date, record id.")
    ds = di.add_subparsers(dest="dedup_command", metavar="ACTION")
    for name, what in (("build", "a new index from CDX(J) files and WARCs (replaces what DIR held)"),
                       ("add", "add the originals of CDX(J) files and WARCs to the index")):
        a = ds.add_parser(name, help=what, description=what)
        a.add_argument("dir", metavar="DIR")
        a.add_argument("sources", nargs="+", metavar="CDX_OR_WARC",
                       help=".cdx/.cdxj (.gz) files; WARC files or directories of them")
        a.add_argument("--skip-errors", action="store_true", help="count unreadable lines and WARCs, go on")
    lk = ds.add_parser("lookup", help="the original of each payload digest (JSON lines; exit 1 if one is missing)")
    lk.add_argument("dir", metavar="DIR")
    lk.add_argument("digests", nargs="+", metavar="DIGEST", help="sha1:BASE32 (or sha256:, blake3:, hex)")
    st = ds.add_parser("stats", help="entries, generation, file size; --verify checks every byte")
    st.add_argument("dir", metavar="DIR")
    st.add_argument("--verify", action="store_true", help="check the checksums and the key order too")


def _writer_parsers(sub: _Commands) -> None:
    ck = sub.add_parser("check", help="verify every record's digests and structure (exit 1 on a problem)",
                        description="Inflate every member, check CRCs, WARC-Block-Digest over the block and "
                                    "WARC-Payload-Digest over the de-chunked payload.")
    ck.add_argument("inputs", nargs="+", metavar="WARC")
    ck.add_argument("-v", "--verbose", action="store_true", help="print warnings and a line per file")

    rc = sub.add_parser("recompress", help="rewrite a WARC with one gzip member per record (as warcio recompress)")
    rc.add_argument("input", metavar="IN")
    rc.add_argument("output", metavar="OUT")
    rc.add_argument("--zstd", action="store_true", help="write .warc.zst frames instead of gzip members")
    rc.add_argument("--level", type=int, help="compression level (ISA-L 0-3, default 2; zstd 1-22, default 3)")

    rv = sub.add_parser("recover", help="truncate an .open WARC after its last whole record and rename it")
    rv.add_argument("inputs", nargs="+", metavar="FILE.open")
    rv.add_argument("-n", "--dry-run", action="store_true", help="only say what would be cut")
    rv.add_argument("-o", "--output", help="name of the recovered file (one input; default: the name without .open)")


def cmd_sort(args: argparse.Namespace) -> int:
    from .index.sort import sort_files

    sort_files(args.inputs, args.output, mem_limit=args.mem << 20, tmpdir=args.tmpdir)
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    from .index.sort import merge_files

    merge_files(args.inputs, args.output)
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    from .index.segment import build_segment

    build_segment(args.inputs, args.output)
    return 0


def cmd_zipnum(args: argparse.Namespace) -> int:
    from .index.zipnum import write_zipnum

    write_zipnum(args.input, args.output, lines_per_block=args.lines, parts=args.parts)
    return 0


def _query_params(extra: List[str]) -> List[tuple]:
    """`--name value` pairs (repeatable) as query parameters; `--name=value` too."""
    out = []
    i = 0
    while i < len(extra):
        a = extra[i]
        if not a.startswith("--") or len(a) < 3:
            raise SystemExit(f"warchive cdx: expected --PARAM VALUE, got {a!r}")
        name, eq, value = a[2:].partition("=")
        if not eq:
            if i + 1 >= len(extra):
                raise SystemExit(f"warchive cdx: --{name} needs a value")
            value = extra[i + 1]
            i += 1
        out.append((name, value))
        i += 1
    return out


def cmd_cdx(args: argparse.Namespace, extra: List[str]) -> int:
    from urllib.parse import urlencode

    from .index.query import Index

    with Index(*args.sources, coll=args.coll) as idx:
        ans = idx.answer(urlencode(_query_params(extra)))
        out = sys.stdout.buffer
        for chunk in ans.body:
            out.write(chunk)
        out.flush()
    if ans.status != 200:
        print(f"warchive: {ans.status}", file=sys.stderr)
        return 1
    return 0


def cmd_lookup(args: argparse.Namespace) -> int:
    from .index.query import Index

    with Index(*(args.sources or ["."])) as idx:
        ans = idx.answer({"url": args.url, "matchType": "exact", "allowFuzzy": "false"})
        for chunk in ans.body:
            sys.stdout.buffer.write(chunk)
    return 0 if ans.status == 200 else 1


def cmd_load(args: argparse.Namespace) -> int:
    from .index.revisits import CaptureLoader

    url = ts = ""
    if args.cdx:
        sources = args.args
    else:
        if len(args.args) < 2:
            raise SystemExit("warchive load: give URL TIMESTAMP [SOURCE...] or --cdx LINE [SOURCE...]")
        url, ts, sources = args.args[0], args.args[1], args.args[2:]
    loader = CaptureLoader(sources or ["."], args.archive or None)
    try:
        if args.cdx:
            cap = loader.load(args.cdx, dechunk=not args.raw, decompress=args.decompress)
        else:
            cap = loader.load_closest(url, ts, dechunk=not args.raw, decompress=args.decompress)
        with cap:
            head = cap.headers.to_bytes() if cap.headers is not None else b"\r\n"
            out = sys.stdout.buffer
            out.write(head)
            if not args.headers_only:
                if args.output:
                    with open(args.output, "wb") as f:
                        while True:
                            b = cap.payload.read(1 << 20)
                            if not b:
                                break
                            f.write(b)
                else:
                    while True:
                        b = cap.payload.read(1 << 20)
                        if not b:
                            break
                        out.write(b)
            out.flush()
    finally:
        loader.close()
    return 0


def cmd_add(args: argparse.Namespace) -> int:
    from .collection import add_warcs

    seg = add_warcs(args.coll, args.warcs, link=args.link, jobs=max(1, args.jobs))
    print(seg or "nothing to index", file=sys.stderr)
    return 0


def cmd_compact(args: argparse.Namespace) -> int:
    from .collection import compact

    seg = compact(args.coll)
    print(seg or "no segments", file=sys.stderr)
    return 0


def cmd_record_index(args: argparse.Namespace) -> int:
    from .index.revisits import write_record_index

    write_record_index(args.inputs, args.output, dir_root=args.dir_root)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from .replay.app import create_app

    uvicorn.run(create_app(args.root), host=args.host, port=args.port, log_level="warning", access_log=False)
    return 0


def cmd_dedup_index(args: argparse.Namespace) -> int:
    import json

    from .capture.dedup import DigestIndex, rebuild_index, seed

    if args.dedup_command is None:
        raise SystemExit("warchive dedup-index: give build, add, lookup or stats")
    if args.dedup_command in ("build", "add"):
        if args.dedup_command == "build":
            path, stats = rebuild_index(args.dir, args.sources, skip_errors=args.skip_errors)
        else:
            with DigestIndex(args.dir) as ix:
                stats = seed(ix, args.sources, skip_errors=args.skip_errors)
                path = ix.flush() or "nothing new"
        ignored = ", ".join(f"{v} {k}" for k, v in sorted(stats.ignored.items())) or "none"
        print(f"{path}: {stats.read} read, {stats.added} added, {stats.known} already known; ignored: {ignored}",
              file=sys.stderr)
        return 0
    if not os.path.isdir(args.dir):
        raise SystemExit(f"warchive dedup-index: {args.dir}: no such directory")
    verify = args.dedup_command == "stats" and args.verify
    ix = DigestIndex(args.dir, verify=verify, create=False)
    try:
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
    finally:
        ix.close()


def cmd_index(args: argparse.Namespace) -> int:
    from .durable import AtomicOutput
    from .index.build import index_paths
    from .index.cdx import IndexOptions

    records = None
    if args.records:
        records = "all" if args.records == "all" else args.records.split(",")
    opts = IndexOptions(cdx11=args.cdx11, records=records, post_append=args.post_append, verify=args.verify,
                        skip_errors=args.skip_errors, dir_root=args.dir_root)
    if args.jobs > 1:  # worker threads: one malloc arena for all (this process is ours alone)
        from ._ext.sysio import one_malloc_arena

        one_malloc_arena()
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
    global _torn_down_by_os
    _torn_down_by_os = True
    if total.errors:
        print(f"warchive: {total.errors} damaged record(s) skipped, {total.records} read", file=sys.stderr)
        if total.records == 0:
            return 1  # not one record could be read
    return 0


def cmd_session(args: argparse.Namespace) -> int:
    import warnings

    def warn(message, category, filename, lineno, file=None, line=None):
        print(f"warchive: warning: {message}", file=sys.stderr)

    with warnings.catch_warnings():  # restores the warning filters and showwarning afterwards
        warnings.showwarning = warn
        warnings.simplefilter("always")
        return _session(args)


def _session(args: argparse.Namespace) -> int:
    from .capture import session_report as rep
    from .capture.session_db import SessionIndex, read_session

    out = sys.stdout
    if args.session_command == "show" and args.url:
        with SessionIndex(args.file, skip_errors=args.skip_errors) as ix:
            records = ix.lookup_all(args.url)
        if not records:
            print(f"warchive: {args.url}: not in {args.file}", file=sys.stderr)
            return 1
        out.write("\n\n".join(rep.show_record(r) for r in records) + "\n")
        return 0
    s = read_session(args.file, skip_errors=args.skip_errors)
    if args.session_command == "show":
        out.write(rep.show_all(s) + "\n")
    elif args.session_command == "failed":
        text, n = rep.failed_table(s)
        out.write(text + f"\n\n{n:,} URLs whose last attempt failed\n")
    elif args.session_command == "skipped":
        text, n = rep.skipped_table(s)
        out.write(text + f"\n\n{n:,} skip decisions\n")
    else:
        st = rep.stats(s)
        if args.json:
            import json

            out.write(json.dumps(st, indent=1, sort_keys=True) + "\n")
        else:
            out.write(rep.stats_text(st, top=args.top) + "\n")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from .warc.check import check_file

    status = 0
    for path in args.inputs:
        res = check_file(path)
        for f in res.problems:
            print(f"warchive: check: {f}", file=sys.stderr)
        if args.verbose:
            for f in res.warnings:
                print(f"warchive: warning: {f}", file=sys.stderr)
            print(f"{path}: {res.records} records, {len(res.problems)} problems, {len(res.warnings)} warnings")
        if res.problems:
            status = 1
    return status


def cmd_recompress(args: argparse.Namespace) -> int:
    from .warc.recompress import recompress

    n = recompress(args.input, args.output, "zstd" if args.zstd else "gzip", args.level)
    print(f"{n} records recompressed into {args.output}")
    return 0


def cmd_recover(args: argparse.Namespace) -> int:
    from .warc.check import recover

    if args.output and len(args.inputs) != 1:
        raise ArchiveError("--output names the result of one input file")
    for path in args.inputs:
        r = recover(path, output=args.output, dry_run=args.dry_run)
        verb = "would keep" if args.dry_run else "kept"
        print(f"{r.path}: {verb} {r.records} records ({r.size} bytes), cut {r.cut} bytes")
    return 0


COMMANDS = {"sort": cmd_sort, "merge": cmd_merge, "build": cmd_build, "zipnum": cmd_zipnum,
            "lookup": cmd_lookup, "serve": cmd_serve, "load": cmd_load, "record-index": cmd_record_index,
            "add": cmd_add, "compact": cmd_compact}
COMMANDS["session"] = cmd_session
COMMANDS["dedup-index"] = cmd_dedup_index
COMMANDS.update({"check": cmd_check, "recompress": cmd_recompress, "recover": cmd_recover})


def cmd_robots(args: argparse.Namespace) -> int:
    from .capture.robots import RobotsTxt

    if args.file == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(args.file, "rb") as f:
            data = f.read()
    rules = RobotsTxt.parse(data).rules_for(args.agent)
    for url in args.urls:
        d = rules.decide(url)
        word = "allowed" if d.allowed else "disallowed"
        print(f"{word}\t{url}\t{d.reason}" if args.explain else word)
    return 0


COMMANDS["robots"] = cmd_robots


def _pairs(values: List[str], what: str) -> dict:
    out = {}
    for v in values:
        k, sep, val = v.partition("=")
        if not sep or not k or not val:
            raise SystemExit(f"warchive crawl: error: {what} {v!r}: expected NAME=VALUE")
        out[k.strip()] = val.strip()
    return out


def cmd_crawl(args: argparse.Namespace) -> int:
    import asyncio
    import signal

    from .capture.crawler import CrawlConfig, Crawler, Progress, screenshots_available

    if args.screenshots and not screenshots_available():
        print("warchive crawl: error: --screenshots is not available in this build "
              "(warchive.capture.browser is missing)", file=sys.stderr)
        return 2
    if args.resume:
        coll = args.output
        session = None
        from .capture.crawler import latest_session

        session = latest_session(args.resume)
        if coll is None:   # COLL/crawls/ID
            coll = os.path.dirname(os.path.dirname(os.path.abspath(session)))
        crawler = Crawler(None, coll, session_dir=session, resume=True, retry_failed=args.retry_failed)
    else:
        if not args.seeds or not args.output:
            print("warchive crawl: error: give SEEDS and -o COLLECTION (or --resume SESSION)", file=sys.stderr)
            return 2
        if args.retry_failed:
            print("warchive crawl: error: --retry-failed goes with --resume", file=sys.stderr)
            return 2
        ports = {k: int(v) for k, v in _pairs(args.port_map, "--port-map").items()}
        cfg = CrawlConfig(seeds=args.seeds, delay_factor=args.delay_factor, min_delay=args.min_delay,
                          max_delay=args.max_delay, crawl_delay_cap=args.crawl_delay_cap,
                          politeness_off=args.no_politeness, scope=args.scope, include=args.include,
                          exclude=args.exclude, max_hops=args.max_hops, max_trans_hops=args.max_trans_hops,
                          robots=args.robots, dedup=args.dedup, dedup_min_size=args.dedup_min_size,
                          digest=args.digest, warc_max_size=args.warc_max_size, compression=args.compression,
                          prefix=args.prefix, fsync=not args.no_fsync, user_agent=args.user_agent,
                          from_=args.from_, concurrency=args.concurrency,
                          resolve=_pairs(args.resolve, "--resolve"), port_map=ports, read_timeout=args.timeout,
                          max_size=args.max_size, max_retries=args.max_retries, seen=args.seen, max_urls=args.max_urls,
                          revisit_after=args.revisit_after, revisits=args.revisits if args.revisit_after else 0,
                          index_every=args.index_every, screenshots=args.screenshots)
        crawler = Crawler(cfg, args.output)
    show = not args.quiet and sys.stderr.isatty()
    progress = Progress(sys.stderr) if show else None
    crawler.progress = progress
    if not args.quiet:
        print(f"warchive crawl: session {crawler.session_dir}", file=sys.stderr)

    async def run() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, crawler.stop)
            except (NotImplementedError, RuntimeError):
                pass
        await crawler.run()

    asyncio.run(run())
    if progress is not None:
        progress.clear()
    if not args.quiet:
        print(crawler.summary(), file=sys.stderr)
    return 0


COMMANDS["crawl"] = cmd_crawl


class _Args:
    """The attributes argparse would give (see _index_args)."""

    def __init__(self, **kw: object) -> None:
        self.__dict__.update(kw)


_INDEX_FLAGS = {"-11": "cdx11", "--cdx11": "cdx11", "-p": "post_append", "--post-append": "post_append",
                "-s": "sort", "--sort": "sort", "--verify": "verify", "--skip-errors": "skip_errors"}
_INDEX_VALUES = {"-o": "output", "--output": "output", "--records": "records", "--dir-root": "dir_root",
                 "-j": "jobs", "--jobs": "jobs"}


def _index_args(argv: List[str]) -> Optional["argparse.Namespace"]:
    """The arguments of `warchive index` written the plain way (each option spelled out whole and
    its value the next argument, the inputs together) as argparse parses them, without importing
    argparse (and re, enum, gettext, locale with it: 7 ms of start-up, 3 % of `warchive index -j 2`
    on the benchmark corpus). Anything else (abbreviations, --opt=value, -j2, help, mistakes) gives
    None and argparse decides; tests hold the two to the same answers on generated command lines."""
    if not argv or argv[0] != "index":
        return None
    a: dict = dict(command="index", inputs=[], output=None, cdx11=False, records=None, dir_root=None,
             post_append=False, sort=False, jobs=1, verify=False, skip_errors=False)
    inputs: List[str] = []
    closed = False   # an option came after the inputs: argparse takes one run of them only
    k = 1
    while k < len(argv):
        arg = argv[k]
        k += 1
        if not arg.startswith("-"):
            if closed:
                return None
            inputs.append(arg)
            continue
        closed = bool(inputs)
        if arg in _INDEX_FLAGS:
            a[_INDEX_FLAGS[arg]] = True
        elif arg in _INDEX_VALUES:
            if k >= len(argv) or argv[k].startswith("-"):
                return None
            value = argv[k]
            k += 1
            if _INDEX_VALUES[arg] == "jobs":
                try:
                    a["jobs"] = int(value)
                except ValueError:
                    return None
            else:
                a[_INDEX_VALUES[arg]] = value
        else:
            return None
    if not inputs:
        return None
    a["inputs"] = inputs
    return _Args(**a)  # type: ignore[return-value]  # read as a Namespace is


def main(argv: Optional[List[str]] = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    args = _index_args(argv)
    extra: List[str] = []
    if args is None:
        parser = _parser(argv[0] if argv and not argv[0].startswith("-") else None)
        args, extra = parser.parse_known_args(argv)
        if args.command != "cdx" and extra:
            parser.error("unrecognized arguments: " + " ".join(extra))
        if args.command is None:
            parser.print_help()
            return 2
    try:
        if args.command == "index":
            return cmd_index(args)
        if args.command == "cdx":
            return cmd_cdx(args, extra)
        if args.command in COMMANDS:
            return COMMANDS[args.command](args)
    except ArchiveError as e:
        print(f"warchive: error: {e}", file=sys.stderr)
        return 1
    except FileNotFoundError as e:
        print(f"warchive: error: {e.filename}: no such file or directory", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    return 2


_torn_down_by_os = False   # set by commands that leave nothing behind for the interpreter's tear-down


def run() -> None:
    """The `warchive` console script: main(), then exit.

    After `warchive index` (its output already fsynced and renamed, nothing left for atexit
    handlers, finalizers or threads) the process ends with os._exit once standard output
    and error are flushed: tearing down the interpreter costs 5-10 ms, 2-4 % of indexing
    the benchmark corpus on two cores. Every other command exits the ordinary way."""
    rc = main()
    if _torn_down_by_os:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except BrokenPipeError:
            pass
        else:
            os._exit(rc)
    sys.exit(rc)


if __name__ == "__main__":
    run()
