"""The keys of a WACZ's index lines made warchive's own: each recomputed from the line's ``url``.

A query finds a capture by warchive's key of the URL asked (the SURT key cdxj-indexer and
pywb compute, warchive.index.cdx.url_key). WACZ files written by other tools may key the same
URL otherwise: ArchiveWeb.page and wabac.js percent-encode ``:``, ``@``, ``;`` and ``|`` in the
query (``...family=source+sans+pro%3Awght%40700%3B900``) where the SURT key keeps them. Such a
line is in the index but no lookup reaches it. ``own_line`` gives a line the key warchive's
indexer would give its ``url`` (with ``__wb_method=...`` and the request body appended for a
POST or PUT capture, as the indexer appends them), and ``Rekeyed`` gives the lines of a stream
those keys as they are read (they are then out of order: warchive.wacz.indexsegment sorts them).

A line without a JSON block or without a ``url`` keeps its key. This module reads no files.
"""

from __future__ import annotations

import json
from typing import Iterable, Iterator, Optional

from ..errors import UrlError
from ..index.cdx import url_key

BODY_METHODS = ("POST", "PUT")   # the captures whose key carries the request (warchive.index.postbody)


def own_key(url: str, method: Optional[str] = None, request_body: Optional[str] = None) -> str:
    """Warchive's key of a capture of ``url`` (of a ``method`` POST or PUT with ``request_body``, the
    query the indexer made of the body)."""
    if method is not None and method.upper() in BODY_METHODS:
        url += ("&" if "?" in url else "?") + "__wb_method=" + method + ("&" + request_body if request_body else "")
    return url_key(url)


def own_line(line: bytes) -> Optional[bytes]:
    """``line`` with warchive's key of its ``url`` when its key is another; None when it is the
    same, or the line has no JSON block with a ``url``."""
    key, sep, rest = line.partition(b" ")
    ts, sep2, block = rest.partition(b" ")
    if not sep2 or not block.startswith(b"{"):
        return None
    try:
        fields = json.loads(block)
        url = fields.get("url")
        if not isinstance(url, str):
            return None
        method, body = fields.get("method"), fields.get("requestBody")
        new = own_key(url, method if isinstance(method, str) else None, body if isinstance(body, str) else None)
        new_b = new.encode("utf-8", "surrogateescape")
    except (ValueError, AttributeError, UrlError):   # (UnicodeError is a ValueError)
        return None
    return None if new_b == key else new_b + b" " + rest


class Rekeyed:
    """``lines`` with warchive's keys, each given as it is read; ``changed`` counts the keys
    recomputed so far."""

    def __init__(self, lines: Iterable[bytes]) -> None:
        self.lines = lines
        self.changed = 0

    def __iter__(self) -> Iterator[bytes]:
        for line in self.lines:
            new = own_line(line)
            if new is None:
                yield line
            else:
                self.changed += 1
                yield new


__all__ = ["Rekeyed", "own_key", "own_line"]
