"""Screenshots of archived pages found again: the captures of a page's screenshot records, and their PNGs.

    find_screenshots("collections/web", url)              # the captures, oldest first
    find_screenshots(index, url, closest="20261129")      # closest to a time first
    png, meta = load_screenshot(capture, index)           # the PNG and its WARC-JSON-Metadata

A screenshot record's index key is what the SURT kernel makes of ``urn:screenshot:``
+ page URL (the URI lower-cased and canonicalized, not host-reversed):
``screenshot_key`` computes it. ``find_screenshots`` looks screenshots up by page
URL, also under the http/https and www forms whose page key is the same
(``page_variants``), and under other crawlers' prefixes on request. Replay is their
user; the record's names are ``warchive.warc.screenshot``'s, shared with the
capture layer that writes them (``warchive.capture.browser``). This module reads;
it must not write records.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple, Union
from urllib.parse import urlsplit

from ..errors import ArchiveError
from ..index.capture import Capture
from ..index.query import Index
from ..surt import canonicalize, surt_or_url
from ..timestamps import timestamp_to_datetime
from ..warc.screenshot import JSON_METADATA, OTHER_PREFIXES, SCREENSHOT_PREFIX, screenshot_uri
from .load import load_capture

__all__ = ["IndexLike", "OTHER_PREFIXES", "SCREENSHOT_PREFIX", "find_screenshots", "load_screenshot",
           "page_variants", "screenshot_key"]

#: An ``Index``, or the path(s) of collections / index files to open one on.
IndexLike = Union[Index, str, os.PathLike[str], Sequence[Union[str, os.PathLike[str]]]]


def screenshot_key(page_url: str) -> str:
    """The index key (urlkey) of the screenshot records of ``page_url``: the SURT kernel's key of
    ``urn:screenshot:`` + URL, which is that URI lower-cased and canonicalized (query sorted,
    fragment and a trailing slash dropped) but not host-reversed, as cdxj-indexer writes it."""
    return canonicalize(screenshot_uri(page_url))


def page_variants(page_url: str) -> List[str]:
    """``page_url`` and the forms of it that share its SURT key but not its screenshot key:
    http/https and with/without ``www.`` (the surt package drops both from page keys)."""
    p = urlsplit(page_url)
    if p.scheme.lower() not in ("http", "https") or not p.hostname:
        return [page_url]
    rest = page_url.split("://", 1)[1]
    auth, sep, tail = rest.partition("/")
    hosts = [auth]
    bare = auth[4:] if auth.lower().startswith("www.") else None
    hosts.append(bare if bare is not None else "www." + auth)
    out: List[str] = []
    for scheme in ("http", "https") if p.scheme.lower() == "http" else ("https", "http"):
        for h in hosts:
            u = f"{scheme}://{h}{sep}{tail}"
            if u not in out:
                out.append(u)
    return [page_url] + [u for u in out if u != page_url]


def find_screenshots(index: IndexLike, page_url: str, *, variants: bool = True, closest: Optional[str] = None,
                     prefixes: Sequence[str] = (SCREENSHOT_PREFIX,)) -> List[Capture]:
    """The captures (records as ``Index.query`` gives them) of the screenshots of ``page_url``.

    ``index`` is an ``Index`` or the path(s) of collections / index files. Exact lookups of
    ``urn:screenshot:`` + URL (and, with ``variants``, of the http/https and www forms whose
    page key is the same), image captures only, oldest first, or closest to ``closest``
    (a 1-14 digit timestamp) first. ``prefixes`` may add other crawlers' prefixes
    (``OTHER_PREFIXES``: Browsertrix Crawler's ``urn:view:`` and others)."""
    if isinstance(index, Index):
        idx, own = index, False
    else:
        paths = [index] if isinstance(index, (str, os.PathLike)) else list(index)
        idx, own = Index(*[os.fspath(p) for p in paths]), True
    try:
        want = surt_or_url(page_url)
        seen: Set[Tuple[Any, Any]] = set()
        out: List[Capture] = []
        for prefix in prefixes:
            for u in page_variants(page_url) if variants else [page_url]:
                try:
                    caps = idx.query(url=prefix + u, matchType="exact", allowFuzzy="false")
                except ArchiveError:
                    continue
                for c in caps:
                    key = (c.get("filename"), c.get("offset"))
                    if key in seen or not str(c.get("mime", "")).startswith("image/"):
                        continue
                    if u != page_url and surt_or_url(str(c.get("url", ""))[len(prefix):]) != want:
                        continue
                    seen.add(key)
                    out.append(c)
    finally:
        if own:
            idx.close()
    if closest:
        target = timestamp_to_datetime(closest)
        out.sort(key=lambda c: (abs((timestamp_to_datetime(str(c["timestamp"])) - target).total_seconds()),
                                str(c["timestamp"])))
    else:
        out.sort(key=lambda c: str(c["timestamp"]))
    return out


def load_screenshot(capture: Capture, index: Optional[IndexLike] = None,
                    archive_paths: Optional[Sequence[str]] = None) -> Tuple[bytes, Dict[str, Any]]:
    """The PNG bytes and the metadata (WARC-JSON-Metadata, {} when absent) of a screenshot capture
    that ``find_screenshots`` returned."""
    with load_capture(capture, index=index, archive_paths=archive_paths) as cap:
        data = cap.read()
        raw = cap.warc_headers.get(JSON_METADATA)
    try:
        meta = json.loads(raw) if raw else {}
    except ValueError:
        meta = {}
    return data, meta if isinstance(meta, dict) else {}
