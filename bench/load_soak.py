"""``warchive serve`` held under load for minutes: wrk at 200 connections on loopback,
a mix of replay requests over the corpus, the server's RSS sampled, twice: once as is, once
with the collection changed underneath (WARCs added, each found by the server without a
restart, and the collection compacted, again and again).

    python bench/load_soak.py [--corpus DIR] [--seconds 300] [--conns 200] [--out bench/results/load-DATE]

The mix, shuffled: 35 % rewritten HTML (``mp_``), 35 % images as archived (``id_``), 10 %
TimeGates (307, ``--redirect-to-exact``), 10 % TimeMaps, 10 % CDX queries (``output=json``,
``limit=10``), over 500 captures of each kind. Every distinct path is fetched once first and
must answer its status. Figures: requests/s, p50/p99/p99.9/max latency, answers by status
class, socket errors (connect/read/write/timeout; wrk's timeout is 10 s), RSS every 2 s (first
and last minute's maximum; OUT.svg plots both runs), and for the second run the compaction
cycles and how long the server took to find each new segment. Exit 1 if any request failed
(a socket error, a 4xx or 5xx) or a churn cycle failed; nothing else is judged.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Dict, List, Optional

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "src"))

from compare_replay import build, check, paths as row_paths   # noqa: E402
from loadkit import Churn, Sampler, run_wrk, serve, svg_plot   # noqa: E402


def mix(caps: List[dict], n: int, seed: int = 17) -> Dict[str, List[str]]:
    rows = row_paths(caps, n)
    urls = sorted({c["url"] for c in caps if c.get("status") == "200" and c.get("mime") == "text/html"})
    random.Random(seed).shuffle(urls)
    rows["(e) CDX query"] = [f"/coll/cdx?url={urllib.parse.quote(u, safe='')}&output=json&limit=10" for u in urls[:n]]
    return rows


def weighted(rows: Dict[str, List[str]], total: int, seed: int = 17) -> List[str]:
    share = {"(a)": 35, "(b)": 35, "(c)": 10, "(d)": 10, "(e)": 10}
    rnd = random.Random(seed)
    out: List[str] = []
    for row, ps in rows.items():
        k = total * share[row[:3]] // 100
        out += [ps[i % len(ps)] for i in range(k)]
    rnd.shuffle(out)
    return out


def summary(rss: List[tuple]) -> Dict[str, float]:
    first = [k for t, k in rss if t <= 60] or [0]
    last = [k for t, k in rss if t >= rss[-1][0] - 60] or [0]
    return {"first_min_max_mib": max(first) / 1024, "last_min_max_mib": max(last) / 1024,
            "max_mib": max(k for _, k in rss) / 1024, "samples": len(rss)}


def failed(r: Dict) -> List[str]:
    bad = [f"{k} errors: {v}" for k, v in r["errors"].items() if v and k != "status"]
    bad += [f"{r['status'][c]} answers {c}" for c in ("4xx", "5xx") if r["status"].get(c)]
    return bad


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=os.environ.get("WARCHIVE_CORPUS", str(REPO / "corpus")))
    ap.add_argument("--seconds", type=int, default=300)
    ap.add_argument("--conns", type=int, default=200)
    ap.add_argument("--pages", type=int, default=500)
    ap.add_argument("--out", default=str(REPO / "bench" / "results" / f"load-{time.strftime('%Y-%m-%d')}"))
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="load-soak-"))
    out = Path(args.out)
    lines: List[str] = []
    def say(s: str = "") -> None:
        print(s, flush=True)
        lines.append(s)
    bad: List[str] = []
    results: Dict[str, Dict] = {}
    try:
        wroot, _, caps = build(Path(args.corpus), work)
        rows = mix(caps, args.pages)
        load = weighted(rows, 5000)
        say(f"{args.corpus}: {len(caps):,} captures; mix of {len(load)} paths cycled: "
            + ", ".join(f"{k} {len(set(v))}" for k, v in rows.items()))
        say(f"wrk -t2 -c{args.conns} -d{args.seconds}s --timeout 10s; server and wrk share 2 cores; "
            f"load average before {os.getloadavg()[0]:.2f}")
        series = {}
        for run in ("steady", "compacting underneath"):
            churn_dir = work / "churn"
            churn_dir.mkdir(exist_ok=True)
            with serve(wroot, "--redirect-to-exact") as (base, pid):
                for row, ps in rows.items():
                    errs = check(base, row, sorted(set(ps)))
                    if errs:
                        bad.append(f"{run} {row}: {len(errs)} paths answer wrong before load: {errs[:3]}")
                sampler = Sampler(pid, 2.0)
                sampler.start()
                churn = Churn(wroot, "coll", base, churn_dir, pause=5.0) if run != "steady" else None
                if churn:
                    churn.start()
                t0 = time.monotonic()
                r = run_wrk(base, load, args.seconds, args.conns, work, timeout_s=10)
                wall = time.monotonic() - t0
                if churn:
                    churn.stop()
                rss = sampler.stop()
            raw = r.pop("raw")
            r["rss"] = summary(rss)
            r["wall_s"] = wall
            series[run] = rss
            say(f"\n[{run}] {r['requests']:,} requests in {wall:.0f} s: {r['rps']:,.0f} req/s; latency ms "
                + ", ".join(f"{k} {v:.1f}" for k, v in r["latency_ms"].items()))
            say(f"  answers: " + ", ".join(f"{k} {v:,}" for k, v in r["status"].items())
                + "; socket errors: " + ", ".join(f"{k} {v}" for k, v in r["errors"].items() if k != "status"))
            say(f"  RSS MiB: first minute max {r['rss']['first_min_max_mib']:.1f}, last minute max "
                f"{r['rss']['last_min_max_mib']:.1f}, max {r['rss']['max_mib']:.1f} ({r['rss']['samples']} samples)")
            if churn:
                picks = [p for p, _ in churn.cycles]
                r["churn"] = {"cycles": len(churn.cycles), "failures": churn.failures,
                              "pickup_s_max": max(picks) if picks else None,
                              "pickup_s_mean": sum(picks) / len(picks) if picks else None}
                say(f"  churn: {len(churn.cycles)} cycles (add a WARC, found by the server, compact, still found);"
                    f" new segment found after mean {r['churn']['pickup_s_mean'] or 0:.2f} s, max "
                    f"{r['churn']['pickup_s_max'] or 0:.2f} s; failures: {churn.failures or 'none'}")
                bad += churn.failures
            bad += [f"{run}: {b}" for b in failed(r)]
            results[run] = r
            (work / f"wrk-{run.split()[0]}.txt").write_text(raw)
        say(f"\nload average after {os.getloadavg()[0]:.2f}")
        say("RESULT: " + ("FAILED: " + "; ".join(bad) if bad else "no failed request, 0 errors, 0 4xx/5xx"))
        out.parent.mkdir(parents=True, exist_ok=True)
        svg_plot(series, f"warchive serve RSS under wrk -c{args.conns} ({args.seconds} s)", out.with_suffix(".svg"))
        out.with_suffix(".txt").write_text("\n".join(lines) + "\n")
        out.with_suffix(".json").write_text(json.dumps({"date": time.strftime("%Y-%m-%d"), "args": vars(args),
                                                        "runs": results, "rss": series, "failed": bad}, indent=1))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
