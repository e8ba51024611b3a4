"""Sort and merge CDX/CDXJ files bytewise (as ``LC_ALL=C sort -u``) with bounded memory.

``sort_files`` is an external merge sort: inputs (plain, gzip or zstd, told
by their first bytes) are read into one buffer of about ¾ of ``mem_limit``;
each full buffer is sorted in C (ext/line_sort.pyx, two threads) and written
as a run to an unlinked temporary file; runs are merged ``fan_in`` at a time
as they pile up, so open files and merge buffers stay bounded whatever the
input size, and a killed sort leaves no temporary file behind. ``merge_files``
merges inputs that are already sorted and stops at the first line out of
order (``UnsortedInputError``: file, line number, the two lines) rather than
writing a wrong result.

Lines: the bytes before each LF; a last line without LF is a line; empty
lines are dropped (an index line is never empty, and ``sort -u`` would keep
one at the top); identical lines are written once, as cdxj-indexer
``--sort`` does; every other byte (CR, tab, NUL, non-UTF-8) is kept and
compared as an unsigned byte. CDX-11 header lines (`` CDX N b a ...``) are
ordinary lines: they sort to the top, once, where ``sort -u`` puts them. An
input line longer than ``boundedlines.MAX_LINE`` is a ``LineTooLongError``
(file, line number, byte), met as the input is read: inputs are read ``READ_PIECE`` at
a time through a ``LineGuard``, so no more of that line is ever held.
Output to a path is published by atomic rename (written as NAME.*.tmp,
fsynced, renamed; removed on error).

``LineSorter`` is the in-process form used by ``warchive index --sort``.
This module decides run sizes and temporary files; it must not parse lines.
"""

from __future__ import annotations

import io
import mmap
import os
import queue
import sys
import threading
from typing import Any, BinaryIO, Callable, Iterable, List, Optional, Protocol, Sequence, Union, cast

import zstandard
from isal import igzip_threaded

from .._ext import line_sort as _k
from ..boundedlines import GuardedReader, LineGuard
from ..durable import AtomicOutput, Publisher, temp_file
from ..errors import IndexFormatError

PathLike = Union[str, os.PathLike[str]]
Write = Callable[[bytes], object]

DEFAULT_MEM_LIMIT = 32 << 20     # LineSorter (index --sort)
SORT_MEM_LIMIT = 256 << 20       # sort_files / merge_files
DEFAULT_FAN_IN = 64              # runs merged at once
MIN_MEM_LIMIT = 64 << 10
OUT_BUF = 4 << 20
READ_PIECE = 4 << 20             # an input's bytes read at once (and checked) into the sort buffer

__all__ = ["sort_files", "merge_files", "Readable", "SortStats", "LineSorter", "sort_chunks",
           "DEFAULT_MEM_LIMIT", "SORT_MEM_LIMIT", "DEFAULT_FAN_IN"]


class SortStats:
    """What a sort or merge did: lines read (non-empty) and written, runs, merge passes."""

    __slots__ = ("inputs", "lines_in", "lines_out", "runs", "passes")

    def __init__(self) -> None:
        self.inputs = 0
        self.lines_in = 0
        self.lines_out = 0
        self.runs = 0     # sorted runs written to temporary files (0: sorted in memory)
        self.passes = 0   # merge passes over the data (0 or 1 for most inputs)

    def __repr__(self) -> str:
        return ("SortStats(" + ", ".join(f"{k}={getattr(self, k)}" for k in self.__slots__) + ")")


def _threads() -> int:
    return 2 if (os.cpu_count() or 1) >= 2 else 1


# --- inputs and output -------------------------------------------------------

