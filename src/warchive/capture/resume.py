"""What a resumed crawl takes over from the run that was killed: the journal's facts, its robots.txt
answers, and its WARC files cut short.

The session journal is the truth (the frontier may have lost an ``F`` line, the WARC
writer a record): ``read_previous`` says which URLs are finished (not fetched again:
skipped ones, and fetched ones but a 429/503, which is followed by its failed entry;
a final failure unless ``--retry-failed``) and when each host was last fetched (its
first fetch after the restart still waits its delay). ``restore_robots`` gives the
cache the robots.txt answers the killed run archived (3xx answers are left out: the
redirect is followed again; so are 429 and 5xx: unreachable then, asked again now).
``recover_warcs`` cuts the run's ``.open`` WARC files after their last whole record.
This module reads and repairs; it must not fetch or queue.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Dict, List, Set, Tuple

from ..errors import ArchiveError
from ..warc import open as open_warc
from ..warc.recover import recover
from ..warc.content import content_stream
from .politeness import host_key
from .robots_cache import RobotsCache
from .session import Session, read_session

__all__ = ["Previous", "read_previous", "recover_warcs", "restore_robots"]


@dataclass
class Previous:
    """What the journal of the killed run says."""

    session: Session
    finished: Set[str]                          # original URLs not to fetch again
    last_fetch: Dict[str, Tuple[float, float]]  # host -> (end of its last fetch, Unix time; its duration)


def read_previous(journal: str) -> Previous:
    """Read the journal of a killed run (damaged lines skipped)."""
    s = read_session(journal, skip_errors=True)
    finished: Set[str] = set()
    last_fetch: Dict[str, Tuple[float, float]] = {}
    for r in s.records():
        # a fetch entry is written as the fetch ends: its time is when the host was last busy
        for e in r.fetches:
            url = e.hop or r.url
            if not e.t or not url.startswith(("http:", "https:")):
                continue
            try:
                key = host_key(url)
                end = datetime.strptime(e.t, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()
            except (ArchiveError, ValueError):
                continue
            if end > last_fetch.get(key, (0.0, 0.0))[0]:
                last_fetch[key] = (end, float(e.duration or 0.0))
        st = r.state
        if st == "skipped" or (st == "fetched" and r.status not in (429, 503)):
            finished.add(r.url)   # (a 429/503 is followed by its failed entry)
        elif st == "failed":
            last: Dict[str, Any] = next((f for f in reversed(r.fields()) if f.get("kind") == "failed"), {})
            if not last.get("retry"):      # a final failure: --retry-failed brings it back
                finished.add(r.url)
    return Previous(s, finished, last_fetch)


def recover_warcs(archive_dir: str, session: Session) -> List[str]:
    """Cut the ``.open`` files of `archive_dir` that `session` wrote records into after their last
    whole record; the paths of the files recovered."""
    # only files this session wrote records into: another crawl into the collection may be
    # writing its own .open files right now
    ours = {os.path.basename(e.warc or "") for r in session.records() for e in r.records}
    opened = sorted(n for n in os.listdir(archive_dir) if n.endswith(".open") and n[:-5] in ours)
    return [recover(os.path.join(archive_dir, n)).path for n in opened]


def restore_robots(cache: RobotsCache, session: Session, archive_dir: str) -> None:
    """Put the robots.txt answers `session` archived (in WARC files of `archive_dir`) into `cache`."""
    for r in session.records():
        if not r.url.endswith("/robots.txt") or r.state != "fetched":
            continue
        resp = [e for e in r.records if e.type in ("response", "revisit")]
        st = r.status
        if not resp or st is None or not (200 <= st < 300 or (400 <= st < 500 and st != 429)):
            continue   # 3xx: followed again; 429, 5xx: unreachable then, asked again now
        e = resp[-1]
        path = os.path.join(archive_dir, os.path.basename(e.warc or ""))
        if not os.path.exists(path):
            continue
        try:
            with open_warc(path, offset=e.offset) as records:
                for rec in records:
                    body = content_stream(rec).read() if rec.type == "response" else b""
                    headers = list(rec.http.items()) if rec.http is not None else []
                    cache.update(r.url, (st, headers, body, r.url))
                    break
        except ArchiveError:
            continue
