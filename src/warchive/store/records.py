"""The records of a file about to be stored (or read back by a deep scrub): their listing, the hash
the manifest keeps of it, and the compact table of offsets and lengths the manifest carries.

``list_records(path)`` lists every record's offset and length (warcio's, as warchive's reader gives
them), WARC-Record-ID, WARC-Block-Digest and WARC-Payload-Digest as the head says them (none of them
computed: None for ARC records, which have none, and for an absent field), and the defects the
lenient reader recovered from. The common case — a gzip file whose every member is one WARC record
carrying Wget's consistent ``sl`` field — is listed without inflating any payload: each member's head
is inflated and parsed (the warc_headers kernel) and the member's end is taken from ``sl`` as the
reader takes it. At the first member that is anything else (no ``sl``, a head that is odd in any way,
a Content-Length that does not end the member, a plain or zstd file) the whole file is listed again
by warchive's reader (warchive.warc.reader), which is the definition; tests compare the two on every
fixture. A file the reader cannot read (not a WARC/ARC from byte 0, truncated, a bad CRC) raises
StoreError: the store keeps archive files, and one that is damaged before it is stored should be
recovered first (``warchive recover``/``recompress``), not kept under digests that would vouch for it.

``listing_digest(records)`` is the sha256 the manifest keeps of the listing (docs/format.md,
"Durable store": the canonical JSON of the list of ``[offset, length, id, block digest, payload
digest]`` of every record); a deep scrub lists the stored bytes again and compares, so a record
whose id or digests changed since ingest is caught even though the manifest holds neither.
``encode_table``/``decode_table`` are the manifest's ``record_table``: offsets and lengths as
zigzag/LEB128 varints, zlib-compressed, base64 (about 3 bytes a record against 105 as JSON).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import zlib
from dataclasses import dataclass
from typing import BinaryIO, Callable, List, Optional, Sequence, Tuple, Union

from .._ext.gzip_members import FORMAT_GZIP, Reader
from ..errors import CorruptRecordError, StoreError
from ..warc.defects import Defect
from ..warc.framing import GZIP_MAGIC
from ..warc.headers import parse_head, warc_protocol
from ..warc.reader import ArchiveIterator, Record
from .jsonfile import canonical

HEAD_FIRST, HEAD_MAX = 1024, 64 << 10
VARINT_MAX = 10          # bytes of one LEB128 varint of at most 64 bits


@dataclass(frozen=True)
class RecordSpan:
    """Where a record is: what the manifest keeps of each."""
    offset: int
    length: Optional[int]          # None: a record inside a multi-record gzip member


@dataclass(frozen=True)
class RecordEntry:
    offset: int
    length: Optional[int]
    record_id: Optional[str]       # None for ARC records
    block_digest: Optional[str]
    payload_digest: Optional[str]

    @property
    def span(self) -> RecordSpan:
        return RecordSpan(self.offset, self.length)


Source = Union[str, BinaryIO]


def list_records(path: str) -> Tuple[List[RecordEntry], List[Defect]]:
    """(records, defects) of the WARC/ARC file at ``path`` (see the module docstring)."""
    fast = _list_sl_members(path)
    if fast is not None:
        return fast, []
    return read_records(path)


def read_records(source: Source, verify: bool = False, name: Optional[str] = None,
                 each: Optional[Callable[[Record], object]] = None) -> Tuple[List[RecordEntry], List[Defect]]:
    """(records, defects) of ``source`` by warchive's reader; ``each(rec)`` (if given) is called
    with every record before it is listed, its block unread (a deep scrub verifies digests there)."""
    defects: List[Defect] = []
    out: List[RecordEntry] = []
    try:
        with ArchiveIterator(source, parse_http=each is not None, verify=verify, on_defect=defects.append,
                             name=name) as it:
            for rec in it:
                if each is not None:
                    each(rec)
                if rec.format == "arc":   # the reader makes up a WARC-Record-ID for an ARC record
                    out.append(RecordEntry(rec.offset, rec.length, None, None, None))
                else:
                    out.append(RecordEntry(rec.offset, rec.length, rec.record_id, rec.block_digest,
                                           rec.payload_digest))
    except CorruptRecordError as e:
        raise StoreError(name or (source if isinstance(source, str) else None), e.offset,
                         f"not a readable WARC/ARC file: {e.problem}",
                         "check it with `warchive check`; an .open file: `warchive recover`") from None
    return out, defects


def _list_sl_members(path: str) -> Optional[List[RecordEntry]]:
    """The listing of a gzip file of one-record members with consistent `sl` fields, or None
    (anything else: the reader lists it)."""
    try:
        r = Reader(path)
    except (OSError, CorruptRecordError):
        return None
    try:
        if r.format != FORMAT_GZIP or not r.seekable or r.size is None:
            return None
        size = r.size
        out: List[RecordEntry] = []
        pos = r.start
        while pos < size:
            if r.read_at(pos, 3) != GZIP_MAGIC or not r.member_begin(pos):
                return None
            sl = r.member_sl
            if sl is None:
                return None
            got = _member_record(r, sl[1])
            if got is None:
                return None
            end = r.member_finish()
            if not (r.member_trusted or (end - pos == sl[0] and r.member_produced == sl[1])) or end <= pos:
                return None
            rid, block, payload = got
            out.append(RecordEntry(pos, end - pos, rid, block, payload))
            pos = end
        return out if pos == size else None
    except CorruptRecordError:
        return None
    finally:
        r.close()


def _member_record(r: Reader, inflated: int) -> Optional[Tuple[Optional[str], Optional[str], Optional[str]]]:
    """(id, block digest, payload digest) of the WARC record the current member holds, when its
    head is plain and its Content-Length ends the member with CRLFCRLF (``inflated`` bytes)."""
    n = HEAD_FIRST
    while True:
        buf = r.member_head(n)
        if not buf.startswith(b"WARC/"):
            return None
        final = len(buf) < n
        head = parse_head(buf, 0, len(buf), final)
        if head is not None:
            break
        if n >= HEAD_MAX:
            return None
        n = HEAD_MAX
    if not buf[: head.end].endswith((b"\n\n", b"\n\r\n")) or warc_protocol(head.status) is None:
        return None
    first: dict = {}
    for k, v in head.fields:
        first.setdefault(k.lower(), v)
    text = first.get("content-length")
    if text is None:
        return None
    try:
        length = int(text)
    except ValueError:
        return None
    if length < 0 or head.end + length + 4 != inflated:
        return None
    return first.get("warc-record-id"), first.get("warc-block-digest"), first.get("warc-payload-digest")


# --------------------------------------------------------------------------- the listing's hash

def listing_digest(records: Sequence[RecordEntry]) -> str:
    """sha256 hex of the records' canonical listing: the canonical JSON (warchive.store.jsonfile)
    of the list of ``[offset, length, record id, block digest, payload digest]``, one per record."""
    return hashlib.sha256(canonical([[r.offset, r.length, r.record_id, r.block_digest, r.payload_digest]
                                     for r in records])).hexdigest()


# --------------------------------------------------------------------------- the manifest's table

def _varint(out: bytearray, v: int) -> None:
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def encode_table(spans: Sequence[RecordSpan]) -> str:
    """The manifest's ``record_table`` of ``spans`` (docs/format.md)."""
    raw = bytearray()
    end = 0
    for s in spans:
        gap = s.offset - end
        _varint(raw, (gap << 1) if gap >= 0 else ((-gap << 1) - 1))
        _varint(raw, s.length or 0)
        end = s.offset + (s.length or 0)
    return base64.b64encode(zlib.compress(bytes(raw), 9)).decode("ascii")