def open_input(path: PathLike) -> BinaryIO:
    """A binary reader of the lines in `path` ("-": stdin): gzip and zstd are told by their
    first bytes and decompressed (several members or frames read as one stream)."""
    if os.fspath(path) == "-":
        raw: BinaryIO = sys.stdin.buffer
    else:
        raw = open(path, "rb", buffering=0)
    try:
        if raw.seekable():
            magic = raw.read(4)
            raw.seek(0)
        else:
            buffered = io.BufferedReader(cast(io.RawIOBase, raw), 1 << 20)
            magic = buffered.peek(4)[:4]
            raw = cast("BinaryIO", buffered)
        if magic[:2] == b"\x1f\x8b":
            # inflated in a thread of its own (ISA-L releases the GIL): it overlaps the sort
            if raw is sys.stdin.buffer or not isinstance(raw, io.FileIO):
                return cast("BinaryIO", _Decompressed(igzip_threaded.open(raw, "rb", threads=1), path, "gzip"))
            raw.close()
            return cast("BinaryIO", _Decompressed(igzip_threaded.open(os.fspath(path), "rb", threads=1), path,
                                                "gzip"))
        if magic == b"\x28\xb5\x2f\xfd" or (len(magic) == 4 and magic[0] & 0xF0 == 0x50
                                             and magic[1:] == b"\x2a\x4d\x18"):
            return cast("BinaryIO", _Decompressed(zstandard.ZstdDecompressor().stream_reader(
                raw, read_across_frames=True, closefd=True), path, "zstd"))
        return raw
    except BaseException:
        raw.close()
        raise


class _Decompressed:
    """A decompressing reader whose errors name the file (a damaged input is an IndexFormatError)."""

    def __init__(self, f: BinaryIO, path: PathLike, what: str) -> None:
        self.f = f
        self.path = os.fspath(path)
        self.what = what

    def readinto(self, b: memoryview) -> int:
        try:
            return self.f.readinto(b)  # type: ignore[attr-defined]
        except (MemoryError, KeyboardInterrupt):
            raise
        except OSError as e:
            if e.errno is not None:  # the disk, not the data
                raise
            raise IndexFormatError(self.path, None, f"{self.what} data is damaged or truncated: {e}") from e
        except Exception as e:
            raise IndexFormatError(self.path, None, f"{self.what} data is damaged or truncated: {e}") from e

    def read(self, n: int = -1) -> bytes:
        if n is None or n < 0:
            chunks: List[bytes] = []
            while True:
                c = self.read(4 << 20)
                if not c:
                    return b"".join(chunks)
                chunks.append(c)
        buf = bytearray(n)
        k = self.readinto(memoryview(buf))
        del buf[k:]
        return bytes(buf)

    def close(self) -> None:
        self.f.close()

    def __enter__(self) -> "_Decompressed":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Behind:
    """Writes done by a thread of their own, a few buffers behind: the sort goes on while
    the output's fdatasync waits for the disk. Errors surface at the next write or at close."""

    DEPTH = 4

    def __init__(self, write: Write) -> None:

        self._write = write
        self._q: "queue.Queue[Optional[bytes]]" = queue.Queue(self.DEPTH)
        self._error: Optional[BaseException] = None
        self._t = threading.Thread(target=self._run, name="warchive-sort-writer", daemon=True)
        self._t.start()

    def _run(self) -> None:
        while True:
            b = self._q.get()
            if b is None:
                return
            if self._error is None:
                try:
                    self._write(b)
                except BaseException as e:
                    self._error = e

    def write(self, b: bytes) -> None:
        if self._error is not None:
            raise self._error
        self._q.put(b)

    def close(self) -> None:
        """Wait for every write; raise the first error."""
        if self._t.is_alive():
            self._q.put(None)
            self._t.join()
        if self._error is not None:
            raise self._error


class _Output(Publisher):
    """Where sorted lines go: a path (atomic publish), "-" (stdout) or a binary file / write callable."""

    def __init__(self, output: Union[PathLike, BinaryIO, Write]) -> None:
        self._atomic = None
        self._behind: Optional[_Behind] = None
        if isinstance(output, (str, os.PathLike)) and os.fspath(output) != "-":
            self._atomic = AtomicOutput(os.fspath(output))
            self._behind = _Behind(self._atomic.write)
            self.write: Write = self._behind.write
        elif isinstance(output, (str, os.PathLike)):
            self.write = sys.stdout.buffer.write
        elif callable(getattr(output, "write", None)):
            self.write = output.write  # type: ignore[union-attr]
        elif callable(output):
            self.write = output
        else:
            raise TypeError("output must be a path, a binary file or a write callable")

    def commit(self) -> None:
        if self._behind is not None:
            self._behind.close()
        if self._atomic is not None:
            self._atomic.commit()

    def abort(self) -> None:
        if self._behind is not None:
            try:
                self._behind.close()
            except BaseException:
                pass
        if self._atomic is not None:
            self._atomic.abort()


