"""The map task of a distributed index: one file (or byte range) in, one sorted run out, cut by key range.

A map task indexes the records of its file that start in its byte range
(finding the first member as ``warchive index -j`` does, and saying where
that was and where its records ended, so that the client can check that
the ranges of a file meet), sorts the lines in memory and unnamed
temporary runs (warchive.index.sort.LineSorter, identical lines once) and
writes the sorted stream as one file, ``<name>.run``, noting where the
lines of each key range begin in it and how many there are (the key ranges
are intervals of the sort order, so each one's lines lie together). The
run is published by rename (a scratch file: warchive.distributed.scratch),
then the manifest ``<name>.json`` with its size and CRC and the ranges
(warchive.distributed.manifest). One file per task, not one per task and
key range: each file costs a create and, at the end, an unlink (and a
directory per task an rmdir: 3.5 ms each on this machine's ext4), and
tasks x ranges grows as the square of the corpus. It must not merge across
tasks: the merge task does.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence

from .._ext.gzip_members import Reader
from ..index.build import FIND_WINDOW, find_member
from ..index.cdx import CDX11_HEADER, FileStats, index_file
from ..index.sort import LineSorter
from . import manifest
from .plan import load_splits, options_of
from .scratch import ScratchFile

__all__ = ["map_task", "first_at_least", "run_name"]

MAP_MEM_LIMIT = 64 << 20


def run_name(name: str) -> str:
    return f"{name}.run"


def first_at_least(buf: bytes, key: bytes, lo: int = 0, hi: Optional[int] = None) -> int:
    """Offset of the first line of buf[lo:hi] (sorted lines, each ending with LF; lo and hi at
    line starts) whose bytes (without the LF) are >= key; hi if none."""
    top = len(buf) if hi is None else hi
    hi = top
    while lo < hi:
        mid = (lo + hi) // 2
        s = max(lo, buf.rfind(b"\n", lo, mid) + 1)
        e = buf.find(b"\n", s, top)
        if e < 0:
            e = top
        if buf[s:e] < key:
            lo = e + 1
        else:
            hi = s
    return min(lo, top)


class _Splitter:
    """Sorted lines in (chunks cut anywhere), written on to `out`; where each key range's lines
    lie: counts {range: [lines, bytes, offset of its first line]} of the non-empty ranges."""

    def __init__(self, out: ScratchFile, splits: Sequence[bytes]) -> None:
        self.out = out
        self.splits = splits
        self.k = 0
        self.rest = b""
        self.counts: Dict[int, List[int]] = {}

    def write(self, chunk: bytes) -> None:
        data = self.rest + chunk
        cut = data.rfind(b"\n") + 1
        self.rest = data[cut:]
        pos = 0
        while pos < cut:
            end = cut if self.k >= len(self.splits) else first_at_least(data, self.splits[self.k], pos, cut)
            if end > pos:
                self._put(data[pos:end] if pos or end < len(data) else data)
                pos = end
            if pos < cut:   # the rest belongs to a later range
                self.k += 1

    def _put(self, b: bytes) -> None:
        c = self.counts.get(self.k)
        if c is None:
            c = self.counts[self.k] = [0, 0, self.out.size]
        self.out.write(b)
        c[0] += b.count(b"\n")
        c[1] += len(b)

    def finish(self) -> None:
        if self.rest:
            self.write(b"\n")   # the sorter ends every line; this is only a guard


def _index_range(spec: Dict[str, Any], write: Any, messages: List[str], options: Dict[str, Any]) -> Dict[str, Any]:
    """Index the records of spec's range into write(); where they began and ended, and counts."""
    opts = options_of(options, report=messages.append)
    path = spec["path"]
    begin: Optional[int] = spec["start"]
    if spec["find"]:
        r = Reader(path, window=FIND_WINDOW)
        try:
            begin = find_member(r, spec["start"], spec["stop"] if spec["stop"] is not None else r.size or 0)
        finally:
            r.close()
    if spec["header"]:
        write(CDX11_HEADER)
    stats = FileStats()
    if begin is not None:
        if os.path.getsize(path) == 0:
            messages.append(f"warchive: {path}: empty file, nothing to index")
        else:
            stats = index_file(path, write, opts, spec["filename"], begin, spec["stop"])
    return {"begin": begin, "end": stats.end, "records": stats.records, "lines": stats.lines,
            "errors": stats.errors, "defects": stats.defects, "slow": stats.slow}


def map_task(spec: Dict[str, Any], plan_id: str, options: Dict[str, Any], directory: str,
             key: str) -> Dict[str, Any]:
    """Run map task `spec` (its "name" names its files in `directory`) with the split points of
    the plan `plan_id` (``plan.json`` in `directory`) unless its manifest says it ran already
    with this key; returns the manifest, with "ran" saying whether it ran now."""
    name = spec["name"]
    splits = load_splits(os.path.join(directory, "plan.json"), plan_id)
    mpath = os.path.join(directory, name + ".json")
    def run() -> Dict[str, Any]:
        messages: List[str] = []
        sorter = LineSorter(MAP_MEM_LIMIT, tmpdir=directory)
        with ScratchFile(os.path.join(directory, run_name(name))) as out:
            splitter = _Splitter(out, splits)
            got = _index_range(spec, sorter.add, messages, options)
            sorter.finish(splitter.write)
            splitter.finish()
        ranges = {str(k): c for k, c in splitter.counts.items()}
        return dict(got, name=name, ranges=ranges, messages=messages, bytes=spec["cost"],
                    files=[out.entry(directory)], path=spec["path"], start=spec["start"], stop=spec["stop"])

    return manifest.once(mpath, key, run)
