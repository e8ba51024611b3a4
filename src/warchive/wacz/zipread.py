"""Reading a ZIP file's directory and entries by byte ranges, refusing every hostile or lying archive.

A WACZ is read as ReplayWeb.page reads one from a static host: the end of the
file (end-of-central-directory record, ZIP64 locator and record), then the
central directory, then each entry's local header and data, each one range
read (``Blob.read(offset, n)``: a file's pread, or an HTTP Range request). The
whole file is never read.

Refused, each with a ``ZipFormatError`` child naming the file and the entry:

- names that would leave the directory they are extracted to (``..``, absolute
  names, backslashes, drive letters, NUL) and symlinks (``UnsafeZipEntry``);
- two entries of one name (``UnsafeZipEntry``);
- entries whose local header disagrees with the central directory (name,
  method, sizes), that run past the central directory or overlap another entry,
  encrypted entries, multi-disk archives (``ZipFormatError``);
- deflated entries that inflate to more than they declare, or to more than
  ``max_size`` when read whole (zip bombs), and CRC mismatches (``ZipFormatError``);
- deflated entries where a stored one is needed to read by range (``CompressedEntry``).

This module reads ZIP structure only; what a WACZ holds is warchive.wacz.reader's.
"""

from __future__ import annotations

import os
import re
import stat
import struct
import zlib
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Protocol, Type, cast

from isal import isal_zlib

from ..errors import CompressedEntry, UnsafeZipEntry, ZipFormatError

STORED, DEFLATED = 0, 8
EOCD_SIG, EOCD64_SIG, LOC64_SIG = 0x06054B50, 0x06064B50, 0x07064B50
CD_SIG, LOCAL_SIG = 0x02014B50, 0x04034B50
EOCD, EOCD64, LOC64, CD_HEAD, LOCAL_HEAD = struct.Struct("<IHHHHIIH"), struct.Struct("<IQHHIIQQQQ"), \
    struct.Struct("<IIQI"), struct.Struct("<IHHHHHHIIIHHHHHII"), struct.Struct("<IHHHHHIIIHH")
MAX_COMMENT = 0xFFFF
MAX_INFLATED = 256 << 20      # a metadata entry (datapackage.json, pages.jsonl, index.idx) read whole
MAX_ENTRIES = 1 << 20
RAW_PIECE = 64 << 10          # bytes of a deflated entry read at once when streamed (its tail is copied per piece)
PIECE = 1 << 20               # bytes of an entry's content given at once when streamed
UNIX = 3                      # "made by" host of entries whose external attributes carry a mode
InflateError = cast(Type[Exception], isal_zlib.error)   # what ISA-L's inflate raises (its stub says an instance)


class Blob(Protocol):
    """Bytes read by range: ``size`` and ``read(offset, n)`` (fewer bytes only at the end)."""

    name: str
    size: int

    def read(self, offset: int, n: int) -> bytes: ...


class FileBlob:
    """A local file read by pread (``fd`` stays open until close())."""

    def __init__(self, path: str) -> None:
        self.name = path
        self.fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        self.size = os.fstat(self.fd).st_size

    def read(self, offset: int, n: int) -> bytes:
        return os.pread(self.fd, n, offset)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


@dataclass(frozen=True)
class Entry:
    """One entry of the directory: ``start`` is where its data begins in the ZIP file."""

    name: str
    method: int
    crc: int
    csize: int
    size: int
    header: int      # offset of its local header
    start: int       # offset of its data
    mtime: int       # DOS date << 16 | DOS time

    @property
    def end(self) -> int:
        return self.start + self.csize


def check_name(path: str, name: str) -> None:
    """Refuse (UnsafeZipEntry) a name that would leave the directory it is extracted to."""
    if not name or "\0" in name or "\\" in name:
        raise UnsafeZipEntry(path, None, f"entry {name!r} has an empty name, a NUL or a backslash",
                             "refused: it could write outside the directory it is extracted to")
    if name.startswith("/") or re.match(r"^[A-Za-z]:", name):
        raise UnsafeZipEntry(path, None, f"entry {name!r} has an absolute name",
                             "refused: it could write outside the directory it is extracted to")
    if ".." in name.split("/"):
        raise UnsafeZipEntry(path, None, f"entry {name!r} climbs out of the archive ('..')",
                             "refused: zip slip")


