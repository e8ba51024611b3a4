"""A revisit's original: the record holding the payload a revisit stands for.

``Originals(index, record_indexes, open_at).find(capture, head)`` runs the
lookups below in order, the first that finds a record that opens winning
(docs/api.md, "How a revisit is resolved", says the same for users):

1. the ``orig.*`` fields of a line joined by ``resolveRevisits`` (R29);
2. ``WARC-Refers-To-Target-URI`` at ``WARC-Refers-To-Date`` (or the capture's
   own time): the closest non-revisit of that exact URL with the same digest
   (any capture when the revisit has no digest), as pywb looks it up;
3. the same-URL digest join: the revisit's own URL, non-revisits, same digest;
4. ``WARC-Refers-To`` (a record id, as Wget writes it) in a record index
   (a revisit found there is followed to its own original, up to 4 deep);
5. the digest alone in a record index (URL-agnostic, any URL).

Digests are compared as ``warchive.warc.digest.Digest`` values, however the
index and the record spell them. Nothing found raises ``OriginalNotFound``,
which names each lookup and what came of it. Records are opened only through
``open_at``, the loader's, which keeps them with the load that asked.
"""

from __future__ import annotations

import calendar
import functools
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Tuple, TypeVar

from ..errors import ArchiveError, OriginalNotFound
from ..index.capture import Capture
from ..index.query import Index
from ..index.rix import RecordIndex, RixEntry, date_timestamp, unbracket
from ..timestamps import timestamp_to_datetime
from ..warc.digest import Digest
from ..warc.record import HeaderFields
from .archives import OpenRecord

MAX_CANDIDATES = 100        # originals tried per lookup, closest first
MAX_CHAIN = 4               # revisit -> revisit -> ... followed through record ids

# open_at(filename, offset, capture): the record at offset of filename; capture is that record's (None:
# none known): it names the record in errors, and its length, where there, is read as the record's length
OpenAt = Callable[[str, Any, Optional[Capture]], OpenRecord]


class _NotThere(Exception):
    """One lookup found nothing; the message says where it looked and why."""


class _Unusable(ArchiveError):
    """A candidate that opened but cannot serve as the original (a revisit itself, another digest)."""


@dataclass
class _Revisit:
    """What a revisit's capture and record (when it has one) say of its original."""
    capture: Capture
    head: Optional[OpenRecord]
    digest: Optional[Digest]
    timestamp: str
    url: Optional[str]
    refers_uri: Optional[str]       # WARC-Refers-To-Target-URI
    refers_ts: Optional[str]        # WARC-Refers-To-Date
    refers_id: Optional[str]        # WARC-Refers-To (a record id)

    @classmethod
    def of(cls, f: Capture, head: Optional[OpenRecord]) -> "_Revisit":
        rec = head.rec if head is not None else None
        h = rec.headers if rec is not None else None
        digest = Digest.find(f.get("digest"))
        if digest is None and h is not None:
            digest = Digest.find(h.get("WARC-Payload-Digest"))
        ts = str(f.get("timestamp") or "") or (date_timestamp(rec.date) if rec is not None else None) or ""
        url = f.get("url") or (rec.target_uri if rec is not None else None)
        if h is None:
            return cls(f, head, digest, ts, url, None, None, None)
        return cls(f, head, digest, ts, url, unbracket(h.get("WARC-Refers-To-Target-URI")),
                   date_timestamp(h.get("WARC-Refers-To-Date")), unbracket(h.get("WARC-Refers-To")))

    @property
    def what(self) -> str:
        where = f" ({self.head.filename}:{self.head.rec.offset})" if self.head is not None else ""
        return f"revisit of {self.url} at {self.timestamp}{where}"


