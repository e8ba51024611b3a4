"""The plan of a distributed index: key-range split points from a sample, and the map tasks.

Split points are whole index lines: key range k holds the lines L with
split[k-1] <= L < split[k] (bytewise), so the ranges, concatenated in
order, are the sorted index, and identical lines (repeats that the sort
writes once) always fall into the same range. Being lines rather than SURT
keys or hosts, split points can cut inside one host, or one URL's captures:
a corpus dominated by one site still splits evenly.

The sample is cheap: the records that start in a few small windows of each
file (evenly spaced through a gzip file with Wget's `sl` lengths, found as
``warchive index -j`` finds its ranges; the head of any other file), each
sampled line weighted by how many output bytes it stands for in its file.
Its size follows the number of key ranges, not the corpus: SAMPLE_WINDOWS
windows at least, SAMPLE_WINDOWS_PER_RANGE a range (but no more than 1/16
of the input's bytes), shared among the files
by size (two each at least; a file hardly larger than its windows is
indexed whole). A window costs about 0.1 ms besides its bytes (finding a
member, setting up the kernel), so the corpus's 256 windows of 32 KiB cost
~35 ms of CPU, spread over the workers; a fixed number of windows a file
(16 of 256 KiB) would grow with the corpus (50 ms for 300 MB).
The map tasks are ``warchive.index.build.plan``'s: whole files, large `sl`
gzip files cut into byte ranges. A plan is JSON and saved in the job's
scratch directory, so a rerun uses the same split points and tasks.
This module decides; it must not read or write index runs.
"""

from __future__ import annotations

import base64
import functools
import math
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .._ext.gzip_members import Reader
from ..index.build import FIND_WINDOW, find_member, plan as range_plan, splittable
from ..errors import IndexFormatError
from ..index.cdx import READ_WINDOW, IndexOptions, index_file
from . import manifest

__all__ = ["options_of", "input_identity", "sample_windows", "sample_groups", "sample_files", "sample_file",
           "choose_splits", "map_specs",
           "plan_task", "splits_of", "load_splits", "SAMPLE_WINDOWS", "SAMPLE_WIDTH"]

SAMPLE_WINDOWS = 256          # windows over all the inputs, at least
SAMPLE_WINDOWS_PER_RANGE = 32
SAMPLE_WIDTH = 32 << 10       # bytes a window covers (records that start there are sampled)
SAMPLE_READ = 64 << 10        # the kernel's read window while sampling
INDEX_SHARE = 1 / 16          # index bytes per input byte, to guess the ranges before sampling
MAP_PIECE = 16 << 20          # the smallest byte range of a map task (but a file's last)
MAP_NS_PER_INDEX_BYTE = 40    # a map task's time per byte of index lines, over its time per input byte

OPTION_NAMES = ("cdx11", "records", "post_append", "verify", "skip_errors", "dir_root", "strict", "surt_options")


def options_of(o: Dict[str, Any], report: Any = None) -> IndexOptions:
    """IndexOptions from their JSON form (what travels to the workers)."""
    opts = IndexOptions(cdx11=bool(o.get("cdx11")), records=o.get("records"), post_append=bool(o.get("post_append")),
                        verify=bool(o.get("verify")), skip_errors=bool(o.get("skip_errors")),
                        dir_root=o.get("dir_root"), strict=bool(o.get("strict")),
                        surt_options=o.get("surt_options") or None)
    if report is not None:
        opts.report = report
    return opts


def input_identity(path: str) -> List[Any]:
    """What says a file is unchanged since a plan was made: path, size, mtime."""
    st = os.stat(path)
    return [os.path.abspath(path), st.st_size, st.st_mtime_ns]