class ZipDirectory:
    """The entries of a ZIP file, checked (see the module docstring); ``entries`` by name."""

    def __init__(self, blob: Blob) -> None:
        self.blob = blob
        self.path = blob.name
        cd_offset, cd_size, count = self._end()
        raw = self._read(cd_offset, cd_size, "the central directory")
        self.cd_offset = cd_offset
        self.entries: Dict[str, Entry] = {}
        pos = 0
        listed: List[Entry] = []
        for _ in range(count):
            e, pos = self._central(raw, pos, cd_offset)
            if e.name in self.entries:
                raise UnsafeZipEntry(self.path, cd_offset + pos, f"entry {e.name!r} is in the archive twice",
                                     "refused: which one a tool extracts differs")
            self.entries[e.name] = e
            listed.append(e)
        self._check_layout(listed)

    # -- the end records
    def _read(self, offset: int, n: int, what: str) -> bytes:
        if offset < 0 or n < 0 or offset + n > self.blob.size:
            raise ZipFormatError(self.path, offset, f"{what} ({n} bytes) lies outside the file "
                                 f"({self.blob.size} bytes)", "truncated or not a ZIP file")
        data = self.blob.read(offset, n)
        if len(data) != n:
            raise ZipFormatError(self.path, offset, f"short read of {what}", "truncated file")
        return data

    def _end(self) -> "tuple[int, int, int]":
        size = self.blob.size
        tail_n = min(size, EOCD.size + MAX_COMMENT)
        tail = self._read(size - tail_n, tail_n, "the end of the file")
        at = tail.rfind(b"PK\x05\x06")
        while at >= 0 and (at + EOCD.size > len(tail)   # a signature too near the end for a record
                           or at + EOCD.size + struct.unpack_from("<H", tail, at + 20)[0] != len(tail)):
            at = tail.rfind(b"PK\x05\x06", 0, at)
        if at < 0:
            raise ZipFormatError(self.path, None, "no end-of-central-directory record", "not a ZIP file, or truncated")
        eocd_at = size - tail_n + at
        _, disk, cd_disk, n_here, n_all, cd_size, cd_offset, _ = EOCD.unpack_from(tail, at)
        if 0xFFFFFFFF in (cd_size, cd_offset) or 0xFFFF in (n_here, n_all):
            loc = self._read(eocd_at - LOC64.size, LOC64.size, "the ZIP64 locator") if eocd_at >= LOC64.size else b""
            if len(loc) != LOC64.size or struct.unpack_from("<I", loc)[0] != LOC64_SIG:
                raise ZipFormatError(self.path, eocd_at, "the end record asks for ZIP64 but there is no ZIP64 locator")
            _, _, e64, disks = LOC64.unpack(loc)
            rec = self._read(e64, EOCD64.size, "the ZIP64 end record")
            sig, _, _, _, disk, cd_disk, n_here, n_all, cd_size, cd_offset = EOCD64.unpack(rec)
            if sig != EOCD64_SIG or disks > 1:
                raise ZipFormatError(self.path, e64, "bad ZIP64 end-of-central-directory record")
            end_of_cd = e64
        else:
            end_of_cd = eocd_at
        if disk or cd_disk or n_here != n_all:
            raise ZipFormatError(self.path, eocd_at, "a multi-disk (spanned) archive", "join the parts first")
        if n_all > MAX_ENTRIES:
            raise ZipFormatError(self.path, eocd_at, f"{n_all} entries: more than {MAX_ENTRIES}")
        if cd_offset + cd_size > end_of_cd:
            raise ZipFormatError(self.path, eocd_at, f"the central directory (byte {cd_offset}, {cd_size} bytes) "
                                 "runs past the end record", "truncated or prefixed ZIP file")
        return cd_offset, cd_size, n_all

    # -- the central directory
    def _central(self, raw: bytes, pos: int, base: int) -> "tuple[Entry, int]":
        if pos + CD_HEAD.size > len(raw):
            raise ZipFormatError(self.path, base + pos, "the central directory ends inside an entry")
        (sig, made, _, flags, method, t, d, crc, csize, size, nlen, xlen, clen, disk, _, attr,
         header) = CD_HEAD.unpack_from(raw, pos)
        if sig != CD_SIG:
            raise ZipFormatError(self.path, base + pos, "no central directory entry here")
        end = pos + CD_HEAD.size + nlen + xlen + clen
        if end > len(raw):
            raise ZipFormatError(self.path, base + pos, "a central directory entry runs past the directory")
        name = _decode(raw[pos + CD_HEAD.size: pos + CD_HEAD.size + nlen], flags)
        extra = raw[pos + CD_HEAD.size + nlen: pos + CD_HEAD.size + nlen + xlen]
        size, csize, header = _zip64(extra, size, csize, header, self.path, name)
        check_name(self.path, name)
        if made >> 8 == UNIX and stat.S_ISLNK(attr >> 16):
            raise UnsafeZipEntry(self.path, header, f"entry {name!r} is a symbolic link", "refused: links can point "
                                 "outside the directory it is extracted to")
        if flags & 1:
            raise ZipFormatError(self.path, header, f"entry {name!r} is encrypted", "WACZ entries are not encrypted")
        if method not in (STORED, DEFLATED):
            raise ZipFormatError(self.path, header, f"entry {name!r} uses compression method {method}",
                                 "only stored and deflated entries are read")
        if method == STORED and csize != size:
            raise ZipFormatError(self.path, header, f"stored entry {name!r} declares {csize} bytes stored "
                                 f"but {size} bytes of content")
        start = self._local(header, name, method, crc, csize, size, flags)
        return Entry(name, method, crc, csize, size, header, start, d << 16 | t), end

    def _local(self, header: int, name: str, method: int, crc: int, csize: int, size: int, flags: int) -> int:
        head = self._read(header, LOCAL_HEAD.size, f"the local header of entry {name!r}")
        sig, _, lflags, lmethod, _, _, lcrc, lcsize, lsize, nlen, xlen = LOCAL_HEAD.unpack(head)
        if sig != LOCAL_SIG:
            raise ZipFormatError(self.path, header, f"entry {name!r}: no local header where the directory says")
        rest = self._read(header + LOCAL_HEAD.size, nlen + xlen, f"the local header of entry {name!r}")
        lname = _decode(rest[:nlen], lflags)
        if lname != name or lmethod != method:
            raise ZipFormatError(self.path, header, f"entry {name!r}: the local header says {lname!r}, method "
                                 f"{lmethod}; the directory says method {method}", "a tampered archive")
        if not lflags & 8:   # no data descriptor: the local header carries the sizes too
            lsize, lcsize, _ = _zip64(rest[nlen:], lsize, lcsize, 0, self.path, name)
            if (lcsize, lsize, lcrc) != (csize, size, crc):
                raise ZipFormatError(self.path, header, f"entry {name!r}: sizes or CRC of the local header "
                                     f"({lcsize}, {lsize}) differ from the directory's ({csize}, {size})",
                                     "sizes that lie: refused")
        return header + LOCAL_HEAD.size + nlen + xlen

    def _check_layout(self, entries: List[Entry]) -> None:
        last_end, last = 0, None
        for e in sorted(entries, key=lambda x: x.header):
            if e.header < last_end:
                raise ZipFormatError(self.path, e.header, f"entry {e.name!r} overlaps entry {last!r}",
                                     "overlapping entries (a zip bomb or a tampered archive): refused")
            if e.end > self.cd_offset:
                raise ZipFormatError(self.path, e.header, f"entry {e.name!r} ({e.csize} bytes from byte "
                                     f"{e.start}) runs into the central directory", "sizes that lie: refused")
            last_end, last = e.end, e.name

    # -- entries
    def entry(self, name: str) -> Entry:
        try:
            return self.entries[name]
        except KeyError:
            raise ZipFormatError(self.path, None, f"no entry {name!r}") from None

    def stored(self, name: str) -> Entry:
        """Entry ``name``, which must be stored (CompressedEntry otherwise)."""
        e = self.entry(name)
        if e.method != STORED:
            raise CompressedEntry(self.path, e.header, f"entry {name!r} is deflated",
                                  "WACZ stores WARCs and compressed indexes uncompressed, to read them by range")
        return e

    def read_range(self, e: Entry, offset: int, n: int) -> bytes:
        """``n`` bytes at ``offset`` of the content of stored entry ``e`` (never past its end)."""
        if e.method != STORED:
            raise CompressedEntry(self.path, e.header, f"entry {e.name!r} is deflated", "cannot read it by range")
        if offset < 0 or n < 0 or offset + n > e.size:
            raise ZipFormatError(self.path, e.start + offset, f"bytes {offset}..{offset + n} are outside entry "
                                 f"{e.name!r} ({e.size} bytes)", "the index does not match the archive")
        return self._read(e.start + offset, n, f"entry {e.name!r}")

    def read(self, name: str, max_size: int = MAX_INFLATED) -> bytes:
        """The whole content of entry ``name``, inflated and CRC-checked; more than ``max_size``
        bytes, or more than it declares, is refused (a zip bomb)."""
        e = self.entry(name)
        if e.size > max_size:
            raise ZipFormatError(self.path, e.header, f"entry {name!r} declares {e.size} bytes, more than "
                                 f"{max_size} read whole", "refused (a zip bomb?)")
        raw = self._read(e.start, e.csize, f"entry {name!r}")
        if e.method == DEFLATED:
            d = zlib.decompressobj(-15)
            try:
                data = d.decompress(raw, e.size + 1)
            except zlib.error as err:
                raise ZipFormatError(self.path, e.start, f"entry {name!r} does not inflate: {err}") from None
            if len(data) > e.size or d.unconsumed_tail:
                raise ZipFormatError(self.path, e.start, f"entry {name!r} inflates to more than the {e.size} "
                                     "bytes it declares", "sizes that lie (a zip bomb): refused")
        else:
            data = raw
        if len(data) != e.size:
            raise ZipFormatError(self.path, e.start, f"entry {name!r} holds {len(data)} bytes, not {e.size}")
        if zlib.crc32(data) != e.crc:
            raise ZipFormatError(self.path, e.start, f"entry {name!r}: CRC mismatch", "the archive is damaged")
        return data

    def chunks(self, name: str, piece: int = PIECE) -> Iterator[bytes]:
        """The content of entry ``name`` in pieces of at most ``piece`` bytes, inflated as it is
        read: nothing is held whole, more than it declares is refused as soon as it inflates (a
        zip bomb), and its size and CRC are checked after its last piece (ZipFormatError)."""
        e = self.entry(name)
        inflate = isal_zlib.decompressobj(-15) if e.method == DEFLATED else None   # (ISA-L: several times zlib's)
        crc = done = pos = 0
        tail = b""
        while pos < e.csize or tail:
            if inflate is None:
                out = self._read(e.start + pos, min(piece, e.csize - pos), f"entry {name!r}")
                pos += len(out)
            else:
                if not tail:
                    tail = self._read(e.start + pos, min(RAW_PIECE, e.csize - pos), f"entry {name!r}")
                    pos += len(tail)
                try:
                    out = inflate.decompress(tail, piece)
                except InflateError as err:
                    raise ZipFormatError(self.path, e.start, f"entry {name!r} does not inflate: {err}") from None
                tail = inflate.unconsumed_tail
            done += len(out)
            if done > e.size:
                raise ZipFormatError(self.path, e.start, f"entry {name!r} inflates to more than the {e.size} "
                                     "bytes it declares", "sizes that lie (a zip bomb): refused")
            crc = zlib.crc32(out, crc)
            if out:
                yield out
        if done != e.size:
            raise ZipFormatError(self.path, e.start, f"entry {name!r} holds {done} bytes, not {e.size}")
        if crc != e.crc:
            raise ZipFormatError(self.path, e.start, f"entry {name!r}: CRC mismatch", "the archive is damaged")