class Originals:
    """The lookups for revisits' originals over one index and its record indexes (either may be
    missing: lookups that need it say so), opening records with ``open_at``."""

    def __init__(self, index: Optional[Index], record_indexes: Sequence[RecordIndex], open_at: OpenAt) -> None:
        self.index = index
        self.record_indexes = list(record_indexes)
        self.open_at = open_at

    def find(self, f: Capture, head: Optional[OpenRecord], depth: int = 0) -> Tuple[OpenRecord, str]:
        """The original of the revisit ``f`` (``head``: its record, None for a line without
        one) and how it was found: the first of the lookups that finds it."""
        r = _Revisit.of(f, head)
        looked: List[str] = []
        for how, lookup in self._lookups(r, depth):
            try:
                return lookup(), how
            except _NotThere as e:
                looked.append(str(e))
        if r.digest is None and not r.refers_uri and not r.refers_id:
            looked.append("the revisit has no digest, no WARC-Refers-To-Target-URI and no WARC-Refers-To")
        raise OriginalNotFound(r.what, looked)

    def _lookups(self, r: _Revisit, depth: int) -> List[Tuple[str, Callable[[], OpenRecord]]]:
        """The lookups that apply to a revisit, in order; each is run only when those before it
        found nothing."""
        out: List[Tuple[str, Callable[[], OpenRecord]]] = []
        of = r.capture.get("orig.filename")
        if of and of != "-":      # resolveRevisits joined the original in the result
            out.append(("orig.* fields", functools.partial(self._from_orig_fields, r)))
        when = r.refers_ts or r.timestamp
        if r.refers_uri:
            how = "WARC-Refers-To-Target-URI"
            out.append((how, functools.partial(self._from_index, r.refers_uri, when, r.digest, how)))
        if r.url and r.digest and r.refers_uri != r.url:
            how = "same-URL digest join"
            out.append((how, functools.partial(self._from_index, str(r.url), when, r.digest, how)))
        if r.refers_id:
            out.append(("WARC-Refers-To record id",
                        functools.partial(self._from_record_id, r.refers_id, r.digest, depth)))
        if r.digest:
            out.append(("digest in the record index", functools.partial(self._from_digest, r.digest, r.timestamp)))
        return out

    def _from_orig_fields(self, r: _Revisit) -> OpenRecord:
        c = r.capture
        of, off = c.get("orig.filename"), c.get("orig.offset")
        orig = Capture.from_fields({"url": c.get("url"), "timestamp": c.get("timestamp"), "length": c.get("orig.length")})
        try:
            return self.open_at(str(of), off, orig)
        except ArchiveError as e:
            raise _NotThere(f"orig.filename {of} at {off}: {e}") from None

    def _from_index(self, url: str, when: str, digest: Optional[Digest], how: str) -> OpenRecord:
        if self.index is None:
            raise _NotThere(f"{how}: url={url} (no index to look it up in)")
        params: Dict[str, Any] = {"matchType": "exact", "allowFuzzy": "false", "limit": str(MAX_CANDIDATES),
                                  "filter": ["!=mime:warc/revisit", "!=filename:-"]}
        if when:
            params["closest"] = when
        if digest:
            params["filter"].append(_digest_filter(digest))
        try:
            cands = self.index.query(url, **params)
        except ArchiveError as e:
            raise _NotThere(f"{how}: url={url}: {e}") from None
        if digest:
            cands = [c for c in cands if Digest.find(c.get("digest")) == digest]
        what = f"{how}: url={url} closest to {when or '-'}, not a revisit, digest {digest or 'any'}"
        if not cands:
            raise _NotThere(f"{what}: no such capture in the index")

        def open_capture(c: Capture) -> OpenRecord:
            o = self.open_at(str(c.get("filename")), c.get("offset"), c)
            if o.rec.type == "revisit":
                raise _Unusable(f"{o.filename}:{o.rec.offset} is a revisit record (stale index?)")
            return o

        return _first_to_open(cands, open_capture, f"{what}: {len(cands)} found, none loaded")

    def _from_record_id(self, ref_id: str, digest: Optional[Digest], depth: int) -> OpenRecord:
        what = f"WARC-Refers-To <{ref_id}> in the record index"
        paths = ", ".join(r.path for r in self.record_indexes)
        entries = self._indexed(what, lambda r: r.by_id(ref_id),
                                "the collection has none (write one with write_record_index)",
                                f"no such record in {paths}")

        def open_record(e: RixEntry) -> OpenRecord:
            if digest and e.digest and Digest.find(e.digest) != digest:
                raise _Unusable(f"{e.filename}:{e.offset} has digest {e.digest}, not {digest}")
            o = self._open_entry(e)
            if o.rec.type != "revisit":
                return o
            if depth >= MAX_CHAIN:
                raise _Unusable(f"revisits refer to revisits more than {MAX_CHAIN} deep")
            try:
                return self.find(_capture_of(o.rec), o, depth + 1)[0]
            except OriginalNotFound as err:
                raise _Unusable(f"it is a revisit whose own original was not found ({'; '.join(err.looked)})") \
                    from None

        return _first_to_open(entries, open_record, f"{what}: found, not loaded")

    def _from_digest(self, digest: Digest, ts: str) -> OpenRecord:
        what = f"digest {digest} in the record index (any URL)"
        entries = self._indexed(what, lambda r: r.by_digest(digest), "the collection has none", "not there")
        if ts:
            target = _seconds(ts)
            entries.sort(key=lambda e: abs(_seconds(e.timestamp) - target) if e.timestamp else 1 << 62)
        return _first_to_open(entries[:MAX_CANDIDATES], self._open_entry, f"{what}: {len(entries)} found, none loaded")

    def _indexed(self, what: str, find: Callable[[RecordIndex], List[RixEntry]], no_index: str,
                 no_entry: str) -> List[RixEntry]:
        """The entries ``find`` gives in the record indexes; _NotThere saying ``no_index`` when there
        is no record index, ``no_entry`` when none has an entry (``what`` was looked for)."""
        if not self.record_indexes:
            raise _NotThere(f"{what}: {no_index}")
        entries = [e for r in self.record_indexes for e in find(r)]
        if not entries:
            raise _NotThere(f"{what}: {no_entry}")
        return entries

    def _open_entry(self, e: RixEntry) -> OpenRecord:
        return self.open_at(e.filename, e.offset, Capture.from_fields({"url": e.url, "timestamp": e.timestamp}))


