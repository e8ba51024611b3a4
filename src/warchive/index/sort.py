"""Sort index lines bytewise (as ``LC_ALL=C sort``) with bounded memory, dropping repeats.

Lines are collected up to ``mem_limit`` bytes, sorted in memory and spilled
to temporary runs; the runs are merged with a heap. Identical lines are
written once, as cdxj-indexer's ``--sort`` does.
"""

from __future__ import annotations

import heapq
import os
from typing import BinaryIO, Callable, Iterable, Iterator, List, Optional

DEFAULT_MEM_LIMIT = 32 << 20


class LineSorter:
    """Feed chunks of whole lines with ``add``; ``finish(write)`` writes them sorted."""

    def __init__(self, mem_limit: int = DEFAULT_MEM_LIMIT, tmpdir: Optional[str] = None) -> None:
        self.mem_limit = mem_limit
        self.tmpdir = tmpdir
        self._lines: List[bytes] = []
        self._size = 0
        self._runs: List[str] = []
        self._partial = b""

    def add(self, chunk: bytes) -> None:
        if not chunk:
            return
        data = self._partial + chunk
        lines = data.split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            self._lines.append(line + b"\n")
        self._size += len(chunk)
        if self._size >= self.mem_limit:
            self._spill()

    def _spill(self) -> None:
        import tempfile

        self._lines.sort()
        fd, path = tempfile.mkstemp(prefix="warchive-sort-", suffix=".run", dir=self.tmpdir)
        with os.fdopen(fd, "wb", buffering=1 << 20) as f:
            _write_unique(iter(self._lines), f.write)
        self._runs.append(path)
        self._lines = []
        self._size = 0

    def finish(self, write: Callable[[bytes], object]) -> None:
        if self._partial:
            self._lines.append(self._partial + b"\n")
            self._partial = b""
        try:
            if not self._runs:
                self._lines.sort()
                _write_unique(iter(self._lines), write)
                return
            if self._lines:
                self._spill()
            files: List[BinaryIO] = [open(p, "rb", buffering=1 << 16) for p in self._runs]
            try:
                _write_unique(heapq.merge(*files), write)
            finally:
                for f in files:
                    f.close()
        finally:
            for p in self._runs:
                try:
                    os.unlink(p)
                except OSError:
                    pass
            self._runs = []
            self._lines = []


def _write_unique(lines: Iterator[bytes], write: Callable[[bytes], object]) -> None:
    last = None
    buf: List[bytes] = []
    size = 0
    for line in lines:
        if line != last:
            buf.append(line)
            size += len(line)
            last = line
            if size >= 1 << 20:
                write(b"".join(buf))
                buf = []
                size = 0
    if buf:
        write(b"".join(buf))


def sort_chunks(chunks: Iterable[bytes], write: Callable[[bytes], object],
                mem_limit: int = DEFAULT_MEM_LIMIT) -> None:
    sorter = LineSorter(mem_limit)
    for c in chunks:
        sorter.add(c)
    sorter.finish(write)