def _decode(raw: bytes, flags: int) -> str:
    return raw.decode("utf-8" if flags & 0x800 else "cp437", "replace")


def _zip64(extra: bytes, size: int, csize: int, header: int, path: str, name: str) -> "tuple[int, int, int]":
    """Sizes and header offset with those saturated at 0xFFFFFFFF taken from the ZIP64 extra field."""
    if 0xFFFFFFFF not in (size, csize, header):
        return size, csize, header
    p = 0
    while p + 4 <= len(extra):
        tag, n = struct.unpack_from("<HH", extra, p)
        if tag == 1:
            body, q = extra[p + 4: p + 4 + n], 0
            vals = []
            for v in (size, csize, header):
                if v == 0xFFFFFFFF:
                    if q + 8 > len(body):
                        raise ZipFormatError(path, None, f"entry {name!r}: ZIP64 extra field too short")
                    v = struct.unpack_from("<Q", body, q)[0]
                    q += 8
                vals.append(v)
            return vals[0], vals[1], vals[2]
        p += 4 + n
    raise ZipFormatError(path, None, f"entry {name!r}: sizes saturated but no ZIP64 extra field")


__all__ = ["Blob", "CompressedEntry", "Entry", "FileBlob", "InflateError", "STORED", "DEFLATED", "UnsafeZipEntry",
           "ZipDirectory", "ZipFormatError", "check_name"]
