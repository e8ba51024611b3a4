"""Memento (RFC 7089) for replay, as pure functions of captures: the datetimes (Memento-Datetime,
Accept-Datetime), the ``Link`` header of a memento, of a TimeGate's answer and of the frame, the
TimeGate's redirect, and TimeMaps in ``application/link-format`` (paged), JSON and CDXJ.

The header shapes are pywb 2.10's (``RewriterApp._add_memento_links``, ``MementoUtils``) where
pywb has them, so that a Memento client of a pywb archive reads ours the same; to them we add
what pywb lacks (its #555): ``first``/``prev``/``next``/``last memento`` links after pywb's own,
``until`` beside the TimeMap's ``from``, and pages for large TimeMaps. docs/replay.md, "Memento",
gives the shapes and the paging scheme and lists where we differ from pywb, and why.

Captures are ``warchive.index.capture.Capture`` records as the query engine answers them (for a
TimeMap: the answer to ``url=U&from=F&to=T``, pywb's query; for navigation: every capture of the
URL). This module answers no request, reads no archive and asks the index nothing: the server
finds the captures, picks the one to serve and sends what these functions return.
"""

from __future__ import annotations

import functools
from bisect import bisect_left, bisect_right
from datetime import datetime, timedelta
from email.utils import parsedate_tz
from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Tuple

from ..errors import MementoError
from ..index.capture import Capture, may_rename_timestamp
from ..index.query import render
from ..timestamps import iso_date_to_timestamp, timestamp_to_datetime
from ..warc.headers import Field
from .urls import UrlRewriter

LINK_FORMAT = "application/link-format"
TIMEMAP_TYPES = {"link": LINK_FORMAT, "json": "text/x-ndjson", "cdxj": "text/x-cdxj"}
DEFAULT_PAGE_SIZE = 10000   # mementos in one page of a link-format TimeMap (docs/replay.md)

# A capture: a Capture of the query engine, as the loader serves it too (LoadedCapture.cdx);
# only its timestamp, url and source-coll are read.
CaptureLike = Capture


# --------------------------------------------------------------------------- datetimes

@functools.lru_cache(maxsize=1 << 16)
def http_date(timestamp: str) -> str:
    """The HTTP-date (RFC 7231's IMF-fixdate, what RFC 7089 calls RFC 1123 format, always GMT) of
    a capture's timestamp; a partial or malformed timestamp means the latest datetime it can
    (``2019`` is ``Tue, 31 Dec 2019 23:59:59 GMT``), as pywb reads it. Cached: a capture's
    navigation links name the same few timestamps request after request."""
    return _format_http(timestamp_to_datetime(timestamp))


@functools.lru_cache(maxsize=1024)
def warc_date_http_date(warc_date: str) -> str:
    """The HTTP-date of a WARC-Date (``2019-03-04T05:06:07Z``, fractions of a second dropped):
    the Memento-Datetime of the record served, as pywb gives it. A malformed one raises
    ValueError. Cached: the server checks the record's WARC-Date, then makes its header."""
    return http_date(iso_date_to_timestamp(warc_date))


_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def _format_http(dt: datetime) -> str:
    """The IMF-fixdate of a naive UTC datetime (what email.utils.formatdate(usegmt=True) writes)."""
    return "%s, %02d %s %04d %02d:%02d:%02d GMT" % (_WEEKDAYS[dt.weekday()], dt.day, _MONTHS[dt.month - 1], dt.year,
                                                    dt.hour, dt.minute, dt.second)


def parse_accept_datetime(value: str) -> str:
    """The 14-digit timestamp (UTC) an Accept-Datetime asks for.

    RFC 7089 wants an HTTP-date in GMT (``Sun, 06 Nov 1994 08:49:37 GMT``); like pywb we take
    whatever the e-mail date grammar reads (RFC 850's ``Sunday, 06-Nov-94 08:49:37 GMT``,
    asctime's ``Sun Nov  6 08:49:37 1994``, no weekday, no seconds, any case), but unlike pywb we
    apply a zone other than GMT (``+0200``, ``EST``) and write years below 1000 with four digits.
    Anything else (an empty value, ``2019``, ISO 8601, 31 February, hour 25) raises MementoError.
    """
    parts = parsedate_tz(value)
    if parts is None:
        raise MementoError(f"Accept-Datetime {value!r} is not an HTTP-date (like 'Sun, 06 Nov 1994 08:49:37 GMT')")
    try:
        dt = datetime(*parts[:6]) - timedelta(seconds=parts[9] or 0)
    except (ValueError, OverflowError):
        raise MementoError(f"Accept-Datetime {value!r} names no datetime") from None
    return "%04d%02d%02d%02d%02d%02d" % (dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second)


