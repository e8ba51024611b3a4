"""One record of an archive file as `warcio extract` prints it: its heads, its payload, or both.

``extract(source, offset, part, write)`` finds the record that starts at byte
``offset`` and writes, byte for byte what warcio 1.8.1 writes:

- ``"record"``: the WARC head, the HTTP head (when the record has one) and the
  rest of the block as stored (not de-chunked, not decoded);
- ``"headers"``: the two heads only;
- ``"payload"``: the payload as a browser saw it (de-chunked and decoded, as
  warcio's content stream is, by warchive.warc.content); the block of a record
  without an HTTP head.

The heads are warcio's re-serialisation, not the stored bytes: each line
decoded (UTF-8, else Latin-1) and written as UTF-8 ``Name: value`` CRLF,
continuation lines joined, a CRLF after the last. WARC-Target-URI is written
as warcio presents it (``<...>`` removed, spaces as %20). An ARC record is
written with warcio's ARC head (warcio reads it without converting it to WARC):
a ``WARC/1.0`` line, then ``uri``, ``ip-address``, ``archive-date``,
``content-type`` and ``length`` as they stand in the ARC line.

``source`` is a path or a binary stream. A path that is not a regular file (a
named pipe, /dev/stdin) and a stream are read forward: the first ``offset``
bytes are skipped, so a stream's offsets count from where it stands.

A wrong offset (past the end, inside a record, at blank lines) raises
NoRecordError naming the record it is inside and the next one; a damaged record
a CorruptRecordError child; both name the file and the byte. Inside a record of
a plain file a line can look like a record head to the reader; whether a
record starts there is then told by reading from the record head before it
(warchive.warc.starts). The record is read leniently: a defect of it that the reader
reads past (warchive.warc.defects) goes to ``on_defect`` (default: a
DefectWarning), and none is told when no record starts at ``offset``. This
module writes nothing but what ``write`` is given.
"""

from __future__ import annotations

import io
import os
import warnings
import zlib
from typing import Any, BinaryIO, Callable, List, Optional, Union

from ..errors import CorruptRecordError, GzipError, NoRecordError, TruncatedError, UnsupportedFormatError
from .content import content_stream
from .defects import Defect, DefectWarning, OnDefect
from .framing import record_line
from .headers import Headers, decode_line, warcio_head
from .reader import Record, open as open_archive
from .source import RandomAccess, is_random_access
from .starts import Before, Starts, where_records_start
from .zst import ZSTD_MAGIC

PARTS = ("record", "headers", "payload")
ARC_FIELDS = ("uri", "ip-address", "archive-date", "content-type", "length")
ARC_LINE_MAX = 1 << 16   # the first line of an ARC record is read from this many bytes (compressed)
CHUNK = 1 << 16
PROBLEM_MAX = 120        # the reader quotes what it found; at a wrong offset that is compressed bytes
TAIL_MAX = 1 << 20       # a stream's last bytes before the offset kept to tell whether a record starts there

GZIP_MAGIC = b"\x1f\x8b"

Write = Callable[[bytes], object]
Check = Callable[[], Optional[Starts]]   # where records start around the offset, read from a record before it
Source = Union[str, os.PathLike[str], BinaryIO, RandomAccess]


def arc_head(line: bytes) -> Optional[Headers]:
    """The head warcio gives the ARC record whose first line is ``line`` (None: not an ARC line)."""
    parts = decode_line(line).rstrip().rsplit(" ", len(ARC_FIELDS) - 1)
    if len(parts) != len(ARC_FIELDS):
        return None
    return Headers("WARC/1.0", "", list(zip(ARC_FIELDS, parts)))


def heads(rec: Record, arc_line: Optional[bytes] = None) -> bytes:
    """The WARC (or ARC) head and the HTTP head of ``rec`` as warcio writes them; an ARC record
    needs its first line, ``arc_line``, as stored (the reader presents ARC records as WARC ones)."""
    if rec.format == "arc":
        head = arc_head(arc_line) if arc_line is not None else None
        if head is None or head.get("ip-address") != rec.headers.get("WARC-IP-Address"):
            raise ValueError(f"{arc_line!r} is not the first line of the ARC record at byte {rec.offset}")
    else:
        head = warcio_head(rec.headers)
    out = head.to_bytes()
    if rec.http:
        out += rec.http.to_bytes()
    return out


