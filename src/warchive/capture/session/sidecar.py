"""The sidecar index of a journal (``JOURNAL.idx``): lookups in O(log N) without reading the journal.

Sorted ``key<TAB>offsets`` lines after a header line (docs/format.md, "The
sidecar index"), sorted by the ``line_sort`` kernel and searched in place like a
CDX file (``SortedFile``). It is derived data: rebuilt when stale, and a journal
that grew past it has its tail scanned. This module must not write the journal.
"""

from __future__ import annotations

import json
import os
import re
import warnings
import zlib
from typing import Any, Dict, List, Optional, Set, Tuple

import msgspec

from ...durable import AtomicOutput
from ...index.sort import LineSorter
from ...sortedfile import MappedFile, SortedFile
from ...errors import SessionFormatError
from .parse import parse_journal
from .reader import Session
from .record import UrlRecord, pick_record
from .schema import Entry, PathLike, SessionWarning, damaged, decode_entry, decode_head

INDEX_SUFFIX = ".idx"
INDEX_MAGIC = b" warchive-session-index "
INDEX_VERSION = 1
TAIL_LIMIT = 8 << 20               # a journal grown by more than this past its sidecar: rebuild it
_CHECK_BYTES = 256                 # the journal bytes before the sidecar's end that it checksums
_ESCAPE = re.compile(rb"[\x00-\x20%\x7f]")


def index_key(url: str) -> bytes:
    """A URL as a sidecar key: UTF-8, with %, controls and space %-escaped (so no key holds a
    tab or line feed, and every key sorts after the header line, which starts with a space)."""
    b = url.encode("utf-8", "surrogatepass")
    if not b:
        return b"%"  # no other URL gives a lone % (a % is always escaped as %25)
    if _ESCAPE.search(b) is None:
        return b
    return _ESCAPE.sub(lambda m: b"%%%02X" % m.group()[0], b)


def _journal_check(path: str, covered: int) -> int:
    """A checksum of the journal bytes just before `covered`: what tells a journal that grew
    (those bytes unchanged) from one rewritten."""
    with open(path, "rb") as f:
        f.seek(max(0, covered - _CHECK_BYTES))
        return zlib.crc32(f.read(min(covered, _CHECK_BYTES)))


def build_index(journal: PathLike, index: Optional[PathLike] = None, *, skip_errors: bool = False) -> str:
    """Write the sidecar index of a journal (default JOURNAL.idx), atomically; returns its path.

    Lines ``KEY<TAB>OFF,OFF,...``: for every record, one line under each of its keys (original
    URL, hops, redirect targets) listing the byte offsets of all its entries; sorted bytewise by
    the line_sort kernel after a header line that records what journal bytes it covers."""
    jp = os.fspath(journal)
    ip = os.fspath(index) if index is not None else jp + INDEX_SUFFIX
    with open(jp, "rb") as f:
        data = f.read()
        st = os.fstat(f.fileno())  # after the read: a journal appended to meanwhile is "grown"
    s = Session(jp, parse_journal(jp, data, skip_errors=skip_errors))
    del data
    covered = s.end
    header: Dict[str, Any] = {"journal": os.path.basename(jp), "size": st.st_size, "mtime_ns": st.st_mtime_ns,
                              "ino": st.st_ino, "dev": st.st_dev, "covered": covered,
                              "check": _journal_check(jp, covered), "entries": len(s)}
    sorter = LineSorter(mem_limit=64 << 20)
    pos = s.positions
    heads = s.heads
    buf: List[bytes] = []
    size = 0
    records = 0
    for url, idx in s.groups().items():
        records += 1
        offs = b"\t" + ",".join([str(pos[i]) for i in idx]).encode() + b"\n"
        buf.append(index_key(url) + offs)
        others: Optional[Set[str]] = None
        for i in idx:
            h = heads[i]
            if h.hop or h.location:
                if others is None:
                    others = set()
                others.update(o for o in (h.hop, h.location) if o and o != url)
        for k in others or ():
            buf.append(index_key(k) + offs)
        size += len(offs) + len(url)
        if size > 4 << 20:
            sorter.add(b"".join(buf))
            buf.clear()
            size = 0
    if buf:
        sorter.add(b"".join(buf))
    header["records"] = records
    with AtomicOutput(ip) as out:
        out.write(INDEX_MAGIC + str(INDEX_VERSION).encode() + b" " + json.dumps(header).encode() + b"\n")
        sorter.finish(out.write)
    return ip


