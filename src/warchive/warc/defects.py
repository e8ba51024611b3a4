"""The account of what a lenient read recovered from: one ``Defect`` per framing fault.

A defect is a fault of an archive file that warcio reads past (a Content-Length
a few bytes off, missing or extra blank lines between records, bytes between
records that are no record, a line of text that warcio reads as an ARC record,
an ARC version block declaring a length one byte short, a file that ends
inside its last record, ...). The reader (warchive.warc.reader) recovers from
it the way warcio does and hands it to a ``Defects`` sink, which keeps the
list, passes each defect once to a callback (by default a ``DefectWarning``
through Python's warnings), or, in strict mode, raises it as the
CorruptRecordError child it would have been. Damage no reader can read past
(a bad CRC, invalid deflate data) is never a defect: it is raised as before.

This module holds no bytes and reads no files.
"""

from __future__ import annotations

import warnings
from typing import Callable, List, Optional, Set, Tuple, Type

from ..errors import CorruptRecordError, RecordFormatError

# The kinds of defect. A record's own faults name the record's first byte; faults
# between records name the first byte that is not part of a record.
CONTENT_LENGTH = "content-length"      # a record's length does not end it (or is invalid)
SEPARATOR = "separator"                # a record is not followed by exactly CRLFCRLF (ARC: LF)
BLANK_LINES = "blank-lines"            # blank lines where none belong (between records, before the first)
GARBAGE = "garbage"                    # bytes that are no record, skipped
TEXT_RECORD = "text-record"            # a line that is no record head, read as the ARC record warcio reads there
EMPTY_MEMBER = "empty-member"          # a gzip member that holds no record
PLAIN_RECORD = "plain-record"          # a record not gzip-compressed in a gzip file
SPLIT_RECORD = "split-record"          # a record whose content runs on into the next gzip member(s)
ARC_VERSION_BLOCK = "arc-version-block"   # an ARC filedesc:// header whose length is shorter than its version block
FILEDESC_FIELDS = "filedesc-fields"    # an ARC filedesc:// line whose name, address or date are none ("-")
SHARED_MEMBER = "shared-member"        # (the indexer) records sharing a gzip member have no offsets of their own
TRUNCATED = "truncated"                # the file ends inside a record (or inside its gzip member)

KINDS = (CONTENT_LENGTH, SEPARATOR, BLANK_LINES, GARBAGE, TEXT_RECORD, EMPTY_MEMBER, PLAIN_RECORD, SPLIT_RECORD,
         ARC_VERSION_BLOCK, FILEDESC_FIELDS, SHARED_MEMBER, TRUNCATED)


class Defect:
    """One defect: in the file ``path`` (None: a stream) at byte ``offset``, of kind ``kind``;
    ``problem`` says what is wrong, ``action`` what was done about it. ``str()`` is
    "PATH at byte OFFSET: PROBLEM (ACTION)", as an ArchiveError's message."""

    __slots__ = ("path", "offset", "kind", "problem", "action")

    def __init__(self, path: Optional[str], offset: int, kind: str, problem: str, action: str) -> None:
        self.path = path
        self.offset = offset
        self.kind = kind
        self.problem = problem
        self.action = action

    def __str__(self) -> str:
        where = self.path if self.path is not None else "<stream>"
        return f"{where} at byte {self.offset}: {self.problem} ({self.action})"

    def __repr__(self) -> str:
        return f"Defect({self.path!r}, {self.offset}, {self.kind!r}, {self.problem!r}, {self.action!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Defect):
            return NotImplemented
        return all(getattr(self, k) == getattr(other, k) for k in self.__slots__)

    def __hash__(self) -> int:
        return hash((self.path, self.offset, self.kind))


class DefectWarning(UserWarning):
    """The warning a lenient reader issues for a defect when it was given no callback;
    ``.defect`` is the Defect."""

    def __init__(self, defect: Defect) -> None:
        super().__init__(str(defect))
        self.defect = defect


OnDefect = Callable[[Defect], object]


class Defects:
    """The defects of one file, in the order found, each counted once (by offset and kind).

    strict: ``add`` raises the defect as ``error`` (a CorruptRecordError child) instead.
    on_defect: called with each new defect (default: ``warnings.warn(DefectWarning(d))``)."""

    def __init__(self, path: Optional[str], strict: bool = False, on_defect: Optional[OnDefect] = None) -> None:
        self.path = path
        self.strict = strict
        self.on_defect = on_defect
        self.items: List[Defect] = []
        self._seen: Set[Tuple[int, str]] = set()

    def add(self, offset: int, kind: str, problem: str, action: str,
            error: Type[CorruptRecordError] = RecordFormatError) -> None:
        if self.strict:
            raise error(self.path, offset, problem, f"without --strict: {action}")
        if (offset, kind) in self._seen:
            return
        self._seen.add((offset, kind))
        d = Defect(self.path, offset, kind, problem, action)
        self.items.append(d)
        if self.on_defect is not None:
            self.on_defect(d)
        else:
            warnings.warn(DefectWarning(d), stacklevel=4)
