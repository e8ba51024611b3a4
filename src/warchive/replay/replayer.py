"""One replay request answered: ``/<coll>/[timestamp][modifier]/<url>`` to an HTTP reply.

``Replayer.replay(served, aurl, request)`` follows pywb 2.10's ``RewriterApp.render_content``:

* a URL without a timestamp is a TimeGate: the capture closest to ``Accept-Datetime`` (an
  unparseable one is 400), or the latest; answered with the memento itself and
  ``Content-Location`` (RFC 7089 pattern 2.2, pywb's default) or, with ``redirect_to_exact``, a
  307 to the exact memento (pattern 2.3). ``Accept-Datetime`` on a URL with a timestamp is
  ignored;
* in framed replay a URL without a modifier is the top frame (banner and iframe:
  warchive.replay.pages); the content is asked with ``mp_``;
* the capture is the closest that loads (warchive.replay.load: revisits resolved, the
  next-closest when one cannot be loaded, self-redirects skipped, pywb's fuzzy rules when none
  matches exactly; POST and PUT bodies looked up under the ``__wb_method`` keys the indexer
  writes); with ``redirect_to_exact`` an inexact timestamp or a fuzzy match is a 307 to the
  capture's own archival URL;
* its head is rewritten (warchive.replay.headers), its body by text type
  (warchive.replay.content), Memento headers added (warchive.replay.memento), a
  Content-Security-Policy that allows only the replay origin (plus ``data:``/``blob:``), and a
  ``Range`` request is answered with 206 from the payload (warchive.replay.bodies, in bounded
  memory, off the event loop: the reply's ``prepare``).

The reply is framework-free (status, headers, an iterator of body pieces); warchive.replay.app
sends it over ASGI. Nothing here fetches from the network or opens a file the index does not
name inside the collection's archive directories.
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable, Dict, Iterator, List, Mapping, Optional, Tuple, cast

from urllib.parse import urlsplit, urlunsplit

from ..errors import ArchiveError, CaptureNotFound, UrlError
from ..index.capture import Capture
from ..index.postbody import method_query
from ..index.query import sort_closest
from ..surt import surt
from ..warc.content import decoded_stream, decodes
from .bodies import CHUNK, Part, pieces, ranged, sized
from .client import client_insert
from .collections import Served
from .config import ReplayConfig
from .content import (DEFAULT_CONTENT_TYPES, REWRITE_TYPES, SNIFF_BYTES, BodyRewriter, body_rewriter, charset_of,
                      mime_of, rewrites, text_type)
from .headers import rewrite_headers
from .load import LoadedCapture
from .memento import (MementoError, Timeline, frame_headers, memento_headers, parse_accept_datetime,
                      redirect_headers, warc_date_http_date)
from .urls import ArchivalUrl, UrlRewriter, normalize_url

# An archived Content-Length of more digits than this is past any payload: no length at all.
LENGTH_DIGITS = 18
ORIG_STATUS_LINE = "X-Archive-Orig-Status-Line"   # an archived status line that is no status to send
NO_BODY = (204, 304)   # statuses whose answer has no body, whatever the archive holds (RFC 9110 6.4.1)
# A rewritten body up to this size is sent with a Content-Length (it is held whole); a bigger one
# is streamed without (chunked on HTTP/1.1).
BUFFER_REWRITTEN = 4 * 1024 * 1024
LATEST = "99991231235959"

# pywb's default, with 'self' the replay origin: nothing from elsewhere loads, forms post home;
# without pywb's ws: and wss:, which would let a page's socket reach the live web (the archive
# has no sockets: the client script fails them at once)
CSP = ("default-src 'unsafe-eval' 'unsafe-inline' 'self' data: blob: mediastream:; "
       "form-action 'self'")


class BadRequest(ArchiveError):
    """A request the replay cannot answer as asked (400)."""


@dataclass
class Request:
    """What a reply depends on in the request: ``method``; ``headers`` with lower-case names;
    ``host_prefix`` (``http://host:port``) and ``app_prefix`` (the path the app is mounted
    under, ``""`` at the root); ``body`` for POST and PUT."""
    method: str
    headers: Mapping[str, str]
    host_prefix: str
    app_prefix: str = ""
    body: bytes = b""


@dataclass
class Reply:
    status: int
    headers: List[Tuple[str, str]]
    body: Iterator[bytes] = field(default_factory=lambda: iter(()))
    close: Callable[[], None] = lambda: None
    frame: Optional[Dict[str, Any]] = None   # the top frame to render (pages.frame_page's arguments)
    # reading to do before the reply can be sent (a range decoded and skipped to its start): the
    # server calls it off its event loop and sends the reply it gives instead
    prepare: Optional[Callable[[], "Reply"]] = None


def replay_status(statusline: str) -> Optional[int]:
    """The status a capture is replayed with: its archived code when that is a final status of
    three digits, 200 to 999 (LinkedIn's 999 too; the reason phrase is the server's, as ASGI
    carries none). None for anything else (0, 10**20, a word, a 1xx, which is an interim answer
    in HTTP/1.1: sent as the last one, a client waits for another or reads the body as a head):
    the capture is then replayed as 200, its status line kept in ORIG_STATUS_LINE."""
    code = statusline.partition(" ")[0]
    if len(code) == 3 and code.isascii() and code.isdigit() and code[0] not in "01":
        return int(code)
    return None


class Replayer:
    def __init__(self, config: ReplayConfig) -> None:
        self.config = config

    # ------------------------------------------------------------------ prefixes
    def prefixes(self, served: Served, req: Request) -> Tuple[str, str, str]:
        """(rel_prefix, full_prefix, content_prefix): the collection's path, its absolute URL,
        and the prefix pages are served under (the replay host's when there is one)."""
        rel = f"{req.app_prefix}/{served.name}/"
        full = req.host_prefix + rel
        content = (self.config.replay_host + rel) if self.config.replay_host else full
        return rel, full, content

    # ------------------------------------------------------------------ the door
    def replay(self, served: Served, aurl: ArchivalUrl, req: Request) -> Reply:
        is_timegate = aurl.type == "latest_replay"
        timestamp = aurl.timestamp
        if is_timegate:
            accept = req.headers.get("accept-datetime")
            if accept:
                try:
                    timestamp = parse_accept_datetime(accept)
                except MementoError as e:
                    raise BadRequest(str(e)) from None
        rel, full, content_prefix = self.prefixes(served, req)
        host = self.config.replay_host
        on_replay_host = host is not None and req.host_prefix.rstrip("/") == host
        if self.config.framed_replay and aurl.modifier == "" and not self._frame_bypass(req) and not on_replay_host:
            return self._top_frame(served, aurl, timestamp, is_timegate, full, content_prefix)
        if host is not None and not on_replay_host:
            # an archived page never runs on the banner's origin: to the replay host with it
            return Reply(307, [("Location", content_prefix + str(aurl)), ("Content-Length", "0")])
        return self._memento(served, aurl, timestamp, is_timegate, req, rel, full)

    def _frame_bypass(self, req: Request) -> bool:
        """Requests a frame would break: a script's fetch, a form's POST."""
        return req.method not in ("GET", "HEAD") or req.headers.get("sec-fetch-dest", "document") not in (
            "document", "")

    # ------------------------------------------------------------------ top frame
    def _top_frame(self, served: Served, aurl: ArchivalUrl, timestamp: str, is_timegate: bool, full: str,
                   content_prefix: str) -> Reply:
        caps = self._captures_of(served, aurl.url)
        if not caps and self.config.fuzzy_match:
            caps = self._captures_of(served, aurl.url, fuzzy=True)
        if not caps:
            raise CaptureNotFound(f"{aurl.url}: no capture in the index")
        closest = sort_closest(caps, timestamp or LATEST, 1)[0]   # the engine's closest order
        ts = closest.timestamp if closest is not None else timestamp
        headers: List[Tuple[str, str]] = [("Content-Type", "text/html; charset=utf-8")]
        timeline = Timeline(caps)
        if self.config.redirect_to_exact and closest is not None and (is_timegate or aurl.timestamp != ts):
            return self._to_exact(served, closest, timeline, "", full, is_timegate, None)
        if self.config.enable_memento and closest is not None:
            rw = UrlRewriter(ArchivalUrl(aurl.url, ts or "", ""), full, full)
            headers += frame_headers(timeline, closest, rw, replay_mod=self.replay_mod, timegate=is_timegate)
        frame = {"coll": served.name, "url": aurl.url, "timestamp": ts or "", "captures": caps,
                 "closest": closest, "content_url": content_prefix + str(ArchivalUrl(aurl.url, ts or "", "mp_")
                                                                          if ts else ArchivalUrl(aurl.url, "", "mp_")),
                 "full_prefix": full}
        return Reply(200, headers, frame=frame)

    def _captures_of(self, served: Served, url: str, fuzzy: bool = False) -> List[Capture]:
        """Every capture of ``url``, oldest first (with ``fuzzy``, pywb's fuzzy fallback's)."""
        index = served.loader.index
        if index is None:
            return []
        caps = index.query(url, matchType="exact", allowFuzzy="true") if fuzzy else index.exact(url)
        if fuzzy:
            caps.sort(key=lambda c: c.timestamp)
        return caps

    def _timeline_of(self, served: Served, url: str, asked: Tuple[str, List[Capture]]) -> List[Capture]:
        """Every capture of ``url``: the captures already found for the URL ``asked`` (with them)
        when both URLs have one key (the same query), else asked of the index."""
        lookup, caps = asked
        if caps and (url == lookup or _key(url) == _key(lookup)):
            return caps
        return self._captures_of(served, url)

    # ------------------------------------------------------------------ a memento
    def _lookup_url(self, aurl: ArchivalUrl, req: Request) -> str:
        if req.method in ("POST", "PUT"):
            _, suffix = method_query(req.method.lower(), req.headers.get("content-type"),
                                     str(len(req.body)), io.BytesIO(req.body), aurl.url)
            return aurl.url + suffix if suffix else aurl.url
        return aurl.url

    def _slash_redirect(self, aurl: ArchivalUrl, full: str, rel: str) -> Reply:
        """307 to the same archival URL with a ``/`` ending the path (pywb's send_redirect): an
        empty path, or a capture whose URL has the slash the request lacks, so that the page's
        relative links resolve as they did."""
        parts = urlsplit(aurl.url)
        url = urlunsplit((parts.scheme, parts.netloc, (parts.path or "") + "/", parts.query, parts.fragment))
        h = [("Location", UrlRewriter(aurl, full, full, rel_prefix=rel).rewrite(url)), ("Content-Length", "0")]
        if self.config.enable_memento:
            h.append(("Link", f'<{url}>; rel="original"'))
        return Reply(307, h)

    def _memento(self, served: Served, aurl: ArchivalUrl, timestamp: str, is_timegate: bool, req: Request,
                 rel: str, full: str) -> Reply:
        if aurl.url.startswith(("http:", "https:")) and not urlsplit(aurl.url).path:
            return self._slash_redirect(aurl, full, rel)
        lookup = self._lookup_url(aurl, req)
        # every capture of the URL, once: the closest that loads is served, and (when it is of
        # the same key) they are its timeline for the Memento links
        caps = self._captures_of(served, lookup)
        try:
            cap = served.loader.load_closest(lookup, timestamp or LATEST, fuzzy=self.config.fuzzy_match,
                                             dechunk=True, decompress=False, captures=caps)
        except CaptureNotFound:
            if lookup != aurl.url:   # a POST never captured: its GET, as pywb falls back
                cap = served.loader.load_closest(aurl.url, timestamp or LATEST, fuzzy=self.config.fuzzy_match)
                caps = []
            else:
                raise
        try:
            return self._serve(served, aurl, cap, timestamp, is_timegate, req, rel, full, (lookup, caps))
        except BaseException:
            cap.close()
            raise

    def _serve(self, served: Served, aurl: ArchivalUrl, cap: LoadedCapture, timestamp: str, is_timegate: bool,
               req: Request, rel: str, full: str, asked: Tuple[str, List[Capture]] = ("", [])) -> Reply:
        cdx = cap.cdx
        cap_url = str(cdx.get("url") or aurl.url)
        cap_ts = str(cdx.get("timestamp") or "")
        fuzzy = cap_url != aurl.url and str(cdx.get("is_fuzzy", "")) == "1"
        modifier = aurl.modifier
        if (cap_url != aurl.url and urlsplit(cap_url).path.endswith("/") and not urlsplit(aurl.url).path.endswith("/")
                and aurl.url.startswith(("http:", "https:"))):
            cap.close()
            return self._slash_redirect(aurl, full, rel)
        caps = self._timeline_of(served, cap_url, asked) if self.config.enable_memento else []
        timeline = Timeline(caps)
        warc_date = cap.warc_headers.get("WARC-Date")
        if self.config.redirect_to_exact and (fuzzy or is_timegate or aurl.timestamp != cap_ts):
            cap.close()
            return self._to_exact(served, cdx, timeline, modifier, full, is_timegate, warc_date)

        if (cap_url == aurl.url and cap_ts == aurl.timestamp and aurl.type == "replay"
                and normalize_url(cap_url) == cap_url):   # (the usual case: the page asked for)
            page = aurl
        else:
            page = ArchivalUrl(cap_url, cap_ts, modifier)
        rewriter = UrlRewriter(page, full, full, rel_prefix=rel)
        archived = replay_status(cap.status_line)
        status = 200 if archived is None else archived
        ctype = cap.headers.get("Content-Type")
        rng = req.headers.get("range") if status == 200 else None
        payload: BinaryIO = cap.payload
        encoding = cap.headers.get("Content-Encoding")
        decoded = False
        if (encoding and modifier != "id_" and not rng and decodes(encoding)
                and (REWRITE_TYPES.get(mime_of(ctype)) is not None or modifier in ("js_", "cs_"))):
            payload, decoded = cast(BinaryIO, io.BufferedReader(decoded_stream(payload, chunked=False, encoding=encoding))), True
        # a range is of the bytes as archived (pywb serves it as id_); id_ is never rewritten (no peeking)
        kind = None if rng or not rewrites(modifier) else text_type(ctype, modifier, cap_url, _peek(payload))
        rh = rewrite_headers(cap.headers, rewriter, rewrite_body=kind is not None or decoded,
                             accept_encoding=req.headers.get("accept-encoding"))
        if rh.decode and not decoded:
            payload, decoded = cast(BinaryIO, io.BufferedReader(decoded_stream(payload, chunked=False, encoding=rh.decode))), True
        head = list(rh.headers.fields)
        if kind in DEFAULT_CONTENT_TYPES and ctype and mime_of(ctype) != DEFAULT_CONTENT_TYPES[kind]:
            new_type = ctype.replace(mime_of(ctype), DEFAULT_CONTENT_TYPES[kind], 1)
            head = [(k, new_type if k.lower() == "content-type" else v) for k, v in head]
        if self.config.enable_memento:
            # (with redirect_to_exact every memento is exact: no Content-Location, as pywb)
            head += memento_headers(timeline, cdx, rewriter, replay_mod=self.replay_mod, warc_date=_valid(warc_date),
                                    timegate=is_timegate, content_location=not self.config.redirect_to_exact)
        if modifier != "id_":
            head.append(("Content-Security-Policy", CSP))
            if not any(k.lower() == "referrer-policy" for k, _ in head):
                # the sandboxed frame is another origin than the server's: without this its
                # requests name only the origin, and a root-relative URL that escaped rewriting
                # could not be sent back under its page (app's Referer fallback)
                head.append(("Referrer-Policy", "no-referrer-when-downgrade"))
        if self.config.sandboxed_frame:
            head.append(("Access-Control-Allow-Origin", "*"))   # the sandboxed frame's origin is opaque
        if archived is None:
            head.append((ORIG_STATUS_LINE, cap.status_line))
        if status in NO_BODY:   # (a length or a body would be read as the start of the next answer)
            cap.close()
            return Reply(status, [(k, v) for k, v in head if k.lower() != "content-length"])
        length = None if (rh.recompute_length or kind is not None) else _declared_length(head)
        head = [(k, v) for k, v in head if k.lower() != "content-length"]
        if rng:
            head = [(k, v) for k, v in head if k.lower() != "content-range"]
            return Reply(status, head, close=cap.close,
                         prepare=functools.partial(_range, head, payload, rng, length, cap.close))
        if length is not None:   # sent as stored: with the length it has, when the archive claims more
            size, body = sized(payload, length)
            head.append(("Content-Length", str(size)))
            return Reply(status, head, body, cap.close)
        if kind is None:
            out: Iterator[bytes] = pieces(payload)
        else:
            insert = self.head_insert(served, page, full, cap_ts) if kind == "html" and not _is_script_fetch(req) else b""
            out = _rewritten(payload, body_rewriter(kind, rewriter, charset=charset_of(ctype), head_insert=insert,
                                                      defmod=self.replay_mod))
        held: List[bytes] = []
        size = 0
        for piece in out:
            held.append(piece)
            size += len(piece)
            if size > BUFFER_REWRITTEN:   # too big to hold: streamed without a length
                return Reply(status, head, _chain(held, out), cap.close)
        cap.close()
        head.append(("Content-Length", str(size)))
        return Reply(status, head, iter(held))

    def _to_exact(self, served: Served, cap: Capture, timeline: Timeline, modifier: str, full: str,
                  is_timegate: bool, warc_date: Optional[str]) -> Reply:
        """307 to the exact memento (redirect_to_exact), with pywb's Memento headers."""
        url = str(cap.get("url") or "")
        rw = UrlRewriter(ArchivalUrl(url, str(cap.get("timestamp") or "") or "1", modifier), full, full)
        if self.config.enable_memento:
            return Reply(307, redirect_headers(timeline, cap, rw, replay_mod=self.replay_mod,
                                               warc_date=_valid(warc_date), timegate=is_timegate))
        return Reply(307, [("Location", rw.archival_url(url, timestamp=str(cap.get("timestamp")))),
                           ("Content-Length", "0")])

    @property
    def replay_mod(self) -> str:
        """The modifier of the mementos the Memento headers name: mp_ in framed replay, else none."""
        return "mp_" if self.config.framed_replay else ""

    def head_insert(self, served: Served, page: ArchivalUrl, full: str, ts: str) -> bytes:
        """The script tag put after ``<head>`` of a replayed page (warchive.replay.client)."""
        return client_insert(served.name, page, full, ts, self.config)


def _range(head: List[Tuple[str, str]], payload: BinaryIO, rng: str, declared: Optional[int],
           close: Callable[[], None]) -> Reply:
    """The reply to a Range request (warchive.replay.bodies.ranged: it reads, so it is a reply's
    ``prepare``); the capture is closed when it fails."""
    try:
        part: Part = ranged(payload, rng, declared)
    except BaseException:
        close()
        raise
    return Reply(part.status, head + part.headers, part.body, close)


def _key(url: str) -> Optional[str]:
    """The index key of ``url`` (None: it has none)."""
    try:
        return surt(url)
    except UrlError:
        return None


def _is_script_fetch(req: Request) -> bool:
    """A page's script fetching (fetch, XHR): HTML it gets is data, not a page to run the
    client in (pywb's ``is_ajax``)."""
    h = req.headers
    return h.get("sec-fetch-dest") == "empty" or h.get("x-requested-with") == "XMLHttpRequest"


def _valid(warc_date: Optional[str]) -> Optional[str]:
    """A WARC-Date the Memento-Datetime can be made of (None: use the capture's timestamp)."""
    if not warc_date:
        return None
    try:
        warc_date_http_date(warc_date)
    except (ValueError, OverflowError):
        return None
    return warc_date


def _peek(payload: BinaryIO) -> bytes:
    """The first bytes of a payload, left to be read."""
    peek = getattr(payload, "peek", None)
    return peek(SNIFF_BYTES)[:SNIFF_BYTES] if peek is not None else b""


def _declared_length(head: List[Tuple[str, str]]) -> Optional[int]:
    """The archived Content-Length: ASCII digits, fewer than would pass any payload."""
    for k, v in head:
        v = v.strip().lstrip("0") or v.strip()[:1]
        if k.lower() == "content-length" and v.isascii() and v.isdigit() and len(v) <= LENGTH_DIGITS:
            return int(v)
    return None


def _rewritten(payload: BinaryIO, rw: BodyRewriter) -> Iterator[bytes]:
    while True:
        b = payload.read(CHUNK)
        if not b:
            break
        out = rw.feed(b)
        if out:
            yield out
    tail = rw.close()
    if tail:
        yield tail


def _chain(held: List[bytes], rest: Iterator[bytes]) -> Iterator[bytes]:
    yield from held
    yield from rest
