"""Record indexes (``*.rix``): WARC records found by record id, payload digest and segment origin.

A revisit that names no URL (Wget writes only ``WARC-Refers-To``, a record id;
a URL-agnostic revisit only its payload digest) and a record segmented over
several files are resolved through this index; docs/format.md, "Record
indexes", specifies the file. It is sorted text, one entry a line, searched in
place with ``warchive.sortedfile.SortedFile``::

     warchive-record-index 1
    dg:<digest> <timestamp> <filename> <offset> <length> <type> <record-id> <target-uri>
    id:<record-id> <filename> <offset> <length> <type> <timestamp> <digest> <target-uri>
    sg:<origin-id> <segment-number> <filename> <offset> <length> <total-length> <record-id>

``COLUMNS`` is the one table of each line kind's columns: ``RixEntry.line``
writes an entry with it and ``RixEntry.parse`` reads one back with it. This
module never opens WARC files other than those it is asked to index, and
knows nothing of loading captures (warchive.replay.load does that).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union
from urllib.parse import unquote

from ..durable import AtomicOutput
from ..errors import IndexFormatError
from ..sortedfile import SortedFile
from ..timestamps import iso_date_to_timestamp
from ..warc.digest import Digest
from ..warc.reader import open as open_warc
from .cdx import display_name, iter_inputs
from .sort import LineSorter

PathLike = Union[str, os.PathLike[str]]

RECORD_INDEX_EXT = ".rix"
RECORD_INDEX_HEADER = b" warchive-record-index 1"   # a space first: it sorts before every entry
INDEXED_TYPES = ("response", "resource", "revisit", "continuation")


# --------------------------------------------------------------------------- how record ids and dates are spelled

def unbracket(value: Optional[str]) -> Optional[str]:
    """A WARC header value without the ``<>`` around it (record ids, WARC 1.0 URIs); None when
    blank. Record ids are keyed so, and a loader looking one up must spell it the same way."""
    if value is not None:
        value = value.strip()
        if value.startswith("<") and value.endswith(">"):
            value = value[1:-1]
    return value or None


def date_timestamp(date: Optional[str]) -> Optional[str]:
    """The 14-digit timestamp of a WARC-Date, None for none or one that is not a date."""
    if not date:
        return None
    try:
        return iso_date_to_timestamp(date)
    except ValueError:
        return None


# --------------------------------------------------------------------------- the columns

_ENC_RX = re.compile(r"[\x00-\x20%\x7f]")


def _enc(value: Optional[Union[str, int]]) -> str:
    """A value as a column: ``-`` for none, ``%2D`` for ``-`` itself, bytes up to space, ``%``
    and DEL percent-encoded (so no value holds a space or a line end)."""
    if value is None or value == "":
        return "-"
    s = str(value)
    if s == "-":
        return "%2D"
    return _ENC_RX.sub(lambda m: "%%%02X" % ord(m.group(0)), s)


def _dec(col: str) -> Optional[str]:
    return None if col == "-" else unquote(col)


def _dec_name(col: str) -> str:
    return _dec(col) or ""


def _dec_opt_int(col: str) -> Optional[int]:
    return None if col == "-" else int(col)


@dataclass(frozen=True)
class Column:
    """A column of a record index line: the RixEntry field it holds, and how it is written and read."""
    field: str
    encode: Callable[[Any], str]
    decode: Callable[[str], Any]


def _text(field: str) -> Column:
    return Column(field, _enc, _dec)


def _number(field: str) -> Column:
    return Column(field, str, int)


def _opt_number(field: str) -> Column:
    return Column(field, _enc, _dec_opt_int)


_FILENAME = Column("filename", _enc, _dec_name)

# Each kind's columns, the key (written after "<kind>:") first. The one place the layout is
# said: entries are written and read with it.
COLUMNS: Dict[str, Tuple[Column, ...]] = {
    "id": (_text("record_id"), _FILENAME, _number("offset"), _opt_number("length"), _text("type"),
           _text("timestamp"), _text("digest"), _text("url")),
    "dg": (_text("digest"), _text("timestamp"), _FILENAME, _number("offset"), _opt_number("length"),
           _text("type"), _text("record_id"), _text("url")),
    "sg": (_text("origin"), _number("segment"), _FILENAME, _number("offset"), _opt_number("length"),
           _opt_number("total_length"), _text("record_id")),
}
IMPLIED: Dict[str, Dict[str, Any]] = {"sg": {"type": "continuation"}}   # fields a kind does not write


@dataclass
class RixEntry:
    """One line of a record index (docs/format.md, "Record indexes"). ``kind`` is "id" (by
    record id), "dg" (by payload digest: originals only) or "sg" (a continuation record, by
    the id of the record it continues); a field the kind's line has no column for is None."""
    kind: str
    filename: str = ""
    offset: int = 0
    length: Optional[int] = None
    type: Optional[str] = None
    timestamp: Optional[str] = None
    digest: Optional[str] = None        # the payload digest's label (Digest.label)
    record_id: Optional[str] = None     # without <>
    url: Optional[str] = None
    origin: Optional[str] = None        # sg: WARC-Segment-Origin-ID, without <>
    segment: Optional[int] = None       # sg: WARC-Segment-Number
    total_length: Optional[int] = None  # sg: WARC-Segment-Total-Length (on the last segment)

    @property
    def key(self) -> str:
        """What the line is found by: the record id, the digest or the origin id."""
        return str(getattr(self, COLUMNS[self.kind][0].field) or "")

    def line(self) -> bytes:
        """The entry as a line of the file, ending in LF."""
        cols = [c.encode(getattr(self, c.field)) for c in COLUMNS[self.kind]]
        return (self.kind + ":" + " ".join(cols) + "\n").encode("utf-8")

    @classmethod
    def parse(cls, line: bytes) -> "RixEntry":
        """An entry from its line (without LF); ValueError when it is not one."""
        text = line.decode("utf-8", "replace")
        kind, sep, rest = text.partition(":")
        columns = COLUMNS.get(kind) if sep else None
        parts = rest.split(" ")
        if columns is None or len(parts) != len(columns):
            raise ValueError("not an entry of a known kind with its columns")
        fields = dict(IMPLIED.get(kind, {}))
        for c, part in zip(columns, parts):
            fields[c.field] = c.decode(part)
        return cls(kind, **fields)


