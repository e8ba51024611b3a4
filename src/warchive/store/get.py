"""Getting a stored file, or a byte range of it, out of a store.

``get(store, name, out, start, end)`` writes the file's bytes [start, end) to the binary stream
``out``, one stripe at a time, reading only the stripes (and of each only the data fragments)
the range needs, every fragment checked against the manifest (warchive.store.fragments). The
whole file's sha256 is checked against the manifest as it is written; a whole-file ``get_to_path``
publishes its output (temp file, fsync, rename) only when it matches. Faults that parity made up
for are returned in ``GetResult.damage``.

``parse_range`` reads the ``--range`` forms: ``START-END`` (inclusive, as HTTP and ``curl -r``),
``START-`` (to the end), ``START+LENGTH`` (an index's offset and length).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import BinaryIO, List, Optional, Tuple

from ..durable import AtomicOutput
from ..errors import StoreError
from .catalog import Store
from .fragments import Damage, FragmentReader
from .layout import store_url

_RANGE = re.compile(r"(\d{1,20})(?:-(\d{0,20})|\+(\d{1,20}))\Z")


@dataclass
class GetResult:
    name: str
    start: int
    end: int           # exclusive
    damage: List[Damage] = field(default_factory=list)


def parse_range(text: str) -> Tuple[int, Optional[int]]:
    """(start, end exclusive or None: to the end) of a --range value; ValueError if malformed."""
    m = _RANGE.match(text.strip())
    if not m:
        raise ValueError(f"range {text!r}: expected START-END, START- or START+LENGTH (bytes)")
    start = int(m.group(1))
    if m.group(3) is not None:
        return start, start + int(m.group(3))
    if m.group(2):
        end = int(m.group(2)) + 1
        if end <= start:
            raise ValueError(f"range {text!r}: END before START")
        return start, end
    return start, None


def clip_range(url: str, size: int, start: int, end: Optional[int]) -> Tuple[int, int]:
    """[start, end) within a file of ``size`` bytes (end clipped, as HTTP does); StoreError when
    the range starts past the end."""
    end = size if end is None else min(end, size)
    if start > size or (start == size and size > 0) or start > end:
        raise StoreError(url, start, f"the range starts past the end of the file ({size} bytes)")
    return start, end


def get(store: Store, name: str, out: BinaryIO, start: int = 0, end: Optional[int] = None) -> GetResult:
    """Write bytes [start, end) of stored file ``name`` to ``out`` (see the module docstring)."""
    man = store.manifest(name)
    url = store_url(store.root, name)
    start, end = clip_range(url, man.size, start, end)
    whole = start == 0 and end == man.size
    h = hashlib.sha256() if whole else None
    with FragmentReader(store, man, cache_bytes=0) as reader:
        for s in man.stripes_for(start, end):
            base = man.stripe_start(s)
            for piece in reader.stripe_pieces(s, max(start - base, 0), min(end - base, man.stripe_size(s))):
                if h is not None:
                    h.update(piece)
                out.write(piece)
        if h is not None and h.hexdigest() != man.sha256:
            raise StoreError(url, None, f"the file read back has sha256 {h.hexdigest()}, the manifest says "
                             f"{man.sha256}", "run a deep scrub")
        return GetResult(name, start, end, list(reader.damage))


def get_to_path(store: Store, name: str, path: str, start: int = 0, end: Optional[int] = None) -> GetResult:
    """get into the file ``path``, published only once complete (and, whole, once verified)."""
    with AtomicOutput(path) as out:
        return get(store, name, out, start, end)   # type: ignore[arg-type]
