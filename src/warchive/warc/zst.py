"""Zstandard-compressed WARC files (.warc.zst), IIPC "Zstandard Compression for WARC Files 1.0".

The file is a sequence of Zstandard frames, one record per frame, optionally
starting with a dictionary in a skippable frame (magic 0x184D2A5D; the
dictionary may itself be zstd-compressed). Other skippable frames are
ignored. A record's offset is the start of its frame and its length the
frame's size, as for gzip members.

``ZstFrames`` offers the member interface of the gzip kernel's Reader
(member_begin / member_head / member_read / member_finish ...) so that the
record reader treats frames exactly like gzip members.
"""

from __future__ import annotations

import io
import os
import struct
from typing import Any, BinaryIO, NoReturn, Optional, Type, Union

import zstandard

from .._ext.gzip_members import FORMAT_ZSTD
from ..errors import CorruptRecordError, GzipError, TruncatedError, UnsupportedFormatError

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
DICT_MAGIC = 0x184D2A5D
CHUNK = 1 << 16
# A block regenerates at most 128 KiB, whatever its compressed size (an RLE block: 4 bytes), so
# one 64 KiB read could inflate to gigabytes. The decoder is fed whole blocks only, as many as
# can regenerate OUTPUT_MAX together (a zstd bomb then streams in bounded memory).
BLOCK_MAX = 128 << 10
OUTPUT_MAX = 1 << 20
DICT_MAX = 64 << 20      # a (compressed) dictionary inflating past this is refused


def _skippable(magic: int) -> bool:
    return (magic & 0xFFFFFFF0) == 0x184D2A50


def skippable_magic(head: bytes) -> bool:
    """Do these first four bytes open a skippable frame (as a dictionary frame does)?"""
    return len(head) >= 4 and _skippable(struct.unpack("<I", head[:4])[0])


class ZstFrames:
    """Frames of a .warc.zst file, one at a time, decompressed as a stream."""

    format = FORMAT_ZSTD

    def __init__(self, source: Union[str, os.PathLike[str], BinaryIO, Any], offset: Optional[int] = None) -> None:
        self._win: Any = None   # a stream: an object with read_at(off, n) that reads it forward
        self.size: Optional[int] = None
        if isinstance(source, (str, bytes, os.PathLike)):
            self.path: Optional[str] = os.fsdecode(os.fspath(source))
            self._f: Any = open(self.path, "rb")  # noqa: SIM115 - closed by close()
            self._own = True
        elif hasattr(source, "read_at"):
            self._win = source
            self._f = None
            self._own = False
            name = getattr(source, "name", None)
            self.path = name if isinstance(name, str) else None
        else:
            self._f = source
            self._own = False
            name = getattr(source, "name", None)
            self.path = name if isinstance(name, str) else None
        if self._win is None:
            self._f.seek(0, os.SEEK_END)
            self.size = self._f.tell()
        self.start = 0 if offset is None else offset
        self.cut_ok = False       # the end of the file inside a frame's data ends the frame (member_cut)
        self._dict: Optional[zstandard.ZstdCompressionDict] = None
        self._data_start = self._read_dictionary()
        if self.start < self._data_start:
            self.start = self._data_start
        self.member_offset = self.start
        self._reset_frame()

    # -- file
    def read_at(self, off: int, n: int) -> bytes:
        if self._win is not None:
            return self._win.read_at(off, n)
        self._f.seek(off)
        return self._f.read(n)

    @property
    def seekable(self) -> bool:
        return self._win is None

    @property
    def floor(self) -> int:
        """The first offset that can still be read (a stream forgets what lies further back)."""
        return self._win.floor if self._win is not None else 0

    def close(self) -> None:
        if self._own:
            self._f.close()

    def _fail(self, cls: Type[CorruptRecordError], off: int, problem: str) -> NoReturn:
        raise cls(self.path, off, problem, "the frame is corrupt; --skip-errors skips it")

    def _read_dictionary(self) -> int:
        head = self.read_at(0, 8)
        if len(head) < 8:
            return 0
        magic, size = struct.unpack("<II", head)
        if magic != DICT_MAGIC:
            return 0
        data = self.read_at(8, size)
        if len(data) < size:
            self._fail(TruncatedError, 0, "file ends inside the dictionary frame")
        if data.startswith(ZSTD_MAGIC):
            try:
                data = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read(DICT_MAX + 1)
            except zstandard.ZstdError as e:
                self._fail(GzipError, 0, f"compressed dictionary does not decompress: {e}")
            if len(data) > DICT_MAX:
                self._fail(GzipError, 0, f"the dictionary inflates past {DICT_MAX >> 20} MiB")
        self._dict = zstandard.ZstdCompressionDict(data)
        return 8 + size

    # -- frames (the gzip Reader's member interface)
    def _reset_frame(self) -> None:
        self._dobj: Any = None
        self._buf = b""
        self._buf_start = 0     # position of _buf[0] in the frame's data
        self._in_off = 0        # next compressed byte to feed
        self._done = False
        self._end: Optional[int] = None
        self.member_produced = 0
        self.member_cut = False   # (cut_ok) the file ended inside this frame: its data is what decompressed
        self._gate = _BlockGate()

    def member_begin(self, off: int) -> bool:
        """Start the frame at off (skippable frames are passed over); False at the end of the file."""
        while True:
            head = self.read_at(off, 8)
            if not head:
                return False
            if len(head) < 4:
                self._fail(TruncatedError, off, "file ends inside a frame header")
            magic = struct.unpack("<I", head[:4])[0]
            if _skippable(magic):
                if len(head) < 8:
                    self._fail(TruncatedError, off, "file ends inside a skippable frame")
                off += 8 + struct.unpack("<I", head[4:8])[0]
                continue
            if head[:4] != ZSTD_MAGIC:
                self._fail(GzipError, off, "not a Zstandard frame")
            break
        self._reset_frame()
        self.member_offset = off
        self._in_off = off
        dctx = zstandard.ZstdDecompressor(dict_data=self._dict) if self._dict is not None else zstandard.ZstdDecompressor()
        self._dobj = dctx.decompressobj()
        return True

    def _produce(self, upto: int) -> None:
        """Decompress until the frame data reaches position upto (or the frame ends)."""
        while not self._done and self._buf_start + len(self._buf) < upto:
            chunk = self.read_at(self._in_off, CHUNK)
            if not chunk:
                self._cut(self._in_off)
                return
            try:
                n = self._gate.feedable(chunk)
            except ValueError as e:
                self._fail(GzipError, self.member_offset, f"invalid Zstandard data: {e}")
            if n == 0:   # not one whole block yet: read on until there is one
                chunk = self.read_at(self._in_off, BLOCK_MAX + 64)   # a whole block, after a frame header
                n = self._gate.feedable(chunk, final=True)
                if n == 0:
                    self._cut(self._in_off + len(chunk))
                    return
            chunk = chunk[:n]
            try:
                out = self._dobj.decompress(chunk)
            except zstandard.ZstdError as e:
                self._fail(GzipError, self.member_offset, f"invalid Zstandard data: {e}")
            self._buf += out
            self.member_produced += len(out)
            if self._dobj.eof:
                used = len(chunk) - len(self._dobj.unused_data)
                self._end = self._in_off + used
                self._done = True
            else:
                self._in_off += len(chunk)

    def _cut(self, end: int) -> None:
        """The file ends inside the frame, at end: an error, or with cut_ok the frame's end."""
        if not self.cut_ok:
            self._fail(TruncatedError, self.member_offset, "file ends inside a Zstandard frame")
        self.member_cut = True
        self._done = True
        self._end = end

    def member_head(self, n: int) -> bytes:
        return self.member_read(0, n)

    def member_read(self, pos: int, n: int) -> bytes:
        if pos < self._buf_start:
            raise UnsupportedFormatError(f"{self.path}: Zstandard frame read went backwards")
        self._produce(pos + n)
        if pos - self._buf_start > CHUNK * 4:  # drop what was read
            cut = pos - self._buf_start
            self._buf = self._buf[cut:]
            self._buf_start = pos
        i = pos - self._buf_start
        return self._buf[i : i + n]

    def member_finish(self) -> int:
        while not self._done:
            self._produce(self._buf_start + len(self._buf) + CHUNK)
            self._buf_start += len(self._buf)
            self._buf = b""
        assert self._end is not None
        return self._end

    @property
    def member_sl(self) -> None:
        return None

    @property
    def member_trusted(self) -> bool:
        return False


