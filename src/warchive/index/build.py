"""`warchive index`: index many WARC/ARC files into one CDXJ (or CDX-11) output.

Files are taken in the order given, directories walked as cdxj-indexer walks
them. With ``jobs > 1`` files — and large gzip files, cut at member
boundaries found through Wget's `sl` lengths — are indexed by worker
threads (the kernel runs without the GIL) and their lines concatenated in
input order, so the output equals the one-thread output byte for byte. The output file is written under a
temporary name and renamed into place only when everything succeeded.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import BinaryIO, Callable, Iterable, List, Optional, Sequence, Union

from .._ext.gzip_members import FORMAT_GZIP, Reader
from ..durable import temp_file
from ..errors import ArchiveError
from .cdx import CDX11_HEADER, FileStats, IndexOptions, display_name, index_file, is_store_url, iter_inputs
from .sort import LineSorter

Write = Callable[[bytes], object]
Path = Union[str, "os.PathLike[str]"]
# One path, or several: a lone str is one path, never its characters.
Paths = Union[Path, Iterable[Path]]


def path_list(inputs: Paths) -> List[str]:
    """``inputs`` as a list of str paths: a single path (str or PathLike) is a list of one."""
    if isinstance(inputs, (str, os.PathLike)):
        return [os.fspath(inputs)]
    return [os.fspath(p) for p in inputs]

MIN_PIECE = 1 << 20   # smallest range of a split file (at the end of the run, so that the workers finish together)
FIND_WINDOW = 1 << 16
FILE_TAIL = 2 << 20   # the last range of a split file
GUIDE = 2             # each range of a split file is 1/(GUIDE*jobs) of the bytes left to index
SWITCH_INTERVAL = 0.0002   # seconds, while worker threads run (sys.setswitchinterval)


class Task:
    """Index the records of `path` that start in [start, stop) (stop None: to the end).

    With `find`, start is only a place in the file: the worker looks for the first gzip
    member at or after it (before stop) that looks like a WARC record with `sl`, and
    indexes from there. Whether that was a real member start is checked afterwards
    against where the previous range's records ended (see _Chain)."""

    __slots__ = ("path", "filename", "start", "stop", "header", "cost", "find")

    def __init__(self, path: str, filename: str, start: int = 0, stop: Optional[int] = None,
                 header: bool = False, find: bool = False) -> None:
        self.path = path
        self.filename = filename
        self.start = start
        self.stop = stop
        self.header = header   # write the CDX-11 header before this task's lines
        self.cost = 0          # bytes to read
        self.find = find


def find_member(r: Reader, pos: int, limit: int) -> Optional[int]:
    """The first offset in [pos, limit) that looks like the start of a gzip member carrying `sl`
    whose data begins with "WARC/" and whose `sl` length ends at another member (or the file's
    end), or None. A look, not a proof: such bytes can sit inside a stored payload."""
    size = r.size or 0
    limit = min(limit, size)
    window = FIND_WINDOW
    while pos < limit:
        buf = r.read_at(pos, window)
        n = min(len(buf), limit - pos)
        i = buf.find(b"\x1f\x8b\x08\x04", 0, n)
        while i >= 0:
            cand = pos + i
            try:
                if r.member_begin(cand):
                    sl = r.member_sl
                    if sl and r.member_head(5).upper() == b"WARC/":
                        nxt = cand + sl[0]
                        if nxt == size or r.read_at(nxt, 3) == b"\x1f\x8b\x08":
                            return cand
            except ArchiveError:
                pass
            i = buf.find(b"\x1f\x8b\x08\x04", i + 1, n)
        if len(buf) < window:
            return None
        pos += len(buf) - 3
        window = min(window * 4, 1 << 20)
    return None


def splittable(path: str) -> bool:
    """A gzip file whose first member carries `sl` (Wget's, ours): it can be cut into ranges."""
    try:
        r = Reader(path, window=FIND_WINDOW)
    except OSError:
        return False
    try:
        return r.format == FORMAT_GZIP and r.member_begin(0) and r.member_sl is not None
    except ArchiveError:
        return False
    finally:
        r.close()


