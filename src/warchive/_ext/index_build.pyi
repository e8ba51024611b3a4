"""Stubs of the compiled kernel warchive._ext.index_build (ext/index_build.pyx over ext/csrc/wa_segwrite.h)."""

from typing import Callable, Dict, Iterable, Optional, Union

COMPRESSIONS: Dict[str, int]
HAVE_ZSTD: bool
DEFAULT_COMPRESSION: str
DEFAULT_LEVELS: Dict[str, int]
DEFAULT_BLOCK_BYTES: int
DEFAULT_RESTART_INTERVAL: int

_Line = Union[bytes, bytearray, memoryview]

class SegmentWriter:
    def __init__(self, write: Callable[[bytes], object], *, block_lines: int = ..., block_bytes: int = ...,
                 restart_interval: int = ..., compression: Optional[str] = ..., level: Optional[int] = ...,
                 source: Optional[str] = ...) -> None: ...
    def add(self, line: _Line) -> None: ...
    def extend(self, lines: Iterable[_Line]) -> None: ...
    def finish(self) -> Dict[str, int]: ...
    @property
    def stats(self) -> Dict[str, int]: ...
