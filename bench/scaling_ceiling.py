"""Benchmark: how far this machine's cores scale at all, without Dask or warchive's plan.

    .venv/bin/python bench/scaling_ceiling.py [CORPUS] [--rounds N] [--jobs python,inflate,index] [--repeat K] [-o RESULTS.txt]

The distributed index's goal (2 workers >= 1.8x one) presumes that two processes on two
cores each run as fast as one alone. This measures that premise: a fixed job is run by one
process alone, then by two processes at once (each its own copy of the job), and the speed-up
is 2 x t(alone) / t(pair) (the pair's wall time, the slower of the two). Three jobs:

- ``python``: a pure-Python loop (integer arithmetic, a few KB of state: no memory traffic);
- ``inflate``: zlib inflation of the corpus's gzip members (Python's gzip module) (the map stage's first half);
- ``index``: warchive's index of every corpus file to CDXJ lines (inflate, parse, SURT,
  lines), through ``warchive.index.build.index_paths``;
- ``map``: the distributed index's map tasks (warchive.distributed.runs.map_task) over the
  corpus, in one process, without Dask: the index, the sort and the run written to scratch.

Rounds alternate alone/pair so that a change in the host's load falls on both. Each process
is started and warmed (imports, one untimed pass over a small piece) before the timed pass,
and all processes of a round start the timed pass at one barrier.
"""

from __future__ import annotations

import argparse
import gzip
import multiprocessing as mp
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Callable, Dict, List

REPO = Path(__file__).resolve().parents[1]   # the corpus's default: corpus/ at the repository root


def _python_job(_: List[str]) -> int:
    x = 0
    for i in range(12_000_000):
        x = (x * 31 + i) & 0xFFFFFFFF
    return x


def _inflate_job(paths: List[str]) -> int:
    n = 0
    for p in paths:
        with gzip.open(p, "rb") as f:
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    break
                n += len(chunk)
    return n


def _index_job(paths: List[str]) -> int:
    from warchive.index.build import index_paths
    from warchive.index.cdx import IndexOptions
    n = [0]

    def write(b: bytes) -> None:
        n[0] += len(b)
    index_paths(paths, write, IndexOptions())
    return n[0]


def _map_job(paths: List[str]) -> int:
    import shutil
    import tempfile

    from warchive.distributed import manifest
    from warchive.distributed.plan import load_splits, map_specs
    from warchive.distributed.runs import map_task
    from warchive.index.cdx import IndexOptions
    d = tempfile.mkdtemp()
    try:
        specs = map_specs(paths, IndexOptions(), 2)
        manifest.publish(os.path.join(d, "plan.json"), "p", {"splits": [], "maps": specs})
        load_splits.cache_clear()
        n = 0
        for i, s in enumerate(specs):
            n += map_task(dict(s, name=f"m{i:05d}"), "p", {}, d, "k")["lines"]
        return n
    finally:
        shutil.rmtree(d)


JOBS: Dict[str, Callable[[List[str]], int]] = {"python": _python_job, "inflate": _inflate_job,
                                                "index": _index_job, "map": _map_job}


def _worker(job: str, paths: List[str], start: "mp.synchronize.Barrier", out: "mp.Queue") -> None:
    JOBS[job](paths[:1] if job != "python" else [])   # warm: imports, page cache, first allocations
    start.wait()
    t = time.perf_counter()
    JOBS[job](paths)
    out.put(time.perf_counter() - t)


def timed(job: str, paths: List[str], procs: int) -> float:
    """The time of the slowest of `procs` processes each running the job once, started at one barrier."""
    ctx = mp.get_context("fork")
    start, out = ctx.Barrier(procs + 1), ctx.Queue()
    # the second process goes over the files from the middle of the list on: the two read
    # different bytes at any moment, as two Dask workers do (the same bytes at once share the CPU's cache)
    cuts = [i * len(paths) // 2 for i in range(procs)]
    ps = [ctx.Process(target=_worker, args=(job, paths[c:] + paths[:c], start, out)) for c in cuts]
    for p in ps:
        p.start()
    start.wait()
    times = [out.get() for _ in ps]
    for p in ps:
        p.join()
    return max(times)


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", default=os.environ.get("WARCHIVE_CORPUS", str(REPO / "corpus")))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--jobs", default="python,inflate,index")
    ap.add_argument("--repeat", type=int, default=1, help="each process goes over the corpus this many times")
    ap.add_argument("-o", "--output")
    a = ap.parse_args(argv)
    paths = sorted(os.path.join(a.corpus, n) for n in os.listdir(a.corpus)
                   if n.endswith((".warc.gz", ".arc.gz", ".warc")))
    paths = paths * a.repeat
    size = sum(os.path.getsize(p) for p in paths)
    lines = [f"scaling ceiling: {len(paths)} files, {size / 1e6:.1f} MB, {os.cpu_count()} cores, "
             f"{a.rounds} rounds (alone, pair, alone, pair, ...)",
             f"{'job':8} {'round':>5} {'alone s':>8} {'pair s':>8} {'speed-up':>9}"]
    print(lines[0], flush=True)
    summary = []
    for job in a.jobs.split(","):
        ups = []
        for r in range(a.rounds):
            alone = timed(job, paths, 1)
            pair = timed(job, paths, 2)
            ups.append(2 * alone / pair)
            lines.append(f"{job:8} {r:>5} {alone:8.2f} {pair:8.2f} {ups[-1]:8.2f}x")
            print(lines[-1], flush=True)
        summary.append(f"{job}: 2 processes vs 1, speed-up {min(ups):.2f}-{max(ups):.2f}x, "
                       f"median {statistics.median(ups):.2f}x over {a.rounds} rounds")
    lines += [""] + summary
    print("\n".join(summary))
    if a.output:
        with open(a.output, "a") as f:
            f.write("\n".join(lines) + "\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
