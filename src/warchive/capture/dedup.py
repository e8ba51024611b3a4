"""Writer-side deduplication: is a fetched payload written, written as a revisit, or not written?

The capture layer asks a ``Deduplicator`` about each response before writing
it, and tells it about each response it wrote in full::

    index = DigestIndex("crawl/dedup")                 # persists across crawls
    dd = Deduplicator(index, policy="revisit", min_size=256)
    d = dd.decide(url, "sha1:...", size, mime="text/html", status=200)
    if d.action == "write":     ... write the response ...; dd.written(url, digest, date, record_id, status=200)
    elif d.action == "revisit": ... write a revisit record with d.revisit_headers("1.1") ...
    else:                       ... write nothing; SessionDB.skipped(**d.skipped_fields()); crawl log: d.annotation

What is deduplicated, and why (Heritrix's ContentDigestHistory, warcprox's
dedup db and pywb's recorder were read; none of their code is here):

* Only 2xx responses with a non-empty payload are originals and duplicates.
  A 3xx revisit replays without its body (pywb and ``load_capture`` both
  serve it alone, ``Content-Length: 0``), so a redirect's body would be lost;
  4xx/5xx pages are small and often differ in headers that matter.
* The index is URL-agnostic (Heritrix's and warcprox's choice; pywb's
  recorder looks up the same URL only): a payload seen under any URL is a
  duplicate. Revisits therefore always carry WARC-Refers-To-Target-URI and
  WARC-Refers-To-Date, which pywb needs to find an original at another URL.
* A payload smaller than the minimum size is written in full: a revisit
  record carries about 250 more bytes of WARC head (profile and three
  Refers-To fields) than a response, so below ``DEFAULT_MIN_SIZE`` (256) a
  revisit saves nothing. Per MIME thresholds (``{"text/": 1024}``) follow
  warcprox's separate text and binary minimums.
* Policies: ``write`` (no dedup; the index is still fed), ``revisit``
  (identical-payload-digest revisit), ``skip`` (write nothing: every such
  decision must be recorded, see ``Decision.skipped_fields``).
* A 304 to a conditional request (``conditional_headers`` from the previous
  capture's ETag / Last-Modified) is a ``server-not-modified`` revisit
  (``Deduplicator.not_modified``).

Seeding from CDX(J) files and WARCs (``seed``) indexes what pywb's dedup
lookup would accept as an original: not a revisit (mime ``warc/revisit``),
status 2xx, a digest that is not the empty payload's.

This module decides; it never writes WARC records or session entries.
"""

from __future__ import annotations

import email.utils
import gzip
import os
from dataclasses import dataclass, field
from typing import IO, Any, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

from ..errors import ArchiveError, IndexFormatError
from ..index.cdx import iter_inputs
from ..index.query import QueryError, parse_line
from ..warc import open as open_warc
from ..warc.digest import is_empty_digest
from .digest_index import DigestError, DigestIndex, Original, digest_key

__all__ = [
    "DEFAULT_MIN_SIZE", "Decision", "Deduplicator", "DigestError", "DigestIndex", "Original", "POLICIES",
    "PreviousCapture", "SeedStats", "conditional_headers", "profile_uri", "rebuild_index", "revisit_headers", "seed",
    "seed_from_cdx", "seed_from_records", "seed_from_warcs",
]

WRITE, REVISIT, SKIP = "write", "revisit", "skip"
POLICIES = (WRITE, REVISIT, SKIP)
DEFAULT_MIN_SIZE = 256
IDENTICAL_PAYLOAD = "identical-payload-digest"
SERVER_NOT_MODIFIED = "server-not-modified"

PathLike = Union[str, os.PathLike[str]]


def profile_uri(profile: str, warc_version: str = "1.1") -> str:
    """The WARC-Profile URI of a revisit profile for WARC/1.0 or WARC/1.1."""
    v = warc_version.replace("WARC/", "")
    if v not in ("1.0", "1.1"):
        raise ValueError(f"WARC version {warc_version!r}: 1.0 or 1.1")
    if profile not in (IDENTICAL_PAYLOAD, SERVER_NOT_MODIFIED):
        raise ValueError(f"revisit profile {profile!r}: {IDENTICAL_PAYLOAD} or {SERVER_NOT_MODIFIED}")
    return f"http://netpreserve.org/warc/{v}/revisit/{profile}"


