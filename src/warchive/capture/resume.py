"""What a resumed crawl takes over from the run that was killed: the journal's facts, its robots.txt
answers, its WARC files cut short and the dedup digests it had not flushed.

The session journal is the truth (the frontier may have lost an ``F`` line, the WARC
writer a record): ``read_previous`` says which URLs are finished (not fetched again:
skipped ones, and fetched ones but a 429/503, which is followed by its failed entry;
a final failure unless ``--retry-failed``), which were in flight (a ``fetching`` entry
and no outcome after it: requested again, the only URLs a kill lets the crawl request
twice), which were never queued (``dns:`` records, robots.txt as a prerequisite, seeds
out of scope: they do not count towards ``max_urls``) and when each host was last fetched (its first
fetch after the restart still waits its delay). ``restore_robots`` gives the cache the robots.txt answers the killed
run archived, a revisit through the original it names (3xx answers are left out: the
redirect is followed again; so are 429 and 5xx: unreachable then, asked again now).
``recover_warcs`` cuts the run's ``.open`` WARC files after their last whole record;
``recover_digests`` puts the originals the run wrote into the digest index (those of
the files just cut, and any the journal names that the index lacks).
This module reads and repairs; it must not fetch or queue.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

from ..errors import ArchiveError
from ..index.query import Index
from ..warc import open as open_warc
from ..warc.recover import recover, valid_prefix
from ..warc.content import content_stream
from .dedup import DigestIndex, seed_from_records, seed_from_warcs
from .politeness import host_key
from .robots_cache import RobotsCache
from .session import Session, UrlRecord, read_session

__all__ = ["Previous", "last_closed", "read_previous", "recover_digests", "recover_warcs", "restore_robots"]

_OUTCOMES = frozenset(("fetch", "failed", "skipped"))


@dataclass
class Previous:
    """What the journal of the killed run says."""

    session: Session
    finished: Set[str]                          # original URLs not to fetch again
    last_fetch: Dict[str, Tuple[float, float]]  # host -> (end of its last fetch, Unix time; its duration)
    interrupted: Set[str]                       # requested (a "fetching" entry), no outcome after it
    not_queued: Set[str]                        # prerequisites (dns:, robots.txt), seeds out of scope


def read_previous(journal: str) -> Previous:
    """Read the journal of a killed run (damaged lines skipped)."""
    s = read_session(journal, skip_errors=True)
    finished: Set[str] = set()
    interrupted: Set[str] = set()
    last_fetch: Dict[str, Tuple[float, float]] = {}
    not_queued: Set[str] = set()
    for r in s.records():
        if _not_queued(r):
            not_queued.add(r.url)
        in_flight = False
        for e in r.entries:
            if e.kind == "fetching":
                in_flight = True
            elif e.kind in _OUTCOMES:
                in_flight = False
        if in_flight:
            interrupted.add(r.url)
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
    return Previous(s, finished, last_fetch, interrupted, not_queued)


def _not_queued(r: UrlRecord) -> bool:
    """A URL the crawl never queued: a ``dns:`` record, a robots.txt every attempt at which was
    a prerequisite (hops ending in P; one a page linked to was queued as any URL is), a seed
    out of scope (skipped, and nothing else)."""
    if r.url.startswith("dns:"):
        return True
    if all(e.kind == "skipped" and e.reason == "scope" for e in r.entries):
        return True
    if not r.url.endswith("/robots.txt"):
        return False
    hops = [f.get("hops") for f in r.fields() if f.get("kind") in _OUTCOMES]
    return bool(hops) and all(isinstance(h, str) and h.endswith("P") for h in hops)


def _warcinfo_says(path: str, description: str) -> bool:
    """Whether the file's first record is a warcinfo whose ``description`` field is `description`."""
    want = f"description: {description}".encode("utf-8")
    try:
        with open_warc(path) as records:
            for rec in records:
                if rec.type != "warcinfo":
                    return False
                return want in content_stream(rec).read().splitlines()
    except (ArchiveError, OSError):
        return False
    return False


def _empty_since(path: str, since: str) -> bool:
    """Whether the file holds no whole record and its name's 17-digit timestamp is `since` or later:
    a file the killed run had just created when it died (its warcinfo not yet written)."""
    m = _STAMP.search(os.path.basename(path))
    if m is None or m.group(1) < since:
        return False
    return valid_prefix(path)[0] == 0


def recover_warcs(archive_dir: str, session: Session, description: Optional[str] = None) -> List[str]:
    """Cut the ``.open`` files of `archive_dir` that `session` wrote after their last whole record;
    the paths of the files recovered. A file is the session's when the journal names a record in
    it, or (`description`: the warcinfo's ``description`` field the session's files carry) when
    its warcinfo says so: a run killed before it journaled any record of a file it had opened.
    With `description`, a file without a whole record named after the killed run started (it
    was killed between creating the file and writing its warcinfo) is removed."""
    # only this session's files: another crawl into the collection may be writing its own
    # .open files right now
    ours = {os.path.basename(e.warc or "") for r in session.records() for e in r.records}
    runs = session.sessions
    since = _stamp17(runs[-1].t or "") if runs and description is not None else None
    out = []
    for n in sorted(os.listdir(archive_dir)):
        path = os.path.join(archive_dir, n)
        if not n.endswith(".open"):
            continue
        if n[:-5] in ours or (description is not None and _warcinfo_says(path, description)):
            out.append(recover(path).path)
        elif since and _empty_since(path, since):
            os.unlink(path)
    return out


