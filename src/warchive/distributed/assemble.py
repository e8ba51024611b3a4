"""The last step of a distributed index: the pieces of the key ranges put together into the bytes
one machine writes.

- CDXJ: the sorted parts concatenated (they are key ranges in order).
- Segment: warchive.distributed.blocks.join_segments.
- ZipNum: the gzip members of every range copied into the part files as
  warchive.index.zipnum.write_zipnum cuts them (``parts`` files of about
  equal uncompressed size, cut at block boundaries), and the summary
  (``.idx``) and ``.loc`` written as it writes them: the block's first two
  fields as its key (its whole first line where that would sort before the
  key above), offsets in the part, block numbers from 1; parts, then the
  .loc, then the .idx published by atomic rename.

Each runs as one task on a worker, reading the scratch files; only their
names travel.
"""

from __future__ import annotations

import base64
import os
from typing import Any, Dict, List, Optional, Sequence

from ..durable import AtomicOutput
from ..errors import IndexFormatError
from ..index.zipnum import ZipNumCluster, cluster_paths, summary_key
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
    d, idx_path, loc_path, pattern = cluster_paths(out)
    os.makedirs(d, exist_ok=True)
    idx = AtomicOutput(idx_path)
    outs: List[AtomicOutput] = [idx]
    part_names: List[str] = []
    nblocks = nlines = 0
    try:
        part_out: Optional[AtomicOutput] = None
        part_name = ""
        offset = done_bytes = 0
        prev_key = b""
        for c in chunks:
            pos = 0
            for first_b64, clen, ubytes, nl in c["blocks"]:
                if part_out is None or (parts > 1 and len(part_names) < parts
                                        and done_bytes >= total_bytes * len(part_names) // parts):
                    part_name = pattern.format(len(part_names))
                    part_out = AtomicOutput(os.path.join(d, part_name))
                    outs.append(part_out)
                    part_names.append(part_name)
                    offset = 0
                first = base64.b64decode(first_b64)
                key = summary_key(first)
                if key < prev_key:
                    key = first
                prev_key = key
                if b"\t" in key:
                    raise IndexFormatError(out, None, f"the key of line {first[:100]!r} holds a tab: "
                                           "ZipNum summaries are tab-separated")
                nblocks += 1
                nlines += nl
                done_bytes += ubytes
                _copy(c["path"], part_out, pos, clen)
                pos += clen
                idx.write(b"%s\t%s\t%d\t%d\t%d\n" % (key, part_name.encode(), offset, clen, nblocks))
                offset += clen
        loc = AtomicOutput(loc_path)
        outs.append(loc)
        loc.write(b"".join(f"{p}\t{p}\n".encode() for p in part_names))
        for o in outs[1:]:
            o.commit()
        idx.commit()
    except BaseException:
        for o in outs:
            o.abort()
        raise
    cluster = ZipNumCluster(idx_path, loc_path, [os.path.join(d, p) for p in part_names], nlines, nblocks)
    return {"lines": cluster.lines, "blocks": cluster.blocks, "parts": len(cluster.parts), "ran": True}
