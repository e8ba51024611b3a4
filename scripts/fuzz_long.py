"""Run fuzz harnesses until each has run N inputs, in chunks, and log what libFuzzer reports.

    python scripts/fuzz_long.py [--inputs 1000000] [--chunk 1800] [--sanitize] [--log FILE] NAME...
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
from typing import Dict, List

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


def run_harness(name: str, goal: int, chunk: int, sanitize: bool, log: Path, pause: Path) -> None:
    done = sum(r.get("inputs", 0) for r in read_log(log) if r["name"] == name and r["rc"] == 0)
    while done < goal:
        while pause.exists():
            time.sleep(5)
        cmd = ["nice", "-n", "19", "bash", str(ROOT / "scripts" / "fuzz.sh")] + (["--sanitize"] if sanitize else []) + [
            name, str(goal - done + 10_000), f"-max_total_time={chunk}"]
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
            return
        if inputs == 0:
            print(f"fuzz_long: {name} ran nothing; see {log}", file=sys.stderr)
            return
        done += inputs


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
    a = ap.parse_args(argv)
    log = Path(a.log)
    if a.report:
        print(report(log))
        return 0
    log.parent.mkdir(parents=True, exist_ok=True)
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
