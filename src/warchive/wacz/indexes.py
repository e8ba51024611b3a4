"""The indexes of a WACZ: plain ``index.cdxj``, or compressed ``index.cdx.gz`` found through ``index.idx``.

The compressed form is the one py-wacz and ReplayWeb.page use (cdxj-indexer's
"cdxj-gzip-1.0"), a ZipNum cluster whose summary is itself CDXJ::

    indexes/index.idx     !meta 0 {"format": "cdxj-gzip-1.0", "filename": "index.cdx.gz"}
                          <urlkey> <timestamp> {"offset": N, "length": N, "digest": "sha256:..."}
                          ...   one line per block: the first two fields of its first line
    indexes/index.cdx.gz  the blocks, gzip members back to back, each holding up to
                          ``LINES_PER_BLOCK`` sorted CDXJ lines (each ending with LF)

``write_compressed`` makes the pair with warchive.index.zipnum's writer (whose
pywb-style summary is rewritten as CDXJ, with each block's SHA-256);
``CompressedIndex`` is a source (``range(start, stop)``) reading a WACZ's
entries by byte range: a lookup reads the summary once (at most
``MAX_BLOCKS`` blocks, in order and apart, counted by warchive.wacz.indexlines'
limits), then only the blocks that can hold the range, each inflated to at most
``MAX_BLOCK`` bytes. Below ``COMPRESS_OVER`` lines the index is written plain (one entry a
reader loads whole).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import os
import tempfile
import zlib
from collections import OrderedDict
from typing import Iterable, Iterator, List, NamedTuple, Optional, Tuple

from ..errors import IndexFormatError
from ..index.zipnum import write_zipnum
from .indexlines import FORMAT, IndexBudget, IndexPart, entry_lines, summary_data, summary_json
from .zipread import Entry, ZipDirectory

LINES_PER_BLOCK = 1024        # py-wacz's block size (cdxj-indexer: 300)
COMPRESS_OVER = 10_000        # lines; the spec sets no number: a plain CDXJ of this size is ~3 MB
MAX_BLOCKS = 1 << 17          # blocks of a summary held: 16 Mi lines (indexlines' limit) in blocks of 128
MAX_BLOCK = 16 << 20          # a block inflated: 1,024 lines of 16 KiB, forty times a real block


class Block(NamedTuple):
    key: bytes
    offset: int
    length: int
    digest: Optional[str]


def write_compressed(lines: Iterable[bytes], tmpdir: str, cdx_name: str = "index.cdx.gz",
                     lines_per_block: int = LINES_PER_BLOCK) -> Tuple[str, bytes]:
    """Sorted CDXJ ``lines`` as a compressed index in ``tmpdir``: (path of the blocks file,
    the bytes of index.idx)."""
    cluster = write_zipnum(lines, os.path.join(tmpdir, "index"), lines_per_block, compressor="zlib")
    part = cluster.parts[0] if cluster.parts else os.path.join(tmpdir, "empty.cdx.gz")
    if not cluster.parts:
        open(part, "wb").close()
    out = [b"!meta 0 " + json.dumps({"format": FORMAT, "filename": cdx_name}).encode() + b"\n"]
    with open(part, "rb") as data, open(cluster.idx, "rb") as idx:
        for raw in idx:
            key, _, off, length, _ = raw.rstrip(b"\n").split(b"\t")
            data.seek(int(off))
            digest = "sha256:" + hashlib.sha256(data.read(int(length))).hexdigest()
            out.append(key + b" " + json.dumps({"offset": int(off), "length": int(length),
                                                  "digest": digest}).encode() + b"\n")
    return part, b"".join(out)


class CompressedIndex:
    """A cdxj-gzip-1.0 index: the summary ``idx_name`` read whole, its blocks by range from the
    stored entry it names (beside it); each block's digest checked when it is read."""

    def __init__(self, zd: ZipDirectory, idx_name: str, cache_blocks: int = 8,
                 budget: Optional[IndexBudget] = None) -> None:
        self.zd = zd
        self.idx_name = idx_name
        self.blocks: List[Block] = []
        budget = budget if budget is not None else IndexBudget(zd.path)
        data_name = summary_data(zd, idx_name, budget)
        for n, raw in enumerate(entry_lines(zd, IndexPart(idx_name, idx_name, False), budget), 1):
            if raw.startswith(b"!meta") or not raw.strip():
                continue
            if len(self.blocks) == MAX_BLOCKS:
                raise IndexFormatError(zd.path, None, f"{idx_name}: more than {MAX_BLOCKS} blocks")
            head, brace, rest = raw.partition(b"{")
            info = summary_json(brace + rest, zd.path, idx_name, n)
            try:
                self.blocks.append(Block(head.strip(), int(info["offset"]), int(info["length"]), info.get("digest")))
            except (KeyError, TypeError, ValueError):
                raise IndexFormatError(zd.path, None, f"{idx_name} line {n}: no offset and length") from None
        self.data: Entry = zd.stored(data_name)
        end = 0
        for b in self.blocks:   # (so that no byte of the blocks file is inflated twice)
            if b.offset < end or b.length <= 0 or b.offset + b.length > self.data.size:
                raise IndexFormatError(zd.path, None, f"{idx_name}: the block at byte {b.offset} ({b.length} bytes) "
                                       f"overlaps the one before it or lies outside {data_name}")
            end = b.offset + b.length
        self.keys = [b.key for b in self.blocks]
        self._cache: "OrderedDict[int, bytes]" = OrderedDict()
        self.cache_blocks = cache_blocks

    def _block(self, i: int) -> bytes:
        raw = self._cache.get(i)
        if raw is not None:
            return raw
        b = self.blocks[i]
        comp = self.zd.read_range(self.data, b.offset, b.length)
        if b.digest and b.digest.startswith("sha256:") and hashlib.sha256(comp).hexdigest() != b.digest[7:]:
            raise IndexFormatError(self.zd.path, i + 1, f"{self.data.name}: block at byte {b.offset} does "
                                   "not match its digest in the summary")
        try:
            d = zlib.decompressobj(31)
            raw = d.decompress(comp, MAX_BLOCK + 1)
        except zlib.error as e:
            raise IndexFormatError(self.zd.path, i + 1, f"{self.data.name}: block at byte {b.offset} is "
                                   f"not a gzip member: {e}") from None
        if len(raw) > MAX_BLOCK:
            raise IndexFormatError(self.zd.path, i + 1, f"{self.data.name}: block at byte {b.offset} inflates "
                                   f"to more than {MAX_BLOCK} bytes")
        self._cache[i] = raw
        while len(self._cache) > self.cache_blocks:
            self._cache.popitem(last=False)
        return raw

    def range(self, start: bytes, stop: Optional[bytes]) -> Iterator[bytes]:
        i = max(0, bisect.bisect_left(self.keys, start) - 1)
        for k in range(i, len(self.blocks)):
            if stop is not None and self.keys[k] >= stop:
                return
            for line in self._block(k).split(b"\n"):
                if not line or line < start:
                    continue
                if stop is not None and line >= stop:
                    return
                yield line

    def close(self) -> None:
        self._cache.clear()


def spool_dir() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="warchive-wacz-")


__all__ = ["COMPRESS_OVER", "CompressedIndex", "LINES_PER_BLOCK", "MAX_BLOCK", "MAX_BLOCKS", "write_compressed"]
