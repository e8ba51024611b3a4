"""Encode a stored record (head, block, CRLF CRLF) as the unit written to a file: one per record.

Encodings (docs/format.md, "Writing WARC files"):

  gzip   one member per record, deflate by ISA-L (igzip), FEXTRA with
         Wget's ``sl`` subfield: ``'s' 'l' 8 0 CLEN(le32) ULEN(le32)``,
         CLEN the whole member's size, ULEN the record's size (with
         threads=1, large request/response members hold the WARC head in a
         stored deflate block, then the block deflated by a worker thread)
  zstd   one Zstandard frame per record (IIPC "Zstandard Compression for
         WARC Files 1.0"), an optional dictionary first in a skippable
         frame (magic 0x184D2A5D), itself zstd-compressed
  none   the records as they are, each followed by CRLF CRLF

A member whose sizes do not fit ``sl``'s 32-bit fields is a plain member
(no FEXTRA). The length reported for a unit is warcio's: the member's or
frame's size, or for ``none`` the record without its CRLF CRLF. This module
does not open files (warchive.warc.warcfile does).
"""

from __future__ import annotations

import struct
from typing import Any, Dict, List, Optional, Tuple

import zstandard
from isal import igzip_lib, isal_zlib

from .._ext.gzip_write import DeflateWorker
from ..errors import ArchiveError
from .builder import CRLF2
from .zst import DICT_MAGIC

COMPRESSIONS = ("gzip", "zstd", "none")
EXTENSIONS = {"gzip": ".warc.gz", "zstd": ".warc.zst", "none": ".warc"}
# ISA-L level 2: 1.12x the size of warcio's zlib -9 members on the Wget corpus, 2-3x faster than
# level 3 (1.10x); level 1 is no faster and larger (bench/results/writer-compare-*.txt)
DEFAULT_GZIP_LEVEL = 2
DEFAULT_ZSTD_LEVEL = 3
_SL_MAX = 0xFFFFFFFF


def _gzip_member(data: Any, level: int) -> List[bytes]:
    """One gzip member with Wget's `sl` subfield, as pieces (header, deflate data, trailer)."""
    deflated = igzip_lib.compress(data, level, igzip_lib.COMP_DEFLATE)
    trailer = struct.pack("<II", isal_zlib.crc32(data) & 0xFFFFFFFF, len(data) & 0xFFFFFFFF)
    clen = 24 + len(deflated) + 8
    if clen > _SL_MAX or len(data) > _SL_MAX:
        header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"        # too big for `sl`: a plain member
    else:
        #          magic    CM  FLG=FEXTRA MTIME=0        XFL OS=unknown  XLEN=12   'sl' LEN=8
        header = b"\x1f\x8b\x08\x04\x00\x00\x00\x00\x00\xff" + b"\x0c\x00" + b"sl\x08\x00" + \
            struct.pack("<II", clen, len(data))
    return [header, deflated, trailer]


class Posted:
    """A block being deflated (with CRLF CRLF after it) by the writer's C worker while the caller
    computes the record's digests; ``result()`` once, or ``discard()`` when it is not used."""

    __slots__ = ("worker", "block", "done")

    def __init__(self, worker: DeflateWorker, block: Any) -> None:
        self.worker = worker
        self.block = block
        self.done = False
        worker.post(block, CRLF2)

    def result(self) -> bytes:
        self.done = True
        return self.worker.result()

    def discard(self) -> None:
        if not self.done:
            self.done = True
            try:
                self.worker.result()
            except ArchiveError:
                pass


def split_member(head: bytes, block: Any, deflated: bytes) -> Optional[List[bytes]]:
    """A gzip member whose deflate stream is the head in one stored (uncompressed) block followed
    by ``deflated``, the separately compressed final stream of block + CRLF CRLF: one valid deflate
    stream, since a stored block ends on a byte boundary and the next block starts on one. None
    when it cannot be made so."""
    if len(head) > 65535:
        return None
    stored = b"\x00" + struct.pack("<HH", len(head), len(head) ^ 0xFFFF) + head
    ulen = len(head) + len(block) + 4
    clen = 24 + len(stored) + len(deflated) + 8
    if clen > _SL_MAX or ulen > _SL_MAX:
        return None
    crc = isal_zlib.crc32(CRLF2, isal_zlib.crc32(block, isal_zlib.crc32(head))) & 0xFFFFFFFF
    header = b"\x1f\x8b\x08\x04\x00\x00\x00\x00\x00\xff\x0c\x00sl\x08\x00" + struct.pack("<II", clen, ulen)
    return [header + stored, deflated, struct.pack("<II", crc, ulen)]


class Encoder:
    """Turns an uncompressed record into the pieces that are written (one unit per record)."""

    def __init__(self, compression: str, level: Optional[int], zstd_dict: Optional[bytes]) -> None:
        if compression not in COMPRESSIONS:
            raise ArchiveError(f"unknown compression {compression!r} (one of {', '.join(COMPRESSIONS)})")
        self.compression = compression
        self._zc: Any = None
        self.preamble = b""
        if compression == "gzip":
            self.level = DEFAULT_GZIP_LEVEL if level is None else level
            if not 0 <= self.level <= 3:
                raise ArchiveError(f"ISA-L compression levels are 0 to 3, not {self.level}")
        elif compression == "zstd":
            self.level = DEFAULT_ZSTD_LEVEL if level is None else level
            params: Dict[str, Any] = {"level": self.level, "write_checksum": True, "write_content_size": True}
            if zstd_dict is not None:
                params["dict_data"] = zstandard.ZstdCompressionDict(zstd_dict)
                packed = zstandard.ZstdCompressor(level=19).compress(zstd_dict)
                self.preamble = struct.pack("<II", DICT_MAGIC, len(packed)) + packed
            self._zc = zstandard.ZstdCompressor(**params)
        else:
            self.level = 0
        if zstd_dict is not None and compression != "zstd":
            raise ArchiveError("a dictionary is only used with zstd compression")

    @property
    def extension(self) -> str:
        return EXTENSIONS[self.compression]

    def encode(self, record: bytes) -> Tuple[List[Any], int]:
        """(pieces, length): length is what warcio reports (member/frame size; record without CRLFCRLF)."""
        if self.compression == "gzip":
            pieces = _gzip_member(record, self.level)
            return pieces, sum(len(p) for p in pieces)
        if self.compression == "zstd":
            frame = self._zc.compress(record)
            return [frame], len(frame)
        return [record], len(record) - 4


def encode_record(data: bytes, compression: str = "gzip", level: Optional[int] = None) -> bytes:
    """One stored record (head + block + CRLFCRLF) encoded as a single gzip member / zstd frame /
    itself (for warchive recompress and tests)."""
    pieces, _ = Encoder(compression, level, None).encode(data)
    return b"".join(pieces)
