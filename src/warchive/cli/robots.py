"""`warchive robots`: is each URL allowed by this robots.txt (as Google's parser reads it, or RFC 9309)?

The command is ``robots(args)`` and its options ``robots_arguments(p)``
(warchive.cli.commands explains the registry).
"""

from __future__ import annotations

import sys
from argparse import ArgumentParser, Namespace

from ..capture.robots import GOOGLE, RFC, RobotsTxt


def robots_arguments(p: ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="the robots.txt file ('-' for standard input)")
    p.add_argument("urls", nargs="+", metavar="URL", help="absolute URLs or paths (/dir/page.html)")
    p.add_argument("-a", "--agent", required=True, metavar="NAME",
                   help="the crawler's product token or user-agent string (matched case-insensitively)")
    p.add_argument("-v", "--explain", action="store_true",
                   help="also print the URL and the rule that decided (tab-separated)")
    p.add_argument("--rfc", action="store_true",
                   help="read the file strictly as RFC 9309 says (default: as Google's parser reads it; "
                        "URLs are then compared as given, so give them %%-encoded)")


def robots(args: Namespace) -> int:
    """Print 'allowed' or 'disallowed' for each URL, as a crawler with the given user agent reads
    the robots.txt FILE (Google's reading, or RFC 9309's with --rfc)."""
    if args.file == "-":
        data = sys.stdin.buffer.read()
    else:
        with open(args.file, "rb") as f:
            data = f.read()
    rules = RobotsTxt.parse(data, mode=RFC if args.rfc else GOOGLE).rules_for(args.agent)
    for url in args.urls:
        d = rules.decide(url)
        word = "allowed" if d.allowed else "disallowed"
        print(f"{word}\t{url}\t{d.reason}" if args.explain else word)
    return 0
