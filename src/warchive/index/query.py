"""The CDX query API: what `GET /<coll>/cdx?<params>` answers, with pywb 2.10's semantics.

docs/cdx-api.md is the specification: rules R1-R70 (pywb), the deliberate
differences D1-D7 and the Wayback CDX server's extras W1-W20; comments here
cite them. One engine serves the three doors: the Python API
(`Index.query`, which answers `Capture` records), the HTTP endpoint
(warchive.replay.app) and `warchive cdx`.

Pipeline (R28): parameters -> key range -> lines of the sources (merged,
named) -> captures -> resolveRevisits -> filters -> from/to -> collapseTime,
collapse -> closest | reverse | limit (negative limits, fastLatest) -> fuzzy
fallback when empty -> access -> output. Every parameter error is found
before the first byte of the answer (D1, D5).

The quick path (`Engine.quick`) answers the common queries (a url with its
matchType, limit, closest, from/to, reverse, nosource, fl) straight from the
sources' lines, without a Query or the stages; it gives the pipeline's
captures or steps aside (tests/differential/test_quick_vs_pipeline.py holds
the two to the same answers).

This module does not read files itself: sources do (warchive.index.sources);
nor index lines: the record type does (warchive.index.capture). It is long
because the pipeline's stages are one specification, read in R28's order,
and the quick path must be read beside them.
"""

from __future__ import annotations

import calendar
import datetime
import difflib
import heapq
import json
import os
import re
from collections import OrderedDict, deque
from email.utils import formatdate
from itertools import islice
from typing import (Any, Callable, Dict, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Tuple,
                    Union)
from urllib.parse import parse_qsl, quote_plus, unquote_plus

from ..errors import UrlError
from ..surt import surt as _surt
from ..timestamps import timestamp_to_datetime
from .capture import ALIASES, CDX_FORMATS, Capture, MergeKey, Origin, QueryError, may_rename_timestamp, visible
from .segment import Segment
from .sources import collection_name, index_files, open_source, source_kind, source_name

__all__ = ["ALIASES", "CDX_FORMATS", "Answer", "Capture", "Engine", "Index", "NamedSource", "Origin", "Query",
           "PARAMS", "QueryError", "Result", "closest_first", "key_range", "params_from", "parse_line",
           "parse_query_string", "strict_params"]

DEFAULT_LIMIT = 100000
# A limit past this many lines (either sign) means "all" anyway; cut to it, so that an absurd
# ``limit=-10**30`` is no OverflowError (a 500) in deque/islice, which take a C ssize_t.
LIMIT_MAX = 1 << 62
# An integer parameter's digits past this many (leading zeros aside) are past LIMIT_MAX: clamped
# without being converted (int() refuses more than 4300 digits, a ValueError that was a 500).
_MAX_DIGITS = 18
_INTEGER = re.compile(r"\s*([+-]?)0*([0-9]+)\s*")
FALSE_VALUES = ("0", "false", "f", "off")

OUTPUTS = {"cdxj": "text/x-cdxj", "json": "text/x-ndjson", "text": "text/plain",
           "link": "application/link-format"}
ERROR_CTYPE = "application/json; charset=utf-8"

# R51: the generic fuzzy rule's data (pywb's default_filters)
_FUZZY_NOT_EXTS = ("asp", "aspx", "jsp", "php", "pl", "exe", "dll")
_FUZZY_MIMES = ("application/x-shockwave-flash", "application/dash+xml", "application/x-mpegURL",
                "application/vnd.apple.mpegurl")
_FUZZY_NORMALIZE = [(re.compile(p), r) for p, r in (
    (r"[?&](_|cb|uncache)=([\d]+)(?=&|$)", ""),
    (r"[?&]utm_[^=]+=[^&]+(?=&|$)", ""),
    (r"[?&](callback=jsonp)[^&]+(?=&|$)", r"\1"),
    (r"[?&]((?:\w+)=jquery)[\d]+_[\d]+", r"\1"),
    (r"[?&](\w*(bust|ts)\w*=1[\d]{12,15})(?=&|$)", ""),
    (r"[?&](fbclid)=(.*)+(?=&|$)", ""),
)]
_FUZZY_SKIP = ("alt_url", "reverse", "closest", "end_key", "url", "matchType", "filter")


# --------------------------------------------------------------------------- parameters (R2, R3)

Params = Dict[str, Any]   # name -> str; "filter" and "collapse" -> list of str


def parse_query_string(qs: str) -> Params:
    """R2: parse_qsl with defaults; the last value wins, filter and collapse collect."""
    params: Params = {}
    for name, value in parse_qsl(qs):
        if name in ("filter", "collapse"):
            params.setdefault(name, []).append(value)
        else:
            params[name] = value
    return params


def params_from(mapping: Union[str, Mapping[str, Any], Iterable[Tuple[str, Any]]]) -> Params:
    """Parameters from a query string, a mapping, or (name, value) pairs (Python API, CLI)."""
    if isinstance(mapping, str):
        return parse_query_string(mapping)
    items = mapping.items() if isinstance(mapping, Mapping) else mapping
    params: Params = {}
    for name, value in items:
        if value is None:
            continue
        if name in ("filter", "collapse"):
            vals = [value] if isinstance(value, str) else list(value)
            params.setdefault(name, []).extend(str(v) for v in vals if str(v) != "")
            if not params[name]:
                del params[name]
            continue
        if isinstance(value, bool):
            value = "true" if value else "false"
        value = str(value)
        if value == "":  # R2: an empty value is as if absent
            continue
        params[name] = value
    return params


# The parameters of the CDX API (R4, W1) by the values each takes: all that ``Index.query`` accepts.
# The HTTP endpoint and `warchive cdx` ignore other names and read any value as pywb does (R3, R5,
# R40); a Python caller gets a QueryError naming a misspelt parameter or a value that means nothing.
PARAMS: Dict[str, str] = {
    "url": "text", "matchType": "matchType", "from": "timestamp", "from_ts": "timestamp", "to": "timestamp",
    "closest": "closest", "filter": "list", "content_type": "text", "collapse": "list", "collapseTime": "int",
    "sort": "sort", "reverse": "bool", "limit": "int", "fl": "text", "fields": "text", "output": "output",
    "memento_format": "text", "resolveRevisits": "bool", "page": "int", "pageSize": "int",
    "showNumPages": "bool", "showPagedIndex": "bool", "allowFuzzy": "bool", "nosource": "bool",
    "sources": "text", "showResumeKey": "bool", "resumeKey": "text", "fastLatest": "bool",
}
_CHOICES = {"matchType": ("exact", "prefix", "host", "domain"), "sort": ("reverse", "closest"),
            "output": tuple(OUTPUTS), "bool": ("true", "false", "1", "0", "t", "f", "on", "off")}
