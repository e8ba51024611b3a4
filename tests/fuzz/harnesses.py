"""One atheris harness per parser entry point, and the property each must keep.

Each harness is a function of one ``bytes`` input. The property, for any input:
only ArchiveError children escape (or the ValueError an API documents, named in
``ALLOWED`` with the reason); no other exception, no crash, no hang. A harness
also checks a cheap invariant where one exists (the WARC head kernel equals the
pure Python reference whenever it does not decline), so a wrong answer is a
finding too, not only an exception.

Coverage comes from instrumenting the Python of warchive, the `surt` package and
this module (run.py imports them so); the kernels are not instrumented. The harnesses of
in-memory texts (chunked bodies, ARC heads, CDX queries, HTML/CSS rewriting) are in texts.py,
those of files (segments, ZipNum, journals, WACZ, manifests) in formats.py.

The harnesses are plain functions so the default test run can call them on the
seed corpus (tests/fuzz/test_harnesses.py) and ``python -m tests.fuzz.run NAME``
can hand them to atheris/libFuzzer for a long run.
"""

from __future__ import annotations

import io
from typing import Callable, Dict, Tuple, Type

import atheris

from warchive._ext import gzip_members
from warchive._ext import warc_headers
from warchive.capture import robots
from warchive.errors import ArchiveError
from warchive.index.query import parse_line
from warchive.replay.urls import ArchivalUrl
from warchive.surt import OPTIONS, canonicalize, surt
from warchive.warc import headers
from warchive.warc import reader

import surt as surt_peer      # the peer, run for its coverage only (see fuzz_surt)

from tests.fuzz import differential, formats, texts

# run.py imports this module under atheris.instrument_imports (warchive, surt and this module);
# it is not done here, so the default test run does not instrument warchive for later tests.

Harness = Callable[[bytes], None]

MAX_MEMBERS = 64      # members walked per input: bounds the work, not the coverage


def _outcome(members: int, trusted: int, err: str) -> None:
    """Branch on what the (uninstrumented) kernel did, so libFuzzer sees a new outcome as new
    coverage: without it the gzip harness has ~9 Python edges and keeps one input."""
    if members == 0:
        pass
    elif members == 1:
        pass
    elif members == 2:
        pass
    elif members < 8:
        pass
    else:
        pass
    if trusted == 0:
        pass
    elif trusted == members:
        pass
    else:
        pass
    if err == "":
        pass
    elif err == "GzipError":
        pass
    elif err == "TruncatedError":
        pass
    elif err == "CorruptRecordError":
        pass
    elif err == "RecordFormatError":
        pass
    elif err == "UnsupportedFormatError":
        pass
    else:
        pass


def fuzz_gzip(data: bytes) -> None:
    """gzip_members.Reader over a BytesIO, skip mode and verify mode: walk the members, reading heads."""
    for verify in (False, True):
        r = gzip_members.Reader(io.BytesIO(data), verify=verify)   # bytes would be a path
        off = members = trusted = 0
        err = ""
        try:
            for _ in range(MAX_MEMBERS):
                if not r.member_begin(off):
                    break
                r.member_head(256)
                end = r.member_finish()
                if end <= off:
                    raise AssertionError(f"member end {end} not past its start {off}")
                members += 1
                trusted += bool(r.member_trusted)
                off = end
        except ArchiveError as e:
            err = type(e).__name__
            if not verify:
                _outcome(members, trusted, err)
                raise
        finally:
            r.close()
        _outcome(members, trusted, err)


def fuzz_warc(data: bytes) -> None:
    """The record iterator (plain, gzip, ARC told by the first bytes) over bytes, payloads read."""
    n = 0
    for rec in reader.open(io.BytesIO(data)):
        rec.payload.read(1 << 16)
        n += 1
        if n >= MAX_MEMBERS:
            break


def fuzz_warc_head(data: bytes) -> None:
    """warchive.warc.headers.parse_head and the warc_headers kernel: kernel == reference."""
    for final in (False, True):
        got = warc_headers.parse_head(data, final)
        ref = headers.parse_head_py(data, 0, len(data), final)
        if got is not None and got is not False:
            if ref is None:
                raise AssertionError("kernel parsed a head the reference wants more bytes for")
            status, fields, end, total = got
            if (status, fields, end, total) != (ref.status, ref.fields, ref.end, ref.total_len):
                raise AssertionError(f"kernel {got!r} != reference {(ref.status, ref.fields, ref.end, ref.total_len)!r}")
        if got is False and ref is not None:
            raise AssertionError("kernel asked for more bytes where the reference parsed a head")
        head = headers.parse_head(data, 0, len(data), final)
        if head is not None:
            headers.warc_protocol(head.status)


