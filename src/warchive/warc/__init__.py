"""Read WARC and ARC files: ``warchive.warc.open(path)`` iterates records.

    import warchive.warc
    with warchive.warc.open("crawl.warc.gz", types={"response"}) as records:
        for rec in records:
            rec.type, rec.target_uri, rec.http.status, rec.offset, rec.length
            body = rec.payload.read()
"""

from .headers import Headers
from .reader import ArchiveIterator, Record, open

__all__ = ["ArchiveIterator", "Headers", "Record", "open"]
