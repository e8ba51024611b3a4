"""The server's own HTML pages: the top frame with the banner, the list of collections, a
collection's home page (search by URL, prefix, domain), the captures of a URL (by year and
month) and the URLs under a prefix, and error pages.

Every value that comes from an archive or a request (URLs, titles, collection names, messages)
goes into a page through ``html.escape`` (attributes and text alike) or, for scripts, through
``client.script_json``; a template holds only our own markup. The templates are
``templates/*.html`` (``string.Template``: ``${name}`` placeholders, filled with escaped text).
"""

from __future__ import annotations

import functools
import html
import os
import re
from string import Template
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple
from urllib.parse import quote

from ..index.capture import Capture
from ..timestamps import timestamp_to_datetime
from .client import script_json
from .urls import ArchivalUrl, display_url

TEMPLATES = os.path.join(os.path.dirname(__file__), "templates")

# What the archived page may do in its frame when it has no origin of its own: run scripts,
# submit forms, open popups (outside the sandbox), but not reach the banner (no allow-same-origin:
# its origin is opaque) nor navigate the top window.
SANDBOX = ("allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox allow-modals "
           "allow-downloads allow-pointer-lock allow-presentation allow-orientation-lock")
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@functools.lru_cache(maxsize=None)
def _template(name: str) -> Template:
    with open(os.path.join(TEMPLATES, name), encoding="utf-8") as f:
        return Template(f.read())


def esc(value: object) -> str:
    """Text for HTML, in an element or a quoted attribute."""
    return html.escape(str(value), quote=True)


def render(name: str, **values: str) -> bytes:
    """Template ``name`` filled with ``values`` (already HTML: escape what is not ours)."""
    return _template(name).substitute(values).encode("utf-8")


def human_date(ts: str) -> str:
    """``20261201113933`` as ``1 Dec 2026, 11:39:33``."""
    try:
        dt = timestamp_to_datetime(ts)
    except (ValueError, OverflowError):
        return ts
    return f"{dt.day} {MONTHS[dt.month - 1]} {dt.year}, {dt:%H:%M:%S}"


def iso_date(ts: str) -> str:
    try:
        return timestamp_to_datetime(ts).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (ValueError, OverflowError):
        return ""


def page(title: str, heading: str, content: str, *, static: str, root_url: str,
         crumbs: Sequence[Tuple[str, str]] = ()) -> bytes:
    """A page of ours (``content`` is HTML already escaped)."""
    trail = "".join(f' / <a href="{esc(u)}">{esc(t)}</a>' for t, u in crumbs)
    return render("page.html", title=esc(title), heading=esc(heading), content=content, static=esc(static),
                  root_url=esc(root_url), crumbs=trail)


# --------------------------------------------------------------------------- the top frame

def live_href(url: str) -> str:
    """``url`` as the banner's link to the live web: only http(s) and ftp(s) URLs; else ``#``
    (a ``javascript:`` or ``data:`` URL stays text)."""
    return url if re.match(r"(?i)(https?|ftps?)://", url) else "#"


def frame_page(*, coll: str, url: str, timestamp: str, captures: Sequence[Capture], content_url: str,
               full_prefix: str, static: str, coll_url: str, banner: bool = True, sandboxed: bool = True,
               resources: Sequence[Tuple[str, str]] = ()) -> bytes:
    """The top frame: the banner (capture date, original URL, previous and next capture, the
    count of captures linking to their calendar, associated resources) and the page's iframe.
    The banner script follows the frame as it navigates (messages from the frame's client
    script) and draws the calendar from the CDX API."""
    stamps = [c.timestamp for c in captures]
    prev_ts = max((t for t in stamps if t < timestamp), default=None)
    next_ts = min((t for t in stamps if t > timestamp), default=None)

    def at(ts: Optional[str]) -> str:
        return full_prefix + str(ArchivalUrl(url, ts)) if ts else "#"

    info = {"coll": coll, "prefix": full_prefix, "url": url, "timestamp": timestamp,
            "cdx": f"{full_prefix}cdx", "captures": stamps[-5000:]}
    n = len(stamps)
    res = "".join(f'<a class="wa-res" href="{esc(href)}" target="_blank" rel="noopener">{esc(label)}</a>'
                  for label, href in resources)
    return render("frame.html", title=esc(f"{display_url(url)} ({human_date(timestamp)})" if timestamp else url),
                  static=esc(static), info=script_json(info), coll=esc(coll), coll_url=esc(coll_url),
                  prev_url=esc(at(prev_ts)), next_url=esc(at(next_ts)),
                  prev_off="" if prev_ts else " wa-off", next_off="" if next_ts else " wa-off",
                  iso=esc(iso_date(timestamp)), date=esc(human_date(timestamp) if timestamp else "not archived"),
                  calendar_url=esc(full_prefix + str(ArchivalUrl(url, type="query"))),
                  count=esc(f"{n} capture{'s' if n != 1 else ''}"), url=esc(live_href(url)), url_shown=esc(display_url(url)),
                  resources=res, content_url=esc(content_url), bannerless="" if banner else " wa-bannerless",
                  sandbox=f' sandbox="{SANDBOX}"' if sandboxed else "")


# --------------------------------------------------------------------------- listings

