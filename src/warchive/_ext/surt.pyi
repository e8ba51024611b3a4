"""Stubs of the compiled SURT kernel (ext/surt.pyx over ext/csrc/wa_surt.h).

``**options`` are the `surt` package's keyword arguments (``DEFAULTS`` has
their names and defaults); an unknown name raises TypeError. ``canonicalizer``
is None or one of the package's own (see docs/format.md, "SURT options").
"""

from typing import List, Mapping, Optional, Sequence, Tuple, Union, overload

DEFAULTS: Mapping[str, bool]
DEFAULT_FLAGS: int

@overload
def surt(url: str, canonicalizer: object = ..., **options: bool) -> str: ...
@overload
def surt(url: bytes, canonicalizer: object = ..., **options: bool) -> bytes: ...
@overload
def surt(url: None, canonicalizer: object = ..., **options: bool) -> str: ...
@overload
def surt_or_url(url: str, canonicalizer: object = ..., **options: bool) -> str: ...
@overload
def surt_or_url(url: bytes, canonicalizer: object = ..., **options: bool) -> bytes: ...
@overload
def surt_or_url(url: None, canonicalizer: object = ..., **options: bool) -> str: ...
def surt_many(
    urls: Sequence[Union[str, bytes, None]], *, or_url: bool = ..., canonicalizer: object = ..., **options: bool
) -> List[Union[str, bytes]]: ...
def surt_flags(canonicalizer: object = ..., **options: bool) -> int: ...

# Test hooks: the C core's status codes and buffer bound, and one raw call
# into a buffer of exactly ``cap`` bytes followed by a guard zone.
OK: int
NEED_IDNA: int
FAIL: int
SMALL: int
def _cap(n: int, idna_len: int) -> int: ...
def _raw_key(url: bytes, cap: int, idna: Optional[bytes] = ..., flags: int = ...) -> Tuple[int, bytes]: ...
