"""Verify WARC and ARC files (``warchive check``): every record readable, sound in structure,
and every digest it carries right.

Every gzip member is inflated and its CRC-32 and size checked (zstd frames:
their checksum); every WARC record must have WARC-Type, WARC-Record-ID (neither
empty) and a valid WARC-Date and end where its Content-Length says; its digests are
judged by warchive.warc.verify. Records that share a gzip member are a
problem: they have no offsets of their own, so the file cannot be indexed
until ``warchive recompress`` writes it again. The file is read leniently
(warchive.warc.defects): each framing defect the reader reads past (a wrong
Content-Length, missing or extra blank lines, bytes that are no record, ...)
is a problem named by its kind, and checking goes on with the records after
it; a file that ends inside a record is the problem ``truncated`` (the cut
record is checked as far as it goes); an ARC version block shorter than
declared, as the Internet Archive's writers made them, is the producer defect
``arc-version-block``. Damage that stops reading ends the file's check with a
problem at its offset, after every record before it has been checked.

A finding is a problem (the file fails), a named producer defect
(warchive.warc.verify.DEFECTS: reported by name, a problem only when
``strict``), or a warning. The reader's errors carry remedies for
``warchive index``; check replaces them with its own. This module writes
nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional

from ..errors import ArchiveError, FileError, GzipError, RecordFormatError, TruncatedError
from ..timestamps import iso_date_to_timestamp
from .defects import ARC_VERSION_BLOCK, TRUNCATED, Defect
from .reader import ArchiveIterator, Record
from .source import Source
from .verify import DEFECT, DEFECTS, PROBLEM, verify_digests

REQUIRED = ("WARC-Type", "WARC-Record-ID", "WARC-Date")


@dataclass
class Finding:
    path: str
    offset: Optional[int]
    message: str
    record_id: Optional[str] = None
    fatal: bool = True
    defect: Optional[str] = None    # the name of a producer defect (warchive.warc.verify.DEFECTS)

    def __str__(self) -> str:
        at = f" at byte {self.offset}" if self.offset is not None else ""
        rid = f" record {self.record_id}" if self.record_id else ""
        return f"{self.path}{at}:{rid} {self.message}"


@dataclass
class CheckResult:
    """What ``check_file`` found: ``problems`` fail the file; ``defects`` (named producer
    defects, when not ``strict``) and ``warnings`` do not."""

    path: str
    strict: bool = False
    records: int = 0
    problems: List[Finding] = field(default_factory=list)
    defects: List[Finding] = field(default_factory=list)
    warnings: List[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_record(rec: Record, path: str, result: CheckResult) -> None:
    """Judge one record (reading its block) into ``result``."""
    rid = rec.record_id

    def problem(msg: str) -> None:
        result.problems.append(Finding(path, rec.offset, msg, rid))

    def warn(msg: str) -> None:
        result.warnings.append(Finding(path, rec.offset, msg, rid, fatal=False))

    if rec.format != "warc":
        return  # ARC records have no digests; the reader checks their structure
    for name in REQUIRED:
        value = rec.headers.get(name)
        if value is None:
            problem(f"no {name}")
        elif not value:   # (the head parser strips a value of its white space)
            problem(f"empty {name}")
    date = rec.headers.get("WARC-Date")
    if date:
        try:
            iso_date_to_timestamp(date)
        except ValueError:
            problem(f"invalid WARC-Date {date!r}")
    rid_value = rec.headers.get("WARC-Record-ID") or ""
    if rid_value and not (rid_value.startswith("<") and rid_value.endswith(">")):
        warn(f"WARC-Record-ID {rid_value!r} is not a <URI>")
    notes = verify_digests(rec)
    if any(f.offset == rec.offset and f.message.startswith(TRUNCATED + ":") for f in result.problems):
        notes = [n for n in notes if n.level != PROBLEM or "malformed" in n.message]   # (of bytes it lacks)
    for note in notes:
        if note.level == PROBLEM:
            problem(note.message)
        elif note.level == DEFECT:
            assert note.defect is not None
            producer_defect(result, Finding(path, rec.offset, note.message, rid, defect=note.defect))
        else:
            warn(note.message)


def producer_defect(result: CheckResult, f: Finding) -> None:
    """A named producer defect (f.defect): a problem with ``strict``, else reported by name."""
    if result.strict:
        f.message = f"{f.defect}: {f.message} (a known producer defect; --strict counts it)"
        result.problems.append(f)
    else:
        f.message = f"{f.defect}: {f.message} (a known producer defect, not damage)"
        f.fatal = False
        result.defects.append(f)


def framing_defect(result: CheckResult, d: Defect) -> None:
    """A defect the reader read past: a problem named by its kind (the IA ARC version block: a
    producer defect); a file cut short says what to make of it."""
    if d.kind == ARC_VERSION_BLOCK:
        producer_defect(result, Finding(result.path, d.offset, f"{d.problem} ({d.action})", defect=d.kind))
    elif d.kind == TRUNCATED:
        result.problems.append(Finding(result.path, d.offset, f"{d.kind}: {d.problem} ({_cut_remedy(d, result.path)})"))
    else:
        result.problems.append(Finding(result.path, d.offset, f"{d.kind}: {d.problem} ({d.action})"))


OPEN_REMEDY = "an unfinished file of a writer that was stopped: warchive recover cuts it after its last whole record"


def _cut_remedy(d: Defect, path: str) -> str:
    if path.endswith(".open"):
        return OPEN_REMEDY
    if d.problem.startswith("record ends after"):   # its head says more than the file holds
        return "the file is cut short, or the record's Content-Length is too large"
    return "the file is cut short"


def _remedy(e: FileError, path: str, records: int) -> str:
    """What to make of damage that stopped the check: check's words, not the reader's (which
    name ``warchive index``'s options)."""
    if path.endswith(".open"):
        return OPEN_REMEDY
    if isinstance(e, TruncatedError):
        return "the file is cut short"
    if isinstance(e, RecordFormatError) and records == 0 and e.offset == 0:
        return "is it a WARC or ARC file?"
    if isinstance(e, GzipError):
        return "the member's bytes are damaged: compare the file with another copy"
    if isinstance(e, RecordFormatError):
        return "the record's head or Content-Length is wrong, or its bytes are damaged"
    return ""


def check_file(path: str, on_record: Optional[Callable[[Record], Any]] = None, strict: bool = False,
               source: Optional[Source] = None) -> CheckResult:
    """Check every record of one file; damage ends the file's check with a problem at its offset.
    ``strict``: named producer defects are problems too. ``source``: what to read when it is not
    the file ``path`` names (a stream: standard input for '-'); findings name ``path``."""
    result = CheckResult(path, strict)
    shared_at: Optional[int] = None   # the gzip member of several records already reported
    try:
        with ArchiveIterator(source if source is not None else path, verify=True,
                             on_defect=lambda d: framing_defect(result, d), name=path) as it:
            for rec in it:
                check_record(rec, path, result)
                result.records += 1
                if rec.length is None and rec.offset != shared_at:
                    shared_at = rec.offset
                    result.problems.append(Finding(
                        path, rec.offset, "this gzip member holds several records, so they have no offsets of "
                        "their own and the file cannot be indexed (warchive recompress writes it again with "
                        "one member per record)", rec.record_id))
                if on_record is not None:
                    on_record(rec)
    except FileError as e:
        remedy = _remedy(e, path, result.records)
        result.problems.append(Finding(path, e.offset, e.problem + (f" ({remedy})" if remedy else "")))
    except ArchiveError as e:
        result.problems.append(Finding(path, None, str(e)))
    except OSError as e:
        result.problems.append(Finding(path, None, f"cannot read: {e.strerror or e}"))
    return result


def defect_summary(result: CheckResult) -> List[str]:
    """One line per producer defect met in a file (lenient check): how many records, the first."""
    lines = []
    for name, d in DEFECTS.items():
        found = [f for f in result.defects if f.defect == name]
        if found:
            n = len(found)
            lines.append(f"{result.path}: {n} record{'s' if n != 1 else ''} with the producer defect {name} "
                         f"(first at byte {found[0].offset}): {d.what}; not damage (-v lists them, "
                         "--strict counts them as problems)")
    return lines
