"""Where one machine's segment writer closes its blocks, and a segment put together from pieces.

``block_spans`` walks the line lengths of the parts (``p<k>.len``) in key
order with the writer's rule (ext/csrc/wa_segwrite.h: a block closes once it
holds ``block_lines`` lines or its lines, without LF, reach ``block_bytes``
bytes) and gives, for each part, the lines of the blocks that start in it.
That walk is serial but reads four bytes a line, not the lines.

``join_segments`` writes the segment one machine writes from the small
segments of those blocks (warchive.distributed.shards.segment_task): the
block bytes are copied as they are; the block index is rebuilt, because the
separator of a piece's first block depends on the last line of the block
before it (in the piece before), and separators are front-coded against the
one before; then the first and last lines, and the footer with its CRCs.
docs/format.md ("Index segments") specifies the bytes read and written here.
"""

from __future__ import annotations

import os
import struct
import zlib
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..durable import AtomicOutput
from ..errors import IndexFormatError
from ..index.segment import write_segment

__all__ = ["block_spans", "join_segments"]

HEADER = 16
FOOTER = 48
MAGIC = b"\x89WASEG\r\n"


def block_spans(parts: Sequence[Dict[str, Any]], block_lines: int, block_bytes: int) -> List[Optional[List[int]]]:
    """For each part ({"lengths": path, "first": number of its first line, "lines"}), [a, b): the
    lines of the blocks that start in it (b may lie in a later part), or None if none does."""
    firsts: List[Optional[int]] = []
    open_lines = 0
    open_bytes = 0
    for p in parts:
        n = p["lines"]
        first: Optional[int] = None
        if n:
            lengths = np.fromfile(p["lengths"], dtype="<u4").astype(np.int64)
            if len(lengths) != n:
                raise IndexFormatError(p["lengths"], None, f"{len(lengths)} lengths for {n} lines")
            cum = np.cumsum(lengths)
            pos = 0
            while pos < n:
                if open_lines == 0 and first is None:
                    first = p["first"] + pos
                before = int(cum[pos - 1]) if pos else 0
                j = n
                if block_bytes:
                    j = int(np.searchsorted(cum, before - open_bytes + block_bytes, side="left"))
                if block_lines:
                    j = min(j, pos + block_lines - open_lines - 1)
                if j >= n:   # the block goes on into the next part
                    open_lines += n - pos
                    open_bytes += int(cum[n - 1]) - before
                    break
                open_lines = open_bytes = 0
                pos = j + 1
        firsts.append(first)
    total = sum(p["lines"] for p in parts)
    spans: List[Optional[List[int]]] = []
    for k, a in enumerate(firsts):
        if a is None:
            spans.append(None)
            continue
        b = next((x for x in firsts[k + 1:] if x is not None), total)
        spans.append([a, b])
    return spans


def _varint(buf: bytes, pos: int, path: str) -> Tuple[int, int]:
    v = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise IndexFormatError(path, None, "damaged block index (varint)")
        c = buf[pos]
        pos += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, pos
        shift += 7


def _put_varint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


class _Piece:
    """A small segment: where its blocks lie, its index entries with their separators whole."""

    def __init__(self, path: str) -> None:
        self.path = path
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            f.seek(size - FOOTER)
            foot = f.read(FOOTER)
            io, il, self.lines, self.nblocks, icrc = struct.unpack_from("<QQQII", foot)
            self.version = foot[32:36]   # version, compression, zero
            if foot[40:] != MAGIC or io + il + FOOTER != size:
                raise IndexFormatError(path, None, "not a whole segment")
            f.seek(io)
            index = f.read(il)
        if zlib.crc32(index) != icrc:
            raise IndexFormatError(path, None, "block index CRC mismatch")
        self.blocks_end = io
        n, pos = _varint(index, 0, path)
        self.entries: List[List[Any]] = []   # [separator, disk, lines, crc bytes]
        sep = b""
        for _ in range(n):
            shared, pos = _varint(index, pos, path)
            unshared, pos = _varint(index, pos, path)
            sep = sep[:shared] + index[pos:pos + unshared]
            pos += unshared
            disk, pos = _varint(index, pos, path)
            nl, pos = _varint(index, pos, path)
            self.entries.append([sep, disk, nl, index[pos:pos + 4]])
            pos += 4
        fl, pos = _varint(index, pos, path)
        self.first = index[pos:pos + fl]
        pos += fl
        ll, pos = _varint(index, pos, path)
        self.last = index[pos:pos + ll]


def _separator(first: bytes, prev_last: bytes) -> bytes:
    """The writer's separator of a block starting with `first` after a block ending with `prev_last`."""
    head = len(first)
    sp = first.find(b" ")
    if sp >= 0:
        sp2 = first.find(b" ", sp + 1)
        if sp2 >= 0:
            head = sp2
    lcp = len(os.path.commonprefix([prev_last, first]))
    return first[:min(max(head, lcp + 1), len(first))]


def join_segments(pieces: Sequence[str], out: str, options: Dict[str, Any]) -> Dict[str, int]:
    """Write the segment `out` from the small segments `pieces` (in key order, each holding whole
    blocks of the one-machine segment); counts as write_segment returns them."""
    ps = [_Piece(p) for p in pieces]
    ps = [p for p in ps if p.nblocks]
    if not ps:
        return write_segment([], out, **options)
    index = bytearray(_put_varint(sum(p.nblocks for p in ps)))
    prev_sep = b""
    prev_last: Optional[bytes] = None
    nbytes = HEADER
    with AtomicOutput(out) as o:
        with open(ps[0].path, "rb") as f:
            o.write(f.read(HEADER))
        for p in ps:
            with open(p.path, "rb") as f:
                f.seek(HEADER)
                left = p.blocks_end - HEADER
                while left:
                    chunk = f.read(min(left, 4 << 20))
                    if not chunk:
                        raise IndexFormatError(p.path, None, "segment shorter than its index says")
                    o.write(chunk)
                    left -= len(chunk)
            nbytes += p.blocks_end - HEADER
            for i, (sep, disk, nl, crc) in enumerate(p.entries):
                if i == 0 and prev_last is not None:
                    sep = _separator(p.first, prev_last)
                shared = len(os.path.commonprefix([prev_sep, sep]))
                index += _put_varint(shared) + _put_varint(len(sep) - shared) + sep[shared:]
                index += _put_varint(disk) + _put_varint(nl) + crc
                prev_sep = sep
            prev_last = p.last
        first, last = ps[0].first, ps[-1].last
        index += _put_varint(len(first)) + first + _put_varint(len(last)) + last
        lines = sum(p.lines for p in ps)
        blocks = sum(p.nblocks for p in ps)
        foot = struct.pack("<QQQII", nbytes, len(index), lines, blocks, zlib.crc32(index))
        foot += ps[0].version
        foot += struct.pack("<I", zlib.crc32(foot)) + MAGIC
        o.write(bytes(index))
        o.write(foot)
    return {"lines": lines, "blocks": blocks, "bytes": nbytes + len(index) + FOOTER}