# --------------------------------------------------------------------------- captures in time

class Timeline:
    """The captures of one URL, oldest first (stable for captures of one second), with the
    neighbours of a capture: ``first``, ``last``, and ``neighbours(timestamp)``, the nearest
    captures of another second before and after (a capture of the same second has the same
    archival URL)."""

    __slots__ = ("captures", "_times")

    def __init__(self, captures: Iterable[CaptureLike]) -> None:
        caps = list(captures)
        times = [_timestamp(c) for c in caps]
        for i in range(1, len(times)):
            if times[i] < times[i - 1]:   # (an index lists them in order: rarely sorted here)
                order = sorted(range(len(caps)), key=times.__getitem__)
                caps = [caps[k] for k in order]
                times = [times[k] for k in order]
                break
        self.captures: List[CaptureLike] = caps
        self._times = times

    def __len__(self) -> int:
        return len(self.captures)

    def __iter__(self) -> Iterator[CaptureLike]:
        return iter(self.captures)

    @property
    def first(self) -> Optional[CaptureLike]:
        return self.captures[0] if self.captures else None

    @property
    def last(self) -> Optional[CaptureLike]:
        """The last capture of the latest second (of several, the one the index lists last)."""
        return self.captures[-1] if self.captures else None

    def neighbours(self, timestamp: str) -> Tuple[Optional[CaptureLike], Optional[CaptureLike]]:
        """(the latest capture before ``timestamp``, the earliest after it)."""
        before = bisect_left(self._times, timestamp)
        after = bisect_right(self._times, timestamp)
        return (self.captures[before - 1] if before else None,
                self.captures[after] if after < len(self.captures) else None)


# --------------------------------------------------------------------------- links

def _link(url: str, rel: str) -> str:
    if rel in ("timemap", "self"):
        return f'<{url}>; rel="{rel}"; type="{LINK_FORMAT}"'
    return f'<{url}>; rel="{rel}"'


def _memento_link(url: str, rel: str, datetime_: str, coll: Optional[str]) -> str:
    link = f'<{url}>; rel="{rel}"; datetime="{datetime_}"'
    return link + f'; collection="{coll}"' if coll else link


def _timestamp(c: CaptureLike) -> str:
    """The capture's timestamp field: its line's second column, unless its JSON names another
    (R14), which then is the capture's time, as the loader serves it and the engine sorts it."""
    if may_rename_timestamp(c.line):
        return str(c.get("timestamp", ""))
    return c.timestamp


def _url(c: CaptureLike) -> str:
    return c.url or ""


def _coll(c: CaptureLike) -> Optional[str]:
    coll = c.get("source-coll")
    return str(coll) if coll else None


def timegate_url(prefix: str, url: str) -> str:
    """The TimeGate of ``url`` under a collection's full prefix: ``PREFIX URL``."""
    return prefix + url


def timemap_url(prefix: str, url: str, form: str = "link", range_: str = "") -> str:
    """The TimeMap of ``url``: ``PREFIX timemap/FORM/[RANGE/]URL``; ``range_`` is ``FROM`` or
    ``FROM*TO`` (a page of a paged TimeMap)."""
    return f"{prefix}timemap/{form}/" + (range_ + "/" if range_ else "") + url


def memento_url(prefix: str, timestamp: str, url: str, replay_mod: str) -> str:
    """A URI-M as the Link header gives it: ``PREFIX TIMESTAMP REPLAY_MOD / URL``."""
    return f"{prefix}{timestamp}{replay_mod}/{url}"


def resource_links(prefix: str, url: str) -> List[str]:
    """original, timegate and timemap of ``url``: what every Memento Link header starts with."""
    return [_link(url, "original"), _link(timegate_url(prefix, url), "timegate"), _link(timemap_url(prefix, url), "timemap")]