# --- runs --------------------------------------------------------------------

class _Runs:
    """Sorted runs in unlinked temporary files (nothing to clean up after a crash).

    Runs are kept by level; when a level holds `fan_in` runs they are merged into
    one run of the next level, so at most about fan_in × levels files are open."""

    def __init__(self, tmpdir: Optional[str], fan_in: int, bufsize: int, stats: SortStats) -> None:
        self.tmpdir = tmpdir
        self.fan_in = max(2, fan_in)
        self.bufsize = bufsize
        self.stats = stats
        self.levels: List[List[int]] = []

    def new(self) -> int:
        fd, path = temp_file(self.tmpdir, "warchive-sort-", ".run")
        os.unlink(path)   # unnamed: gone with the process whatever happens
        return fd

    def add(self, fd: int, level: int = 0) -> None:
        os.lseek(fd, 0, os.SEEK_SET)
        while len(self.levels) <= level:
            self.levels.append([])
        self.levels[level].append(fd)
        if len(self.levels[level]) >= self.fan_in:
            group, self.levels[level] = self.levels[level], []
            self.add(self._merge(group), level + 1)

    def _merge(self, group: List[int]) -> int:
        out = self.new()
        try:
            _k.merge(list(group), out, bufsize=self.bufsize, outbuf=OUT_BUF)
        except BaseException:
            os.close(out)
            raise
        finally:
            for fd in group:
                os.close(fd)
        return out

    def count(self) -> int:
        return sum(len(level) for level in self.levels)

    def final(self) -> List[int]:
        """Merge down until at most fan_in runs remain; return them (this object keeps them)."""
        while self.count() > self.fan_in:
            level = next(i for i, fds in enumerate(self.levels) if fds)
            fds = self.levels[level]
            k = min(len(fds), self.count() - self.fan_in + 1)
            group, self.levels[level] = fds[:k], fds[k:]
            self.add(self._merge(group), level + 1)
        return [fd for level in self.levels for fd in level]

    def close(self) -> None:
        for level in self.levels:
            for fd in level:
                os.close(fd)
        self.levels = []


def _anon_map(size: int) -> mmap.mmap:
    m = mmap.mmap(-1, size)
    if size >= 8 << 20 and hasattr(mmap, "MADV_HUGEPAGE"):
        try:  # the sort reads lines at random: fewer TLB misses (about 20% faster here)
            m.madvise(mmap.MADV_HUGEPAGE)
        except OSError:
            pass
    return m


