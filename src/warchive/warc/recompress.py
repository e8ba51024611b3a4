"""``warchive recompress``: rewrite a WARC file as one gzip member (or zstd frame) per record.

Files gzipped whole, with many records per member, with records split
across members, or not compressed at all, cannot be indexed record by
record. As ``warcio recompress`` does, each record is written again on its
own — its head and block byte for byte, only the compression changes — and
the output is published by atomic rename (warchive.durable.AtomicOutput).
When the records cannot be read member by member, the whole file is
inflated first (every member, one after another) and parsed as plain WARC.
ARC files are refused (warcio converts them to WARC; we do not).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import IO, Optional

from isal import igzip

from ..durable import AtomicOutput
from ..errors import ArchiveError, CorruptRecordError, UnsupportedFormatError
from .builder import CRLF2
from .encode import Encoder
from .reader import ArchiveIterator, Record


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


def _copy_records(src: str, out: AtomicOutput, encoder: Encoder) -> int:
    count = 0
    out.write(encoder.preamble)
    with ArchiveIterator(src, verify=True, parse_http=False) as it:
        for rec in it:
            if rec.format != "warc":
                raise UnsupportedFormatError(f"{src}: ARC records cannot be recompressed as WARC "
                                             "(convert them with warcio recompress)")
            head = _raw_head(rec)
            block = rec.block().read()
            if rec.content_length is not None and len(block) != rec.content_length:
                raise CorruptRecordError(src, rec.offset, "record is shorter than its Content-Length")
            pieces, _ = encoder.encode(b"".join((head, block, CRLF2)))
            for piece in pieces:
                out.write(piece)
            count += 1
    return count


def _inflate_all(src: str, dst: IO[bytes]) -> None:
    """Inflate every gzip member of src (or copy a non-gzip file) into the file object dst."""
    with open(src, "rb") as f:
        magic = f.read(2)
    if magic == b"\x1f\x8b":
        with igzip.open(src, "rb") as g:
            shutil.copyfileobj(g, dst, 1 << 20)
    else:
        with open(src, "rb") as f:
            shutil.copyfileobj(f, dst, 1 << 20)


def recompress(src: str, dst: str, compression: str = "gzip", level: Optional[int] = None) -> int:
    """Rewrite src into dst with one compressed unit per record; the number of records."""
    encoder = Encoder(compression, level, None)
    try:
        with AtomicOutput(dst) as out:
            return _copy_records(src, out, encoder)
    except CorruptRecordError as first:
        # records split over members, bad members boundaries: read the inflated whole instead
        directory = os.path.dirname(os.path.abspath(dst))
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".recompress-", suffix=".warc") as plain:
            try:
                _inflate_all(src, plain)
            except (OSError, EOFError) as e:
                raise CorruptRecordError(src, first.offset, f"cannot be inflated: {e}",
                                         "the file is damaged beyond recompression") from e
            plain.flush()
            with AtomicOutput(dst) as out:
                return _copy_records(plain.name, out, encoder)
