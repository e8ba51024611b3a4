"""`warchive session show|failed|skipped|stats`: what a crawl session's journal says.

The command is ``session(args)`` and its options ``session_arguments(p)``
(warchive.cli.commands explains the registry).
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from argparse import ArgumentParser, Namespace
from typing import Any, TextIO

from ..capture.session import SessionIndex, read_session
from ..capture.session import report
from ..capture.session.dirs import JOURNAL, latest_session
from ..errors import ArchiveError


SESSION_ACTIONS = (
    ("show", "every URL (or one URL, any of its redirect chain) with its chain and records"),
    ("failed", "URLs whose last attempt failed, with reason and time (what --retry-failed takes)"),
    ("skipped", "dedup skip decisions and other deliberate skips, with what they duplicate"),
    ("stats", "counts by state, status, MIME type and host; bytes; duration"),
)


def session_arguments(p: ArgumentParser) -> None:
    actions = p.add_subparsers(dest="session_command", metavar="ACTION", required=True)
    for name, help_ in SESSION_ACTIONS:
        a = actions.add_parser(name, help=help_, description=help_)
        a.add_argument("file", metavar="PATH", help="a session journal, the crawl's directory (the one the crawl "
                       "printed) or the collection (its latest crawl)")
        if name == "show":
            a.add_argument("url", nargs="?", metavar="URL", help="one URL (any URL of its redirect chain)")
        if name == "stats":
            a.add_argument("--top", type=int, default=10, help="rows per table (default 10)")
            a.add_argument("--json", action="store_true", help="the counts as one JSON object")
        a.add_argument("--skip-errors", action="store_true",
                       help="skip damaged lines in the middle of the journal (with a warning) instead of stopping")


def session(args: Namespace) -> int:
    """Read a crawl session's journal and print tables: show, failed, skipped, stats."""
    def warn(message: Any, category: Any, filename: Any, lineno: Any, file: Any = None, line: Any = None) -> None:
        print(f"warchive: warning: {message}", file=sys.stderr)

    with warnings.catch_warnings():  # restores the warning filters and showwarning afterwards
        warnings.showwarning = warn
        warnings.simplefilter("always")
        return _session(args, sys.stdout)


class SessionPathError(ArchiveError):
    """A path that names no session journal."""


def journal_path(path: str) -> str:
    """The journal a path names: the journal itself, a crawl session directory's, or a
    collection's latest crawl's; a SessionPathError saying what the path is otherwise."""
    journal = path
    if os.path.isdir(path):
        try:
            journal = os.path.join(latest_session(path), JOURNAL)
        except ArchiveError as e:
            raise SessionPathError(str(e)) from None
        if not os.path.isfile(journal):
            raise SessionPathError(f"{path}: its crawl has no {JOURNAL} yet (did it start?)")
    elif not os.path.exists(path):
        raise SessionPathError(f"{path}: no such file or directory")
    if os.path.getsize(journal) == 0:
        raise SessionPathError(f"{journal}: empty: not a session journal (a journal begins with its version line)")
    return journal


def _session(args: Namespace, out: TextIO) -> int:
    args.file = journal_path(args.file)
    if args.session_command == "show" and args.url:
        with SessionIndex(args.file, skip_errors=args.skip_errors) as ix:
            records = ix.lookup_all(args.url)
        if not records:
            print(f"warchive: {args.url}: not in {args.file}", file=sys.stderr)
            return 1
        out.write("\n\n".join(report.show_record(r) for r in records) + "\n")
        return 0
    s = read_session(args.file, skip_errors=args.skip_errors)
    if args.session_command == "show":
        out.write(report.show_all(s) + "\n")
    elif args.session_command == "failed":
        text, n = report.failed_table(s)
        out.write(text + f"\n\n{n:,} URLs whose last attempt failed\n")
    elif args.session_command == "skipped":
        text, n = report.skipped_table(s)
        out.write(text + f"\n\n{n:,} skip decisions\n")
    elif args.json:
        out.write(json.dumps(report.stats(s), indent=1, sort_keys=True) + "\n")
    else:
        out.write(report.stats_text(report.stats(s), top=args.top) + "\n")
    return 0
