"""`warchive index --fields`: one JSON object per record, as `warcio index -f FIELDS` writes it.

``index_fields(source, fields, write)`` writes, for every record of one file
(all types, ARC records as the WARC ones warcio makes of them), a line
``{"field": "value", ...}`` with the fields in the order asked for and only
those the record has, byte for byte as warcio 1.8.1 does (``json.dumps``: ASCII,
``", "`` and ``": "``). A field is

- ``offset``, ``length``: the record's place in its file (warcio's: the gzip
  member; in a plain file the record without the blank lines after it);
- ``filename``: the file's name as the caller gives it (warcio: the base name);
- ``http:status``: the status code of a response or revisit with an HTTP head;
- ``http:NAME``: the HTTP header NAME (first of that name, any case);
- anything else: the WARC header of that name (WARC-Target-URI without <>, as
  warcio presents it).

Names are matched as warcio matches them: ``offset``, ``length``, ``filename``
and ``http:status`` exactly, header names in any case. No SURT keys, no
sorting; warchive.index.cdx writes the CDXJ index.
"""

from __future__ import annotations

import json
from typing import Callable, Dict, Iterable, List, Optional, Sequence

from ..errors import ArchiveError
from ..warc.headers import warcio_head
from ..warc.reader import Record, Source, open as open_archive
from .cdx import FileStats, IndexOptions, _skip_error, reporter, shared_member_error

Write = Callable[[bytes], object]


def parse_fields(spec: str) -> List[str]:
    """The fields of a ``-f`` value, as warcio splits it (on commas, nothing stripped)."""
    return spec.split(",")


def record_fields(rec: Record, fields: Sequence[str], filename: str) -> Dict[str, str]:
    """The fields of one record that it has, in the order of ``fields``."""
    out: Dict[str, str] = {}
    head = None
    for name in fields:
        value: Optional[str]
        if name == "offset":
            value = str(_located(rec).offset)
        elif name == "length":
            value = str(_located(rec).length)
        elif name == "filename":
            value = filename
        elif name == "http:status":
            value = rec.http.status if rec.type in ("response", "revisit") and rec.http else None
        elif name.startswith("http:"):
            value = rec.http.get(name[5:]) if rec.http else None
        else:
            if head is None:
                head = warcio_head(rec.headers)
            value = head.get(name)
        if value is not None:
            out[name] = value
    return out


def _located(rec: Record) -> Record:
    if rec.length is None:
        raise shared_member_error(rec.source, rec.offset)
    return rec


def index_fields(source: Source, fields: Sequence[str], write: Write, filename: str,
                 types: Optional[Iterable[str]] = None, opts: Optional[IndexOptions] = None) -> FileStats:
    """Write the JSON line of every record of ``source`` (of ``types`` only, when given); the
    ``filename`` field is ``filename``. Of ``opts`` only ``verify``, ``skip_errors``, ``strict`` and
    ``report`` count: defects are read past with a warning each (``strict``: the first is an
    error); with ``skip_errors`` a damaged record is reported and reading goes on at the next
    record, as `warchive index --skip-errors` does."""
    opts = opts if opts is not None else IndexOptions()
    http = any(f.startswith("http:") for f in fields)   # warcio parses HTTP heads only then
    stats = FileStats()
    with open_archive(source, types=types, verify=opts.verify, parse_http=http, strict=opts.strict,
                      on_defect=reporter(opts, stats), name="-" if filename == "-" else None) as records:
        while True:
            try:
                for rec in records:
                    write((json.dumps(record_fields(rec, fields, filename)) + "\n").encode("ascii"))
                    stats.records += 1
                    stats.lines += 1
                return stats
            except ArchiveError as e:
                if not opts.skip_errors:
                    raise
                off = getattr(e, "offset", None) or 0
                records.seek(_skip_error(e, records, off, opts, stats), resync=True)