_DIGITS = re.compile(r"[0-9]+")


def strict_params(params: Mapping[str, Any]) -> Params:
    """``params_from(params)``, each name one of PARAMS and each value one its parameter can
    take (timestamps are digits, ``closest`` may be ``now``; booleans True/False or their CDX
    spellings), else a QueryError naming the parameter: the Python door's check."""
    for name in params:
        if name not in PARAMS:
            near = difflib.get_close_matches(name, PARAMS, n=1)
            raise QueryError(f"unknown query parameter {name!r}" + (f" (did you mean {near[0]!r}?)" if near else "")
                             + ": the parameters are those of the CDX API, docs/cdx-api.md")
    p = params_from(params)
    for name, value in p.items():
        kind = PARAMS[name]
        if kind in ("text", "list"):
            continue
        if kind == "timestamp" or (kind == "closest" and value != "now"):
            ok = _DIGITS.fullmatch(value) is not None
            want = "a timestamp of digits (YYYYMMDDhhmmss or a prefix of it)" + (
                ", or now" if kind == "closest" else "")
        elif kind == "int":
            ok = _INTEGER.fullmatch(value) is not None
            want = "an integer"
        elif kind == "closest":
            continue
        else:
            choices = _CHOICES[kind]
            ok = (value.lower() if kind == "bool" else value) in choices
            want = "True or False" if kind == "bool" else "one of " + ", ".join(choices)
        if not ok:
            raise QueryError(f"{name}={_shown(value)} is not a value of {name}: it takes {want}")
    return p


def to_bool(value: Optional[str], default: bool = False) -> bool:
    if value is None or value == "":
        return default
    return value.lower() not in FALSE_VALUES


# --------------------------------------------------------------------------- captures (R14)

def parse_line(line: bytes) -> Capture:
    """A stored index line as pywb reads it (R14), read at once: a malformed line raises
    QueryError here."""
    c = Capture(line)
    c.fields
    return c


# --------------------------------------------------------------------------- the query (R6-R12, R65)

def _inc_last(s: str) -> str:
    return s[:-1] + chr(ord(s[-1]) + 1) if s else s


def key_range(url: str, match_type: str) -> Tuple[str, str]:
    """R8: the start and end keys of a url and matchType."""
    try:
        key = _surt(url)
    except UrlError:
        if url.startswith("urn:"):
            key = url
        else:
            raise QueryError(f"Invalid Url: {url}") from None
    if match_type == "exact":
        return key, key + "!"
    if match_type == "prefix":
        start = key
        if url.endswith("/") and not start.endswith("/"):
            start += "/"
        if url.endswith("?") and not start.endswith("?"):
            start += "?"
        return start, _inc_last(start)
    if match_type == "host":
        host = key.split(")/")[0]
        return host + ")/", host + "*"
    if match_type == "domain":
        host = key.split(")/")[0]
        return (host + "," if "," not in host else host + ")/"), host + "-"
    raise QueryError(f"Invalid match_type: {match_type}")


class Query:
    """The parameters of one query, checked (R65 order, then D1), with the values the stages use."""

    def __init__(self, params: Params, *, now: Optional[Callable[[], str]] = None) -> None:
        p = dict(params)
        self.params = p
        out = p.get("output") or "cdxj"
        if out not in OUTPUTS:
            raise QueryError(f"output={out} not supported")
        self.output = out
        url = p.get("url")
        if not url:
            raise QueryError('The "url" param is required')
        # R28 step 2
        if p.get("closest") == "now":
            p["closest"] = (now or _timestamp_now)()
        content_type = p.get("content_type")
        self.filters: List[str] = ["=mime:" + content_type] if content_type else list(p.get("filter", []))
        # R7 shorthands
        match_type = p.get("matchType")
        if not match_type:
            if url.startswith("*."):
                url, match_type = url[2:], "domain"
            elif url.endswith("*"):
                url, match_type = url[:-1], "prefix"
            else:
                match_type = "exact"
        self.url = url
        self.match_type = match_type
        start, end = key_range(url, match_type)
        self.key = start.encode("utf-8")
        self.end_key = end.encode("utf-8")
        self.from_ts = p.get("from") or p.get("from_ts")
        self.to_ts = p.get("to")
        self.closest = p.get("closest")
        self.reverse = to_bool(p.get("reverse")) or p.get("sort") == "reverse"
        self.resolve_revisits = to_bool(p.get("resolveRevisits"))
        self.allow_fuzzy = to_bool(p.get("allowFuzzy"), True)
        self.nosource = p.get("nosource") == "true"
        self.show_num_pages = to_bool(p.get("showNumPages"))
        self.show_paged_index = to_bool(p.get("showPagedIndex"))
        fl = p.get("fields") or p.get("fl")
        self.fields: Optional[List[str]] = fl.split(",") if fl else None
        self.memento_format = p.get("memento_format")
        self.is_fuzzy = p.get("is_fuzzy")
        self.page_raw = p.get("page")
        self.page_size_raw = p.get("pageSize")
        # D1: what pywb answers with 500 is a 400 here, found before answering
        limit_raw = p.get("limit")
        self.fast_latest = to_bool(p.get("fastLatest"))
        if limit_raw is None:
            self.limit = DEFAULT_LIMIT
            self.limit_given = False
        else:
            self.limit = _bounded_int("limit", limit_raw)
            self.limit_given = True
        if self.fast_latest:  # W12
            if self.closest or self.reverse:
                raise QueryError("fastLatest cannot be combined with closest or sort=reverse")
            if not self.limit_given:
                self.limit, self.limit_given = -1, True
            elif self.limit > 0:
                self.limit = -self.limit
        ct = p.get("collapseTime")
        self.collapse_time: Optional[int] = None
        if ct is not None:
            self.collapse_time = _bounded_int("collapseTime", ct)
        self.collapse: List[Tuple[str, Optional[int]]] = [_parse_collapse(c) for c in p.get("collapse", [])]
        self.compiled_filters = [_CDXFilter(f) for f in self.filters]
        if self.memento_format is not None and self.output == "link":
            try:
                self.memento_format.format(url="", timestamp="")
            except (KeyError, IndexError, ValueError) as e:
                raise QueryError(f"memento_format is not a format of url and timestamp: {e}") from None
        self.show_resume_key = to_bool(p.get("showResumeKey"))
        rk = p.get("resumeKey")
        self.resume: Optional[Tuple[bytes, Optional[int]]] = _parse_resume_key(rk) if rk is not None else None
        if (self.show_resume_key or self.resume is not None) and (
                self.closest or self.reverse or self.limit < 0 or self.fast_latest):
            raise QueryError("resume keys need index order: not with closest, sort=reverse, "
                             "a negative limit or fastLatest")
        if self.show_resume_key and self.output == "link":
            raise QueryError("showResumeKey is not available with output=link")
        if self.resume is not None and self.page_raw is not None:
            raise QueryError("page cannot be combined with resumeKey")

    def fuzzy_query(self, now: Optional[Callable[[], str]] = None) -> Optional["Query"]:
        """R50: the generic rule's second query (None when it does not apply)."""
        url = self.url
        inx = url.find("?")
        if inx > 0:
            length = inx
            if url[length - 1] == "/":
                length -= 1
            url = url[:length]
        fp: Params = {"url": url, "matchType": "prefix", "filter": ["urlkey:"], "is_fuzzy": "1", "limit": "100"}
        for k, v in self.params.items():
            if k not in _FUZZY_SKIP:
                fp[k] = v
        if "content_type" in fp:
            fp.pop("filter", None)
        return Query(fp, now=now)


