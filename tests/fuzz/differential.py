"""Differential fuzz harnesses: warchive against a peer on the same input, wherever both accept it.

- diff_reader: any bytes. warcio's ArchiveIterator (arc2warc=True) and warchive's reader list
  the records (offset, length, WARC-Type, WARC-Target-URI). "Both accept": warcio reads to
  the end without an exception and warchive reads to the end without an error and without
  reporting a defect (a defect is warchive saying the file is not what the format says,
  where warcio's reading is undefined). Then the listings must be equal.
- diff_warcgen: the input picks records (GET pairs, responses, resources, metadata,
  warcinfo, revisits; their URIs, statuses, types and bodies), warcio's WARCWriter writes
  them (tests/warcgen.py), plain or gzip. Valid by construction, so nothing may be raised,
  and: warchive's listing == warcio's, offsets == where the writer put each record, and
  ``warchive index`` lines (CDXJ or CDX-11, picked by the input) == cdxj-indexer's.
- diff_surt: warchive's SURT (options picked by the input, str or bytes) == the `surt`
  package's, run without DNS (tests/surt_oracle.py); where it raises, warchive raises
  UrlError. Left out: URLs for which the package asks DNS (docs/format.md, "Deliberate
  deviations from the surt package", 1: warchive never does DNS).
- diff_whole: any bytes, as the inflated data of one gzip member. Where
  warchive.warc.whole.parse_whole (replay's reader of a record from its whole member) takes
  them, the record is the one warchive's ArchiveIterator reads from them compressed as one
  member: type, offset, lengths, WARC and HTTP heads (fields, protocol, status line, length),
  payload bytes; and the iterator must read it without an error. Nothing may escape.
- diff_robots: robots.txt rule matching == RFC 9309 2.2.3 read literally (the brute-force
  reference of tests/unit/test_robots.py, repeated here with memoisation), and the decision
  of a group of up to six rules (RFC mode) == 2.2.2's (the longest match, allow on a tie), on
  patterns and paths over the alphabet ``ab*/`` with an optional final ``$``.

A divergence is an AssertionError naming both answers. Those found and kept as deliberate
are listed in KNOWN (with the reason) and in docs/format.md.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
from typing import List, Optional, Tuple

import atheris
from cdxj_indexer.main import main as cdxj_indexer_main
from warcio.archiveiterator import ArchiveIterator as WarcioIterator

import warcgen
from robots_ref import reference_match
from surt_oracle import no_dns, reference
from tests.fuzz.formats import TMP
from warchive import surt as ws
from warchive.capture import robots
from warchive.capture.robots import Rule
from warchive.errors import ArchiveError, UrlError
from warchive.index.build import index_paths
from warchive.index.cdx import IndexOptions
from warchive.warc import reader
from warchive.warc.reader import ArchiveIterator
from warchive.warc.whole import parse_whole

Listing = List[Tuple[int, Optional[int], Optional[str], Optional[str]]]
MAX_RECORDS = 64

KNOWN = {
    "surt-dns": "the package asks DNS for a dotted-number host glibc rejects; warchive never does "
                "(docs/format.md, SURT deviation 1): such URLs are left out",
}


def _value(value: Optional[str]) -> Optional[str]:
    """A head value as warchive reads it: warcio keeps the leading white space of a value folded
    from an empty first line onto a continuation line (docs/format.md, "Where we differ")."""
    return value.lstrip() if isinstance(value, str) else value


def _warcio_target(uri: Optional[str]) -> Optional[str]:
    """The target URI as warcio means to present it (its _ensure_target_uri_format: <...>
    removed, spaces as %20). warcio applies that with replace_header, which changes the last
    copy of a repeated WARC-Target-URI, while get_header reads the first: applied here to the
    first, the one both readers take (crasher reader-repeated-target-uri)."""
    uri = _value(uri)
    if uri is not None and uri.startswith("<") and uri.endswith(">"):
        uri = uri[1:-1]
    return uri.replace(" ", "%20") if uri is not None else None


def warcio_listing(data: bytes) -> Optional[Listing]:
    """warcio's records of data, or None when it raises (it does not accept them)."""
    out: Listing = []
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            it = WarcioIterator(io.BytesIO(data), arc2warc=True)
            for rec in it:
                out.append((it.get_record_offset(), it.get_record_length(), _value(rec.rec_type),
                            _warcio_target(rec.rec_headers.get_header("WARC-Target-URI"))))
                if len(out) > MAX_RECORDS:
                    return None
    except Exception:   # any exception: warcio does not accept the input
        return None
    return out


