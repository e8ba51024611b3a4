"""Verify the digests one WARC record carries, and tell known producer defects apart from damage.

WARC-Block-Digest is compared with the block of every record type.
WARC-Payload-Digest is compared with the payload wherever a record carries
one — request, response, resource, metadata, conversion, warcinfo alike:
for a record with an HTTP head, the entity body after it with chunked
transfer coding removed (WARC 1.1 section 6.3.2), for any other the whole
block. Two payload digests describe bytes that are not in the record and
are not compared, as warcio's checker does not compare them either: a
revisit's (its original's payload) and a segment's (WARC-Segment-Number:
the payload of the whole segmented record).

A digest without an algorithm label, of an algorithm nobody knows, or whose
value is not that algorithm's size in base32, base16 or base64, is
malformed: a problem, whatever record carries it. A digest that does not
match is a problem, except for the named producer defects of ``DEFECTS``:
a known writer's way of getting the digest technically wrong, recognised by
its exact signature, which does not damage anything the archive holds.

This module reads one record's block through the reader and judges nothing
else (structure, dates and file damage are warchive.warc.check's).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

from .defects import ARC_VERSION_BLOCK
from .digest import CHECKED, Dechunker, Digest, DigestError, new_hasher
from .reader import Record

CHUNK = 1 << 20
PROBLEM, DEFECT, WARNING = "problem", "defect", "warning"


@dataclass(frozen=True)
class Defect:
    """A producer defect: ``name`` as reports print it, ``what`` the writer did, ``seen`` where."""

    name: str
    what: str
    seen: str


DEFECTS: Dict[str, Defect] = {d.name: d for d in (
    Defect("revisit-block-digest",
           "a revisit's WARC-Block-Digest is the digest of an empty block, though the block "
           "holds the revisit's HTTP head",
           "writers that digest a revisit's block as if it were empty, GNU Wget's --warc-dedup revisits among "
           "them (1.21.3: tests/data/wget/docs-python-3.11-recrawl.warc.gz)"),
    Defect("chunked-payload-digest",
           "WARC-Payload-Digest is the digest of the still-chunked body, not of the entity body "
           "with the chunked transfer coding removed",
           "warcio's writer (webrecorder/warcio#74, #75), Heritrix FetchHTTP over HTTP/1.1 "
           "(internetarchive/heritrix3#769) and other writers that digest the body as received"),
    Defect(ARC_VERSION_BLOCK,
           "an ARC file's filedesc:// header declares a length one byte (or a few) short of its own "
           "version block, so the header reads as a version block without content",
           "the Internet Archive's ARC writers (the ARC files pywb, warcio and cdxj-indexer test with)"),
)}


@dataclass
class Note:
    """One thing found about a record's digests: a ``level`` (PROBLEM, DEFECT, WARNING), what
    it is, and for a DEFECT its name in ``DEFECTS``."""

    level: str
    message: str
    defect: Optional[str] = None


def _expected(rec: Record, name: str, notes: List[Note]) -> Optional[Digest]:
    """The digest the field ``name`` declares, None when it is absent or malformed (noted)."""
    text = rec.headers.get(name)
    if text is None:
        return None
    try:
        d = Digest.parse(text, default=None, table=CHECKED)
    except DigestError as e:
        notes.append(Note(PROBLEM, f"{name} is malformed: {e}"))
        return None
    value = text.strip().partition(":")[2].strip()
    if value != d.base32 and value.upper().rstrip("=") == d.base32.rstrip("="):
        notes.append(Note(WARNING, f"{name} {text!r} is base32 in lower case or without its padding "
                                   f"({d.label}); tools that compare digests as text take it for another one"))
    return d


def verify_digests(rec: Record, sink: Optional[Callable[[bytes], Any]] = None) -> List[Note]:
    """Read the block of ``rec`` (which must not have been read yet) and judge its digests.
    ``sink``: called with each piece of the block as it is read (the whole block is then read
    even when the record carries no digest; the writer's copy keeps it so).

    Damage met while reading (a record cut short, a bad gzip member) is raised, as the reader
    raises it."""
    notes: List[Note] = []
    block_want = _expected(rec, "WARC-Block-Digest", notes)
    payload_want = _expected(rec, "WARC-Payload-Digest", notes)
    if rec.type == "revisit":
        payload_want = None      # its original's payload
    elif payload_want is not None and rec.headers.get("WARC-Segment-Number") is not None:
        notes.append(Note(WARNING, "WARC-Payload-Digest of a segment is the whole segmented payload's; "
                                   "not compared"))
        payload_want = None
    block_h = new_hasher(block_want.algorithm) if block_want is not None else None
    payload_h: Optional[Any] = None
    raw_h: Optional[Any] = None          # the body as stored, for chunked bodies
    dechunker: Optional[Dechunker] = None
    if payload_want is not None:
        payload_h = new_hasher(payload_want.algorithm)
        if rec.http is not None and "chunked" in (rec.http.get("Transfer-Encoding") or "").lower():
            raw_h = new_hasher(payload_want.algorithm)
            dechunker = Dechunker()
    if block_h is None and payload_h is None and sink is None:
        return notes
    head_len = rec._payload - rec._block
    stream = rec.block()
    seen = 0
    while True:
        buf = stream.read(CHUNK)
        if not buf:
            break
        if sink is not None:
            sink(buf)
        if block_h is not None:
            block_h.update(buf)
        if payload_h is not None and seen + len(buf) > head_len:
            part = memoryview(buf)[max(0, head_len - seen):]
            if dechunker is None:
                payload_h.update(part)
            else:
                assert raw_h is not None
                raw_h.update(part)
                for piece in dechunker.feed(part):
                    payload_h.update(piece)
        seen += len(buf)
    if block_want is not None and block_h is not None:
        got = Digest(block_want.algorithm, block_h.digest())
        if got != block_want:
            notes.append(_block_mismatch(rec, block_want, got))
    if payload_want is not None and payload_h is not None:
        if raw_h is not None and not (dechunker is not None and dechunker.ok):
            payload_h, raw_h = raw_h, None   # not well chunked: the payload is the body as it is
        got = Digest(payload_want.algorithm, payload_h.digest())
        if got != payload_want:
            notes.append(_payload_mismatch(rec, payload_want, got, raw_h))
    return notes


def _block_mismatch(rec: Record, want: Digest, got: Digest) -> Note:
    text = rec.headers.get("WARC-Block-Digest")
    if rec.type == "revisit" and want.is_empty and rec.content_length and rec.http is not None \
            and rec._payload - rec._block == rec.content_length:
        return Note(DEFECT, f"WARC-Block-Digest {text} is the digest of an empty block, but the block holds "
                            f"the revisit's HTTP head, whose digest is {got.label}", "revisit-block-digest")
    return Note(PROBLEM, f"WARC-Block-Digest {text} does not match the block, whose digest is {got.label}")


def _payload_mismatch(rec: Record, want: Digest, got: Digest, raw_h: Optional[Any]) -> Note:
    text = rec.headers.get("WARC-Payload-Digest")
    if raw_h is not None and raw_h.digest() == want.raw:
        return Note(DEFECT, f"WARC-Payload-Digest {text} is the digest of the chunked body; the de-chunked "
                            f"entity body's is {got.label}", "chunked-payload-digest")
    return Note(PROBLEM, f"WARC-Payload-Digest {text} does not match the payload, whose digest is {got.label}")