def _header_int(value: Optional[str]) -> Optional[int]:
    return int(value) if value is not None and value.strip().isdigit() else None


# --------------------------------------------------------------------------- writing

def record_entries(path: str, filename: str) -> Iterator[RixEntry]:
    """The record index entries of one WARC file, in file order; ``filename`` names it in them."""
    with open_warc(path, parse_http=False) as it:
        for rec in it:
            t = rec.type
            h = rec.headers
            rid = unbracket(rec.record_id)
            if t not in INDEXED_TYPES or not rid:
                continue
            ts = date_timestamp(rec.date)
            if t == "continuation":
                origin = unbracket(h.get("WARC-Segment-Origin-ID"))
                num = h.get("WARC-Segment-Number")
                if origin and num and num.strip().isdigit():
                    yield RixEntry("sg", filename, rec.offset, rec.length, t, record_id=rid, origin=origin,
                                   segment=int(num), total_length=_header_int(h.get("WARC-Segment-Total-Length")))
                continue
            d = Digest.find(h.get("WARC-Payload-Digest"))
            digest = d.label if d is not None else None
            yield RixEntry("id", filename, rec.offset, rec.length, t, ts, digest, rid, rec.target_uri)
            if digest and t != "revisit":   # revisits are never originals
                yield RixEntry("dg", filename, rec.offset, rec.length, t, ts, digest, rid, rec.target_uri)


def record_index_lines(path: str, filename: str) -> Iterator[bytes]:
    """The record index lines of one WARC file (unsorted), each ending in LF."""
    for e in record_entries(path, filename):
        yield e.line()