def warchive_listing(source: object) -> Tuple[Listing, list]:
    """warchive's records and the defects it reported (raises its ArchiveError)."""
    defects: list = []
    out: Listing = []
    with reader.open(source, on_defect=defects.append) as it:   # type: ignore[arg-type]
        for rec in it:
            out.append((rec.offset, rec.length, rec.type, rec.target_uri))
            if len(out) > MAX_RECORDS:
                break
    return out, defects


def fuzz_diff_reader(data: bytes) -> None:
    peer = warcio_listing(data)
    if peer is None or len(peer) > MAX_RECORDS:
        return
    try:
        ours, defects = warchive_listing(io.BytesIO(data))
    except ArchiveError:
        return
    if defects:
        return
    if ours != peer:
        raise AssertionError(f"warcio {peer[:4]!r} != warchive {ours[:4]!r}")


# ------------------------------------------------------------------ one record from its whole member

def _view(rec) -> tuple:
    http = rec.http
    return (rec.format, rec.type, rec.offset, rec.content_length, rec.target_uri, rec.record_id,
            (rec.headers.protocol, rec.headers.statusline, list(rec.headers.fields), rec.headers.total_len),
            (http.protocol, http.statusline, list(http.fields), http.total_len) if http is not None else None,
            rec.payload.read())


def fuzz_diff_whole(data: bytes) -> None:
    whole = parse_whole(data, 0)
    if whole is None:
        return
    member = gzip.compress(data, compresslevel=1)
    try:
        with ArchiveIterator(io.BytesIO(member), on_defect=lambda d: None) as it:
            rec = next(iter(it), None)
            theirs = _view(rec) if rec is not None else None
    except ArchiveError as e:
        raise AssertionError(f"parse_whole took a record the iterator refuses: {e}") from None
    ours = _view(whole)
    if theirs != ours:
        raise AssertionError(f"iterator {str(theirs)[:600]} != parse_whole {str(ours)[:600]}")


# ------------------------------------------------------------------ generated WARCs

_TYPES = ["text/html; charset=utf-8", "text/plain", "image/png", "application/json", "text/css",
          "application/octet-stream"]
_STATUSES = ["200 OK", "404 Not Found", "301 Moved Permanently", "304 Not Modified", "500 Oops", "204 No Content"]
_PROFILE = "http://netpreserve.org/warc/1.0/revisit/identical-payload-digest"


def _uri(fdp: atheris.FuzzedDataProvider) -> str:
    scheme = ("http", "https", "http", "dns", "urn")[fdp.ConsumeIntInRange(0, 4)]
    text = "".join(c for c in fdp.ConsumeUnicodeNoSurrogates(48) if c.isprintable() and c not in " <>")
    if scheme == "dns":
        return "dns:" + (text.split("/")[0] or "example.com")
    if scheme == "urn":
        return "urn:x-fuzz:" + text
    host, _, path = text.partition("/")
    return f"{scheme}://{host or 'example.com'}/{path}"


def generated(fdp: atheris.FuzzedDataProvider) -> list:
    """warcgen records picked by the input."""
    recs: list = []
    for i in range(fdp.ConsumeIntInRange(1, 5)):
        kind = fdp.ConsumeIntInRange(0, 5)
        name = f"fz/{i}"
        uri = _uri(fdp)
        ctype = _TYPES[fdp.ConsumeIntInRange(0, len(_TYPES) - 1)]
        status = _STATUSES[fdp.ConsumeIntInRange(0, len(_STATUSES) - 1)]
        body = fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 300))
        headers = [("Content-Type", ctype), ("Content-Length", str(len(body)))]
        if kind == 0 and uri.startswith("http"):
            path = "/" + uri.split("/", 3)[-1]
            recs += warcgen.get_pair(name, uri, path, status=status, headers=headers, body=body,
                                     response_first=fdp.ConsumeBool())
        elif kind <= 1:
            recs.append(warcgen.w_http("response", name, uri, "HTTP/1.1", status, headers, body))
        elif kind == 2:
            recs.append(warcgen.w_block("resource", name, uri, ctype, body))
        elif kind == 3:
            recs.append(warcgen.w_block("metadata", name, uri, "application/warc-fields", body))
        elif kind == 4:
            recs.append(warcgen.warcinfo(name, "fuzz.warc.gz"))
        else:
            recs.append(warcgen.w_http("revisit", name, uri, "HTTP/1.1", status, headers[:1], b"",
                                       **{"WARC-Profile": _PROFILE,
                                          "WARC-Payload-Digest": warcgen.sha1_b32(body)}))
    return recs