def extract(source: Source, offset: int, part: str = "record", write: Optional[Write] = None,
            on_defect: Optional[OnDefect] = None) -> None:
    """Write the record at byte ``offset`` of ``source`` (see the module docstring) to ``write``."""
    if part not in PARTS:
        raise ValueError(f"part must be one of {PARTS}, not {part!r}")
    if write is None:
        raise ValueError("write is required")
    if offset < 0:
        raise ValueError("offset must not be negative")
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.isfile(path):   # a named pipe, /dev/stdin: no seeking back
            with io.open(path, "rb") as f:
                return _extract_stream(f, path, offset, part, write, on_defect)
        size = os.path.getsize(path)
        if offset >= size:
            raise NoRecordError(path, offset, f"past the end of the file ({size} bytes)", _WHERE)
        before: Before = lambda n: _read_at(path, offset - min(n, offset), min(n, offset))
        return _extract(path, path, offset, part, write, lambda: _read_at(path, offset), on_defect, before,
                        lambda: where_records_start(path, offset, before))
    name = getattr(source, "name", None)
    name = name if isinstance(name, str) else None
    if is_random_access(source):   # a stored file: read at the offset, as a file is
        ra: RandomAccess = source   # type: ignore[assignment]
        if offset >= ra.size:
            raise NoRecordError(name, offset, f"past the end of the file ({ra.size} bytes)", _WHERE)
        ra_before: Before = lambda n: ra.pread(min(n, offset), offset - min(n, offset))
        return _extract(ra, name, offset, part, write, lambda: ra.pread(ARC_LINE_MAX, offset), on_defect, ra_before,
                        lambda: where_records_start(ra, offset, ra_before))
    return _extract_stream(source, name, offset, part, write, on_defect)  # type: ignore[arg-type]


_WHERE = "warchive index --fields offset,warc-type,warc-target-uri lists the records"


def _extract_stream(f: BinaryIO, name: Optional[str], offset: int, part: str, write: Write,
                    on_defect: Optional[OnDefect]) -> None:
    skipped = 0
    tail = bytearray()
    while skipped < offset:
        b = f.read(min(CHUNK, offset - skipped))
        if not b:
            raise NoRecordError(name, offset, f"past the end of the stream ({skipped} bytes)", _WHERE)
        skipped += len(b)
        tail += b
        del tail[: max(0, len(tail) - TAIL_MAX)]
    prefix = _read_full(f, ARC_LINE_MAX)
    if not prefix:
        raise NoRecordError(name, offset, f"past the end of the stream ({offset} bytes)", _WHERE)
    kept = bytes(tail)   # a stream cannot go back: where records start is told from these bytes
    before: Before = lambda n: kept[max(0, len(kept) - n):]
    limit = len(kept) if len(kept) < offset else None
    _extract(io.BufferedReader(_Prefixed(prefix, f, name)), name, offset, part, write, lambda: prefix, on_defect,
             before, lambda: where_records_start(kept + prefix, offset, before, limit, offset - len(kept)))


def _extract(src: Union[str, BinaryIO, RandomAccess], name: Optional[str], offset: int, part: str, write: Write,
             prefix: Callable[[], bytes], on_defect: Optional[OnDefect], before: Before, check: Check) -> None:
    held: List[Defect] = []   # until the record is known to start at offset: then they are its own
    told: List[Optional[OnDefect]] = [None]

    def defect(d: Defect) -> None:
        tell = told[0]
        if tell is None:
            held.append(d)
        else:
            tell(d)
    try:
        with open_archive(src, offset=offset, on_defect=defect) as records:
            try:
                rec = next(iter(records), None)
            except CorruptRecordError:   # a wrong offset, or a damaged record?
                _refuse_inside(name, offset, prefix(), check)
                raise
            if rec is None:
                raise NoRecordError(name, offset, "no record here, only blank lines up to the end", _WHERE)
            if rec.offset != offset or _doubtful(offset, prefix(), before):
                _refuse_inside(name, offset, prefix(), check)
            if rec.offset != offset:
                raise NoRecordError(name, offset, f"no record starts here (the next one starts at byte "
                                    f"{rec.offset})", _WHERE)
            tell = told[0] = on_defect if on_defect is not None else _warn
            for d in held:
                tell(d)
            if part != "payload":
                write(heads(rec, _first_line(prefix(), name, offset) if rec.format == "arc" else None))
            if part == "headers":
                return
            stream = content_stream(rec) if part == "payload" else rec.payload
            while True:
                b = stream.read(CHUNK)
                if not b:
                    return
                write(b)
    except CorruptRecordError as e:
        raise _for_extract(e, offset) from e


