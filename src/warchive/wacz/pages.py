"""pages/pages.jsonl: the entry points of a WACZ, one JSON object a line after a header line.

    {"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}
    {"id": "<hex>", "url": "https://example.com/", "ts": "2026-12-01T12:00:00Z", "title": "https://example.com/"}

``pages_from_index`` lists a collection's HTML captures answered 200 (no
request-body keys, no revisits), once per URL and time, titled by their URL as
py-wacz titles pages it has no title for. ``check_pages`` refuses a given file
that is not JSON lines with that header and ``url`` and ``ts`` on every page.
"""

from __future__ import annotations

import hashlib
import json
from typing import Iterable, Iterator, List

from ..errors import PagesError

HEADER = {"format": "json-pages-1.0", "id": "pages", "title": "All Pages"}
HTML = ("text/html", "application/xhtml+xml")


def iso(ts: str) -> str:
    """A 14-digit timestamp as RFC 3339 (missing digits as pywb pads them)."""
    t = (ts + "00000101000000"[len(ts):])[:14] if len(ts) < 14 else ts[:14]
    return f"{t[0:4]}-{t[4:6]}-{t[6:8]}T{t[8:10]}:{t[10:12]}:{t[12:14]}Z"


def _pages(lines: Iterable[bytes]) -> Iterator[dict]:
    seen = set()
    for line in lines:
        key, ts, rest = line.split(b" ", 2) if line.count(b" ") >= 2 else (b"", b"", b"")
        if b"__wb_method=" in key or not rest.startswith(b"{"):
            continue
        try:
            f = json.loads(rest)
        except ValueError:
            continue
        mime = str(f.get("mime", "")).split(";")[0].strip().lower()
        if str(f.get("status")) != "200" or mime not in HTML or not f.get("url"):
            continue
        t = ts.decode()
        if (f["url"], t) in seen:
            continue
        seen.add((f["url"], t))
        ident = hashlib.sha256(f"{t}/{f['url']}".encode()).hexdigest()[:24]
        yield {"id": ident, "url": f["url"], "ts": iso(t), "title": f["url"]}


def pages_from_index(lines: Iterable[bytes]) -> bytes:
    """pages.jsonl for the captures of sorted CDXJ ``lines`` (ordered by time, then URL)."""
    pages = sorted(_pages(lines), key=lambda p: (p["ts"], p["url"]))
    out: List[str] = [json.dumps(HEADER)] + [json.dumps(p) for p in pages]
    return ("\n".join(out) + "\n").encode()


def check_pages(name: str, data: bytes) -> int:
    """The number of pages of a pages.jsonl, refused (PagesError) unless it is one."""
    n = 0
    for i, raw in enumerate(data.split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            d = json.loads(raw)
        except ValueError:
            raise PagesError(f"{name} line {i} is not JSON") from None
        if not isinstance(d, dict):
            raise PagesError(f"{name} line {i} is not a JSON object")
        if i == 1 and "format" in d:
            continue
        if not isinstance(d.get("url"), str) or not isinstance(d.get("ts"), str):
            raise PagesError(f"{name} line {i}: a page needs 'url' and 'ts'")
        n += 1
    return n


__all__ = ["HEADER", "PagesError", "check_pages", "iso", "pages_from_index"]
