"""``warchive recompress``: rewrite a WARC or ARC file as one gzip member (or zstd frame) per
WARC record.

Files gzipped whole, with many records per member, with records split
across members, or not compressed at all, cannot be indexed record by
record. As ``warcio recompress`` does, each record is written again on its
own — a WARC record's head and block byte for byte, only the compression
changes (but for a Content-Length the reader found wrong, which is set to
the block as read); an ARC record as the WARC record warcio writes for it
(warchive.warc.arc2warc) — and the output is published by atomic rename
(warchive.durable.AtomicOutput). When the records of a gzip file cannot be
read member by member, the whole file is inflated first (every member, one
after another) into a temporary file and read as a plain one.

Every error names the input file: the reader's errors are restated with
recompress's own remedy, and one met in the inflated copy says where in
the inflated bytes it is. A file that ends inside a record is refused (the
reader reads past it, a defect): the cut record would be written as a whole
one.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import IO, List, Optional

from isal import igzip

from ..durable import AtomicOutput
from ..errors import ArchiveError, CorruptRecordError, TruncatedError
from .arc2warc import warc_record
from .builder import CRLF2
from .defects import TRUNCATED, Defect, Defects, OnDefect
from .encode import Encoder
from .headers import Headers
from .reader import ArchiveIterator, Record

REMEDY = "recompress copies whole, readable records only; warchive check says what is damaged"


def _raw_head(rec: Record) -> bytes:
    """The record's WARC head as stored (re-serialised from the fields when the bytes are gone)."""
    unit = rec._unit
    start = rec.member_pos if unit.gz else rec.offset - unit.base
    try:
        raw = unit.read(start, rec._block - start)
    except ArchiveError:
        raw = b""
    if len(raw) == rec._block - start and raw[:5].upper() == b"WARC/":
        return raw
    return rec.headers.to_bytes()


def _head_for(rec: Record, length: int) -> bytes:
    """The head to write for a record whose block as read is ``length`` bytes: as stored, or with
    its Content-Length made right when it was wrong (a defect the reader has reported)."""
    if rec.headers.get("Content-Length") == str(length):
        return _raw_head(rec)
    head = Headers(rec.headers.protocol, rec.headers.statusline, list(rec.headers.fields))
    head.replace("Content-Length", str(length))
    return head.to_bytes()


def _copy_records(path: str, name: str, out: AtomicOutput, encoder: Encoder, defects: List[Defect]) -> int:
    """Write every record of the file ``path`` (called ``name`` in errors) into ``out``; the
    defects read past go into ``defects``."""
    count = 0
    out.write(encoder.preamble)

    def defect(d: Defect) -> None:
        # a record the file ends inside would be written whole, its Content-Length made to fit
        # what is left of it: nothing would tell it was cut. Refused, as damage is.
        if d.kind == TRUNCATED:
            raise TruncatedError(name, d.offset, d.problem, REMEDY)
        defects.append(d)
    with ArchiveIterator(path, verify=True, parse_http=False, on_defect=defect) as it:
        for rec in it:
            block = rec.block().read()
            if rec.format == "warc":
                data = b"".join((_head_for(rec, len(block)), block, CRLF2))
            else:
                data = warc_record(rec, block).to_bytes()
            pieces, _ = encoder.encode(data)
            for piece in pieces:
                out.write(piece)
            count += 1
    return count


def _is_gzip(path: str) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def _inflate_all(src: str, dst: IO[bytes]) -> None:
    """Inflate every gzip member of src into the file object dst."""
    with igzip.open(src, "rb") as g:
        shutil.copyfileobj(g, dst, 1 << 20)


def recompress(src: str, dst: str, compression: str = "gzip", level: Optional[int] = None,
               on_defect: Optional[OnDefect] = None) -> int:
    """Rewrite src into dst with one compressed unit per WARC record; the number of records.

    Defects the reader reads past (warchive.warc.defects) are passed to ``on_defect`` once the
    output is complete (default: a DefectWarning each); those of the inflated copy name the
    input, "(inflated)"."""
    encoder = Encoder(compression, level, None)
    defects: List[Defect] = []
    try:
        with AtomicOutput(dst) as out:
            n = _copy_records(src, src, out, encoder, defects)
        _tell(defects, on_defect, src)
        return n
    except CorruptRecordError as first:
        if not _is_gzip(src):
            raise first.restated(REMEDY) from first   # a plain or zstd file reads no other way
        first_error = first
    # records split over members, bad member boundaries: read the inflated whole instead
    directory = os.path.dirname(os.path.abspath(dst))
    with tempfile.NamedTemporaryFile(dir=directory, prefix=".recompress-", suffix=".warc") as plain:
        try:
            _inflate_all(src, plain)
        except (OSError, EOFError) as e:
            raise CorruptRecordError(src, first_error.offset, f"{first_error.problem}, and the file cannot be "
                                     f"inflated as a whole ({e})", REMEDY) from e
        plain.flush()
        try:
            defects = []
            with AtomicOutput(dst) as out:
                n = _copy_records(plain.name, src, out, encoder, defects)
            _tell(defects, on_defect, f"{src} (inflated)")
            return n
        except CorruptRecordError as e:   # named after the temporary file: say which bytes of the input
            raise CorruptRecordError(src, None, f"at byte {e.offset} of its inflated bytes: {e.problem}",
                                     REMEDY) from e


def _tell(defects: List[Defect], on_defect: Optional[OnDefect], name: str) -> None:
    sink = Defects(name, on_defect=on_defect)
    for d in defects:
        sink.add(d.offset, d.kind, d.problem, d.action)