class _Part:
    """The output of one task. Until the main thread knows that the range began where the ranges
    before it ended and everything before it is written (go_live), lines wait: in memory up to
    4 MiB, then in an unnamed temporary file; so do messages. From then on the worker writes
    them straight to the output: memory that is not kept is used again instead of being
    page-faulted in afresh (3 us per 4 KiB here, 12 ms a run when every part waited)."""

    LIMIT = 4 << 20

    def __init__(self) -> None:
        self.chunks: List[bytes] = []
        self.size = 0
        self.file: Optional[BinaryIO] = None
        self.stats = FileStats()
        self.error: Optional[BaseException] = None
        self.messages: List[str] = []
        self.begin: Optional[int] = None   # offset of its first record (None: found none)
        self.lock = threading.Lock()
        self.sink: Optional[Write] = None
        self.report_to: Optional[Callable[[str], object]] = None

    def write(self, b: bytes) -> None:
        with self.lock:
            if self.sink is not None:
                self.sink(b)
            elif self.file is None:
                self.chunks.append(b)
                self.size += len(b)
                if self.size > self.LIMIT:
                    fd, name = temp_file(None, "warchive-index-", ".part")
                    os.unlink(name)   # unnamed: gone with the process whatever happens
                    self.file = os.fdopen(fd, "w+b")
                    self.file.write(b"".join(self.chunks))
                    self.chunks = []
            else:
                self.file.write(b)

    def report(self, message: str) -> None:
        with self.lock:
            if self.report_to is not None:
                self.report_to(message)
            else:
                self.messages.append(message)

    def go_live(self, out: Write, report: Callable[[str], object]) -> None:
        """Write out what waited; the worker writes the rest itself."""
        with self.lock:
            for m in self.messages:
                report(m)
            self.messages = []
            self.copy_to(out)
            self.sink = out
            self.report_to = report

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
        self.file = None

    def discard(self) -> None:
        self.chunks = []
        if self.file is not None:
            self.file.close()
            self.file = None


def _run_part(task: Task, opts: IndexOptions, part: Optional[_Part] = None,
              located: Optional[Callable[[], object]] = None) -> _Part:
    """Index one task into `part` (a new one by default); errors are kept in it, raised by whoever
    writes it out. located() is called once the range's first record is known (part.begin)."""
    if part is None:
        part = _Part()
    o = opts.copy(report=part.report)
    try:
        begin: Optional[int] = task.start
        if task.find:
            r = Reader(task.path, window=FIND_WINDOW)
            try:
                begin = find_member(r, task.start, task.stop if task.stop is not None else r.size or 0)
            finally:
                r.close()
        part.begin = begin
        if located is not None:
            located()
            located = None
        if task.header:
            part.write(CDX11_HEADER)
        if begin is not None:
            part.stats = _index_one(Task(task.path, task.filename, begin, task.stop), part.write, o)
    except BaseException as e:
        part.error = e
    finally:
        if located is not None:
            located()
    return part


class _Chain:
    """Checks, range after range of one file, that each range began where the records of the
    ranges before it ended, and indexes a range again from there when it did not (its start was
    found inside a record, or a record was not found). The output is then the one-process output."""

    def __init__(self, opts: IndexOptions) -> None:
        self.opts = opts
        self.path: Optional[str] = None
        self.end = 0   # where the records indexed so far of self.path end

    def right(self, task: Task, part: _Part) -> bool:
        """Did the range begin where it should? (part.begin must be known)"""
        if task.path != self.path or not task.find:
            self.path = task.path
            return True
        if part.begin is not None and part.begin == self.end:
            return True
        # nothing starts in the range, and rightly so: the records before it reach past it
        return part.begin is None and self.end >= self._stop(task)

    def redo(self, task: Task, part: _Part) -> _Part:
        """The range indexed from where the records before it ended (in this thread)."""
        part.discard()
        if self.end >= self._stop(task):   # the range lies inside a record already indexed
            return _Part()
        return _run_part(Task(task.path, task.filename, self.end, task.stop), self.opts)

    def done(self, part: _Part) -> None:
        if part.begin is not None and part.error is None:
            self.end = part.stats.end

    @staticmethod
    def _stop(task: Task) -> int:
        return task.stop if task.stop is not None else os.path.getsize(task.path)


