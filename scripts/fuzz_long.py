"""Run fuzz harnesses until each has run N inputs, in chunks, and log what libFuzzer reports.

    python scripts/fuzz_long.py [--inputs 1000000] [--chunk 1800] [--sanitize] [--log FILE] [--balance] NAME...
    python scripts/fuzz_long.py --report [--log FILE]

For each NAME in turn: ``scripts/fuzz.sh [--sanitize] NAME`` with ``-max_total_time=CHUNK``
(REFRESH=0: the sanitized venv is built once, before, by ``scripts/fuzz.sh --sanitize NAME 1``)
and again, over the corpus the chunks before it grew (build/fuzz-corpus/NAME), until the inputs
run after start-up add up to N. Inputs are counted from libFuzzer's own lines: ``Done R runs``
less the ``#I INITED`` of the same chunk (the corpus re-read at start-up is not counted again).
While the file PAUSE (default build/fuzz-pause) exists no new chunk starts, so that a
benchmark can have the machine to itself: libFuzzer's -timeout is wall-clock time, so stopping
a running fuzzer (SIGSTOP) would report every input it held as a hang. A chunk that ends with
an exit status other than 0 (a crash, a timeout) stops that harness: its artifact is in
build/fuzz-artifacts/NAME/. One JSON line per chunk goes to the log; ``--report`` prints the
per-harness table of a log. Several of these (one a core) can share one list of NAMEs: each
harness is claimed by the first to reach it (build/fuzz-claims/NAME).

``--balance``: instead of claims, before every chunk the lane reads the log and picks, among the
NAMEs still short of N (and not stopped by a crash), the one the fewest other lanes are running
(build/fuzz-lanes/NAME.PID), then the one with the most fuzzing time left (inputs left over the
rate logged so far); it keeps its harness while no better one is free. So two lanes finish
together: when one harness is left, both run it (libFuzzer processes can share a corpus
directory), each running its share of the inputs the log says are left when its chunk starts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List, Optional

ROOT = Path(__file__).resolve().parents[1]


def parse(text: str) -> Dict[str, int]:
    out: Dict[str, int] = {}
    m = re.search(r"^#(\d+)\s+INITED", text, re.M)
    out["inited"] = int(m.group(1)) if m else 0
    m = re.search(r"^Done (\d+) runs in (\d+) second", text, re.M)
    if m:
        out["runs"], out["seconds"] = int(m.group(1)), int(m.group(2))
    covs = re.findall(r"cov: (\d+) ft: (\d+) corp: (\d+)/(\S+)", text)
    if covs:
        c = covs[-1]
        out["cov"], out["ft"], out["corpus"] = int(c[0]), int(c[1]), int(c[2])
        out["corpus_size"] = c[3]   # type: ignore[assignment]
    m = re.search(r"stat::number_of_executed_units:\s+(\d+)", text)
    if m:
        out["runs"] = int(m.group(1))
    return out


def run_chunk(name: str, runs: int, chunk: int, sanitize: bool, log: Path, pause: Path) -> int:
    """One chunk of NAME (at most RUNS inputs, CHUNK seconds), logged; the inputs it ran, or -1
    when the harness must stop (a crash or timeout, whose artifact the log names, or no input)."""
    while pause.exists():
        time.sleep(5)
    cmd = ["nice", "-n", "19", "bash", str(ROOT / "scripts" / "fuzz.sh")] + (["--sanitize"] if sanitize else []) + [
        name, str(runs), f"-max_total_time={chunk}"]
    t = time.time()
    p = subprocess.run(cmd, cwd=ROOT, env=dict(os.environ, REFRESH="0"), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, errors="replace")
    st = parse(p.stdout)
    inputs = max(0, st.get("runs", 0) - st.get("inited", 0))
    rec = dict(st, name=name, rc=p.returncode, inputs=inputs, wall=round(time.time() - t, 1), started=t,
               sanitize=sanitize)
    if p.returncode != 0:
        rec["tail"] = p.stdout[-4000:]
    with open(log, "a") as f:
        f.write(json.dumps(rec) + "\n")
    if p.returncode != 0:
        print(f"fuzz_long: {name} exited {p.returncode}; see {log}", file=sys.stderr)
        return -1
    if inputs == 0:
        print(f"fuzz_long: {name} ran nothing; see {log}", file=sys.stderr)
        return -1
    return inputs


def logged(rows: List[dict], name: str) -> int:
    """The inputs NAME's chunks that exited 0 ran, by the log's ROWS."""
    return sum(r.get("inputs", 0) for r in rows if r["name"] == name and r["rc"] == 0)


def run_harness(name: str, goal: int, chunk: int, sanitize: bool, log: Path, pause: Path) -> None:
    done = logged(read_log(log), name)
    while done < goal:
        inputs = run_chunk(name, goal - done + 10_000, chunk, sanitize, log, pause)
        if inputs < 0:
            return
        done += inputs


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def pick(names: List[str], goal: int, rows: List[dict], others: Dict[str, int], current: Optional[str]) -> Optional[str]:
    """The harness a --balance lane runs next (see the module's docstring), or None when all are done."""
    done: Dict[str, int] = {n: 0 for n in names}
    seconds: Dict[str, int] = {n: 0 for n in names}
    stopped = set()
    for r in rows:
        if r["name"] not in done:
            continue
        if r["rc"] != 0 or r.get("inputs", 0) == 0:
            stopped.add(r["name"])
        else:
            done[r["name"]] += r["inputs"]
            seconds[r["name"]] += r.get("seconds", 0)
    left = [n for n in names if done[n] < goal and n not in stopped]
    if not left:
        return None

    def time_left(n: str) -> float:
        rate = done[n] / seconds[n] if seconds[n] and done[n] else 200.0   # no chunk yet: a guess
        return (goal - done[n]) / rate

    best = min(left, key=lambda n: (others.get(n, 0), -time_left(n)))
    if current in left and others.get(current, 0) <= others.get(best, 0):
        return current
    return best


def share(left: int, others: int) -> int:
    """The -runs of a chunk when OTHERS lanes run the same harness: its part of the inputs LEFT
    (rounded up), plus 10,000 for the corpus libFuzzer re-reads at start-up (-runs counts them)."""
    return -(-left // (others + 1)) + 10_000


def run_balanced(names: List[str], goal: int, chunk: int, sanitize: bool, log: Path, pause: Path) -> None:
    lanes = log.parent / "fuzz-lanes"
    lanes.mkdir(exist_ok=True)
    me = os.getpid()
    current: Optional[str] = None
    try:
        while True:
            others: Dict[str, int] = {}
            for f in lanes.iterdir():
                n, _, pid = f.name.rpartition(".")
                if pid.isdigit() and int(pid) != me:
                    if _alive(int(pid)):
                        others[n] = others.get(n, 0) + 1
                    else:
                        f.unlink(missing_ok=True)
            rows = read_log(log)
            name = pick(names, goal, rows, others, current)
            if name is None:
                return
            if name != current:
                if current is not None:
                    (lanes / f"{current}.{me}").unlink(missing_ok=True)
                (lanes / f"{name}.{me}").touch()
                current = name
            done = logged(rows, name)
            run_chunk(name, share(goal - done, others.get(name, 0)), chunk, sanitize, log, pause)
    finally:
        if current is not None:
            (lanes / f"{current}.{me}").unlink(missing_ok=True)


def read_log(log: Path) -> List[dict]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def report(log: Path) -> str:
    rows: Dict[str, dict] = {}
    for r in read_log(log):
        a = rows.setdefault(r["name"], {"inputs": 0, "seconds": 0, "chunks": 0, "crashes": 0})
        a["chunks"] += 1
        a["inputs"] += r.get("inputs", 0)
        a["seconds"] += r.get("seconds", 0)
        a["crashes"] += r["rc"] != 0
        for k in ("cov", "ft", "corpus", "corpus_size"):
            if k in r:
                a[k] = r[k]
    lines = [f"{'harness':<14} {'inputs':>11} {'chunks':>6} {'cov':>6} {'ft':>7} {'corpus':>7} {'s':>7} "
             f"{'exec/s':>7} {'non-0 exits':>11}"]
    for n, a in rows.items():
        rate = a["inputs"] / a["seconds"] if a["seconds"] else 0
        lines.append(f"{n:<14} {a['inputs']:>11,} {a['chunks']:>6} {a.get('cov', 0):>6} {a.get('ft', 0):>7} "
                     f"{a.get('corpus', 0):>7} {a['seconds']:>7,} {rate:>7.0f} {a['crashes']:>11}")
    lines.append(f"total: {sum(a['inputs'] for a in rows.values()):,} inputs in "
                 f"{sum(a['seconds'] for a in rows.values()):,} s of fuzzing")
    return "\n".join(lines)


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*")
    ap.add_argument("--inputs", type=int, default=1_000_000)
    ap.add_argument("--chunk", type=int, default=1800)
    ap.add_argument("--sanitize", action="store_true")
    ap.add_argument("--log", default=str(ROOT / "build" / "fuzz-long.jsonl"))
    ap.add_argument("--pause", default=str(ROOT / "build" / "fuzz-pause"))
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--balance", action="store_true", help="pick a harness before every chunk (see above)")
    a = ap.parse_args(argv)
    log = Path(a.log)
    if a.report:
        print(report(log))
        return 0
    log.parent.mkdir(parents=True, exist_ok=True)
    if a.balance:
        run_balanced(a.names, a.inputs, a.chunk, a.sanitize, log, Path(a.pause))
        return 0
    claims = log.parent / "fuzz-claims"
    claims.mkdir(exist_ok=True)
    for n in a.names:
        try:
            (claims / n).mkdir()   # atomic: another lane over the same list has it
        except FileExistsError:
            continue
        run_harness(n, a.inputs, a.chunk, a.sanitize, log, Path(a.pause))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
