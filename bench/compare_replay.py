"""Replay over HTTP against pywb 2.10's, in one run, on the same collection (the corpus).

    python bench/compare_replay.py [--corpus DIR] [--seconds 10] [--pages 500] [--json OUT]

One collection is made of the corpus's ``*.warc.gz`` (``warchive add``, files linked) and
the same WARCs are laid out for pywb (``collections/coll/archive`` linked, the index
``warchive index -p`` writes, which is byte for byte cdxj-indexer's, as ``wb-manager add``
would make it). Both servers run with ``framed_replay`` and ``redirect_to_exact`` on (pywb's
default framing; the redirect makes (c) a redirect for both), on 127.0.0.1, side by side; wrk
loads one at a time (``wrk -t2 -c50 -d SECONDS --latency``, a Lua script cycling through the
paths, after a 2 s warm-up), the two in turn, ``--rounds`` times per row (which goes first
alternates), and the figures are the rounds' medians: the machine's speed drifts by 10-20%
over minutes, so a ratio is taken only of runs made side by side:

  (a) mp_ HTML    ``/coll/TSmp_/URL`` of HTML pages (status 200), rewritten
  (b) id_ image   ``/coll/TSid_/URL`` of images (status 200), as archived
  (c) TimeGate    ``/coll/URL`` (307 to the latest memento)
  (d) TimeMap     ``/coll/timemap/link/URL``

Before loading, every path of each row is fetched once from each server and its status
checked (200, or 307 for (c)): a server answering errors would be fast for nothing; a
mismatch fails the run (exit 1). Nothing is asserted about time: targets print PASS or
SHORT (>= 10 x pywb's requests/s for (a) and (b), at equal or lower p99).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

from compare_index import free_port, parse_wrk, stop, wait_listening   # noqa: E402

WRK_LUA = """
local paths = {}
for line in io.lines("%s") do paths[#paths + 1] = line end
local i = 0
request = function()
  i = i %% #paths + 1
  return wrk.format("GET", paths[i])
end
"""


def build(corpus: Path, work: Path) -> Tuple[Path, Path, List[dict]]:
    """(warchive root, pywb deployment, the captures as dicts)."""
    from warchive.collection import Collection
    warcs = sorted(str(p) for p in corpus.glob("*.warc.gz"))
    if not warcs:
        raise SystemExit(f"no *.warc.gz in {corpus} (bash ../shared/corpus/make_corpus.sh makes it)")
    wroot = work / "warchive"
    Collection.init(str(wroot / "coll")).add(warcs, link=True)
    proot = work / "pywb"
    (proot / "collections" / "coll" / "archive").mkdir(parents=True)
    (proot / "collections" / "coll" / "indexes").mkdir(parents=True)
    for w in warcs:
        os.symlink(w, proot / "collections" / "coll" / "archive" / Path(w).name)
    cdxj = proot / "collections" / "coll" / "indexes" / "index.cdxj"
    # the installed warchive (src/ holds no compiled kernels unless built in place)
    subprocess.run([sys.executable, "-m", "warchive", "index", "-p", "--sort", "-o", str(cdxj), *warcs], check=True)
    (proot / "config.yaml").write_text(json.dumps({"collections_root": "collections", "framed_replay": True,
                                                   "redirect_to_exact": True}))
    caps = []
    for line in cdxj.read_bytes().splitlines():
        key, ts, js = line.split(b" ", 2)
        f = json.loads(js)
        f["timestamp"] = ts.decode()
        caps.append(f)
    return wroot, proot, caps


def paths(caps: List[dict], n: int) -> Dict[str, List[str]]:
    rnd = random.Random(7)
    html = [c for c in caps if c.get("status") == "200" and c.get("mime") == "text/html" and "__wb_method" not in c["url"]]
    img = [c for c in caps if c.get("status") == "200" and str(c.get("mime", "")).startswith("image/")]
    urls = sorted({c["url"] for c in html})
    rnd.shuffle(html)
    rnd.shuffle(img)
    rnd.shuffle(urls)
    return {"(a) mp_ HTML": [f"/coll/{c['timestamp']}mp_/{c['url']}" for c in html[:n]],
            "(b) id_ image": [f"/coll/{c['timestamp']}id_/{c['url']}" for c in img[:n]],
            "(c) TimeGate": [f"/coll/{u}" for u in urls[:n]],
            "(d) TimeMap": [f"/coll/timemap/link/{u}" for u in urls[:n]]}


@contextlib.contextmanager
def server(kind: str, root: Path) -> Iterator[str]:
    port = free_port()
    if kind == "warchive":
        cmd = [sys.executable, "-m", "warchive", "serve", "--root", str(root), "--port", str(port),
               "--redirect-to-exact"]
        env = dict(os.environ)
        cwd = None
    else:
        cmd = [str(REPO / ".venv-pywb" / "bin" / "wayback"), "-p", str(port), "-b", "127.0.0.1"]
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
        cwd = str(root)
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if not wait_listening(port, proc, 60):
            raise RuntimeError(f"{kind} did not start")
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *a, **k):   # type: ignore[no-untyped-def]
        return None


def check(base: str, row: str, ps: Sequence[str]) -> List[str]:
    """The paths of a row whose status is not what the row loads (200; 307 for the TimeGate)."""
    opener = urllib.request.build_opener(_NoRedirect)
    want = 307 if row.startswith("(c)") else 200
    bad = []
    for p in ps:
        try:
            code = opener.open(base + p, timeout=30).status
        except urllib.error.HTTPError as e:
            code = e.code
        if code != want:
            bad.append(f"{p}: {code}")
    return bad


def wrk(base: str, ps: Sequence[str], seconds: int, work: Path) -> Dict:
    pf = work / "paths.txt"
    pf.write_text("".join(p + "\n" for p in ps))
    script = work / "cycle.lua"
    script.write_text(WRK_LUA % pf)
    subprocess.run(["wrk", "-t2", "-c50", "-d2s", "-s", str(script), base], check=True, capture_output=True)
    out = subprocess.run(["wrk", "-t2", "-c50", f"-d{seconds}s", "--latency", "-s", str(script), base],
                         check=True, capture_output=True, text=True).stdout
    return parse_wrk(out)


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=os.environ.get("WARCHIVE_CORPUS", str(REPO / "corpus")))
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3, help="wrk runs of each server per row, taken in turn")
    ap.add_argument("--pages", type=int, default=500, help="paths per row (cycled)")
    ap.add_argument("--check", type=int, default=100, help="paths per row checked on each server first")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--rows", default="abcd", help="the rows to run, by letter (default: abcd, all)")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="compare-replay-"))
    load = os.getloadavg()
    bad: List[str] = []
    runs: Dict[str, Dict[str, List[Dict]]] = {}
    try:
        wroot, proot, caps = build(Path(args.corpus), work)
        rows = {k: v for k, v in paths(caps, args.pages).items() if k[1] in args.rows}
        print(f"{args.corpus}: {len(caps):,} captures; {', '.join(f'{k} {len(v)} paths' for k, v in rows.items())}")
        with server("warchive", wroot) as wbase, server("pywb", proot) as pbase:
            bases = {"warchive": wbase, "pywb": pbase}
            for kind, base in bases.items():
                for row, ps in rows.items():
                    errs = check(base, row, ps[:args.check])
                    if errs:
                        bad.append(f"{kind} {row}: {len(errs)} of {min(len(ps), args.check)} checked: {errs[:3]}")
            # each round loads one server then the other, in turn first (the machine's speed
            # drifts by 10-20% over minutes: a ratio is taken of runs made side by side)
            for rnd in range(args.rounds):
                for row, ps in rows.items():
                    order = ("warchive", "pywb") if rnd % 2 == 0 else ("pywb", "warchive")
                    for kind in order:
                        r = wrk(bases[kind], ps, args.seconds, work)
                        r.pop("raw", None)
                        runs.setdefault(row, {}).setdefault(kind, []).append(r)
        report(args, runs, bad, load)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


def report(args: argparse.Namespace, runs: Dict[str, Dict[str, List[Dict]]], bad: List[str],
           load: Tuple[float, float, float]) -> None:
    print(f"\nwrk -t2 -c50 -d{args.seconds}s, cycling over each row's paths, {args.rounds} rounds (the two servers "
          "loaded in turn); the server and wrk share 2 cores. Medians of the rounds; ratio: the median of the "
          "rounds' ratios (lowest in brackets)")
    print(f"{'':16s} {'warchive req/s':>15s} {'p50 ms':>8s} {'p99 ms':>8s} {'pywb req/s':>11s} {'p50 ms':>8s} "
          f"{'p99 ms':>8s} {'ratio':>15s}")
    targets = []
    results: Dict[str, Dict] = {}
    for row, r in runs.items():
        w = {k: statistics.median(x[k] for x in r["warchive"]) for k in ("rps", "p50_ms", "p99_ms")}
        p = {k: statistics.median(x[k] for x in r["pywb"]) for k in ("rps", "p50_ms", "p99_ms")}
        ratios = [a["rps"] / b["rps"] if b["rps"] else float("inf") for a, b in zip(r["warchive"], r["pywb"])]
        ratio = statistics.median(ratios)
        results[row] = {"warchive": w, "pywb": p, "ratio": ratio, "ratios": ratios, "runs": r}
        print(f"{row:16s} {w['rps']:15,.0f} {w['p50_ms']:8.2f} {w['p99_ms']:8.2f} {p['rps']:11,.0f} "
              f"{p['p50_ms']:8.2f} {p['p99_ms']:8.2f} {ratio:6.1f}x ({min(ratios):4.1f}x)")
        for kind in ("warchive", "pywb"):
            if any(x["non_2xx"] for x in r[kind]) and not row.startswith("(c)"):
                bad.append(f"{kind} {row}: non-2xx/3xx answers under load")
        if row[:3] in ("(a)", "(b)"):
            targets.append((f"{row} >= 10 x pywb at p99 <= pywb's", ratio >= 10 and w["p99_ms"] <= p["p99_ms"],
                            f"{ratio:.1f} x (rounds {', '.join(f'{x:.1f}' for x in ratios)}), p99 {w['p99_ms']:.1f} "
                            f"vs {p['p99_ms']:.1f} ms"))
    after = os.getloadavg()
    print(f"\nload average (1 min): {load[0]:.2f} before, {after[0]:.2f} after")
    print("\ntargets")
    for what, ok, val in targets:
        print(f"  {'PASS ' if ok else 'SHORT'} {what}: {val}")
    if bad:
        print("\nCHECKS FAILED: " + "; ".join(bad))
    if args.json:
        Path(args.json).write_text(json.dumps({"date": time.strftime("%Y-%m-%d"), "corpus": args.corpus,
                                               "loadavg_before_after": [load, after], "rounds": args.rounds,
                                               "rows": results, "checks_failed": bad}, indent=1))


if __name__ == "__main__":
    sys.exit(main())
