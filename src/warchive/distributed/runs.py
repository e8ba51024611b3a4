"""The map task of a distributed index: one file (or byte range) in, one sorted run per key range out.

A map task indexes the records of its file that start in its byte range
(finding the first member as ``warchive index -j`` does, and saying where
that was and where its records ended, so that the client can check that
the ranges of a file meet), sorts the lines in memory and unnamed
temporary runs (warchive.index.sort.LineSorter, identical lines once) and
cuts the sorted stream at the split points into one file per non-empty key
range: ``<name>/r<k>.run``, each published by rename (a scratch file:
warchive.distributed.scratch), then the manifest ``<name>.json`` with their
sizes and CRCs (warchive.distributed.manifest). It must not
merge across tasks: the merge task does.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence

from .._ext.gzip_members import Reader
from ..index.build import FIND_WINDOW, find_member
from ..index.cdx import CDX11_HEADER, FileStats, index_file
from ..index.sort import LineSorter
from . import manifest
from .plan import options_of, splits_of
from .scratch import ScratchFile

__all__ = ["map_task", "first_at_least", "run_name"]

MAP_MEM_LIMIT = 64 << 20


def run_name(k: int) -> str:
    return f"r{k:05d}.run"


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
    """Sorted lines in (chunks cut anywhere), one run file per key range out."""

    def __init__(self, directory: str, splits: Sequence[bytes]) -> None:
        self.dir = directory
        self.splits = splits
        self.k = 0
        self.rest = b""
        self.out: Optional[ScratchFile] = None
        self.outs: List[ScratchFile] = []
        self.counts: Dict[int, List[int]] = {}

    def write(self, chunk: bytes) -> None:
        data = self.rest + chunk
        cut = data.rfind(b"\n") + 1
        self.rest = data[cut:]
        pos = 0
        while pos < cut:
            end = cut if self.k >= len(self.splits) else first_at_least(data, self.splits[self.k], pos, cut)
            if end > pos:
                self._put(data[pos:end])
                pos = end
            if pos < cut:   # the rest belongs to a later range
                self.k += 1
                self.out = None

    def _put(self, b: bytes) -> None:
        if self.out is None:
            self.out = ScratchFile(os.path.join(self.dir, run_name(self.k)))
            self.outs.append(self.out)
            self.counts[self.k] = [0, 0]
        self.out.write(b)
        c = self.counts[self.k]
        c[0] += b.count(b"\n")
        c[1] += len(b)

    def commit(self) -> None:
        if self.rest:
            self.write(b"\n")   # the sorter ends every line; this is only a guard
        for o in self.outs:
            o.commit()

    def abort(self) -> None:
        for o in self.outs:
            o.abort()


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


def map_task(spec: Dict[str, Any], plan: Dict[str, Any], options: Dict[str, Any], directory: str,
             key: str) -> Dict[str, Any]:
    """Run map task `spec` (its "name" names its files in `directory`) with the split points of
    `plan` (warchive.distributed.plan.plan_task's manifest) unless its manifest says it ran
    already with this key; returns the manifest, with "ran" saying whether it ran now."""
    name = spec["name"]
    splits = splits_of(plan)
    mpath = os.path.join(directory, name + ".json")
    def run() -> Dict[str, Any]:
        rdir = os.path.join(directory, name)
        os.makedirs(rdir, exist_ok=True)
        messages: List[str] = []
        sorter = LineSorter(MAP_MEM_LIMIT, tmpdir=rdir)
        splitter = _Splitter(rdir, splits)
        try:
            got = _index_range(spec, sorter.add, messages, options)
            sorter.finish(splitter.write)
            splitter.commit()
        except BaseException:
            splitter.abort()
            raise
        ranges = {str(k): c for k, c in splitter.counts.items()}
        return dict(got, name=name, ranges=ranges, messages=messages, bytes=spec["cost"],
                    files=[o.entry(directory) for o in splitter.outs], path=spec["path"],
                    start=spec["start"], stop=spec["stop"])

    return manifest.once(mpath, key, run)
