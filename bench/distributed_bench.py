"""Benchmark: warchive.distributed on 1 and 2 worker processes over the benchmark corpus.

    .venv/bin/python bench/distributed_bench.py [CORPUS] [--ranges N] [--pairs N] [--times N] [-o RESULTS.txt]

Runs are paired (1 worker, 2 workers, 1, 2, ...: the machine is shared and noisy) and each
output is checked byte for byte against the single-machine one (`warchive index --sort`,
`warchive build` of it, `warchive zipnum` of it) before its time counts. Reported per run:
wall time by stage, map GB/s per worker (input bytes over map seconds x workers), merge
lines/s, bytes shuffled (runs) and written, the load average, the CPU seconds of the client's
process and the workers, and how many cores other jobs took meanwhile ("others": at normal
priority, measured from /proc/stat less our own CPU; "niced": at low priority, the fuzzers,
which nonetheless take up to a core when the kernel shares the CPU by session, as it does
with kernel.sched_autogroup_enabled = 1: nice orders tasks only within a session). The speed-ups are summed up over all pairs and over the pairs
in which other jobs took less than 0.25 of a core (the machine is shared: a profiler run by
someone else at normal priority takes a core of the two). The cluster's start-up is not
timed. With --times N (N > 1) the corpus is then indexed again as a corpus N times as
large, in a second table: each WARC file given N times under distinct names (symbolic links
in the temporary directory, so every copy's lines differ by their filename field and none
collapse), so that the fixed costs of a run (Dask's round trips, the sample, the final copy)
weigh as they would on a larger job.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

from distributed import Client

from warchive.distributed import index as dindex, local_cluster
from warchive.index.build import index_paths
from warchive.index.cdx import IndexOptions
from warchive.index.segment import build_segment
from warchive.index.zipnum import write_zipnum

REPO = Path(__file__).resolve().parents[1]   # the corpus's default: corpus/ at the repository root


CLEAN = 0.25   # cores other jobs may take during both runs of a pair that counts as undisturbed


def _digest_tree(path: str) -> str:
    h = hashlib.sha256()
    names = sorted(os.listdir(path)) if os.path.isdir(path) else [""]
    for n in names:
        with open(os.path.join(path, n) if n else path, "rb") as f:
            h.update(n.encode() + b"\0" + hashlib.sha256(f.read()).digest())
    return h.hexdigest()


def _reference(inputs: List[str], d: str) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    os.makedirs(d, exist_ok=True)
    cdxj = os.path.join(d, "ref.cdxj")
    for jobs in (1, 2):
        busy, own = _busy_ticks()[0], sum(os.times()[:2])
        t = time.perf_counter()
        with open(cdxj, "wb") as f:
            index_paths(inputs, f.write, IndexOptions(), jobs=jobs, sort=True)
        out[f"index_sort_j{jobs}_s"] = wall = time.perf_counter() - t
        out[f"others_j{jobs}"] = max(0.0, (_busy_ticks()[0] - busy) / os.sysconf("SC_CLK_TCK")
                                     - (sum(os.times()[:2]) - own)) / wall
    t = time.perf_counter()
    build_segment([cdxj], os.path.join(d, "ref.seg"))
    out["build_s"] = time.perf_counter() - t
    t = time.perf_counter()
    write_zipnum(cdxj, os.path.join(d, "refzip") + "/")
    out["zipnum_s"] = time.perf_counter() - t
    out["digests"] = {"cdxj": _digest_tree(cdxj), "segment": _digest_tree(os.path.join(d, "ref.seg")),
                      "zipnum": _digest_tree(os.path.join(d, "refzip"))}
    return out


def _copies(corpus: str, times: int, d: str) -> List[str]:
    """The corpus's WARC files `times` over, as symbolic links with distinct names in `d`."""
    os.makedirs(d)
    files = sorted(os.path.join(corpus, n) for n in os.listdir(corpus) if ".warc" in n or ".arc" in n) \
        if os.path.isdir(corpus) else [corpus]
    out = []
    for i in range(times):
        for f in files:
            link = os.path.join(d, f"copy{i}-{os.path.basename(f)}")
            os.symlink(os.path.abspath(f), link)
            out.append(link)
    return out


def _busy_ticks() -> Tuple[int, int]:
    """CPU time (clock ticks) the machine has spent since boot running processes at normal
    priority (user, system, interrupts), and at a lower one (nice: the fuzzers)."""
    with open("/proc/stat") as f:
        user, nice, system, _idle, _iowait, irq, softirq = [int(x) for x in f.readline().split()[1:8]]
    return user + system + irq + softirq, nice


def _own_cpu(client: Client) -> float:
    """CPU seconds of this process (the client, and a local cluster's scheduler and nannies) and
    of the workers."""
    total = 0
    for pid in [os.getpid()] + list(client.run(os.getpid).values()):
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])   # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