def fuzz_http_head(data: bytes) -> None:
    """An HTTP head as the reader parses it: parse_head, then http_head and the lookups on it."""
    head = headers.parse_head(data, 0, len(data), True)
    if head is None:
        raise AssertionError("parse_head(final=True) returned None")
    h = headers.http_head(head)
    h.get("Content-Type")
    h.get("Transfer-Encoding")
    h.to_bytes()


_OPTION_NAMES = sorted(set(OPTIONS) - {"public_suffix"})   # public_suffix=True: a documented ValueError


def fuzz_surt(data: bytes) -> None:
    """SURT (kernel) with options picked from the input, as str and bytes, and pywb's canonicalize."""
    fdp = atheris.FuzzedDataProvider(data)
    opts = {name: fdp.ConsumeBool() for name in _OPTION_NAMES}
    raw = fdp.ConsumeBytes(fdp.remaining_bytes())
    surt(raw, **opts)
    text = raw.decode("utf-8", "surrogateescape")
    surt(text, **opts)
    canonicalize(text)
    canonicalize(text, surt_ordered=False)
    # the kernel is not coverage-instrumented: the peer's Python branches guide libFuzzer to URLs of
    # new shapes (its answer is not compared here: see docs/format.md for the deliberate deviations)
    try:
        surt_peer.surt(text)
    except Exception:
        pass


def fuzz_cdxj(data: bytes) -> None:
    """A stored index line read as the query side reads it (parse_line, then its fields)."""
    c = parse_line(data)
    c.urlkey, c.timestamp
    for k in list(c.keys()):
        c.get(k)


def fuzz_archival_url(data: bytes) -> None:
    """ArchivalUrl.parse of a replay path, then printed back and its properties."""
    path = data.decode("utf-8", "surrogateescape")
    u = ArchivalUrl.parse(path)
    str(u)
    u.is_replay


def fuzz_robots(data: bytes) -> None:
    """robots.txt parsed in both readings, then decisions for a few agents and paths."""
    split = data.find(b"\n\n\n")
    body, probe = (data, b"/") if split < 0 else (data[:split], data[split + 3:] or b"/")
    for mode in (robots.GOOGLE, robots.RFC):
        rt = robots.parse(body, mode=mode)
        for agent in ("warchive", "*", "Googlebot"):
            rt.decide(probe, agent)


HARNESSES: Dict[str, Harness] = {
    "gzip": fuzz_gzip,
    "warc": fuzz_warc,
    "warc_head": fuzz_warc_head,
    "http_head": fuzz_http_head,
    "surt": fuzz_surt,
    "cdxj": fuzz_cdxj,
    "archival_url": fuzz_archival_url,
    "robots": fuzz_robots,
    "chunked": texts.fuzz_chunked,
    "arc": texts.fuzz_arc,
    "cdx_query": texts.fuzz_cdx_query,
    "html": texts.fuzz_html,
    "css": texts.fuzz_css,
    "segment": formats.fuzz_segment,
    "zipnum": formats.fuzz_zipnum,
    "journal": formats.fuzz_journal,
    "wacz": formats.fuzz_wacz,
    "manifest": formats.fuzz_manifest,
    "diff_reader": differential.fuzz_diff_reader,
    "diff_whole": differential.fuzz_diff_whole,
    "diff_warcgen": differential.fuzz_diff_warcgen,
    "diff_surt": differential.fuzz_diff_surt,
    "diff_robots": differential.fuzz_diff_robots,
}

ALLOWED: Dict[str, Tuple[Type[BaseException], ...]] = {name: (ArchiveError,) for name in HARNESSES}
ALLOWED["diff_warcgen"] = ()   # a valid file by construction: not even an ArchiveError
ALLOWED["diff_whole"] = ()     # parse_whole never raises: it takes a record or says None
"""What may escape each harness: ArchiveError children (QueryError, ArchivalUrlError, UrlError
are among them and are also ValueErrors, as their APIs document); nothing for a valid file."""


def checked(name: str) -> Harness:
    """The harness ``name`` with its property: an allowed exception is swallowed, any other escapes."""
    fn, allowed = HARNESSES[name], ALLOWED[name]

    def run(data: bytes) -> None:
        try:
            fn(data)
        except allowed:
            pass
    return run