def decode_table(text: str, count: int, size: int, path: str) -> Tuple[RecordSpan, ...]:
    """The spans of a manifest's ``record_table`` holding ``count`` records of a file of ``size``
    bytes; StoreError naming ``path`` when it is not what encode_table writes for such a file."""
    def fail(problem: str) -> StoreError:
        return StoreError(path, None, f"manifest.record_table: {problem}")
    try:
        packed = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise fail("not base64") from None
    d = zlib.decompressobj()
    try:
        raw = d.decompress(packed, 2 * VARINT_MAX * count + 1)
    except zlib.error as e:
        raise fail(f"not zlib data ({e})") from None
    if not d.eof or d.unused_data or d.unconsumed_tail or len(raw) > 2 * VARINT_MAX * count:
        raise fail("its compressed data is not one complete zlib stream of the table")
    out: List[RecordSpan] = []
    i, n, end, last = 0, len(raw), 0, 0
    for k in range(count):
        vals = []
        for _ in range(2):
            v = shift = 0
            while True:
                if i >= n or shift >= 7 * VARINT_MAX:
                    raise fail(f"ends inside record {k}" if i >= n else f"a varint of record {k} is too long")
                b = raw[i]
                i += 1
                v |= (b & 0x7F) << shift
                shift += 7
                if b < 0x80:
                    break
            vals.append(v)
        z, length = vals
        off = end + ((z >> 1) if not z & 1 else -((z + 1) >> 1))
        if not (last <= off < max(size, 1)):
            raise fail(f"record {k} at offset {off}: before the previous record's, or outside the file's {size} bytes")
        if length > size - off:
            raise fail(f"record {k} at offset {off}: its length {length} runs past the file's end")
        out.append(RecordSpan(off, length or None))
        last, end = off, off + length
    if i != n:
        raise fail(f"{n - i} bytes after the {count} records")
    return tuple(out)