T = TypeVar("T")


def _first_to_open(candidates: Iterable[T], open_one: Callable[[T], OpenRecord], failed: str) -> OpenRecord:
    """The record of the first candidate that opens and can serve; when none does,
    _NotThere(``failed``, with the first candidate's error)."""
    errors: List[str] = []
    for c in candidates:
        try:
            return open_one(c)
        except ArchiveError as e:
            errors.append(str(e))
    raise _NotThere(f"{failed} ({errors[0] if errors else 'no candidate'})")


def _digest_filter(d: Digest) -> str:
    """A CDX API filter keeping the lines whose digest may be ``d``: labelled or not, in base32
    (padded or not) or hex, any case. The index spells digests as its writer did; the
    candidates are then compared as Digest values."""
    return "~digest:(?i)(?:[a-z0-9-]+:)?(?:" + d.base32.rstrip("=") + "=*|" + d.hex + ")$"


def _capture_of(rec: HeaderFields) -> Capture:
    """The capture a record found through the record index stands for (its fields from its head)."""
    return Capture.from_fields({"url": rec.target_uri, "timestamp": date_timestamp(rec.date) or "",
                                "digest": rec.headers.get("WARC-Payload-Digest") or "-"})


def _seconds(ts: str) -> int:
    return calendar.timegm(timestamp_to_datetime(ts).utctimetuple())


__all__ = ["MAX_CANDIDATES", "MAX_CHAIN", "OpenAt", "OriginalNotFound", "Originals"]
