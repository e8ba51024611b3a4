"""WACZ 1.1.1 (Web Archive Collection Zipped): write a collection as one, read and import one.

``create_wacz`` (warchive.wacz.create) packages a collection, ``add_wacz``
(warchive.wacz.ingest) imports a WACZ into one, ``validate`` checks one, and
``WaczFile`` (warchive.wacz.reader) reads one by byte ranges, as `warchive
serve` does to serve it as a read-only collection. docs/format.md, section
"WACZ", says what we write.
"""

from .create import Created, create_wacz
from .ingest import Added, add_wacz
from .reader import WaczFile
from .validate import Report, validate
from .zipread import CompressedEntry, UnsafeZipEntry, ZipFormatError

__all__ = ["Added", "CompressedEntry", "Created", "Report", "UnsafeZipEntry", "WaczFile", "ZipFormatError",
           "add_wacz", "create_wacz", "validate"]
