"""``index(inputs, out, client=...)``: a sorted index of WARC/ARC files built on a Dask cluster,
byte for byte what one machine writes.

The stages, each a set of Dask tasks whose results are small manifests
(only paths, split points and counts travel; lines go through files in the
scratch directory, which every worker and the client must see):

1. sample  a few tasks (2 per worker at most, the files grouped by cost:
           warchive.distributed.plan.sample_files), then one task that
           chooses the split points of the key ranges and the order of the
           map tasks, and saves the plan as ``plan.json`` in the scratch
           directory; only the plan comes back to the client.
2. map     one task per file or byte range (warchive.distributed.runs),
           longest first: one sorted run, cut by key range. The client
           then checks, as ``warchive index -j`` does, that the ranges of
           each file met, and indexes a range again from where the one
           before it ended if not.
3. merge   one task per key range (warchive.distributed.shards): its part.
4. encode  (segment, ZipNum) one task per key range: the blocks that start
           in it, after one task that decides which (warchive.distributed.
           pieces; for a segment the serial block plan of
           warchive.distributed.blocks).
5. join    one task: the output (warchive.distributed.assemble).

The tasks of stages 3 to 5 are submitted together once the map results are
in: each waits in Dask for those it reads, with no round trip through the
client between them (10-25 ms each on the corpus).

Every task is skipped when its manifest says it is done with the same key
(warchive.distributed.manifest), so a rerun after a crash reuses finished
work; Dask reruns the tasks of a worker that died. The scratch directory is
removed when the output is published (unless keep_scratch).
"""

from __future__ import annotations

import json
import os
import shutil
import time
import uuid
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from distributed import Client, Future, as_completed

from ..durable import AtomicOutput
from ..index.cdx import IndexOptions, display_name, iter_inputs
from ..index.zipnum import DEFAULT_LINES_PER_BLOCK
from . import manifest
from .assemble import concat_parts_of, join_segments_of, join_zipnum_of
from .cluster import local_cluster
from .pieces import segment_pieces, zipnum_pieces
from .plan import (MAP_PIECE, OPTION_NAMES, input_identity, map_specs, plan_task, sample_files, sample_groups,
                   sample_windows)
from .progress import Display
from .runs import map_task, run_name
from .shards import merge_task, segment_task, zipnum_task

__all__ = ["index", "KINDS", "DEFAULT_TARGET_BYTES"]

KINDS = ("cdxj", "segment", "zipnum")
DEFAULT_TARGET_BYTES = 256 << 20   # of index lines per key range


def _options_json(opts: IndexOptions) -> Dict[str, Any]:
    o: Dict[str, Any] = {k: getattr(opts, k) for k in OPTION_NAMES}
    if o["records"] is not None and not isinstance(o["records"], str):
        o["records"] = list(o["records"])
    if o["surt_options"]:
        o["surt_options"] = dict(o["surt_options"])
    return o


class _Job:
    def __init__(self, client: Client, plan_dir: str, plan_id: str, report: Callable[[str], object],
                 display: Display) -> None:
        self.client = client
        self.dir = plan_dir
        self.plan_id = plan_id
        self.token = uuid.uuid4().hex[:8]
        self.report = report
        self.display = display
        self.ran: Dict[str, int] = {}
        self.tasks: Dict[str, int] = {}
        self.stages: Dict[str, float] = {}

    def submit(self, stage: str, name: str, fn: Callable[..., Any], *args: Any) -> Future:
        """One task; a task of a stage that is not gathered (plan, blocks) counts as run."""
        self.tasks[stage] = self.tasks.get(stage, 0) + 1
        if stage in ("plan", "blocks"):
            self.ran[stage] = self.ran.get(stage, 0) + 1
        return self.client.submit(fn, *args, key=f"warchive-{stage}-{name}-{self.token}", pure=False)

    def map(self, stage: str, names: Sequence[str], fn: Callable[..., Any], *args: Sequence[Any]) -> List[Future]:
        """One task per name, fn(args[0][i], args[1][i], ...), submitted together: one message
        to the scheduler, not one a task (the client's process, which also runs the scheduler
        of a local cluster, spends 0.8 ms of CPU a task so, 1.4 ms submitting them one by one),
        and run in this order (Dask's priority among tasks submitted together)."""
        self.tasks[stage] = self.tasks.get(stage, 0) + len(names)
        if not names:
            return []
        return list(self.client.map(fn, *args, key=[f"warchive-{stage}-{n}-{self.token}" for n in names],
                                    pure=False))

    def gather(self, stage: str, futures: Sequence[Any]) -> List[Dict[str, Any]]:
        """The results of these futures (and values passed as they are), counted as tasks run."""
        out = list(self.client.gather(list(futures)))
        self.count(stage, out)
        return out

    def count(self, stage: str, results: Sequence[Dict[str, Any]]) -> None:
        self.ran[stage] = self.ran.get(stage, 0) + sum(1 for r in results if r.get("ran", True))


