"""Stubs of the compiled kernel warchive._ext.line_sort (ext/line_sort.pyx over ext/csrc/wa_sort.h)."""

from typing import Callable, List, Optional, Protocol, Sequence, Tuple, Union

MAX_CHUNK: int
MAX_LINE: int

class _ReadInto(Protocol):
    def readinto(self, b: memoryview) -> Optional[int]: ...

Out = Union[int, Callable[[bytes], object]]

def count_lines(buf: Union[bytes, bytearray, memoryview], n: int) -> int: ...
def sort_chunk(buf: Union[bytes, bytearray, memoryview], n: int, out: Out, threads: int = ...,
               max_lines: int = ..., outbuf: int = ...) -> Tuple[int, int, int]: ...
def merge(sources: Sequence[Union[int, _ReadInto]], out: Out, names: Optional[List[str]] = ...,
          check: bool = ..., bufsize: int = ..., outbuf: int = ...) -> Tuple[int, int]: ...
