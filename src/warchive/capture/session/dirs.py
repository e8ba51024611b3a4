"""Where a collection's crawl sessions live: ``COLL/crawls/ID/``, each with its settings and journal.

    COLL/crawls/ID/config.json        the crawl's settings (``--resume`` reads them)
    COLL/crawls/ID/session.journal    the session journal
    COLL/crawls/ID/crawl.log, frontier/, seen   the crawler's other files

A directory is a session when it holds ``config.json``; sessions sort by their ID (the
UTC time the crawl began). This module finds sessions; it must not read or write them.
"""

from __future__ import annotations

import os
from typing import List

from ..crawl_config import CrawlError

CONFIG = "config.json"
JOURNAL = "session.journal"


def session_dirs(collection: str) -> List[str]:
    """The crawl session directories of a collection, oldest first."""
    base = os.path.join(collection, "crawls")
    try:
        names = sorted(os.listdir(base))
    except (FileNotFoundError, NotADirectoryError):   # (a collection that is a file: none)
        return []
    return [os.path.join(base, n) for n in names if os.path.exists(os.path.join(base, n, CONFIG))]


def latest_session(path: str) -> str:
    """A session directory from a session directory or a collection (its latest crawl)."""
    if os.path.exists(os.path.join(path, CONFIG)):
        return path
    if os.path.isfile(path) and os.path.basename(path) == JOURNAL:
        return os.path.dirname(path) or "."
    dirs = session_dirs(path)
    if not dirs:
        raise CrawlError(f"{path}: neither a crawl session directory (with {CONFIG}) nor a collection "
                         "with crawls/; give the directory the crawl printed at its start")
    return dirs[-1]
