"""ZipNum clusters: sorted CDX(J) lines in gzip blocks, found through a plain-text summary.

The layout pywb reads (``ZipNumIndexSource``) and Common Crawl publishes
(``cluster.idx`` beside ``cdx-00000.gz`` ...), written by ``write_zipnum`` and
read by ``ZipNumIndex``. docs/format.md, section "ZipNum clusters", is the
specification; in short::

    cluster.idx    one line per block, sorted:
                   <urlkey> <timestamp>\\t<part>\\t<offset>\\t<length>\\t<block number>\\n
                   (the first two space-separated fields of the block's first
                   line; byte offset and length of the block in the part;
                   block numbers count from 1 across all parts)
    cluster.loc    <part>\\t<path>[\\t<path>...]\\n   (paths relative to the .loc;
                   optional: without it, parts are files beside the .idx)
    cdx-00000.gz   the blocks, each one gzip member holding up to N lines
                   (3,000 by default), each line ending with LF

    +-----------------+-----------------+-----+    part file: gzip members
    | member: lines   | member: lines   | ... |    back to back; the .idx
    | 1 .. N          | N+1 .. 2N       |     |    gives each one's offset
    +-----------------+-----------------+-----+    and length

A range query binary-searches the .idx (mmap'd, never loaded whole) and
inflates only the blocks that can hold lines of the range. This module must
not interpret lines beyond their first two fields: the query engine does.
"""

from __future__ import annotations

import mmap
import operator
import os
import tempfile
import threading
import zlib
from collections import OrderedDict, deque
from concurrent.futures import ThreadPoolExecutor
from typing import (Any, BinaryIO, Callable, Dict, Iterable, Iterator, List, NamedTuple, Optional, Tuple,
                    Union)

from isal import isal_zlib

from ..boundedlines import LineGuard
from ..durable import AtomicOutput, fsync_dir
from ..errors import IndexFormatError, UnsortedInputError
from .sort import open_input

PathLike = Union[str, os.PathLike[str]]

DEFAULT_LINES_PER_BLOCK = 3000
DEFAULT_COMPRESSLEVEL = 6        # what Common Crawl's and the Internet Archive's writers use
HEADER_PREFIX = b" CDX "

__all__ = ["Block", "ZipNumIndex", "ZipNumCluster", "write_zipnum", "summary_key", "cluster_paths",
           "block_compressor", "DEFAULT_LINES_PER_BLOCK"]


class Block(NamedTuple):
    """One line of the summary: a gzip block of a part file."""

    key: bytes      # "<urlkey> <timestamp>" of the block's first line
    part: str       # part name, resolved through the .loc
    offset: int     # byte offset of the gzip member in the part
    length: int     # its compressed length
    number: int     # the 5th column (1-based block number across the cluster); 0 when absent
    line: bytes     # the summary line as it stands in the .idx (no LF): pywb's showPagedIndex output


def summary_key(line: bytes) -> bytes:
    """The summary key of a block starting with `line`: its first two space-separated fields."""
    sp = line.find(b" ")
    if sp < 0:
        return line
    sp2 = line.find(b" ", sp + 1)
    return line if sp2 < 0 else line[:sp2]


# --- reading -------------------------------------------------------------------

def _first_line_at_least(raw: bytes, key: bytes, lo: int = 0) -> int:
    """Offset of the first line of `raw` (sorted, LF-terminated lines) that is >= key, from lo."""
    hi = len(raw)
    while lo < hi:
        mid = (lo + hi) // 2
        s = raw.rfind(b"\n", lo, mid) + 1 if mid > lo else lo
        if s < lo:
            s = lo
        e = raw.find(b"\n", s)
        if e < 0:
            e = len(raw)
        if raw[s:e] < key:
            lo = e + 1
        else:
            hi = s
    return min(lo, len(raw))