def _run_threads(tasks: List[Task], opts: IndexOptions, jobs: int, out: Write, total: FileStats) -> None:
    """Run the tasks on `jobs` threads and write their outputs in task order.

    Threads suffice: the kernel indexes with the GIL released, and only the rare
    records left to the Python reference hold it. The first error in task order is
    raised after everything before it has been written; later tasks are abandoned."""
    parts: List[Optional[_Part]] = [_Part() for _ in tasks]
    located = [threading.Event() for _ in tasks]
    done = [threading.Event() for _ in tasks]
    lock = threading.Lock()
    pending = iter(_dispatch_order(tasks))   # taken under `lock`
    stop = threading.Event()

    def worker() -> None:
        while not stop.is_set():
            with lock:
                i = next(pending, None)
            if i is None:
                return
            _run_part(tasks[i], opts, parts[i], located[i].set)   # parts[i] is not None until done[i]
            done[i].set()

    # A thread that wants the GIL waits up to the switch interval (5 ms) for one running Python
    # (the reference indexing a record, the writer thread) to let go of it: a worker coming back
    # from the kernel with lines stalled that long, several times a run. 0.2 ms bounds that wait.
    switch = sys.getswitchinterval()
    sys.setswitchinterval(min(switch, SWITCH_INTERVAL))
    workers = [threading.Thread(target=worker, name=f"warchive-index-{k}", daemon=True) for k in range(jobs)]
    for t in workers:
        t.start()
    chain = _Chain(opts)
    try:
        for i, task in enumerate(tasks):
            located[i].wait()
            part = parts[i]
            assert part is not None
            if chain.right(task, part):
                part.go_live(out, opts.report)   # everything before it is written
                done[i].wait()
            else:
                done[i].wait()
                part = chain.redo(task, part)
                for m in part.messages:
                    opts.report(m)
                part.copy_to(out)
            parts[i] = None   # let the finished one go
            chain.done(part)
            _add(total, part.stats)
            if part.error is not None:
                raise part.error
    finally:
        stop.set()
        for t in workers:
            t.join()
        sys.setswitchinterval(switch)


def _dispatch_order(tasks: List[Task]) -> List[int]:
    """Task order, except that the last range of a split file (its last FILE_TAIL bytes) goes
    before its other ranges.

    The ranges shrink towards the end of the run so that the workers finish together, but the
    end of a file costs more than its size says: crawlers end their files with records that
    have no payload digest (Wget's log and manifest, megabytes once inflated), read and hashed
    in full by the reference. Taken last, they kept one core busy alone for 5-6 ms of a
    230 ms run; taken first, other ranges fill the time."""
    order: List[int] = []
    k = 0
    while k < len(tasks):
        j = k + 1
        while j < len(tasks) and tasks[j].find:   # the further ranges of tasks[k]'s file
            j += 1
        order.extend([j - 1] + list(range(k, j - 1)) if j - k > 1 else [k])
        k = j
    return order


def _index_one(task: Task, write: Write, opts: IndexOptions) -> FileStats:
    if task.path != "-" and os.path.isfile(task.path) and os.path.getsize(task.path) == 0:
        opts.report(f"warchive: {task.path}: empty file, nothing to index")
        return FileStats()
    return index_file(task.path, write, opts, task.filename, task.start, task.stop)


def plan(inputs: Sequence[str], opts: IndexOptions, jobs: int) -> List[Task]:
    """Tasks in output order: whole files, and with jobs > 1 gzip files with `sl` members cut
    into ranges, large first and down to MIN_PIECE at the end (guided self-scheduling: each range
    is 1/(GUIDE*jobs) of what remains), so that the workers, taking tasks in order, finish together.
    Ranges are places in the file; the workers find the member starts themselves."""
    tasks: List[Task] = []
    paths = list(iter_inputs(inputs))
    sizes = [os.path.getsize(p) if p != "-" and os.path.isfile(p) else 0 for p in paths]   # streams: 0
    remaining = sum(sizes)
    for path, size in zip(paths, sizes):
        name = display_name(path, opts.dir_root)
        cuts = [0]
        if jobs > 1 and not opts.post_append and size >= 2 * FILE_TAIL and splittable(path):
            tail = size - FILE_TAIL   # the file's last range, taken first (see _dispatch_order)
            pos = 0
            while True:
                piece = max(MIN_PIECE, remaining // (GUIDE * jobs))
                if pos + piece + MIN_PIECE // 2 >= tail:
                    break
                pos += piece
                remaining -= piece
                cuts.append(pos)
            cuts.append(tail)
            remaining -= tail - pos
        remaining -= size - cuts[-1]
        for k, a in enumerate(cuts):
            b = cuts[k + 1] if k + 1 < len(cuts) else None
            t = Task(path, name, a, b, header=opts.cdx11 and k == 0, find=k > 0)
            t.cost = (b if b is not None else size) - a
            tasks.append(t)
    return tasks


def index_paths(inputs: Paths, write: Write, opts: IndexOptions, jobs: int = 1,
                sort: bool = False) -> FileStats:
    """Index every input (files, directories, '-' for standard input) into write(); return the
    totals. ``inputs`` is one path (str or PathLike) or an iterable of them. A stream (standard
    input, a FIFO) is read once, forward, by one worker."""
    inputs = path_list(inputs)
    for p in inputs:
        if is_store_url(p):
            from ..store.urls import check_url   # imported here: see cdx.index_file (start-up)
            check_url(p)
        elif p != "-" and not os.path.exists(p):
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
    total.defects += s.defects