def _plan(job: _Job, paths: List[str], names: List[str], options: Dict[str, Any], opts: IndexOptions,
          ranges: Optional[int], target: int, jobs: int, map_piece: int) -> Any:
    """The plan saved by an earlier run, or the future of the plan task (after the sample tasks,
    `jobs` at most: only the plan comes back to the client, not the samples)."""
    path = os.path.join(job.dir, "plan.json")
    m = manifest.reusable(path, job.plan_id)
    if m is not None:
        return m
    specs = map_specs(paths, opts, jobs, map_piece)
    sizes = [os.path.getsize(p) for p in paths]
    windows = sample_windows(sizes, ranges, target)
    groups = sample_groups([list(f) for f in zip(paths, names, windows, sizes)], jobs)
    n = len(groups)
    samples = job.map("sample", [f"g{i:05d}" for i in range(n)], sample_files, groups, [options] * n)
    job.ran["sample"] = len(samples)
    return job.submit("plan", "plan", plan_task, path, job.plan_id, specs, ranges, target, *samples)


def _submit_maps(job: _Job, plan: Dict[str, Any], options: Dict[str, Any]) -> Dict[Future, Dict[str, Any]]:
    """The map tasks, to run in the plan's order (longest first: warchive.distributed.plan.map_order),
    once the plan is saved (they read its split points from plan.json). Submitted before, they
    would wait for the plan task in Dask, and tasks that a finished task releases together go
    to the free workers in no particular order before Dask's queue, in priority order, takes
    the rest: two large ranges of 17 out of order cost the corpus run 0.1 s of imbalance."""
    specs = [plan["maps"][i] for i in plan["order"]]
    n = len(specs)
    keys = [manifest.digest(job.plan_id, "map", s) for s in specs]
    futures = job.map("map", [s["name"] for s in specs], map_task, specs, [job.plan_id] * n, [options] * n,
                      [job.dir] * n, keys)
    return dict(zip(futures, specs))


def _map(job: _Job, futures: Dict[Future, Dict[str, Any]], specs: List[Dict[str, Any]],
         options: Dict[str, Any]) -> List[Dict[str, Any]]:
    results: Dict[str, Dict[str, Any]] = {}
    per_file: Dict[str, int] = {}
    for s in specs:
        per_file[s["path"]] = per_file.get(s["path"], 0) + 1
    total = sum(s["cost"] for s in specs)
    done = records = files = 0
    for batch in as_completed(list(futures)).batches():   # one gather for the tasks done together
        for fut, r in zip(batch, job.client.gather(batch)):
            s = futures[fut]
            results[s["name"]] = r
            done += s["cost"]
            records += r["records"]
            per_file[s["path"]] -= 1
            files += per_file[s["path"]] == 0
        job.display.update("map", files, len(per_file), done, total, records)
    job.count("map", list(results.values()))
    return _chain(job, [results[s["name"]] for s in specs], specs, options)


def _chain(job: _Job, results: List[Dict[str, Any]], specs: List[Dict[str, Any]],
           options: Dict[str, Any]) -> List[Dict[str, Any]]:
    """Check that each range of a file began where the records of the ranges before it ended
    (as warchive.index.build._Chain does); index a range again from there where it did not."""
    out: List[Dict[str, Any]] = []
    path: Optional[str] = None
    end = 0
    for s, r in zip(specs, results):
        stop = s["stop"] if s["stop"] is not None else os.path.getsize(s["path"])
        right = (s["path"] != path or not s["find"] or (r["begin"] is not None and r["begin"] == end)
                 or (r["begin"] is None and end >= stop))
        path = s["path"]
        if not right:
            if end >= stop:   # the range lies inside a record already indexed
                r = dict(r, ranges={}, files=[], records=0, lines=0, begin=None)
            else:
                redo = dict(s, start=end, find=False, name=s["name"] + "r")
                key = manifest.digest(job.plan_id, "map", redo)
                r = job.gather("map", [job.submit("map", redo["name"], map_task, redo, job.plan_id, options,
                                                  job.dir, key)])[0]
        if r["begin"] is not None:
            end = r["end"]
        for msg in r.get("messages", []):
            job.report(msg)
        out.append(r)
    return out


