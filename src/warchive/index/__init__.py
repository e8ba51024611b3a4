"""Capture indexes: CDXJ/CDX-11 lines from WARC/ARC files (cdx), many files at once (build), sorting
(sort), index segments (segment), and looking captures up (query: ``Index``).

    from warchive.index import Index, Capture, QueryError, index_paths, index_file, IndexOptions
    from warchive.index import Segment, write_segment

The names are imported from their modules when first asked for: ``warchive index`` imports this
package, and importing the query engine with it (``Index``) would cost that command about 30 ms
of start-up it never uses (measured: warchive.index.query 28-29 ms after warchive.index.build).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, List

if TYPE_CHECKING:
    from .build import index_paths
    from .capture import Capture, QueryError
    from .cdx import IndexOptions, index_file
    from .query import Index
    from .segment import Segment, write_segment

# name -> the module of this package that defines it
_FACE = {"Capture": "capture", "Index": "query", "IndexOptions": "cdx", "QueryError": "capture",
         "Segment": "segment", "index_file": "cdx", "index_paths": "build", "write_segment": "segment"}

__all__ = ["Capture", "Index", "IndexOptions", "QueryError", "Segment", "index_file", "index_paths",
           "write_segment"]


def __getattr__(name: str) -> Any:
    module = _FACE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> List[str]:
    return sorted(set(globals()) | set(_FACE))