def last_closed(archive_dir: str, session: Session) -> Optional[str]:
    """The newest closed WARC file of `archive_dir` that `session` names a record in: the one
    file whose index lines a kill can have lost (the crawl writes a closed file's lines when it
    writes the first record of the next file, after the rename), so the resumed run indexes it
    again (lines a segment holds already left out)."""
    ours = sorted({os.path.basename(e.warc or "") for r in session.records() for e in r.records} - {""})
    closed = [n for n in ours if not n.endswith(".open") and os.path.isfile(os.path.join(archive_dir, n))]
    return os.path.join(archive_dir, closed[-1]) if closed else None


_STAMP = re.compile(r"-(\d{17})-")


def _stamp17(t: str) -> Optional[str]:
    """A journal time (``2026-11-29T22:50:01.123456Z``) as a WARC file name's 17-digit timestamp."""
    digits = re.sub(r"[^0-9]", "", t)
    return digits[:17] if len(digits) >= 17 else None


def recover_digests(index: DigestIndex, session: Session, archive_dir: str, recovered: Sequence[str]) -> int:
    """Put into `index` the originals that `session` wrote and the index does not know: every one in
    the `recovered` files (a killed run's ``.open`` files, cut: what the journal names and what it
    had no time to name), and those of closed files that the journal names with a digest the index
    lacks (a kill between a rollover and the flush it triggers). Returns how many were added."""
    added = seed_from_warcs(index, recovered, skip_errors=True).added
    cut = {os.path.basename(p) for p in recovered}
    places: List[Tuple[str, int]] = []
    for r in session.records():
        resp = [e for e in r.records if e.type == "response" and e.warc and os.path.basename(e.warc) not in cut]
        if not resp:
            continue
        for f in r.fetches:
            if f.digest and f.status is not None and 200 <= f.status < 300 and index.get(f.digest) is None:
                places.extend((os.path.join(archive_dir, os.path.basename(e.warc or "")), e.offset or 0)
                              for e in resp)
                break
    if places:
        added += seed_from_records(index, places, skip_errors=True).added
    return added


def _bare(digest: Optional[str]) -> str:
    return (digest or "").strip().rsplit(":", 1)[-1].upper()


def _elsewhere(archive_dir: str, uri: str, digest: Optional[str]) -> Optional[Tuple[str, int]]:
    """Where the collection's index (of `archive_dir`'s collection) has a response of `uri` with the
    payload `digest` (an original from an earlier crawl)."""
    if not uri or not digest:
        return None
    try:
        with Index(os.path.dirname(archive_dir)) as ix:
            for c in ix.query(uri):
                if c.get("mime") != "warc/revisit" and _bare(c.get("digest")) == _bare(digest) and c.get("filename"):
                    return os.path.join(archive_dir, os.path.basename(str(c["filename"]))), int(c.get("offset") or 0)
    except (ArchiveError, OSError, ValueError):
        return None
    return None


def _robots_body(path: str, offset: int, ids: Dict[str, Tuple[str, int]], depth: int = 0) -> Optional[bytes]:
    """The payload of the robots.txt response at `offset` of `path`; for a revisit, its original's
    (found by WARC-Refers-To among the records of the session, `ids`, else through the collection's
    index). None when there is none."""
    with open_warc(path, offset=offset) as records:
        for rec in records:
            if rec.type == "response":
                return content_stream(rec).read()
            if rec.type != "revisit" or depth > 3:
                return None
            ref = (rec.headers.get("WARC-Refers-To") or "").strip()
            orig = ids.get(ref) or _elsewhere(os.path.dirname(path), rec.headers.get("WARC-Refers-To-Target-URI") or "",
                                              rec.headers.get("WARC-Payload-Digest"))
            return None if orig is None else _robots_body(orig[0], orig[1], ids, depth + 1)
    return None


def restore_robots(cache: RobotsCache, session: Session, archive_dir: str) -> None:
    """Put the robots.txt answers `session` archived (in WARC files of `archive_dir`) into `cache`; an
    answer archived as a revisit gets its original's body (an original that cannot be found leaves
    the answer out: robots.txt is fetched again, never taken as empty)."""
    ids: Dict[str, Tuple[str, int]] = {}
    for r in session.records():
        for e in r.records:
            if e.id and e.type == "response" and e.warc:
                ids[e.id] = (os.path.join(archive_dir, os.path.basename(e.warc)), e.offset or 0)
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
            body = _robots_body(path, e.offset or 0, ids)
            if body is None:
                continue
            with open_warc(path, offset=e.offset) as records:
                for rec in records:
                    headers = list(rec.http.items()) if rec.http is not None else []
                    cache.update(r.url, (st, headers, body, r.url))
                    break
        except (ArchiveError, OSError):
            continue