class _BlockGate:
    """Where the decoder may be fed up to: block boundaries of one frame (RFC 8878 3.1.1), read
    from the compressed bytes as they come, so that one feed regenerates at most about
    OUTPUT_MAX. ``feedable(data)``: how many bytes of ``data`` (the input from the point fed so
    far) to feed now; 0 when ``data`` does not reach the end of the next block."""

    def __init__(self) -> None:
        self.in_blocks = False            # the frame header was fed: each feed starts at a block header
        self.last = False                 # the last block has been passed
        self.tail = 0                     # the checksum after the last block

    def _header_size(self, data: bytes) -> int:
        if len(data) < 5:
            return 0
        fhd = data[4]
        if fhd & 0x08:
            raise ValueError("reserved bit set in the frame header")
        single = bool(fhd & 0x20)
        fcs = (1 if single else 0, 2, 4, 8)[fhd >> 6]
        did = (0, 1, 2, 4)[fhd & 0x03]
        self.tail = 4 if fhd & 0x04 else 0
        return 5 + (0 if single else 1) + did + fcs

    def feedable(self, data: bytes, final: bool = False) -> int:
        pos = 0
        if not self.in_blocks:
            pos = self._header_size(data)
            if pos == 0:
                return len(data) if final else 0
        if self.last:
            return len(data)
        regen, ok = 0, 0
        while pos + 3 <= len(data):
            h = data[pos] | data[pos + 1] << 8 | data[pos + 2] << 16
            kind, size = (h >> 1) & 3, h >> 3
            if kind == 3:
                raise ValueError("reserved block type")
            end = pos + 3 + (1 if kind == 1 else size)
            if end > len(data):
                break
            grow = size if kind != 2 else BLOCK_MAX
            if ok and regen + grow > OUTPUT_MAX:
                break
            regen += grow
            pos = ok = end
            if h & 1:
                self.last = True
                ok = min(len(data), end + self.tail)
                break
        if ok:
            self.in_blocks = True   # the next feed starts at a block header (or, past the last, is let through)
        return ok
