"""A whole journal read into memory: entries in journal order, one ``UrlRecord`` per original URL.

``read_session(path)`` reads a journal once; ``Session`` keeps each entry's line,
head (kind and URLs) and byte offset, and decodes full entries and records on
demand, grouping entries by original URL and finding a record by any URL of its
redirect chain. The sidecar (``sidecar.SessionIndex``) answers the same lookups
without reading the journal whole. This module must not write journals.
"""

from __future__ import annotations

import os
from bisect import bisect_left
from array import array
from typing import Any, Dict, Iterator, List, Optional, Set, Type

import msgspec

from .lock import live_writer
from .parse import Parsed, gc_paused, parse_journal
from .record import UrlRecord, pick_record
from .schema import FORMAT_VERSION, VERSION_KEY, Entry, PathLike, S, decode_any, decode_entry, \
    decode_entry_strict, lenient

class Session:
    """A whole journal read into memory: each entry's line, head (kind and URLs) and byte offset,
    in journal order; full entries (``Entry``) and one ``UrlRecord`` per original URL are
    decoded on demand."""

    def __init__(self, path: str, parsed: Parsed) -> None:
        self.path = path
        self.info = parsed.info or {}
        self.lines = parsed.lines
        self.heads = parsed.heads
        self._parsed = parsed
        self.torn = parsed.torn
        self.end = parsed.end
        self._groups: Optional[Dict[str, List[int]]] = None
        self._keys: Optional[Dict[str, List[str]]] = None

    @property
    def version(self) -> int:
        return int(self.info.get(VERSION_KEY, FORMAT_VERSION))

    def __len__(self) -> int:
        return len(self.heads)

    @property
    def positions(self) -> "array[int]":
        """The byte offset of each entry in the journal."""
        return self._parsed.positions

    # entries

    def entry(self, i: int) -> Entry:
        """Entry i, decoded."""
        return decode_entry(self.lines[i])

    @property
    def entries(self) -> List[Entry]:
        """Every entry, decoded (about a second per million)."""
        return list(map(decode_entry, self.lines))

    def decode_all(self, type_: Type[S]) -> List[S]:
        """Every entry decoded as `type_`, a msgspec Struct of the fields a caller needs (the
        fewer, the faster); fields of unexpected types are left out."""
        dec = msgspec.json.Decoder(type_).decode
        with gc_paused():
            try:
                return list(map(dec, self.lines))
            except msgspec.ValidationError:
                out: List[S] = []
                for line in self.lines:
                    try:
                        out.append(dec(line))
                    except msgspec.ValidationError:
                        out.append(lenient(line, type_))
                return out

    def raw(self, pos: int) -> bytes:
        """The journal line at byte offset `pos`, without its line feed."""
        i = bisect_left(self.positions, pos)
        if i >= len(self.positions) or self.positions[i] != pos:
            raise KeyError(f"{self.path}: no entry at byte {pos}")
        return self.lines[i]

    def fields(self, i: int) -> Dict[str, Any]:
        """Entry i with every field it has (unknown ones included)."""
        return decode_any(self.lines[i])

    def all_fields(self) -> Iterator[Dict[str, Any]]:
        for line in self.lines:
            yield decode_any(line)

    @property
    def sessions(self) -> List[Entry]:
        """The "session" entries (configuration, software, seeds), one per run."""
        return [self.entry(i) for i, h in enumerate(self.heads) if h.kind == "session"]

    @property
    def seeds(self) -> List[str]:
        out: List[str] = []
        for e in self.sessions:
            out.extend(s for s in (e.seeds or ()) if s not in out)
        return out

    @property
    def config(self) -> Dict[str, Any]:
        """The configuration of the last run."""
        s = self.sessions
        return dict(s[-1].config or {}) if s else {}

    @property
    def software(self) -> Optional[str]:
        s = self.sessions
        return s[-1].software if s else self.info.get("software")

    @property
    def writer_pid(self) -> Optional[int]:
        """The live process writing this journal now, if any."""
        return live_writer(self.path)

    # records

    def groups(self) -> Dict[str, List[int]]:
        """Original URL -> indexes of its entries, in first-seen order."""
        if self._groups is None:
            g: Dict[str, List[int]] = {}
            get = g.get
            with gc_paused():
                for i, u in enumerate([h.url for h in self.heads]):
                    if u is None:
                        continue
                    lst = get(u)
                    if lst is None:
                        g[u] = [i]
                    else:
                        lst.append(i)
            self._groups = g
        return self._groups

    def urls(self) -> List[str]:
        return list(self.groups())

    def _record(self, url: str, idx: List[int]) -> UrlRecord:
        lines, pos = self.lines, self.positions
        mine = [lines[i] for i in idx]
        try:
            ents = list(map(decode_entry_strict, mine))
        except msgspec.ValidationError:
            ents = list(map(decode_entry, mine))
        return UrlRecord(url, ents, [pos[i] for i in idx], mine)

    def record(self, url: str) -> Optional[UrlRecord]:
        """The record whose original URL is `url` (None if there is none)."""
        idx = self.groups().get(url)
        return self._record(url, idx) if idx is not None else None

    def records(self) -> Iterator[UrlRecord]:
        for u, idx in self.groups().items():
            yield self._record(u, idx)

    def _key_map(self) -> Dict[str, List[str]]:
        """Hop and redirect-target URL -> original URLs whose chains hold it."""
        if self._keys is None:
            k: Dict[str, List[str]] = {}
            for h in self.heads:
                if h.url is None:
                    continue
                for other in (h.hop, h.location):
                    if other and other != h.url:
                        lst = k.setdefault(other, [])
                        if h.url not in lst:
                            lst.append(h.url)
            self._keys = k
        return self._keys

    def keys_of(self, url: str) -> Set[str]:
        """The URLs other than `url` that find the record of original URL `url`."""
        out: Set[str] = set()
        for i in self.groups().get(url, ()):
            h = self.heads[i]
            for other in (h.hop, h.location):
                if other and other != url:
                    out.add(other)
        return out

    def lookup_all(self, url: str) -> List[UrlRecord]:
        """The records found by `url`: its own first, then those whose chains hold it."""
        out = []
        own = self.record(url)
        if own is not None:
            out.append(own)
        for o in self._key_map().get(url, ()):
            if o != url:
                r = self.record(o)
                if r is not None:
                    out.append(r)
        return out

    def lookup(self, url: str) -> Optional[UrlRecord]:
        """The record `url` finds: the one of which it is the original URL, else the latest
        one whose redirect chain holds it."""
        return pick_record(url, self.lookup_all(url))

    def failed(self) -> List[UrlRecord]:
        """Records whose last attempt failed: what --retry-failed takes."""
        return [r for r in self.records() if r.state == "failed"]

    def skipped(self) -> List[UrlRecord]:
        """Records with a skip decision (dedup "write nothing", robots, scope, ...)."""
        return [r for r in self.records() if r.skips]


def read_session(path: PathLike, *, skip_errors: bool = False) -> Session:
    """Read a whole journal. A torn last line is ignored; a damaged line elsewhere raises
    ``SessionFormatError`` (file, byte offset), or is skipped with a ``SessionWarning`` when
    `skip_errors`. A file of no complete line (killed while creating it) is an empty session."""
    p = os.fspath(path)
    with open(p, "rb") as f:
        data = f.read()
    return Session(p, parse_journal(p, data, skip_errors=skip_errors))
