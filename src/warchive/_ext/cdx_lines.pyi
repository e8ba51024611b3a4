"""Stubs of the compiled kernel warchive._ext.cdx_lines (ext/cdx_lines.pyx)."""

import os
from typing import Optional, Sequence, Tuple, Union

from .gzip_members import RandomAccess

OK: int
EOF: int
SLOW: int
DEFAULT_SURT_FLAGS: int

class LineIndexer:
    def __init__(self, path: Union[str, os.PathLike[str], RandomAccess], filename: bytes, cdx11: bool = ...,
                 records: Union[None, str, Sequence[str]] = ..., verify: bool = ..., start: int = ...,
                 stop: int = ..., window: int = ...,
                 surt_flags: int = ...) -> None: ...
    def run(self, flush_at: int = ...) -> Tuple[int, bytes]: ...
    @property
    def gzip(self) -> bool: ...
    pos: int
    @property
    def stats(self) -> Tuple[int, int, int, int]: ...
