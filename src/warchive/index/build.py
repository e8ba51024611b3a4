"""`warchive index`: index many WARC/ARC files into one CDXJ (or CDX-11) output.

Files are taken in the order given, directories walked as cdxj-indexer walks
them. With ``jobs > 1`` files — and large gzip files, cut at member
boundaries found through Wget's `sl` lengths — are indexed in worker
processes and their lines concatenated in input order, so the output equals
the one-process output byte for byte. The output file is written under a
temporary name and renamed into place only when everything succeeded.
"""

from __future__ import annotations

import os
import sys
from typing import BinaryIO, Callable, List, Optional, Sequence, Tuple

from ..errors import ArchiveError
from .._ext.gzip_members import FORMAT_GZIP, Reader
from .cdx import CDX11_HEADER, FileStats, IndexOptions, display_name, index_file, iter_inputs
from .sort import LineSorter

Write = Callable[[bytes], object]
MIN_SPLIT = 8 << 20


class Task:
    """Index the records of `path` that start in [start, stop) (stop None: to the end)."""

    __slots__ = ("path", "filename", "start", "stop", "header", "cost")

    def __init__(self, path: str, filename: str, start: int = 0, stop: Optional[int] = None,
                 header: bool = False) -> None:
        self.path = path
        self.filename = filename
        self.start = start
        self.stop = stop
        self.header = header   # write the CDX-11 header before this task's lines
        self.cost = 0          # bytes to read, for scheduling


def _find_member_near(r: Reader, pos: int, size: int) -> Optional[int]:
    """A gzip member start carrying `sl` at or after pos whose chain checks out, or None."""
    while pos < size:
        window = r.read_at(pos, 1 << 20)
        i = window.find(b"\x1f\x8b\x08\x04")
        while i >= 0:
            cand = pos + i
            try:
                if r.member_begin(cand):
                    sl = r.member_sl
                    if sl and r.member_head(5).upper() == b"WARC/":
                        nxt = cand + sl[0]
                        if nxt == size or (r.read_at(nxt, 3) == b"\x1f\x8b\x08"):
                            return cand
            except ArchiveError:
                pass
            i = window.find(b"\x1f\x8b\x08\x04", i + 1)
        if len(window) < 1 << 20:
            return None
        pos += len(window) - 3
    return None


def split_file(path: str, pieces: int) -> List[Tuple[int, Optional[int]]]:
    """Cut a gzip file with `sl` members into about `pieces` ranges of whole members."""
    size = os.path.getsize(path)
    if pieces <= 1 or size < 2 * MIN_SPLIT:
        return [(0, None)]
    r = Reader(path)
    if r.format != FORMAT_GZIP:
        return [(0, None)]
    step = max(MIN_SPLIT, size // pieces)
    cuts = [0]
    pos = step
    while pos < size - MIN_SPLIT // 2:
        cand = _find_member_near(r, pos, size)
        if cand is None:
            break
        if cand > cuts[-1]:
            cuts.append(cand)
        pos = cand + step
    r.close()
    return [(a, b) for a, b in zip(cuts, cuts[1:] + [None])]


def _temp_file(directory: Optional[str], prefix: str, suffix: str) -> Tuple[int, str]:
    """A new file nobody else has (O_EXCL), without importing tempfile (and shutil) at start-up."""
    directory = directory or os.environ.get("TMPDIR") or "/tmp"
    while True:
        path = os.path.join(directory, f"{prefix}{os.urandom(6).hex()}{suffix}")
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600), path
        except FileExistsError:
            continue


class _Part:
    """The output of one task: in memory up to 1 MiB, then in an unnamed temporary file
    (tasks finished out of order wait for their turn without holding memory)."""

    LIMIT = 1 << 20

    def __init__(self) -> None:
        self.chunks: List[bytes] = []
        self.size = 0
        self.file: Optional[BinaryIO] = None
        self.stats = FileStats()
        self.error: Optional[BaseException] = None

    def write(self, b: bytes) -> None:
        if self.file is None:
            self.chunks.append(b)
            self.size += len(b)
            if self.size > self.LIMIT:
                import tempfile

                self.file = tempfile.TemporaryFile()
                self.file.write(b"".join(self.chunks))
                self.chunks = []
        else:
            self.file.write(b)

    def copy_to(self, out: Write) -> None:
        if self.file is None:
            for c in self.chunks:
                out(c)
            self.chunks = []
            return
        self.file.seek(0)
        while True:
            b = self.file.read(1 << 20)
            if not b:
                break
            out(b)
        self.file.close()