def read_index_header(index: PathLike) -> Optional[Dict[str, Any]]:
    """The header of a sidecar index, or None when it is missing or not one of ours."""
    try:
        with open(index, "rb") as f:
            line = f.readline(1 << 16)
    except OSError:
        return None
    if not line.startswith(INDEX_MAGIC) or not line.endswith(b"\n"):
        return None
    ver, _, rest = line[len(INDEX_MAGIC):].partition(b" ")
    try:
        if int(ver) != INDEX_VERSION:
            return None
        d = json.loads(rest)
    except ValueError:
        return None
    return d if isinstance(d, dict) else None


def index_state(journal: PathLike, index: Optional[PathLike] = None) -> Tuple[str, Optional[Dict[str, Any]]]:
    """"fresh" (the sidecar covers the journal), "grown" (the journal has bytes past what it
    covers: they are scanned), or "stale" (missing, damaged, of another file, or the journal was
    rewritten or truncated: rebuild it)."""
    jp = os.fspath(journal)
    ip = os.fspath(index) if index is not None else jp + INDEX_SUFFIX
    h = read_index_header(ip)
    if h is None:
        return "stale", None
    st = os.stat(jp)
    try:
        covered = int(h["covered"])
        if (h["ino"], h["dev"]) != (st.st_ino, st.st_dev) or st.st_size < covered:
            return "stale", h
        if st.st_size == h["size"] and st.st_mtime_ns != h["mtime_ns"]:
            return "stale", h  # rewritten in place
        if _journal_check(jp, covered) != h["check"]:
            return "stale", h
    except (KeyError, TypeError, ValueError):
        return "stale", h
    return ("grown" if st.st_size > covered else "fresh"), h