def _run(client: Client, inputs: List[str], d: str, kind: str, ranges: int, ref: Dict[str, Any]) -> Dict[str, Any]:
    out = os.path.join(d, {"cdxj": "x.cdxj", "segment": "x.seg", "zipnum": "xzip/"}[kind])
    (busy, nice), own = _busy_ticks(), _own_cpu(client)
    t = time.perf_counter()
    s = dindex(inputs, out, client, kind=kind, ranges=ranges)
    wall = time.perf_counter() - t
    own = _own_cpu(client) - own
    busy2, nice2 = _busy_ticks()
    tick = os.sysconf("SC_CLK_TCK")
    others = max(0.0, (busy2 - busy) / tick - own) / wall   # cores other jobs at normal priority took
    niced = (nice2 - nice) / tick / wall
    got = _digest_tree(out.rstrip("/"))
    assert got == ref["digests"][kind], f"{kind}: output differs from the single-machine one"
    w = s["workers"]
    return {"kind": kind, "workers": w, "wall_s": wall, "stages": s["stages"],
            "map_GBps_per_worker": s["bytes_in"] / 1e9 / (s["stages"]["map"] * w),
            "merge_lines_per_s": s["lines"] / s["stages"]["merge"], "lines": s["lines"],
            "bytes_in": s["bytes_in"], "bytes_shuffled": s["bytes_shuffled"], "bytes_written": s["bytes_written"],
            "skew": s["skew"], "tasks": s["tasks"], "load": os.getloadavg()[0], "cpu_s": own, "others": others,
            "niced": niced}


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?", default=os.environ.get("WARCHIVE_CORPUS", str(REPO / "corpus")))
    ap.add_argument("--ranges", type=int, default=8)
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument("--times", type=int, default=1, help="also index the corpus N times over (a second table)")
    ap.add_argument("-o", "--output")
    a = ap.parse_args(argv)
    texts = []
    with tempfile.TemporaryDirectory(prefix="warchive-dbench-") as d:
        clusters = {n: local_cluster(n)
                    for n in (1, 2)}
        clients = {n: Client(c) for n, c in clusters.items()}
        try:
            for c in clients.values():   # warm: imports on the workers, the page cache
                dindex([a.corpus], os.path.join(d, "warm.cdxj"), c, ranges=a.ranges)
            variants = [(a.corpus, [a.corpus])]
            if a.times > 1:
                variants.append((f"{a.corpus} x{a.times}", _copies(a.corpus, a.times, os.path.join(d, "copies"))))
            for v, (label, inputs) in enumerate(variants):
                ref = _reference(inputs, os.path.join(d, f"ref{v}"))
                runs = _pairs(clients, inputs, d, a, ref)
                texts.append(_report(label, a, ref, runs))
        finally:
            for c in clients.values():
                c.close()
            for cl in clusters.values():
                cl.close()
    text = "\n".join(texts)
    print(text)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    return 0


def _pairs(clients: Dict[int, Client], inputs: List[str], d: str, a: Any, ref: Dict[str, Any]) -> List[Dict[str, Any]]:
    runs = []
    for pair in range(a.pairs):
        for n in (1, 2):
            for kind in ("cdxj", "segment", "zipnum"):
                r = _run(clients[n], inputs, d, kind, a.ranges, ref)
                r["pair"] = pair
                runs.append(r)
                print(json.dumps(r), file=sys.stderr)
    return runs


def _report(label: str, a: Any, ref: Dict[str, Any], runs: List[Dict[str, Any]]) -> str:
    lines = [f"warchive.distributed on {label}: {runs[0]['bytes_in'] / 1e6:.1f} MB in, {runs[0]['lines']} lines, "
             f"{a.ranges} key ranges; {os.cpu_count()} cores shared with other jobs",
             f"single machine: index --sort -j1 {ref['index_sort_j1_s']:.2f} s, -j2 {ref['index_sort_j2_s']:.2f} s "
             f"(other jobs took {ref['others_j1']:.2f} and {ref['others_j2']:.2f} cores); "
             f"build {ref['build_s']:.2f} s; zipnum {ref['zipnum_s']:.2f} s",
             "", "pair kind     workers  wall s  sample   map  merge  enc+join  map GB/s/worker  merge lines/s  "
             "shuffled MB  written MB  skew  load  cpu s  others  niced"]
    for r in runs:
        st = r["stages"]
        lines.append(f"{r['pair']:>4} {r['kind']:<8} {r['workers']:>7} {r['wall_s']:7.2f} {st['sample']:7.2f} "
                     f"{st['map']:5.2f} {st['merge']:6.2f} {st.get('encode+join', st.get('join', 0)):9.2f} "
                     f"{r['map_GBps_per_worker']:16.3f} {r['merge_lines_per_s']:14,.0f} "
                     f"{r['bytes_shuffled'] / 1e6:12.1f} {r['bytes_written'] / 1e6:11.1f} {r['skew']:5.2f} "
                     f"{r['load']:5.2f} {r['cpu_s']:6.2f} {r['others']:7.2f} {r['niced']:6.2f}")
    lines.append("")
    for kind in ("cdxj", "segment", "zipnum"):
        for pair in sorted({r["pair"] for r in runs}):
            one = [r for r in runs if r["kind"] == kind and r["pair"] == pair and r["workers"] == 1]
            two = [r for r in runs if r["kind"] == kind and r["pair"] == pair and r["workers"] == 2]
            if one and two:
                lines.append(f"speed-up 2 vs 1 workers, {kind}, pair {pair}: "
                             f"{one[0]['wall_s'] / two[0]['wall_s']:.2f}x (map stage "
                             f"{one[0]['stages']['map'] / two[0]['stages']['map']:.2f}x)")
    for kind in ("cdxj", "segment", "zipnum"):
        pairs = list(zip([r for r in runs if r["kind"] == kind and r["workers"] == 1],
                         [r for r in runs if r["kind"] == kind and r["workers"] == 2]))
        for label, chosen in (("all", pairs),
                              (f"other jobs under {CLEAN} cores in both runs", [p for p in pairs if max(
                                  p[0]["others"], p[1]["others"]) < CLEAN])):
            ups = sorted(o["wall_s"] / t["wall_s"] for o, t in chosen)
            if ups:
                lines.append(f"{kind}: speed-up {ups[0]:.2f}-{ups[-1]:.2f}x, median {statistics.median(ups):.2f}x "
                             f"over {len(ups)} pairs ({label})")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