def _bounded_int(name: str, raw: str, lo: int = -LIMIT_MAX, hi: int = LIMIT_MAX) -> int:
    """The integer parameter ``name`` (as int() reads it: spaces, a sign), clamped to [lo, hi]
    however many digits it has; QueryError (400) when it is no integer."""
    m = _INTEGER.fullmatch(raw)
    if m is not None and len(m.group(2)) > _MAX_DIGITS:
        return lo if m.group(1) == "-" else hi
    try:
        n = int(m.group(1) + m.group(2)) if m is not None else int(raw)
    except ValueError:
        raise QueryError(f"{name} must be an integer, not {_shown(raw)}") from None
    return max(lo, min(hi, n))


def _shown(value: str, most: int = 60) -> str:
    """A parameter's value in a message: repr, cut to ``most`` characters."""
    text = repr(value)
    return text if len(text) <= most else text[: most - 3] + "..."


def _parse_collapse(value: str) -> Tuple[str, Optional[int]]:
    """W3-W5: FIELD or FIELD:N."""
    name, sep, n = value.partition(":")
    bad = QueryError("collapse must be FIELD or FIELD:N with N > 0, not " + _shown(value))
    if not name:
        raise bad
    if not sep:
        return ALIASES.get(name, name), None
    k = _bounded_int("collapse", n) if n.isascii() and n.isdigit() else 0
    if k <= 0:
        raise bad
    return ALIASES.get(name, name), k


_RESUME_RX = re.compile(r"^(.*) (\S+?)(?:!(\d+))?$", re.S)


def _parse_resume_key(value: str) -> Tuple[bytes, Optional[int]]:
    """W13: `URLKEY SP TIMESTAMP [!K]`, percent-encoded as quote_plus writes it."""
    raw = unquote_plus(value)
    m = _RESUME_RX.match(raw)
    if not m or not m.group(1):
        raise QueryError(f"resumeKey is not a resume key: {value!r}")
    k = _bounded_int("resumeKey", m.group(3), 0) if m.group(3) else None
    try:
        return (m.group(1) + " " + m.group(2)).encode("utf-8"), k
    except UnicodeEncodeError:   # a lone surrogate (the Python door takes any str)
        raise QueryError(f"resumeKey is not a resume key: {value!r}") from None


def _page_or_0(raw: Optional[str]) -> int:
    """showPagedIndex's page: digits (after a '-'), else 0."""
    if raw is None or not (raw[1:] if raw[:1] == "-" else raw).isdigit():
        return 0
    try:
        return _bounded_int("page", raw)
    except QueryError:   # (digits int() does not read: '²')
        return 0


def resume_key_for(c: Capture, k: int) -> str:
    return quote_plus(f"{c.get('urlkey', '')} {c.get('timestamp', '')}!{k}")


def _timestamp_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d%H%M%S")


# --------------------------------------------------------------------------- stages

class _CDXFilter:
    """R32-R38."""

    def __init__(self, spec: str) -> None:
        s = spec
        self.invert = s.startswith("!")
        if self.invert:
            s = s[1:]
        mode = "contains"
        if s.startswith("="):
            mode, s = "exact", s[1:]
        elif s.startswith("~"):
            mode, s = "regex", s[1:]
        name, sep, expr = s.partition(":")
        if not sep:
            expr = s
        # no field (no ':' or nothing before it): the whole capture (R33, R36)
        self.field: Optional[str] = ALIASES.get(name, name) if sep and name else None
        self.mode = mode
        self.expr = expr
        if mode == "regex":
            try:
                self.rx = re.compile(expr)
            except re.error as e:
                raise QueryError(f"filter {spec!r}: bad regular expression: {e}") from None

    def __call__(self, c: Capture) -> bool:
        val = c.text() if self.field is None else str(c.fields.get(self.field, ""))
        if self.mode == "exact":
            ok = val == self.expr
        elif self.mode == "regex":
            ok = self.rx.match(val) is not None
        else:
            ok = self.expr in val
        return ok != self.invert


def resolve_revisits(caps: Iterable[Capture]) -> Iterator[Capture]:
    """R29-R31."""
    originals: Dict[Any, Capture] = {}
    for c in caps:
        is_revisit = c.fields.get("mime") == "warc/revisit" or c.fields.get("filename") == "-"
        digest = c.fields.get("digest")
        orig = None
        if digest:
            orig = originals.get(digest)
            if orig is None and not is_revisit:
                originals[digest] = c
        if orig is not None and is_revisit:
            if "mime" in c.fields:
                c.set("mime", orig.fields.get("mime", ""))
            if "status" in c.fields:
                c.set("status", orig.fields.get("status", ""))
            for f in ("length", "offset", "filename"):
                c.set("orig." + f, orig.fields.get(f, "-"))
        else:
            for f in ("length", "offset", "filename"):
                c.set("orig." + f, "-")
        yield c