def revisit_headers(original: Original, profile: str = IDENTICAL_PAYLOAD,
                    warc_version: str = "1.1") -> List[Tuple[str, str]]:
    """WARC head fields a revisit of ``original`` needs beyond the usual ones: WARC-Profile,
    WARC-Refers-To (when the record id is known), WARC-Refers-To-Target-URI and
    WARC-Refers-To-Date. The last two are WARC/1.1 fields that Heritrix and Wget also write in
    WARC/1.0 files; pywb needs them to find an original under another URL, so both versions
    get them."""
    out = [("WARC-Profile", profile_uri(profile, warc_version))]
    if original.record_id:
        out.append(("WARC-Refers-To", original.record_id))
    if original.uri:
        out.append(("WARC-Refers-To-Target-URI", original.uri))
    if original.date:
        out.append(("WARC-Refers-To-Date", original.date))
    return out


# --------------------------------------------------------------------------- decisions

@dataclass(frozen=True)
class Decision:
    """What to do with one response. ``action`` is write, revisit or skip; ``reason`` a short
    code (new-payload, duplicate, not-modified, policy-write, below-min-size, status,
    empty-payload, bad-digest); ``detail`` says it in words; ``original`` is what a revisit
    or skip refers to."""

    action: str
    reason: str
    url: str
    digest: Optional[str]
    size: Optional[int]
    detail: str = ""
    original: Optional[Original] = None
    profile: Optional[str] = None            # identical-payload-digest or server-not-modified

    @property
    def written(self) -> bool:
        return self.action != SKIP

    def revisit_headers(self, warc_version: str = "1.1") -> List[Tuple[str, str]]:
        """The revisit's WARC-Profile and WARC-Refers-To* fields (``revisit_headers``)."""
        if self.original is None or self.profile is None:
            raise ValueError(f"a {self.action} decision ({self.reason}) has no original to refer to")
        return revisit_headers(self.original, self.profile, warc_version)

    def revisit_kwargs(self) -> Dict[str, Any]:
        """Keyword arguments of ``warchive.warc.writer.WarcWriter.write_revisit(url, http_head,
        **kwargs)`` (and ``RecordBuilder.revisit``): the original's payload digest, record id,
        URI and date, and the profile. A server-not-modified revisit gets no payload digest
        (a 304 has no payload, and the earlier one may have changed since)."""
        o = self.original
        if o is None or self.profile is None:
            raise ValueError(f"a {self.action} decision ({self.reason}) has no original to refer to")
        return {"payload_digest": (self.digest or o.digest) if self.profile == IDENTICAL_PAYLOAD else None,
                "refers_to": o.record_id, "refers_to_uri": o.uri or None, "refers_to_date": o.date or None,
                "profile": self.profile}

    def skipped_fields(self) -> Dict[str, Any]:
        """Keyword arguments of ``SessionDB.skipped(url, reason, digest=, original_uri=,
        original_date=, original_record_id=)``: how a later reader tells "not captured" from
        "captured elsewhere". ``reason`` is ``duplicate`` (identical payload) or
        ``not-modified`` (a 304 to a conditional request)."""
        o = self.original
        return {"url": self.url, "reason": self.reason,
                "digest": self.digest, "original_uri": o.uri if o else None,
                "original_date": o.date if o else None, "original_record_id": o.record_id if o else None}

    @property
    def annotation(self) -> str:
        """The crawl-log annotation: Heritrix's ``duplicate:digest`` for an identical-payload
        revisit, ``duplicate:server-not-modified``, ``duplicate:skipped`` ("written nowhere,
        its payload is at original_uri"), and "" when written in full."""
        if self.action == REVISIT:
            return "duplicate:digest" if self.profile == IDENTICAL_PAYLOAD else "duplicate:server-not-modified"
        if self.action == SKIP:
            return "duplicate:skipped"
        return ""


def _norm_mime(mime: Optional[str]) -> str:
    return (mime or "").split(";", 1)[0].strip().lower()


def _is_2xx(status: Optional[int]) -> bool:
    return status is None or 200 <= int(status) < 300