class ZipNumIndex:
    """A ZipNum cluster opened by its summary (``.idx``; pywb also accepts ``.summary``).

    ``range(start, stop)`` yields the lines (bytes, no LF) with start <= line < stop
    bytewise, in order; ``blocks(start, stop)`` the summary entries whose blocks can
    hold such lines. ``loc`` is the .loc file (default: the .idx name with .loc when
    it exists; else parts are looked up beside the .idx, as Common Crawl lays them out).
    The last `cache_blocks` blocks inflated are kept (about 1 MB each at 3,000 lines).
    """

    def __init__(self, idx_path: PathLike, loc: Optional[PathLike] = None, *, cache_blocks: int = 8) -> None:
        self.path = os.fspath(idx_path)
        self._f = open(self.path, "rb")  # noqa: SIM115 - closed by close()
        self._size = os.fstat(self._f.fileno()).st_size
        self._mm: Optional[mmap.mmap] = (
            mmap.mmap(self._f.fileno(), 0, access=mmap.ACCESS_READ) if self._size else None)
        self._dir = os.path.dirname(os.path.abspath(self.path))
        self.loc_path: Optional[str] = None
        self._loc: Optional[Dict[str, List[str]]] = None
        if loc is not None:
            self.loc_path = os.fspath(loc)
        else:
            guess = os.path.splitext(self.path)[0] + ".loc"
            if os.path.exists(guess):
                self.loc_path = guess
        if self.loc_path is not None:
            self._loc = self._read_loc(self.loc_path)
        self._fds: Dict[str, Tuple[int, int]] = {}   # part path -> (fd, size)
        self._lock = threading.Lock()
        self._z = isal_zlib
        self.cache_blocks = cache_blocks
        self._cache: "OrderedDict[Tuple[str, int, int], bytes]" = OrderedDict()

    # lifetime
    def close(self) -> None:
        if self._mm is not None:
            self._mm.close()
            self._mm = None
        self._f.close()
        with self._lock:
            for fd, _ in self._fds.values():
                os.close(fd)
            self._fds = {}

    def __enter__(self) -> "ZipNumIndex":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _map(self, check: bool = False) -> mmap.mmap:
        if self._mm is None:
            raise ValueError("ZipNumIndex is closed" if self._f.closed else "empty summary")
        if check and self._mm.size() < self._size:   # shrunk under its map: reading there is SIGBUS
            raise IndexFormatError(self.path, None, f"the summary was cut short while open ({self._mm.size()} "
                                   f"bytes now, {self._size} when opened): restore or rebuild the cluster")
        return self._mm

    # .loc
    @staticmethod
    def _read_loc(path: str) -> Dict[str, List[str]]:
        base = os.path.dirname(os.path.abspath(path))
        out: Dict[str, List[str]] = {}
        with open(path, "rb") as f:
            for n, raw in enumerate(f, 1):
                line = raw.rstrip(b"\r\n")
                if not line.strip():
                    continue
                fields = line.split(b"\t")
                if len(fields) < 2 or not fields[0]:
                    raise IndexFormatError(path, None, f"line {n} is not '<part>\\t<path>': {line[:200]!r}")
                try:
                    name = fields[0].decode()
                    paths = [p.decode() for p in fields[1:] if p]
                except UnicodeDecodeError:
                    raise IndexFormatError(path, None, f"line {n} is not UTF-8") from None
                out[name] = [p if "://" in p else os.path.join(base, p) for p in paths]
        return out

    def part_paths(self, part: str, number: Optional[int] = None) -> List[str]:
        """Where part `part` may be, in the order tried."""
        if self._loc is None:
            return [os.path.join(self._dir, part)]
        try:
            return self._loc[part]
        except KeyError:
            raise IndexFormatError(self.loc_path, number,
                                   f"part {part!r} named by {self.path} is not in the .loc file") from None

    def _open_part(self, b: Block) -> Tuple[str, int, int]:
        paths = self.part_paths(b.part, b.number)
        with self._lock:
            for p in paths:
                got = self._fds.get(p)
                if got is not None:
                    return p, got[0], got[1]
            for p in paths:
                if "://" in p:
                    continue
                try:
                    fd = os.open(p, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
                except FileNotFoundError:
                    continue
                size = os.fstat(fd).st_size
                self._fds[p] = (fd, size)
                return p, fd, size
        if any("://" in p for p in paths):
            raise IndexFormatError(paths[0], b.number, "remote part locations are not supported "
                                   "(copy the parts next to the .idx, or list local paths in the .loc)")
        raise IndexFormatError(paths[0], b.number, f"part file of block {b.number} is missing "
                               f"(named by {self.loc_path or self.path})")

    # the summary
    def _line_bounds(self, pos: int) -> Tuple[int, int]:
        mm = self._map()
        s = mm.rfind(b"\n", 0, pos) + 1
        e = mm.find(b"\n", s)
        return s, (self._size if e < 0 else e)

    def _key_at(self, s: int, e: int) -> bytes:
        mm = self._map()
        t = mm.find(b"\t", s, e)
        if t < 0:
            raise IndexFormatError(self.path, None, f"summary line at byte {s} has no tab: "
                                   f"{mm[s:min(e, s + 200)]!r}")
        return mm[s:t]

    def _first_at_least(self, key: bytes) -> int:
        """Byte offset of the first summary line whose key >= key (the size if none)."""
        if self._mm is None:
            return 0
        lo, hi = 0, self._size
        while lo < hi:
            s, e = self._line_bounds((lo + hi) // 2)
            if s < lo:  # pragma: no cover - lo always starts a line
                s = lo
            if self._key_at(s, e) < key:
                lo = e + 1
            else:
                hi = s
        return min(lo, self._size)

    def _prev_line(self, s: int) -> Optional[Tuple[int, int]]:
        if s <= 0:
            return None
        return self._line_bounds(s - 1)

    def _block(self, s: int, e: int) -> Block:
        line = self._map()[s:e]
        if line.endswith(b"\r"):
            line = line[:-1]
        fields = line.split(b"\t")
        number = 0
        if len(fields) >= 5:
            try:
                number = int(fields[4])
            except ValueError:
                raise IndexFormatError(self.path, None, f"summary line at byte {s}: block number "
                                       f"{fields[4][:40]!r} is not a number") from None
        if len(fields) < 4:
            raise IndexFormatError(self.path, number or None, f"summary line at byte {s} has {len(fields)} "
                                   f"fields, needs 4 or 5 (key, part, offset, length, number): {line[:200]!r}")
        try:
            offset, length = int(fields[2]), int(fields[3])
        except ValueError:
            raise IndexFormatError(self.path, number or None, f"summary line at byte {s}: offset/length "
                                   f"{fields[2][:40]!r}/{fields[3][:40]!r} are not numbers") from None
        if offset < 0 or length <= 0:
            raise IndexFormatError(self.path, number or None, f"summary line at byte {s}: "
                                   f"offset {offset} / length {length} out of range")
        try:
            part = fields[1].decode()
        except UnicodeDecodeError:
            raise IndexFormatError(self.path, number or None, f"summary line at byte {s}: part name "
                                   "is not UTF-8") from None
        return Block(fields[0], part, offset, length, number, line)

    def _span(self, start: bytes, stop: Optional[bytes]) -> Tuple[int, int]:
        """Byte range [a, b) of the summary lines whose blocks can hold lines in [start, stop)."""
        if self._mm is None:
            if self._f.closed:
                raise ValueError("ZipNumIndex is closed")
            return 0, 0
        self._map(check=True)   # once a search, and before each block
        a = self._first_at_least(start)
        # a block whose key is a proper prefix of start may begin with lines >= start
        while True:
            prev = self._prev_line(a)
            if prev is None:
                break
            k = self._key_at(*prev)
            if not (k < start and start.startswith(k)):
                break
            a = prev[0]
        prev = self._prev_line(a)  # the block before holds lines up to a's first line
        if prev is not None:
            a = prev[0]
        b = self._size if stop is None else self._first_at_least(stop)
        return a, max(a, b)

    def _iter_blocks(self, a: int, b: int) -> Iterator[Block]:
        if a >= b:
            return
        mm = self._map()
        pos = a
        while pos < b:
            mm = self._map(check=True)
            e = mm.find(b"\n", pos, b)
            if e < 0:
                e = b
            if e > pos and mm[pos:e].strip():
                yield self._block(pos, e)
            pos = e + 1

    def blocks(self, start: bytes = b"", stop: Optional[bytes] = None) -> Iterator[Block]:
        """The summary entries whose blocks can hold lines in [start, stop), in order.

        As pywb's paged queries count them: the block before the first key >= start is
        included (it may end with such lines); a range past the last key gives the last
        block."""
        a, b = self._span(start, stop)
        return self._iter_blocks(a, b)

    @property
    def num_blocks(self) -> int:
        """The number of blocks (summary lines): counted, as the .idx may lack numbers."""
        if self._mm is None:
            return 0
        mm = self._map(check=True)
        n, pos = 0, 0
        while pos < self._size:
            e = mm.find(b"\n", pos)
            if e < 0:
                e = self._size
            if mm[pos:e].strip():
                n += 1
            pos = e + 1
        return n

    # the blocks
    def _inflate(self, b: Block) -> bytes:
        """The inflated bytes of block `b`, checked: one whole gzip member inside its part whose
        first line starts with the block's key. The last few blocks read are kept."""
        path, fd, size = self._open_part(b)
        cache_key = (path, b.offset, b.length)
        with self._lock:
            raw = self._cache.get(cache_key)
            if raw is not None:
                self._cache.move_to_end(cache_key)
                return raw
        if b.offset + b.length > size:
            raise IndexFormatError(path, b.number, f"block at byte {b.offset} (+{b.length}) runs past the "
                                   f"end of the part ({size} bytes): truncated part or wrong .idx")
        data = os.pread(fd, b.length, b.offset)
        if len(data) != b.length:
            raise IndexFormatError(path, b.number, f"short read of the block at byte {b.offset}")
        z = self._z
        try:
            d = z.decompressobj(31)
            raw = d.decompress(data)
            raw += d.flush()
            ended = d.eof
            extra = d.unused_data
        except Exception as e:  # zlib.error / isal_zlib.error
            raise IndexFormatError(path, b.number, f"block at byte {b.offset} is not a valid gzip "
                                   f"member: {e}") from None
        if not ended:
            raise IndexFormatError(path, b.number, f"block at byte {b.offset} ends inside its gzip "
                                   f"member (length {b.length} too short, or the part is damaged)")
        if extra:
            raise IndexFormatError(path, b.number, f"block at byte {b.offset}: {len(extra)} bytes follow "
                                   f"its gzip member within its length {b.length}")
        if raw and not raw.startswith(b.key):
            first = raw[:raw.find(b"\n")] if b"\n" in raw[:200] else raw[:100]
            raise IndexFormatError(path, b.number, f"block at byte {b.offset} starts with "
                                   f"{first[:100]!r}, not with its summary key {b.key[:100]!r} "
                                   "(the .idx does not describe this part)")
        with self._lock:
            self._cache[cache_key] = raw
            while len(self._cache) > self.cache_blocks:
                self._cache.popitem(last=False)
        return raw

    def read_block(self, b: Block) -> List[bytes]:
        """The lines of block `b` (bytes, no LF), checked as ``range`` checks them."""
        lines = self._inflate(b).split(b"\n")
        if lines and not lines[-1]:
            lines.pop()
        return lines

    def range(self, start: bytes, stop: Optional[bytes] = None) -> Iterator[bytes]:
        """Lines with start <= line < stop (stop None: to the end), bytewise, in order."""
        a, b = self._span(start, stop)
        for blk in self._iter_blocks(a, b):
            raw = self._inflate(blk)
            lo = _first_line_at_least(raw, start)
            hi = len(raw) if stop is None else _first_line_at_least(raw, stop, lo)
            if hi > lo:
                lines = raw[lo:hi].split(b"\n")
                if not lines[-1]:
                    lines.pop()
                yield from lines
            if hi < len(raw):
                return

    def __iter__(self) -> Iterator[bytes]:
        return self.range(b"", None)

    def verify(self) -> int:
        """Read everything and check it: summary fields and order, every block, line order
        within and across blocks. Returns the number of lines; raises IndexFormatError."""
        prev_key: Optional[bytes] = None
        prev_line: Optional[bytes] = None
        prev_number = 0
        count = 0
        for blk in (self._iter_blocks(0, self._size) if self._mm is not None else iter(())):
            if prev_key is not None and blk.key < prev_key:
                raise IndexFormatError(self.path, blk.number, f"summary key {blk.key[:100]!r} sorts before "
                                       f"the key above it {prev_key[:100]!r}")
            if blk.number and prev_number and blk.number != prev_number + 1:
                raise IndexFormatError(self.path, blk.number, f"block numbers jump from {prev_number} "
                                       f"to {blk.number}")
            lines = self.read_block(blk)
            for i, line in enumerate(lines):
                if prev_line is not None and line < prev_line:
                    raise IndexFormatError(self.part_paths(blk.part)[0], blk.number,
                                           f"line {i + 1} of the block is out of order: {line[:100]!r}")
                prev_line = line
            count += len(lines)
            prev_key, prev_number = blk.key, blk.number
        return count

    def count_lines(self) -> int:
        """The number of lines (inflates every block: as costly as reading the whole index)."""
        if self._mm is None:
            return 0
        return sum(len(self.read_block(b)) for b in self._iter_blocks(0, self._size))


# --- writing -------------------------------------------------------------------

class ZipNumCluster(NamedTuple):
    """What write_zipnum wrote."""

    idx: str
    loc: str
    parts: List[str]
    lines: int
    blocks: int


def cluster_paths(out: PathLike) -> Tuple[str, str, str, str]:
    """(directory, idx path, loc path, part name pattern) for an output directory or prefix."""
    out_s = os.fspath(out)
    if os.path.isdir(out_s) or out_s.endswith(os.sep):
        d = out_s.rstrip(os.sep) or os.sep
        return d, os.path.join(d, "cluster.idx"), os.path.join(d, "cluster.loc"), "cdx-{:05d}.gz"
    if out_s.endswith((".idx", ".summary")):
        out_s = os.path.splitext(out_s)[0]
    d = os.path.dirname(os.path.abspath(out_s))
    base = os.path.basename(out_s)
    return d, out_s + ".idx", out_s + ".loc", base + "-{:05d}.cdx.gz"


Batch = Tuple[List[bytes], bool]   # lines without LF; whether some may be empty or headers


def _iter_source(source: Union[PathLike, BinaryIO, Iterable[bytes]]) -> Tuple[str, Iterator[Batch]]:
    """(name for messages, batches of lines)."""
    if isinstance(source, (str, os.PathLike)):
        name = os.fspath(source)

        def gen() -> Iterator[Batch]:
            with open_input(name) as f:
                yield from _split_stream(f, name)
        return name, gen()
    if hasattr(source, "readinto") or hasattr(source, "read"):
        return getattr(source, "name", "<stream>"), _split_stream(source)  # type: ignore[arg-type]

    def batches() -> Iterator[Batch]:
        batch: List[bytes] = []
        for line in source:
            batch.append(line[:-1] if line.endswith(b"\n") else line)
            if len(batch) == 10000:
                yield batch, True
                batch = []
        if batch:
            yield batch, True
    return "<lines>", batches()


def _split_stream(f: BinaryIO, name: Optional[str] = None) -> Iterator[Batch]:
    rest, guard = b"", LineGuard(name or str(getattr(f, "name", "<stream>")))
    while True:
        chunk = f.read(4 << 20)
        if not chunk:
            break
        guard.check(chunk, 0, len(chunk))   # a line past MAX_LINE: refused before more of it is kept
        data = rest + chunk
        special = data.startswith((b"\n", HEADER_PREFIX)) or b"\n\n" in data or b"\n" + HEADER_PREFIX in data
        lines = data.split(b"\n")
        rest = lines.pop()
        yield lines, special
    if rest:
        yield [rest], rest.startswith(HEADER_PREFIX)


def _keep(line: bytes) -> bool:
    return bool(line) and not line.startswith(HEADER_PREFIX)


def _blocks_of(batches: Iterator[Batch], n: int, name: str) -> Iterator[List[bytes]]:
    """Groups of n index lines, header and empty lines left out, order checked.

    Batches are checked whole (the comparisons run in C); the slow walk that finds the
    line number runs only when a batch is out of order."""
    pending: List[bytes] = []
    prev: Optional[bytes] = None
    seen = 0   # input lines before this batch
    for raw, special in batches:
        batch = [x for x in raw if _keep(x)] if special else raw
        if batch and ((prev is not None and batch[0] < prev)
                      or not all(map(operator.le, batch[:-1], batch[1:]))):
            last = prev if prev is not None else b""
            for i, line in enumerate(raw):
                if _keep(line):
                    if line < last:
                        raise UnsortedInputError(name, seen + i + 1, line, last)
                    last = line
        seen += len(raw)
        if not batch:
            continue
        prev = batch[-1]
        pending.extend(batch)
        k = 0
        while len(pending) - k >= n:
            yield pending[k:k + n]
            k += n
        if k:
            del pending[:k]
    if pending:
        yield pending


def block_compressor(name: str, level: Optional[int]) -> Callable[[List[bytes]], bytes]:
    """One gzip member per block. "zlib" at level 6 makes Common Crawl's bytes (header with
    mtime 0, as zlib writes it); "isal" (ISA-L, levels 0-3, default 2) is about 10x faster
    for about 9% more bytes."""
    if name == "zlib":
        lv = DEFAULT_COMPRESSLEVEL if level is None else level
        return lambda lines: zlib.compress(b"\n".join(lines) + b"\n", lv, 31)
    if name == "isal":
        lv = 2 if level is None else level
        return lambda lines: isal_zlib.compress(b"\n".join(lines) + b"\n", lv, 31)
    raise ValueError(f"compressor must be 'zlib' or 'isal', not {name!r}")


def write_zipnum(source: Union[PathLike, BinaryIO, Iterable[bytes]], out: PathLike,
                 lines_per_block: int = DEFAULT_LINES_PER_BLOCK, parts: int = 1, *,
                 compressor: str = "zlib", compresslevel: Optional[int] = None,
                 threads: Optional[int] = None) -> ZipNumCluster:
    """Write sorted lines as a ZipNum cluster pywb and Common Crawl tools can read.

    `source`: a sorted CDX/CDXJ file (plain, gzip or zstd), a binary stream, or an
    iterable of lines (with or without LF). Header (`` CDX ...``) and empty lines are
    left out; an out-of-order line raises UnsortedInputError and nothing is published.
    `out`: a directory (cluster.idx, cluster.loc, cdx-00000.gz ... inside, Common Crawl's
    names) or a prefix P (P.idx, P.loc, P-00000.cdx.gz ...). With `parts` > 1 the lines
    are cut, at block boundaries, into parts of about equal uncompressed size (the
    source is read twice, or spooled to a temporary file when it is a stream).
    `compressor` "zlib" (level 6 by default: Common Crawl's bytes) or "isal" (ISA-L,
    level 2 by default: about 10x faster, about 9% bigger).
    Every file is written under a temporary name and renamed when all are complete,
    the .idx last (an older one removed first): a reader never finds a summary whose parts are
    not there, nor, after a kill, an old summary pointing into new parts."""
    if lines_per_block < 1:
        raise ValueError("lines_per_block must be >= 1")
    if parts < 1:
        raise ValueError("parts must be >= 1")
    spool = None
    total = 0
    if parts > 1:
        spool, total, source = _measure(source)
    name, lines = _iter_source(source)
    threads = threads or (2 if (os.cpu_count() or 1) >= 2 else 1)
    compress = block_compressor(compressor, compresslevel)
    writer = ClusterWriter(out, parts, total, name)
    try:
        for block, data in _compressed(_blocks_of(lines, lines_per_block, name), compress, threads):
            writer.block(block[0], len(data), sum(len(x) + 1 for x in block), len(block)).write(data)
        return writer.commit()
    except BaseException:
        writer.abort()
        raise
    finally:
        if spool is not None:
            spool.close()


class ClusterWriter:
    """The files of a ZipNum cluster written block by block, as write_zipnum lays them out:
    ``parts`` part files of about equal uncompressed size (of ``total`` bytes; cut at block
    boundaries), each block's summary line (its first two fields as key, its whole first line
    where that would sort before the key above; offsets in its part; numbers from 1), and the
    .loc; published by ``commit`` (an older .idx removed, parts, the .loc, the .idx pointing into them).
    warchive.distributed assembles clusters whose blocks were compressed elsewhere with it."""

    def __init__(self, out: PathLike, parts: int = 1, total: int = 0, name: Optional[str] = None) -> None:
        self.dir, self.idx_path, self.loc_path, self.pattern = cluster_paths(out)
        os.makedirs(self.dir, exist_ok=True)
        self.parts, self.total, self.name = parts, total, name or self.idx_path
        self.idx = AtomicOutput(self.idx_path)
        self.outs: List[AtomicOutput] = [self.idx]
        self.part_names: List[str] = []
        self.part: Optional[AtomicOutput] = None
        self.offset = self.done_bytes = self.nlines = self.nblocks = 0
        self.prev_key = b""

    def block(self, first: bytes, size: int, ubytes: int, nlines: int) -> AtomicOutput:
        """Enter a block of ``nlines`` lines (``ubytes`` uncompressed, with their LFs) whose
        first line is ``first`` and whose gzip member is ``size`` bytes: the part file the
        caller writes those bytes to, next."""
        if self.part is None or (self.parts > 1 and len(self.part_names) < self.parts
                                 and self.done_bytes >= self.total * len(self.part_names) // self.parts):
            part_name = self.pattern.format(len(self.part_names))
            self.part = AtomicOutput(os.path.join(self.dir, part_name))
            self.outs.append(self.part)
            self.part_names.append(part_name)
            self.offset = 0
        key = summary_key(first)
        if key < self.prev_key:
            # only when the second field holds bytes below space: "a b\x01 x" then "a b y"
            # would give keys "a b\x01", "a b". The whole line keeps the summary sorted.
            key = first
        self.prev_key = key
        if b"\t" in key:
            raise IndexFormatError(self.name, None, f"the key of line {first[:100]!r} holds a tab: "
                                   "ZipNum summaries are tab-separated")
        self.nblocks += 1
        self.nlines += nlines
        self.done_bytes += ubytes
        self.idx.write(b"%s\t%s\t%d\t%d\t%d\n" % (key, self.part_names[-1].encode(), self.offset, size,
                                                 self.nblocks))
        self.offset += size
        return self.part

    def commit(self) -> ZipNumCluster:
        loc = AtomicOutput(self.loc_path)
        self.outs.append(loc)
        loc.write(b"".join(f"{p}\t{p}\n".encode() for p in self.part_names))
        if os.path.lexists(self.idx_path):   # an older cluster: a kill then leaves none, not a mix
            os.unlink(self.idx_path)
            fsync_dir(self.dir, strict=False)
        for o in self.outs[1:]:
            o.commit()
        self.idx.commit()
        return ZipNumCluster(self.idx_path, self.loc_path, [os.path.join(self.dir, p) for p in self.part_names],
                             self.nlines, self.nblocks)

    def abort(self) -> None:
        for o in self.outs:
            o.abort()


def _compressed(blocks: Iterator[List[bytes]], compress: Callable[[List[bytes]], bytes],
                threads: int) -> Iterator[Tuple[List[bytes], bytes]]:
    """(block, its gzip member), in order; zlib and ISA-L release the GIL, so `threads` compress at once."""
    if threads <= 1:
        for b in blocks:
            yield b, compress(b)
        return
    with ThreadPoolExecutor(threads, thread_name_prefix="warchive-zipnum") as ex:
        pending: deque = deque()
        for b in blocks:
            pending.append((b, ex.submit(compress, b)))
            if len(pending) > 2 * threads:
                blk, fut = pending.popleft()
                yield blk, fut.result()
        while pending:
            blk, fut = pending.popleft()
            yield blk, fut.result()


def _measure(source: Union[PathLike, BinaryIO, Iterable[bytes]]) -> Tuple[Optional[BinaryIO], int, Any]:
    """(spool file or None, total uncompressed bytes, the source to read again)."""
    if isinstance(source, (str, os.PathLike)):
        total = 0
        with open_input(source) as f:
            while True:
                chunk = f.read(4 << 20)
                if not chunk:
                    break
                total += len(chunk)
        return None, total, source
    spool = tempfile.TemporaryFile()
    name, batches = _iter_source(source)
    total = 0
    for batch, _ in batches:
        data = b"\n".join(batch) + b"\n"
        spool.write(data)
        total += len(data)
    spool.seek(0)
    return spool, total, spool