def _unit_start(offset: int, prefix: bytes) -> bool:
    """A gzip member or zstd frame starts a record; so does the start of the file."""
    return offset == 0 or prefix[:2] == GZIP_MAGIC or prefix[:4] == ZSTD_MAGIC


def _doubtful(offset: int, prefix: bytes, before: Before) -> bool:
    """Whether the record the reader found at ``offset`` may be a piece of another record: in a
    plain file, a line of text read as a record (as warcio reads one between records), or a record
    whose previous byte ends no line."""
    if _unit_start(offset, prefix):
        return False
    nl = prefix.find(b"\n")
    return record_line(prefix[: nl + 1] if nl >= 0 else prefix) is None or before(1) != b"\n"


def _refuse_inside(name: Optional[str], offset: int, prefix: bytes, check: Check) -> None:
    """Raise NoRecordError when reading from a record before ``offset`` shows that none starts
    there, naming the record it is inside and the next one."""
    if _unit_start(offset, prefix):
        return
    starts = check()
    if starts is None or starts.here:
        return
    where = [f"it is inside the record at byte {starts.inside}"] if starts.inside is not None else []
    where += [f"the next one starts at byte {starts.next}"] if starts.next is not None else []
    raise NoRecordError(name, offset, "no record starts here" + (f" ({'; '.join(where)})" if where else ""), _WHERE)


def _warn(d: Defect) -> None:
    warnings.warn(DefectWarning(d), stacklevel=3)


def _for_extract(e: CorruptRecordError, offset: int) -> CorruptRecordError:
    """The reader's error with a remedy that names no option `extract` lacks."""
    if isinstance(e, TruncatedError):
        remedy = "the file is cut short, or the record's Content-Length is wrong"
    elif isinstance(e, GzipError):
        remedy = "the gzip member is damaged"
    elif e.offset == offset:
        remedy = f"is {offset} where a record starts? " + _WHERE
    else:
        remedy = "the record is damaged"
    problem = e.problem if len(e.problem) <= PROBLEM_MAX else e.problem[:PROBLEM_MAX] + "..."
    return type(e)(e.path, e.offset, problem, remedy)


def _read_at(path: str, offset: int, n: int = ARC_LINE_MAX) -> bytes:
    with io.open(path, "rb") as f:
        f.seek(offset)
        return f.read(n)


def _first_line(prefix: bytes, name: Optional[str], offset: int) -> bytes:
    """The first line of the record whose stored bytes begin with ``prefix`` (a gzip member, or
    plain)."""
    data = prefix
    if prefix[:2] == GZIP_MAGIC:
        try:
            data = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(prefix)
        except zlib.error as e:
            raise GzipError(name, offset, f"cannot inflate the record's first line: {e}",
                            "the gzip member is damaged") from e
    elif prefix[:4] == ZSTD_MAGIC:
        raise UnsupportedFormatError(f"{name} at byte {offset}: extract does not read ARC records in "
                                     "zstd frames (zstd -d makes a plain ARC file of it)")
    nl = data.find(b"\n")
    return data[: nl + 1] if nl >= 0 else data


def _read_full(f: BinaryIO, n: int) -> bytes:
    parts = []
    while n > 0:
        b = f.read(n)
        if not b:
            break
        parts.append(b)
        n -= len(b)
    return b"".join(parts)


class _Prefixed(io.RawIOBase):
    """A forward-only stream: the bytes already read from ``f`` (``prefix``), then the rest of ``f``."""

    def __init__(self, prefix: bytes, f: BinaryIO, name: Optional[str]) -> None:
        super().__init__()
        self._prefix = memoryview(prefix)
        self._f = f
        self.name = name

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readinto(self, b: Any) -> int:
        n = len(b)
        if self._prefix:
            k = min(n, len(self._prefix))
            b[:k] = self._prefix[:k]
            self._prefix = self._prefix[k:]
            return k
        data = _read_full(self._f, n)
        b[: len(data)] = data
        return len(data)
