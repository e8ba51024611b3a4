"""The merge and encode tasks of a distributed index: runs in, one sorted part per key range out,
then the blocks of a segment or ZipNum cluster that start in each part.

``merge_task`` merges the lines of one key range in every map task's run
(byte ranges of the runs; warchive.index.sort.merge_files:
identical lines once) into the part ``p<k>.cdxj`` and counts its lines, its
` CDX ` header lines (which ZipNum leaves out) and, for a segment, writes the
length of every line (``p<k>.len``, u32 little-endian each), which is all the
block planner (warchive.distributed.blocks) needs to know where one machine's
writer would close its blocks.

The encode tasks write the blocks that *start* in a part, reading on into the
parts after it for the block that runs over its end: a segment's as a small
segment ``s<k>.seg`` of exactly those blocks (a block's bytes depend on its
lines alone: warchive.index.segment writes them the same wherever it
starts), ZipNum's as the gzip members ``z<k>.gz`` with their first lines and
sizes in the manifest. warchive.distributed.assemble then puts together the
bytes one machine writes. Each task publishes its files by rename, unsynced
but checked on reuse (warchive.distributed.scratch), its manifest last.
"""

from __future__ import annotations

import base64
import mmap
import os
from typing import Any, Dict, Iterator, List, Optional, Sequence

import numpy as np

from ..index.segment import SegmentWriter
from ..index.sort import merge_files
from ..index.zipnum import HEADER_PREFIX, block_compressor
from . import manifest
from .runs import first_at_least
from .scratch import FileSlice, ScratchFile

__all__ = ["merge_task", "segment_task", "zipnum_task", "span_lines", "part_name", "lengths_name"]


def part_name(k: int) -> str:
    return f"p{k:05d}.cdxj"


def lengths_name(k: int) -> str:
    return f"p{k:05d}.len"


def _headers(path: str) -> int:
    """Lines of a sorted file that start with ' CDX ' (they lie together: two binary searches)."""
    if os.path.getsize(path) == 0:
        return 0
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        buf: Any = mm
        a = first_at_least(buf, HEADER_PREFIX)
        b = first_at_least(buf, HEADER_PREFIX[:-1] + b"!", a)
        return mm[a:b].count(b"\n")


def _write_lengths(src: str, dst: str) -> ScratchFile:
    with ScratchFile(dst) as out:
        if os.path.getsize(src):
            data = np.memmap(src, dtype=np.uint8, mode="r")
            ends = np.flatnonzero(data == 10)
            starts = np.concatenate(([0], ends[:-1] + 1))
            out.write((ends - starts).astype("<u4").tobytes())
            del data
    return out


def merge_task(k: int, runs: Sequence[Sequence[Any]], directory: str, key: str, lengths: bool) -> Dict[str, Any]:
    """Merge the lines of key range k in the map tasks' runs ([path, offset, length] each) into its
    part (unless done with this key); the manifest."""
    mpath = os.path.join(directory, f"p{k:05d}.json")
    def run() -> Dict[str, Any]:
        path = os.path.join(directory, part_name(k))
        with ScratchFile(path) as part:
            slices = [FileSlice(p, offset, length) for p, offset, length in runs]
            lines = merge_files(slices, part.write, tmpdir=directory).lines_out if runs else 0
        files = [part.entry(directory)]
        if lengths:
            files.append(_write_lengths(path, os.path.join(directory, lengths_name(k))).entry(directory))
        return {"range": k, "lines": lines, "bytes": part.size, "headers": _headers(path), "files": files,
                "runs": len(runs)}

    return manifest.once(mpath, key, run)


def span_lines(parts: Sequence[Dict[str, Any]], a: int, b: int, kept: bool) -> Iterator[bytes]:
    """Lines a..b-1 (without LF) of the parts taken as one sequence; each part is
    {"path", "first": its first line's number, "lines": how many}. With `kept`, numbers count
    only the lines ZipNum keeps (not ' CDX ' headers, not empty lines)."""
    for p in parts:
        lo, n = p["first"], p["lines"]
        if lo + n <= a or n == 0:
            continue
        if lo >= b:
            return
        i = lo
        with open(p["path"], "rb", buffering=1 << 20) as f:
            for raw in f:
                line = raw[:-1] if raw.endswith(b"\n") else raw
                if kept and (not line or line.startswith(HEADER_PREFIX)):
                    continue
                if i >= b:
                    return
                if i >= a:
                    yield line
                i += 1


def segment_task(k: int, pieces: Sequence[Optional[Dict[str, Any]]], directory: str,
                 options: Dict[str, Any]) -> Dict[str, Any]:
    """The blocks that start in part k (pieces[k]: warchive.distributed.pieces.segment_pieces), lines
    span[0]..span[1]-1, as the small segment s<k>.seg; nothing when none does."""
    piece = pieces[k]
    if piece is None:
        return {"range": k, "files": [], "ran": True}   # nothing to do: it ran, as the block planning does
    span, parts, key = piece["span"], piece["parts"], piece["key"]
    mpath = os.path.join(directory, f"s{k:05d}.json")
    def run() -> Dict[str, Any]:
        with ScratchFile(os.path.join(directory, f"s{k:05d}.seg")) as out:
            writer = SegmentWriter(out.write, source=f"key range {k}", **options)
            writer.extend(span_lines(parts, span[0], span[1], kept=False))
            counts = writer.finish()
        return {"range": k, "span": span, "files": [out.entry(directory)], "blocks": counts["blocks"],
                "lines": counts["lines"]}

    return manifest.once(mpath, key, run)


def zipnum_task(k: int, plan: Dict[str, Any], directory: str, lines_per_block: int, compressor: str,
                level: Any) -> Dict[str, Any]:
    """The ZipNum blocks that start in part k (plan["pieces"][k]: warchive.distributed.pieces.
    zipnum_pieces; kept lines span[0]..span[1]-1, span[0] a multiple of lines_per_block) as gzip
    members back to back in z<k>.gz; the manifest lists each block's first line (base64),
    compressed length and uncompressed bytes. Nothing when no block starts there."""
    piece = plan["pieces"][k]
    if piece is None:
        return {"range": k, "files": [], "ran": True}   # nothing to do: it ran, as the block planning does
    span, parts, key = piece["span"], piece["parts"], piece["key"]
    mpath = os.path.join(directory, f"z{k:05d}.json")
    def run() -> Dict[str, Any]:
        compress = block_compressor(compressor, level)
        blocks: List[List[Any]] = []
        with ScratchFile(os.path.join(directory, f"z{k:05d}.gz")) as out:
            block: List[bytes] = []
            for line in span_lines(parts, span[0], span[1], kept=True):
                block.append(line)
                if len(block) == lines_per_block:
                    blocks.append(_put_block(out, block, compress))
                    block = []
            if block:
                blocks.append(_put_block(out, block, compress))
        return {"range": k, "span": span, "files": [out.entry(directory)], "blocks": blocks}

    return manifest.once(mpath, key, run)


def _put_block(out: ScratchFile, block: List[bytes], compress: Any) -> List[Any]:
    data = compress(block)
    out.write(data)
    return [base64.b64encode(block[0]).decode(), len(data), sum(len(x) + 1 for x in block), len(block)]
