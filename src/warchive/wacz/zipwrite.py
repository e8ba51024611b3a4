"""Writing a ZIP file of stored (uncompressed) entries, published whole by atomic rename.

Each entry is a local header, the bytes as they are, and its central
directory record at the end (APPNOTE 6.3.x)::

    [local header 30+n+e][data] ... [local header][data]
    [central directory: 46+n+e bytes per entry]
    [ZIP64 end record 56][ZIP64 locator 20]      (only when a size, offset or count needs it)
    [end of central directory 22]

A file is copied in one pass: its local header is written with the size
(known from stat) and a zero CRC, the data is streamed while its CRC-32 and
SHA-256 are computed, and the CRC is then written into the header in place.
An entry of 4 GiB or more, or one that starts past 4 GiB, carries a ZIP64
extra field (sizes in the local header; sizes and offset in the directory).
Nothing is deflated: WACZ readers read WARC records by byte range. The file
appears under its name only when complete (warchive.durable.AtomicOutput).
"""

from __future__ import annotations

import hashlib
import os
import struct
import time
from dataclasses import dataclass
from typing import BinaryIO, Callable, List, Optional

from isal import isal_zlib

from ..durable import AtomicOutput
from .zipread import CD_SIG, EOCD_SIG, EOCD64_SIG, LOC64_SIG, LOCAL_SIG, STORED, check_name

LIMIT32 = 0xFFFFFFFF
COPY_CHUNK = 1 << 20
VERSION_ZIP64, VERSION_PLAIN = 45, 20
UTF8 = 0x800


@dataclass
class Written:
    """What was written of one entry: its name, size, SHA-256 (hex) and where its data starts."""

    name: str
    size: int
    sha256: str
    start: int
    crc: int
    header: int
    dos_time: int
    zip64: bool


def dos_time(t: float) -> int:
    """A time as MS-DOS date << 16 | time (local-time-free: UTC, as most archivers' UTC runs)."""
    tm = time.gmtime(max(t, 315532800))   # DOS dates start in 1980
    return ((tm.tm_year - 1980) << 9 | tm.tm_mon << 5 | tm.tm_mday) << 16 | tm.tm_hour << 11 | tm.tm_min << 5 | tm.tm_sec // 2


class ZipWriter:
    """Stored entries into ``path`` (published at close(); abort() leaves nothing).

    ``force_zip64``: give every entry a ZIP64 extra field and write the ZIP64 end records
    (as a file over 4 GiB gets them; tests use it to check them on small files)."""

    def __init__(self, path: str, *, force_zip64: bool = False,
                 progress: Optional[Callable[[int], None]] = None) -> None:
        self.out = AtomicOutput(path)
        self.path = path
        self.pos = 0
        self.entries: List[Written] = []
        self.names: set = set()
        self.force_zip64 = force_zip64
        self.progress = progress

    def _write(self, b: bytes) -> None:
        self.out.write(b)
        self.pos += len(b)

    def _local(self, name: str, size: int, when: float) -> Written:
        check_name(self.path, name)
        if name in self.names:
            raise ValueError(f"{name!r} is in the ZIP file already")
        self.names.add(name)
        raw = name.encode()
        z64 = self.force_zip64 or size >= LIMIT32 or self.pos >= LIMIT32
        extra = struct.pack("<HHQQ", 1, 16, size, size) if z64 else b""
        w = Written(name, size, "", 0, 0, self.pos, dos_time(when), z64)
        s32 = LIMIT32 if z64 else size
        self._write(struct.pack("<IHHHHHIIIHH", LOCAL_SIG, VERSION_ZIP64 if z64 else VERSION_PLAIN, UTF8, STORED,
                                w.dos_time & 0xFFFF, w.dos_time >> 16, 0, s32, s32, len(raw), len(extra)) + raw + extra)
        w.start = self.pos
        return w

    def _patch_crc(self, w: Written) -> None:
        self.out.f.flush()
        os.pwrite(self.out.f.fileno(), struct.pack("<I", w.crc), w.header + 14)

    def add_bytes(self, name: str, data: bytes, when: Optional[float] = None) -> Written:
        w = self._local(name, len(data), time.time() if when is None else when)
        w.crc = isal_zlib.crc32(data)
        w.sha256 = hashlib.sha256(data).hexdigest()
        self._write(data)
        self._patch_crc(w)
        self.entries.append(w)
        return w

    def add_file(self, name: str, path: str) -> Written:
        """Copy the file at ``path`` as entry ``name`` (one read; CRC and SHA-256 on the way)."""
        with open(path, "rb", buffering=0) as f:
            st = os.fstat(f.fileno())
            w = self._local(name, st.st_size, st.st_mtime)
            crc, h, left = 0, hashlib.sha256(), st.st_size
            while left > 0:
                chunk = f.read(min(COPY_CHUNK, left))
                if not chunk:
                    raise OSError(f"{path} shrank while it was copied into {self.path}")
                crc = isal_zlib.crc32(chunk, crc)
                h.update(chunk)
                self._write(chunk)
                left -= len(chunk)
                if self.progress is not None:
                    self.progress(len(chunk))
            _same_size(f, path, st.st_size)
        w.crc, w.sha256 = crc, h.hexdigest()
        self._patch_crc(w)
        self.entries.append(w)
        return w

    def close(self) -> None:
        """Write the central directory and end records, and publish the file."""
        cd_start = self.pos
        for w in self.entries:
            raw = w.name.encode()
            z64 = w.zip64 or w.header >= LIMIT32
            extra = struct.pack("<HHQQQ", 1, 24, w.size, w.size, w.header) if z64 else b""
            s32 = LIMIT32 if z64 else w.size
            self._write(struct.pack("<IHHHHHHIIIHHHHHII", CD_SIG, (3 << 8) | VERSION_ZIP64,
                                    VERSION_ZIP64 if z64 else VERSION_PLAIN, UTF8, STORED, w.dos_time & 0xFFFF,
                                    w.dos_time >> 16, w.crc, s32, s32, len(raw), len(extra), 0, 0, 0,
                                    (0o100644 << 16), LIMIT32 if z64 else w.header) + raw + extra)
        cd_size = self.pos - cd_start
        n = len(self.entries)
        if self.force_zip64 or n >= 0xFFFF or cd_start >= LIMIT32 or cd_size >= LIMIT32:
            e64 = self.pos
            self._write(struct.pack("<IQHHIIQQQQ", EOCD64_SIG, 44, (3 << 8) | VERSION_ZIP64, VERSION_ZIP64,
                                    0, 0, n, n, cd_size, cd_start))
            self._write(struct.pack("<IIQI", LOC64_SIG, 0, e64, 1))
            self._write(struct.pack("<IHHHHIIH", EOCD_SIG, 0, 0, min(n, 0xFFFF), min(n, 0xFFFF),
                                    min(cd_size, LIMIT32), LIMIT32, 0))
        else:
            self._write(struct.pack("<IHHHHIIH", EOCD_SIG, 0, 0, n, n, cd_size, cd_start, 0))
        self.out.commit()

    def abort(self) -> None:
        self.out.abort()

    def __enter__(self) -> "ZipWriter":
        return self

    def __exit__(self, et: object, *_: object) -> None:
        if et is None:
            try:
                self.close()
            except BaseException:
                self.abort()
                raise
        else:
            self.abort()


def _same_size(f: BinaryIO, path: str, size: int) -> None:
    if f.read(1):
        raise OSError(f"{path} grew while it was copied (more than its {size} bytes)")


__all__ = ["Written", "ZipWriter", "dos_time"]