class Deduplicator:
    """The decision of the capture layer (see the module's doc). ``index`` may be None (a
    crawl without dedup: every decision is ``write``). ``min_size_by_mime`` maps a full type
    (``image/png``) or a major type (``text/`` or ``text/*``) to a minimum payload size in
    bytes; other types get ``min_size``. Not thread-safe (one per crawler loop)."""

    def __init__(self, index: Optional[DigestIndex], policy: str = REVISIT, min_size: int = DEFAULT_MIN_SIZE,
                 min_size_by_mime: Optional[Mapping[str, int]] = None) -> None:
        if policy not in POLICIES:
            raise ValueError(f"dedup policy {policy!r}: one of {', '.join(POLICIES)}")
        if min_size < 0:
            raise ValueError(f"minimum size {min_size} < 0")
        self.index = index
        self.policy = policy
        self.min_size = min_size
        self._by_type: Dict[str, int] = {}
        self._by_major: Dict[str, int] = {}
        for k, v in (min_size_by_mime or {}).items():
            k = k.strip().lower()
            if k.endswith("/*") or k.endswith("/"):
                self._by_major[k.split("/", 1)[0]] = int(v)
            else:
                self._by_type[k] = int(v)

    def min_size_for(self, mime: Optional[str]) -> int:
        m = _norm_mime(mime)
        if m in self._by_type:
            return self._by_type[m]
        return self._by_major.get(m.split("/", 1)[0], self.min_size)

    def decide(self, url: str, payload_digest: Optional[str], size: int, mime: Optional[str] = None,
               status: Optional[int] = 200) -> Decision:
        """What to do with a response of ``status`` whose transfer-decoded payload has
        ``size`` bytes and digest ``payload_digest``. Cheap checks first; the index is asked
        only about a payload that could be deduplicated."""
        def write(reason: str, detail: str) -> Decision:
            return Decision(WRITE, reason, url, payload_digest, size, detail)

        if self.index is None or self.policy == WRITE:
            return write("policy-write", "dedup policy is write")
        if not _is_2xx(status):
            return write("status", f"status {status} is not deduplicated (only 2xx)")
        if not payload_digest or size <= 0 or is_empty_digest(payload_digest):
            return write("empty-payload", "no payload to deduplicate")
        least = self.min_size_for(mime)
        if size < least:
            return write("below-min-size", f"{size} bytes < {least} for {_norm_mime(mime) or 'no type'}")
        try:
            orig = self.index.get(payload_digest)
        except DigestError as e:
            return write("bad-digest", str(e))
        if orig is None:
            return write("new-payload", "payload not seen before")
        detail = f"payload of {orig.uri} at {orig.date}"
        return Decision(self.policy, "duplicate", url, payload_digest, size, detail, orig, IDENTICAL_PAYLOAD)

    def written(self, url: str, payload_digest: Optional[str], date: str, record_id: Optional[str],
                size: Optional[int] = None, status: Optional[int] = 200) -> Optional[Original]:
        """A response was written in full: remember it as the original of its payload (when it
        can be one: 2xx, non-empty, a known digest). Returns the original that stays."""
        if self.index is None or not payload_digest or not _is_2xx(status):
            return None
        if (size is not None and size <= 0) or is_empty_digest(payload_digest):
            return None
        try:
            return self.index.add(payload_digest, url, date, record_id)
        except DigestError:
            return None

    def not_modified(self, url: str, status: int, previous: Optional["PreviousCapture"],
                     conditional: bool = True) -> Optional[Decision]:
        """Classify the answer to a conditional request: a 304 to a request made conditional
        with ``conditional_headers(previous)`` is a server-not-modified revisit of the previous
        capture (skip under the skip policy, a plain response under the write policy). None
        when the answer is not such a 304 (then ``decide`` as usual)."""
        if status != 304 or previous is None or not conditional:
            return None
        orig = Original(previous.digest or "", previous.url, previous.date or "", previous.record_id)
        detail = f"not modified since {previous.url} at {previous.date}"
        if self.policy == WRITE:
            return Decision(WRITE, "policy-write", url, None, 0, detail)
        return Decision(self.policy, "not-modified", url, previous.digest, 0, detail, orig, SERVER_NOT_MODIFIED)


# --------------------------------------------------------------------------- conditional requests

