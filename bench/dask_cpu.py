"""Where the CPU of a distributed index goes, thread by thread (Linux /proc).

    .venv/bin/python bench/dask_cpu.py [CORPUS] [--workers N] [--times K] [--runs R]

Starts warchive's local cluster of N workers, indexes the corpus given K times (symbolic
links under distinct names, as bench/distributed_bench.py does) once to warm up, then R
times, and prints for each run its wall time and stages and the CPU seconds of every thread
of the client's process (which holds a local cluster's scheduler) and of the workers, from
/proc/PID/task/TID/stat before and after. A worker's busiest thread is the one that runs the
tasks; the others are its event loop. With as many workers as cores, whatever the scheduler
and the event loops spend is taken from the tasks; with one worker on two cores it is not.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Tuple

from distributed import Client

from distributed_bench import _copies   # (bench/ is this script's directory)
from warchive.distributed import index as dindex, local_cluster

REPO = Path(__file__).resolve().parents[1]   # the corpus's default: corpus/ at the repository root

TICK = os.sysconf("SC_CLK_TCK")


def thread_cpu(pid: int) -> Dict[Tuple[int, int], float]:
    out: Dict[Tuple[int, int], float] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except FileNotFoundError:
            continue
        out[(pid, int(tid))] = (int(fields[11]) + int(fields[12])) / TICK
    return out


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpus", nargs="?", default=os.environ.get("WARCHIVE_CORPUS", str(REPO / "corpus")))
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--times", type=int, default=4)
    ap.add_argument("--runs", type=int, default=3)
    a = ap.parse_args(argv)
    d = tempfile.mkdtemp()
    try:
        inputs = _copies(a.corpus, a.times, os.path.join(d, "copies"))
        with local_cluster(a.workers) as cluster, Client(cluster) as client:
            workers = sorted(client.run(os.getpid).values())
            pids = [os.getpid()] + workers
            dindex(inputs, os.path.join(d, "warm.cdxj"), client, kind="cdxj", ranges=8)
            for r in range(a.runs):
                before: Dict[Tuple[int, int], float] = {}
                for p in pids:
                    before.update(thread_cpu(p))
                t = time.perf_counter()
                s = dindex(inputs, os.path.join(d, f"x{r}.cdxj"), client, kind="cdxj", ranges=8)
                wall = time.perf_counter() - t
                after: Dict[Tuple[int, int], float] = {}
                for p in pids:
                    after.update(thread_cpu(p))
                used = {k: v - before.get(k, 0.0) for k, v in after.items() if v - before.get(k, 0.0) > 0}
                stages = " ".join(f"{k} {v:.2f}" for k, v in s["stages"].items())
                print(f"run {r}: {a.workers} worker(s), corpus x{a.times}, wall {wall:.2f} s ({stages}); "
                      f"CPU {sum(used.values()):.2f} s")
                for (pid, tid), v in sorted(used.items(), key=lambda kv: -kv[1]):
                    role = "client+scheduler" if pid == os.getpid() else f"worker {workers.index(pid)}"
                    print(f"    {role:18} thread {tid:<8} {v:6.2f} s")
    finally:
        shutil.rmtree(d)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
