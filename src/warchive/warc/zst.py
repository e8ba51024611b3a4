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

import os
import struct
from typing import Any, BinaryIO, NoReturn, Optional, Type, Union

import zstandard

from .._ext.gzip_members import FORMAT_ZSTD
from ..errors import CorruptRecordError, GzipError, TruncatedError, UnsupportedFormatError

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
DICT_MAGIC = 0x184D2A5D
CHUNK = 1 << 16


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
                data = zstandard.ZstdDecompressor().decompressobj().decompress(data)
            except zstandard.ZstdError as e:
                self._fail(GzipError, 0, f"compressed dictionary does not decompress: {e}")
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
                self._fail(TruncatedError, self.member_offset, "file ends inside a Zstandard frame")
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
