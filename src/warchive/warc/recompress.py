"""``warchive recompress``: rewrite a WARC file as one gzip member (or zstd frame) per record.

Files gzipped whole, with many records per member, with records split
across members, or not compressed at all, cannot be indexed record by
record. As ``warcio recompress`` does, each record is written again on its
own — its head and block byte for byte, only the compression changes — and
the output is published by atomic rename (written as ``OUT.tmp-PID``).
When the records cannot be read member by member, the whole file is
inflated first (every member, one after another) and parsed as plain WARC.
ARC files are refused (warcio converts them to WARC; we do not).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from typing import Any, Optional

from ..durable import fsync_dir
from ..errors import ArchiveError, CorruptRecordError, UnsupportedFormatError
from .reader import ArchiveIterator, Record
from .builder import CRLF2
from .encode import Encoder
from .warcfile import write_all


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


def _copy_records(src: str, fd: int, out_path: str, encoder: Encoder) -> int:
    count = 0
    pos = len(encoder.preamble)
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
            pos += write_all(fd, pieces, out_path, pos)
            count += 1
    return count


def _inflate_all(src: str, dst: Any) -> None:
    """Inflate every gzip member of src (or copy a non-gzip file) into the file object dst."""
    from isal import igzip

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
    directory = os.path.dirname(os.path.abspath(dst))
    tmp = os.path.join(directory, f".{os.path.basename(dst)}.tmp-{os.getpid()}")

    def attempt(source: str) -> int:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            if encoder.preamble:
                write_all(fd, [encoder.preamble], tmp, 0)
            n = _copy_records(source, fd, tmp, encoder)
            os.fsync(fd)
            return n
        finally:
            os.close(fd)

    try:
        try:
            count = attempt(src)
        except CorruptRecordError as first:
            # records split over members, bad members boundaries: read the inflated whole instead
            with tempfile.NamedTemporaryFile(dir=directory, prefix=".recompress-", suffix=".warc") as plain:
                try:
                    _inflate_all(src, plain)
                except (OSError, EOFError) as e:
                    raise CorruptRecordError(src, first.offset, f"cannot be inflated: {e}",
                                             "the file is damaged beyond recompression") from e
                plain.flush()
                count = attempt(plain.name)
        os.replace(tmp, dst)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    fsync_dir(directory, strict=False)
    return count