def collections_page(names: Iterable[str], *, app_prefix: str, static: str, unavailable: Mapping[str, str]) -> bytes:
    items = []
    for n in names:
        why = unavailable.get(n)
        note = f' <span class="wa-bad">unavailable: {esc(why)}</span>' if why else ""
        items.append(f'<li><a href="{esc(app_prefix)}/{esc(quote(n))}/">{esc(n)}</a>{note}</li>')
    content = (f'<ul class="wa-colls">{"".join(items)}</ul>' if items
               else "<p>No collection yet: <code>warchive init NAME</code> and <code>warchive add NAME FILE...</code> make one.</p>")
    return page("Collections", "Collections", content, static=static, root_url=app_prefix + "/")


def home_page(coll: str, *, coll_url: str, app_prefix: str, static: str) -> bytes:
    """A collection's home: search the captures of a URL, the URLs under a prefix or of a domain."""
    content = f"""<form class="wa-search" method="get" action="{esc(coll_url)}">
<label for="wa-q">URL</label> <input id="wa-q" name="url" type="text" size="60" required autofocus placeholder="example.com/page">
<select name="matchType" aria-label="match">
<option value="exact">this URL</option><option value="prefix">URLs starting with it</option>
<option value="host">its host</option><option value="domain">its domain</option></select>
<label>from <input name="from" type="text" size="14" pattern="[0-9]{{0,14}}" placeholder="yyyy[mm[dd...]]"></label>
<label>to <input name="to" type="text" size="14" pattern="[0-9]{{0,14}}" placeholder="yyyy[mm[dd...]]"></label>
<button type="submit">Search</button>
</form>
<p>Replay: <code>{esc(coll_url)}TIMESTAMP/URL</code>; captures: <code>{esc(coll_url)}*/URL</code>;
index: <a href="{esc(coll_url)}cdx">{esc(coll_url)}cdx</a>.</p>"""
    return page(f"Collection {coll}", coll, content, static=static, root_url=app_prefix + "/",
                crumbs=[(coll, coll_url)])


def captures_page(coll: str, url: str, captures: Sequence[Capture], *, full_prefix: str, coll_url: str,
                  app_prefix: str, static: str) -> bytes:
    """The captures of one URL, by year and month (the calendar), each linking to its replay."""
    by_year: Dict[str, Dict[str, List[Capture]]] = {}
    for c in captures:
        ts = c.timestamp
        by_year.setdefault(ts[:4], {}).setdefault(ts[4:6], []).append(c)
    parts = [f'<p>{len(captures)} capture{"s" if len(captures) != 1 else ""} of '
             f'<code>{esc(display_url(url))}</code></p>']
    for year in sorted(by_year, reverse=True):
        parts.append(f'<section class="wa-year"><h2>{esc(year)}</h2>')
        for month in sorted(by_year[year]):
            caps = by_year[year][month]
            name = MONTHS[int(month) - 1] if month.isdigit() and 1 <= int(month) <= 12 else month
            links = []
            for c in caps:
                status = c.get("status") or "-"
                href = full_prefix + str(ArchivalUrl(c.url or url, c.timestamp))
                links.append(f'<li><a href="{esc(href)}">{esc(human_date(c.timestamp))}</a> '
                             f'<span class="wa-status">{esc(status)}</span></li>')
            parts.append(f'<h3>{esc(name)} ({len(caps)})</h3><ul class="wa-caps">{"".join(links)}</ul>')
        parts.append("</section>")
    if not captures:
        parts = [f"<p>No capture of <code>{esc(display_url(url))}</code> in this collection.</p>"]
    return page(f"Captures of {display_url(url)}", display_url(url), "".join(parts), static=static,
                root_url=app_prefix + "/", crumbs=[(coll, coll_url)])


def urls_page(coll: str, prefix: str, captures: Sequence[Capture], *, full_prefix: str, coll_url: str,
              app_prefix: str, static: str, more: bool) -> bytes:
    """The URLs under a prefix: each with its number of captures, first and last, linking to its
    captures page and its latest capture."""
    seen: Dict[str, List[str]] = {}
    order: List[str] = []
    for c in captures:
        u = c.url or ""
        if u not in seen:
            seen[u] = []
            order.append(u)
        seen[u].append(c.timestamp)
    rows = []
    for u in order:
        stamps = seen[u]
        rows.append(f'<tr><td><a href="{esc(full_prefix + str(ArchivalUrl(u, type="query")))}">'
                    f'{esc(display_url(u))}</a></td><td>{len(stamps)}</td>'
                    f'<td><a href="{esc(full_prefix + str(ArchivalUrl(u, min(stamps))))}">{esc(human_date(min(stamps)))}</a></td>'
                    f'<td><a href="{esc(full_prefix + str(ArchivalUrl(u, max(stamps))))}">{esc(human_date(max(stamps)))}</a></td></tr>')
    content = (f'<table class="wa-urls"><thead><tr><th>URL</th><th>captures</th><th>first</th><th>last</th></tr></thead>'
               f'<tbody>{"".join(rows)}</tbody></table>' if rows else
               f"<p>No URL under <code>{esc(display_url(prefix))}</code> in this collection.</p>")
    if more:
        content += "<p>The list stops here; search a longer prefix to see the rest.</p>"
    return page(f"URLs under {display_url(prefix)}", f"{display_url(prefix)}*", content, static=static,
                root_url=app_prefix + "/", crumbs=[(coll, coll_url)])


def error_page(status: int, title: str, message: str, *, static: str, app_prefix: str,
               crumbs: Sequence[Tuple[str, str]] = ()) -> bytes:
    return page(f"{status} {title}", title, f'<p class="wa-error">{esc(message)}</p>', static=static,
                root_url=app_prefix + "/", crumbs=crumbs)


__all__ = ["SANDBOX", "captures_page", "collections_page", "error_page", "esc", "frame_page", "home_page",
           "human_date", "page", "render", "urls_page"]
