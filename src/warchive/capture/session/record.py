"""What the journal says about one original URL: its redirect chain, WARC records, failures, skips.

A ``UrlRecord`` merges the entries of one original URL (the URL the crawler set out
to fetch) in journal order; each URL of its redirect chain is a ``Hop``. A record is
found by any URL of its chain (``keys``). This module must not read the journal.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Set

import msgspec

from .schema import KINDS, Entry, decode_any


class Hop:
    """One URL of a redirect chain: its last fetch (status, location, ...), the WARC records
    written for it, its failed attempts and skip decisions."""

    __slots__ = ("url", "fetch", "records", "failures", "skips")

    def __init__(self, url: str) -> None:
        self.url = url
        self.fetch: Optional[Entry] = None
        self.records: List[Entry] = []
        self.failures: List[Entry] = []
        self.skips: List[Entry] = []

    @property
    def status(self) -> Optional[int]:
        return self.fetch.status if self.fetch is not None else None

    @property
    def location(self) -> Optional[str]:
        return self.fetch.location if self.fetch is not None else None

    def __repr__(self) -> str:
        return f"Hop({self.url!r}, status={self.status})"


_OUTCOME = {"fetch": "fetched", "failed": "failed", "skipped": "skipped"}
_HOP_KINDS = frozenset(("fetch", "record", "failed", "skipped"))
_KNOWN = frozenset(KINDS)


class UrlRecord:
    """Everything the journal says about one original URL, merged from its entries in journal order.

    ``state`` is what its last attempt came to: "fetched", "failed", "skipped" or "pending"
    (no fetch, failure or skip yet). ``chain`` lists the URLs fetched for it, first to last."""

    def __init__(self, url: str, entries: Sequence[Entry], positions: Sequence[int],
                 lines: Optional[Sequence[bytes]] = None) -> None:
        self.url = url
        self.entries = entries if isinstance(entries, list) else list(entries)
        # byte offsets of the entries in the journal, and the entries as written
        self.positions = positions if isinstance(positions, list) else list(positions)
        self.lines = lines if lines is None or isinstance(lines, list) else list(lines)
        self._hops: Optional[Dict[str, Hop]] = None
        self._chain: List[Hop] = []
        last = None
        for e in reversed(self.entries):
            if e.kind in _OUTCOME:
                last = e
                break
        self.last: Optional[Entry] = last  # the entry of the last attempt's outcome

    def _of(self, kind: str) -> List[Entry]:
        return [e for e in self.entries if e.kind == kind]

    @property
    def fetches(self) -> List[Entry]:
        return self._of("fetch")

    @property
    def records(self) -> List[Entry]:
        """The WARC records written for it (every hop)."""
        return self._of("record")

    @property
    def failures(self) -> List[Entry]:
        return self._of("failed")

    @property
    def skips(self) -> List[Entry]:
        return self._of("skipped")

    @property
    def saved(self) -> List[Entry]:
        return self._of("saved")

    @property
    def conversions(self) -> List[Entry]:
        return self._of("converted")

    @property
    def outlinks(self) -> List[Any]:
        out: List[Any] = []
        for e in self.entries:
            if e.kind == "outlinks" and e.links:
                out.extend(e.links)
        return out

    @property
    def other(self) -> List[Entry]:
        """Entries of kinds this version does not know (kept as they are)."""
        return [e for e in self.entries if e.kind not in _KNOWN]

    @property
    def chain(self) -> List[Hop]:
        """The URLs fetched for it, in the order they first appear (the original first)."""
        self._hops_map()
        return self._chain

    def _hops_map(self) -> Dict[str, Hop]:
        if self._hops is None:
            hops: Dict[str, Hop] = {}
            url = self.url
            for e in self.entries:
                k = e.kind
                if k in _HOP_KINDS:
                    hu = e.hop or url
                    h = hops.get(hu)
                    if h is None:
                        h = hops[hu] = Hop(hu)
                        self._chain.append(h)
                    if k == "fetch":
                        h.fetch = e
                    elif k == "record":
                        h.records.append(e)
                    elif k == "failed":
                        h.failures.append(e)
                    else:
                        h.skips.append(e)
            self._hops = hops
        return self._hops

    @property
    def state(self) -> str:
        return _OUTCOME.get(self.last.kind, "pending") if self.last is not None else "pending"

    @property
    def final(self) -> Optional[Hop]:
        """The hop of the last attempt's outcome."""
        if self.last is None:
            return None
        return self._hops_map()[self.last.hop or self.url]

    @property
    def status(self) -> Optional[int]:
        """The HTTP status the last attempt ended with (None when it failed before one)."""
        return self.last.status if self.last is not None else None

    def hop(self, url: str) -> Optional[Hop]:
        return self._hops_map().get(url)

    def keys(self) -> Set[str]:
        """Every URL that finds this record: the original, each hop, each redirect target."""
        ks = {self.url}
        ks.update(self._hops_map())
        for e in self.fetches:
            if e.location:
                ks.add(e.location)
        return ks

    def fields(self) -> List[Dict[str, Any]]:
        """Every entry with all its fields, those this version does not know included."""
        if self.lines is None:
            return [msgspec.structs.asdict(e) for e in self.entries]
        return [decode_any(line) for line in self.lines]

    def __repr__(self) -> str:
        return f"UrlRecord({self.url!r}, state={self.state!r}, chain={[h.url for h in self.chain]!r})"


def pick_record(url: str, rs: List[UrlRecord]) -> Optional[UrlRecord]:
    """The record `url` finds among `rs` (its own first): the one of which it is the original URL,
    else the latest one whose redirect chain holds it."""
    if not rs:
        return None
    if rs[0].url == url:
        return rs[0]
    return max(rs, key=lambda r: r.positions[-1] if r.positions else -1)

