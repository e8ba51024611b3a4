"""`warchive cdx`, `lookup`: reading index lines back (`load`, which reads records, is cli/load.py).

Each command is a function ``NAME(args)`` and its options ``NAME_arguments(p)``
(warchive.cli.commands explains the registry). `warchive cdx` declares every
parameter of the CDX API (docs/cdx-api.md) as an option, so a misspelt one is
a usage error rather than a parameter the server would ignore.
"""

from __future__ import annotations

import json
import os
import sys
from argparse import ArgumentParser, Namespace
from typing import BinaryIO, Callable, List, Optional, Sequence, Tuple
from urllib.parse import urlencode

from ..index.query import Answer, Index
from ..index.sources import check_source_dir
from . import paths
from .commands import UsageError

# The CDX API's parameters (docs/cdx-api.md R4 and W1): name, metavar, help. `filter` and
# `collapse` may be given more than once.
CDX_PARAMETERS: Tuple[Tuple[str, str, str], ...] = (
    ("url", "URL", "the URL (a trailing * means matchType=prefix, a leading *. domain); required"),
    ("matchType", "TYPE", "exact (default), prefix, host or domain"),
    ("from", "TS", "captures at or after this timestamp (1 to 14 digits)"),
    ("from_ts", "TS", "as --from (--from wins)"),
    ("to", "TS", "captures at or before this timestamp"),
    ("filter", "[!][=|~]FIELD:EXPR", "keep captures whose FIELD contains (=: equals, ~: matches) EXPR; "
                                    "! inverts; repeatable"),
    ("content_type", "MIME", "keep captures of this MIME type (replaces every --filter)"),
    ("collapseTime", "N", "of captures whose first N timestamp digits and status are the same, keep the first"),
    ("collapse", "FIELD[:N]", "drop a capture whose FIELD (first N characters) equals the last one kept; repeatable"),
    ("closest", "TS", "order by distance from this timestamp ('now': the current time)"),
    ("sort", "ORDER", "reverse or closest"),
    ("reverse", "BOOL", "newest first (as --sort reverse)"),
    ("limit", "N", "at most N captures (negative: the last N)"),
    ("fastLatest", "BOOL", "exact queries: the latest captures without reading the others (limit -1 by default)"),
    ("fl", "FIELDS", "comma-separated fields to print"),
    ("fields", "FIELDS", "as --fl (--fields wins)"),
    ("output", "FORMAT", "cdxj (default), json, text or link"),
    ("memento_format", "FORMAT", "with --output link: the URL of each memento, from {url} and {timestamp}"),
    ("resolveRevisits", "BOOL", "give revisits their original's mime and status and orig.* fields"),
    ("page", "N", "page N of a ZipNum cluster's answer"),
    ("pageSize", "N", "ZipNum blocks per page (default 10)"),
    ("showNumPages", "BOOL", "print the number of pages instead of the captures"),
    ("showPagedIndex", "BOOL", "print the ZipNum summary lines of the page"),
    ("allowFuzzy", "BOOL", "when nothing matches, try pywb's fuzzy rules (default true)"),
    ("nosource", "BOOL", "'true': no source and source-coll fields"),
    ("sources", "NAMES", "the named sources only (comma-separated; ! inverts)"),
    ("showResumeKey", "BOOL", "after a limited answer, print the key to continue from"),
    ("resumeKey", "KEY", "continue after the capture this key names"),
)
REPEATABLE = ("filter", "collapse")


def cdx_arguments(p: ArgumentParser) -> None:
    p.add_argument("sources", nargs="+", metavar="SOURCE",
                   help="collection directories, segments, ZipNum .idx files, sorted .cdx/.cdxj files")
    p.add_argument("--coll", default="cdx", help="collection name for loose index files (default cdx)")
    g = p.add_argument_group("CDX API parameters (docs/cdx-api.md)")
    for name, metavar, help_ in CDX_PARAMETERS:
        if name in REPEATABLE:
            g.add_argument("--" + name, dest="p_" + name, metavar=metavar, help=help_, action="append")
        else:
            g.add_argument("--" + name, dest="p_" + name, metavar=metavar, help=help_)


def check_sources(sources: Sequence[str]) -> None:
    """Each source exists, and a directory is a collection (archive/ or indexes/ in it) or holds
    index files (the files themselves are checked as they open: warchive.index.sources)."""
    for p in sources:
        if not os.path.exists(p):
            raise FileNotFoundError(2, "no such collection or index file", p)
        if os.path.isdir(p):
            check_source_dir(p)


def cdx_query(args: Namespace) -> List[Tuple[str, str]]:
    """The query parameters of a `warchive cdx` command line, in the table's order."""
    out: List[Tuple[str, str]] = []
    for name, _, _ in CDX_PARAMETERS:
        value = getattr(args, "p_" + name)
        if value is None:
            continue
        for v in value if name in REPEATABLE else [value]:
            out.append((name, v))
    return out


def cdx(args: Namespace) -> int:
    """Print the CDX API's answer, byte for byte what `GET /COLL/cdx?...` of `warchive serve`
    answers, over any mix of collections, segments, ZipNum clusters and sorted CDX(J) files.

    Every API parameter is an option: `--url example.com/* --filter =status:200 --output json`.
    A parameter the API refuses (its 400) is a usage error: its message on one line, exit
    status 2; any other refusal, exit status 1 (with the status code on stderr)."""
    check_sources(args.sources)
    with Index(*args.sources, coll=args.coll) as idx:
        ans = idx.answer(urlencode(cdx_query(args)))
        if ans.status == 400:
            print(f"warchive cdx: error: {_message(ans)}", file=sys.stderr)
            return 2
        out = sys.stdout.buffer
        for chunk in ans.body:
            out.write(chunk)
        out.flush()
    if ans.status != 200:
        print(f"warchive: {ans.status}", file=sys.stderr)
        return 1
    return 0


def _message(ans: Answer) -> str:
    """The message of the API's error body ({"message": ...})."""
    body = ans.read()
    try:
        return str(json.loads(body)["message"])
    except (ValueError, KeyError, TypeError):
        return body.decode("utf-8", "replace").strip()


def lookup_arguments(p: ArgumentParser) -> None:
    p.add_argument("url", metavar="URL", help="the URL whose captures to print")
    p.add_argument("sources", nargs="*", metavar="SOURCE",
                   help="collections and index files (default: the current directory as a collection)")


def lookup(args: Namespace) -> int:
    """Print the index lines of one URL's captures (exact match, no fuzzy fallback), as
    `warchive cdx SOURCE... --url URL --allowFuzzy false` does; exit status 1 when the lookup is
    refused (an unreadable URL), 0 with no output when there are none."""
    sources = args.sources or ["."]
    check_sources(sources)
    with Index(*sources) as idx:
        ans = idx.answer({"url": args.url, "matchType": "exact", "allowFuzzy": "false"})
        for chunk in ans.body:
            sys.stdout.buffer.write(chunk)
    return 0 if ans.status == 200 else 1