class SessionIndex:
    """Lookups in a journal through its sidecar index, without reading the journal whole.

    ``rebuild``: "auto" (rebuild when stale, or when the journal grew by more than
    `tail_limit` bytes past the sidecar; a smaller tail is scanned), "always" or "never"
    (a stale sidecar is then not used: the whole journal is scanned as tail)."""

    def __init__(self, journal: PathLike, index: Optional[PathLike] = None, *, rebuild: str = "auto",
                 tail_limit: int = TAIL_LIMIT, skip_errors: bool = False) -> None:
        if rebuild not in ("auto", "always", "never"):
            raise ValueError(f"rebuild must be 'auto', 'always' or 'never', not {rebuild!r}")
        self.path = os.fspath(journal)
        self.index_path = os.fspath(index) if index is not None else self.path + INDEX_SUFFIX
        self.skip_errors = skip_errors
        self.rebuilt = False
        state, h = index_state(self.path, self.index_path)
        size = os.stat(self.path).st_size
        if rebuild == "always" or (rebuild == "auto" and (
                state == "stale" or (state == "grown" and h is not None and size - int(h["covered"]) > tail_limit))):
            try:
                build_index(self.path, self.index_path, skip_errors=skip_errors)
                self.rebuilt = True
                state, h = index_state(self.path, self.index_path)
            except OSError as e:  # a read-only place: scan instead
                warnings.warn(f"{self.index_path}: cannot write the sidecar index ({e}); scanning the journal",
                              SessionWarning, stacklevel=2)
                state, h = "stale", None
        self.state = state
        self._journal = MappedFile(self.path)
        self._idx: Optional[SortedFile] = None
        covered = 0
        if state in ("fresh", "grown") and h is not None:
            self._idx = SortedFile(self.index_path)
            covered = int(h["covered"])
        self.covered = covered
        self._scan_tail(covered)

    def _scan_tail(self, covered: int) -> None:
        """The entries past what the sidecar covers, grouped by original URL, and their keys."""
        self._tail: Dict[str, Tuple[List[bytes], List[int]]] = {}
        self._tail_keys: Dict[str, Set[str]] = {}
        self.tail_entries = 0
        mm, size = self._journal.mm, self._journal.size
        if mm is None or covered >= size:
            return
        data = mm[covered:size]
        parsed = parse_journal(self.path, data, skip_errors=self.skip_errors, version=(covered == 0))
        self.tail_entries = len(parsed.heads)
        for line, h, p in zip(parsed.lines, parsed.heads, parsed.positions):
            if h.url is None:
                continue
            lines, poss = self._tail.setdefault(h.url, ([], []))
            lines.append(line)
            poss.append(p + covered)
            for k in (h.hop, h.location):
                if k and k != h.url:
                    self._tail_keys.setdefault(k, set()).add(h.url)

    def raw(self, pos: int) -> bytes:
        mm = self._journal.mm
        if mm is None:
            raise ValueError(f"{self.path}: the session index is closed")
        end = mm.find(b"\n", pos)
        if end < 0:
            raise SessionFormatError(self.path, pos, "the sidecar index points past the journal's last entry",
                                     f"remove {self.index_path} to have it rebuilt")
        return mm[pos:end]

    def _entry(self, pos: int, line: Optional[bytes] = None) -> Optional[Entry]:
        if line is None:
            line = self.raw(pos)
        try:
            return decode_entry(line)
        except (msgspec.DecodeError, msgspec.ValidationError) as e:
            damaged(self.path, pos, line, str(e), self.skip_errors)
            return None

    def _original(self, pos: int) -> Optional[str]:
        """The original URL of the entry at `pos` (None when it is damaged and skip_errors)."""
        line = self.raw(pos)
        try:
            return decode_head(line).url
        except (msgspec.DecodeError, msgspec.ValidationError) as e:
            damaged(self.path, pos, line, str(e), self.skip_errors)
            return None

    def _indexed(self, key: str) -> Dict[str, List[int]]:
        """Original URL -> entry offsets, for the sidecar lines of `key`."""
        out: Dict[str, List[int]] = {}
        if self._idx is None:
            return out
        k = index_key(key)
        for line in self._idx.range(k + b"\t", k + b"\n"):
            _, _, offs = line.partition(b"\t")
            poss = [int(x) for x in offs.split(b",")]
            if not poss:
                continue
            orig = self._original(poss[0])
            if orig is not None and orig not in out:
                out[orig] = poss
        return out

    def lookup_all(self, url: str) -> List[UrlRecord]:
        """The records `url` finds: its own first, then those whose chains hold it."""
        found = self._indexed(url)
        originals = list(found)
        for o in sorted(self._tail_keys.get(url, ())):
            if o not in found:
                originals.append(o)
        if url in self._tail and url not in found:
            originals.insert(0, url)
        out = []
        for o in originals:
            poss = found.get(o)
            if poss is None:
                poss = self._indexed(o).get(o, [])
            lines = [self.raw(p) for p in poss]
            if o in self._tail:
                tlines, tposs = self._tail[o]
                lines = lines + tlines
                poss = poss + tposs
            ents, keep = [], []
            for i, (p, line) in enumerate(zip(poss, lines)):
                e = self._entry(p, line)
                if e is not None:
                    ents.append(e)
                    keep.append(i)
            out.append(UrlRecord(o, ents, [poss[i] for i in keep], [lines[i] for i in keep]))
        out.sort(key=lambda r: (r.url != url, r.positions[0] if r.positions else 0))
        return out

    def lookup(self, url: str) -> Optional[UrlRecord]:
        """As ``Session.lookup``: the record of which `url` is the original, else the latest whose
        chain holds it."""
        return pick_record(url, self.lookup_all(url))

    def close(self) -> None:
        if self._idx is not None:
            self._idx.close()
            self._idx = None
        self._journal.close()

    def __enter__(self) -> "SessionIndex":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def lookup(journal: PathLike, url: str, **kw: Any) -> Optional[UrlRecord]:
    """What happened to `url` (any URL of its redirect chain) in a journal, through its sidecar."""
    with SessionIndex(journal, **kw) as ix:
        return ix.lookup(url)