def clamp(caps: Iterable[Capture], from_ts: Optional[str], to_ts: Optional[str]) -> Iterator[Capture]:
    """R39-R41."""
    if from_ts and len(from_ts) < 14:
        from_ts = from_ts + "10000101000000"[len(from_ts):]
    if to_ts and len(to_ts) < 14:
        to_ts = to_ts + "29991231235959"[len(to_ts):]
    for c in caps:
        ts = c.fields["timestamp"]
        if from_ts and ts < from_ts:
            continue
        if to_ts and ts > to_ts:
            continue
        yield c


def collapse_time(caps: Iterable[Capture], n: int) -> Iterator[Capture]:
    """R42."""
    last = None
    for c in caps:
        tok = (c.fields["timestamp"][:n], c.fields.get("status", ""))
        if tok != last:
            last = tok
            yield c


def collapse_field(caps: Iterable[Capture], name: str, n: Optional[int]) -> Iterator[Capture]:
    """W3: drop a capture whose FIELD (first N characters) equals the last kept one's."""
    last: Any = object()
    for c in caps:
        v = str(c.fields.get(name, ""))
        if n is not None:
            v = v[:n]
        if v != last:
            last = v
            yield c


_MONTHS: Dict[int, Tuple[int, int]] = {}   # YYYYMM -> (seconds at its start, its days), filled as met


def _month(ym: int) -> Optional[Tuple[int, int]]:
    """(seconds since 1970 at the start of month YYYYMM, days in it); None outside 1900-2999
    (where timestamp_to_datetime clamps)."""
    m = _MONTHS.get(ym)
    if m is None:
        y, mo = divmod(ym, 100)
        if not (1900 <= y <= 2999 and 1 <= mo <= 12):
            return None
        m = _MONTHS[ym] = (calendar.timegm((y, mo, 1, 0, 0, 0)), calendar.monthrange(y, mo)[1])
    return m


# Timestamps repeat (a crawl's captures share their seconds; replay asks about one page's time
# for each of its resources): the last few thousand are remembered.
_SECONDS: Dict[str, int] = {}
_SECONDS_MAX = 8192


def timestamp_seconds(ts: str) -> int:
    """Seconds since 1970 of a timestamp as closest reads it (R43): the latest valid time it can
    mean (timestamp_to_datetime's padding and clamping). 14 plain digits of a valid time in
    1900-2999 are counted here; anything else goes through timestamp_to_datetime."""
    n = _SECONDS.get(ts)
    if n is not None:
        return n
    n = _seconds(ts)
    if len(_SECONDS) >= _SECONDS_MAX:
        _SECONDS.clear()
    _SECONDS[ts] = n
    return n


def _seconds(ts: str) -> int:
    if len(ts) == 14 and ts.isdigit() and ts.isascii():
        ym, rest = divmod(int(ts), 100000000)
        m = _month(ym)
        if m is not None:
            d, hms = divmod(rest, 1000000)
            h, ms = divmod(hms, 10000)
            mi, s = divmod(ms, 100)
            if 1 <= d <= m[1] and h < 24 and mi < 60 and s < 60:
                return m[0] + (d - 1) * 86400 + h * 3600 + mi * 60 + s
    return calendar.timegm(timestamp_to_datetime(ts).utctimetuple())


def sort_closest(caps: Iterable[Capture], closest: str, limit: int) -> List[Capture]:
    """R43 (with limit R47/R48) and W10 for negative limits: stable by distance in seconds."""
    target = timestamp_seconds(closest)
    out = sorted(caps, key=lambda c: abs(target - timestamp_seconds(c.fields["timestamp"])))
    if limit < 0:
        return out[limit:]
    return out[:limit]


def closest_first(caps: Sequence[Capture], closest: str) -> List[Capture]:
    """The captures of one url as an exact query lists them (fewer than DEFAULT_LIMIT), in the
    order the same query with ``closest`` answers (the quick path's sort, or the pipeline's
    where a line may name its own timestamp): so that a caller who needs both orders asks once."""
    if len(caps) <= 1:
        return list(caps)
    if any(may_rename_timestamp(c.line) for c in caps):
        return sort_closest(caps, closest, DEFAULT_LIMIT)
    target = timestamp_seconds(closest)
    return sorted(caps, key=lambda c: abs(target - timestamp_seconds(c.timestamp)))


def reverse_limit(caps: Iterable[Capture], limit: int) -> List[Capture]:
    """R46 (W10: a negative limit keeps the oldest |limit|, newest first)."""
    if limit < 0:
        first: List[Capture] = []
        for c in caps:
            if len(first) < -limit:
                first.append(c)
        first.reverse()
        return first
    d: deque = deque(maxlen=limit)
    for c in caps:
        d.appendleft(c)
    return list(d)


def last_n(caps: Iterable[Capture], n: int) -> List[Capture]:
    """W10: the last n captures in stream order."""
    return list(deque(caps, maxlen=n))


# --------------------------------------------------------------------------- sources and the answer

class NamedSource:
    """A source as a query sees it: lines plus the name pywb gives captures from it (R15, R16)."""

    def __init__(self, source: Any, name: str, coll: str, kind: str = "plain") -> None:
        self.source = source
        self.name = name
        self.coll = coll
        self.kind = kind   # "plain" (CDX/CDXJ file, segment) or "zipnum"
        self._origins: Dict[Tuple[bool, Optional[str]], Origin] = {}
        # the lines start <= line < stop of a plain source, at most `limit` (-1: all)
        self.lines: Callable[[bytes, bytes, int], List[bytes]] = \
            source.range_list if isinstance(source, Segment) else self._range_lines

    def origin(self, named: bool, access: Optional[str] = None) -> Origin:
        """The Origin of its captures: with `source` unless nosource (R15), with `access`."""
        o = self._origins.get((named, access))
        if o is None:
            o = self._origins[(named, access)] = Origin(self.name, self.coll, named, access)
        return o

    def _range_lines(self, start: bytes, stop: bytes, limit: int = -1) -> List[bytes]:
        it = self.source.range(start, stop)
        return list(it if limit < 0 else islice(it, limit))


class Answer:
    """status, content type and the body as chunks of bytes."""

    def __init__(self, status: int, content_type: str, body: Iterable[bytes]) -> None:
        self.status = status
        self.content_type = content_type
        self.body = body

    def read(self) -> bytes:
        return b"".join(self.body)


