"""The last step of a distributed index: the pieces of the key ranges put together into the bytes
one machine writes.

- CDXJ: the sorted parts concatenated (they are key ranges in order).
- Segment: warchive.distributed.blocks.join_segments.
- ZipNum: the gzip members of every range copied, block by block, through
  warchive.index.zipnum.ClusterWriter, which lays out the parts, the summary
  (``.idx``) and the ``.loc`` as write_zipnum does.

Each runs as one task on a worker, reading the scratch files; only their
names travel. The ``*_of`` forms take the manifests of the tasks before
(their Dask futures), so that the join waits in Dask, not for the client.
"""

from __future__ import annotations

import base64
import os
from typing import Any, Dict, Optional, Sequence

from ..durable import AtomicOutput
from ..errors import IndexFormatError
from ..index.zipnum import ClusterWriter
from .blocks import join_segments
from .shards import part_name

__all__ = ["concat_parts", "join_segments", "join_zipnum", "concat_parts_of", "join_segments_of", "join_zipnum_of"]

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


def concat_parts_of(out: str, directory: str, *merged: Dict[str, Any]) -> Dict[str, int]:
    """concat_parts of the parts in `directory` that the merge manifests `merged` (key order) wrote."""
    return concat_parts([os.path.join(directory, part_name(m["range"])) for m in merged if m["files"]], out)


def join_segments_of(out: str, directory: str, options: Dict[str, Any], *encoded: Dict[str, Any]) -> Dict[str, int]:
    """join_segments of the pieces the segment encode tasks wrote (their manifests, key order)."""
    pieces = [os.path.join(directory, f"s{e['range']:05d}.seg") for e in encoded if e["files"]]
    return dict(join_segments(pieces, out, options), ran=True)


def join_zipnum_of(out: str, directory: str, parts: int, plan: Dict[str, Any],
                   *encoded: Dict[str, Any]) -> Dict[str, Any]:
    """join_zipnum of the members the ZipNum encode tasks wrote (their manifests, key order; plan:
    warchive.distributed.pieces.zipnum_pieces's); "bytes": the compressed bytes of the blocks."""
    chunks = [dict(e, path=os.path.join(directory, f"z{e['range']:05d}.gz")) for e in encoded if e["files"]]
    r = join_zipnum(chunks, out, plan["bytes"], parts)
    return dict(r, bytes=sum(c[1] for ch in chunks for c in ch["blocks"]))