def navigation_links(timeline: Timeline, current: CaptureLike, prefix: str, replay_mod: str) -> List[str]:
    """``first memento``, ``prev memento``, ``next memento``, ``last memento`` of ``current`` in
    ``timeline`` (prev and next only where there is one of another second), each with its
    datetime and collection."""
    first, last = timeline.first, timeline.last
    if first is None or last is None:
        return []
    prev, nxt = timeline.neighbours(_timestamp(current))
    out = []
    # each capture's URI-M, datetime and collection, made once (first is often prev or last)
    made: Dict[int, Tuple[str, str, Optional[str]]] = {}
    for rel, c in (("first", first), ("prev", prev), ("next", nxt), ("last", last)):
        if c is not None:
            parts = made.get(id(c))
            if parts is None:
                ts = _timestamp(c)
                parts = made[id(c)] = (memento_url(prefix, ts, _url(c), replay_mod), http_date(ts), _coll(c))
            out.append(_memento_link(parts[0], rel + " memento", parts[1], parts[2]))
    return out


def memento_link(timeline: Timeline, current: CaptureLike, prefix: str, *, replay_mod: str = "mp_",
                 memento_datetime: Optional[str] = None, collection: bool = True, url: Optional[str] = None) -> str:
    """The Link header value of a response about the memento ``current``: pywb's (original,
    timegate, timemap of the capture's URL, then the memento with its datetime and, when
    ``collection``, its collection), then our navigation links. ``memento_datetime``: the HTTP-date
    of the record served (default: of the capture's timestamp); ``url``: the URL to name instead
    of the capture's (the frame names the requested one, as pywb)."""
    url = _url(current) if url is None else url
    ts = _timestamp(current)
    dt = memento_datetime or http_date(ts)
    links = resource_links(prefix, url)
    links.append(_memento_link(memento_url(prefix, ts, url, replay_mod), "memento", dt,
                               _coll(current) if collection else None))
    return ", ".join(links + navigation_links(timeline, current, prefix, replay_mod))


# --------------------------------------------------------------------------- the heads of responses

def memento_headers(timeline: Timeline, current: CaptureLike, rewriter: UrlRewriter, *, replay_mod: str = "mp_",
                    warc_date: Optional[str] = None, timegate: bool = False,
                    content_location: bool = True) -> List[Field]:
    """The fields to append to the rewritten head of the memento ``current``, served for the
    request whose UrlRewriter is ``rewriter`` (prefix: the collection's full prefix; page: the
    request's archival URL): ``Memento-Datetime``, ``Link``, with ``timegate`` (a request
    without timestamp: the TimeGate answering 200 with the memento, RFC 7089 pattern 2.2)
    ``Vary: accept-datetime``, and ``Content-Location``, the memento's exact archival URL under
    the request's modifier, as pywb sends it on every memento. ``warc_date``: the WARC-Date of
    the record served (its Memento-Datetime; default: the capture's timestamp). Without
    ``content_location`` none is sent (pywb with redirect_to_exact: every memento is then exact)."""
    dt = warc_date_http_date(warc_date) if warc_date else http_date(_timestamp(current))
    out: List[Field] = [("Memento-Datetime", dt),
                        ("Link", memento_link(timeline, current, rewriter.full_prefix, replay_mod=replay_mod,
                                              memento_datetime=dt))]
    if timegate:
        out.append(("Vary", "accept-datetime"))
    if content_location:
        out.append(("Content-Location", rewriter.archival_url(_url(current), timestamp=_timestamp(current))))
    return out


def frame_headers(timeline: Timeline, current: CaptureLike, rewriter: UrlRewriter, *, replay_mod: str = "mp_",
                  timegate: bool = False) -> List[Field]:
    """The Memento fields of the frame page (framed replay's outer page) showing ``current``:
    ``Memento-Datetime`` (not when it answers a TimeGate request), ``Link`` (naming the
    requested URL, the memento without its collection, as pywb) and, for a TimeGate request, ``Vary: accept-datetime``."""
    dt = http_date(_timestamp(current))
    out: List[Field] = [] if timegate else [("Memento-Datetime", dt)]
    out.append(("Link", memento_link(timeline, current, rewriter.full_prefix, replay_mod=replay_mod,
                                     memento_datetime=dt, collection=False, url=rewriter.page.url)))
    if timegate:
        out.append(("Vary", "accept-datetime"))
    return out