def error_answer(e: QueryError) -> Answer:
    return Answer(e.status, ERROR_CTYPE, [json.dumps({"message": e.message}).encode("utf-8")])


class Result(NamedTuple):
    """What a query's pipeline gives: the captures, and where the next part starts when
    ``limit`` cut the answer and showResumeKey asked for it (W14)."""

    captures: List[Capture]
    resume_key: Optional[str] = None


# The parameters the quick path answers (Engine.quick); any other goes through the pipeline.
_QUICK_PARAMS = frozenset(("url", "matchType", "limit", "closest", "from", "from_ts", "to", "sort", "reverse",
                           "fl", "fields", "nosource", "allowFuzzy", "sources", "output"))


class Engine:
    """Answers queries over named sources (one collection; its sources are fixed once made)."""

    def __init__(self, sources: Sequence[NamedSource], *, access: Optional[str] = None,
                 now: Optional[Callable[[], str]] = None, selectable: bool = False) -> None:
        self.sources = list(sources)
        self.access = access          # R15: "allow" in pywb's automatic layout, None in config layouts
        self.now = now
        self.selectable = selectable  # R18: `sources=` selects by collection name (config layouts)
        # the commonest question, every capture of one url, of a single plain source: ready
        one = self.sources[0] if len(self.sources) == 1 and self.sources[0].kind == "plain" else None
        self._one = (one.lines, one.origin(True, access)) if one is not None else None

    def _selected(self, sel: Optional[str]) -> List[NamedSource]:
        """R18: `sources=a,b` (`!` inverts, `*` all) keeps the sources of the named collections."""
        if not self.selectable or not sel:
            return self.sources
        invert = sel.startswith("!")
        if invert:
            sel = sel[1:]
        if not sel or sel == "*":
            return [] if invert else self.sources
        names = {n.split(":", 1)[0] for n in sel.split(",")}
        return [s for s in self.sources if (s.coll in names) != invert]

    # -- the public door
    def answer(self, params: Union[str, Mapping[str, Any], Params]) -> Answer:
        try:
            p = params_from(params)
            quick = self._quick_answer(p)
            if quick is not None:
                return quick
            return self._answer(Query(p, now=self.now))
        except QueryError as e:
            return error_answer(e)

    def _answer(self, q: Query) -> Answer:
        ctype = OUTPUTS[q.output]
        paged = self._paged(q)
        if paged is not None:
            return self._paged_info(q, paged, ctype)
        res = self.captures(q)
        body = list(render(q.output, q.fields, q.memento_format, res.captures))  # all checked first (D5)
        if res.resume_key is not None:
            if q.output == "json":
                body.append((json.dumps({"resumeKey": res.resume_key}) + "\n").encode("utf-8"))
            else:
                body.append(("\n" + res.resume_key + "\n").encode("utf-8"))
        return Answer(200, ctype, body)

    def _paged(self, q: Query) -> Optional[NamedSource]:
        """The ZipNum source whose pages showNumPages/showPagedIndex describe (R25-R27), if any."""
        zipnums = [s for s in self.sources if s.kind == "zipnum"]
        if (q.show_num_pages or q.show_paged_index) and zipnums:
            if len(self.sources) > 1:
                raise QueryError("showNumPages needs a single ZipNum source")  # D3
            return zipnums[0]
        return None

    def captures(self, q: Query) -> Result:
        """The captures of a query through the whole pipeline (R28), fuzzy fallback and access
        included (not the paging information of _paged)."""
        if q.show_num_pages:  # R27: plain sources, the lines unprocessed
            caps = list(self._load(q))
            self._with_access(caps)
            return Result(caps)
        res = self._run(q)
        if not res.captures and q.allow_fuzzy and q.resume is None:
            fq = q.fuzzy_query(self.now)
            if fq is not None:
                res = Result(self._run(fq, fuzzy_of=q).captures)
        self._with_access(res.captures)
        return res

    def query(self, params: Mapping[str, Any]) -> List[Capture]:
        """The Python door (``Index.query``): the captures as records of the fields
        ``output=json`` gives (only those of ``fl``); a bad parameter raises QueryError. Common
        queries are read straight from the index (``quick``), the others through the whole
        pipeline: the same records either way. A capture's line is read when a field other
        than urlkey and timestamp is first asked for, and a malformed line raises QueryError
        then (a line of no known form, when the query runs)."""
        p: Mapping[str, Any] = params
        for v in params.values():
            if type(v) is not str or not v:
                p = params_from(params)
                break
        fl = (p.get("fields") or p.get("fl")) if len(p) > 1 else None
        caps = self.quick(p)
        if caps is None:
            q = Query(dict(p, output="json"), now=self.now)
            paged = self._paged(q)
            if paged is not None:   # not captures: the pages' JSON objects, as records
                body = self._paged_info(q, paged, OUTPUTS["json"]).read()
                return [Capture.from_fields(json.loads(line)) for line in body.splitlines() if line]
            caps = self.captures(q).captures
        if fl:
            names = fl.split(",")
            for c in caps:
                c.project(names)
        return caps

    def query_url(self, url: str) -> List[Capture]:
        """``query({"url": url})``: every capture of one url (what replay asks for each
        resource, and ``Index.query(url)``), read straight from a single plain source."""
        one = self._one
        if one is not None and url and url[:2] != "*." and url[-1] != "*":
            try:
                start = _surt(url).encode("utf-8")
            except UrlError:
                start = b""
            if start:
                lines = one[0](start, start + b"!", DEFAULT_LIMIT)
                if len(lines) == 1:   # most urls (a list comprehension costs more than the call)
                    return [Capture(lines[0], one[1])]
                if lines:   # (none: the fuzzy fallback is the pipeline's)
                    o = one[1]
                    return [Capture(line, o) for line in lines]
        return self.query({"url": url})

    def exact(self, url: str) -> List[Capture]:
        """``query({"url": url, "matchType": "exact", "allowFuzzy": "false"})``: every capture of
        one url and no fuzzy fallback (what replay asks first for each memento), read straight
        from a single plain source."""
        one = self._one
        if one is not None:
            try:
                start = _surt(url).encode("utf-8")
            except UrlError:
                start = b""
            if start:
                o = one[1]
                return [Capture(line, o) for line in one[0](start, start + b"!", DEFAULT_LIMIT)]
        return self.query({"url": url, "matchType": "exact", "allowFuzzy": "false"})

    # -- the quick path
    def quick(self, p: Mapping[str, Any], check: bool = False) -> Optional[List[Capture]]:
        """The captures of a common query read straight from the sources, without the pipeline;
        None when the query needs it. The same captures as ``captures(Query(p))``, for: url with
        any matchType, limit, closest, from/to, sort/reverse, nosource, allowFuzzy, sources, fl
        (output and fl are the caller's: nothing is projected here), over plain sources (index
        segments, sorted files, several merged). Everything else, a bad parameter (the pipeline
        raises its error), an empty answer with allowFuzzy (the fuzzy fallback), and a line
        that might name its own timestamp where the timestamp orders or selects, goes to the
        pipeline. Lines are read lazily (Capture): with ``check`` every line the pipeline would
        read is read now, so that a malformed one raises here, and only one source is served."""
        if not _QUICK_PARAMS.issuperset(p):
            return None
        get = p.get
        url = get("url")
        if not url:
            return None
        # what a query of a url alone means (R7, R47, R15), then what the others say
        match_type = limit_raw = closest = from_ts = to_ts = None
        reverse = False
        named = True
        srcs = self.sources
        if len(p) > 1:
            match_type = get("matchType")
            limit_raw = get("limit")
            closest = get("closest")
            if closest == "now":
                closest = (self.now or _timestamp_now)()
            rv = get("reverse")
            reverse = get("sort") == "reverse" or (rv is not None and rv != "" and rv.lower() not in FALSE_VALUES)
            from_ts = get("from") or get("from_ts")
            to_ts = get("to")
            named = get("nosource") != "true"
            if self.selectable and "sources" in p:
                srcs = self._selected(get("sources"))
        if not match_type:  # R7
            if url[:2] == "*.":
                url, match_type = url[2:], "domain"
            elif url[-1] == "*":
                url, match_type = url[:-1], "prefix"
            else:
                match_type = "exact"
        if match_type == "exact":
            try:
                start = _surt(url).encode("utf-8")
            except UrlError:
                return None
            stop = start + b"!"
        else:
            try:
                a, z = key_range(url, match_type)
            except QueryError:
                return None
            start, stop = a.encode("utf-8"), z.encode("utf-8")
        if limit_raw is None:
            limit = DEFAULT_LIMIT
        else:
            try:
                limit = _bounded_int("limit", limit_raw)
            except QueryError:
                return None
        for s in srcs:
            if s.kind != "plain":
                return None
        plain_order = not (closest or reverse or from_ts or to_ts)
        n = limit if plain_order and limit > 0 else -1   # R47: the first `limit` are all it needs
        if len(srcs) == 1:
            s = srcs[0]
            o = s._origins.get((named, self.access)) or s.origin(named, self.access)
            caps = [Capture(line, o) for line in s.lines(start, stop, n)]
        elif check:
            return None
        else:
            caps = self._quick_merge(srcs, start, stop, n, named)
        if check and not (plain_order and limit > 0):
            for c in caps:   # the pipeline reads every line of the range (D5)
                c.fields
        if not plain_order:
            if from_ts or to_ts:
                for c in caps:
                    if may_rename_timestamp(c.line):
                        return None
                caps = _clamp_quick(caps, from_ts, to_ts)
            if closest:
                if len(caps) > 1:   # (one capture is in closest order)
                    if not (from_ts or to_ts):
                        for c in caps:
                            if may_rename_timestamp(c.line):
                                return None
                    target = timestamp_seconds(closest)
                    caps.sort(key=lambda c: abs(target - timestamp_seconds(c.timestamp)))
                caps = caps[limit:] if limit < 0 else caps[:limit]
            elif reverse:
                if limit > 0:
                    caps = caps[-limit:][::-1]
                elif limit < 0:
                    caps = caps[:-limit][::-1]
                else:
                    caps = []
            elif limit < 0:
                caps = caps[limit:]
            elif limit:
                del caps[limit:]
        elif limit < 0:
            caps = caps[limit:]
        if not caps and to_bool(get("allowFuzzy"), True):
            return None   # R50: the fuzzy fallback is the pipeline's
        return caps

    def _quick_merge(self, srcs: List[NamedSource], start: bytes, stop: bytes, n: int,
                     named: bool) -> List[Capture]:
        """R19, R15 for the quick path: the captures of the key range of several sources, merged."""
        access = self.access
        found = [(s, ls) for s in srcs for ls in (s.lines(start, stop, n),) if ls]
        if not found:
            return []
        if len(found) == 1:
            o = found[0][0].origin(named, access)
            return [Capture(line, o) for line in found[0][1]]
        # pywb merges before its access check: the merge sees no `access` (R19, R15)
        lists = []
        for s, ls in found:
            o = s.origin(named)
            lists.append([Capture(line, o) for line in ls])
        caps = list(heapq.merge(*lists, key=MergeKey))
        if n >= 0:
            del caps[n:]
        if access is not None:
            later = {s.origin(named): s.origin(named, access) for s, _ in found}
            for c in caps:
                c.reorigin(later[c.origin])   # type: ignore[index]
        return caps

    def _quick_answer(self, p: Params) -> Optional[Answer]:
        """The HTTP door's quick path: a query `quick` answers, rendered as the pipeline
        renders it (the same bytes)."""
        out = p.get("output") or "cdxj"
        if out not in OUTPUTS:
            return None
        caps = self.quick(p, check=True)
        if caps is None:
            return None
        fl = p.get("fields") or p.get("fl")
        return Answer(200, OUTPUTS[out], list(render(out, fl.split(",") if fl else None, None, caps)))

    # -- stages
    def _load(self, q: Query) -> Iterator[Capture]:
        """R19, R15: the merged, named captures of the key range (page of a ZipNum, R22)."""
        start = q.key
        iters = []
        for s in self._selected(q.params.get("sources")):
            iters.append(self._source_caps(q, s, start))
        if not iters:
            return iter(())
        if len(iters) == 1:
            merged: Iterator[Capture] = iters[0]
        else:
            merged = heapq.merge(*iters, key=MergeKey)
        return _number(merged, q.resume)

    def _source_caps(self, q: Query, s: NamedSource, start: bytes) -> Iterator[Capture]:
        if s.kind == "zipnum":
            lines = self._zipnum_page_lines(q, s)
        else:
            rstart = start
            if q.resume is not None and q.resume[0] > rstart:
                rstart = q.resume[0]
            lines = s.source.range(rstart, q.end_key)
        origin = s.origin(not q.nosource)
        for line in lines:
            c = Capture(line, origin)
            c.fields   # read now: a malformed line is an error before the answer starts (D5)
            yield c
    def _zipnum_blocks(self, q: Query, s: NamedSource) -> Tuple[list, int, int, int]:
        """R22-R24: the blocks of the requested page, and (pages, page size, blocks)."""
        page_size_raw = q.page_size_raw
        if page_size_raw is None:
            page_size = 10
        else:
            try:
                page_size = _bounded_int("pageSize", page_size_raw)
            except QueryError:
                raise QueryError(f"Invalid value for pageSize= param: {page_size_raw[:40]}") from None
        zi = s.source
        blocks = list(zi.blocks(q.key, q.end_key))
        if not blocks:
            return [], 0, page_size, 0
        nblocks = len(blocks) - 1
        try:
            pages = nblocks // page_size + 1
        except ZeroDivisionError:
            pages, nblocks = 1, -1
        return blocks, pages, page_size, nblocks

    def _zipnum_page_lines(self, q: Query, s: NamedSource) -> Iterator[bytes]:
        blocks, pages, page_size, nblocks = self._zipnum_blocks(q, s)
        if not blocks:
            return iter(())
        page = 0
        if q.page_raw is not None:
            try:
                page = _bounded_int("page", q.page_raw)
            except QueryError:
                raise QueryError(f"Invalid value for page= param: {q.page_raw[:40]}") from None
        if page < 0 or page >= pages:
            raise QueryError(f"Page {page} invalid: First Page is 0, Last Page is {pages - 1}")
        first = page * page_size if page_size > 0 else 0
        last = first + page_size if page_size > 0 else 1
        chosen = blocks[first:last]
        return self._lines_of_blocks(s.source, chosen, q.key, q.end_key)

    @staticmethod
    def _lines_of_blocks(zi: Any, blocks: list, start: bytes, stop: bytes) -> Iterator[bytes]:
        for b in blocks:
            for line in zi.read_block(b):
                if start <= line < stop:
                    yield line

    def _paged_info(self, q: Query, s: NamedSource, ctype: str) -> Answer:
        blocks, pages, page_size, nblocks = self._zipnum_blocks(q, s)
        if q.show_num_pages:
            if not blocks:
                info = {"pages": 0, "pageSize": page_size, "blocks": 0}
            else:
                nb = nblocks + 1
                if len(blocks) == 1:
                    has = any(q.key <= line < q.end_key for line in s.source.read_block(blocks[0]))
                    if not has:
                        pages, nb = 0, 0
                info = {"pages": pages, "pageSize": page_size, "blocks": nb}
            return Answer(200, ctype, [json.dumps(info).encode("utf-8")])
        # showPagedIndex: the summary lines of the page (R26)
        if q.output in ("cdxj", "link"):
            raise QueryError(f"showPagedIndex needs output=text or output=json, not {q.output}")
        page = _page_or_0(q.page_raw)
        if blocks and (page < 0 or page >= pages):
            raise QueryError(f"Page {page} invalid: First Page is 0, Last Page is {pages - 1}")
        first = page * page_size if page_size > 0 else 0
        chosen = blocks[first:first + page_size] if page_size > 0 else blocks[:1]
        out = []
        for b in chosen:
            if q.output == "text":
                out.append(b.line + b"\n")
            else:
                obj = OrderedDict([("urlkey", b.key.decode("utf-8")), ("part", b.part), ("offset", b.offset),
                                   ("length", b.length), ("lineno", b.number)])
                out.append((json.dumps(obj) + "\n").encode("utf-8"))
        return Answer(200, ctype, out)

    def _run(self, q: Query, fuzzy_of: Optional[Query] = None) -> Result:
        caps: Iterable[Capture] = self._load(q)
        if q.resolve_revisits:
            caps = resolve_revisits(caps)
        if q.compiled_filters:
            flt = q.compiled_filters
            caps = (c for c in caps if all(f(c) for f in flt))
        if q.from_ts or q.to_ts:
            caps = clamp(caps, q.from_ts, q.to_ts)
        if q.collapse_time is not None:
            caps = collapse_time(caps, q.collapse_time)
        for name, n in q.collapse:
            caps = collapse_field(caps, name, n)
        limit = q.limit
        resume: Optional[str] = None
        if q.closest:
            out = sort_closest(caps, q.closest, limit)
        elif q.reverse:
            if limit == 0:
                out = []
            else:
                out = reverse_limit(caps, limit)
        elif limit < 0:
            out = last_n(caps, -limit)
        elif limit:
            out, resume = self._first(caps, limit, q)
        else:
            out = list(caps)
        if fuzzy_of is not None:
            out = [c for c in out if _fuzzy_match(fuzzy_of, c)]
            for c in out:
                c.set("is_fuzzy", "1")
        return Result(out, resume)

    def _first(self, caps: Iterable[Capture], limit: int, q: Query) -> Tuple[List[Capture], Optional[str]]:
        out: List[Capture] = []
        it = iter(caps)
        for c in it:
            out.append(c)
            if len(out) >= limit:
                break
        if q.show_resume_key and len(out) >= limit:
            if next(it, None) is not None:
                last = out[-1]
                return out, resume_key_for(last, last.source_pos)
        return out, None

    def _with_access(self, caps: List[Capture]) -> None:
        """R15: `access` last, on every capture with a url."""
        access = self.access
        if access is None:
            return
        for c in caps:
            if c.fields.get("url"):
                c.set("access", access)