def _cdxj_indexer(path: str, args: List[str]) -> bytes:
    out = os.path.join(TMP, "peer.cdxj")
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        cdxj_indexer_main(args + [path, "-o", out])
    with open(out, "rb") as f:
        return f.read()


def _warchive_index(path: str, cdx11: bool) -> bytes:
    lines: List[bytes] = []
    index_paths([path], lines.append, IndexOptions(cdx11=cdx11, report=lambda s: None))
    return b"".join(x if x.endswith(b"\n") else x + b"\n" for x in lines)


def fuzz_diff_warcgen(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    gz, cdx11 = fdp.ConsumeBool(), fdp.ConsumeBool()
    try:
        recs = generated(fdp)
        chunks = [r.member() if gz else r.plain() for r in recs]
    except Exception:   # warcio refused to write what was picked: no input
        return
    path = os.path.join(TMP, "gen.warc.gz" if gz else "gen.warc")
    offsets = [0]
    with open(path, "wb") as f:
        for c in chunks:
            f.write(c)
            offsets.append(offsets[-1] + len(c))
    with open(path, "rb") as f:
        whole = f.read()
    peer = warcio_listing(whole)
    if peer is None:
        raise AssertionError("warcio cannot read what its own writer wrote")
    ours, defects = warchive_listing(path)
    if defects:
        raise AssertionError(f"defects in a valid file: {[str(d) for d in defects[:3]]}")
    if ours != peer:
        raise AssertionError(f"warcio {peer!r} != warchive {ours!r}")
    if [r[0] for r in ours] != offsets[:-1]:
        raise AssertionError(f"offsets {[r[0] for r in ours]} != written at {offsets[:-1]}")
    with no_dns() as stand_in:
        want = _cdxj_indexer(path, ["--cdx11"] if cdx11 else [])
        if stand_in.dns_names:   # KNOWN["surt-dns"]
            return
    got = _warchive_index(path, cdx11)
    if got != want:
        raise AssertionError(f"cdxj-indexer {want[:600]!r}\n!= warchive {got[:600]!r}")


# ------------------------------------------------------------------ SURT

_SURT_OPTIONS = sorted(set(ws.OPTIONS) - {"public_suffix"})


def fuzz_diff_surt(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    opts = {name: fdp.ConsumeBool() for name in _SURT_OPTIONS}
    as_bytes = fdp.ConsumeBool()
    raw = fdp.ConsumeBytes(fdp.remaining_bytes())
    url = raw if as_bytes else raw.decode("utf-8", "surrogateescape")
    with no_dns() as stand_in:
        want = reference(url, stand_in, **opts)
    if want.needs_dns:   # KNOWN["surt-dns"]
        return
    if want.error is not None:
        try:
            got = ws.surt(url, **opts)
        except UrlError:
            return
        raise AssertionError(f"{url!r} {opts}: the package raised {want.error}, warchive gave {got!r}")
    got = ws.surt(url, **opts)
    if type(got) is not type(want.key) or got != want.key:
        raise AssertionError(f"{url!r} {opts}: package {want.key!r}, warchive {got!r}")


# ------------------------------------------------------------------ robots.txt rules

def reference_allowed(rules: List[Tuple[bool, str]], path: str) -> bool:
    """RFC 9309 2.2.2: the matching rule with the most octets decides, allow on a tie; none: allowed."""
    best: Optional[Tuple[int, bool]] = None
    for allow, pattern in rules:
        if reference_match(pattern, path) and (best is None or (len(pattern), allow) > best):
            best = (len(pattern), allow)
    return True if best is None else best[1]


def fuzz_diff_robots(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    rules: List[Tuple[bool, str]] = []
    for _ in range(fdp.ConsumeIntInRange(1, 6)):
        allow, anchored = fdp.ConsumeBool(), fdp.ConsumeBool()
        body = "".join("ab*/"[b & 3] for b in fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 10)))
        rules.append((allow, "/" + body + ("$" if anchored else "")))
    path = "/" + "".join("ab*/"[b & 3] for b in fdp.ConsumeBytes(24))
    for allow, pattern in rules:
        got, want = Rule(pattern, allow).matches(path), reference_match(pattern, path)
        if got != want:
            raise AssertionError(f"pattern {pattern!r} path {path!r}: warchive {got}, RFC 9309 {want}")
    text = "User-agent: *\n" + "".join(f"{'Allow' if a else 'Disallow'}: {p}\n" for a, p in rules)
    got = robots.parse(text.encode(), mode=robots.RFC).decide(path, "warchive").allowed
    want = reference_allowed(rules, path)
    if got != want:
        raise AssertionError(f"{text!r} {path!r}: warchive allowed={got}, RFC 9309 {want}")
