"""Read and write WARC and ARC files: ``warchive.warc.open(path)`` iterates records,
``WarcWriter`` writes them.

    import warchive.warc
    with warchive.warc.open("crawl.warc.gz", types={"response"}) as records:
        for rec in records:
            rec.type, rec.target_uri, rec.http.status, rec.offset, rec.length
            body = rec.content_stream().read()     # de-chunked and decoded; rec.payload as stored

    from warchive.warc import WarcWriter
    with WarcWriter("out.warc.gz") as out:
        req, resp = out.write_exchange("https://example.com/", request_bytes, response_bytes)

The writer's names are imported from their modules when first asked for: ``warchive index``
imports this package, and the writer (its deflate worker, threads, sockets) would cost that
command about 20 ms of start-up it never uses (measured: warchive.warc.writer 14-25 ms after
warchive.index.build, of a ~110 ms run). warchive.index does the same for the query engine, which
tests/unit/test_cli_startup.py holds out of ``warchive index``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, List

from .content import content_stream
from .headers import Headers
from .reader import ArchiveIterator, Record, open
from .whole import WholeRecord, read_whole

if TYPE_CHECKING:
    from .builder import RecordBuilder, WarcRecord
    from .warcfile import Written
    from .writer import WarcWriter

# name -> the module of this package that defines it
_FACE = {"RecordBuilder": "builder", "WarcRecord": "builder", "WarcWriter": "writer", "Written": "warcfile"}

__all__ = ["ArchiveIterator", "Headers", "Record", "RecordBuilder", "WarcRecord", "WarcWriter", "WholeRecord",
           "Written", "content_stream", "open", "read_whole"]


def __getattr__(name: str) -> Any:
    module = _FACE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_FACE))