def render(output: str, fields: Optional[List[str]], memento_format: Optional[str],
           caps: Iterable[Capture]) -> Iterator[bytes]:
    """The body lines of captures in an output format (R55-R60)."""
    if output == "link":
        prev = None
        for c in caps:
            if prev is not None:
                yield _link(prev, memento_format, ",\n").encode("utf-8")
            prev = c
        if prev is not None:
            yield _link(prev, memento_format, "\n").encode("utf-8")
        return
    for c in caps:
        if output == "json":
            yield (c.to_json(fields) + "\n").encode("utf-8")
        elif output == "text":
            if fields is None and not c.changed:
                yield c.line + b"\n"
            else:
                f = c.fields
                names = fields if fields is not None else list(f)
                yield (" ".join(str(f.get(n, "-")) for n in names) + "\n").encode("utf-8")
        else:  # cdxj (R56, R60): the fields after the first two, whatever they are
            f = c.fields
            rest = dict(islice(f.items(), 2, None))
            if fields is None:
                js = json.dumps(visible(rest))
            else:
                js = json.dumps({k: rest[k] for k in fields if k in rest})
            yield f"{f.get('urlkey')} {f.get('timestamp')} {js}\n".encode("utf-8")


def _clamp_quick(caps: List[Capture], from_ts: Optional[str], to_ts: Optional[str]) -> List[Capture]:
    """`clamp` on the timestamps cut from the lines (R39-R41)."""
    if from_ts and len(from_ts) < 14:
        from_ts = from_ts + "10000101000000"[len(from_ts):]
    if to_ts and len(to_ts) < 14:
        to_ts = to_ts + "29991231235959"[len(to_ts):]
    return [c for c in caps if not (from_ts and c.timestamp < from_ts) and not (to_ts and c.timestamp > to_ts)]