def _run_threads(tasks: List[Task], opts: IndexOptions, jobs: int, out: Write, total: FileStats) -> None:
    """Run the tasks on `jobs` threads and write their outputs in task order.

    Threads suffice: the kernel indexes with the GIL released, and only the rare
    records left to the Python reference hold it. The first error in task order is
    raised after everything before it has been written; later tasks are abandoned."""
    import threading

    parts = [_Part() for _ in tasks]
    done = [threading.Event() for _ in tasks]
    lock = threading.Lock()
    # biggest first, so that the last tasks to finish are short ones; output stays in task order
    order = sorted(range(len(tasks)), key=lambda k: -tasks[k].cost)
    next_task = [0]
    stop = threading.Event()

    def worker() -> None:
        while not stop.is_set():
            with lock:
                n = next_task[0]
                next_task[0] += 1
            if n >= len(order):
                return
            i = order[n]
            part = parts[i]
            try:
                if tasks[i].header:
                    part.write(CDX11_HEADER)
                part.stats = _index_one(tasks[i], part.write, opts)
            except BaseException as e:  # raised by the writer thread, in task order
                part.error = e
            finally:
                done[i].set()

    threads = [threading.Thread(target=worker, name=f"warchive-index-{k}", daemon=True) for k in range(jobs)]
    for t in threads:
        t.start()
    try:
        for i, part in enumerate(parts):
            done[i].wait()
            part.copy_to(out)
            _add(total, part.stats)
            if part.error is not None:
                raise part.error
    finally:
        stop.set()
        for t in threads:
            t.join()


def _index_one(task: Task, write: Write, opts: IndexOptions) -> FileStats:
    if os.path.isfile(task.path) and os.path.getsize(task.path) == 0:
        opts.report(f"warchive: {task.path}: empty file, nothing to index")
        return FileStats()
    return index_file(task.path, write, opts, task.filename, task.start, task.stop)


def plan(inputs: Sequence[str], opts: IndexOptions, jobs: int) -> List[Task]:
    """Tasks in output order: whole files, and with jobs > 1 big gzip files cut into
    pieces of about total/(16*jobs) bytes so that the workers finish together."""
    tasks: List[Task] = []
    paths = list(iter_inputs(inputs))
    total = sum(os.path.getsize(p) for p in paths if os.path.isfile(p))
    piece = max(MIN_SPLIT, total // (16 * jobs)) if jobs > 1 else 0
    for path in paths:
        name = display_name(path, opts.dir_root)
        ranges: List[Tuple[int, Optional[int]]] = [(0, None)]
        if piece and not opts.post_append and os.path.isfile(path):
            size = os.path.getsize(path)
            if size >= 2 * piece:
                ranges = split_file(path, size // piece)
        size = os.path.getsize(path) if os.path.isfile(path) else 0
        for k, (a, b) in enumerate(ranges):
            t = Task(path, name, a, b, header=opts.cdx11 and k == 0)
            t.cost = (b if b is not None else size) - a
            tasks.append(t)
    return tasks


def index_paths(inputs: Sequence[str], write: Write, opts: IndexOptions, jobs: int = 1,
                sort: bool = False) -> FileStats:
    """Index every input (files or directories) into write(); return the totals."""
    for p in inputs:
        if not os.path.exists(p):
            raise FileNotFoundError(2, "no such file or directory", p)
    tasks = plan(inputs, opts, jobs)
    sorter = LineSorter() if sort else None
    out = sorter.add if sorter else write
    total = FileStats()
    if jobs <= 1 or len(tasks) <= 1:
        for t in tasks:
            if t.header:
                out(CDX11_HEADER)
            _add(total, _index_one(t, out, opts))
    else:
        _run_threads(tasks, opts, jobs, out, total)
    if sorter:
        sorter.finish(write)
    return total


def _add(total: FileStats, s: FileStats) -> None:
    total.records += s.records
    total.lines += s.lines
    total.slow += s.slow
    total.errors += s.errors


class AtomicOutput:
    """A file written as NAME.<random>.tmp and renamed to NAME once complete and on disk
    (removed on failure): a reader never sees a NAME that is not whole.

    Data goes to disk as it is written (fdatasync every 8 MiB), so that the final fsync
    has little left to wait for."""

    SYNC_EVERY = 8 << 20

    def __init__(self, path: str) -> None:
        self.path = path
        self.dir = os.path.dirname(os.path.abspath(path))
        fd, self.tmp = _temp_file(self.dir, os.path.basename(path) + ".", ".tmp")
        self.f: BinaryIO = os.fdopen(fd, "wb", buffering=1 << 20)
        self._unsynced = 0

    def write(self, b: bytes) -> None:
        self.f.write(b)
        self._unsynced += len(b)
        if self._unsynced >= self.SYNC_EVERY:
            self.f.flush()
            os.fdatasync(self.f.fileno())
            self._unsynced = 0

    def commit(self) -> None:
        self.f.flush()
        os.fsync(self.f.fileno())
        self.f.close()
        os.chmod(self.tmp, 0o644)
        os.replace(self.tmp, self.path)
        try:  # the rename itself on disk
            dfd = os.open(self.dir, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError:
            pass

    def abort(self) -> None:
        self.f.close()
        try:
            os.unlink(self.tmp)
        except OSError:
            pass
