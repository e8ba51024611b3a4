"""The last step of a distributed index: the pieces of the key ranges put together into the bytes
one machine writes.

- CDXJ: the sorted parts concatenated (they are key ranges in order).
- Segment: warchive.distributed.blocks.join_segments.
- ZipNum: the gzip members of every range copied, block by block, through
  warchive.index.zipnum.ClusterWriter, which lays out the parts, the summary
  (``.idx``) and the ``.loc`` as write_zipnum does.

Each runs as one task on a worker, reading the scratch files; only their
names travel.
"""

from __future__ import annotations

import base64
from typing import Any, Dict, Optional, Sequence

from ..durable import AtomicOutput
from ..errors import IndexFormatError
from ..index.zipnum import ClusterWriter
from .blocks import join_segments

__all__ = ["concat_parts", "join_segments", "join_zipnum"]

COPY = 4 << 20


def _copy(src: str, out: AtomicOutput, offset: int = 0, length: Optional[int] = None) -> int:
    n = 0
    with open(src, "rb") as f:
        f.seek(offset)
        while length is None or n < length:
            chunk = f.read(COPY if length is None else min(COPY, length - n))
            if not chunk:
                break
            out.write(chunk)
            n += len(chunk)
    if length is not None and n != length:
        raise IndexFormatError(src, None, f"{n} bytes where the manifest says {length}")
    return n


def concat_parts(parts: Sequence[str], out: str) -> Dict[str, int]:
    """The sorted parts, in order, as the file `out`."""
    total = 0
    with AtomicOutput(out) as o:
        for p in parts:
            total += _copy(p, o)
    return {"bytes": total, "ran": True}


def join_zipnum(chunks: Sequence[Dict[str, Any]], out: str, total_bytes: int, parts: int = 1) -> Dict[str, Any]:
    """Write the ZipNum cluster `out` from the encode tasks' manifests (key order: "path" of the
    members file, "blocks" [first line b64, compressed length, uncompressed bytes, lines]);
    `total_bytes` is the size of the sorted CDXJ, by which write_zipnum cuts parts."""
    writer = ClusterWriter(out, parts, total_bytes)
    try:
        for c in chunks:
            pos = 0
            for first_b64, clen, ubytes, nl in c["blocks"]:
                _copy(c["path"], writer.block(base64.b64decode(first_b64), clen, ubytes, nl), pos, clen)
                pos += clen
        cluster = writer.commit()
    except BaseException:
        writer.abort()
        raise
    return {"lines": cluster.lines, "blocks": cluster.blocks, "parts": len(cluster.parts), "ran": True}