@dataclass(frozen=True)
class PreviousCapture:
    """Facts of an earlier capture of a URL (from the session database) that make the next
    request conditional and let a 304 refer back to it."""

    url: str
    date: Optional[str] = None            # its WARC-Date
    record_id: Optional[str] = None       # its WARC-Record-ID
    digest: Optional[str] = None          # its payload digest
    etag: Optional[str] = None            # the ETag it was served with, as received
    last_modified: Optional[str] = None   # its Last-Modified, as received

    @classmethod
    def from_entry(cls, entry: Mapping[str, Any]) -> "PreviousCapture":
        """From a session-database entry (a dict), whatever the spelling of its keys
        (``etag``/``ETag``, ``last_modified``/``Last-Modified``, ``warc_date``/``date``,
        ``record_id``/``warc_record_id``, ``digest``/``payload_digest``/``checksum``)."""
        low = {str(k).lower().replace("-", "_"): v for k, v in entry.items()}

        def pick(*names: str) -> Optional[str]:
            for n in names:
                v = low.get(n)
                if v not in (None, ""):
                    return str(v)
            return None

        return cls(url=pick("url", "target_uri", "uri") or "", date=pick("warc_date", "date"),
                   record_id=pick("warc_record_id", "record_id"),
                   digest=pick("payload_digest", "digest", "checksum"),
                   etag=pick("etag"), last_modified=pick("last_modified"))


def conditional_headers(previous: Optional[PreviousCapture]) -> List[Tuple[str, str]]:
    """Request headers that ask the server for the resource only if it changed since
    ``previous``: If-None-Match with its ETag as received (weak ones included: RFC 9110
    compares If-None-Match weakly), If-Modified-Since with its Last-Modified when that is an
    HTTP date (a malformed one would make some servers answer 200 or 412 at random)."""
    out: List[Tuple[str, str]] = []
    if previous is None:
        return out
    etag = (previous.etag or "").strip()
    if etag and all(32 < ord(c) < 127 for c in etag.replace("W/", "", 1)):
        out.append(("If-None-Match", etag))
    lm = (previous.last_modified or "").strip()
    if lm:
        try:
            ok = email.utils.parsedate_to_datetime(lm) is not None
        except (TypeError, ValueError, IndexError):
            ok = False
        if ok:
            out.append(("If-Modified-Since", lm))
    return out


# --------------------------------------------------------------------------- seeding

@dataclass
class SeedStats:
    """What seeding read: ``added`` entries became (or replaced) originals, ``known`` were
    already in the index with an earlier capture, ``ignored`` counts the rest by reason."""

    read: int = 0
    added: int = 0
    known: int = 0
    ignored: Dict[str, int] = field(default_factory=dict)

    def ignore(self, why: str) -> None:
        self.ignored[why] = self.ignored.get(why, 0) + 1

    def __iadd__(self, other: "SeedStats") -> "SeedStats":
        self.read += other.read
        self.added += other.added
        self.known += other.known
        for k, v in other.ignored.items():
            self.ignored[k] = self.ignored.get(k, 0) + v
        return self


def _offer(index: DigestIndex, stats: SeedStats, digest: Optional[str], url: Optional[str], date: Optional[str],
           record_id: Optional[str], mime: Optional[str], status: Optional[str]) -> None:
    stats.read += 1
    if (mime or "").strip().lower() == "warc/revisit":
        return stats.ignore("revisit")
    st = (status or "").strip()
    if not (len(st) == 3 and st.startswith("2") and st.isdigit()):
        return stats.ignore("status not 2xx")
    if not digest or digest == "-" or is_empty_digest(digest):
        return stats.ignore("no or empty payload digest")
    if not url or not date:
        return stats.ignore("no URL or date")
    try:
        key = digest_key(digest)
    except DigestError:
        return stats.ignore("unparseable digest")
    spelled = digest.strip() if ":" in digest else "sha1:" + digest.strip()
    before = index.get_key(key, spelled)
    kept = index.add(spelled, url, date, record_id)
    if before is not None and kept == before:
        stats.known += 1
    else:
        stats.added += 1


# CDX legend letters (the " CDX a b ..." first line, as Wget writes it) -> field names
_LEGEND = {"a": "url", "b": "timestamp", "m": "mime", "s": "status", "k": "digest", "u": "record_id",
           "N": "urlkey", "A": "urlkey", "g": "filename"}


