"""What `warchive session show|failed|skipped|stats` print: a session journal as plain-text tables.

Everything here reads a ``Session`` or ``UrlRecord`` (warchive.capture.session) and
returns text; it must not write to a journal. Tables are aligned columns separated by two
spaces, numbers right-aligned, a rule under the header; an empty value is "-".
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from typing import Any, Dict, List, Optional, Sequence, Tuple
from urllib.parse import urlsplit

import msgspec

from .reader import Session
from .record import UrlRecord
from .schema import Entry

Row = Sequence[Any]


def format_table(headers: Sequence[str], rows: Sequence[Row], indent: str = "") -> str:
    """Rows as aligned columns; int and float cells are right-aligned."""
    cells = [[_cell(v) for v in r] for r in rows]
    widths = [len(h) for h in headers]
    for r in cells:
        for i, c in enumerate(r):
            widths[i] = max(widths[i], len(c))
    numeric = [any(_is_number(r[i]) for r in rows) and all(_is_number(r[i]) or r[i] is None for r in rows)
               for i in range(len(headers))]

    def line(vals: Sequence[str]) -> str:
        out = []
        for i, v in enumerate(vals):
            out.append(v.rjust(widths[i]) if numeric[i] else v.ljust(widths[i]))
        return (indent + "  ".join(out)).rstrip()

    text = [line(list(headers)), indent + "  ".join("-" * w for w in widths)]
    text.extend(line(r) for r in cells)
    return "\n".join(text)


def format_pairs(pairs: Sequence[Tuple[str, Any]], indent: str = "") -> str:
    """`name  value` lines, the values aligned."""
    w = max((len(k) for k, _ in pairs), default=0)
    return "\n".join(f"{indent}{k.ljust(w)}  {_cell(v)}".rstrip() for k, v in pairs)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _cell(v: Any) -> str:
    if v is None or v == "":
        return "-"
    if isinstance(v, float):
        return f"{v:.3f}"
    if isinstance(v, int) and not isinstance(v, bool):
        return f"{v:,}"
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return str(v).replace("\t", "\\t").replace("\n", "\\n")


def _where(e: Entry) -> str:
    return f"{e.warc}:{e.offset}" if e.warc else "-"


# --- show ----------------------------------------------------------------------

def session_header(s: Session) -> str:
    pairs: List[Tuple[str, Any]] = [
        ("session", s.path), ("format", f"warchive-session {s.version}, created {s.info.get('created', '-')}"),
        ("software", s.software)]
    if s.seeds:
        pairs.append(("seeds", " ".join(s.seeds)))
    if s.config:
        pairs.append(("config", json.dumps(s.config, ensure_ascii=False, sort_keys=True)))
    pid = s.writer_pid
    if pid is not None:
        pairs.append(("live", f"being written by process {pid}"))
    if s.torn:
        pairs.append(("torn", f"{s.torn} bytes after the last complete entry (a write in progress or cut short)"))
    return format_pairs(pairs)


def show_all(s: Session) -> str:
    """One row per original URL: state, final status, chain length, type, size, WARC record."""
    rows = []
    for r in s.records():
        final = r.final
        f = final.fetch if final is not None else None
        resp = next((e for e in reversed(final.records) if e.type in ("response", "revisit", "resource")),
                    None) if final is not None else None
        rows.append((r.url, r.state, r.status, len(r.chain), f.content_type if f else None,
                     f.size if f else None, _where(resp) if resp else None, r.last.t if r.last else None))
    return session_header(s) + "\n\n" + format_table(
        ["url", "state", "status", "hops", "content type", "size", "warc:offset", "time"], rows) + \
        f"\n\n{len(rows):,} URLs, {len(s):,} entries"


def show_record(r: UrlRecord) -> str:
    """Everything about one record: its chain, WARC records, failures, skips, files, links."""
    out = [f"{r.url}  {r.state}" + (f" {r.status}" if r.status is not None else "")]
    chain = []
    for i, h in enumerate(r.chain):
        f = h.fetch
        chain.append((i, h.url, h.status, h.location, f.content_type if f else None, f.size if f else None,
                      f.etag if f else None, f.last_modified if f else None, f.duration if f else None,
                      f.digest if f else None, f.t if f else None))
    out += ["", "redirect chain:", format_table(
        ["#", "url", "status", "location", "content type", "size", "etag", "last-modified", "seconds",
         "digest", "time"], chain, "  ")]
    headers = [(h.url, f.headers) for h in r.chain for f in [h.fetch] if f is not None and f.headers]
    if headers:
        out += ["", "extra request headers:", format_table(
            ["url", "header", "value"], [(u, k, v) for u, hs in headers for k, v in hs.items()], "  ")]
    if r.records:
        out += ["", "WARC records:", format_table(
            ["url", "type", "warc", "offset", "length", "record id", "time"],
            [(e.hop or r.url, e.type, e.warc, e.offset, e.length, e.id, e.t) for e in r.records], "  ")]
    if r.failures:
        out += ["", "failed attempts:", format_table(
            ["url", "time", "reason", "status", "attempt"],
            [(e.hop or r.url, e.t, e.reason, e.status, e.attempt) for e in r.failures], "  ")]
    if r.skips:
        out += ["", "skipped:", format_table(
            ["url", "time", "reason", "digest", "duplicate of", "original date", "original record"],
            [(e.hop or r.url, e.t, e.reason, e.digest, e.original_uri, e.original_date, e.original_record_id)
             for e in r.skips], "  ")]
    if r.saved:
        out += ["", "saved to:"] + [f"  {e.path}" for e in r.saved]
    if r.conversions:
        out += ["", "conversions:", format_table(["conversion", "path", "time"],
                                                 [(e.conversion, e.path, e.t) for e in r.conversions], "  ")]
    if r.outlinks:
        out += ["", f"outlinks ({len(r.outlinks)}):"] + [f"  {u}" for u in r.outlinks]
    if r.other:
        out += ["", "other entries (kinds this version does not know):"]
        others = {id(e) for e in r.other}
        for i, e in enumerate(r.entries):
            if id(e) in others:
                out.append("  " + (r.lines[i].decode("utf-8", "replace") if r.lines is not None else repr(e)))
    return "\n".join(out)


# --- failed, skipped -------------------------------------------------------------

def failed_table(s: Session) -> Tuple[str, int]:
    rows = []
    for r in s.failed():
        last = r.failures[-1]
        rows.append((r.url, len(r.failures), last.t, last.reason, last.hop))
    return format_table(["url", "attempts", "last attempt", "reason", "at hop"], rows), len(rows)


def skipped_table(s: Session) -> Tuple[str, int]:
    rows = []
    for r in s.skipped():
        for e in r.skips:
            rows.append((r.url if not e.hop else f"{r.url} -> {e.hop}", e.reason, e.digest, e.original_uri,
                         e.original_date, e.original_record_id, e.t))
    return format_table(["url", "reason", "digest", "duplicate of", "original date", "original record", "time"],
                        rows), len(rows)


# --- stats -------------------------------------------------------------------------

class _Stat(msgspec.Struct, gc=False):
    kind: str = ""
    url: Optional[str] = None
    t: Optional[str] = None
    status: Optional[int] = None
    content_type: Optional[str] = None
    size: Optional[int] = None
    warc: Optional[str] = None
    length: Optional[int] = None
    reason: Optional[str] = None


def _parse_time(t: Optional[str]) -> Optional[datetime]:
    if not t:
        return None
    try:
        return datetime.fromisoformat(t.replace("Z", "+00:00"))
    except ValueError:
        return None


def stats(s: Session) -> Dict[str, Any]:
    """Counts over a whole session, in one pass over lean decodes of its entries."""
    last: Dict[str, _Stat] = {}
    kinds: Counter = Counter()
    mime: Counter = Counter()
    mime_bytes: Counter = Counter()
    fail_reasons: Counter = Counter()
    skip_reasons: Counter = Counter()
    warcs = set()
    payload = warc_bytes = 0
    tmin = tmax = None
    for e in s.decode_all(_Stat):
        kinds[e.kind] += 1
        if e.t is not None and isinstance(e.t, str):
            if tmin is None or e.t < tmin:
                tmin = e.t
            if tmax is None or e.t > tmax:
                tmax = e.t
        k = e.kind
        if k == "fetch":
            if e.url is not None:
                last[e.url] = e
            payload += e.size or 0
            ct = (e.content_type or "").split(";")[0].strip().lower() or "(none)"
            if e.status is not None and 200 <= e.status < 300:
                mime[ct] += 1
                mime_bytes[ct] += e.size or 0
        elif k == "failed":
            if e.url is not None:
                last[e.url] = e
            fail_reasons[e.reason or "-"] += 1
        elif k == "skipped":
            if e.url is not None:
                last[e.url] = e
            skip_reasons[e.reason or "-"] += 1
        elif k == "record":
            if e.warc:
                warcs.add(e.warc)
            warc_bytes += e.length or 0
    urls = s.urls()
    states: Counter = Counter()
    status: Counter = Counter()
    for u in urls:
        le = last.get(u)
        if le is None:
            states["pending"] += 1
        elif le.kind == "fetch":
            states["fetched"] += 1
            status[le.status] += 1
        else:
            states["failed" if le.kind == "failed" else "skipped"] += 1
    hosts: Counter = Counter()
    for u in urls:
        try:
            hosts[urlsplit(u).hostname or "-"] += 1
        except ValueError:
            hosts["-"] += 1
    t0, t1 = _parse_time(tmin), _parse_time(tmax)
    return {"entries": len(s), "urls": len(urls), "kinds": dict(kinds), "states": dict(states),
            "status": {str(k): v for k, v in status.items()}, "payload_bytes": payload, "warc_bytes": warc_bytes,
            "warc_files": len(warcs), "mime": dict(mime), "mime_bytes": dict(mime_bytes),
            "hosts": dict(hosts), "failure_reasons": dict(fail_reasons), "skip_reasons": dict(skip_reasons),
            "first": tmin, "last": tmax,
            "duration": (t1 - t0).total_seconds() if t0 is not None and t1 is not None else None}


def _human(n: int) -> str:
    f = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if f < 1024 or unit == "TiB":
            return f"{f:.0f} {unit}" if unit == "B" else f"{f:.1f} {unit}"
        f /= 1024
    return str(n)


def stats_text(st: Dict[str, Any], top: int = 10) -> str:
    dur = st["duration"]
    rate = f", {st['urls'] / dur:,.1f} URLs/s" if dur else ""
    out = [format_pairs([
        ("entries", f"{st['entries']:,}"), ("URLs", f"{st['urls']:,}"),
        ("payload bytes", f"{st['payload_bytes']:,} ({_human(st['payload_bytes'])})"),
        ("WARC bytes", f"{st['warc_bytes']:,} ({_human(st['warc_bytes'])}) in {st['warc_files']} files"),
        ("first entry", st["first"]), ("last entry", st["last"]),
        ("duration", f"{dur:,.1f} s{rate}" if dur is not None else None)])]

    def counts(title: str, c: Dict[Any, int], extra: Optional[Dict[Any, int]] = None) -> None:
        if not c:
            return
        items = sorted(c.items(), key=lambda kv: (-kv[1], str(kv[0])))
        shown = items[:top]
        rows = [(k, v) + ((extra.get(k, 0),) if extra is not None else ()) for k, v in shown]
        if len(items) > top:
            rest = items[top:]
            rows.append((f"({len(rest)} more)", sum(v for _, v in rest))
                        + ((sum(extra.get(k, 0) for k, _ in rest),) if extra is not None else ()))
        out.extend(["", format_table([title, "count"] + (["bytes"] if extra is not None else []), rows)])

    counts("state", st["states"])
    counts("final status", st["status"])
    counts("content type (2xx)", st["mime"], st["mime_bytes"])
    counts("host", st["hosts"])
    counts("failure reason", st["failure_reasons"])
    counts("skip reason", st["skip_reasons"])
    counts("entry kind", st["kinds"])
    return "\n".join(out)
