"""The record table of a file about to be stored, read with warchive's own reader.

``record_table(path)`` lists every record's offset and length (warcio's, as the reader gives them),
WARC-Record-ID and WARC-Block-Digest (None for ARC records, which have neither), and the defects
the lenient reader recovered from. A file the reader cannot read (not a WARC/ARC from byte 0,
truncated, a bad CRC) raises StoreError: the store keeps archive files, and one that is damaged
before it is stored should be recovered first (``warchive recover``/``recompress``), not kept as
it is under digests that would vouch for it.
"""

from __future__ import annotations

from typing import List, Tuple

from ..errors import CorruptRecordError, StoreError
from ..warc.defects import Defect
from ..warc.reader import ArchiveIterator
from .manifest import RecordEntry


def record_table(path: str) -> Tuple[List[RecordEntry], List[Defect]]:
    """(records, defects) of the WARC/ARC file at ``path``."""
    defects: List[Defect] = []
    out: List[RecordEntry] = []
    try:
        with ArchiveIterator(path, parse_http=False, on_defect=defects.append) as it:
            for rec in it:
                if rec.format == "arc":   # the reader makes up a WARC-Record-ID for an ARC record
                    out.append(RecordEntry(rec.offset, rec.length, None, None))
                else:
                    out.append(RecordEntry(rec.offset, rec.length, rec.record_id, rec.block_digest))
    except CorruptRecordError as e:
        raise StoreError(path, e.offset, f"not a readable WARC/ARC file: {e.problem}",
                         "check it with `warchive check`; an .open file: `warchive recover`") from None
    return out, defects
