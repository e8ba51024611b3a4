"""``warchive recover``: cut a file (normally a ``.open`` file a killed writer left) after its
last whole, valid record and rename it without ``.open``.

The longest prefix of whole records whose gzip members (or zstd frames) and
framing are sound is kept and the torn rest cut off; the file is truncated
in place, fsynced and renamed, never over an existing file. This module
does not write records and does not judge digests (warchive.warc.check does).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Optional, Tuple

from ..durable import fsync_dir
from ..errors import ArchiveError, CorruptRecordError, RecordFormatError
from .reader import ArchiveIterator


# how a WARC or ARC file begins: a gzip member, a zstd frame, a plain WARC or ARC record (a file cut
# inside its first record begins so too; anything else is not cut, whatever its name)
ARCHIVE_STARTS = (b"\x1f\x8b", b"\x28\xb5\x2f\xfd", b"WARC/", b"filedesc://")


@dataclass
class Recovered:
    path: str              # the recovered file (NAME without .open, unless dry run)
    records: int           # whole records kept
    size: int              # bytes kept
    cut: int               # bytes cut off the end


def valid_prefix(path: str) -> Tuple[int, int]:
    """(records, bytes) of the longest run of whole, valid records from the start of the file."""
    records = 0
    good = 0
    try:
        with ArchiveIterator(path, verify=True, strict=True) as it:   # a defect ends the sound prefix
            for rec in it:
                if rec.format == "warc" and (rec.headers.get("WARC-Type") is None):
                    break
                if rec.length is None:
                    break  # inside a shared member: not addressable, stop before it
                records += 1
                good = it.position
    except (CorruptRecordError, RecordFormatError):
        pass
    return records, good


def recover(path: str, output: Optional[str] = None, dry_run: bool = False) -> Recovered:
    """Cut a file (normally ``NAME.open``) after its last whole record and rename it ``NAME``.

    ``output`` names the result (default: ``path`` without ``.open``; an
    existing file is never overwritten). A file in which not one record is whole and which
    does not begin as a WARC or ARC file is an error, and is left as it was."""
    if output is None:
        if not path.endswith(".open"):
            raise ArchiveError(f"{path}: not an .open file (give an output name to recover it anyway)")
        output = path[: -len(".open")]
    if os.path.exists(output) and os.path.abspath(output) != os.path.abspath(path):
        raise ArchiveError(f"{output}: exists already; recover to another name")
    size = os.path.getsize(path)
    records, good = valid_prefix(path)
    if records == 0 and size:
        with open(path, "rb") as f:
            head = f.read(16)
        if not any(head[:len(m)] == m[:len(head)] for m in ARCHIVE_STARTS):
            raise RecordFormatError(path, 0, f"not a WARC or ARC file: it begins {head!r}; nothing was cut")
    if not dry_run and not os.path.isdir(os.path.dirname(os.path.abspath(output))):
        raise ArchiveError(f"{output}: its directory does not exist; nothing was cut")
    if dry_run:
        return Recovered(path, records, good, size - good)
    with open(path, "r+b") as f:
        f.truncate(good)
        f.flush()
        os.fsync(f.fileno())
    os.rename(path, output)
    fsync_dir(os.path.dirname(os.path.abspath(output)), strict=False)
    return Recovered(output, records, good, size - good)