def _open_text(path: str) -> IO[bytes]:
    with open(path, "rb") as f:
        magic = f.read(2)
    if magic == b"\x1f\x8b":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def _cdx_records(path: str, skip_errors: bool, stats: SeedStats) -> Iterator[Dict[str, Any]]:
    legend: Optional[List[str]] = None
    with _open_text(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip(b"\r\n")
            if not line.strip():
                continue
            if line.lstrip().startswith(b"CDX ") and lineno == 1:
                legend = [_LEGEND.get(c, c) for c in line.decode("ascii", "replace").split()[1:]]
                continue
            try:
                if legend is not None and not line.split(b" ", 3)[-1].startswith(b"{"):
                    cols = line.decode("utf-8").split(" ")
                    if len(cols) != len(legend):
                        raise ValueError(f"{len(cols)} fields, the legend names {len(legend)}")
                    yield dict(zip(legend, cols))
                else:
                    yield dict(parse_line(line).fields)
            except (QueryError, ValueError, UnicodeDecodeError) as e:
                err = IndexFormatError(path, None, f"line {lineno}: not a CDX(J) line ({e})")
                if not skip_errors:
                    raise err from None
                stats.ignore("unreadable line")


def seed_from_cdx(index: DigestIndex, paths: Iterable[PathLike], *, skip_errors: bool = False) -> SeedStats:
    """Add the originals named by CDXJ or CDX files (gzip too; a `` CDX`` legend line, as
    Wget writes with its record-id field ``u``, is honoured). The date of an entry is its
    14-digit timestamp; CDXJ lines carry no record id, so their revisits get no
    WARC-Refers-To."""
    stats = SeedStats()
    for p in paths:
        for f in _cdx_records(os.fspath(p), skip_errors, stats):
            rid = f.get("record_id")
            _offer(index, stats, _s(f.get("digest")), _s(f.get("url")), _s(f.get("timestamp")),
                   None if rid in (None, "-") else str(rid), _s(f.get("mime")), _s(f.get("status")))
    return stats


def _s(v: Any) -> Optional[str]:
    return None if v is None else str(v)


def seed_from_warcs(index: DigestIndex, paths: Iterable[PathLike], *, skip_errors: bool = False) -> SeedStats:
    """Add the originals of WARC files (directories are walked): response records with a 2xx
    HTTP status and a WARC-Payload-Digest (records without one are counted, not hashed)."""
    stats = SeedStats()
    for path in iter_inputs([os.fspath(p) for p in paths]):
        try:
            with open_warc(path, types={"response"}) as records:
                for rec in records:
                    http = rec.http
                    status = http.status if http is not None else None
                    _offer(index, stats, rec.headers.get("WARC-Payload-Digest"), rec.target_uri, rec.date,
                           rec.record_id, None, status)
        except ArchiveError:
            if not skip_errors:
                raise
            stats.ignore("damaged WARC (rest of file)")
    return stats


def seed_from_records(index: DigestIndex, places: Iterable[Tuple[PathLike, int]], *,
                      skip_errors: bool = False) -> SeedStats:
    """Add the originals among the records at these (WARC file, offset) places, as
    ``seed_from_warcs`` would (a record that is not a response is counted as ignored)."""
    stats = SeedStats()
    for path, offset in places:
        try:
            with open_warc(os.fspath(path), offset=offset) as records:
                for rec in records:
                    if rec.type != "response":
                        stats.ignore("not a response")
                        break
                    http = rec.http
                    _offer(index, stats, rec.headers.get("WARC-Payload-Digest"), rec.target_uri, rec.date,
                           rec.record_id, None, http.status if http is not None else None)
                    break
        except (ArchiveError, OSError):
            if not skip_errors:
                raise
            stats.ignore("damaged or missing WARC")
    return stats


CDX_SUFFIXES = (".cdx", ".cdxj", ".cdx.gz", ".cdxj.gz")


def seed(index: DigestIndex, paths: Iterable[PathLike], *, skip_errors: bool = False) -> SeedStats:
    """Seed from CDX(J) files (by their suffix) and WARC files or directories (the rest)."""
    cdx: List[str] = []
    warcs: List[str] = []
    for p in (os.fspath(p) for p in paths):
        (cdx if p.endswith(CDX_SUFFIXES) else warcs).append(p)
    stats = seed_from_cdx(index, cdx, skip_errors=skip_errors)
    stats += seed_from_warcs(index, warcs, skip_errors=skip_errors)
    return stats


def rebuild_index(path: PathLike, sources: Iterable[PathLike], *,
                  skip_errors: bool = False) -> Tuple[str, SeedStats]:
    """A new index in ``path`` made only of ``sources`` (what it held before is replaced, at
    once, when the new generation is published). Returns the new file and the counts."""
    with DigestIndex(path, fresh=True) as ix:
        stats = seed(ix, sources, skip_errors=skip_errors)
        out = ix.flush()
    return str(out), stats