@dataclass
class RecordIndexStats:
    files: int = 0
    records: int = 0
    lines: int = 0


def write_record_index(inputs: Sequence[PathLike], output: Union[PathLike, Callable[[bytes], Any]], *,
                       dir_root: Optional[PathLike] = None) -> RecordIndexStats:
    """Write the record index of WARC files (and the WARCs under directories) to ``output`` (a
    path, published by atomic rename, or a write callable): sorted bytewise, with its header
    line first. Filenames are base names, or paths relative to ``dir_root`` (as
    ``warchive index --dir-root``); they must match the filenames of the CDX index."""
    stats = RecordIndexStats()
    sorter = LineSorter()
    root = os.fspath(dir_root) if dir_root is not None else None
    paths = [os.fspath(i) for i in inputs]
    for p in paths:
        if not os.path.exists(p):
            raise FileNotFoundError(2, "no such file or directory", p)
    for path in iter_inputs(paths):
        if path.endswith((".arc", ".arc.gz")):
            continue   # ARC records have no record ids
        stats.files += 1
        name = display_name(path, root)
        buf: List[bytes] = []
        for line in record_index_lines(path, name):
            buf.append(line)
            stats.lines += 1
            if len(buf) >= 4096:
                sorter.add(b"".join(buf))
                buf = []
        if buf:
            sorter.add(b"".join(buf))
    if callable(output):
        output(RECORD_INDEX_HEADER + b"\n")
        sorter.finish(output)
        return stats
    with AtomicOutput(os.fspath(output)) as out:
        out.write(RECORD_INDEX_HEADER + b"\n")
        sorter.finish(out.write)
    return stats


# --------------------------------------------------------------------------- reading

class RecordIndex:
    """A record index file: record id -> record, payload digest -> records, segment origin ->
    continuation records; searched in place by binary search (sorted lines)."""

    def __init__(self, path: PathLike) -> None:
        self.path = os.fspath(path)
        with open(self.path, "rb") as f:
            first = f.readline().rstrip(b"\r\n")
        if first != RECORD_INDEX_HEADER:
            raise IndexFormatError(self.path, None, f"not a record index: it starts with {first[:40]!r}, not "
                                                    f"{RECORD_INDEX_HEADER!r} (write one with write_record_index)")
        self._src = SortedFile(self.path)

    def close(self) -> None:
        self._src.close()

    def __enter__(self) -> "RecordIndex":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _entries(self, kind: str, key: str) -> List[RixEntry]:
        """The entries of one key: the lines from "<kind>:KEY " to "<kind>:KEY!" (every byte of an
        encoded key is above space, so a key that is a prefix of another is not mixed with it)."""
        prefix = (kind + ":" + _enc(key)).encode("utf-8")
        out = []
        for line in self._src.range(prefix + b" ", prefix + b"!"):
            try:
                out.append(RixEntry.parse(line))
            except ValueError:
                raise IndexFormatError(self.path, None, f"malformed line {line[:200]!r}") from None
        return out

    def by_id(self, record_id: str) -> List[RixEntry]:
        """The records with this WARC-Record-ID (with or without <>)."""
        return self._entries("id", unbracket(record_id) or "")

    def by_digest(self, digest: Union[Digest, str]) -> List[RixEntry]:
        """The originals (responses, resources) with this payload digest, in any spelling
        (a bare value is SHA-1); none for a digest that cannot be read."""
        d = Digest.find(digest) if isinstance(digest, str) else digest
        return self._entries("dg", d.label) if d is not None else []

    def segments(self, origin_id: str) -> List[RixEntry]:
        """The continuation records of the record ``origin_id``, by segment number."""
        return sorted(self._entries("sg", unbracket(origin_id) or ""), key=lambda e: e.segment or 0)


__all__ = ["COLUMNS", "RECORD_INDEX_EXT", "RECORD_INDEX_HEADER", "RecordIndex", "RecordIndexStats", "RixEntry",
           "date_timestamp", "record_entries", "record_index_lines", "unbracket", "write_record_index"]
