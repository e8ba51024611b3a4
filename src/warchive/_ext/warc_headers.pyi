"""Stubs of the compiled kernel warchive._ext.warc_headers (ext/warc_headers.pyx)."""

from typing import List, Literal, Optional, Tuple, Union

NEED_MORE: Literal[False]

def parse_head(buf: Union[bytes, bytearray, memoryview], final: bool
               ) -> Union[None, Literal[False], Tuple[str, List[Tuple[str, str]], int, int]]: ...