def _number(caps: Iterator[Capture], resume: Optional[Tuple[bytes, Optional[int]]]) -> Iterator[Capture]:
    """Count each capture's place among the stream's lines with its urlkey and timestamp
    (`source_pos`, what a resume key names, W13); with a resume key, start after its position
    (W15)."""
    prev: Optional[bytes] = None
    n = 0
    key, k = resume if resume is not None else (None, None)
    for c in caps:
        kt = f"{c.fields.get('urlkey')} {c.fields.get('timestamp')}".encode("utf-8")
        if kt == prev:
            n += 1
        else:
            prev, n = kt, 1
        c.source_pos = n
        if key is not None:
            if kt < key:
                continue
            if kt == key and (k is None or n <= k):
                continue
            key = None
        yield c


def _link(c: Capture, memento_format: Optional[str], end: str) -> str:
    """R58, R59."""
    url = c.fields.get("url")
    if not url:
        url = f"file://{c.fields.get('filename')}:{c.fields.get('offset')}:{c.fields.get('length')}"
    dt = timestamp_to_datetime(c.fields["timestamp"])
    date = formatdate(calendar.timegm(dt.utctimetuple()), usegmt=True)
    if memento_format:
        link_url = memento_format.format(url=url, timestamp=dt.strftime("%Y%m%d%H%M%S"))
    else:
        link_url = url
    s = f'<{link_url}>; rel="memento"; datetime="{date}"'
    coll = c.fields.get("source-coll")
    if coll:
        s += f'; collection="{coll}"'
    return s + end