def redirect_headers(timeline: Timeline, current: CaptureLike, rewriter: UrlRewriter, *, replay_mod: str = "mp_",
                     warc_date: Optional[str] = None, timegate: bool = False) -> List[Field]:
    """The head of the 307 that ``redirect_to_exact`` answers with (RFC 7089 pattern 2.1 for a
    TimeGate request, and a request whose timestamp is not the capture's): ``Location`` (the
    capture's exact archival URL under the request's modifier), ``Content-Length: 0``, then for
    a TimeGate request the memento's ``Link`` (no collection, as pywb) and ``Vary:
    accept-datetime``, else only the ``original`` link."""
    url = _url(current)
    out: List[Field] = [("Location", rewriter.archival_url(url, timestamp=_timestamp(current))), ("Content-Length", "0")]
    if timegate:
        dt = warc_date_http_date(warc_date) if warc_date else http_date(_timestamp(current))
        out.append(("Link", memento_link(timeline, current, rewriter.full_prefix, replay_mod=replay_mod,
                                         memento_datetime=dt, collection=False)))
        out.append(("Vary", "accept-datetime"))
    else:
        out.append(("Link", _link(url, "original")))
    return out


def timemap_headers(rewriter: UrlRewriter, form: str = "link") -> List[Field]:
    """The head of a TimeMap of ``rewriter.page.url`` in ``form`` (link, json, cdxj): its
    Content-Type and, as pywb, a Link to the original, the TimeGate and the TimeMap."""
    return [("Content-Type", TIMEMAP_TYPES[form]), ("Link", ", ".join(resource_links(rewriter.full_prefix, rewriter.page.url)))]


# --------------------------------------------------------------------------- TimeMaps

def _page_end(captures: Sequence[Capture], page_size: int) -> int:
    """Where the first page ends: after ``page_size`` captures and the others of the last one's
    second (a second is never split between pages)."""
    if page_size <= 0 or len(captures) <= page_size:
        return len(captures)
    end = page_size
    while end < len(captures) and captures[end].timestamp == captures[end - 1].timestamp:
        end += 1
    return end


def _range(from_ts: str, to_ts: str) -> str:
    return f"{from_ts}*{to_ts}" if to_ts else from_ts


def timemap_link(captures: Sequence[Capture], rewriter: UrlRewriter, *, replay_mod: str = "mp_",
                 page_size: int = DEFAULT_PAGE_SIZE) -> Optional[bytes]:
    """The link-format TimeMap (``application/link-format``) of ``rewriter.page``: its URL and
    range (``timemap/link/[FROM[*TO]/]URL``), ``captures`` the query's answer for them, oldest
    first. None when there is none (the server's 404).

    It holds pywb's lines (``self`` with ``from``, ``timegate``, ``original``, then a
    ``memento`` line for each capture with its datetime and collection) with ``until`` after
    ``from``. When more than ``page_size`` captures are given, it is the first page: those
    captures (and the others of the last one's second), ``self`` naming this page's range and
    a ``timemap`` link to the next page (``timemap/link/NEXT[*TO]/URL``, with its own ``from``
    and ``until``), where NEXT is the timestamp of the first capture left; 0 pages nothing."""
    if not captures:
        return None
    page = rewriter.page
    prefix = rewriter.full_prefix
    end = _page_end(captures, page_size)
    shown = captures[:end]
    fmt = prefix.replace("{", "{{").replace("}", "}}") + "{timestamp}" + replay_mod + "/{url}"
    mementos = "".join(line.decode("utf-8") for line in render("link", None, fmt, shown))
    self_range = _range(page.timestamp, page.end_timestamp) if page.timestamp or page.end_timestamp else ""
    head = [_link(timemap_url(prefix, page.url, "link", self_range), "self")
            + f'; from="{http_date(shown[0].timestamp)}"; until="{http_date(shown[-1].timestamp)}"']
    if end < len(captures):
        rest = captures[end:]
        nxt = rest[: _page_end(rest, page_size)]
        head.append(_link(timemap_url(prefix, page.url, "link", _range(nxt[0].timestamp, page.end_timestamp)), "timemap")
                    + f'; from="{http_date(nxt[0].timestamp)}"; until="{http_date(nxt[-1].timestamp)}"')
    head += [_link(timegate_url(prefix, page.url), "timegate"), _link(page.url, "original")]
    return (",\n".join(head) + ",\n" + mementos).encode("utf-8")


def timemap_json(captures: Iterable[Capture]) -> bytes:
    """The JSON TimeMap (``text/x-ndjson``): one JSON object a capture, the CDX API's
    ``output=json`` lines, as pywb 2.10 answers ``timemap/json/``. Empty: none (404)."""
    return b"".join(render("json", None, None, captures))


def timemap_cdxj(captures: Iterable[Capture]) -> bytes:
    """The CDXJ TimeMap (``text/x-cdxj``): the CDX API's ``output=cdxj`` lines, as pywb 2.10
    answers ``timemap/cdxj/``. Empty: none (404)."""
    return b"".join(render("cdxj", None, None, captures))