def sample_windows(sizes: Sequence[int], ranges: Optional[int], target_bytes: int) -> List[int]:
    """How many windows to sample in each file of these sizes (0: index it whole), for `ranges`
    key ranges (None: as many as the target size makes of an index 1/16 of the inputs, which
    overestimates: the benchmark corpus's index is 1/20 of it)."""
    total = sum(sizes)
    expected = ranges if ranges else math.ceil(total * INDEX_SHARE / max(1, target_bytes))
    budget = max(SAMPLE_WINDOWS, min(SAMPLE_WINDOWS_PER_RANGE * expected, total // (16 * SAMPLE_WIDTH)))
    out = []
    for size in sizes:
        n = max(2, round(budget * size / max(1, total)))
        out.append(0 if 2 * n * SAMPLE_WIDTH >= size else n)
    return out


def sample_groups(files: Sequence[List[Any]], groups: int) -> List[List[List[Any]]]:
    """The files to sample ([path, filename, windows, size] each) in at most `groups` sample tasks
    of about equal cost (largest first onto the least loaded): a Dask task costs the worker and
    the client a few milliseconds of CPU, and a corpus can have 100,000 files."""
    out: List[List[List[Any]]] = [[] for _ in range(max(1, min(groups, len(files))))]
    load = [0] * len(out)
    for f in sorted(files, key=lambda f: -_sample_cost(f[2], f[3])):
        g = load.index(min(load))
        out[g].append(f)
        load[g] += _sample_cost(f[2], f[3])
    return out


def _sample_cost(windows: int, size: int) -> int:
    return windows * (SAMPLE_WIDTH + (48 << 10)) if windows else size   # a window costs ~0.1 ms beside its bytes


def sample_files(files: Sequence[List[Any]], options: Dict[str, Any]) -> List[Dict[str, Any]]:
    """sample_file of each of `files` ([path, filename, windows, size]): one task's group."""
    return [sample_file(path, name, options, windows) for path, name, windows, _ in files]


def _windows(path: str, size: int, windows: int) -> List[Tuple[int, int, bool]]:
    """(start, stop, find) of the byte windows to sample."""
    if windows == 0:
        return [(0, size, False)]
    if not splittable(path):
        return [(0, min(size, SAMPLE_WIDTH * windows), False)]
    return [((size - SAMPLE_WIDTH) * i // (windows - 1), (size - SAMPLE_WIDTH) * i // (windows - 1) + SAMPLE_WIDTH,
             i > 0) for i in range(windows)]


def sample_file(path: str, filename: str, options: Dict[str, Any], windows: int) -> Dict[str, Any]:
    """Index lines of the records that start in `windows` windows of `path` (0: all of it; a task
    run on a worker): {"lines": the lines, each ending with LF, as one bytes (Dask sends one
    bytes object in microseconds, a list of a thousand in a tenth of a second), "sampled":
    bytes the windows cover, "size": the file's size, "path", "windows": [offset, bytes, bytes of
    index lines] of each}."""
    size = os.path.getsize(path)
    chunks: List[bytes] = []
    opts = options_of(options, report=lambda m: None)
    opts.skip_errors = True   # a damaged record is the map task's to report, not the sample's
    sampled = 0
    seen: List[List[int]] = []
    r = Reader(path, window=FIND_WINDOW)
    try:
        for a, b, find in _windows(path, size, windows):
            if find:
                found = find_member(r, a, b)
                if found is None:
                    continue
                a = found
            before = sum(len(c) for c in chunks)
            index_file(path, chunks.append, opts, filename, a, b if b < size else None,
                       read_window=SAMPLE_READ if windows else READ_WINDOW)
            sampled += b - a
            seen.append([a, b - a, sum(len(c) for c in chunks) - before])
    finally:
        r.close()
    data = b"".join(chunks)
    if data and not data.endswith(b"\n"):
        data += b"\n"
    return {"lines": data, "sampled": sampled, "size": size, "path": path, "windows": seen}


def choose_splits(samples: Sequence[Dict[str, Any]], ranges: Optional[int], target_bytes: int) -> Tuple[List[bytes], float]:
    """Split points for `ranges` key ranges (None: as many as make ranges of about
    `target_bytes` of index lines), from the samples of sample_file; and the estimated size of
    the whole index in bytes. Each sampled line weighs the output bytes it stands for (its
    file's size over the bytes sampled there); split k is the line at weight k/ranges."""
    weighted: List[Tuple[bytes, float]] = []
    for s in samples:
        scale = s["size"] / max(1, s["sampled"])
        weighted.extend((line, (len(line) + 1) * scale) for line in s["lines"].split(b"\n") if line)
    weighted.sort(key=lambda t: t[0])
    total = sum(w for _, w in weighted)
    if ranges is None:
        ranges = max(1, math.ceil(total / max(1, target_bytes)))
    splits: List[bytes] = []
    if ranges <= 1 or not weighted:
        return splits, total
    acc = 0.0
    i = 0
    for k in range(1, ranges):
        goal = total * k / ranges
        while i < len(weighted) and acc + weighted[i][1] <= goal:
            acc += weighted[i][1]
            i += 1
        # past the last sample (more ranges than lines): the ranges in between are empty
        splits.append(weighted[min(i, len(weighted) - 1)][0])
    return splits, total


def map_specs(inputs: Sequence[str], opts: IndexOptions, jobs: int, min_piece: int = MAP_PIECE) -> List[Dict[str, Any]]:
    """The map tasks, in input order, as JSON: whole files, and with jobs > 1 large gzip files
    with `sl` members cut into byte ranges (warchive.index.build.plan), joined up to at least
    min_piece bytes each (and a file's last range, when shorter, goes with the one before it:
    the plan cuts the last 2 MiB of each file apart for -j's threads to take first, which a
    Dask task, at a few ms of CPU, does not pay for); each named m<i>."""
    out: List[Dict[str, Any]] = []
    for t in range_plan(inputs, opts, jobs):
        path = os.path.abspath(t.path)
        last = out[-1] if out else None
        short = last is not None and (last["cost"] < min_piece or (t.stop is None and t.cost < min_piece))
        if last is not None and last["path"] == path and short and t.find:
            last["stop"] = t.stop   # a Dask task costs milliseconds: ranges below min_piece go together
            last["cost"] += t.cost
            continue
        out.append({"path": path, "filename": t.filename, "start": t.start, "stop": t.stop,
                    "header": t.header, "find": t.find, "cost": t.cost})
    for i, s in enumerate(out):
        s["name"] = f"m{i:05d}"
    return out


def plan_task(path: str, plan_id: str, specs: List[Dict[str, Any]], ranges: Optional[int], target_bytes: int,
              *groups: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The plan, published as the manifest `path` of task `plan_id` (a task run on a worker once
    every sample is in: `groups`, the results of sample_files, so that the map tasks wait for
    no round trip through the client): the
    split points (base64), the map tasks `specs` (in file order), the order to run them in
    (map_order), the estimated size of the index."""
    samples = [s for g in groups for s in g]
    splits, estimate = choose_splits(samples, ranges, target_bytes)
    body = {"splits": [base64.b64encode(x).decode() for x in splits], "maps": specs, "estimate": estimate,
            "order": map_order(specs, samples), "sampled_lines": sum(s["lines"].count(b"\n") for s in samples)}
    return manifest.publish(path, plan_id, body)


def map_order(specs: Sequence[Dict[str, Any]], samples: Sequence[Dict[str, Any]]) -> List[int]:
    """The map tasks' numbers, longest first by an estimate, so that the workers, taking them in
    this order, finish together. A map task's time goes with the records it indexes far more
    than with its bytes (the kernel inflates only the heads of Wget's `sl` members: on the
    corpus 14 us a line and 0.05 ms a MB), so the estimate is its bytes times the index bytes a
    byte made in the sample windows inside its range (in its file's if none is), plus its bytes
    (for files inflated whole, ~1 ns a byte against 40 ns an index byte). The file order
    ``warchive.index.build.plan`` cuts in puts large ranges first, but 19 MB of one file took
    0.19 s and 29 MB of another 0.06 s, and a file's records are not spread evenly."""
    by_path = {s["path"]: s for s in samples}
    est = []
    for sp in specs:
        s = by_path.get(sp["path"])
        density = INDEX_SHARE
        if s is not None:
            stop = sp["stop"] if sp["stop"] is not None else s["size"]
            inside = [w for w in s["windows"] if sp["start"] <= w[0] < stop]
            density = sum(w[2] for w in inside) / max(1, sum(w[1] for w in inside)) if inside else \
                len(s["lines"]) / max(1, s["sampled"])
        est.append(sp["cost"] * (1 + MAP_NS_PER_INDEX_BYTE * density))
    return sorted(range(len(specs)), key=lambda i: (-est[i], i))


def splits_of(plan: Dict[str, Any]) -> List[bytes]:
    """The split points of a plan (plan_task's manifest)."""
    return [base64.b64decode(x) for x in plan["splits"]]


@functools.lru_cache(maxsize=4)
def load_splits(path: str, plan_id: str) -> Tuple[bytes, ...]:
    """The split points of the plan `plan_id` saved at `path`, read once per process: each map
    task needs them, and a key range a split, so that passed with every task they would grow as
    tasks x ranges (100,000 x 20,000 at 100 TB), and as a Dask dependency they are fetched
    before the task runs, which lets a worker run its tasks out of the plan's order."""
    m = manifest.load(path)
    if m is None or m.get("key") != plan_id:
        raise IndexFormatError(path, None, "not the plan of this job (another run replaced it?); run the command again")
    return tuple(splits_of(m))
