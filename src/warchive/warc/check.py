"""Verify WARC files (``warchive check``).

check: every gzip member is inflated and its CRC-32 and size checked; every
record must have WARC-Type, WARC-Record-ID, WARC-Date (a valid date) and a
Content-Length that ends at a blank line; WARC-Block-Digest is checked over
the block and WARC-Payload-Digest over the payload — the entity body with
chunked transfer coding removed (WARC 1.1, 6.3.2). A payload digest taken
over the still-chunked body (as warcio and wpull write it) is a warning, not
a failure. Revisit payload digests name another record and are not checked.
This module writes nothing (``warchive recover`` is warchive.warc.recover).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, List, Optional, Tuple

from ..errors import CorruptRecordError
from ..timestamps import iso_date_to_timestamp
from .digest import Digest, DigestError, dechunk, new_hasher
from .reader import ArchiveIterator, Record

CHUNK = 1 << 20
REQUIRED = ("WARC-Type", "WARC-Record-ID", "WARC-Date")


@dataclass
class Finding:
    path: str
    offset: Optional[int]
    message: str
    record_id: Optional[str] = None
    fatal: bool = True

    def __str__(self) -> str:
        at = f" at byte {self.offset}" if self.offset is not None else ""
        rid = f" record {self.record_id}" if self.record_id else ""
        return f"{self.path}{at}:{rid} {self.message}"


@dataclass
class CheckResult:
    path: str
    records: int = 0
    problems: List[Finding] = field(default_factory=list)
    warnings: List[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _hashers(rec: Record, name: str) -> Tuple[str, Optional[Any], Optional[bytes], Optional[str]]:
    """(algorithm, hasher, expected raw digest, note) for the labelled digest field `name`."""
    value = rec.headers.get(name)
    if value is None:
        return "", None, None, None
    try:
        d = Digest.parse(value, default=None)
    except DigestError:
        return "", None, None, f"{name} {value!r} cannot be checked (unknown algorithm or encoding)"
    return d.algorithm, new_hasher(d.algorithm), d.raw, None


def check_record(rec: Record, path: str, result: CheckResult) -> None:
    rid = rec.record_id

    def problem(msg: str) -> None:
        result.problems.append(Finding(path, rec.offset, msg, rid))

    def warn(msg: str) -> None:
        result.warnings.append(Finding(path, rec.offset, msg, rid, fatal=False))

    if rec.format != "warc":
        return  # ARC records have no digests; the reader checked their structure
    for name in REQUIRED:
        if rec.headers.get(name) is None:
            problem(f"no {name}")
    date = rec.headers.get("WARC-Date")
    if date is not None:
        try:
            iso_date_to_timestamp(date)
        except ValueError:
            problem(f"invalid WARC-Date {date!r}")
    rid_value = rec.headers.get("WARC-Record-ID") or ""
    if rid_value and not (rid_value.startswith("<") and rid_value.endswith(">")):
        warn(f"WARC-Record-ID {rid_value!r} is not a <URI>")
    _, block_h, block_want, note = _hashers(rec, "WARC-Block-Digest")
    if note:
        warn(note)
    alg, payload_h, payload_want, note = ("", None, None, None) if rec.type == "revisit" else \
        _hashers(rec, "WARC-Payload-Digest")
    if note:
        warn(note)
    head_len = rec._payload - rec._block
    chunked = rec.http is not None and "chunked" in (rec.http.get("Transfer-Encoding") or "").lower()
    raw_payload_h = new_hasher(alg) if payload_h is not None and chunked else None
    kept: List[bytes] = []
    stream = rec.block()
    seen = 0
    while True:
        buf = stream.read(CHUNK)
        if not buf:
            break
        if block_h is not None:
            block_h.update(buf)
        if payload_h is not None and seen + len(buf) > head_len:
            part = buf[max(0, head_len - seen):]
            if chunked:
                kept.append(part)
                if raw_payload_h is not None:
                    raw_payload_h.update(part)
            else:
                payload_h.update(part)
        seen += len(buf)
    if block_h is not None and block_h.digest() != block_want:
        problem(f"WARC-Block-Digest {rec.headers.get('WARC-Block-Digest')} does not match the block")
    if payload_h is not None:
        if chunked:
            body = b"".join(kept)
            pieces = dechunk(body)
            for p in pieces if pieces is not None else [body]:
                payload_h.update(p)
        if payload_h.digest() != payload_want:
            if raw_payload_h is not None and raw_payload_h.digest() == payload_want:
                warn("WARC-Payload-Digest is over the chunked body, not the de-chunked entity body")
            else:
                problem(f"WARC-Payload-Digest {rec.headers.get('WARC-Payload-Digest')} does not match the payload")
    length = rec.length  # finishes the record: CRC, ISIZE, the blank line after it
    if length is None:
        warn("several records share this gzip member (warchive recompress writes one member per record)")


def check_file(path: str, on_record: Optional[Callable[[Record], Any]] = None) -> CheckResult:
    """Check every record of one file; damage ends the file's check with a problem at its offset."""
    result = CheckResult(path)
    try:
        with ArchiveIterator(path, verify=True) as it:
            for rec in it:
                check_record(rec, path, result)
                result.records += 1
                if on_record is not None:
                    on_record(rec)
    except CorruptRecordError as e:
        remedy = e.remedy
        if path.endswith(".open"):
            remedy = "an unfinished file of a writer that was stopped: warchive recover cuts it after its last whole record"
        result.problems.append(Finding(path, e.offset, e.problem + (f" ({remedy})" if remedy else "")))
    except OSError as e:
        result.problems.append(Finding(path, None, f"cannot read: {e.strerror or e}"))
    return result