class _Chunker:
    """A buffer of whole lines, sorted into a run when full.

    The buffer takes ¾ of the memory limit; the rest bounds the line index (16 bytes a
    line) and the merge buffers. A line longer than the buffer grows it."""

    def __init__(self, mem_limit: int, tmpdir: Optional[str], fan_in: int, threads: int,
                 stats: SortStats) -> None:
        mem_limit = max(MIN_MEM_LIMIT, mem_limit)
        self.cap = min(mem_limit * 3 // 4, _k.MAX_CHUNK)
        self.max_lines = max(16, (mem_limit - self.cap) // 16)
        self.mem_limit = mem_limit
        # an anonymous map: pages are zeroed by the kernel when first touched (a bytearray
        # would be zeroed whole up front), and unmapped as soon as the buffer is released
        self.buf = _anon_map(self.cap)
        self.view = memoryview(self.buf)
        self.fill = 0
        self.threads = threads
        self.stats = stats
        merge_buf = max(4096, min(1 << 20, mem_limit // (4 * max(2, fan_in))))
        self.runs = _Runs(tmpdir, fan_in, merge_buf, stats)

    def read_from(self, f: BinaryIO, name: str) -> None:
        guard = LineGuard(name)
        while True:
            if self.fill == len(self.buf):
                self.spill(final=False)
            with self.view[self.fill:self.fill + READ_PIECE] as window:
                n = f.readinto(window)  # type: ignore[attr-defined]
            if not n:
                break
            guard.check(self.buf, self.fill, self.fill + n)
            self.fill += n
        if self.fill and self.buf[self.fill - 1] != 0x0A:  # each input's last line ends here
            if self.fill == len(self.buf):
                self.spill(final=False)
            self.buf[self.fill] = 0x0A
            self.fill += 1

    def add(self, data: bytes) -> None:
        pos = 0
        while pos < len(data):
            if self.fill == len(self.buf):
                self.spill(final=False)
            k = min(len(data) - pos, len(self.buf) - self.fill)
            self.view[self.fill:self.fill + k] = data[pos:pos + k]
            self.fill += k
            pos += k

    def _grow(self) -> None:
        if len(self.buf) * 2 > _k.MAX_CHUNK:
            raise ValueError(f"a line longer than {_k.MAX_CHUNK} bytes cannot be sorted")
        big = _anon_map(len(self.buf) * 2)
        big[:self.fill] = self.view[:self.fill]
        self.view.release()
        self.buf.close()
        self.buf = big
        self.view = memoryview(self.buf)

    def spill(self, final: bool) -> None:
        """Sort the buffer's complete lines (all of them when final) into a run."""
        end = self.fill if final else self.buf.rfind(b"\n", 0, self.fill) + 1
        if end == 0:
            self._grow()  # one line fills the buffer
            return
        fd = self.runs.new()
        try:
            used, lin, _ = _k.sort_chunk(self.view, end, fd, threads=self.threads,
                                         max_lines=self.max_lines, outbuf=OUT_BUF)
        except BaseException:
            os.close(fd)
            raise
        self.stats.lines_in += lin
        self.stats.runs += 1
        rest = self.fill - used
        if rest:
            self.view[:rest] = self.view[used:self.fill]
        self.fill = rest
        self.runs.add(fd)

    def finish(self, write: Write) -> int:
        """Write everything sorted; returns the lines written."""
        if not self.runs.count() and _k.count_lines(self.view, self.fill) <= self.max_lines:
            used, lin, lout = _k.sort_chunk(self.view, self.fill, write, threads=self.threads,
                                            outbuf=OUT_BUF)
            self.stats.lines_in += lin
            self.fill = 0
            self.release()
            return int(lout)
        while self.fill:
            self.spill(final=True)
        self.release()
        fds = self.runs.final()
        self.stats.passes = max(i + 1 for i, level in enumerate(self.runs.levels) if level)
        bufsize = max(4096, min(8 << 20, self.mem_limit // (2 * max(1, len(fds)))))
        lout, _ = _k.merge(fds, write, bufsize=bufsize, outbuf=OUT_BUF)
        return int(lout)

    def release(self) -> None:
        if not self.buf.closed:
            try:
                self.view.release()
                self.buf.close()
            except BufferError:  # a traceback still holds a view: the map goes with it
                pass

    def close(self) -> None:
        self.runs.close()
        self.release()


def sort_files(inputs: Sequence[PathLike], output: Union[PathLike, BinaryIO, Write],
               mem_limit: int = SORT_MEM_LIMIT, tmpdir: Optional[str] = None, *,
               fan_in: int = DEFAULT_FAN_IN, threads: Optional[int] = None) -> SortStats:
    """Sort the lines of every input into `output`, bytewise, identical lines once.

    `mem_limit` bounds the sort's buffers (the process adds the interpreter, about
    30 MB); runs go to `tmpdir` (default: $TMPDIR) as unlinked files. `output` is a
    path (published by atomic rename; it may be one of the inputs), "-" for stdout,
    a binary file or a write callable. A small input never touches the disk."""
    stats = SortStats()
    # an input file sorted in memory must fit the buffer: when one is given that does
    # not, the chunker spills; the line index is bounded by what is left of mem_limit
    for p in inputs:
        if os.fspath(p) != "-" and not os.path.isfile(p):
            raise FileNotFoundError(2, "no such file", os.fspath(p))
    ch = _Chunker(mem_limit, tmpdir, fan_in, threads or _threads(), stats)
    try:
        with _Output(output) as out:
            for p in inputs:
                with open_input(p) as f:
                    ch.read_from(f, os.fspath(p))
                stats.inputs += 1
            stats.lines_out = ch.finish(out.write)
    finally:
        ch.close()
    return stats


class Readable(Protocol):
    """A source of sorted lines that is not a path: what merge_files reads besides files
    (a byte range of a file, say); merge_files closes it."""

    name: str

    def readinto(self, b: Any) -> Optional[int]: ...

    def close(self) -> None: ...


def merge_files(inputs: Sequence[Union[PathLike, Readable]], output: Union[PathLike, BinaryIO, Write], *,
                tmpdir: Optional[str] = None, mem_limit: int = SORT_MEM_LIMIT,
                fan_in: int = DEFAULT_FAN_IN) -> SortStats:
    """Merge sorted inputs into `output`, identical lines once.

    Inputs are paths or Readable objects (read once, closed). An input line that sorts before
    the line above it raises ``warchive.errors.UnsortedInputError`` (file, line number, both
    lines), one longer than ``MAX_LINE`` a ``LineTooLongError``, and `output` is not created.
    More than `fan_in` inputs are merged in groups through unlinked temporary runs."""
    stats = SortStats()
    sources: List[Union[str, Readable]] = [os.fspath(p) if isinstance(p, (str, os.PathLike)) else p for p in inputs]
    for p in sources:
        if isinstance(p, str) and p != "-" and not os.path.isfile(p):
            raise FileNotFoundError(2, "no such file", p)
    fan_in = max(2, fan_in)
    runs = _Runs(tmpdir, fan_in, 1 << 20, stats)
    try:
        with _Output(output) as out:
            # groups of fan_in inputs first (checked as they are read), then one final merge
            pending = list(sources)
            while len(pending) + runs.count() > fan_in:
                group, pending = pending[:fan_in], pending[fan_in:]
                fd = runs.new()
                try:
                    _merge_paths(group, fd, mem_limit)
                except BaseException:
                    os.close(fd)
                    raise
                runs.add(fd, 1)
            fds = runs.final()
            stats.passes = 2 if fds else 1
            stats.lines_out = _merge_paths(pending, out.write, mem_limit, fds)
            stats.inputs = len(sources)
    finally:
        runs.close()
        for p in sources:
            if not isinstance(p, str):
                p.close()
    return stats


def _merge_paths(paths: Sequence[Union[str, Readable]], out: Union[int, Write], mem_limit: int,
                 fds: Sequence[int] = ()) -> int:
    n = len(paths) + len(fds)
    bufsize = max(4096, min(4 << 20, mem_limit // (2 * max(1, n))))
    files: List[Union[BinaryIO, Readable]] = []
    try:
        for p in paths:
            files.append(open_input(p) if isinstance(p, str) else p)
        names = [p if isinstance(p, str) else p.name for p in paths] + [f"<run {i}>" for i in range(len(fds))]
        sources: List[object] = [GuardedReader(cast(Readable, f), name) for f, name in zip(files, names)] + list(fds)
        lout, _ = _k.merge(sources, out, names=names, check=True, bufsize=bufsize,  # type: ignore[arg-type]
                           outbuf=OUT_BUF)
        return int(lout)
    finally:
        for f in files:
            f.close()


# --- in-process sorter (warchive index --sort) --------------------------------

class LineSorter:
    """Feed chunks of lines with ``add``; ``finish(write)`` writes them sorted, repeats once.

    Memory stays near ``mem_limit``; beyond it sorted runs go to unlinked files in
    ``tmpdir``."""

    def __init__(self, mem_limit: int = DEFAULT_MEM_LIMIT, tmpdir: Optional[str] = None) -> None:
        self.mem_limit = mem_limit
        self.tmpdir = tmpdir
        self.stats = SortStats()
        self._ch: Optional[_Chunker] = None

    def add(self, chunk: bytes) -> None:
        if not chunk:
            return
        if self._ch is None:
            self._ch = _Chunker(self.mem_limit, self.tmpdir, DEFAULT_FAN_IN, _threads(), self.stats)
        self._ch.add(chunk)

    def finish(self, write: Write) -> None:
        ch, self._ch = self._ch, None
        if ch is None:
            return
        try:
            self.stats.lines_out = ch.finish(write)
        finally:
            ch.close()


def sort_chunks(chunks: Iterable[bytes], write: Write, mem_limit: int = DEFAULT_MEM_LIMIT) -> None:
    sorter = LineSorter(mem_limit)
    for c in chunks:
        sorter.add(c)
    sorter.finish(write)