def _fuzzy_match(q: Query, c: Capture) -> bool:
    """R51: does a capture of the fuzzy query answer the original query?"""
    url = q.url
    urlkey = q.key.decode("utf-8")
    url_no_query = url.split("?", 1)[0]
    last = url_no_query.rsplit("/", 1)[-1]
    dot = last.rfind(".")
    ext = last[dot + 1:] if dot > 0 else ""  # os.path.splitext: a leading dot is not an extension
    if c.fields.get("status") == "204" and "__pywb_method=options" in c.fields.get("urlkey", ""):
        return False
    check = False
    if ext and ext not in _FUZZY_NOT_EXTS:
        check = True
    else:
        mime = c.fields.get("mime")
        if mime and mime in _FUZZY_MIMES:
            check = True
        elif c.fields.get("requestBody") or c.fields.get("method"):
            check = True
    if check:
        cu = c.fields.get("url", "")
        if cu == url_no_query or cu.startswith(url_no_query + "?"):
            return True
    match_key = c.fields.get("urlkey", "")
    cur = urlkey
    for rx, rep in _FUZZY_NORMALIZE:
        match_key = rx.sub(rep, match_key)
        cur = rx.sub(rep, cur)
        if cur == match_key:
            return True
    return False


# --------------------------------------------------------------------------- the Python door

def named_sources(paths: Sequence[str], coll: str = "cdx") -> Tuple[List[NamedSource], Optional[str], bool]:
    """Sources for collections and loose index files, named as pywb names them (R16): the files
    of a collection as `COLL/indexes/FILE` (with `access`), loose files as a configured
    collection `coll` (`coll`, or `coll:FILE` when there are several). Returns
    (sources, access, selectable)."""
    out: List[NamedSource] = []
    loose = [p for p in paths if not os.path.isdir(p)]
    colls = [p for p in paths if os.path.isdir(p)]
    for cpath in colls:
        name = collection_name(cpath)
        for f in index_files(cpath):
            out.append(NamedSource(open_source(f), source_name(name, f), name,
                                   "zipnum" if source_kind(f) == "zipnum" else "plain"))
    for f in loose:
        name = f"{coll}:{os.path.basename(f)}" if len(loose) > 1 else coll
        out.append(NamedSource(open_source(f), name, coll, "zipnum" if source_kind(f) == "zipnum" else "plain"))
    access = "allow" if colls else None
    return out, access, not colls


class Index:
    """Captures of collections and index files, queried with the CDX API's parameters.

        idx = Index("collections/web")                    # or segments, .idx, sorted .cdxj files
        idx.query(url="example.com/*", filter=["=status:200"], limit=10)   # -> list of Capture
        idx.answer("url=example.com&output=json")         # -> Answer: status, content_type, body
    """

    def __init__(self, *paths: str, coll: str = "cdx") -> None:
        sources, access, selectable = named_sources(list(paths), coll)
        self.engine = Engine(sources, access=access, selectable=selectable)

    @classmethod
    def of(cls, engine: Engine) -> "Index":
        """An Index over an engine made elsewhere (the replay server keeps one per collection)."""
        idx = cls.__new__(cls)
        idx.engine = engine
        return idx

    def answer(self, params: Union[str, Mapping[str, Any]]) -> Answer:
        return self.engine.answer(params)

    def query(self, url: Optional[str] = None, **params: Any) -> List[Capture]:
        """The captures (read-only mappings of their fields, as ``output=json`` gives them).
        ``params`` are the CDX API's (``PARAMS``); a name that is none of them, a value its
        parameter cannot take (``strict_params``) or a bad query raises QueryError. See
        ``Engine.query``."""
        if url is not None:
            if not params:
                return self.engine.query_url(url)
            params["url"] = url
        return self.engine.query(strict_params(params))

    def exact(self, url: str) -> List[Capture]:
        """Every capture of ``url`` (matchType=exact), without the fuzzy fallback."""
        return self.engine.exact(url)

    def close(self) -> None:
        for s in self.engine.sources:
            s.source.close()

    def __enter__(self) -> "Index":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