def index(inputs: Sequence[str], out: str, client: Optional[Client] = None, *, kind: str = "cdxj",
          options: Optional[IndexOptions] = None, ranges: Optional[int] = None,
          target_bytes: int = DEFAULT_TARGET_BYTES, scratch: Optional[str] = None, keep_scratch: bool = False,
          segment_options: Optional[Dict[str, Any]] = None, zipnum_lines: int = DEFAULT_LINES_PER_BLOCK,
          zipnum_parts: int = 1, zipnum_compressor: str = "zlib", zipnum_level: Optional[int] = None,
          map_piece: int = MAP_PIECE, display: Optional[Display] = None) -> Dict[str, Any]:
    """Index `inputs` (files and directories every worker can read) on the Dask cluster of `client`
    (None: a LocalCluster of this machine's cores) into `out`: with kind "cdxj" the file
    `warchive index --sort` writes, "segment" the segment `warchive build` writes of it,
    "zipnum" the cluster `warchive zipnum` writes of it (`out` a directory or prefix).
    `ranges` key ranges (None: enough for about `target_bytes` of lines each); map tasks of at
    least `map_piece` bytes (but a file's last: large files are cut). Returns the
    summary: counts, per-stage seconds, bytes shuffled and written, the ranges' sizes and skew,
    tasks planned and run per stage."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    t0 = time.monotonic()
    opts = options if options is not None else IndexOptions()
    own_cluster = None
    if client is None:
        own_cluster = local_cluster(os.cpu_count() or 1)
        client = Client(own_cluster)
    try:
        return _index(inputs, out, client, kind, opts, ranges, target_bytes, scratch, keep_scratch,
                      segment_options or {}, zipnum_lines, zipnum_parts, zipnum_compressor, zipnum_level,
                      map_piece, display or Display(), t0)
    finally:
        if own_cluster is not None:
            client.close()
            own_cluster.close()


def _index(inputs: Sequence[str], out: str, client: Client, kind: str, opts: IndexOptions,
           ranges: Optional[int], target: int, scratch: Optional[str], keep: bool, seg_opts: Dict[str, Any],
           zlines: int, zparts: int, zcomp: str, zlevel: Optional[int], map_piece: int, display: Display,
           t0: float) -> Dict[str, Any]:
    for p in inputs:
        if not os.path.exists(p):
            raise FileNotFoundError(2, "no such file or directory", p)
    paths = list(iter_inputs(inputs))
    names = [display_name(p, opts.dir_root) for p in paths]
    paths = [os.path.abspath(p) for p in paths]
    options = _options_json(opts)
    workers = max(1, len(client.scheduler_info().get("workers", {})))
    scratch = os.path.abspath(scratch or out.rstrip(os.sep) + ".warchive-scratch")
    plan_id = manifest.digest("plan", [input_identity(p) for p in paths], names, options, ranges, target, map_piece)
    plan_dir = os.path.join(scratch, plan_id[:16])
    os.makedirs(plan_dir, exist_ok=True)
    job = _Job(client, plan_dir, plan_id, opts.report, display)

    t = time.monotonic()
    display.stage("sample")
    planned = _plan(job, paths, names, options, opts, ranges, target, 2 * workers, map_piece)
    plan = planned.result() if isinstance(planned, Future) else planned
    futures = _submit_maps(job, plan, options)
    job.stages["sample"] = time.monotonic() - t

    t = time.monotonic()
    maps = _map(job, futures, plan["maps"], options)
    job.stages["map"] = time.monotonic() - t

    t = time.monotonic()
    display.stage("merge")
    nranges = len(plan["splits"]) + 1
    merging = _merge(job, maps, nranges, kind == "segment")
    encoded: List[Future] = []
    if kind == "cdxj":
        final = job.submit("join", "cdxj", concat_parts_of, out, job.dir, *merging)
    elif kind == "segment":
        final, encoded = _segment(job, merging, out, seg_opts)
    else:
        final, encoded = _zipnum(job, merging, out, zlines, zparts, zcomp, zlevel)
    merged = job.gather("merge", merging)
    job.stages["merge"] = time.monotonic() - t

    t = time.monotonic()
    display.stage("encode and join" if kind != "cdxj" else "join")
    result = job.gather("join", [final])[0]
    if encoded:
        job.gather("encode", encoded)
    written = result["bytes"]
    job.stages["encode+join" if kind != "cdxj" else "join"] = time.monotonic() - t
    display.close()
    if not keep:
        shutil.rmtree(scratch, ignore_errors=True)
    sizes = [m["bytes"] for m in merged]
    mean = sum(sizes) / len(sizes) if sizes else 0
    return {
        "output": out, "kind": kind, "inputs": len(paths), "workers": workers,
        "bytes_in": sum(os.path.getsize(p) for p in paths),
        "records": sum(m["records"] for m in maps), "errors": sum(m["errors"] for m in maps),
        "defects": sum(m["defects"] for m in maps), "lines": sum(m["lines"] for m in merged),
        "ranges": nranges, "range_bytes": sizes, "range_lines": [m["lines"] for m in merged],
        "target_bytes": target, "estimated_bytes": plan["estimate"],
        "skew": (max(sizes) / mean) if mean else 1.0,
        "bytes_shuffled": sum(c[1] for m in maps for c in m["ranges"].values()),
        "bytes_written": written, "stages": job.stages, "seconds": time.monotonic() - t0,
        "tasks": job.tasks, "tasks_run": job.ran, "scratch": scratch,
    }


def _merge(job: _Job, maps: List[Dict[str, Any]], nranges: int, lengths: bool) -> List[Any]:
    """For each key range, the future of its merge task, or its manifest when it is empty."""
    args: List[List[Any]] = []
    out: List[Any] = []
    for k in range(nranges):
        used = [m for m in maps if str(k) in m["ranges"]]
        key = manifest.digest(job.plan_id, "merge", k, [m["key"] for m in used], lengths)
        if not used:   # an empty key range: nothing to merge, no part
            out.append({"range": k, "lines": 0, "bytes": 0, "headers": 0, "key": key, "files": [], "ran": False})
            continue
        runs = [[os.path.join(job.dir, run_name(m["name"])), m["ranges"][str(k)][2], m["ranges"][str(k)][1]]
                for m in used]
        args.append([k, runs, job.dir, key, lengths])
        out.append(None)
    got = iter(job.map("merge", [f"r{a[0]:05d}" for a in args], merge_task, *zip(*args)))
    return [m if m is not None else next(got) for m in out]


def _segment(job: _Job, merging: List[Any], out: str, seg_opts: Dict[str, Any]) -> Tuple[Future, List[Future]]:
    """The segment's tasks after the merges, all submitted at once (each waits in Dask for the
    ones before): where its blocks close (one task), one encode task a key range, the join;
    the futures of the join and of the encode tasks."""
    n = len(merging)
    pieces = job.submit("blocks", "blocks", segment_pieces, job.plan_id, job.dir, seg_opts, *merging)
    encoded = job.map("encode", [f"s{k:05d}" for k in range(n)], segment_task, range(n), [pieces] * n,
                      [job.dir] * n, [seg_opts] * n)
    return job.submit("join", "segment", join_segments_of, out, job.dir, seg_opts, *encoded), encoded


def _zipnum(job: _Job, merging: List[Any], out: str, lines: int, nparts: int, comp: str,
            level: Optional[int]) -> Tuple[Future, List[Future]]:
    """The ZipNum cluster's tasks after the merges, as _segment's."""
    n = len(merging)
    plan = job.submit("blocks", "zipnum", zipnum_pieces, job.plan_id, job.dir, lines, comp, level, *merging)
    encoded = job.map("encode", [f"z{k:05d}" for k in range(n)], zipnum_task, range(n), [plan] * n, [job.dir] * n,
                      [lines] * n, [comp] * n, [level] * n)
    return job.submit("join", "zipnum", join_zipnum_of, out, job.dir, nparts, plan, *encoded), encoded


def write_summary(summary: Dict[str, Any], path: str) -> None:
    """The summary as JSON (bench scripts keep it)."""
    with AtomicOutput(path) as o:
        o.write(json.dumps(summary, indent=1, sort_keys=True).encode() + b"\n")
